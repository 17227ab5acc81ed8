@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// Tax classes, tax-inclusive prices and rounding per order, priced end to end from config.
@Suite("Pricing with tax classes, inclusive prices and rounding targets")
struct TaxClassPricingTests {
  /// A UK shop: prices include VAT, 20% standard, books zero-rated, shipping taxed at standard.
  static func uk(target: RoundingTarget = .perLine, label: Bool = true) -> String {
    """
    merchant:
      identifier: merchant.com.example.uk
      displayName: Corner Shop
      countryCode: GB
      currencyCode: GBP
      supportedNetworks: [visa, masterCard]
      merchantCapabilities: [supports3DS]
    catalog:
      - {sku: mug, name: Mug, description: A mug, price: "12.00", quantityOnHand: 50}
      - {sku: book, name: Book, description: A book, price: "8.00", quantityOnHand: 50, taxClass: zero}
      - {sku: pin, name: Pin, description: A pin, price: "0.99", quantityOnHand: 50}
      - {sku: badge, name: Badge, description: A badge, price: "0.99", quantityOnHand: 50}
      - {sku: patch, name: Patch, description: A patch, price: "0.99", quantityOnHand: 50}
    shipping:
      methods:
        - {identifier: post, label: Royal Mail, detail: Two days, transitDays: 2, amount: "4.80"}
    tax:
      pricesIncludeTax: true
      roundingTarget: \(target.rawValue)
    \(label ? "  inclusiveLabel: Includes VAT\n" : "")\
      defaultRates: {standard: "0.20", zero: "0"}
      rules:
        - {region: GB, rates: {standard: "0.20", zero: "0"}, shippingTaxable: true}
    coupons:
      - {code: FIVE, label: Five off, amountOff: "5.00"}
    gateway:
      kind: sandbox
    """
  }

  static func pricer(_ yaml: String) throws -> Pricer {
    Pricer(config: try ConfigLoader.parse(yaml: yaml, file: "shop.yaml"))
  }

  static func quote(
    _ pricer: Pricer, _ items: [(String, Int)], coupon: String? = nil, card: PaymentMethod? = nil,
    country: String? = nil
  ) -> Pricer.Quote {
    let merchandise = pricer.merchandise(
      items: items.map { CartItem(sku: $0.0, quantity: $0.1) }, couponCode: coupon, paymentMethod: card, now: TestConfig.now)
    var contact = Contact()
    contact.countryCode = country
    return pricer.quote(
      merchandise, method: pricer.config.shippingMethodsByIdentifier["post"],
      region: pricer.region(of: country == nil ? nil : contact))
  }

