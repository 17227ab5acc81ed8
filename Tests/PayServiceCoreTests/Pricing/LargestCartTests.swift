@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// The largest cart a config allows, at the price and shipping caps, with everything that adds to
/// a total at its most (a 100% card surcharge, 100% tax on the lines and the shipping): priced,
/// authorized and ordered without a trap, its total within 10^15 minor units.
@Suite("Largest cart")
struct LargestCartTests {
  /// 100 products at the price cap, shipping at its cap, the surcharge and tax at 100%.
  static let yaml: String = {
    let products = (0..<100).map { index in
      #"  - {sku: p\#(index), name: P\#(index), description: Big, price: "2500000.00", quantityOnHand: 9999}"#
    }
    return """
      merchant:
        identifier: merchant.com.example.big
        displayName: Big
        countryCode: US
        currencyCode: USD
        supportedNetworks: [visa]
        merchantCapabilities: [supports3DS, supportsCredit]
      catalog:
      \(products.joined(separator: "\n"))
      shipping:
        methods:
          - {identifier: barge, label: Barge, detail: Slow, transitDays: 30, amount: "2500000.00"}
      tax:
        defaultRate: "1"
        rules:
          - {region: US, rate: "1", shippingTaxable: true}
      gateway:
        kind: sandbox
      paymentMethodAdjustments:
        - {label: Surcharge, network: visa, percent: "100"}
      """
  }()

  static let cart = "[" + (0..<100).map { #"{"sku":"p\#($0)","quantity":9999}"# }.joined(separator: ",") + "]"

  @Test("the largest cart at the caps: 4 × 999,900 × 2,500,000.00 + 2 × 2,500,000.00, priced and ordered exactly")
  func largestCart() throws {
    let config = try ConfigLoader.parse(yaml: Self.yaml)
    let pricer = Pricer(config: config)
    let items = (0..<100).map { CartItem(sku: "p\($0)", quantity: 9999) }
    let merchandise = pricer.merchandise(
      items: items, couponCode: nil, paymentMethod: PaymentMethod(network: "visa", type: .credit), now: TestConfig.now)
    let quote = pricer.quote(
      merchandise, method: config.shippingMethodsByIdentifier["barge"], region: pricer.region(of: nil))
    // Subtotal 100 × 9999 × 250,000,000 = 249,975,000,000,000; the surcharge doubles it; tax
    // doubles it again; shipping 250,000,000 and its tax the same.
    #expect(merchandise.subtotalMinor == 249_975_000_000_000)
    #expect(merchandise.adjustmentMinor == 249_975_000_000_000)
    #expect(quote.taxMinor == 499_950_250_000_000)
    #expect(quote.totalMinor == 999_900_500_000_000)
    #expect(quote.totalMinor <= MoneyText.maxMinorUnits)

    // Through the service: the sheet's summary, the authorization and the order.
    let handler = TestConfig.handler(try TestConfig.context(config: config))
    let summary = handler.call("computeSummaryItems", #"{"items":\#(Self.cart),"shippingMethod":"barge"}"#)
    #expect(summary["result"]?["summaryItems"]?.arrayValue?.last?["amount"] == .string("4999505000000.00"), "\(summary.compact)")
    let placed = try #require(
      BackOfficeFixture.place(handler, items: Self.cart, shippingMethod: "barge", card: BackOfficeFixture.cards[0]))
    #expect(placed.amount == "9999005000000.00")

    // One minor unit more on a price could pass 10^15: refused.
    #expect(throws: ConfigError.self) {
      try ConfigLoader.parse(yaml: Self.yaml.replacingOccurrences(of: #"p99, name: P99, description: Big, price: "2500000.00""#, with: #"p99, name: P99, description: Big, price: "2500000.01""#))
    }
  }
}
