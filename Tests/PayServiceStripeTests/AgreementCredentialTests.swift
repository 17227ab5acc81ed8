import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// An agreement whose card the gateway did not name: its payments are never charged anywhere (not
/// at Stripe, never as a sandbox charge), and the customer is asked for a card.
@Suite("Agreements without a kept card")
struct AgreementCredentialTests {
  @Test("a Stripe agreement with no Customer or PaymentMethod is action_required at its first payment; nothing is sent to Stripe, no order is made", arguments: StoreBackend.available)
  func noKeptCard(backend: StoreBackend) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    server.setSingleUseTokens(false)
    let fixture = try StripeFixture(server: server, maxRetries: 0, requestTimeoutSeconds: 5)
    let context = try fixture.context(backend: backend)
    let handler = fixture.handler(context, backOffice: true)
    let cart = #"[{"sku":"mug"}]"#
    let authorized = try JSONParser.parse(handler.respond(StripeFixture.authorizeLine(cart: cart)) ?? "")["result"]
    let token = try #require(authorized?["chargeToken"]?.stringValue, "\(authorized?.compact ?? "")")
    let placed = try JSONParser.parse(
      handler.respond(StripeFixture.processLine(token: token, amount: try #require(authorized?["amount"]?.stringValue), cart: cart)) ?? "")
    let orderId = try #require(placed["result"]?["orderId"]?.stringValue, "\(placed.compact)")
    let paymentIntents = server.paymentIntentCount
    let ordersBefore = try context.store.orders(OrderQuery(limit: 100)).count

    // An agreement as a checkout would make one had Stripe answered without its card's ids.
    var terms = AgreementTerms()
    terms.interval = .month
    terms.intervalCount = 1
    terms.firstPaymentAt = Int(TestConfig.now - 86_400)
    terms.firstPeriod = 0
    terms.shippingMethod = "free"
    try context.store.write { transaction in
      try transaction.insert(
        AgreementRow(
          agreementId: "agr_nocard", orderId: orderId, kind: .recurring, sku: "mug", quantity: 1, currencyCode: "USD",
          createdAt: RFC3339.format(TestConfig.now - 86_400), status: .active, nextPaymentAt: TestConfig.now - 86_400,
          period: 0, attempt: 0, cancelAtPeriodEnd: false, terms: JSONWriter.string(terms),
          credential: #"{"gateway":"stripe"}"#, sandboxOutcome: nil, customerAction: nil,
          updatedAt: RFC3339.format(TestConfig.now - 86_400)))
    }
    let stock = try context.store.stock()["mug"]
    let run = try #require(handler.call("runBilling")["result"])
    #expect(run["failed"] == .number("1") && run["succeeded"] == .number("0"), "\(run.compact)")
    #expect(run["payments"]?[0]?["failureCode"] == .string("gateway_error"))
    #expect(run["payments"]?[0]?["agreementStatus"] == .string("action_required"))
    let stored = try #require(try context.store.agreement(id: "agr_nocard"))
    #expect(stored.row.customerAction?.contains(#""code":"update_payment_method""#) == true)
    #expect(stored.row.nextPaymentAt == nil)
    #expect(server.paymentIntentCount == paymentIntents)
    #expect(try context.store.orders(OrderQuery(limit: 100)).count == ordersBefore)
    #expect(try context.store.stock()["mug"] == stock)
    // Later runs leave it alone.
    #expect(handler.call("runBilling")["result"]?["payments"] == .array([]))
  }
}
