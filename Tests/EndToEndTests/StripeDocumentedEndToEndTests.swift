import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Stripe's answers that are not final yet, settled by the sweep at start of a later process,
/// through the binary: a PaymentIntent in `processing`, and a 500 Stripe stored under the charge's
/// key. One PaymentIntent at most at Stripe, the stock right, the client's replay answered from the
/// store.
@Suite("Stripe: processing and stored 500s settled by a later process", .serialized)
struct StripeDocumentedEndToEndTests {
  /// `StripeCrashTests.Shop`'s process arguments with the clock at `now`.
  static func arguments(_ shop: StripeCrashTests.Shop, now: String) -> [String] {
    var arguments = shop.arguments
    let index = arguments.firstIndex(of: "--now")!
    arguments[index + 1] = now
    return arguments
  }

  static func run(_ shop: inout StripeCrashTests.Shop, now: String, _ line: String) throws -> (answer: JSONValue, stderr: String) {
    let result = try PayserviceProcess.run(
      arguments(shop, now: now), stdin: Data((line + "\n").utf8), environment: shop.fixture.environment)
    #expect(result.status == 0, "\(result.stderr)")
    shop.transcripts += [result.stdoutText, result.stderr]
    return (try JSONParser.parse(result.stdoutText), result.stderr)
  }

  @Test(
    "a processing payment stays pending across restarts, stock held; once Stripe has decided, the next start's sweep settles it and the replay gets the order",
    arguments: StoreBackend.available)
  func processingSettledAtStart(backend: StoreBackend) throws {
    var shop = try StripeCrashTests.Shop(backend: backend)
    defer { shop.server.shutdown() }
    let line = try shop.authorize(paymentData: "tok_processing")
    let token = try #require(try JSONParser.parse(line)["params"]?["chargeToken"]?.stringValue)
    let first = try shop.run([line])[0]
    #expect(first["result"]?["failureCode"] == .string("payment_processing"), "\(first.compact)")
    let store = try backend.open(shop.database)
    let orderId = store.identifiers.orderId(token: token)
    #expect(try store.stock()["mug"] == 98)
    #expect(try store.pendingOperationCount() == 1)

    // Still processing: the next start asks Stripe and leaves it pending.
    let still = try Self.run(&shop, now: "2026-11-21T12:10:00Z", line)
    #expect(still.stderr.contains("pending operations at start: 0 resolved, 1 still pending"), "\(still.stderr)")
    #expect(still.answer["result"]?["failureCode"] == .string("payment_processing"))

    #expect(shop.server.settleProcessing(paymentIntent: "pi_test000001", succeeded: true))
    let settled = try Self.run(&shop, now: "2026-11-21T12:20:00Z", line)
    #expect(settled.stderr.contains("pending operations at start: 1 resolved, 0 still pending"), "\(settled.stderr)")
    #expect(settled.answer["result"]?["status"] == .string("succeeded"), "\(settled.answer.compact)")
    #expect(settled.answer["result"]?["orderId"] == .string(orderId))
    #expect(try store.order(id: orderId)?.status == .paid)
    #expect(try store.pendingOperationCount() == 0)
    #expect(try store.stock()["mug"] == 98)
    #expect(shop.server.paymentIntentCount == 1)
    #expect(shop.server.paymentIntentsCreated(idempotencyKey: Identifiers.chargeIdempotencyKey(orderId: orderId)) == 1)
    try shop.checkNoSecret(held: orderId)
  }

  @Test(
    "a 500 Stripe stored before charging: pending while the search is young; a start two minutes later releases the order as gateway_failed, the stock back, nothing charged",
    arguments: StoreBackend.available)
  func storedServerErrorReleasedAtStart(backend: StoreBackend) throws {
    var shop = try StripeCrashTests.Shop(backend: backend)
    defer { shop.server.shutdown() }
    let line = try shop.authorize()
    let token = try #require(try JSONParser.parse(line)["params"]?["chargeToken"]?.stringValue)
    shop.server.inject(.serverErrorStored(.withoutExecuting), on: .createPaymentIntent)
    // The retry gets the stored 500 replayed, and the search finds nothing yet.
    let first = try shop.run([line])[0]
    #expect(first["result"]?["failureCode"] == .string("gateway_unavailable"), "\(first.compact)")
    let store = try backend.open(shop.database)
    let orderId = store.identifiers.orderId(token: token)
    #expect((first["result"]?["message"]?.stringValue ?? "").contains("its search finds no payment for order \(orderId) yet"))
    #expect(try store.stock()["mug"] == 98)

    let later = try Self.run(&shop, now: "2026-11-21T12:08:00Z", line)
    #expect(later.stderr.contains("pending operations at start: 1 resolved, 0 still pending"), "\(later.stderr)")
    #expect(later.answer["result"]?["failureCode"] == .string("gateway_failed"), "\(later.answer.compact)")
    #expect(later.answer["result"]?["chargeId"] == nil)
    #expect(try store.pendingOperationCount() == 0)
    #expect(try store.stock()["mug"] == 100)
    #expect(try store.order(id: orderId) == nil)
    #expect(shop.server.paymentIntentCount == 0)
    #expect(shop.server.requests.filter { $0.path == "/v1/payment_intents/search" }.count == 2)
    try shop.checkNoSecret(held: token)
  }
}
