import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

@Suite("Orders with coupons and card adjustments")
struct DiscountedOrderTests {
  static let shipping = ProcessOrderTests.shipping
  static let billing = ProcessOrderTests.billing
  static let storeCard = #"{"displayName":"Acme Card 0042","network":"privateLabel","type":"store"}"#
  static let visaDebit = #"{"displayName":"Visa 1881","network":"visa","type":"debit"}"#

  static func context(path: String, now: String) throws -> ServiceContext {
    try TestConfig.context(config: TestConfig.discounts(), storePath: path, now: RFC3339.parse(now)!)
  }

  static func authorize(_ handler: RequestHandler, coupon: String, card: String) -> JSONValue {
    // The sandbox's test card for the claimed one (it prices the card).
    let paymentData = card == storeCard ? "tok_privateLabel" : card == visaDebit ? "tok_visa_debit" : "tok_visa"
    return handler.call(
      "authorizePayment",
      #"{"items":[{"sku":"clock"}],"shippingMethod":"standard","couponCode":"\#(coupon)","payment":{"token":{"paymentData":"\#(paymentData)","paymentMethod":\#(card),"transactionIdentifier":"T"},"shippingContact":\#(shipping),"billingContact":\#(billing)}}"#
    )["result"]!
  }

  static func order(_ token: JSONValue, coupon: String, extra: String = "") -> String {
    #"{"chargeToken":"\#(token["chargeToken"]!.stringValue!)","items":[{"sku":"clock"}],"shippingMethod":"standard","shippingContact":\#(shipping),"amount":"\#(token["amount"]!.stringValue!)","currencyCode":"USD","couponCode":"\#(coupon)"\#(extra)}"#
  }

  @Test("a coupon that expires between authorization and processOrder is honored as authorized")
  func couponAsAuthorized() throws {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    // SAVE10 expires 2026-12-31T23:59:59Z. Authorized ten minutes before, charged five minutes after.
    let before = TestConfig.handler(try Self.context(path: path, now: "2026-12-31T23:50:00Z"))
    let authorized = Self.authorize(before, coupon: "SAVE10", card: Self.storeCard)
    // Cupertino: 50.00 - 5.00 (SAVE10) - 2.25 (5% of 45.00) + 6.00 + 7.25% of 42.75 (3.099 -> 3.10) = 51.85.
    #expect(authorized["amount"] == .string("51.85"))
    #expect(authorized["errors"] == .array([]))

    let after = TestConfig.handler(try Self.context(path: path, now: "2027-01-01T00:05:00Z"))
    let quoteNow = after.call("computeSummaryItems", #"{"items":[{"sku":"clock"}],"couponCode":"SAVE10"}"#)
    #expect(quoteNow["result"]?["errors"]?[0]?["code"] == .string("couponCodeExpired"))
    let charged = after.call("processOrder", Self.order(authorized, coupon: "save10"))
    #expect(charged["result"]?["status"] == .string("succeeded"))
    #expect(charged["result"]?["amount"] == .string("51.85"))
    #expect(charged["result"]?["order"]?["couponCode"] == .string("SAVE10"))
    let labels = charged["result"]?["order"]?["summaryItems"]?.arrayValue?.compactMap { $0["label"]?.stringValue }
    #expect(labels == ["Clock", "Discount (SAVE10)", "Store card discount", "Shipping", "Tax", "Acme"])
  }

  @Test("a token from before the card was recorded is charged without an adjustment")
  func tokenWithoutCard() throws {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    let context = try Self.context(path: path, now: "2026-11-21T12:00:00Z")
    let handler = TestConfig.handler(context)
    let first = Self.authorize(handler, coupon: "", card: Self.visaDebit)
    let second = Self.authorize(handler, coupon: "", card: Self.visaDebit)
    // What a version 1 store holds: no card on the token (the column migration v2 added is NULL).
    try (context.store as! SQLiteStore).dbQueue.write { db in try db.execute(sql: "UPDATE chargeToken SET paymentMethod = NULL") }

    let withCard = handler.call("processOrder", Self.order(first, coupon: "", extra: #","paymentMethod":\#(Self.visaDebit)"#))
    #expect(withCard["result"]?["failureCode"] == .string("invalid_charge_token"))
    let plain = handler.call("processOrder", Self.order(first, coupon: ""))
    #expect(plain["result"]?["status"] == .string("succeeded"))
    // 50.00 + 6.00 + 7.25% of 50.00 (3.625 -> 3.63).
    #expect(plain["result"]?["amount"] == .string("59.63"))
    // Replays match on the same identity.
    #expect(handler.call("processOrder", Self.order(first, coupon: ""))["result"] == plain["result"])
    #expect(handler.call("processOrder", Self.order(second, coupon: ""))["result"]?["status"] == .string("succeeded"))
  }

  @Test("the card on processOrder must be the authorized one; network case does not matter")
  func cardMustMatch() throws {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    let handler = TestConfig.handler(try Self.context(path: path, now: "2026-11-21T12:00:00Z"))
    let authorized = Self.authorize(handler, coupon: "", card: Self.storeCard)
    // 50.00 - 2.50 + 6.00 + 7.25% of 47.50 (3.44375 -> 3.44).
    #expect(authorized["amount"] == .string("56.94"))
    let otherType = handler.call(
      "processOrder",
      Self.order(authorized, coupon: "", extra: #","paymentMethod":{"network":"privateLabel","type":"credit"}"#))
    #expect(otherType["result"]?["failureCode"] == .string("invalid_charge_token"))
    let same = handler.call(
      "processOrder",
      Self.order(authorized, coupon: "", extra: #","paymentMethod":{"network":"PRIVATELABEL","type":"store"}"#))
    #expect(same["result"]?["status"] == .string("succeeded"))
    #expect(same["result"]?["amount"] == .string("56.94"))
  }
}
