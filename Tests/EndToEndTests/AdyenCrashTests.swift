import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// kill -9 at each point of an Adyen payment, capture and refund, through the binary, as
/// StripeCrashTests does for Stripe: (a) after the pending commit, before the call reaches Adyen;
/// (b) after Adyen executed it, before its answer reached payservice; (c) after the last commit,
/// before the answer reached its client. The last commit differs by kind:
/// - a payment: the order paid (Adyen answers `Authorised` at once);
/// - a refund: the refund recorded on the order, pending at Adyen (Adyen answers `received`; a
///   refund is taken at once and its REFUND notification settles it later);
/// - a capture: Adyen answers `received`, and the capture stays pending in the journal until its
///   CAPTURE notification; the last commit is that notification's settlement, and the process
///   killed is the one processAdyenNotification runs in, before it answers the webhook (so Adyen,
///   with no `[accepted]`, delivers the notification again).
///
/// After a restart (its sweep sends what is pending again under the same Idempotency-Key), the
/// client's replay and the notifications' delivery: one payment, capture or refund at Adyen, the
/// order's status and the stock right, nothing pending, and neither the API key nor the HMAC key in
/// any output or in the store. Every delivery is preceded by a forged copy (an amount changed after
/// signing: refused, nothing changes) and repeated (Adyen's redelivery: answered the same, nothing
/// more changes). Notifications out of order (before the replay, to another process; a batch
/// reversed) end in the same books.
@Suite("Adyen crash matrix", .serialized)
struct AdyenCrashTests {
  typealias Point = CrashPoint

  /// The payment's pspReference (the test server numbers its references from 1).
  static let payment = "TEST000000000001"

  /// A shop on a fresh store, paying through a running Adyen test server.
  struct Shop {
    let fixture: AdyenFixture
    var harness: CrashHarness
    var server: AdyenTestServer { fixture.server }

    init(backend: StoreBackend, capture: Gateway.Capture = .automatic) throws {
      // Retries: a restarted process may send the same key before the server has noticed that the
      // killed one's connection closed (409 704 while that request still counts as in progress).
      fixture = try AdyenFixture(capture: capture, maxRetries: 3, requestTimeoutSeconds: 5)
      let database = try backend.freshDatabase()
      harness = CrashHarness(
        arguments: [
          "--config", fixture.configPath, "--database", database, "--now", "2026-11-21T12:05:00Z", "--quiet", "--back-office",
        ], environment: fixture.environment, backend: backend, database: database)
    }

    func store() throws -> any Store { try harness.backend.open(harness.database) }

    /// Runs one process to its end on `lines`: its answers, and its stderr.
    mutating func run(_ lines: [String]) throws -> (answers: [JSONValue], stderr: String) {
      let result = try harness.run(lines)
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.answers.count == lines.count, "\(result.stderr)")
      return (result.answers, result.stderr)
    }

    /// A process started for the test to talk to; its stderr goes to the transcripts when it ends.
    func start() throws -> RunningPayservice {
      try RunningPayservice(harness.arguments, environment: fixture.environment)
    }

