import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Synchronization
import Testing

/// The journal's three steps for a kind with a network call (`Tally`, against a `TallyRemote`):
/// prepare, send, settle; an answer lost on the way back; the sweep at start-up; keys sent from
/// many threads at once; and a pending entry too old to send again.
@Suite("Operation runner", .serialized)
struct OperationRunnerTests {
  static func context(_ backend: StoreBackend, now: Int64 = TestConfig.now) throws -> ServiceContext {
    try TestConfig.context(backend: backend, now: now)
  }

  static func entry(_ key: String, _ context: ServiceContext) throws -> OperationRow? {
    try context.store.write { try $0.operation(kind: Tally.kind, key: key) }
  }

  @Test("prepare, send, settle: one effect, the answer stored under the key and replayed", arguments: StoreBackend.available)
  func settles(backend: StoreBackend) throws {
    let context = try Self.context(backend)
    let remote = TallyRemote()
    let first = try OperationRunner.run(Tally(remote: remote, key: "k1", amount: 5), context: context)
    #expect(first == TallyResult(status: "added", total: 5))
    #expect(remote.events == ["prepare k1", "send k1", "reply k1", "settle k1"])
    let stored = try #require(try Self.entry("k1", context))
    #expect(stored.state == .settled)
    // The call is never sent again once answered, and is not kept (a charge's holds payment data).
    #expect(stored.request == nil)
    #expect(stored.result == #"{"status":"added","total":5}"#)

    // The same request again: the stored answer, nothing prepared or sent.
    let again = try OperationRunner.run(Tally(remote: remote, key: "k1", amount: 5), context: context)
    #expect(again == first)
    #expect(remote.calls == 1)
    #expect(remote.events.count == 4)
  }

