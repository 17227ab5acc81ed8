import PayServiceCore
import PayServiceTestSupport
import Testing

@Suite("Config loader")
struct ConfigLoaderTests {
  static let minimal = """
    merchant:
      identifier: merchant.com.example.tiny
      displayName: Tiny
      countryCode: JP
      currencyCode: JPY
      supportedNetworks: [visa, jcb]
      merchantCapabilities: [supports3DS]
    catalog:
      - {sku: tea, name: Tea, description: Green tea, price: 1200, quantityOnHand: 5}
    shipping:
      methods:
        - {identifier: post, label: Post, detail: Three days, transitDays: 3, amount: 500}
    tax:
      defaultRate: 0.1
    gateway:
      kind: sandbox
    """

  func problems(_ yaml: String) -> [String] {
    do {
      _ = try ConfigLoader.parse(yaml: yaml, file: "c.yaml")
      return []
    } catch {
      return error.problems.map(\.description)
    }
  }

  @Test("the shipped config and the test config load")
  func shippedConfigs() throws {
    let config = try ConfigLoader.load(path: TestPaths.path("config.yaml"))
    #expect(config.catalog.map(\.sku) == ["clock", "lamp", "mug", "notebook"])
    #expect(config.productsBySKU["clock"]?.priceMinor == 5000)
    #expect(config.tax.rules.count == 6)
    #expect(TestConfig.load().merchant.merchantCapabilities == ["supports3DS", "supportsCredit"])
  }

  @Test("defaults apply and unquoted numbers are read from their text")
  func defaults() throws {
    let config = try ConfigLoader.parse(yaml: Self.minimal)
    #expect(config.shipping.shipsTo == ["JP"])
    #expect(config.tax.rounding == .halfUp)
    #expect(config.tax.defaultRate.text == "0.1")
    #expect(config.gateway.chargeTokenTTLSeconds == 3600)
    #expect(config.catalog[0].priceMinor == 1200)
    #expect(config.shipping.methods[0].amountMinor == 500)
    #expect(config.merchant.requiredShippingContactFields.isEmpty)
  }

  @Test("every problem is reported with file, line, column and field path")
  func problemsHavePlaces() {
    let yaml = Self.minimal
      .replacingOccurrences(of: "price: 1200", with: "price: 12.5")
      .replacingOccurrences(of: "currencyCode: JPY", with: "currencyCode: JPY\n  colour: red")
      .replacingOccurrences(of: "defaultRate: 0.1", with: "defaultRate: 1.5\n  rounding: bankers")
    #expect(
      problems(yaml) == [
        "c.yaml:6:3: merchant.colour: unknown key; valid keys here: identifier, displayName, countryCode, currencyCode, supportedNetworks, merchantCapabilities, requiredShippingContactFields, requiredBillingContactFields",
        "c.yaml:10:58: catalog[0].price: \"12.5\" has more than the currency's 0 decimal digits",
        "c.yaml:16:13: tax.rounding: must be halfUp or halfEven, got \"bankers\"",
        "c.yaml:15:16: tax.defaultRate: must be a decimal rate from 0 to 1 like \"0.0725\" (at most 12 decimals), got \"1.5\"",
      ])
  }

  @Test("merchant rules: identifier, country, currency, networks, 3DS")
  func merchantRules() {
    let yaml = Self.minimal
      .replacingOccurrences(of: "merchant.com.example.tiny", with: "com.example.tiny")
      .replacingOccurrences(of: "countryCode: JP", with: "countryCode: jp")
      .replacingOccurrences(of: "currencyCode: JPY", with: "currencyCode: YEN")
      .replacingOccurrences(of: "[visa, jcb]", with: "[visa, Visa]")
      .replacingOccurrences(of: "[supports3DS]", with: "[supportsCredit]")
    let found = problems(yaml)
    #expect(found.count == 5)
    #expect(found[0].contains("merchant.identifier: must be an Apple Pay merchant identifier"))
    #expect(found[1].contains("merchant.countryCode: must be an upper-case ISO 3166-1 alpha-2 code"))
    #expect(found[2].contains("merchant.currencyCode: must be an ISO 4217 currency code"))
    #expect(found[3].contains("merchant.supportedNetworks[1]: unknown network \"Visa\""))
    #expect(found[4].contains("merchant.merchantCapabilities: must include supports3DS"))
  }

  @Test("catalog and shipping rules: unique skus, positive prices, regions inside shipsTo")
  func catalogAndShipping() {
    let yaml = Self.minimal
      .replacingOccurrences(
        of: "  - {sku: tea, name: Tea, description: Green tea, price: 1200, quantityOnHand: 5}",
        with: """
            - {sku: tea, name: Tea, description: Green tea, price: 1200, quantityOnHand: 5}
            - {sku: tea, name: Tea 2, description: x, price: 0, quantityOnHand: -1}
            - {sku: "bad sku", name: "", description: x, price: "1e3", quantityOnHand: 1, imageURI: "ftp://x"}
          """
      )
      .replacingOccurrences(of: "amount: 500}", with: "amount: 500, regions: [US]}")
    let found = problems(yaml)
    #expect(found.contains { $0.contains("catalog[1].sku: sku \"tea\" is used by an earlier product; it must be unique") })
    #expect(found.contains { $0.contains("catalog[1].price: must be greater than zero") })
    #expect(found.contains { $0.contains("catalog[1].quantityOnHand: must be a whole number from 0 to 1000000000, got \"-1\"") })
    #expect(found.contains { $0.contains("catalog[2].sku: must match [A-Za-z0-9._-]{1,64}, got \"bad sku\"") })
    #expect(found.contains { $0.contains("catalog[2].name: must not be empty") })
    #expect(found.contains { $0.contains("catalog[2].price: must be a decimal amount like \"5000\", got \"1e3\"") })
    #expect(found.contains { $0.contains("catalog[2].imageURI: must be an http(s) URL") })
    #expect(found.contains { $0.contains("shipping.methods[0].regions[0]: \"US\" is outside shipping.shipsTo (JP)") })
  }

  @Test("missing sections and invalid YAML are reported")
  func missingAndInvalid() {
    #expect(problems("merchant: {}\n").first?.contains("merchant.identifier: is required") == true)
    #expect(problems("").first == "c.yaml: is empty")
    #expect(problems("merchant: [\n").first?.hasPrefix("c.yaml:2:1: invalid YAML") == true)
    #expect(problems("merchant: {}\nmerchant: {}\n").first?.contains("duplicate key merchant") == true)
    let noGateway = Self.minimal.replacingOccurrences(of: "gateway:\n  kind: sandbox", with: "")
    #expect(problems(noGateway) == ["c.yaml:1:1: gateway: is required"])
  }
}
