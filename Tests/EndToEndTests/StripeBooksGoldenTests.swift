import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The books after the sale, through the built binary against the Stripe test server: what Stripe
/// reports (a refund made in the Dashboard, a payservice refund that fails later, a dispute opened
/// and lost, a payment a lost answer left pending) arriving as signed webhooks, the same events
/// again, a reconciliation that finds nothing new, and the report, whose money equals the test
/// server's balance transactions.
///
/// A stepped golden case (Golden/stripe-books): the harness acts on the test server between
/// requests and turns its events into processStripeEvent requests, so the requests are written by
/// the run (requests.jsonl) and both files are compared byte for byte. Re-record with
/// `PAYSERVICE_RECORD_GOLDEN=1`, like every golden case.
@Suite("Golden: Stripe's reports and the books", .serialized)
struct StripeBooksGoldenTests {
  static let folder = GoldenTranscriptTests.goldenRoot.appendingPathComponent("stripe-books")
  static let now = "2026-11-21T12:00:00Z"
  /// The test server's clock: an hour before payservice's.
  static let stripeNow: Int64 = TestConfig.now - 3600
  static let cart = #"[{"sku":"mug","quantity":2}]"#

  /// A payservice process fed one request at a time, with every request and answer kept.
  final class Session {
    let running: RunningPayservice
    var requests: [String] = []
    var responses: [String] = []
    var delivered: [String] = []

    init(_ arguments: [String], environment: [String: String]) throws {
      running = try RunningPayservice(arguments, environment: environment)
    }

    /// Sends `line` (its id is the next number) and returns the answer's result.
    @discardableResult
    func ask(_ method: String, _ params: String) throws -> JSONValue {
      let line = #"{"jsonrpc":"2.0","id":\#(requests.count + 1),"method":"\#(method)","params":\#(params)}"#
      requests.append(line)
      let answer = try running.ask(line, timeout: 30)
      responses.append(answer)
      return try #require(try JSONParser.parse(answer)["result"], "\(answer)")
    }

