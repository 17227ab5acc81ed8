import Foundation
@testable import PayServiceCore
import Synchronization

/// A remote service that adds amounts to a tally, idempotently by key, as a gateway does: the
/// same key sent again has no second effect and answers the first effect's total. Its answer can
/// be lost on the way back (the effect still happened), and it records what it was asked, in order.
final class TallyRemote: Sendable {
  private struct State {
    var total = 0
    /// The total each key's effect left.
    var effects: [String: Int] = [:]
    var calls = 0
    /// Keys whose next answer is lost.
    var losing: Set<String> = []
    var events: [String] = []
  }

  private let state = Mutex(State())

  /// The remotes by name: a call names its remote, so that any process (a sweep) can send it.
  private static let registry = Mutex<[String: TallyRemote]>([:])

  let name: String

  init() {
    name = UUID().uuidString
    Self.registry.withLock { $0[name] = self }
  }

  static func named(_ name: String) -> TallyRemote? { registry.withLock { $0[name] } }

  var calls: Int { state.withLock { $0.calls } }
  var effects: Int { state.withLock { $0.effects.count } }
  var total: Int { state.withLock { $0.total } }
  var events: [String] { state.withLock { $0.events } }

  func loseNextAnswer(to key: String) { _ = state.withLock { $0.losing.insert(key) } }

  func record(_ event: String) { state.withLock { $0.events.append(event) } }

  /// Starts a call: its effect happens now, its answer is read at `wait`.
  func send(_ call: TallyCall) -> PendingCall<TallyReply> {
    let reply = state.withLock { state -> TallyReply in
      state.calls += 1
      state.events.append("send \(call.key)")
      let total: Int
      if let earlier = state.effects[call.key] {
        total = earlier
      } else {
        state.total += call.amount
        total = state.total
        state.effects[call.key] = total
      }
      return state.losing.remove(call.key) != nil ? .lost : .added(total: total)
    }
    // A call's reply may be waited for more than once (the executor waits for every call before it
    // settles them): it is read once.
    let read = Once()
    return PendingCall { [self] in
      if read.first() { record("reply \(call.key)") }
      return reply
    }
  }
}

/// True the first time it is asked.
final class Once: Sendable {
  private let asked = Mutex(false)

  func first() -> Bool {
    asked.withLock { asked in
      defer { asked = true }
      return !asked
    }
  }
}

struct TallyCall: WireObject, Sendable {
  var remote = ""
  var key = ""
  var amount = 0

  static let shape = ObjectShape<TallyCall>(
    blank: { TallyCall() },
    [.member("remote", \.remote), .member("key", \.key), .member("amount", \.amount)])
}

enum TallyReply: Sendable {
  case added(total: Int)
  case lost
}

struct TallyResult: MethodResult, WireObject, Equatable {
  var status = ""
  var total = 0

  static let shape = ObjectShape<TallyResult>(
    blank: { TallyResult() }, [.member("status", \.status), .member("total", \.total)])
}

/// An operation of the journal that adds `amount` at a `TallyRemote` once per key.
struct Tally: PayServiceCore.Operation {
  static let kind = "test_tally"

  let remote: TallyRemote
  let key: String
  let amount: Int
  var subject: String? { nil }
  var fingerprint: String { "\(amount)" }
  var conflict: ServiceError { .idempotencyKeyConflict("tallyId") }

  static func lock(key: String, subject: String?, _ transaction: any StoreTransaction, context: ServiceContext) {}

  func prepare(_ subject: Void, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64)
    -> Preparation<TallyResult, TallyCall>
  {
    remote.record("prepare \(key)")
    guard amount > 0 else { return .done(TallyResult(status: "refused"), final: false) }
    return .send(TallyCall(remote: remote.name, key: key, amount: amount))
  }

  static func sender(_ context: ServiceContext) -> (@Sendable (TallyCall) -> PendingCall<TallyReply>)? {
    { call in TallyRemote.named(call.remote)!.send(call) }
  }

  static func settle(
    _ call: TallyCall, reply: TallyReply, _ subject: Void, _ transaction: any StoreTransaction,
    context: ServiceContext, now: Int64
  ) -> Settlement<TallyResult> {
    TallyRemote.named(call.remote)!.record("settle \(call.key)")
    switch reply {
    case .added(let total): return .settled(TallyResult(status: "added", total: total))
    case .lost: return .pending(TallyResult(status: "unanswered"))
    }
  }

  static func unsent(_ call: TallyCall, because reason: UnsentReason, context: ServiceContext) -> TallyResult {
    TallyResult(status: reason == .tooOld ? "too_old" : "no_sender")
  }
}

/// A method that is one `Tally`: `tally {tallyId, amount, remote}`.
enum TallyMethod: OperationMethod {
  static let name = "tally"
  static let documentation = MethodDocumentation(
    summary: "Add to a tally once per tallyId.", description: "A test method.", errors: [], readOnly: false,
    idempotent: true)
  static let runsAsNotification = false
  static let commitsInGroups = true

  struct Params: Sendable {
    var tallyId = ""
    var amount = 0
    var remote = ""
  }

  static let params = ObjectShape<Params>(
    blank: { Params() },
    [.member("tallyId", \.tallyId), .member("amount", \.amount), .member("remote", \.remote)])

  typealias Result = TallyResult

  static func operation(_ params: Params, context: ServiceContext) throws -> Tally {
    guard let remote = TallyRemote.named(params.remote) else { throw RPCError.invalidRequest("no remote \(params.remote)") }
    return Tally(remote: remote, key: params.tallyId, amount: params.amount)
  }
}
