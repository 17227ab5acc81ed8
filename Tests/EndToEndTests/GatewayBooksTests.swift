import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// One shop's day through each gateway, through the binary: an order authorized and captured, part of
/// it refunded, a second order whose refund the bank sends back, and a chargeback on the first. The
/// books (getOrder's money and history, payoutReport's columns) come out the same whichever gateway
/// moved the money, once each gateway's reports (Stripe's events, Adyen's notifications) are taken in.
/// The sandbox has no reports: a refund of its refund-failing card is declined at once, and nothing
/// disputes its payments; its books agree with the others' on what it can do.
@Suite("The books agree across gateways", .serialized)
struct GatewayBooksTests {
  static let now = "2026-11-21T12:00:00Z"
  static let cart = #"[{"sku":"mug","quantity":2}]"#

  /// What a gateway does for the day's script.
  final class Shop {
    let name: String
    let session: StripeBooksGoldenTests.Session
    /// Takes in whatever the gateway has reported since the last time (nothing for the sandbox).
    let settle: (StripeBooksGoldenTests.Session) throws -> Void
    /// Places the cart paid with a card that pays, or (`refundFails`) one whose refunds come back;
    /// returns the orderId and the gateway's payment reference.
    let order: (StripeBooksGoldenTests.Session, _ refundFails: Bool) throws -> (orderId: String, payment: String)
    /// After a refund of the refund-failing card, before its report is taken in: the bank sends it
    /// back (Adyen's REFUND_FAILED; Stripe's test card does it itself).
    let refundComesBack: () -> Void
    /// Disputes the payment for `amountMinor` and withdraws the funds; false where nothing can.
    let chargeback: (_ payment: String, _ amountMinor: Int64) -> Bool
    let shutdown: () -> Void

    init(
      name: String, session: StripeBooksGoldenTests.Session,
      settle: @escaping (StripeBooksGoldenTests.Session) throws -> Void = { _ in },
      order: @escaping (StripeBooksGoldenTests.Session, Bool) throws -> (orderId: String, payment: String),
      refundComesBack: @escaping () -> Void = {}, chargeback: @escaping (String, Int64) -> Bool = { _, _ in false },
      shutdown: @escaping () -> Void = {}
    ) {
      (self.name, self.session, self.settle, self.order) = (name, session, settle, order)
      (self.refundComesBack, self.chargeback, self.shutdown) = (refundComesBack, chargeback, shutdown)
    }

    func ask(_ method: String, _ params: String) throws -> JSONValue { try session.ask(method, params) }
  }

  static func arguments(_ config: String, _ database: String) -> [String] {
    ["--config", config, "--database", database, "--now", now, "--quiet", "--back-office"]
  }

  /// Places the cart through a gateway that takes test names (the sandbox, Stripe).
  static func orderByName(_ session: StripeBooksGoldenTests.Session, _ refundFails: Bool) throws -> (String, String) {
    let placed = try session.order(refundFails ? "tok_refundFail" : "tok_visa").result
    let orderId = try #require(placed["orderId"]?.stringValue, "\(placed.compact)")
    return (orderId, placed["order"]?["gatewayPaymentId"]?.stringValue ?? "")
  }

  static func sandbox(_ backend: StoreBackend) throws -> Shop {
    let directory = TestPaths.temporaryDirectory()
    let config = directory.appendingPathComponent("config.yaml").path
    let sandbox = "gateway:\n  kind: sandbox\n  chargeTokenTTLSeconds: 3600\n"
    try TestConfig.yaml().replacingOccurrences(of: sandbox, with: sandbox + "  capture: manual\n")
      .write(toFile: config, atomically: true, encoding: .utf8)
    let session = try StripeBooksGoldenTests.Session(
      arguments(config, try backend.freshDatabase()), environment: ProcessInfo.processInfo.environment)
    return Shop(name: "sandbox", session: session, order: orderByName)
  }

  static func stripe(_ backend: StoreBackend) throws -> Shop {
    let server = try StripeTestServer()
    server.setClock(TestConfig.now)
    server.setSingleUseTokens(false)
    let fixture = try StripeFixture(server: server, capture: .manual, requestTimeoutSeconds: 5)
    let session = try StripeBooksGoldenTests.Session(
      arguments(fixture.configPath, try backend.freshDatabase()), environment: fixture.environment)
    var delivered = 0
    return Shop(
      name: "stripe", session: session,
      settle: { session in
        let events = server.events()
        let answers = try session.deliver(server, Array(events.dropFirst(delivered)))
        delivered = events.count
        #expect(answers.allSatisfy { $0["status"] == .string("succeeded") }, "\(answers.map(\.compact))")
      },
      order: orderByName,
      chargeback: { payment, amount in server.openDispute(paymentIntent: payment, amount: amount) != nil },
      shutdown: { server.shutdown() })
  }