  @Test("the key with another request is its kind's conflict, and nothing is sent", arguments: StoreBackend.available)
  func conflict(backend: StoreBackend) throws {
    let context = try Self.context(backend)
    let remote = TallyRemote()
    _ = try OperationRunner.run(Tally(remote: remote, key: "k1", amount: 5), context: context)
    #expect(throws: ServiceError.idempotencyKeyConflict("tallyId")) {
      try OperationRunner.run(Tally(remote: remote, key: "k1", amount: 6), context: context)
    }
    #expect(remote.calls == 1)
    #expect(remote.total == 5)
  }

  @Test("a refusal decided without the network leaves the key unused", arguments: StoreBackend.available)
  func notFinal(backend: StoreBackend) throws {
    let context = try Self.context(backend)
    let remote = TallyRemote()
    #expect(try OperationRunner.run(Tally(remote: remote, key: "k1", amount: 0), context: context) == TallyResult(status: "refused"))
    #expect(try Self.entry("k1", context) == nil)
    #expect(try OperationRunner.run(Tally(remote: remote, key: "k1", amount: 3), context: context).total == 3)
    #expect(remote.calls == 1)
  }

  @Test("a lost answer leaves the entry pending; the same request sends the same call once more", arguments: StoreBackend.available)
  func lostAnswer(backend: StoreBackend) throws {
    let context = try Self.context(backend)
    let remote = TallyRemote()
    remote.loseNextAnswer(to: "k1")
    let lost = try OperationRunner.run(Tally(remote: remote, key: "k1", amount: 5), context: context)
    #expect(lost == TallyResult(status: "unanswered"))
    let pending = try #require(try Self.entry("k1", context))
    #expect(pending.state == .pending)
    #expect(pending.result == nil)
    #expect(pending.request == #"{"remote":"\#(remote.name)","key":"k1","amount":5}"#)

    let settled = try OperationRunner.run(Tally(remote: remote, key: "k1", amount: 5), context: context)
    #expect(settled == TallyResult(status: "added", total: 5))
    // Sent twice under one key, one effect; prepared once: the second request resent the entry's call.
    #expect(remote.calls == 2)
    #expect(remote.effects == 1)
    #expect(remote.events == ["prepare k1", "send k1", "reply k1", "settle k1", "send k1", "reply k1", "settle k1"])
    #expect(try Self.entry("k1", context)?.state == .settled)
  }

  @Test("the sweep sends what a process left pending and records the answers", arguments: StoreBackend.available)
  func sweep(backend: StoreBackend) throws {
    let context = try Self.context(backend)
    let remote = TallyRemote()
    for key in ["k1", "k2", "k3"] {
      remote.loseNextAnswer(to: key)
      _ = try OperationRunner.run(Tally(remote: remote, key: key, amount: 1), context: context)
    }
    // k3's answer is lost again: it stays pending for the next sweep.
    remote.loseNextAnswer(to: "k3")
    let sweep = try OperationRunner.sweep(context: context, kinds: [Tally.self])
    #expect(sweep == OperationRunner.Sweep(resolved: 2, pending: 1))
    #expect(try Self.entry("k1", context)?.result == #"{"status":"added","total":1}"#)
    #expect(try Self.entry("k3", context)?.state == .pending)
    #expect(try OperationRunner.sweep(context: context, kinds: [Tally.self]) == OperationRunner.Sweep(resolved: 1, pending: 0))
    #expect(remote.effects == 3)
    #expect(remote.total == 3)
    // A kind the sweep is not told of is left alone.
    remote.loseNextAnswer(to: "k4")
    _ = try OperationRunner.run(Tally(remote: remote, key: "k4", amount: 1), context: context)
    #expect(try OperationRunner.sweep(context: context, kinds: []) == OperationRunner.Sweep(resolved: 0, pending: 1))
  }

  @Test("a pending entry older than the kind's resend age is answered unsent, not sent", arguments: StoreBackend.available)
  func tooOld(backend: StoreBackend) throws {
    let context = try Self.context(backend)
    let remote = TallyRemote()
    remote.loseNextAnswer(to: "k1")
    _ = try OperationRunner.run(Tally(remote: remote, key: "k1", amount: 5), context: context)
    let later = ServiceContext(
      config: context.config, storeSource: context.storeSource,
      clock: ServiceClock(pinned: TestConfig.now + Tally.maxResendAgeSeconds + 1))
    #expect(try OperationRunner.run(Tally(remote: remote, key: "k1", amount: 5), context: later) == TallyResult(status: "too_old"))
    #expect(try OperationRunner.sweep(context: later, kinds: [Tally.self]) == OperationRunner.Sweep(resolved: 0, pending: 1))
    #expect(remote.calls == 1)
  }

  @Test("one key from eight threads at once: one effect, one answer", arguments: StoreBackend.available)
  func concurrentKeys(backend: StoreBackend) throws {
    let context = try Self.context(backend)
    let remote = TallyRemote()
    let answers = Mutex<[String: [TallyResult]]>([:])
    DispatchQueue.concurrentPerform(iterations: 16) { index in
      let key = "k\(index % 2)"
      let result = try? OperationRunner.run(Tally(remote: remote, key: key, amount: 1 + index % 2), context: context)
      answers.withLock { $0[key, default: []].append(result ?? TallyResult(status: "threw")) }
    }
    let byKey = answers.withLock { $0 }
    #expect(remote.effects == 2)
    #expect(remote.total == 3)
    for (key, results) in byKey {
      #expect(results.count == 8)
      #expect(Set(results.map(\.total)).count == 1, "\(key): \(results)")
      #expect(results.allSatisfy { $0.status == "added" }, "\(key): \(results)")
    }
  }

  @Test("a local kind's pending entry (a store changed by hand) is a store error, not an answer", arguments: StoreBackend.available)
  func localPending(backend: StoreBackend) throws {
    let context = try Self.context(backend, now: TestConfig.now)
    let params = AdjustStock.Params(adjustmentId: "adj-1", sku: "clock", delta: 1, reason: "recount")
    let operation = AdjustStock.operation(params, context: context)
    _ = try context.store.write { transaction in
      try transaction.insert(
        OperationRow(
          kind: AdjustStock.Adjustment.kind, key: "adj-1", fingerprint: operation.fingerprint, state: .pending,
          subject: nil, request: "{}", result: nil, created: RFC3339.format(TestConfig.now), settled: nil))
    }
    do {
      _ = try OperationRunner.run(operation, context: context)
      Issue.record("a pending local entry was answered")
    } catch StoreError.unavailable(let reason) {
      #expect(reason == "an operation stock is pending, yet this kind is never sent")
    }
  }

  @Test("the sweep knows every kind the methods declare, each once")
  func kinds() {
    #expect(
      OperationRunner.kinds.map { $0.kind } == [
        "order", "stripeEvent", "adyenNotification", "merchant_token_event", "appStoreTransaction", "appStoreNotification",
        "appStoreConsumption", "capture", "cancel", "refund", "stock", "erasure", "agreement_payment", "agreement_cancel",
        "merchant_token_unlink", "wallet_push",
      ])
  }
}
