import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Issue 36's year through the Stripe test server: each step a payservice process of its own on
/// the same store, `--now` moved forward and the test server's clock with it. What was charged is
/// counted at the test server (its PaymentIntents, SetupIntents and Customers, by the agreement's
/// metadata and the idempotency key) and read back from the store (getAgreement, listOrders).
@Suite("Agreements through the Stripe test server: a simulated year", .serialized)
struct AgreementsStripeTests {
  static let checkoutAt = "2026-12-01T10:00:00Z"

  @Test(
    "a year: a subscription with a trial billed 12 times (one renewal declined, recovered by the retry a day later), a pre-order set up with a SetupIntent and charged on its date, a reload charged twice (a reloadId again charges nothing), a subscription cancelled at period end and never charged after",
    arguments: StoreBackend.available)
  func year(backend: StoreBackend) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    server.setSingleUseTokens(false)
    let shop = try BillingShop(backend: backend, stripe: server)
    /// `now` for the next process, and the test server's clock with it.
    func at(_ now: String) -> String {
      server.setClock(RFC3339.parse(now)!)
      return now
    }
    func run(_ now: String) throws -> (status: Int32, result: JSONValue) { try shop.billingRun(at: at(now)) }
    /// A run's payments, one line each: agreement (by name), period or reload, attempt, status, amount.
    var names: [String: String] = [:]
    func payments(_ result: JSONValue) -> [String] {
      (result["payments"]?.arrayValue ?? []).map { payment -> String in
        let name: String = names[payment["agreementId"]?.stringValue ?? ""] ?? "?"
        let period: String = payment["period"].map { "p\($0.compact)" } ?? "reload"
        let attempt: String = payment["attempt"].map { "a\($0.compact)" } ?? "-"
        let status: String = payment["status"]?.stringValue ?? "?"
        let amount: String = payment["amount"]?.stringValue ?? payment["failureCode"]?.stringValue ?? "-"
        let agreementStatus: String = payment["agreementStatus"]?.stringValue ?? "?"
        return [name, period, attempt, status, amount, agreementStatus].joined(separator: " ")
      }
    }

    // The checkouts: A and D subscribe (5.40 today, the trial), B pre-orders (0.00 today: a
    // SetupIntent keeps the card), C buys the reloading card (27.00).
    let placed = try shop.checkout(
      at: at(Self.checkoutAt),
      [.init("beans-club"), .init("espresso-machine"), .init("cafe-card"), .init("beans-club")])
    #expect(placed.map { $0["amount"]?.stringValue } == ["5.40", "0.00", "27.00", "5.40"])
    let ids = try placed.map(BillingShop.agreementId)
    let (a, b, c, d) = (ids[0], ids[1], ids[2], ids[3])
    names = [a: "A", b: "B", c: "C", d: "D"]
    let checkoutOrders = placed.map { $0["orderId"]?.stringValue ?? "" }
    #expect(placed.map { $0["order"]?["agreement"]?["payment"]?.stringValue } == ["checkout", "checkout", "checkout", "checkout"])
    // B's order paid nothing at Stripe: no PaymentIntent to name.
    #expect(placed[1]["order"]?["gatewayPaymentId"] == nil, "\(placed[1].compact)")
    #expect(server.customerRecords().count == 4)
    #expect(server.setupIntentRecords().count == 1)
    #expect(server.paymentIntentCount == 3)

    // December 15: the trials end; A's and D's period 0.
    var step = try run("2026-12-15T12:00:00Z")
    #expect(step.status == 0, "\(step.result.compact)")
    #expect(payments(step.result) == ["A p0 a1 succeeded 19.44 active", "D p0 a1 succeeded 19.44 active"])

