import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// Issue 36's exactly-once acceptance test: 200 subscriptions due, 4 `payservice billing run`
/// processes started at once on one store (a SQLite file; a PostgreSQL database when a server is
/// given) charging through the Stripe test server; then a run killed with SIGKILL while Stripe
/// holds an answer, and run again. Each period is charged exactly once, counted at the test server
/// (by the agreement's metadata and the idempotency key) and in the store (one renewal order each).
@Suite("Billing runs at once, and one killed: each period charged exactly once", .serialized)
struct BillingConcurrencyTests {
  static let count = 200
  static let checkoutAt = "2026-12-01T10:00:00Z"
  /// Period 1 of every subscription is due at 2027-01-01T10:00:00Z, period 2 at 2027-02-01T10:00:00Z.
  static let firstRun = "2027-01-01T12:00:00Z"
  static let crashRun = "2027-02-01T12:00:00Z"

  enum Hold {
    /// Stripe executes the payment, then holds its answer.
    case afterExecuting
    /// Stripe holds the payment unexecuted.
    case beforeExecuting
  }

  /// Period `period` of every agreement is due at `now`: a billing run is killed (SIGKILL) once
  /// 64 of its payments reached Stripe and Stripe holds one more (`hold`), with the rest of that
  /// payment's batch at Stripe; then a run at the same time charges what is left, each payment
  /// once (the killed run's pending payments sent again under their keys), and another charges nothing.
  static func killAndRunAgain(
    _ ids: [String], period: Int, at now: String, hold: Hold, server: StripeTestServer, shop: BillingShop
  ) throws {
    let before = count * (period - 1)
    server.setClock(RFC3339.parse(now)!)
    server.setLatency(milliseconds: 50)
    let killed = try BackgroundRun(shop, at: now)
    let deadline = Date().addingTimeInterval(30)
    while (renewals(server).values.reduce(0) { $0 + $1.count }) < before + 64, killed.process.isRunning, Date() < deadline {
      usleep(1000)
    }
    let gate = StripeTestServer.Gate()
    server.inject(hold == .afterExecuting ? .holdAfterExecuting(gate) : .holdBeforeExecuting(gate), on: .createPaymentIntent)
    #expect(gate.waitUntilReached(timeout: 60), "no payment reached the hold")
    // The rest of the held payment's batch reaches Stripe; then nothing more happens.
    var made = server.paymentIntentCount
    while true {
      usleep(300_000)
      let now = server.paymentIntentCount
      if now == made { break }
      made = now
    }
    kill(killed.process.processIdentifier, SIGKILL)
    let end = try killed.finish()
    #expect(end.status == SIGKILL)
    // A payment held unexecuted is dropped when the killed process's connection closes: it must
    // never run, so its gate stays shut. One held after executing has run; let the server finish with it.
    if hold == .afterExecuting { gate.release() }
    server.setLatency(milliseconds: 0)

    // Stripe charged the payments the run sent (but the one it held unexecuted); the store
    // recorded some, the rest are pending in its journal.
    let store = try shop.backend.open(shop.database)
    let charged = renewals(server).values.reduce(0) { $0 + $1.count } - before
    let recorded = try renewalOrders(shop).values.reduce(0) { $0 + $1.count } - before
    let pending = try store.pendingOperationCount()
    let unexecuted = hold == .beforeExecuting ? 1 : 0
    print(
      "BillingConcurrencyTests[\(shop.backend)]: period \(period) killed (\(hold)) after \(charged) payments at Stripe: \(recorded) recorded, \(pending) pending"
    )
    #expect(pending >= 1)
    #expect(charged == recorded + pending - unexecuted)
    #expect(charged < count)

    // Run again: the pending payments are sent again under their keys (Stripe replays those it
    // executed), the rest charged once; this run reports every payment the killed one did not record.
    let rerun = try shop.billingRun(at: now)
    #expect(rerun.status == 0, "\(rerun.result.compact)")
    #expect(rerun.result["succeeded"] == .number(String(count - recorded)), "\(rerun.result.compact)")
    #expect(rerun.result["payments"]?.arrayValue?.count == count - recorded)
    let next = RFC3339.format(BillingPlan.Interval(unit: .month, count: 1).advance(RFC3339.parse(now)! - 7200))
    try checkExactlyOnce(ids, periods: period, server: server, shop: shop, nextPaymentAt: next)
    let replayed = server.requests.filter {
      $0.path == "/v1/payment_intents" && $0.replayed && ($0.idempotencyKey ?? "").hasSuffix("-period-\(period)-attempt-1")
    }
    #expect(replayed.count == pending - unexecuted)
    // And once more: nothing.
    let last = try shop.billingRun(at: now)
    #expect(last.status == 0)
    #expect(last.result["payments"] == .array([]))
  }

