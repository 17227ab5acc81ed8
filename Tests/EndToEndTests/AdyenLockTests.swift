import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// StripeLockTests for Adyen: a refund waiting for Adyen's answer holds no store lock. Two
/// processes share one store: A (back office) refunds a paid order and the Adyen test server holds
/// that refund (after executing it, or before), for up to 20 s; meanwhile B places a new order on
/// the same store, and B's processOrder is answered within 1 s. Once the gate opens, A's refund is
/// answered succeeded (pending at Adyen, as Adyen's `received` is), and its REFUND notification
/// settles it: one refund at Adyen, one restock, the order partially_refunded, nothing pending.
///
/// B starts either before A's refund (its start-up sweep finds nothing) or while the refund is held
/// (its sweep sends the pending refund again under the same Idempotency-Key: Adyen replays the
/// refund it executed, or answers 409 704 while the first request is still in progress, and either
/// way the refund is done once).
@Suite("Adyen: no store lock held across a back-office call", .serialized)
struct AdyenLockTests {
  typealias Hold = StripeLockTests.Hold
  typealias StartB = StripeLockTests.StartB

  /// B's order takes from the same stock row the refund puts back into.
  static let cartB = #"[{"sku":"mug","quantity":1}]"#
  static let holdSeconds = StripeLockTests.holdSeconds

  @Test(
    "while Adyen holds a refund (up to 20 s), another process on the same store places an order answered within 1 s; the refund then is done once",
    arguments: Hold.allCases, StartB.allCases)
  func orderWhileRefundHeld(hold: Hold, startB: StartB) throws {
    try run(hold: hold, startB: startB, backend: .sqlite)
  }

  @Test(
    "the same on PostgreSQL: an order answered within 1 s while another process's refund waits for Adyen",
    .enabled(if: StoreBackend.serverURL != nil, "\(StoreBackend.skipMessage)"), arguments: Hold.allCases, StartB.allCases)
  func orderWhileRefundHeldPostgres(hold: Hold, startB: StartB) throws {
    try run(hold: hold, startB: startB, backend: .postgres)
  }

