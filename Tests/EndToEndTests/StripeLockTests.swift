import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The issue's acceptance test: a refund waiting for Stripe's answer holds no store lock. Two
/// processes share one store: A (back office) refunds an order and the Stripe test server holds
/// that refund (after executing it, or before), for up to 20 s; meanwhile B authorizes and places a
/// new order on the same store, and B's processOrder is answered within 1 s. Once the gate opens,
/// A's refund is answered succeeded: one refund at Stripe, one restock, the order
/// partially_refunded.
///
/// B starts either before A's refund (its start-up sweep finds nothing) or while the refund is held
/// (its start-up sweep finds A's pending refund and sends it again under the same idempotency key:
/// Stripe replays the refund it executed, or answers 409 while it has not, and either way the
/// refund is done once).
@Suite("Stripe: no store lock held across a back-office call", .serialized)
struct StripeLockTests {
  enum Hold: String, CaseIterable, CustomStringConvertible {
    /// Stripe executes the refund, then holds its answer.
    case afterExecuting
    /// Stripe holds the refund unexecuted.
    case beforeExecuting
    var description: String { rawValue }
  }

  enum StartB: String, CaseIterable, CustomStringConvertible {
    /// B starts before A's refund: its start-up sweep finds nothing pending.
    case beforeRefund
    /// B starts while Stripe holds A's refund: its start-up sweep sends the pending refund again.
    case duringHold
    var description: String { rawValue }
  }

  static let cart = #"[{"sku":"mug","quantity":2}]"#
  /// B's order takes from the same stock row the refund puts back into.
  static let cartB = #"[{"sku":"mug","quantity":1}]"#
  /// How long Stripe holds the refund at most.
  static let holdSeconds = 20.0

