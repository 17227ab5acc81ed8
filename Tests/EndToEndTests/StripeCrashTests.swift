import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// kill -9 at each point of a Stripe charge and refund, through the binary: (a) after the pending
/// commit, before the call reaches Stripe; (b) after Stripe charged (or refunded), before the
/// second commit; (c) after that commit, before the answer reached the client. After a restart and
/// the client's replay: one charge (one refund) at Stripe, the stock right, the replay's answer the
/// order's, and the secret key nowhere. CI runs this suite again through the release build
/// (PAYSERVICE_TEST_BINARY).
@Suite("Stripe crash matrix", .serialized)
struct StripeCrashTests {
  typealias Point = CrashPoint

  static let cart = #"[{"sku":"mug","quantity":2}]"#

  /// A shop on a fresh store, charging through a running test server.
  struct Shop {
    let server: StripeTestServer
    let fixture: StripeFixture
    /// The processes' arguments and store, and everything they wrote to stdout and stderr.
    var harness: CrashHarness
    var backend: StoreBackend { harness.backend }
    var database: String { harness.database }
    var arguments: [String] { harness.arguments }
    var transcripts: [String] {
      get { harness.transcripts }
      set { harness.transcripts = newValue }
    }

    init(backend: StoreBackend, capture: Gateway.Capture = .automatic) throws {
      server = try StripeTestServer()
      // Retries: a restarted process may send the same key before the server has noticed that the
      // killed one's connection closed (409 while that request still counts as in progress).
      fixture = try StripeFixture(server: server, capture: capture, maxRetries: 3, requestTimeoutSeconds: 5)
      let database = try backend.freshDatabase()
      harness = CrashHarness(
        arguments: [
          "--config", fixture.configPath, "--database", database, "--now", "2026-11-21T12:05:00Z", "--quiet", "--back-office",
        ], environment: fixture.environment, backend: backend, database: database)
    }

    /// Runs one process to its end on `lines`; its answers, parsed.
    mutating func run(_ lines: [String]) throws -> [JSONValue] {
      let result = try harness.run(lines)
      #expect(result.status == 0, "\(result.stderr)")
      return result.answers
    }

    /// Authorizes the cart and returns the processOrder line for it.
    mutating func authorize(paymentData: String = "tok_visa") throws -> String {
      let answer = try run([StripeFixture.authorizeLine(paymentData: paymentData, cart: StripeCrashTests.cart)])[0]
      let token = try #require(answer["result"]?["chargeToken"]?.stringValue, "\(answer.compact)")
      let amount = try #require(answer["result"]?["amount"]?.stringValue)
      return StripeFixture.processLine(token: token, amount: amount, cart: StripeCrashTests.cart)
    }

    /// Starts a process, sends `line` so that it stops at `point`, and kills it there (SIGKILL).
    /// `done` tells from the store when the second commit happened (point c).
    mutating func crash(
      at point: Point, route: StripeTestServer.Route, line: String, done: @escaping (any Store) throws -> Bool
    ) throws {
      let gate = StripeTestServer.Gate()
      switch point {
      case .beforeCall: server.inject(.holdBeforeExecuting(gate), on: route)
      case .afterGatewayActed: server.inject(.holdAfterExecuting(gate), on: route)
      case .afterCommit: break
      }
      let crash = try harness.crash(at: point, gate: gate, line: line, done: done)
      #expect(crash.reached, point == .afterCommit ? "the second commit never happened" : "the call never reached the gateway")
      #expect(crash.status != 0)
    }

    /// `held` is something the store does hold: the search must find it, so its misses mean something.
    func checkNoSecret(held: String) throws {
      #expect(try harness.leaks([server.secretKey], held: held) == [])
    }
  }

  @Test("kill -9 around a charge: after a restart and the replay, one charge, the order paid, the stock right",
    arguments: Point.allCases, StoreBackend.available)
  func charge(point: Point, backend: StoreBackend) throws {
    var shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let line = try shop.authorize()
    let token = try #require(try JSONParser.parse(line)["params"]?["chargeToken"]?.stringValue)
    try shop.crash(at: point, route: .createPaymentIntent, line: line) { store in
      try store.order(id: store.identifiers.orderId(token: token))?.status == .paid
    }
    let store = try backend.open(shop.database)
    let orderId = store.identifiers.orderId(token: token)
    #expect(try store.pendingAttemptCount() == (point == .afterCommit ? 0 : 1))
    #expect(try store.stock()["mug"] == 98)
    #expect(shop.server.paymentIntentCount == (point == .beforeCall ? 0 : 1))

    // The restart's sweep resolves what is pending; the client's replay gets the order.
    let result = try PayserviceProcess.run(
      shop.arguments, stdin: Data((line + "\n").utf8), environment: shop.fixture.environment)
    shop.transcripts += [result.stdoutText, result.stderr]
    if point != .afterCommit {
      #expect(result.stderr.contains("pending operations at start: 1 resolved, 0 still pending"), "\(result.stderr)")
    }
    let answer = try JSONParser.parse(result.stdoutText)
    #expect(answer["result"]?["status"] == .string("succeeded"), "\(result.stdoutText)")
    #expect(answer["result"]?["orderId"] == .string(orderId))
    #expect(shop.server.paymentIntentsCreated(idempotencyKey: Identifiers.chargeIdempotencyKey(orderId: orderId)) == 1)
    #expect(shop.server.paymentIntentCount == 1)
    #expect(try store.pendingAttemptCount() == 0)
    #expect(try store.stock()["mug"] == 98)
    #expect(try store.order(id: orderId)?.status == .paid)
    // Asked again, the same answer.
    #expect(try shop.run([line])[0].compact == answer.compact)
    try shop.checkNoSecret(held: orderId)
  }

