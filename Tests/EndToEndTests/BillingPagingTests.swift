import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// `payservice billing run --limit N` over more payments than one call makes: each runBilling call
/// answers at most N payments and a cursor, the command goes on with it until nothing is due and
/// prints one result line per call; agreements behind by several periods are charged each period
/// once across calls; and a run killed with SIGKILL between calls is finished by the next run, each
/// payment charged once.
@Suite("Billing runs paged by a limit, and resumed after a kill", .serialized)
struct BillingPagingTests {
  /// Ten subscriptions checked out on 1 December (due 1 January, 1 February, 1 March) and ten on
  /// 15 February (due 15 March); a run on 31 March owes 40 payments.
  static let early = "2026-12-01T10:00:00Z"
  static let late = "2027-02-15T10:00:00Z"
  static let run = "2027-03-31T12:00:00Z"

  /// The lines a run printed: (payments, cursor given) per call, and its stderr's progress lines.
  static func pages(_ results: [JSONValue]) -> [String] {
    results.map { result in
      "\(result["payments"]?.arrayValue?.count ?? -1) \(result["cursor"] == .null ? "last" : "more")"
    }
  }

  @Test(
    "four runs at once, each with its own --shard of four: each charges only its part (by the id's last hex digit), together every payment due, each once; a second round charges nothing",
    arguments: StoreBackend.available)
  func shardedRunsAtOnce(backend: StoreBackend) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    server.setClock(RFC3339.parse(Self.early)!)
    let shop = try BillingShop(backend: backend, stripe: server, maxConcurrentCalls: 4)
    let checkouts = try shop.checkout(at: Self.early, Array(repeating: .init("tea-club", paymentData: "pm_card_visa"), count: 24))
    let ids = try checkouts.map(BillingShop.agreementId)
    let january = "2027-01-01T12:00:00Z"
    server.setClock(RFC3339.parse(january)!)
    server.setLatency(milliseconds: 20)
    let runs = try (0..<4).map { try BillingConcurrencyTests.BackgroundRun(shop, at: january, ["--shard", "\($0)/4", "--limit", "5"]) }
    let ended = try runs.map { try $0.finish() }
    server.setLatency(milliseconds: 0)
    // Part i of 4: the ids whose last hex digit leaves i divided by 4.
    func inPart(_ index: Int) -> (String) -> Bool { { id in Int(String(id.suffix(1)), radix: 16).map { $0 % 4 == index } ?? false } }
    var charged: [String] = []
    for (index, run) in ended.enumerated() {
      #expect(run.status == 0, "\(run.stderr)")
      let paid = run.results.flatMap { $0["payments"]?.arrayValue ?? [] }.compactMap { $0["agreementId"]?.stringValue }
      #expect(!paid.isEmpty && paid.allSatisfy(inPart(index)), "\(index): \(paid)")
      #expect(Set(paid) == Set(ids.filter(inPart(index))), "\(index)")
      charged += paid
    }
    #expect(charged.count == 24 && Set(charged) == Set(ids))
    let renewals = BillingConcurrencyTests.renewals(server)
    for id in ids { #expect(renewals[id]?.map(\.idempotencyKey) == ["payservice-agreement-\(id)-period-1-attempt-1"], "\(id)") }
    for index in 0..<4 {
      let again = try shop.billingRun(at: january, ["--shard", "\(index)/4"])
      #expect(again.status == 0 && Self.pages(again.results) == ["0 last"])
    }
    let refused = try shop.billingRun(at: january, ["--shard", "4/4"])
    #expect(refused.status == 64 && refused.results.isEmpty)
    #expect(refused.stderr.contains("--shard must be INDEX/PARTS, PARTS 1 to 16 and INDEX 0 to PARTS - 1 (such as 0/4), got 4/4"))
  }

  @Test(
    "40 payments due, 12 a call: 4 calls of 12, 12, 12 and 4, those behind by several periods charged each period once; the next run charges nothing",
    arguments: StoreBackend.available)
  func pagedAcrossPeriods(backend: StoreBackend) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    server.setClock(RFC3339.parse(Self.early)!)
    let shop = try BillingShop(backend: backend, stripe: server, maxConcurrentCalls: 32)
    let early = try shop.checkout(at: Self.early, Array(repeating: .init("tea-club", paymentData: "pm_card_visa"), count: 10))
    server.setClock(RFC3339.parse(Self.late)!)
    let late = try shop.checkout(at: Self.late, Array(repeating: .init("tea-club", paymentData: "pm_card_visa"), count: 10))
    let earlyIds = try early.map(BillingShop.agreementId)
    let lateIds = try late.map(BillingShop.agreementId)