  static func parse(_ line: String?) throws -> JSONValue {
    try JSONParser.parse(try #require(line, "no answer"))
  }

  @Test(
    "while Stripe holds a refund's answer (up to 20 s), another process on the same store places an order answered within 1 s; the refund then succeeds once",
    arguments: Hold.allCases, StartB.allCases)
  func orderWhileRefundHeld(hold: Hold, startB: StartB) throws {
    try run(hold: hold, startB: startB, backend: .sqlite)
  }

  @Test(
    "the same on PostgreSQL: an order answered within 1 s while another process's refund waits for Stripe",
    .enabled(if: StoreBackend.serverURL != nil, "\(StoreBackend.skipMessage)"), arguments: Hold.allCases, StartB.allCases)
  func orderWhileRefundHeldPostgres(hold: Hold, startB: StartB) throws {
    try run(hold: hold, startB: startB, backend: .postgres)
  }

  func run(hold: Hold, startB: StartB, backend: StoreBackend) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    // A's refund must outlast the hold: a request timeout well past 20 s, and no retries (one
    // request to Stripe per call).
    let fixture = try StripeFixture(server: server, maxRetries: 0, requestTimeoutSeconds: 40)
    let database = try backend.freshDatabase()
    let common = ["--config", fixture.configPath, "--database", database, "--now", "2026-11-21T12:05:00Z", "--quiet"]

    // A places and pays the order it will refund.
    let a = try RunningPayservice(common + ["--back-office"], environment: fixture.environment)
    defer { a.finish() }
    let authorized = try Self.parse(try a.ask(StripeFixture.authorizeLine(paymentData: "tok_visa", cart: Self.cart, id: 1)))
    let token = try #require(authorized["result"]?["chargeToken"]?.stringValue, "\(authorized.compact)")
    let amount = try #require(authorized["result"]?["amount"]?.stringValue)
    let placed = try Self.parse(
      try a.ask(StripeFixture.processLine(token: token, amount: amount, cart: Self.cart, id: 2), timeout: 20))
    #expect(placed["result"]?["status"] == .string("succeeded"), "\(placed.compact)")
    #expect(placed["result"]?["order"]?["status"] == .string("paid"), "\(placed.compact)")
    let orderId = try #require(placed["result"]?["orderId"]?.stringValue)
    let paymentId = try #require(placed["result"]?["order"]?["gatewayPaymentId"]?.stringValue)
    let store = try backend.open(database)
    #expect(try store.stock()["mug"] == 98)

    var b: RunningPayservice?
    defer { b?.finish() }
    if startB == .beforeRefund {
      let started = try RunningPayservice(common, environment: fixture.environment)
      b = started
      // Answered only once its start-up (the sweep included) is over: nothing is pending yet.
      let products = try Self.parse(try started.ask(#"{"jsonrpc":"2.0","id":10,"method":"listProducts"}"#, timeout: 15))
      #expect(products["result"] != nil, "\(products.compact)")
    }

    // Stripe holds the refund, at most 20 s.
    let gate = StripeTestServer.Gate()
    server.inject(hold == .afterExecuting ? .holdAfterExecuting(gate) : .holdBeforeExecuting(gate), on: .refund)
    let refundLine =
      #"{"jsonrpc":"2.0","id":3,"method":"refundOrder","params":{"orderId":"\#(orderId)","refundId":"rf-held","lines":[{"sku":"mug","quantity":1,"restock":"return"}]}}"#
    a.send(refundLine)
    #expect(gate.waitUntilReached(timeout: 60), "the refund never reached Stripe")
    let heldAt = Date()
    DispatchQueue.global().asyncAfter(deadline: .now() + Self.holdSeconds) { gate.release() }
    #expect(try store.pendingOperations().map { [$0.kind, $0.key, $0.subject ?? ""] } == [["refund", "rf-held", orderId]])
    #expect(server.refundCount == (hold == .afterExecuting ? 1 : 0))

    if startB == .duringHold {
      b = try RunningPayservice(common, environment: fixture.environment)
    }
    let processB = try #require(b)
    // B authorizes (untimed; for .duringHold its start-up sweep runs first), then places its order (timed).
    let authorizedB = try Self.parse(
      try processB.ask(StripeFixture.authorizeLine(paymentData: "pm_card_visa", cart: Self.cartB, id: 11), timeout: 15))
    let tokenB = try #require(authorizedB["result"]?["chargeToken"]?.stringValue, "\(authorizedB.compact)")
    let amountB = try #require(authorizedB["result"]?["amount"]?.stringValue)
    let processLineB = StripeFixture.processLine(token: tokenB, amount: amountB, cart: Self.cartB, id: 12)
    let (orderB, early) = try Self.placeWhileHeld(
      processLineB, on: processB, heldAt: heldAt, a: a, store: store, orderId: orderId, hold: hold, startB: startB,
      gateway: "Stripe", label: "StripeLockTests[\(backend), hold \(hold), B started \(startB)]")

    gate.release()
    let refundText = try #require(early ?? a.readLine(timeout: 30), "A never answered its refund")
    let refunded = try JSONParser.parse(refundText)
    #expect(refunded["id"] == .number("3"))
    #expect(refunded["result"]?["status"] == .string("succeeded"), "\(refunded.compact)")
    #expect(refunded["result"]?["orderStatus"] == .string("partially_refunded"), "\(refunded.compact)")
    #expect(server.refundCount == 1)
    let refunds = server.refunds(paymentIntent: paymentId)
    #expect(refunds.count == 1)
    #expect(refunded["result"]?["refund"]?["gatewayRefundId"] == .string(refunds.first?.id ?? "none"), "\(refunded.compact)")
    let refundRequests = server.requests.filter { $0.path == "/v1/refunds" }
    #expect(Set(refundRequests.map(\.idempotencyKey)).count == 1, "every refund request under one key")
    #expect(refundRequests.filter { !$0.replayed && $0.status == 200 }.count <= 1)

    // The store: one refund, one restock, both orders there, nothing pending.
    #expect(try store.pendingOperationCount() == 0)
    #expect(try store.stock()["mug"] == 98)
    let stored = try #require(try store.order(id: orderId))
    #expect(stored.status == .partiallyRefunded)
    #expect(stored.refunds.count == 1)
    #expect(try store.order(id: orderB)?.status == .paid)
    // A's refund again: the stored answer, nothing sent.
    let requestsBefore = server.requests.count
    #expect(try a.ask(refundLine) == refundText)
    #expect(server.requests.count == requestsBefore)

    processB.finish()
    let stderrB = String(decoding: processB.stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    Self.checkStartUp(stderrB, hold: hold, startB: startB)
    #expect(!stderrB.contains(server.secretKey))
  }

  /// B's processOrder sent while the gateway holds A's refund: answered within 1 s, before the gate
  /// opens, with A still waiting; the store as B's start-up left it (the refund recorded by B's
  /// sweep from the gateway's replay, or still pending with B's unit taken). B's orderId, and any
  /// answer A gave early (there must be none).
  static func placeWhileHeld(
    _ line: String, on processB: RunningPayservice, heldAt: Date, a: RunningPayservice, store: any Store,
    orderId: String, hold: Hold, startB: StartB, gateway: String, label: String
  ) throws -> (orderB: String, early: String?) {
    let sentAt = Date()
    let answerB = try? processB.ask(line, timeout: holdSeconds + 10)
    let elapsed = Date().timeIntervalSince(sentAt)
    let heldFor = Date().timeIntervalSince(heldAt)
    print(
      "\(label): B's processOrder answered in \(String(format: "%.3f", elapsed)) s, "
        + "\(String(format: "%.3f", heldFor)) s into the refund's hold")
    let placedB = try parse(answerB)
    #expect(placedB["result"]?["status"] == .string("succeeded"), "\(placedB.compact)")
    #expect(placedB["result"]?["order"]?["status"] == .string("paid"), "\(placedB.compact)")
    #expect(elapsed < 1, "B's processOrder took \(elapsed) s while A's refund waited for \(gateway)")
    let orderB = try #require(placedB["result"]?["orderId"]?.stringValue)

    // The refund was still held when B was answered: A has not answered it.
    #expect(heldFor < holdSeconds, "B was answered only after the gate opened")
    let early = a.readLine(timeout: 0.2)
    #expect(early == nil, "A answered its refund while \(gateway) held it: \(early ?? "")")
    if (hold, startB) == (.afterExecuting, .duringHold) {
      // B's start-up sweep sent the refund again under its key: the gateway replayed the refund it
      // executed, and B recorded it (A will find it recorded).
      #expect(try store.pendingOperationCount() == 0)
      #expect(try store.stock()["mug"] == 98)
      #expect(try store.order(id: orderId)?.status == .partiallyRefunded)
    } else {
      // Still pending, its restock not done; B's order took its unit.
      #expect(try store.pendingOperationCount() == 1)
      #expect(try store.stock()["mug"] == 97)
      #expect(try store.order(id: orderId)?.status == .paid)
    }
    return (orderB, early)
  }

  /// What B's start-up sweep said on stderr: nothing pending when it started before the refund;
  /// the held refund sent again, and resolved when the gateway had executed it.
  static func checkStartUp(_ stderrB: String, hold: Hold, startB: StartB) {
    switch (hold, startB) {
    case (_, .beforeRefund):
      #expect(!stderrB.contains("pending operations at start"), "\(stderrB)")
    case (.afterExecuting, .duringHold):
      #expect(stderrB.contains("pending operations at start: 1 resolved, 0 still pending"), "\(stderrB)")
    case (.beforeExecuting, .duringHold):
      #expect(stderrB.contains("pending operations at start: 0 resolved, 1 still pending"), "\(stderrB)")
    }
  }
}
