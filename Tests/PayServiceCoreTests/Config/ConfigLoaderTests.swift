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

  @Test("a config's digest is the SHA-256 of its bytes (FIPS 180-2's examples, and none)")
  func digest() {
    #expect(ConfigLoader.digest(of: "".utf8) == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(ConfigLoader.digest(of: "abc".utf8) == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(
      ConfigLoader.digest(of: "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        == "sha256:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
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
        "c.yaml:6:3: merchant.colour: unknown key; valid keys here: identifier, displayName, countryCode, currencyCode, supportedNetworks, merchantCapabilities, requiredShippingContactFields, requiredBillingContactFields, url",
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

  @Test("YAML composition: aliases take their anchor's node, quoted scalars keep their text")
  func composition() throws {
    let yaml = Self.minimal
      .replacingOccurrences(of: "displayName: Tiny", with: "displayName: &shop Tiny")
      .replacingOccurrences(of: "name: Tea, description: Green tea", with: "name: *shop, description: \"null\"")
      .replacingOccurrences(of: "supportedNetworks: [visa, jcb]", with: "supportedNetworks: &nets [visa, jcb]")
    let config = try ConfigLoader.parse(yaml: yaml, file: "c.yaml")
    #expect(config.catalog.map(\.name) == ["Tiny"])
    #expect(config.catalog.map(\.description) == ["null"])
    #expect(config.merchant.supportedNetworks == ["visa", "jcb"])
    // A plain null is no string; the same word quoted is.
    let plainNull = Self.minimal.replacingOccurrences(of: "description: Green tea", with: "description: ~")
    #expect(problems(plainNull) == ["c.yaml:9:40: catalog[0].description: must be a string"])
  }

  @Test("YAML errors: where libyaml stops, repeated keys, a second document, an unknown alias")
  func yamlErrors() {
    #expect(problems("merchant: [\n") == ["c.yaml:2:1: invalid YAML: did not find expected node content"])
    #expect(problems("a: \"x\n") == ["c.yaml:2:1: invalid YAML: found unexpected end of stream"])
    #expect(problems("a:\n\t- b\n") == ["c.yaml:2:1: invalid YAML: found character that cannot start any token"])
    #expect(problems("merchant: \u{01}\n") == ["c.yaml: invalid YAML: control characters are not allowed"])
    // Named in sorted order, at the first occurrence of the first of them.
    #expect(problems("b: 1\na: 2\nb: 3\na: 4\n") == ["c.yaml:2:1: duplicate key a, b"])
    #expect(problems("merchant:\n  identifier: x\n  identifier: y\n") == ["c.yaml:2:3: duplicate key identifier"])
    #expect(problems("a: 1\n---\nb: 2\n") == ["c.yaml:2:1: invalid YAML: but found another document"])
    #expect(problems("merchant: *nope\n") == ["c.yaml:1:11: invalid YAML: found undefined alias"])
    #expect(problems("# nothing but a comment\n") == ["c.yaml: is empty"])
  }

  @Test("coupons, card adjustments, freeOver and transitDaysMax load with their values")
  func discountSections() throws {
    let config = TestConfig.discounts()
    #expect(config.coupons.map(\.code) == ["SAVE10", "FIVEOFF", "BIGBUCKS", "THIRD", "SUMMER25"])
    let save10 = config.couponsByCode["SAVE10"]!
    #expect(save10.label == "Discount (SAVE10)")
    #expect(save10.minimumSubtotalMinor == 2000)
    #expect(save10.expires == RFC3339.parse("2026-12-31T23:59:59Z"))
    guard case .percentOff(let rate) = save10.discount else {
      Issue.record("SAVE10 should be a percent coupon")
      return
    }
    #expect(rate.apply(to: 10_000, rounding: .halfUp) == 1_000)
    #expect(config.couponsByCode["THIRD"]?.label == "Discount")
    #expect(config.paymentMethodAdjustments.map(\.label) == ["Store card discount", "Amex surcharge", "Credit card surcharge"])
    #expect(config.paymentMethodAdjustments[0].percent.apply(to: 5_000, rounding: .halfUp) == -250)
    let standard = config.shippingMethodsByIdentifier["standard"]!
    #expect(standard.freeOverMinor == 10_000 && standard.transitDaysMax == 5)
    #expect(config.shippingMethodsByIdentifier["express"]!.freeOverMinor == nil)
  }

  @Test("coupon and adjustment rules are checked with their places")
  func discountRules() {
    let yaml =
      Self.minimal + """

        coupons:
          - {code: SPRING, percentOff: "10", amountOff: 100}
          - {code: spring, amountOff: 100}
          - {code: "no spaces", percentOff: "0"}
          - {code: BIG, percentOff: "100.5"}
          - {code: HALF, amountOff: "0.5", minimumSubtotal: "-1", expires: tomorrow}
          - {code: NONE}
        paymentMethodAdjustments:
          - {label: Amex fee, network: amex, percent: "2"}
          - {label: Store, type: gift, percent: "0"}
          - {label: Huge, percent: "-100.01"}
          - {network: visa, percent: "-5"}
        """
    #expect(
      problems(yaml) == [
        "c.yaml:18:5: coupons[0]: give exactly one of percentOff or amountOff, not both",
        "c.yaml:19:12: coupons[1].code: code \"spring\" is used by an earlier coupon (codes match case-insensitively)",
        "c.yaml:20:12: coupons[2].code: must match [A-Za-z0-9_-]{1,32}, got \"no spaces\"",
        "c.yaml:20:37: coupons[2].percentOff: must be a percentage from 0 to 100, not 0 like \"10\" (at most 10 decimals), got \"0\"",
        "c.yaml:21:29: coupons[3].percentOff: must be a percentage from 0 to 100, not 0 like \"10\" (at most 10 decimals), got \"100.5\"",
        "c.yaml:22:29: coupons[4].amountOff: \"0.5\" has more than the currency's 0 decimal digits",
        "c.yaml:22:53: coupons[4].minimumSubtotal: must not be negative, got \"-1\"",
        "c.yaml:22:68: coupons[4].expires: must be an RFC 3339 timestamp like 2026-12-31T23:59:59Z, got \"tomorrow\"",
        "c.yaml:23:5: coupons[5].percentOff: is required (or amountOff): the coupon needs a discount",
        "c.yaml:25:32: paymentMethodAdjustments[0].network: \"amex\" is not in merchant.supportedNetworks (visa, jcb), so it would never match",
        "c.yaml:26:26: paymentMethodAdjustments[1].type: must be one of debit, credit, prepaid, store, eMoney, got \"gift\"",
        "c.yaml:26:41: paymentMethodAdjustments[1].percent: must be a percentage from -100 to 100, not 0 like \"-5\" (at most 10 decimals), got \"0\"",
        "c.yaml:27:28: paymentMethodAdjustments[2].percent: must be a percentage from -100 to 100, not 0 like \"-5\" (at most 10 decimals), got \"-100.01\"",
        "c.yaml:28:5: paymentMethodAdjustments[3].label: is required",
      ])
  }

  @Test("freeOver must be positive and transitDaysMax at least transitDays")
  func shippingWindowRules() {
    let yaml = Self.minimal.replacingOccurrences(
      of: "transitDays: 3, amount: 500}", with: "transitDays: 3, transitDaysMax: 2, amount: 500, freeOver: 0}")
    #expect(
      problems(yaml) == [
        "c.yaml:12:91: shipping.methods[0].transitDaysMax: must be at least transitDays (3), got 2",
        "c.yaml:12:117: shipping.methods[0].freeOver: must be greater than zero",
      ])
  }

  @Test("hostile values: wrong types, duplicate method identifiers, non-ISO regions, rates outside 0..1")
  func hostileValues() {
    let yaml = Self.minimal
      .replacingOccurrences(
        of: "  - {sku: tea, name: Tea, description: Green tea, price: 1200, quantityOnHand: 5}",
        with: "  - {sku: tea, name: [Tea], description: Green tea, price: {yen: 1200}, quantityOnHand: ten}")
      .replacingOccurrences(
        of: "    - {identifier: post, label: Post, detail: Three days, transitDays: 3, amount: 500}",
        with: """
              - {identifier: post, label: Post, detail: Three days, transitDays: 3, amount: 500, regions: [JPN, jp-13]}
              - {identifier: post, label: Post 2, detail: x, transitDays: 1.5, amount: 500}
          """
      )
      .replacingOccurrences(
        of: "  defaultRate: 0.1",
        with: "  defaultRate: \"-0.1\"\n  rules:\n    - {region: Japan, rate: 1.01, shippingTaxable: maybe}")
    #expect(
      problems(yaml) == [
        "c.yaml:9:22: catalog[0].name: must be a string",
        "c.yaml:9:60: catalog[0].price: must be a decimal amount like \"5000\"",
        "c.yaml:9:89: catalog[0].quantityOnHand: must be a whole number from 0 to 1000000000, got \"ten\"",
        "c.yaml:12:98: shipping.methods[0].regions[0]: must be a region code like \"US\" or \"US-CA\", got \"JPN\"",
        "c.yaml:12:103: shipping.methods[0].regions[1]: must be a region code like \"US\" or \"US-CA\", got \"jp-13\"",
        "c.yaml:13:20: shipping.methods[1].identifier: identifier \"post\" is used by an earlier shipping method; it must be unique",
        "c.yaml:13:65: shipping.methods[1].transitDays: must be a whole number from 0 to 365, got \"1.5\"",
        "c.yaml:15:16: tax.defaultRate: must be a decimal rate from 0 to 1 like \"0.0725\" (at most 12 decimals), got \"-0.1\"",
        "c.yaml:17:16: tax.rules[0].region: must be a region code like \"US\" or \"US-CA\", got \"Japan\"",
        "c.yaml:17:29: tax.rules[0].rate: must be a decimal rate from 0 to 1 like \"0.0725\" (at most 12 decimals), got \"1.01\"",
        "c.yaml:17:52: tax.rules[0].shippingTaxable: must be true or false, got \"maybe\"",
      ])
  }
}