  @Test("inclusive: the total is what the shopper saw; VAT is extracted, shown by its label and not added")
  func inclusive() throws {
    let quote = Self.quote(try Self.pricer(Self.uk()), [("mug", 1), ("book", 1)])
    // Mug 12.00 holds 12.00 × 0.2 / 1.2 = 2.00; the book none; shipping 4.80 holds 0.80.
    #expect(quote.summaryItems.map(\.label) == ["Mug", "Book", "Shipping", "Includes VAT", "Corner Shop"])
    #expect(quote.summaryItems.map(\.amount) == ["12.00", "8.00", "4.80", "2.80", "24.80"])
    #expect(quote.totalMinor == 2480)
    #expect(quote.taxMinor == 280)
    #expect([quote.lineTaxMinor(0), quote.lineTaxMinor(1), quote.shippingTaxMinor] == [200, 0, 80])
    #expect(
      quote.taxBreakdown() == [
        TaxEngine.Group(rate: Rate("0.20")!, netMinor: 1400, taxMinor: 280, grossMinor: 1680),
        TaxEngine.Group(rate: Rate("0")!, netMinor: 800, taxMinor: 0, grossMinor: 800),
      ])
    let unlabelled = Self.quote(try Self.pricer(Self.uk(label: false)), [("mug", 1)])
    #expect(unlabelled.summaryItems.map(\.label) == ["Mug", "Shipping", "Corner Shop"])
    #expect(unlabelled.totalMinor == 1680)
  }

  @Test("an amountOff coupon is gross: it lowers the amounts before the VAT is extracted")
  func inclusiveCoupon() throws {
    // 5.00 off 20.00 goes 3.00 to the mug and 2.00 to the book: the mug's 9.00 holds 1.50 of VAT.
    let quote = Self.quote(try Self.pricer(Self.uk()), [("mug", 1), ("book", 1)], coupon: "five")
    #expect(quote.summaryItems.map(\.amount) == ["12.00", "8.00", "-5.00", "4.80", "2.30", "19.80"])
    #expect([quote.lineDiscountMinor(0), quote.lineDiscountMinor(1)] == [300, 200])
    #expect([quote.lineTaxMinor(0), quote.lineTaxMinor(1), quote.shippingTaxMinor] == [150, 0, 80])
    #expect(quote.totalMinor == 1980)
  }

  @Test("rounded per line or once per rate: three 0.99 lines hold 0.51 or 0.50 of VAT")
  func roundingTargets() throws {
    let items = [("pin", 1), ("badge", 1), ("patch", 1)]
    // Each 0.99 holds 0.165 (0.17 rounded half up); with shipping's 0.80 that is 1.31 per line.
    let perLine = Self.quote(try Self.pricer(Self.uk(target: .perLine)), items)
    #expect(perLine.taxMinor == 131)
    // 2.97 + 4.80 = 7.77 at 20% holds 1.295 → 1.30, once; split back 0.17, 0.17, 0.16 and 0.80.
    let perOrder = Self.quote(try Self.pricer(Self.uk(target: .perOrder)), items)
    #expect(perOrder.taxMinor == 130)
    #expect([perOrder.lineTaxMinor(0), perOrder.lineTaxMinor(1), perOrder.lineTaxMinor(2), perOrder.shippingTaxMinor] == [17, 17, 16, 80])
    #expect(perOrder.taxBreakdown() == [TaxEngine.Group(rate: Rate("0.20")!, netMinor: 647, taxMinor: 130, grossMinor: 777)])
    // The total is the same either way: the tax is inside it.
    #expect(perLine.totalMinor == 777 && perOrder.totalMinor == 777)
  }

  @Test("exclusive prices gain classes too: each line taxed at its class's rate, shipping at shippingTaxClass")
  func exclusiveClasses() throws {
    let yaml = Self.uk()
      .replacingOccurrences(of: "  pricesIncludeTax: true\n", with: "  shippingTaxClass: zero\n")
      .replacingOccurrences(of: "  inclusiveLabel: Includes VAT\n", with: "")
    let quote = Self.quote(try Self.pricer(yaml), [("mug", 1), ("book", 1)])
    #expect(quote.summaryItems.map(\.amount) == ["12.00", "8.00", "4.80", "2.40", "27.20"])
    #expect([quote.lineTaxMinor(0), quote.lineTaxMinor(1), quote.shippingTaxMinor] == [240, 0, 0])
  }

  @Test("every class in use needs a rate by default and in every rule; inclusiveLabel needs inclusive prices")
  func configProblems() {
    func problems(_ yaml: String) -> [String] { ConfigLoaderTests().problems(yaml) }
    #expect(
      problems(Self.uk().replacingOccurrences(of: "rates: {standard: \"0.20\", zero: \"0\"}, shippingTaxable", with: "rate: \"0.20\", shippingTaxable"))
        == ["c.yaml:23:7: tax.rules[0]: has no rate for tax class zero (used by catalog[1] book); add it to its rates"])
    #expect(
      problems(Self.uk().replacingOccurrences(of: "  defaultRates: {standard: \"0.20\", zero: \"0\"}", with: "  defaultRates: {zero: \"0\"}"))
        == ["c.yaml:21:17: tax.defaultRates: needs a standard rate besides the others"])
    #expect(
      problems(Self.uk().replacingOccurrences(of: "  pricesIncludeTax: true\n", with: ""))
        == ["c.yaml:19:19: tax.inclusiveLabel: applies only with pricesIncludeTax: true"])
    #expect(
      problems(Self.uk().replacingOccurrences(of: "roundingTarget: perLine", with: "roundingTarget: perInvoice"))
        == [#"c.yaml:19:19: tax.roundingTarget: must be perLine or perOrder, got "perInvoice""#])
  }

  @Test("properties over 3,000 seeded carts, coupons, card surcharges and discounts, two rule sets, both modes and both targets")
  func properties() throws {
    var random = SplitMix64(seed: 2020)
    let skus = ["mug", "book", "pin", "badge", "patch"]
    // A second rule set (Jersey's 5% GST, shipping untaxed) and card adjustments both ways.
    func extended(_ yaml: String) -> String {
      let gb = "    - {region: GB, rates: {standard: \"0.20\", zero: \"0\"}, shippingTaxable: true}\n"
      let je = "    - {region: JE, rates: {standard: \"0.05\", zero: \"0\"}}\n"
      let adjustments =
        "paymentMethodAdjustments:\n  - {label: Card fee, network: amex, percent: \"2.5\"}\n"
        + "  - {label: Store card, type: store, percent: \"-7\"}\n"
      return
        yaml
        .replacingOccurrences(of: "supportedNetworks: [visa, masterCard]", with: "supportedNetworks: [visa, masterCard, amex]")
        .replacingOccurrences(of: gb, with: gb + je)
        .replacingOccurrences(of: "gateway:\n", with: adjustments + "gateway:\n")
    }
    var pricers: [(Pricer, inclusive: Bool)] = []
    for target in RoundingTarget.allCases {
      pricers.append((try Self.pricer(extended(Self.uk(target: target))), true))
      let exclusive = Self.uk(target: target)
        .replacingOccurrences(of: "  pricesIncludeTax: true\n", with: "")
        .replacingOccurrences(of: "  inclusiveLabel: Includes VAT\n", with: "")
      pricers.append((try Self.pricer(extended(exclusive)), false))
    }
    #expect(pricers.allSatisfy { $0.0.config.tax.rules.count == 2 && $0.0.config.paymentMethodAdjustments.count == 2 })
    var adjusted = 0
    let cards = [nil, PaymentMethod(network: "amex", type: .credit), PaymentMethod(network: "visa", type: .store)]
    for run in 0..<3000 {
      let (pricer, inclusive) = pricers[run % pricers.count]
      let count = Int(random.next() % 4) + 1
      var items: [(String, Int)] = []
      for sku in skus.shuffled(using: &random).prefix(count) { items.append((sku, Int(random.next() % 5) + 1)) }
      let quote = Self.quote(
        pricer, items, coupon: random.next() % 3 == 0 ? "FIVE" : nil, card: cards[Int(random.next() % 3)],
        country: random.next() % 2 == 0 ? "GB" : "JE")
      let context = "run \(run) \(items) inclusive \(inclusive) \(pricer.config.tax.roundingTarget)"
      if quote.merchandise.adjustment != nil { adjusted += 1 }
      let lineTaxes = quote.lines.indices.map(quote.lineTaxMinor)
      #expect(lineTaxes.allSatisfy { $0 >= 0 } && quote.shippingTaxMinor >= 0, "\(context)")
      #expect(lineTaxes.reduce(0, +) + quote.shippingTaxMinor == quote.taxMinor, "\(context)")
      let breakdown = quote.taxBreakdown()
      #expect(breakdown.reduce(0) { $0 + $1.taxMinor } == quote.taxMinor, "\(context)")
      #expect(breakdown.allSatisfy { $0.netMinor + $0.taxMinor == $0.grossMinor }, "\(context)")
      let merchandise = quote.merchandise.netMinor
      #expect(quote.totalMinor == merchandise + quote.shippingMinor + (inclusive ? 0 : quote.taxMinor), "\(context)")
      // What the shopper was shown adds up to the total: every taxed amount is in the breakdown
      // (shipping too, where the rule taxes it).
      let shown = breakdown.reduce(0) { $0 + $1.grossMinor }
      let untaxedShipping = quote.shippingTaxed ? 0 : quote.shippingMinor
      #expect(shown + untaxedShipping == quote.totalMinor, "\(context)")
      #expect(quote.summaryItems.last?.amount == pricer.config.format(quote.totalMinor), "\(context)")
    }
    // About two runs in three have a card with an adjustment.
    #expect(adjusted > 1500)
  }

  @Test("refunds of a tax-inclusive order give back what was paid: the VAT is inside, never added again")
  func inclusiveRefunds() throws {
    let config = try ConfigLoader.parse(yaml: Self.uk(), file: "shop.yaml")
    let (store, _) = try StoreBackend.sqlite.freshStore(config: config)
    let handler = TestConfig.handler(
      ServiceContext(config: config, store: store, clock: ServiceClock(pinned: TestConfig.now)), backOffice: true)
    let contact =
      #"{"givenName":"Ada","familyName":"Lovelace","addressLines":["10 Downing St"],"locality":"London","postalCode":"SW1A 2AA","countryCode":"GB"}"#
    let cart = #"[{"sku":"mug","quantity":2},{"sku":"book","quantity":1}]"#
    let authorized = handler.call(
      "authorizePayment",
      #"{"items":\#(cart),"shippingMethod":"post","payment":{"token":{"paymentData":"tok_visa","paymentMethod":{"displayName":"Visa 0492","network":"visa","type":"credit"},"transactionIdentifier":"T"},"shippingContact":\#(contact),"billingContact":\#(contact)}}"#
    )
    let token = try #require(authorized["result"]?["chargeToken"]?.stringValue, "\(authorized.compact)")
    // 24.00 + 8.00 + 4.80, VAT 4.00 + 0 + 0.80 inside.
    #expect(authorized["result"]?["amount"] == .string("36.80"))
    let breakdown =
      #"[{"rate":"0.20","net":"24.00","tax":"4.80","gross":"28.80"},{"rate":"0","net":"8.00","tax":"0.00","gross":"8.00"}]"#
    #expect(authorized["result"]?["taxBreakdown"]?.compact == breakdown)
    #expect(
      handler.call("computeSummaryItems", #"{"items":\#(cart),"shippingMethod":"post"}"#)["result"]?["taxBreakdown"]?.compact
        == breakdown)
    let processed = handler.call(
      "processOrder",
      #"{"chargeToken":"\#(token)","items":\#(cart),"shippingMethod":"post","shippingContact":\#(contact),"amount":"36.80","currencyCode":"GBP"}"#
    )
    let orderId = try #require(processed["result"]?["orderId"]?.stringValue, "\(processed.compact)")
    #expect(processed["result"]?["order"]?["taxBreakdown"]?.compact == breakdown)
    #expect(handler.call("getOrder", #"{"orderId":"\#(orderId)"}"#)["result"]?["order"]?["taxBreakdown"]?.compact == breakdown)
    let one = handler.call(
      "refundOrder", #"{"orderId":"\#(orderId)","refundId":"r1","lines":[{"sku":"mug","quantity":1,"restock":"return"}]}"#)
    #expect(one["result"]?["refund"]?["amount"] == .string("12.00"), "\(one.compact)")
    #expect(one["result"]?["refund"]?["tax"] == .string("2.00"))
    let rest = handler.call(
      "refundOrder",
      #"{"orderId":"\#(orderId)","refundId":"r2","lines":[{"sku":"mug","quantity":1,"restock":"return"},{"sku":"book","quantity":1,"restock":"return"}],"shipping":true}"#
    )
    #expect(rest["result"]?["refund"]?["amount"] == .string("24.80"), "\(rest.compact)")
    #expect(rest["result"]?["refund"]?["tax"] == .string("2.80"))
    #expect(rest["result"]?["orderStatus"] == .string("refunded"))
    #expect(rest["result"]?["amountRefunded"] == .string("36.80"))
  }

  @Test("yen and dinars keep their decimals (none, three) in every amount, breakdowns included")
  func currencyDecimals() throws {
    let jpy = Pricer(config: try ConfigLoader.load(path: TestPaths.path("examples/jp-shop.yaml")))
    var kwdYAML = Self.uk(target: .perOrder)
      .replacingOccurrences(of: "currencyCode: GBP", with: "currencyCode: KWD")
    for (gbp, kwd) in [("12.00", "12.000"), ("8.00", "8.000"), ("0.99", "0.995"), ("4.80", "4.800"), ("5.00", "5.000")] {
      kwdYAML = kwdYAML.replacingOccurrences(of: "\"\(gbp)\"", with: "\"\(kwd)\"")
    }
    let kwd = try Self.pricer(kwdYAML)
    var random = SplitMix64(seed: 7)
    for run in 0..<600 {
      let (pricer, pattern, skus) =
        run % 2 == 0
        ? (jpy, "^-?[0-9]+$", ["beans", "dripbags", "cookies", "mug"])
        : (kwd, "^-?[0-9]+\\.[0-9]{3}$", ["mug", "book", "pin", "badge", "patch"])
      var items: [CartItem] = []
      for sku in skus.shuffled(using: &random).prefix(Int(random.next() % 3) + 1) {
        items.append(CartItem(sku: sku, quantity: Int(random.next() % 4) + 1))
      }
      let merchandise = pricer.merchandise(items: items, couponCode: nil, paymentMethod: nil, now: TestConfig.now)
      let quote = pricer.quote(
        merchandise, method: pricer.config.shipping.methods.first, region: pricer.region(of: nil))
      let amounts = quote.summaryItems.map(\.amount)
        + (quote.taxBreakdownItems(pricer.config) ?? []).flatMap { [$0.net, $0.tax, $0.gross] }
      for amount in amounts {
        #expect(amount.wholeMatch(of: try Regex(pattern)) != nil, "run \(run): \(amount)")
      }
      let breakdown = quote.taxBreakdown()
      #expect(breakdown.reduce(0) { $0 + $1.grossMinor } == quote.totalMinor, "run \(run)")
      #expect(breakdown.reduce(0) { $0 + $1.taxMinor } == quote.taxMinor, "run \(run)")
    }
  }
}