  func run(hold: Hold, startB: StartB, backend: StoreBackend) throws {
    // A's refund must outlast the hold: a request timeout well past 20 s, and no retries (one
    // request to Adyen per call).
    let fixture = try AdyenFixture(maxRetries: 0, requestTimeoutSeconds: 40)
    let server = fixture.server
    defer { server.shutdown() }
    let database = try backend.freshDatabase()
    let common = ["--config", fixture.configPath, "--database", database, "--now", "2026-11-21T12:05:00Z", "--quiet"]

    // A places and pays the order it will refund.
    let a = try RunningPayservice(common + ["--back-office"], environment: fixture.environment)
    defer { a.finish() }
    let placed = try StripeLockTests.parse(try a.ask(try fixture.checkoutLine(on: a, transaction: "A"), timeout: 20))
    #expect(placed["result"]?["order"]?["status"] == .string("paid"), "\(placed.compact)")
    let orderId = try #require(placed["result"]?["orderId"]?.stringValue)
    let store = try backend.open(database)
    #expect(try store.stock()["mug"] == 98)
    _ = server.releaseNotifications()

    var b: RunningPayservice?
    defer { b?.finish() }
    if startB == .beforeRefund {
      let started = try RunningPayservice(common, environment: fixture.environment)
      b = started
      // Answered only once its start-up (the sweep included) is over: nothing is pending yet.
      #expect(try started.ask(#"{"jsonrpc":"2.0","id":10,"method":"listProducts"}"#, timeout: 15).contains(#""result""#))
    }

    // Adyen holds the refund, at most 20 s.
    let gate = AdyenTestServer.Gate()
    server.inject(hold == .afterExecuting ? .holdAfterExecuting(gate) : .holdBeforeExecuting(gate), on: .refunds)
    let refundLine =
      #"{"jsonrpc":"2.0","id":3,"method":"refundOrder","params":{"orderId":"\#(orderId)","refundId":"rf-held","lines":[{"sku":"mug","quantity":1,"restock":"return"}]}}"#
    a.send(refundLine)
    #expect(gate.waitUntilReached(timeout: 60), "the refund never reached Adyen")
    let heldAt = Date()
    DispatchQueue.global().asyncAfter(deadline: .now() + Self.holdSeconds) { gate.release() }
    #expect(try store.pendingOperations().map { [$0.kind, $0.key, $0.subject ?? ""] } == [["refund", "rf-held", orderId]])
    #expect(server.refundCount == (hold == .afterExecuting ? 1 : 0))

    if startB == .duringHold {
      b = try RunningPayservice(common, environment: fixture.environment)
    }
    let processB = try #require(b)
    // B authorizes (untimed; for .duringHold its start-up sweep runs first), then places its order (timed).
    let processLineB = try fixture.checkoutLine(on: processB, cart: Self.cartB, transaction: "B", id: 12)
    let (orderB, early) = try StripeLockTests.placeWhileHeld(
      processLineB, on: processB, heldAt: heldAt, a: a, store: store, orderId: orderId, hold: hold, startB: startB,
      gateway: "Adyen", label: "AdyenLockTests[\(backend), hold \(hold), B started \(startB)]")

    gate.release()
    let refundText = try #require(early ?? a.readLine(timeout: 30), "A never answered its refund")
    let refunded = try JSONParser.parse(refundText)
    #expect(refunded["id"] == .number("3"))
    #expect(refunded["result"]?["status"] == .string("succeeded"), "\(refunded.compact)")
    #expect(refunded["result"]?["orderStatus"] == .string("partially_refunded"), "\(refunded.compact)")
    #expect(refunded["result"]?["refund"]?["status"] == .string("pending"), "\(refunded.compact)")
    #expect(server.refundCount == 1)
    let refundPsp = try #require(server.pendingNotifications.first { $0.eventCode == "REFUND" }?.pspReference)
    #expect(refunded["result"]?["refund"]?["gatewayRefundId"] == .string(refundPsp), "\(refunded.compact)")
    let key = Identifiers.backOfficeIdempotencyKey(kind: "refund", orderId: orderId, key: "rf-held")
    #expect(Set(server.requests.filter { $0.path.hasSuffix("/refunds") }.map(\.idempotencyKey)) == [key])
    #expect(server.created(idempotencyKey: key) == 1)

    // Adyen's notifications (B's AUTHORISATION, the REFUND) settle the refund.
    let notified = try JSONParser.parse(try a.ask(AdyenFixture.notificationLine(server.releaseNotifications()), timeout: 15))
    // Queued as Adyen executed them: a refund held after executing ran before B's payment.
    let effects = ["AUTHORISATION none", "REFUND refund_succeeded"]
    #expect(
      AdyenCrashTests.effects(notified) == (hold == .afterExecuting ? effects.reversed() : effects), "\(notified.compact)")

    // The store: one refund, settled, one restock, both orders there, nothing pending.
    #expect(try store.pendingOperationCount() == 0)
    #expect(try store.stock()["mug"] == 98)
    let stored = try #require(try store.order(id: orderId))
    #expect(stored.status == .partiallyRefunded)
    #expect(try AdyenCrashTests.refunds(stored) == [["rf-held", refundPsp, "settled"]])
    #expect(try store.order(id: orderB)?.status == .paid)
    // A's refund again: the stored answer, nothing sent.
    let requestsBefore = server.requests.count
    #expect(try a.ask(refundLine) == refundText)
    #expect(server.requests.count == requestsBefore)

    processB.finish()
    let stderrB = String(decoding: processB.stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    StripeLockTests.checkStartUp(stderrB, hold: hold, startB: startB)
    #expect(!stderrB.contains(server.apiKey) && !stderrB.contains(server.hmacKey))
  }
}