    // January 10: C's balance is low; the same reloadId again is answered, not charged; a balance
    // at the threshold needs nothing.
    let reload = #"{"agreementId":"\#(c)","balance":"3.00","reloadId":"reload-1"}"#
    let reloads = try shop.session(
      at: at("2027-01-10T09:00:00Z"),
      [
        ("reloadBalance", reload), ("reloadBalance", reload),
        ("reloadBalance", #"{"agreementId":"\#(c)","balance":"5.00","reloadId":"reload-x"}"#),
      ])
    #expect(reloads[0]["result"]?["status"] == .string("succeeded"), "\(reloads[0].compact)")
    #expect(reloads[0]["result"]?["amount"] == .string("27.00"), "\(reloads[0].compact)")
    #expect(reloads[1]["result"] == reloads[0]["result"])
    #expect(reloads[2]["result"]?["status"] == .string("not_needed"), "\(reloads[2].compact)")
    let again = try shop.session(at: at("2027-01-10T10:00:00Z"), [("reloadBalance", reload)])
    #expect(again[0]["result"] == reloads[0]["result"])
    #expect(server.paymentIntents(agreementId: c).count == 2)

    step = try run("2027-01-15T12:00:00Z")
    #expect(step.status == 0)
    #expect(payments(step.result) == ["A p1 a1 succeeded 19.44 active", "D p1 a1 succeeded 19.44 active"])

    // January 20: D cancels at the end of the period it paid for.
    let cancel = try shop.call(
      at: at("2027-01-20T09:00:00Z"), "cancelAgreement", #"{"agreementId":"\#(d)","cancelId":"cancel-d","atPeriodEnd":true}"#)
    #expect(cancel["status"] == .string("succeeded"), "\(cancel.compact)")
    #expect(cancel["agreement"]?["status"] == .string("active"))
    #expect(cancel["agreement"]?["cancelAtPeriodEnd"] == .bool(true))
    #expect(cancel["agreement"]?["nextPaymentAt"] == .string("2027-02-15T10:00:00Z"))

    // February 1: the pre-order's payment date.
    step = try run("2027-02-01T18:00:00Z")
    #expect(step.status == 0)
    #expect(payments(step.result) == ["B p0 a1 succeeded 538.92 completed"])

    // February 15: A renews; D's period ends uncharged.
    step = try run("2027-02-15T12:00:00Z")
    #expect(step.status == 0, "\(step.result.compact)")
    #expect(payments(step.result) == ["A p2 a1 succeeded 19.44 active", "D p2 a1 ended - canceled"])

    // March 15: A's bank declines (insufficient funds): past due, retried a day later.
    let customerA = try #require(server.customerRecords().first { $0.metadata["order_id"] == checkoutOrders[0] }?.id)
    server.declineNextOffSessionCharges(customer: customerA, code: "card_declined", declineCode: "insufficient_funds", count: 1)
    step = try run("2027-03-15T12:00:00Z")
    #expect(step.status == 1)
    #expect(payments(step.result) == ["A p3 a1 failed card_declined past_due"])
    #expect(step.result["payments"]?[0]?["declineCode"] == .string("insufficient_funds"))
    #expect(step.result["payments"]?[0]?["nextPaymentAt"] == .string("2027-03-16T12:00:00Z"))
    // Before the retry is due, nothing.
    step = try run("2027-03-16T11:59:59Z")
    #expect(step.status == 0)
    #expect(payments(step.result) == [])
    step = try run("2027-03-16T12:00:00Z")
    #expect(step.status == 0)
    #expect(payments(step.result) == ["A p3 a2 succeeded 19.44 active"])
    #expect(step.result["payments"]?[0]?["nextPaymentAt"] == .string("2027-04-15T10:00:00Z"))

    // April to November: A each month; in June, C reloads again.
    for month in 4...11 {
      if month == 6 {
        let second = try shop.call(
          at: at("2027-06-10T09:00:00Z"), "reloadBalance", #"{"agreementId":"\#(c)","balance":"4.99","reloadId":"reload-2"}"#)
        #expect(second["status"] == .string("succeeded"), "\(second.compact)")
        #expect(second["amount"] == .string("27.00"))
      }
      step = try run(String(format: "2027-%02d-15T12:00:00Z", month))
      #expect(step.status == 0, "\(step.result.compact)")
      #expect(payments(step.result) == ["A p\(month) a1 succeeded 19.44 active"])
    }
    // December 1: nothing is due.
    step = try run("2027-12-01T12:00:00Z")
    #expect(step.status == 0)
    #expect(payments(step.result) == [])

    // At the test server: each agreement's PaymentIntents, in order.
    let renewals = (0...11).flatMap { period -> [String] in
      let when = period == 0 ? "2026-12-15T12:00:00Z" : String(format: "2027-%02d-15T12:00:00Z", period)
      if period == 3 {
        return [
          "1944 off_session requires_payment_method - period-3-attempt-1 @2027-03-15T12:00:00Z",
          "1944 off_session succeeded - period-3-attempt-2 @2027-03-16T12:00:00Z",
        ]
      }
      return ["1944 off_session succeeded - period-\(period)-attempt-1 @\(when)"]
    }
    func intents(_ agreement: String, _ order: String) -> [String] {
      server.paymentIntents(agreementId: agreement).map { BillingShop.describe($0, checkoutOrderId: order) }
    }
    #expect(
      intents(a, checkoutOrders[0])
        == ["540 on_session succeeded off_session checkout @2026-12-01T10:00:00Z"] + renewals)
    #expect(intents(b, checkoutOrders[1]) == ["53892 off_session succeeded - period-0-attempt-1 @2027-02-01T18:00:00Z"])
    let store = try backend.open(shop.database)
    let reloadOrders = ["reload-1", "reload-2"].map { store.identifiers.agreementOrderId(agreementId: c, payment: "reload-\($0)") }
    #expect(
      intents(c, checkoutOrders[2]) == [
        "2700 on_session succeeded off_session checkout @2026-12-01T10:00:00Z",
        "2700 off_session succeeded - reload-\(reloadOrders[0]) @2027-01-10T09:00:00Z",
        "2700 off_session succeeded - reload-\(reloadOrders[1]) @2027-06-10T09:00:00Z",
      ])
    #expect(
      intents(d, checkoutOrders[3]) == [
        "540 on_session succeeded off_session checkout @2026-12-01T10:00:00Z",
        "1944 off_session succeeded - period-0-attempt-1 @2026-12-15T12:00:00Z",
        "1944 off_session succeeded - period-1-attempt-1 @2027-01-15T12:00:00Z",
      ])
    // Every PaymentIntent is one of an agreement's, and each key made one.
    #expect(server.paymentIntentCount == 14 + 1 + 3 + 3)
    for intent in server.paymentIntentRecords() {
      #expect(server.paymentIntentsCreated(idempotencyKey: intent.idempotencyKey ?? "") == 1)
    }
    // Renewals charge the card the checkout kept, for the Customer the checkout made.
    let customers = Dictionary(uniqueKeysWithValues: server.customerRecords().map { ($0.metadata["order_id"] ?? "", $0) })
    for (index, agreement) in ids.enumerated() {
      let customer = try #require(customers[checkoutOrders[index]])
      #expect(customer.metadata == ["order_id": checkoutOrders[index], "agreement_id": agreement])
      for intent in server.paymentIntents(agreementId: agreement) {
        #expect(intent.customer == customer.id)
        #expect(intent.metadata["agreement_id"] == agreement)
      }
    }
    // The pre-order's one SetupIntent kept its card, and charged nothing.
    let setups = server.setupIntentRecords()
    #expect(setups.count == 1)
    #expect(setups.first?.status == "succeeded")
    #expect(setups.first?.usage == "off_session")
    #expect(setups.first?.customer == customers[checkoutOrders[1]]?.id)
    #expect(setups.first?.metadata == ["order_id": checkoutOrders[1], "agreement_id": b])
    #expect(setups.first?.idempotencyKey == Identifiers.chargeIdempotencyKey(orderId: checkoutOrders[1]))
    #expect(setups.first?.paymentMethod == server.paymentIntents(agreementId: b).first?.paymentMethod)

