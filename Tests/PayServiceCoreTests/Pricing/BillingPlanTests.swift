@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// What subscriptions, automatic reloads and pre-orders cost today, and the lines describing their
/// later payments.
@Suite("Billing plans")
struct BillingPlanTests {
  static let webShop = try! ConfigLoader.load(path: TestPaths.path("examples/web/shop.yaml"))

  static func seconds(_ text: String) -> Int64 { RFC3339.parse(text)! }

  @Test(
    "intervals advance in UTC calendar terms, a month end kept within the month",
    arguments: [
      ("2026-01-31T10:00:00Z", BillingPlan.IntervalUnit.month, 1, "2026-02-28T10:00:00Z"),
      ("2028-01-31T10:00:00Z", .month, 1, "2028-02-29T10:00:00Z"),
      ("2026-11-21T12:00:00Z", .month, 3, "2027-02-21T12:00:00Z"),
      ("2026-12-31T23:59:59Z", .day, 1, "2027-01-01T23:59:59Z"),
      ("2028-02-29T00:00:00Z", .year, 1, "2029-02-28T00:00:00Z"),
      ("2026-11-21T12:00:00Z", .day, 14, "2026-12-05T12:00:00Z"),
    ])
  func intervals(start: String, unit: BillingPlan.IntervalUnit, count: Int, expected: String) {
    #expect(RFC3339.format(BillingPlan.Interval(unit: unit, count: count).advance(Self.seconds(start))) == expected)
  }