  static func adyen(_ backend: StoreBackend) throws -> Shop {
    let fixture = try AdyenFixture(capture: .manual, requestTimeoutSeconds: 5)
    let server = fixture.server
    let session = try StripeBooksGoldenTests.Session(
      arguments(fixture.configPath, try backend.freshDatabase()), environment: fixture.environment)
    var transactions = 0
    return Shop(
      name: "adyen", session: session,
      settle: { session in
        let payload = server.releaseNotifications()
        let params = JSONWriter.string(JSONValue.object(JSONObject([("payload", .string(payload))])))
        let answer = try session.ask("processAdyenNotification", params)
        #expect(answer["status"] == .string("succeeded") && answer["refused"] == .array([]), "\(answer.compact)")
      },
      order: { session, _ in
        transactions += 1
        let probe = try session.ask(
          "authorizePayment",
          AdyenFixture.authorizeParams(try fixture.applePayToken(amountMinor: 1), transaction: "probe-\(transactions)"))
        let total = try #require(probe["amount"]?.stringValue, "\(probe.compact)")
        let token = try fixture.applePayToken(amountMinor: try #require(Int(total.replacingOccurrences(of: ".", with: ""))))
        let authorized = try session.ask(
          "authorizePayment", AdyenFixture.authorizeParams(token, transaction: "T-\(transactions)"))
        let chargeToken = try #require(authorized["chargeToken"]?.stringValue, "\(authorized.compact)")
        let placed = try session.ask(
          "processOrder",
          #"{"chargeToken":"\#(chargeToken)","items":\#(cart),"shippingMethod":"free","shippingContact":\#(AdyenFixture.contact),"amount":"\#(total)","currencyCode":"USD"}"#
        )
        let orderId = try #require(placed["orderId"]?.stringValue, "\(placed.compact)")
        return (orderId, try #require(placed["order"]?["gatewayPaymentId"]?.stringValue))
      },
      refundComesBack: {
        let psp = server.pendingNotifications.last { $0.eventCode == "REFUND" }?.pspReference ?? "none"
        #expect(server.failModification(pspReference: psp), "refund \(psp)")
      },
      chargeback: { payment, amount in server.openDispute(paymentPspReference: payment, value: amount, event: .chargeback) != nil },
      shutdown: { server.shutdown() })
  }

  /// An order's books as getOrder shows them, without what names the gateway's objects: its
  /// status, money, and history (each event's type and amount), its refunds and disputes.
  static func books(_ order: JSONValue?) -> String {
    guard let order else { return "none" }
    var lines = ["status \(order["status"]?.stringValue ?? "?")"]
    for name in ["amount", "amountCaptured", "amountRefunded", "amountDisputed"] {
      if let value = order[name]?.stringValue { lines.append("\(name) \(value)") }
    }
    for event in order["events"]?.arrayValue ?? [] {
      lines.append("event \(event["type"]?.stringValue ?? "?") \(event["amount"]?.stringValue ?? "-")")
    }
    for refund in order["refunds"]?.arrayValue ?? [] {
      lines.append("refund \(refund["refundId"]?.stringValue ?? "?") \(refund["amount"]?.stringValue ?? "?") \(refund["status"]?.stringValue ?? "succeeded")")
    }
    for dispute in order["disputes"]?.arrayValue ?? [] {
      lines.append("dispute \(dispute["amount"]?.stringValue ?? "?") \(dispute["status"]?.stringValue ?? "?")")
    }
    return lines.joined(separator: "\n")
  }

  /// The day's script on one shop; the books after the refunds (before any dispute) and at the end.
  static func day(_ shop: Shop) throws -> (beforeDispute: [String], end: [String]) {
    let (a, paymentA) = try shop.order(shop.session, false)
    _ = try shop.ask("captureOrder", #"{"orderId":"\#(a)","captureId":"cap-a"}"#)
    try shop.settle(shop.session)
    let refundA = try shop.ask(
      "refundOrder", #"{"orderId":"\#(a)","refundId":"rf-a","lines":[{"sku":"mug","quantity":1,"restock":"return"}]}"#)
    try shop.settle(shop.session)
    let (b, _) = try shop.order(shop.session, true)
    _ = try shop.ask("captureOrder", #"{"orderId":"\#(b)","captureId":"cap-b"}"#)
    try shop.settle(shop.session)
    _ = try shop.ask("refundOrder", #"{"orderId":"\#(b)","refundId":"rf-b","amount":"3.00"}"#)
    shop.refundComesBack()
    try shop.settle(shop.session)
    func snapshot() throws -> [String] {
      let report = try shop.ask("payoutReport", #"{"from":"2026-11-21","to":"2026-11-21"}"#)
      return try [a, b].map { books(try shop.ask("getOrder", #"{"orderId":"\#($0)"}"#)["order"]) }
        + [report["totals"]?.compact ?? "none"]
    }
    let before = try snapshot()
    // The chargeback: what is left of A after its refund.
    let order = try shop.ask("getOrder", #"{"orderId":"\#(a)"}"#)["order"]
    let left = try #require(order?["amountCaptured"]?.stringValue).minor - (order?["amountRefunded"]?.stringValue ?? "0").minor
    #expect(refundA["status"] == .string("succeeded"), "\(shop.name): \(refundA.compact)")
    if shop.chargeback(paymentA, left) { try shop.settle(shop.session) }
    return (before, try snapshot())
  }

  @Test(
    "capture, a partial refund, a refund the bank sends back, a chargeback: the same books through the sandbox, Stripe and Adyen",
    arguments: StoreBackend.available)
  func sameBooks(backend: StoreBackend) throws {
    var days: [String: (beforeDispute: [String], end: [String])] = [:]
    for make in [Self.sandbox, Self.stripe, Self.adyen] {
      let shop = try make(backend)
      defer {
        shop.session.running.finish()
        shop.shutdown()
      }
      days[shop.name] = try Self.day(shop)
    }
    let (sandbox, stripe, adyen) = (try #require(days["sandbox"]), try #require(days["stripe"]), try #require(days["adyen"]))
    // Stripe and Adyen: the same books, step by step.
    #expect(stripe.beforeDispute == adyen.beforeDispute)
    #expect(stripe.end == adyen.end)
    #expect(
      stripe.beforeDispute == [
        """
        status partially_refunded
        amount 17.66
        amountCaptured 17.66
        amountRefunded 8.83
        event placed 17.66
        event authorized 17.66
        event captured 17.66
        event refunded 8.83
        refund rf-a 8.83 succeeded
        """,
        """
        status paid
        amount 17.66
        amountCaptured 17.66
        amountRefunded 0.00
        event placed 17.66
        event authorized 17.66
        event captured 17.66
        event refunded 3.00
        event refund_failed 3.00
        refund rf-b 3.00 failed
        """,
        #"[{"currencyCode":"USD","charged":"35.32","refunded":"8.83","disputed":"0.00","net":"26.49"}]"#,
      ])
    #expect(
      stripe.end == [
        """
        status disputed
        amount 17.66
        amountCaptured 17.66
        amountRefunded 8.83
        amountDisputed 8.83
        event placed 17.66
        event authorized 17.66
        event captured 17.66
        event refunded 8.83
        event dispute_opened 8.83
        event dispute_funds_withdrawn 8.83
        refund rf-a 8.83 succeeded
        dispute 8.83 needs_response
        """,
        stripe.beforeDispute[1],
        #"[{"currencyCode":"USD","charged":"35.32","refunded":"8.83","disputed":"8.83","net":"17.66"}]"#,
      ])
    // The sandbox: order A's books and the day's money as the others', before any dispute; B's refund
    // declined at once where the others' came back, so B's money is the same and its history shorter.
    #expect(sandbox.beforeDispute[0] == stripe.beforeDispute[0])
    #expect(sandbox.beforeDispute[2] == stripe.beforeDispute[2])
    #expect(sandbox.beforeDispute[1].split(separator: "\n").prefix(4) == stripe.beforeDispute[1].split(separator: "\n").prefix(4))
    #expect(sandbox.end == sandbox.beforeDispute)
  }
}

extension String {
  /// "8.83" as minor units.
  fileprivate var minor: Int64 { Int64(replacingOccurrences(of: ".", with: "")) ?? 0 }
}