  /// A `payservice billing run` started in the background, its output going to files.
  final class BackgroundRun {
    let process = Process()
    let directory = TestPaths.temporaryDirectory()

    init(_ shop: BillingShop, at now: String, _ more: [String] = []) throws {
      process.executableURL = URL(fileURLWithPath: TestPaths.payserviceBinary)
      process.arguments = ["billing", "run"] + shop.arguments(at: now) + more
      process.environment = shop.environment
      for name in ["stdout", "stderr"] {
        FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: nil)
      }
      process.standardInput = FileHandle.nullDevice
      process.standardOutput = try FileHandle(forWritingTo: directory.appendingPathComponent("stdout"))
      process.standardError = try FileHandle(forWritingTo: directory.appendingPathComponent("stderr"))
      try process.run()
    }

    /// Waits for the end: the exit status, the first result printed (null when none), and every
    /// result printed (one line each runBilling call).
    func finish() throws -> (status: Int32, result: JSONValue, stderr: String, results: [JSONValue]) {
      process.waitUntilExit()
      let out = try String(contentsOf: directory.appendingPathComponent("stdout"), encoding: .utf8)
      let err = try String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)
      let results = try out.split(separator: "\n").map { try JSONParser.parse(String($0)) }
      return (process.terminationStatus, results.first ?? .null, err, results)
    }
  }

  /// The agreements' off-session PaymentIntents at the test server, by agreement.
  static func renewals(_ server: StripeTestServer) -> [String: [StripeTestServer.PaymentIntentRecord]] {
    Dictionary(grouping: server.paymentIntentRecords().filter(\.offSession)) { $0.metadata["agreement_id"] ?? "" }
  }

  /// The store's renewal orders (an agreement's later payments), by agreement.
  static func renewalOrders(_ shop: BillingShop) throws -> [String: [OrderSummaryRow]] {
    Dictionary(grouping: try shop.orders().filter { $0.agreementId != nil }) { $0.agreementId! }
  }

  /// Each agreement charged for periods 1 through `periods` exactly once each: one succeeded
  /// off-session PaymentIntent per period at the server, under its period's key (made once), and
  /// one renewal order per period in the store, its agreement moved on.
  static func checkExactlyOnce(
    _ ids: [String], periods: Int, server: StripeTestServer, shop: BillingShop, nextPaymentAt: String
  ) throws {
    let byAgreement = renewals(server)
    #expect(byAgreement.count == ids.count)
    #expect(byAgreement.values.reduce(0) { $0 + $1.count } == ids.count * periods)
    let orders = try renewalOrders(shop)
    #expect(orders.values.reduce(0) { $0 + $1.count } == ids.count * periods)
    let store = try shop.backend.open(shop.database)
    for id in ids {
      let intents = byAgreement[id] ?? []
      let keys = (1...periods).map { "payservice-agreement-\(id)-period-\($0)-attempt-1" }
      #expect(intents.map(\.idempotencyKey) == keys, "\(id)")
      #expect(intents.map(\.status) == Array(repeating: "succeeded", count: periods), "\(id)")
      #expect(intents.map(\.amount) == Array(repeating: 1080, count: periods), "\(id)")
      for key in keys { #expect(server.paymentIntentsCreated(idempotencyKey: key) == 1, "\(key)") }
      #expect(orders[id]?.count == periods, "\(id)")
      #expect(orders[id]?.allSatisfy { $0.status == .paid && $0.amountMinor == 1080 } == true, "\(id)")
      let stored = try #require(try store.agreement(id: id))
      #expect(stored.row.status == .active)
      #expect(stored.row.period == periods + 1)
      #expect(stored.row.attempt == 0)
      #expect(stored.row.nextPaymentAt == RFC3339.parse(nextPaymentAt))
      #expect(stored.events.filter { $0.kind == .paid }.map(\.period) == (1...periods).map { Optional($0) }, "\(id)")
      #expect(stored.events.count == 1 + periods, "\(id)")
    }
    #expect(try store.pendingOperationCount() == 0)
    #expect(try store.stock()["tea-club"] == 1000 - ids.count * (1 + periods))
  }

  @Test(
    "200 subscriptions due: 4 billing runs at once charge each period once, each reported by one run; 4 more charge nothing; a run killed with SIGKILL while Stripe holds a payment (executed, then unexecuted), then run again, charges each next period once",
    arguments: StoreBackend.available)
  func fourRunsAtOnceThenKill(backend: StoreBackend) throws {
    let began = Date()
    let server = try StripeTestServer()
    defer { server.shutdown() }
    server.setClock(RFC3339.parse(Self.checkoutAt)!)
    let shop = try BillingShop(backend: backend, stripe: server, maxConcurrentCalls: 32, requestTimeoutSeconds: 10)

    // 200 checkouts (each a Customer and a PaymentIntent that keeps its card).
    let placed = try shop.checkout(
      at: Self.checkoutAt, Array(repeating: .init("tea-club", paymentData: "pm_card_visa"), count: Self.count))
    let ids = try placed.map(BillingShop.agreementId)
    #expect(Set(ids).count == Self.count)
    #expect(server.paymentIntentCount == Self.count)
    let checkedOut = Date()

    // 4 runs at once.
    server.setClock(RFC3339.parse(Self.firstRun)!)
    let runs = try (0..<4).map { _ in try BackgroundRun(shop, at: Self.firstRun) }
    let finished = try runs.map { try $0.finish() }
    // Each payment is reported by the run that charged it, once: a payment another run charged
    // first is that run's to report.
    var charged: [String] = []
    for run in finished {
      #expect(run.status == 0, "\(run.result.compact) \(run.stderr)")
      let payments = run.result["payments"]?.arrayValue ?? []
      #expect(payments.allSatisfy { $0["status"] == .string("succeeded") && $0["period"] == .number("1") }, "\(run.result.compact)")
      #expect(run.result["succeeded"] == .number(String(payments.count)))
      charged += payments.compactMap { $0["agreementId"]?.stringValue }
    }
    print(
      "BillingConcurrencyTests[\(backend)]: 4 runs: exit \(finished.map(\.status)), succeeded \(finished.map { $0.result["succeeded"]?.compact ?? "-" }), pending \(finished.map { $0.result["pending"]?.compact ?? "-" })"
    )
    #expect(charged.sorted() == ids.sorted())
    try Self.checkExactlyOnce(ids, periods: 1, server: server, shop: shop, nextPaymentAt: "2027-02-01T10:00:00Z")
    let firstRound = Date()

    // 4 more at once, an hour later: nothing is due.
    server.setClock(RFC3339.parse(Self.firstRun)! + 3600)
    let again = try (0..<4).map { _ in try BackgroundRun(shop, at: "2027-01-01T13:00:00Z") }.map { try $0.finish() }
    for run in again {
      #expect(run.status == 0, "\(run.stderr)")
      #expect(run.result["payments"] == .array([]), "\(run.result.compact)")
    }
    #expect(server.paymentIntentCount == Self.count * 2)

    // A month later, a run killed while Stripe holds the answer to one of its payments (it
    // charged it); the month after, one killed while Stripe holds one unexecuted (dropped when the
    // killed process's connection closes). Each run again.
    try Self.killAndRunAgain(ids, period: 2, at: Self.crashRun, hold: .afterExecuting, server: server, shop: shop)
    try Self.killAndRunAgain(ids, period: 3, at: "2027-03-01T12:00:00Z", hold: .beforeExecuting, server: server, shop: shop)
    #expect(server.paymentIntentCount == Self.count * 4)

    let done = Date()
    print(
      "BillingConcurrencyTests[\(backend)]: checkouts \(String(format: "%.1f", checkedOut.timeIntervalSince(began))) s, 4 runs \(String(format: "%.1f", firstRound.timeIntervalSince(checkedOut))) s, total \(String(format: "%.1f", done.timeIntervalSince(began))) s"
    )
  }
}