  @Test("what one unit costs today for each plan")
  func dueToday() {
    let now = Self.seconds("2026-11-21T12:00:00Z")
    let month = BillingPlan.Interval(unit: .month, count: 1)
    let trial = BillingPlan.Trial(amountMinor: 500, interval: .init(unit: .day, count: 14))
    #expect(BillingPlan(.recurring(interval: month, startDate: nil, endDate: nil, trial: nil)).dueTodayMinor(price: 1800, now: now) == 1800)
    #expect(BillingPlan(.recurring(interval: month, startDate: nil, endDate: nil, trial: trial)).dueTodayMinor(price: 1800, now: now) == 500)
    #expect(
      BillingPlan(.recurring(interval: month, startDate: now + 1, endDate: nil, trial: nil)).dueTodayMinor(price: 1800, now: now) == 0)
    #expect(
      BillingPlan(.recurring(interval: month, startDate: now, endDate: nil, trial: nil)).dueTodayMinor(price: 1800, now: now) == 1800)
    #expect(BillingPlan(.automaticReload(thresholdMinor: 500)).dueTodayMinor(price: 2500, now: now) == 2500)
    #expect(BillingPlan(.deferred(paymentDate: now + 86_400, freeCancellationDate: nil, timeZone: nil)).dueTodayMinor(price: 49_900, now: now) == 0)
  }

  @Test("a subscription with a trial: the trial's line is charged today, the plan's line starts when it ends")
  func subscriptionLines() throws {
    let context = try TestConfig.context(config: Self.webShop)
    let response = TestConfig.handler(context).call("computeSummaryItems", #"{"items":[{"sku":"beans-club","quantity":2}]}"#)
    #expect(
      response["result"]?["summaryItems"]?.compact
        == #"[{"label":"Beans Club trial × 2","amount":"10.00","type":"final","paymentTiming":"recurring","recurringPaymentStartDate":"2026-11-21T12:00:00Z","recurringPaymentIntervalUnit":"day","recurringPaymentIntervalCount":14,"recurringPaymentEndDate":"2026-12-05T12:00:00Z"},{"label":"Beans Club × 2","amount":"36.00","type":"final","paymentTiming":"recurring","recurringPaymentStartDate":"2026-12-05T12:00:00Z","recurringPaymentIntervalUnit":"month","recurringPaymentIntervalCount":1},{"label":"Shipping","amount":"0.00","type":"final"},{"label":"Tax","amount":"0.80","type":"final"},{"label":"Example Coffee","amount":"10.80","type":"final"}]"#
    )
  }

  @Test("a pre-order costs nothing today; an automatic reload costs its first load")
  func preorderAndReload() throws {
    let handler = TestConfig.handler(try TestConfig.context(config: Self.webShop))
    let preorder = handler.call(
      "computeSummaryItems", #"{"items":[{"sku":"espresso-machine"},{"sku":"grinder"}],"shippingMethod":"express"}"#)
    #expect(
      preorder["result"]?["summaryItems"]?.compact
        == #"[{"label":"Espresso Machine (pre-order)","amount":"499.00","type":"final","paymentTiming":"deferred","deferredPaymentDate":"2027-02-01T17:00:00Z"},{"label":"Burr Grinder","amount":"89.00","type":"final"},{"label":"Shipping","amount":"14.00","type":"final"},{"label":"Tax","amount":"7.12","type":"final"},{"label":"Example Coffee","amount":"110.12","type":"final"}]"#
    )
    let reload = handler.call("computeSummaryItems", #"{"items":[{"sku":"cafe-card"}]}"#)
    #expect(
      reload["result"]?["summaryItems"]?.compact
        == #"[{"label":"Café Card","amount":"25.00","type":"final","paymentTiming":"automaticReload","automaticReloadPaymentThresholdAmount":"5.00"},{"label":"Shipping","amount":"0.00","type":"final"},{"label":"Tax","amount":"2.00","type":"final"},{"label":"Example Coffee","amount":"27.00","type":"final"}]"#
    )
  }

  @Test("a cart with two billed lines is invalid params naming both lines")
  func mixedCart() throws {
    let handler = TestConfig.handler(try TestConfig.context(config: Self.webShop))
    for method in ["computeSummaryItems", "createPaymentRequest", "selectShippingContact"] {
      let params =
        #"{"items":[{"sku":"grinder"},{"sku":"beans-club"},{"sku":"espresso-machine"}]"#
        + (method == "selectShippingContact" ? #","shippingContact":{"countryCode":"US","postalCode":"95014","administrativeArea":"CA"}}"# : "}")
      #expect(
        handler.call(method, params)["error"]?.compact
          == #"{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"items[2].sku","message":"\"espresso-machine\" (deferred) cannot be in one cart with items[1].sku \"beans-club\" (recurring): a payment request describes one subscription, automatic reload or pre-order; check them out separately"}]}}"#
      )
    }
  }

  @Test("an order keeps its schedule: getOrder reads back the lines processOrder recorded")
  func orderRoundTrip() throws {
    let handler = TestConfig.handler(try TestConfig.context(config: Self.webShop), backOffice: true)
    let contact = #"{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}"#
    for (index, sku) in ["beans-club", "cafe-card", "espresso-machine"].enumerated() {
      let authorized = handler.call(
        "authorizePayment",
        #"{"items":[{"sku":"\#(sku)"}],"shippingMethod":"standard","payment":{"token":{"paymentData":"tok_visa","paymentMethod":{"network":"visa","type":"credit","displayName":"Visa 1"},"transactionIdentifier":"T\#(index)"},"shippingContact":\#(contact),"billingContact":\#(contact)}}"#)
      let token = try #require(authorized["result"]?["chargeToken"]?.stringValue)
      let amount = try #require(authorized["result"]?["amount"]?.stringValue)
      let placed = handler.call(
        "processOrder",
        #"{"chargeToken":"\#(token)","items":[{"sku":"\#(sku)"}],"shippingMethod":"standard","shippingContact":\#(contact),"amount":"\#(amount)","currencyCode":"USD"}"#)
      let order = try #require(placed["result"]?["order"])
      let orderId = try #require(order["orderId"]?.stringValue)
      let read = handler.call("getOrder", #"{"orderId":"\#(orderId)"}"#)
      #expect(read["result"]?["order"]?["summaryItems"] == order["summaryItems"])
      #expect(order["summaryItems"]?[0]?["paymentTiming"] != nil, "\(sku)")
      #expect(order["summaryItems"] == authorized["result"]?["summaryItems"])
    }
  }
}