  @Test("kill -9 around a refund: after a restart and the replay, one refund at Stripe, one restock",
    arguments: Point.allCases, StoreBackend.available)
  func refund(point: Point, backend: StoreBackend) throws {
    var shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let placed = try shop.run([try shop.authorize()])[0]
    let orderId = try #require(placed["result"]?["orderId"]?.stringValue, "\(placed.compact)")
    let refund =
      #"{"jsonrpc":"2.0","id":3,"method":"refundOrder","params":{"orderId":"\#(orderId)","refundId":"rf-crash","lines":[{"sku":"mug","quantity":1,"restock":"return"}]}}"#
    try shop.crash(at: point, route: .refund, line: refund) { store in
      try store.order(id: orderId)?.status == .partiallyRefunded
    }
    let store = try backend.open(shop.database)
    #expect(try store.stock()["mug"] == (point == .afterCommit ? 99 : 98))
    #expect(shop.server.refundCount == (point == .beforeCall ? 0 : 1))
    // Killed between the two transactions, the refund is pending in the journal.
    #expect(try store.pendingOperationCount() == (point == .afterCommit ? 0 : 1))

    let answer = try shop.run([refund])[0]
    #expect(answer["result"]?["status"] == .string("succeeded"), "\(answer.compact)")
    let refunds = shop.server.refunds(paymentIntent: try #require(shop.server.requests.first { $0.path == "/v1/refunds" }
      .flatMap { request in request.body.split(separator: "&").first { $0.hasPrefix("payment_intent=") } }
      .map { String($0.dropFirst("payment_intent=".count)) }))
    #expect(refunds.count == 1)
    #expect(answer["result"]?["refund"]?["gatewayRefundId"] == .string(refunds.first?.id ?? "none"), "\(answer.compact)")
    #expect(shop.server.refundCount == 1)
    #expect(try store.stock()["mug"] == 99)
    #expect(try store.order(id: orderId)?.status == .partiallyRefunded)
    #expect(try shop.run([refund])[0].compact == answer.compact)
    try shop.checkNoSecret(held: orderId)
  }

  @Test("kill -9 around a capture: after a restart and the replay, one capture at Stripe, the order paid",
    arguments: Point.allCases, StoreBackend.available)
  func capture(point: Point, backend: StoreBackend) throws {
    var shop = try Shop(backend: backend, capture: .manual)
    defer { shop.server.shutdown() }
    let placed = try shop.run([try shop.authorize()])[0]
    let orderId = try #require(placed["result"]?["orderId"]?.stringValue, "\(placed.compact)")
    let paymentId = try #require(placed["result"]?["order"]?["gatewayPaymentId"]?.stringValue)
    #expect(placed["result"]?["order"]?["status"] == .string("authorized"))
    let capture =
      #"{"jsonrpc":"2.0","id":3,"method":"captureOrder","params":{"orderId":"\#(orderId)","captureId":"cap-crash","amount":"10.00"}}"#
    try shop.crash(at: point, route: .capture, line: capture) { store in
      try store.order(id: orderId)?.status == .paid
    }
    let store = try backend.open(shop.database)
    #expect(try store.order(id: orderId)?.status == (point == .afterCommit ? .paid : .authorized))
    #expect(shop.server.paymentIntent(paymentId)?["status"] == (point == .beforeCall ? "requires_capture" : "succeeded"))
    #expect(try store.pendingOperationCount() == (point == .afterCommit ? 0 : 1))

    // The restart's sweep completes the capture; the client's replay gets its answer.
    let result = try PayserviceProcess.run(
      shop.arguments, stdin: Data((capture + "\n").utf8), environment: shop.fixture.environment)
    shop.transcripts += [result.stdoutText, result.stderr]
    if point != .afterCommit {
      #expect(result.stderr.contains("pending operations at start: 1 resolved, 0 still pending"), "\(result.stderr)")
    }
    let answer = try JSONParser.parse(result.stdoutText)
    #expect(
      answer["result"]?.compact
        == #"{"status":"succeeded","orderId":"\#(orderId)","captureId":"cap-crash","amountCaptured":"10.00","amountReleased":"7.66","orderStatus":"paid"}"#,
      "\(result.stdoutText)")
    let captures = shop.server.requests.filter { $0.path == "/v1/payment_intents/\(paymentId)/capture" }
    #expect(Set(captures.map(\.idempotencyKey)).count == 1)
    #expect(shop.server.paymentIntent(paymentId)?["amount_received"] == "1000")
    #expect(try store.pendingOperationCount() == 0)
    #expect(try store.order(id: orderId)?.status == .paid)
    #expect(try shop.run([capture])[0].compact == answer.compact)
    try shop.checkNoSecret(held: orderId)
  }
}
