import PayServiceCore
import PayServiceTestSupport
import Testing

/// Prices and shipping amounts are capped so that the largest cart (100 lines of 9999 units, a
/// 100% card surcharge, shipping, 100% tax on both) stays within the documented 10^15 minor units:
/// no pricing arithmetic can overflow, and no total can pass the limit.
@Suite("Config amount bounds")
struct AmountBoundsTests {
  static func yaml(price: String, shipping: String = "5.00", currency: String = "USD") -> String {
    """
    merchant:
      identifier: merchant.com.example.big
      displayName: Big
      countryCode: US
      currencyCode: \(currency)
      supportedNetworks: [visa]
      merchantCapabilities: [supports3DS]
    catalog:
      - {sku: yacht, name: Yacht, description: Large, price: "\(price)", quantityOnHand: 1}
    shipping:
      methods:
        - {identifier: barge, label: Barge, detail: Slow, transitDays: 30, amount: "\(shipping)"}
    tax:
      defaultRate: "0.1"
    gateway:
      kind: sandbox
    """
  }

  func problems(_ yaml: String) -> [String] {
    ConfigLoaderTests().problems(yaml)
  }

  static let why =
    "(so that the largest cart, 100 lines of 9999 units with a card surcharge, shipping and tax, stays within 10^15 minor units)"

  @Test("a price or shipping amount over 250,000,000 minor units is refused with its place; the cap itself loads")
  func caps() throws {
    #expect(
      problems(Self.yaml(price: "9999999999999.99")) == [
        #"c.yaml:9:58: catalog[0].price: must be at most 2500000.00 \#(Self.why), got "9999999999999.99""#
      ])
    #expect(
      problems(Self.yaml(price: "2500000.01", shipping: "2500000.01")) == [
        #"c.yaml:9:58: catalog[0].price: must be at most 2500000.00 \#(Self.why), got "2500000.01""#,
        #"c.yaml:12:80: shipping.methods[0].amount: must be at most 2500000.00 \#(Self.why), got "2500000.01""#,
      ])
    // Past 10^15 minor units too: the cap is named, not only "too large".
    #expect(
      problems(Self.yaml(price: "1", shipping: "99999999999999999999")) == [
        #"c.yaml:12:80: shipping.methods[0].amount: must be at most 2500000.00 \#(Self.why), got "99999999999999999999""#
      ])
    // In the currency's own digits: yen have none, dinars three.
    #expect(
      problems(Self.yaml(price: "250000001", currency: "JPY")) == [
        #"c.yaml:9:58: catalog[0].price: must be at most 250000000 \#(Self.why), got "250000001""#
      ])
    #expect(
      problems(Self.yaml(price: "250000.001", currency: "KWD")) == [
        #"c.yaml:9:58: catalog[0].price: must be at most 250000.000 \#(Self.why), got "250000.001""#
      ])
    let atCap = try ConfigLoader.parse(yaml: Self.yaml(price: "2500000.00", shipping: "2500000.00"))
    #expect(atCap.catalog[0].priceMinor == 250_000_000)
    #expect(atCap.shipping.methods[0].amountMinor == 250_000_000)
  }
}