    mutating func finish(_ running: RunningPayservice) {
      running.finish()
      harness.transcripts.append(String(decoding: running.stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    /// The processOrder line for the cart, authorized by a process of its own.
    mutating func checkoutLine() throws -> String {
      let running = try start()
      defer { finish(running) }
      return try fixture.checkoutLine(on: running)
    }

    /// The cart bought and paid (or authorized, with manual capture): processOrder's result.
    mutating func place() throws -> JSONValue {
      let running = try start()
      defer { finish(running) }
      let answer = try JSONParser.parse(try running.ask(try fixture.checkoutLine(on: running), timeout: 20))
      #expect(answer["result"]?["status"] == .string("succeeded"), "\(answer.compact)")
      #expect(answer["result"]?["order"]?["gatewayPaymentId"] == .string(AdyenCrashTests.payment))
      return try #require(answer["result"])
    }

    /// Starts a process, sends `line` so that it stops at `point`, and kills it there (SIGKILL).
    mutating func crash(
      at point: Point, route: AdyenTestServer.Route, line: String, done: (any Store) throws -> Bool = { _ in false }
    ) throws {
      let gate = AdyenTestServer.Gate()
      switch point {
      case .beforeCall: server.inject(.holdBeforeExecuting(gate), on: route)
      case .afterGatewayActed: server.inject(.holdAfterExecuting(gate), on: route)
      case .afterCommit: break
      }
      let crash = try harness.crash(at: point, gate: gate, line: line, done: done)
      #expect(crash.reached, point == .afterCommit ? "the last commit never happened" : "the call never reached Adyen")
      #expect(crash.status != 0)
    }

    /// Delivers `payload` (by default the notifications the server queued) in one process, as
    /// Adyen POSTs it: a forged copy first (each amount changed after signing: every item refused,
    /// the order unchanged), then the body twice (the redelivery answered the same). The genuine
    /// delivery's effects, and the process's stderr.
    mutating func deliver(_ payload: String? = nil, orderId: String) throws -> (effects: [String], stderr: String) {
      let payload = payload ?? server.releaseNotifications()
      let items = AdyenCrashTests.array(try JSONParser.parse(payload)["notificationItems"]).count
      let getOrder = #"{"jsonrpc":"2.0","id":"g","method":"getOrder","params":{"orderId":"\#(orderId)"}}"#
      let forged = payload.replacingOccurrences(of: #""value":"#, with: #""value":1"#)
      let genuine = AdyenFixture.notificationLine(payload)
      let (answers, stderr) = try run([getOrder, AdyenFixture.notificationLine(forged), getOrder, genuine, genuine])
      guard answers.count == 5 else { return ([], stderr) }
      #expect(answers[1]["result"]?["items"] == .array([]), "\(answers[1].compact)")
      #expect(
        (0..<items).map { answers[1]["result"]?["refused"]?[$0]?["failureCode"] }
          == Array(repeating: .string("invalid_signature"), count: items), "\(answers[1].compact)")
      #expect(answers[2] == answers[0], "a forged notification changed the order")
      #expect(answers[4] == answers[3], "the redelivery was answered otherwise")
      return (AdyenCrashTests.effects(answers[3]), stderr)
    }

    func order(_ orderId: String) throws -> OrderStatus? { try store().order(id: orderId)?.status }

    func checkNoSecret(held: String) throws {
      #expect(try harness.leaks([server.apiKey, server.hmacKey], held: held) == [])
    }
  }

  /// Each verified item of processAdyenNotification's answer as "eventCode effect".
  static func effects(_ answer: JSONValue) -> [String] {
    array(answer["result"]?["items"]).map {
      "\($0["eventCode"]?.stringValue ?? "?") \($0["effect"]?.stringValue ?? "?")"
    }
  }

  static func array(_ value: JSONValue?) -> [JSONValue] {
    guard case .array(let values)? = value else { return [] }
    return values
  }

  /// The order's refunds in the store: refundId, gatewayRefundId, and status ("settled" when none).
  static func refunds(_ order: StoredOrder) throws -> [[String]] {
    try order.refunds.map { try JSONParser.parse($0) }.map {
      [$0["refundId"]?.stringValue ?? "", $0["gatewayRefundId"]?.stringValue ?? "", $0["status"]?.stringValue ?? "settled"]
    }
  }

  static func minor(_ amount: String) -> String { String(Int(amount.replacingOccurrences(of: ".", with: "")) ?? -1) }

  @Test(
    "kill -9 around a payment: after a restart and the replay, one payment at Adyen, the order paid, the stock right",
    arguments: Point.allCases, StoreBackend.available)
  func pay(point: Point, backend: StoreBackend) throws {
    var shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let line = try shop.checkoutLine()
    let token = try #require(try JSONParser.parse(line)["params"]?["chargeToken"]?.stringValue)
    try shop.crash(at: point, route: .payments, line: line) { store in
      try store.order(id: store.identifiers.orderId(token: token))?.status == .paid
    }
    let store = try shop.store()
    let orderId = store.identifiers.orderId(token: token)
    #expect(try store.pendingAttemptCount() == (point == .afterCommit ? 0 : 1))
    #expect(try store.stock()["mug"] == 98)
    #expect(shop.server.paymentCount == (point == .beforeCall ? 0 : 1))

    // The restart's sweep resolves what is pending; the client's replay gets the order.
    let (answers, stderr) = try shop.run([line])
    if point != .afterCommit {
      #expect(stderr.contains("pending operations at start: 1 resolved, 0 still pending"), "\(stderr)")
    }
    let answer = try #require(answers.first)
    // Adyen's AUTHORISATION finds the order paid: nothing more changes.
    #expect(try shop.deliver(orderId: orderId).effects == ["AUTHORISATION none"])
    try Self.checkPaid(&shop, orderId: orderId, line: line, answer: answer)
  }

  /// What a payment leaves: one payment at Adyen under the order's key, the order paid, the stock
  /// taken once, nothing pending, the replay answered the same, no key anywhere.
  static func checkPaid(_ shop: inout Shop, orderId: String, line: String, answer: JSONValue) throws {
    #expect(answer["result"]?["status"] == .string("succeeded"), "\(answer.compact)")
    #expect(answer["result"]?["orderId"] == .string(orderId))
    #expect(answer["result"]?["order"]?["status"] == .string("paid"))
    let key = Identifiers.chargeIdempotencyKey(orderId: orderId)
    #expect(shop.server.created(idempotencyKey: key) == 1)
    #expect(shop.server.paymentCount == 1)
    #expect(Set(shop.server.requests.filter { $0.path == "/v71/payments" }.map(\.idempotencyKey)) == [key])
    let store = try shop.store()
    #expect(try store.pendingOperationCount() == 0)
    #expect(try store.stock()["mug"] == 98)
    #expect(try store.order(id: orderId)?.status == .paid)
    #expect(try shop.run([line]).answers.first?.compact == answer.compact)
    try shop.checkNoSecret(held: orderId)
  }

  @Test(
    "kill -9 around a capture: after a restart, the replay and its CAPTURE notification, one capture at Adyen, the order paid",
    arguments: Point.allCases, StoreBackend.available)
  func capture(point: Point, backend: StoreBackend) throws {
    var shop = try Shop(backend: backend, capture: .manual)
    defer { shop.server.shutdown() }
    let placed = try shop.place()
    let orderId = try #require(placed["orderId"]?.stringValue)
    let total = try #require(placed["amount"]?.stringValue)
    #expect(placed["order"]?["status"] == .string("authorized"))
    let capture = Self.captureLine(orderId)
    let accepted =
      #"{"status":"failed","failureCode":"outcome_pending","message":"Adyen accepted the request (its reference TEST000000000002) and says later what came of it: the order shows the outcome once Adyen's notification arrives. The same request again answers the same; it is never done twice."}"#
    let both = ["AUTHORISATION none", "CAPTURE capture_succeeded"]
    switch point {
    case .beforeCall, .afterGatewayActed:
      try shop.crash(at: point, route: .captures, line: capture)
      #expect(try shop.order(orderId) == .authorized)
      #expect(shop.server.payment(Self.payment)?["captured"] == (point == .beforeCall ? "0" : Self.minor(total)))
      #expect(try shop.store().pendingOperationCount() == 1)
      // The restart's sweep sends the capture again; Adyen's `received` leaves it pending, and the
      // replay answers the same.
      let (answers, stderr) = try shop.run([capture])
      #expect(stderr.contains("pending operations at start: 0 resolved, 1 still pending"), "\(stderr)")
      #expect(answers.first?["result"]?.compact == accepted)
      #expect(try shop.order(orderId) == .authorized)
      #expect(try shop.deliver(orderId: orderId).effects == both)
    case .afterCommit:
      #expect(try shop.run([capture]).answers.first?["result"]?.compact == accepted)
      let payload = shop.server.releaseNotifications()
      try shop.crash(at: point, route: .captures, line: AdyenFixture.notificationLine(payload)) { store in
        try store.order(id: orderId)?.status == .paid
      }
      #expect(try shop.store().pendingOperationCount() == 0)
      // Unanswered, Adyen delivers the notification again: answered as recorded, nothing more changes.
      let (effects, stderr) = try shop.deliver(payload, orderId: orderId)
      #expect(effects == both)
      #expect(!stderr.contains("pending operations at start"), "\(stderr)")
    }
    try Self.checkCaptured(&shop, orderId: orderId, total: total, answer: try #require(try shop.run([capture]).answers.first))
  }

  static func captureLine(_ orderId: String) -> String {
    #"{"jsonrpc":"2.0","id":3,"method":"captureOrder","params":{"orderId":"\#(orderId)","captureId":"cap-crash"}}"#
  }

  /// What a capture leaves once its CAPTURE settled it: one capture at Adyen under one key, the
  /// order paid, nothing pending, the replay answered the same, no key anywhere.
  static func checkCaptured(_ shop: inout Shop, orderId: String, total: String, answer: JSONValue) throws {
    #expect(
      answer["result"]?.compact
        == #"{"status":"succeeded","orderId":"\#(orderId)","captureId":"cap-crash","amountCaptured":"\#(total)","amountReleased":"0.00","orderStatus":"paid"}"#,
      "\(answer.compact)")
    let key = Identifiers.backOfficeIdempotencyKey(kind: "capture", orderId: orderId, key: "cap-crash")
    #expect(Set(shop.server.requests.filter { $0.path == "/v71/payments/\(payment)/captures" }.map(\.idempotencyKey)) == [key])
    #expect(shop.server.created(idempotencyKey: key) == 1)
    #expect(shop.server.captureCount == 1)
    #expect(shop.server.paymentCount == 1)
    #expect(shop.server.payment(payment)?["captured"] == minor(total))
    let store = try shop.store()
    #expect(try store.pendingOperationCount() == 0)
    #expect(try store.order(id: orderId)?.status == .paid)
    #expect(try store.stock()["mug"] == 98)
    #expect(try shop.run([captureLine(orderId)]).answers.first?.compact == answer.compact)
    try shop.checkNoSecret(held: orderId)
  }

  static func refundLine(_ orderId: String) -> String {
    #"{"jsonrpc":"2.0","id":3,"method":"refundOrder","params":{"orderId":"\#(orderId)","refundId":"rf-crash","lines":[{"sku":"mug","quantity":1,"restock":"return"}]}}"#
  }

  /// What a refund leaves after it is settled: one refund at Adyen under one key, one restock, the
  /// order partially refunded with its refund settled, nothing pending, no key anywhere.
  static func checkRefunded(_ shop: inout Shop, orderId: String, answer: JSONValue) throws {
    let key = Identifiers.backOfficeIdempotencyKey(kind: "refund", orderId: orderId, key: "rf-crash")
    #expect(Set(shop.server.requests.filter { $0.path == "/v71/payments/\(payment)/refunds" }.map(\.idempotencyKey)) == [key])
    #expect(shop.server.created(idempotencyKey: key) == 1)
    #expect(shop.server.refundCount == 1)
    #expect(shop.server.paymentCount == 1)
    let store = try shop.store()
    #expect(try store.pendingOperationCount() == 0)
    #expect(try store.stock()["mug"] == 99)
    let order = try #require(try store.order(id: orderId))
    #expect(order.status == .partiallyRefunded)
    #expect(try refunds(order) == [["rf-crash", "TEST000000000002", "settled"]])
    // Asked again, the answer kept under the key.
    #expect(try shop.run([refundLine(orderId)]).answers.first?.compact == answer.compact)
    try shop.checkNoSecret(held: orderId)
  }

  @Test(
    "kill -9 around a refund: after a restart, the replay and its REFUND notification, one refund at Adyen, one restock",
    arguments: Point.allCases, StoreBackend.available)
  func refund(point: Point, backend: StoreBackend) throws {
    var shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let orderId = try #require(try shop.place()["orderId"]?.stringValue)
    let refund = Self.refundLine(orderId)
    try shop.crash(at: point, route: .refunds, line: refund) { store in
      try store.order(id: orderId)?.status == .partiallyRefunded
    }
    let store = try shop.store()
    #expect(try store.stock()["mug"] == (point == .afterCommit ? 99 : 98))
    #expect(shop.server.refundCount == (point == .beforeCall ? 0 : 1))
    // Killed between the two transactions, the refund is pending in the journal.
    #expect(try store.pendingOperationCount() == (point == .afterCommit ? 0 : 1))

    let (answers, stderr) = try shop.run([refund])
    if point != .afterCommit {
      #expect(stderr.contains("pending operations at start: 1 resolved, 0 still pending"), "\(stderr)")
    }
    let answer = try #require(answers.first)
    #expect(answer["result"]?["status"] == .string("succeeded"), "\(answer.compact)")
    #expect(answer["result"]?["orderStatus"] == .string("partially_refunded"), "\(answer.compact)")
    #expect(answer["result"]?["refund"]?["gatewayRefundId"] == .string("TEST000000000002"), "\(answer.compact)")
    // Adyen takes the refund at once and says later how it went.
    #expect(answer["result"]?["refund"]?["status"] == .string("pending"), "\(answer.compact)")
    #expect(try shop.deliver(orderId: orderId).effects == ["AUTHORISATION none", "REFUND refund_succeeded"])
    try Self.checkRefunded(&shop, orderId: orderId, answer: answer)
  }

  enum Kind: String, CaseIterable, CustomStringConvertible {
    case pay, capture, refund
    var description: String { rawValue }
  }

  @Test(
    "Adyen's notification reaching another process before the killed one's call is replayed settles the call, once",
    arguments: Kind.allCases, StoreBackend.available)
  func notifiedBeforeReplay(kind: Kind, backend: StoreBackend) throws {
    var shop = try Shop(backend: backend, capture: kind == .capture ? .manual : .automatic)
    defer { shop.server.shutdown() }
    var placed: JSONValue?
    let (line, route, effect): (String, AdyenTestServer.Route, String)
    switch kind {
    case .pay: (line, route, effect) = (try shop.checkoutLine(), .payments, "AUTHORISATION order_paid")
    case .capture, .refund:
      placed = try shop.place()
      let orderId = try #require(placed?["orderId"]?.stringValue)
      (line, route, effect) =
        kind == .capture
        ? (Self.captureLine(orderId), .captures, "CAPTURE capture_succeeded")
        : (Self.refundLine(orderId), .refunds, "REFUND refund_succeeded")
    }
    _ = shop.server.releaseNotifications()
    // The webhook's process runs all along (its start-up sweep found nothing pending).
    let webhook = try shop.start()
    #expect(try webhook.ask(#"{"jsonrpc":"2.0","id":0,"method":"listProducts"}"#, timeout: 15).contains(#""result""#))
    try shop.crash(at: .afterGatewayActed, route: route, line: line)
    let payload = shop.server.releaseNotifications()
    let notified = try JSONParser.parse(try webhook.ask(AdyenFixture.notificationLine(payload), timeout: 15))
    shop.finish(webhook)
    // The call's answer is not recorded: the item settles the call pending in the journal.
    #expect(Self.effects(notified) == [effect], "\(notified.compact)")
    #expect(try shop.store().pendingOperationCount() == 0)

    // The restart finds nothing pending; the replay is answered from the journal.
    let (answers, stderr) = try shop.run([line])
    #expect(!stderr.contains("pending operations at start"), "\(stderr)")
    let answer = try #require(answers.first)
    let orderId = try #require(placed?["orderId"]?.stringValue ?? answer["result"]?["orderId"]?.stringValue)
    #expect(notified["result"]?["items"]?[0]?["orderId"] == .string(orderId), "\(notified.compact)")
    // Adyen's redelivery changes nothing more.
    #expect(try shop.deliver(payload, orderId: orderId).effects == [effect])
    switch kind {
    case .pay: try Self.checkPaid(&shop, orderId: orderId, line: line, answer: answer)
    case .capture:
      try Self.checkCaptured(&shop, orderId: orderId, total: try #require(placed?["amount"]?.stringValue), answer: answer)
    case .refund:
      #expect(answer["result"]?["status"] == .string("succeeded"), "\(answer.compact)")
      #expect(answer["result"]?["refund"]?["gatewayRefundId"] == .string("TEST000000000002"), "\(answer.compact)")
      try Self.checkRefunded(&shop, orderId: orderId, answer: answer)
    }
  }

  /// The body with its items in the opposite order (each item's signature is its own).
  static func reversed(_ payload: String) throws -> String {
    let body = try JSONParser.parse(payload)
    let items = array(body["notificationItems"])
    return JSONWriter.string(
      JSONValue.object(JSONObject([("live", .string("false")), ("notificationItems", .array(items.reversed()))])))
  }

  @Test("notifications out of order: a CAPTURE before its payment's AUTHORISATION, a REFUND_FAILED before its REFUND")
  func outOfOrder() throws {
    var shop = try Shop(backend: .sqlite, capture: .manual)
    defer { shop.server.shutdown() }
    let placed = try shop.place()
    let orderId = try #require(placed["orderId"]?.stringValue)
    let total = try #require(placed["amount"]?.stringValue)
    let capture =
      #"{"jsonrpc":"2.0","id":3,"method":"captureOrder","params":{"orderId":"\#(orderId)","captureId":"cap-1"}}"#
    #expect(try shop.run([capture]).answers.first?["result"]?["failureCode"] == .string("outcome_pending"))
    let captured = try shop.deliver(try Self.reversed(shop.server.releaseNotifications()), orderId: orderId)
    #expect(captured.effects == ["CAPTURE capture_succeeded", "AUTHORISATION none"])
    #expect(try shop.order(orderId) == .paid)

    let refund =
      #"{"jsonrpc":"2.0","id":4,"method":"refundOrder","params":{"orderId":"\#(orderId)","refundId":"rf-1","amount":"1.00"}}"#
    let (answers, _) = try shop.run([capture, refund])
    #expect(answers.first?["result"]?["status"] == .string("succeeded"), "\(answers.first?.compact ?? "")")
    #expect(answers.last?["result"]?["refund"]?["status"] == .string("pending"), "\(answers.last?.compact ?? "")")
    #expect(shop.server.failModification(pspReference: "TEST000000000003"))
    let refunded = try shop.deliver(try Self.reversed(shop.server.releaseNotifications()), orderId: orderId)
    // The failure is the refund's last word: the REFUND after it moves nothing back.
    #expect(refunded.effects == ["REFUND_FAILED refund_failed", "REFUND none"])
    let store = try shop.store()
    let order = try #require(try store.order(id: orderId))
    #expect(order.status == .paid)
    #expect(try Self.refunds(order) == [["rf-1", "TEST000000000003", "failed"]])
    #expect(try store.pendingOperationCount() == 0)
    #expect(shop.server.payment(Self.payment)?["refunded"] == "0")
    #expect(shop.server.payment(Self.payment)?["captured"] == Self.minor(total))
    #expect(shop.server.captureCount == 1 && shop.server.refundCount == 1)
  }
}