    server.setClock(RFC3339.parse(Self.run)!)
    let paged = try shop.billingRun(at: Self.run, ["--limit", "12"])
    #expect(paged.status == 0, "\(paged.stderr)")
    // The first call charges the ten early ones' January and two late ones; the ten early ones,
    // due again behind where the call stopped, go first in the next call (its cursor says so).
    #expect(Self.pages(paged.results) == ["12 more", "12 more", "12 more", "4 last"])
    let payments = paged.results.flatMap { $0["payments"]?.arrayValue ?? [] }
    #expect(payments.allSatisfy { $0["status"] == .string("succeeded") && $0["amount"] == .string("10.80") })
    #expect(paged.results.map { $0["succeeded"]?.compact ?? "-" } == ["12", "12", "12", "4"])
    #expect(
      paged.results.map { $0["charged"]?.compact ?? "-" } == [
        #"[{"currencyCode":"USD","amount":"129.60"}]"#, #"[{"currencyCode":"USD","amount":"129.60"}]"#,
        #"[{"currencyCode":"USD","amount":"129.60"}]"#, #"[{"currencyCode":"USD","amount":"43.20"}]"#,
      ])
    #expect(Set(paged.results.compactMap { $0["until"]?.stringValue }) == [Self.run])
    let periods = Dictionary(grouping: payments) { $0["agreementId"]?.stringValue ?? "" }
      .mapValues { $0.map { $0["period"]?.compact ?? "-" } }
    for id in earlyIds { #expect(periods[id] == ["1", "2", "3"], "\(id)") }
    for id in lateIds { #expect(periods[id] == ["1"], "\(id)") }
    let progress = paged.stderr.split(separator: "\n").map { $0.replacingOccurrences(of: #"; [0-9.]+ s;"#, with: ";", options: .regularExpression) }
    #expect(
      progress == [
        "payservice billing run: 1 call, 12 payments: 12 succeeded, 0 failed, 0 pending, 0 skipped, 0 ended; going on",
        "payservice billing run: 2 calls, 24 payments: 24 succeeded, 0 failed, 0 pending, 0 skipped, 0 ended; going on",
        "payservice billing run: 3 calls, 36 payments: 36 succeeded, 0 failed, 0 pending, 0 skipped, 0 ended; going on",
        "payservice billing run: 4 calls, 40 payments: 40 succeeded, 0 failed, 0 pending, 0 skipped, 0 ended; done",
      ])

    // Charged once each, at Stripe and in the store.
    let renewals = BillingConcurrencyTests.renewals(server)
    for id in earlyIds {
      #expect(renewals[id]?.map(\.idempotencyKey) == (1...3).map { "payservice-agreement-\(id)-period-\($0)-attempt-1" })
    }
    for id in lateIds { #expect(renewals[id]?.map(\.idempotencyKey) == ["payservice-agreement-\(id)-period-1-attempt-1"]) }
    #expect(try BillingConcurrencyTests.renewalOrders(shop).values.reduce(0) { $0 + $1.count } == 40)

    let again = try shop.billingRun(at: Self.run, ["--limit", "12"])
    #expect(again.status == 0)
    #expect(Self.pages(again.results) == ["0 last"])
    #expect(server.paymentIntentCount == 20 + 40)
  }

  @Test(
    "a run of 5 a call killed with SIGKILL while Stripe holds a payment it executed: the next run, 5 a call, charges the rest, each once",
    arguments: StoreBackend.available)
  func killedBetweenCalls(backend: StoreBackend) throws {
    let count = 40
    let server = try StripeTestServer()
    defer { server.shutdown() }
    server.setClock(RFC3339.parse(BillingConcurrencyTests.checkoutAt)!)
    let shop = try BillingShop(backend: backend, stripe: server, maxConcurrentCalls: 32, requestTimeoutSeconds: 10)
    let placed = try shop.checkout(
      at: BillingConcurrencyTests.checkoutAt, Array(repeating: .init("tea-club", paymentData: "pm_card_visa"), count: count))
    let ids = try placed.map(BillingShop.agreementId)
    let now = BillingConcurrencyTests.firstRun
    server.setClock(RFC3339.parse(now)!)

    // Once a dozen payments reached Stripe (past the second call), Stripe holds the next answer;
    // the rest of its call's batch reaches Stripe, then the run is killed.
    server.setLatency(milliseconds: 50)
    let killed = try BillingConcurrencyTests.BackgroundRun(shop, at: now, ["--limit", "5"])
    let deadline = Date().addingTimeInterval(30)
    while (BillingConcurrencyTests.renewals(server).values.reduce(0) { $0 + $1.count }) < 12, killed.process.isRunning,
      Date() < deadline
    {
      usleep(1000)
    }
    let gate = StripeTestServer.Gate()
    server.inject(.holdAfterExecuting(gate), on: .createPaymentIntent)
    #expect(gate.waitUntilReached(timeout: 60), "no payment reached the hold")
    var made = server.paymentIntentCount
    while true {
      usleep(300_000)
      if server.paymentIntentCount == made { break }
      made = server.paymentIntentCount
    }
    kill(killed.process.processIdentifier, SIGKILL)
    let end = try killed.finish()
    gate.release()
    server.setLatency(milliseconds: 0)
    #expect(end.status == SIGKILL)
    // Each call it finished printed its line, five payments and a cursor each.
    #expect(end.results.count >= 2)
    #expect(Self.pages(end.results) == Array(repeating: "5 more", count: end.results.count))

    let store = try shop.backend.open(shop.database)
    let charged = BillingConcurrencyTests.renewals(server).values.reduce(0) { $0 + $1.count }
    let recorded = try BillingConcurrencyTests.renewalOrders(shop).values.reduce(0) { $0 + $1.count }
    let pending = try store.pendingOperationCount()
    #expect(pending >= 1)
    #expect(charged == recorded + pending)
    #expect(recorded >= end.results.count * 5)
    #expect(charged < count)

    // The next run sends the pending payments again under their keys (Stripe replays them) and
    // charges the rest once, five a call.
    let rerun = try shop.billingRun(at: now, ["--limit", "5"])
    #expect(rerun.status == 0, "\(rerun.stderr)")
    let left = count - recorded
    let calls = (left + 4) / 5
    #expect(Self.pages(rerun.results) == Array(repeating: "5 more", count: calls - 1) + ["\(left - 5 * (calls - 1)) last"])
    #expect(rerun.results.map { Int($0["succeeded"]?.compact ?? "") ?? -1 }.reduce(0, +) == left)
    let replayed = server.requests.filter { $0.path == "/v1/payment_intents" && $0.replayed }
    #expect(replayed.count == pending)
    try BillingConcurrencyTests.checkExactlyOnce(
      ids, periods: 1, server: server, shop: shop, nextPaymentAt: "2027-02-01T10:00:00Z")
  }
}
