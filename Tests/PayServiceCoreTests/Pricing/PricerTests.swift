@testable import PayServiceCore
import PayServiceTestSupport
import Testing

@Suite("Pricing with coupons, card adjustments, freeOver and delivery windows")
struct PricerTests {
  static let config = TestConfig.discounts()
  static let pricer = Pricer(config: config)
  static let now = TestConfig.now
  static let store = PaymentMethod(network: "privateLabel", type: .store)
  static let amex = PaymentMethod(network: "amex", type: .debit)

  static func items(_ pairs: (String, Int)...) -> [CartItem] {
    pairs.map { CartItem(sku: $0.0, quantity: $0.1) }
  }

  static func amounts(_ quote: Pricer.Quote) -> [String] { quote.summaryItems.map(\.amount) }

  func merchandise(_ items: [CartItem], coupon: String? = nil, card: PaymentMethod? = nil, now: Int64 = now)
    -> Merchandise
  {
    Self.pricer.merchandise(items: items, couponCode: coupon, paymentMethod: card, now: now)
  }

  @Test("a percent coupon is rounded with tax.rounding and spread over the lines for tax")
  func percentCoupon() {
    // 50.00 + 2 x 19.99 = 89.98; 10% = 8.998 -> 9.00. Shares 5.00 and 4.00 (see AllocationTests);
    // tax 8% of 45.00 = 3.60 and of 35.98 = 2.8784 -> 2.88.
    let merchandise = merchandise(Self.items(("clock", 1), ("lamp", 2)), coupon: "SAVE10")
    #expect(merchandise.couponMinor == 900)
    #expect(merchandise.errors.isEmpty)
    let quote = Self.pricer.quote(merchandise, method: Self.config.shippingMethodsByIdentifier["standard"], region: Self.pricer.region(of: nil))
    #expect(Self.amounts(quote) == ["50.00", "39.98", "-9.00", "6.00", "6.48", "93.46"])
    #expect(quote.summaryItems[2].label == "Discount (SAVE10)")
  }

  @Test("coupon and card amounts round with tax.rounding; halfEven sends ties to the even cent")
  func discountRounding() {
    let base = Self.config
    let ten = Coupon(code: "TEN", label: "Ten", discount: .percentOff(Rate(percent: "10", allowNegative: false)!))
    func pricer(_ rounding: Rounding) -> Pricer {
      Pricer(
        config: Config(
          merchant: base.merchant, catalog: base.catalog, shipping: base.shipping,
          tax: Tax(rounding: rounding, defaultRate: base.tax.defaultRate, rules: base.tax.rules),
          gateway: base.gateway, coupons: [ten], paymentMethodAdjustments: base.paymentMethodAdjustments))
    }
    func amounts(_ rounding: Rounding, pens: Int) -> (coupon: Int64, card: Int64) {
      let items = Self.items(("pen", pens))
      let coupon = pricer(rounding).merchandise(items: items, couponCode: "TEN", paymentMethod: nil, now: Self.now)
      let card = pricer(rounding).merchandise(items: items, couponCode: nil, paymentMethod: Self.store, now: Self.now)
      return (coupon.couponMinor, card.adjustmentMinor)
    }
    // 3 pens = 1.05: 10% is 0.105 and 5% is 0.0525. 6 pens = 2.10: 10% is 0.21 and 5% is 0.105.
    #expect(amounts(.halfUp, pens: 3) == (11, -5))
    #expect(amounts(.halfEven, pens: 3) == (10, -5))
    #expect(amounts(.halfUp, pens: 6) == (21, -11))
    #expect(amounts(.halfEven, pens: 6) == (21, -10))
    // 2 pens = 0.70: 5% is 0.035, a tie whose even neighbour is away from zero either way.
    #expect(amounts(.halfUp, pens: 2).card == -4)
    #expect(amounts(.halfEven, pens: 2).card == -4)
  }

  @Test("coupon codes: case, whitespace, unknown, empty")
  func couponMatching() {
    let cart = Self.items(("clock", 1))
    #expect(merchandise(cart, coupon: " save10\n").coupon?.code == "SAVE10")
    #expect(merchandise(cart, coupon: "Save10").couponMinor == 500)
    let unknown = merchandise(cart, coupon: "SAVE 10")
    #expect(unknown.coupon == nil && unknown.couponMinor == 0)
    #expect(unknown.errors == [ApplePayError(.couponCodeInvalid, nil, "This coupon code isn't valid.")])
    let empty = merchandise(cart, coupon: "   ")
    #expect(empty.coupon == nil && empty.errors.isEmpty)
    #expect(merchandise(cart, coupon: nil).errors.isEmpty)
  }

  @Test("a coupon is accepted up to and including its expires second")
  func expiryBoundary() {
    let expires = RFC3339.parse("2026-12-31T23:59:59Z")!
    let cart = Self.items(("clock", 1))
    #expect(merchandise(cart, coupon: "SAVE10", now: expires).couponMinor == 500)
    let late = merchandise(cart, coupon: "SAVE10", now: expires + 1)
    #expect(late.couponMinor == 0)
    #expect(late.errors == [ApplePayError(.couponCodeExpired, nil, "The code SAVE10 expired on 2026-12-31T23:59:59Z.")])
  }