    // getAgreement: where each stands, and what happened.
    let final = try shop.session(
      at: at("2027-12-01T13:00:00Z"), ids.map { ("getAgreement", #"{"agreementId":"\#($0)"}"#) }
        + [("listOrders", #"{"limit":100}"#), ("listProducts", "{}")])
    let agreements = final[0..<4].map { $0["result"]?["agreement"] ?? .null }
    #expect(agreements.map { $0["status"]?.stringValue } == ["active", "completed", "active", "canceled"])
    // D's period 2 was never charged: it ended instead.
    #expect(agreements.map { $0["period"]?.compact } == ["12", "1", "2", "2"])
    #expect(agreements.map { $0["failedAttempts"]?.compact } == ["0", "0", "0", "0"])
    #expect(agreements.map { $0["nextPaymentAt"]?.compact } == [#""2027-12-15T10:00:00Z""#, "null", "null", "null"])
    #expect(agreements.map { $0["cancelAtPeriodEnd"] } == [.bool(false), .bool(false), .bool(false), .bool(false)])
    #expect(agreements.map { $0["gateway"]?.stringValue } == ["stripe", "stripe", "stripe", "stripe"])
    #expect(agreements.map { $0["customerId"]?.stringValue } == checkoutOrders.map { customers[$0]?.id })
    let paidA = (0...11).flatMap { period -> [String] in
      let when = period == 0 ? "2026-12-15T12:00:00Z" : String(format: "2027-%02d-15T12:00:00Z", period)
      if period == 3 {
        return [
          "declined p3 a1 card_declined insufficient_funds @2027-03-15T12:00:00Z",
          "status_changed past_due @2027-03-15T12:00:00Z",
          "paid p3 a2 19.44 @2027-03-16T12:00:00Z",
          "status_changed active @2027-03-16T12:00:00Z",
        ]
      }
      return ["paid p\(period) a1 19.44 @\(when)"]
    }
    #expect(BillingShop.events(agreements[0]) == ["created @2026-12-01T10:00:00Z"] + paidA)
    #expect(
      BillingShop.events(agreements[1]) == [
        "created @2026-12-01T10:00:00Z", "paid p0 a1 538.92 @2027-02-01T18:00:00Z",
        "status_changed completed @2027-02-01T18:00:00Z",
      ])
    #expect(
      BillingShop.events(agreements[2]) == [
        "created @2026-12-01T10:00:00Z", "paid p0 a1 27.00 @2027-01-10T09:00:00Z", "paid p1 a1 27.00 @2027-06-10T09:00:00Z",
      ])
    #expect(
      BillingShop.events(agreements[3]) == [
        "created @2026-12-01T10:00:00Z", "paid p0 a1 19.44 @2026-12-15T12:00:00Z", "paid p1 a1 19.44 @2027-01-15T12:00:00Z",
        "cancel_scheduled p2 @2027-01-20T09:00:00Z", "status_changed canceled @2027-02-15T12:00:00Z",
      ])

    // listOrders: the 4 checkouts and 17 later payments, each naming its agreement.
    let listed = try #require(final[4]["result"]?["orders"]?.arrayValue, "\(final[4].compact)")
    #expect(listed.count == 21)
    #expect(final[4]["result"]?["nextCursor"] == .null)
    var byAgreement: [String: [String]] = [:]
    for order in listed {
      guard let agreement = order["agreementId"]?.stringValue else { continue }
      byAgreement[names[agreement] ?? "?", default: []].append(
        "\(order["amount"]?.stringValue ?? "") \(order["status"]?.stringValue ?? "") \(order["createdAt"]?.stringValue ?? "")")
    }
    #expect(byAgreement["A"]?.count == 12)
    #expect(byAgreement["A"]?.allSatisfy { $0.hasPrefix("19.44 paid ") } == true)
    #expect(byAgreement["B"] == ["538.92 paid 2027-02-01T18:00:00Z"])
    #expect(byAgreement["C"] == ["27.00 paid 2027-06-10T09:00:00Z", "27.00 paid 2027-01-10T09:00:00Z"])
    #expect(byAgreement["D"] == ["19.44 paid 2027-01-15T12:00:00Z", "19.44 paid 2026-12-15T12:00:00Z"])
    #expect(Set(listed.filter { $0["agreementId"] == nil }.compactMap { $0["orderId"]?.stringValue }) == Set(checkoutOrders))
    // Each renewal's order is the one its paid event names, and names its PaymentIntent.
    for (index, agreement) in ids.enumerated() {
      let paidOrders = (agreements[index]["events"]?.arrayValue ?? []).filter { $0["type"] == .string("paid") }
        .compactMap { $0["orderId"]?.stringValue }
      let charged = server.paymentIntents(agreementId: agreement).filter { $0.offSession && $0.status == "succeeded" }
      #expect(paidOrders.count == charged.count)
      for (orderId, intent) in zip(paidOrders, charged) {
        let order = try JSONParser.parse(try #require(try store.order(id: orderId)).document)
        #expect(order["gatewayPaymentId"] == .string(intent.id))
        #expect(order["agreement"]?["agreementId"] == .string(agreement))
        #expect(order["agreement"]?["payment"] == .string(index == 2 ? "reload" : "scheduled"))
        #expect(intent.metadata["order_id"] == orderId)
      }
    }
    // Stock: the subscriptions' and reloads' units went with each payment (a declined attempt's
    // unit came back); the pre-order's went at checkout.
    let stock = try store.stock()
    #expect(stock["beans-club"] == 1000 - 2 - 14)
    #expect(stock["cafe-card"] == 1000 - 1 - 2)
    #expect(stock["espresso-machine"] == 1000 - 1)
    #expect(try store.pendingOperationCount() == 0)
  }

  @Test(
    "a renewal whose answer is lost is a pending order (getOrder, listOrders with its agreementId) until the next run settles it, charged once",
    arguments: StoreBackend.available)
  func pendingRenewal(backend: StoreBackend) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    server.setSingleUseTokens(false)
    let shop = try BillingShop(backend: backend, stripe: server, maxRetries: 0)
    server.setClock(RFC3339.parse(Self.checkoutAt)!)
    let placed = try shop.checkout(at: Self.checkoutAt, [.init("beans-club")])
    let agreementId = try BillingShop.agreementId(placed[0])

    // The trial's end: Stripe makes the PaymentIntent, and its answer is lost.
    let trialEnd = "2026-12-15T12:00:00Z"
    server.setClock(RFC3339.parse(trialEnd)!)
    server.inject(.resetAfterExecuting, on: .createPaymentIntent)
    let lost = try shop.billingRun(at: trialEnd)
    #expect(lost.status == 1)
    let payment = try #require(lost.result["payments"]?[0], "\(lost.result.compact)")
    #expect(payment["status"] == .string("pending") && payment["failureCode"] == .string("gateway_unavailable"), "\(payment.compact)")
    let orderId = try #require(server.paymentIntents(agreementId: agreementId).last?.metadata["order_id"])
    // A back-office process sends pending work again when it starts: its answer is lost too.
    server.inject(.resetAfterExecuting, on: .createPaymentIntent)
    let answers = try shop.session(
      at: trialEnd, [("listOrders", #"{"status":"pending"}"#), ("getOrder", #"{"orderId":"\#(orderId)"}"#)])
    let listed = answers[0]["result"]?["orders"]?.arrayValue ?? []
    #expect(
      listed.map { [$0["orderId"]?.stringValue, $0["status"]?.stringValue, $0["agreementId"]?.stringValue] }
        == [[orderId, "pending", agreementId]])
    let pending = answers[1]["result"]?["order"]
    #expect(pending?["status"] == .string("pending"))
    #expect(pending?["agreement"]?.compact == #"{"agreementId":"\#(agreementId)","payment":"scheduled","period":0}"#)

    // The next run sends the same call under the same key: recorded once, paid once.
    let settled = try shop.billingRun(at: "2026-12-15T13:00:00Z")
    #expect(settled.status == 0, "\(settled.result.compact)")
    #expect(settled.result["payments"]?[0]?["status"] == .string("succeeded"))
    #expect(server.paymentIntents(agreementId: agreementId).filter { $0.metadata["order_id"] == orderId }.count == 1)
    let paid = try shop.call(at: "2026-12-15T13:00:00Z", "getOrder", #"{"orderId":"\#(orderId)"}"#)["order"]
    #expect(paid?["status"] == .string("paid"))
  }
}