    /// Authorizes the cart with `paymentData` and places the order; its processOrder result and
    /// charge token.
    func order(_ paymentData: String) throws -> (result: JSONValue, token: String) {
      let authorize = try JSONParser.parse(StripeFixture.authorizeLine(paymentData: paymentData, cart: cart))
      let authorized = try ask("authorizePayment", try #require(authorize["params"]).compact)
      let token = try #require(authorized["chargeToken"]?.stringValue, "\(authorized.compact)")
      let amount = try #require(authorized["amount"]?.stringValue)
      let process = try JSONParser.parse(StripeFixture.processLine(token: token, amount: amount, cart: cart))
      return (try ask("processOrder", try #require(process["params"]).compact), token)
    }

    /// Delivers the test server's events, each signed at payservice's clock, as the merchant's
    /// endpoint passes them on.
    func deliver(_ server: StripeTestServer, _ events: [StripeTestServer.Event]) throws -> [JSONValue] {
      try events.map { event in
        let delivery = try #require(
          server.delivery(of: event.id, secret: StripeFixture.webhookSecret, at: TestConfig.now))
        let params = JSONWriter.string(
          JSONValue.object(
            JSONObject([("payload", .string(delivery.payload)), ("signature", .string(delivery.signature))])))
        return try ask("processStripeEvent", params)
      }
    }
  }

  @Test("the golden session: events, the same events again, a reconciliation that finds nothing, and books that match Stripe's balance", arguments: StoreBackend.available)
  func books(backend: StoreBackend) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    server.setClock(Self.stripeNow)
    server.setSingleUseTokens(false)
    let fixture = try StripeFixture(server: server, maxRetries: 0, requestTimeoutSeconds: 5)
    let database = try backend.freshDatabase()
    let session = try Session(
      ["--config", fixture.configPath, "--database", database, "--now", Self.now, "--quiet",
       "--back-office"],
      environment: fixture.environment)
    defer { session.running.finish() }

    // A: paid, then refunded in part in the Dashboard, then disputed and lost.
    let a = try session.order("tok_visa").result
    let orderA = try #require(a["orderId"]?.stringValue, "\(a.compact)")
    // B: paid with a card whose refunds come back from the bank.
    let b = try session.order("tok_refundFail").result
    let orderB = try #require(b["orderId"]?.stringValue, "\(b.compact)")
    // C: Stripe charged it, but its answer was lost: pending.
    server.inject(.resetAfterExecuting, on: .createPaymentIntent)
    let (c, tokenC) = try session.order("tok_visa")
    #expect(c["failureCode"] == .string("gateway_unavailable"), "\(c.compact)")
    let orderC = try backend.open(database).identifiers.orderId(token: tokenC)

    #expect(server.refundFromDashboard(paymentIntent: "pi_test000001", amount: 500) == "re_test000001")
    let refundB = try session.ask("refundOrder", #"{"orderId":"\#(orderB)","refundId":"rf-b","amount":"3.00"}"#)
    #expect(refundB["status"] == .string("succeeded"), "\(refundB.compact)")
    let dispute = try #require(server.openDispute(paymentIntent: "pi_test000001"))
    #expect(server.updateDispute(dispute, status: "under_review"))
    #expect(server.closeDispute(dispute, won: false))

    let events = server.events()
    let first = try session.deliver(server, events)
    #expect(first.allSatisfy { $0["status"] == .string("succeeded") })
    let effects = zip(events, first).filter { $0.1["effect"] != .string("none") }.map { "\($0.0.type) \($0.1["effect"]?.stringValue ?? "")" }
    #expect(
      effects == [
        "payment_intent.succeeded order_resumed", "refund.created refund_recorded", "refund.failed refund_failed",
        "charge.dispute.created dispute_opened", "charge.dispute.updated dispute_updated",
        "charge.dispute.closed dispute_lost",
      ])
    let orders = try [orderA, orderB, orderC].map { try session.ask("getOrder", #"{"orderId":"\#($0)"}"#) }
    #expect(orders.map { $0["order"]?["status"]?.stringValue } == ["disputed", "paid", "paid"])
    // Stripe delivers at least once: every event again, answered the same, changing nothing.
    let again = try session.deliver(server, events)
    #expect(again == first)
    #expect(try [orderA, orderB, orderC].map { try session.ask("getOrder", #"{"orderId":"\#($0)"}"#) } == orders)
    let reconciled = try session.ask("reconcileStripe", #"{"since":"2026-11-21T00:00:00Z"}"#)
    #expect(reconciled["orders"] == .array([]), "\(reconciled.compact)")
    #expect(reconciled["listed"]?.compact == #"{"paymentIntents":3,"refunds":2,"disputes":1}"#)
    let report = try session.ask("payoutReport", #"{"from":"2026-11-21","to":"2026-11-21"}"#)

    // The books equal Stripe's balance: each column, and the net.
    let balance = server.balanceTransactions()
    func sum(_ filter: (StripeTestServer.BalanceTransaction) -> Bool) -> String {
      MoneyText.format(balance.filter(filter).reduce(Int64(0)) { $0 + $1.amount }, digits: 2)
    }
    let totals = try #require(report["totals"]?[0])
    #expect(totals["charged"]?.stringValue == sum { $0.type == "charge" })
    #expect(totals["refunded"]?.stringValue == sum { $0.type == "refund" || $0.type == "refund_failure" }.negated)
    #expect(totals["disputed"]?.stringValue == sum { $0.reportingCategory.hasPrefix("dispute") }.negated)
    #expect(totals["net"]?.stringValue == sum { _ in true })

    try GoldenTranscriptTests.checkStepped("stripe-books", requests: session.requests, responses: session.responses, backend: backend)
  }
}

extension StripeBooksGoldenTests {
  /// An order as getOrder shows it, its history as a multiset: events taken in by a reconciliation
  /// come in another order than webhooks, with the same contents.
  static func state(_ order: JSONValue) throws -> String {
    let events = order["events"]?.arrayValue?.map(\.compact).sorted() ?? []
    let rest = order.compact.replacingOccurrences(of: order["events"]?.compact ?? "", with: "[]")
    return ([rest] + events).joined(separator: "\n")
  }

  @Test(
    "a store restored from a backup taken before 20 events, reconciled, holds what the store that heard every event holds; reconciling again changes nothing")
  func restoredAndReconciled() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    server.setClock(Self.stripeNow)
    server.setSingleUseTokens(false)
    let fixture = try StripeFixture(server: server, maxRetries: 0, requestTimeoutSeconds: 5)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("payservice-reconcile-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let (live, backup) = (directory.appendingPathComponent("live.sqlite").path, directory.appendingPathComponent("backup.sqlite").path)
    func session(_ database: String) throws -> Session {
      try Session(
        ["--config", fixture.configPath, "--database", database, "--now", Self.now, "--quiet", "--back-office"],
        environment: fixture.environment)
    }

    // Five orders; the last one's answer is lost (pending).
    var orders: [String] = []
    let placing = try session(live)
    for _ in 0..<4 { orders.append(try #require(try placing.order("tok_visa").result["orderId"]?.stringValue)) }
    server.inject(.resetAfterExecuting, on: .createPaymentIntent)
    let (pending, token) = try placing.order("tok_visa")
    #expect(pending["failureCode"] == .string("gateway_unavailable"), "\(pending.compact)")
    placing.running.finish()
    orders.append(try SQLiteStore(path: live).identifiers.orderId(token: token))
    let backedUp = try PayserviceProcess.run(["backup", "--database", live, "--to", backup])
    #expect(backedUp.status == 0, "\(backedUp.stderr)")
    let before = server.events().count

    // What happens at Stripe after the backup.
    let first = try #require(server.refundFromDashboard(paymentIntent: "pi_test000001", amount: 300))
    #expect(server.refundFromDashboard(paymentIntent: "pi_test000001", amount: 200) != nil)
    #expect(server.failRefund(first))
    let lost = try #require(server.openDispute(paymentIntent: "pi_test000002"))
    #expect(server.updateDispute(lost, status: "under_review"))
    #expect(server.closeDispute(lost, won: false))
    let won = try #require(server.openDispute(paymentIntent: "pi_test000003", reason: "product_not_received"))
    #expect(server.closeDispute(won, won: true))
    let inquiry = try #require(server.openDispute(paymentIntent: "pi_test000004", inquiry: true))
    #expect(server.updateDispute(inquiry, status: "warning_under_review"))
    #expect(server.closeDispute(inquiry, won: true))
    #expect(server.refundFromDashboard(paymentIntent: "pi_test000004", amount: 100) != nil)
    #expect(server.events().count - before == 20)

    // The live store hears every event Stripe sent.
    let heard = try session(live)
    _ = try heard.deliver(server, server.events())
    let expected = try orders.map { try Self.state(try #require(heard.ask("getOrder", #"{"orderId":"\#($0)"}"#)["order"])) }
    let books = try heard.ask("payoutReport", #"{"from":"2026-11-21","to":"2026-11-21"}"#)
    heard.running.finish()

    // The restored store heard none of them: a reconciliation catches it up. (Its pending order was
    // resolved by the sweep at start, as in the live store.)
    let restored = try session(backup)
    let reconciled = try restored.ask("reconcileStripe", #"{"since":"2026-11-21T00:00:00Z"}"#)
    // What it changed, by order: exactly these, and no other order.
    var changed: [String: [String]] = [:]
    for entry in reconciled["orders"]?.arrayValue ?? [] {
      changed[entry["orderId"]?.stringValue ?? "?"] = entry["changes"]?.arrayValue?.compactMap { $0["effect"]?.stringValue }
    }
    #expect(
      changed == [
        orders[0]: ["refund_recorded", "refund_recorded"], orders[1]: ["dispute_lost"], orders[2]: ["dispute_won"],
        orders[3]: ["refund_recorded", "dispute_closed"],
      ], "\(reconciled.compact)")
    let caughtUp = try orders.map { try Self.state(try #require(restored.ask("getOrder", #"{"orderId":"\#($0)"}"#)["order"])) }
    for (index, (got, want)) in zip(caughtUp, expected).enumerated() {
      #expect(got == want, "order \(index + 1)")
    }
    #expect(try restored.ask("payoutReport", #"{"from":"2026-11-21","to":"2026-11-21"}"#) == books)
    let again = try restored.ask("reconcileStripe", #"{"since":"2026-11-21T00:00:00Z"}"#)
    #expect(again["orders"] == .array([]), "\(again.compact)")
    restored.running.finish()
  }
}

extension StripeBooksGoldenTests {
  @Test("payservice stripe reconcile prints what it took in and exits 0; without Stripe it prints why and exits 1")
  func reconcileCommand() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    server.setClock(Self.stripeNow)
    let fixture = try StripeFixture(server: server, maxRetries: 0, requestTimeoutSeconds: 5)
    let database = try StoreBackend.sqlite.freshDatabase()
    let placing = try Session(
      ["--config", fixture.configPath, "--database", database, "--now", Self.now, "--quiet"], environment: fixture.environment)
    let orderId = try #require(try placing.order("tok_visa").result["orderId"]?.stringValue)
    placing.running.finish()
    #expect(server.refundFromDashboard(paymentIntent: "pi_test000001", amount: 100) == "re_test000001")
    let arguments = ["stripe", "reconcile", "--since", "2026-11-21T00:00:00Z", "--database", database, "--now", Self.now]
    let first = try PayserviceProcess.run(arguments + ["--config", fixture.configPath], environment: fixture.environment)
    #expect(first.status == 0, "\(first.stderr)")
    #expect(
      first.stdoutText
        == #"{"status":"succeeded","since":"2026-11-21T00:00:00Z","listed":{"paymentIntents":1,"refunds":1,"disputes":0},"orders":[{"orderId":"\#(orderId)","changes":[{"object":"re_test000001","effect":"refund_recorded"}]}],"effects":[{"effect":"refund_recorded","count":1}],"cursor":null}"#
        + "\n")
    #expect(first.stderr.contains("payservice stripe reconcile: 1 call, 2 objects listed, 1 change; "), "\(first.stderr)")
    #expect(first.stderr.hasSuffix(" s; done\n"), "\(first.stderr)")
    let again = try PayserviceProcess.run(arguments + ["--config", fixture.configPath], environment: fixture.environment)
    #expect(
      again.stdoutText
        == #"{"status":"succeeded","since":"2026-11-21T00:00:00Z","listed":{"paymentIntents":1,"refunds":1,"disputes":0},"orders":[],"effects":[],"cursor":null}"#
        + "\n")
    let sandbox = try PayserviceProcess.run(
      arguments + ["--config", GoldenTranscriptTests.goldenRoot.appendingPathComponent("config.yaml").path])
    #expect(sandbox.status == 1)
    #expect(
      sandbox.stdoutText
        == #"{"status":"failed","failureCode":"not_configured","message":"This payservice's gateway is not Stripe: there is nothing to reconcile."}"#
        + "\n")
    // Stripe unreachable: nothing taken in, exit 1.
    server.shutdown()
    let down = try PayserviceProcess.run(arguments + ["--config", fixture.configPath], environment: fixture.environment)
    #expect(down.status == 1)
    #expect(down.stdoutText.hasPrefix(#"{"status":"failed","failureCode":"gateway_unavailable","message":"Stripe did not answer the list of payment_intents ("#))
  }
}

extension String {
  /// The amount with its sign turned ("-5.00" ↔ "5.00"; "0.00" stays).
  fileprivate var negated: String {
    if hasPrefix("-") { return String(dropFirst()) }
    return allSatisfy { $0 == "0" || $0 == "." } ? self : "-" + self
  }
}