  @Test("minimumSubtotal compares the merchandise subtotal before discounts, inclusive")
  func minimumSubtotal() {
    // 4 x 4.75 + 3 x 0.35 = 20.05; 4 x 4.75 + 2 x 0.35 = 19.70; 2 x 8.49 + 3 x 0.35 = 18.03.
    #expect(merchandise(Self.items(("notebook", 4), ("pen", 3)), coupon: "SAVE10").couponMinor == 201)
    let below = merchandise(Self.items(("notebook", 4), ("pen", 2)), coupon: "SAVE10")
    #expect(below.couponMinor == 0)
    #expect(
      below.errors.map(\.message) == [
        "The code SAVE10 needs a merchandise subtotal of at least 20.00 USD; this cart's is 19.70 USD."
      ])
    // Exactly the minimum applies; one cent short does not.
    let base = Self.config
    let exact = Pricer(
      config: Config(
        merchant: base.merchant, catalog: base.catalog, shipping: base.shipping, tax: base.tax, gateway: base.gateway,
        coupons: [
          Coupon(code: "AT50", label: "At 50", discount: .amountOff(100), minimumSubtotalMinor: 5000, expires: nil),
          Coupon(code: "AT5001", label: "At 50.01", discount: .amountOff(100), minimumSubtotalMinor: 5001, expires: nil),
        ]))
    let clock = Self.items(("clock", 1))
    #expect(exact.merchandise(items: clock, couponCode: "at50", paymentMethod: nil, now: Self.now).couponMinor == 100)
    #expect(exact.merchandise(items: clock, couponCode: "at5001", paymentMethod: nil, now: Self.now).couponMinor == 0)
  }

  @Test("discounts are capped at the subtotal and the total is never negative")
  func caps() {
    // BIGBUCKS is 1000.00 off a 0.35 pen: capped at 0.35; tax on 0.00 is 0.
    let pen = merchandise(Self.items(("pen", 1)), coupon: "BIGBUCKS")
    #expect(pen.couponMinor == 35 && pen.netMinor == 0)
    let quote = Self.pricer.quote(pen, method: nil, region: Self.pricer.region(of: nil))
    #expect(Self.amounts(quote) == ["0.35", "-0.35", "0.00", "0.00"])
    // A card discount on top of a full coupon has nothing left to take.
    let both = merchandise(Self.items(("pen", 1)), coupon: "BIGBUCKS", card: Self.store)
    #expect(both.adjustmentMinor == 0 && both.netMinor == 0)
  }

  @Test("the first adjustment whose given keys all match wins")
  func adjustmentMatching() {
    let cart = Self.items(("clock", 1))
    #expect(merchandise(cart, card: Self.store).adjustment?.label == "Store card discount")
    #expect(merchandise(cart, card: Self.store).adjustmentMinor == -250)
    // privateLabel but credit: the store rule needs type store; the credit rule matches.
    let privateCredit = merchandise(cart, card: PaymentMethod(network: "privateLabel", type: .credit))
    #expect(privateCredit.adjustment?.label == "Credit card surcharge" && privateCredit.adjustmentMinor == 75)
    // amex credit matches both the amex and the credit rule: amex is first.
    #expect(merchandise(cart, card: PaymentMethod(network: "AMEX", type: .credit)).adjustmentMinor == 150)
    #expect(merchandise(cart, card: PaymentMethod(network: "visa", type: .debit)).adjustment == nil)
    // A network the merchant does not take: an error and no adjustment, even though type credit matches.
    let discover = merchandise(cart, card: PaymentMethod(network: "discover", type: .credit))
    #expect(discover.adjustment == nil)
    #expect(discover.errors == [ApplePayError(.unknown, nil, "The discover network is not accepted. Use another card.")])
  }

  @Test("the adjustment is a percentage of the subtotal after the coupon")
  func adjustmentAfterCoupon() {
    // 89.98 - 9.00 = 80.98; 3% = 2.4294 -> 2.43; -5% = -4.049 -> -4.05.
    let cart = Self.items(("clock", 1), ("lamp", 2))
    #expect(merchandise(cart, coupon: "SAVE10", card: Self.amex).adjustmentMinor == 243)
    #expect(merchandise(cart, coupon: "SAVE10", card: Self.store).adjustmentMinor == -405)
  }

  @Test(
    "freeOver compares the subtotal after coupon and card discounts; surcharges do not count",
    arguments: [
      ([("clock", 2)], nil, nil, "0.00"),  // 100.00: at the threshold
      ([("clock", 2), ("pen", 1)], nil, nil, "0.00"),  // 100.35: above
      ([("clock", 1), ("lamp", 2), ("pen", 28)], nil, nil, "6.00"),  // 99.78: below
      ([("clock", 2)], "FIVEOFF", nil, "6.00"),  // 95.00 after the coupon
      ([("clock", 2)], nil, "store", "6.00"),  // 95.00 after the card discount
      ([("clock", 2)], nil, "amex", "0.00"),  // 100.00 + a 3.00 surcharge: still 100.00
      ([("clock", 2)], "FIVEOFF", "amex", "6.00"),  // 95.00 + 2.85 surcharge: 95.00
    ] as [([(String, Int)], String?, String?, String)])
  func freeOver(cart: [(String, Int)], coupon: String?, card: String?, shipping: String) {
    let method = Self.config.shippingMethodsByIdentifier["standard"]!
    let payment = card.map { $0 == "store" ? Self.store : Self.amex }
    let merchandise = merchandise(cart.map { CartItem(sku: $0.0, quantity: $0.1) }, coupon: coupon, card: payment)
    #expect(Self.config.format(Self.pricer.shippingMinor(for: method, merchandise)) == shipping)
  }

  @Test("summary items add up to the grand total, every amount has 2 decimals, tax is never negative")
  func invariants() {
    var generator = SplitMix64(seed: 42)
    let skus = Self.config.catalog.map(\.sku)
    let coupons: [String?] = [nil, "", "SAVE10", "FIVEOFF", "BIGBUCKS", "THIRD", "SUMMER25", "NOPE"]
    let cards: [PaymentMethod?] = [
      nil, Self.store, Self.amex, PaymentMethod(network: "visa", type: .credit),
      PaymentMethod(network: "discover", type: .debit),
    ]
    func contact(_ area: String, _ postalCode: String, _ country: String) -> Contact {
      var contact = Contact()
      contact.administrativeArea = area
      contact.postalCode = postalCode
      contact.countryCode = country
      return contact
    }
    let contacts: [Contact?] = [nil, contact("NY", "12207", "US"), contact("ON", "M5V", "CA"), contact("OR", "97201", "US")]
    for _ in 0..<3_000 {
      let count = Int(generator.next() % 4) + 1
      let chosen = Array(skus.shuffled(using: &generator).prefix(count))
      let items = chosen.map { CartItem(sku: $0, quantity: Int(generator.next() % 40) + 1) }
      let coupon = coupons[Int(generator.next() % UInt64(coupons.count))]
      let card = cards[Int(generator.next() % UInt64(cards.count))]
      let region = Self.pricer.region(of: contacts[Int(generator.next() % UInt64(contacts.count))])
      let method = Self.pricer.offeredMethods(for: region).randomElement(using: &generator)
      let merchandise = merchandise(items, coupon: coupon, card: card)
      let quote = Self.pricer.quote(merchandise, method: method, region: region)
      let minor = quote.summaryItems.map { item -> Int64 in
        guard case .success(let value) = MoneyText.minorUnits(item.amount, digits: 2) else { return .min }
        #expect(item.amount.split(separator: ".").last?.count == 2)
        return value
      }
      #expect(minor.dropLast().reduce(0, +) == minor.last)
      #expect(quote.taxMinor >= 0 && quote.totalMinor >= 0 && merchandise.netMinor >= 0)
      #expect(merchandise.couponMinor >= 0 && merchandise.couponMinor <= merchandise.subtotalMinor)
      // The same inputs price the same way.
      let again = Self.pricer.quote(self.merchandise(items, coupon: coupon, card: card), method: method, region: region)
      #expect(again.summaryItems == quote.summaryItems)
    }
  }

  @Test(
    "delivery windows are UTC calendar dates across month, year and leap-day ends",
    arguments: [
      ("2026-11-21T12:00:00Z", 3, 5, "2026-11-24", "2026-11-26"),
      ("2026-11-28T20:00:00Z", 3, 5, "2026-12-01", "2026-12-03"),
      ("2026-12-31T23:59:59Z", 1, nil, "2027-01-01", "2027-01-01"),
      ("2026-12-30T00:00:00Z", 7, 12, "2027-01-06", "2027-01-11"),
      ("2028-02-28T10:00:00Z", 1, 2, "2028-02-29", "2028-03-01"),
      ("2027-02-28T10:00:00Z", 1, nil, "2027-03-01", "2027-03-01"),
      ("2026-11-21T23:30:00-05:00", 0, nil, "2026-11-22", "2026-11-22"),  // 04:30 UTC the next day
    ] as [(String, Int, Int?, String, String)])
  func deliveryWindow(now: String, transitDays: Int, transitDaysMax: Int?, start: String, end: String) {
    let method = ShippingMethod(
      identifier: "m", label: "M", detail: "", transitDays: transitDays, transitDaysMax: transitDaysMax,
      amountMinor: 0, freeOverMinor: nil, regions: nil, exceptRegions: nil)
    let range = DateComponentsRange(method: method, now: RFC3339.parse(now)!)
    func text(_ date: DateComponents) -> String {
      "\(date.years)-\(date.months < 10 ? "0" : "")\(date.months)-\(date.days < 10 ? "0" : "")\(date.days)"
    }
    #expect(text(range.start) == start)
    #expect(text(range.end) == end)
  }
}
