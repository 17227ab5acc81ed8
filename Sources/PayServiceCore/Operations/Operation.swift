/// Work that must happen exactly once, however often its request is sent, whichever process sends
/// it, and whatever crash comes between: placing an order, capturing, canceling or refunding one.
///
/// An operation has a kind and a key (the client's: a charge token, a captureId) and a fingerprint
/// of its request. `OperationRunner` runs every kind the same way, with the journal (`operation`
/// table) as the one record of keys and answers:
/// 1. **prepare**, in a transaction: what the operation decides on is locked (`lock`); a key
///    recorded before answers with its stored answer (the same fingerprint) or `conflict` (another
///    one); otherwise `prepare` decides. Work that needs no network (the sandbox, a refused
///    request) is done right there, and its answer, when final, is stored under the key in the same
///    transaction. Work that needs the network records what it will send (`Call`) as a pending entry.
/// 2. **call**, with no transaction open: `send` makes the network call.
/// 3. **settle**, in a second transaction: `settle` records the reply, and the entry keeps the
///    answer (or stays pending when no answer came, or goes when the call changed nothing).
///
/// A pending entry is sent again, unchanged, by the same request or by the sweep at start-up
/// (`OperationRunner.sweep`), so a call is never made under a second key. Each kind is declared by
/// the methods that record it (`RPCMethod.operationKinds`; an `OperationMethod` declares its own).
public protocol Operation: Sendable {
  /// The answer, stored under the key once final.
  associatedtype Result: WireValue & Sendable
  /// What the network step sends, and what settling it needs: stored with the pending entry, so
  /// that it can be sent again exactly, by any process.
  associatedtype Call: WireObject & Sendable
  /// What the network step brings back.
  associatedtype Reply: Sendable
  /// What the operation decides on, read locked at the start of each of its transactions.
  associatedtype Subject

  /// The journal's name for this kind of work; never changed once shipped.
  static var kind: String { get }
  /// The client's key: with the kind, what makes the work happen once.
  var key: String { get }
  /// What the work is about (an order id), for the work pending on it; nil when unknown.
  var subject: String? { get }
  /// The request as canonical text: the key reused with another request is `conflict`.
  var fingerprint: String { get }
  /// The error for a key reused with another request.
  var conflict: ServiceError { get }

  /// What `lock` and `prepare` are given: every book of the store (`any StoreTransaction`, by
  /// default), or for a kind whose first step may run optimistically (`isOptimistic`) the books
  /// an optimistic transaction keeps (`any OrderTransaction`), the rest asked for with `locked()`.
  associatedtype Transaction = any StoreTransaction

  /// Reads, locked, what the work decides on (first in each transaction, so that two processes on
  /// the same thing queue here rather than deadlock). Throws when the subject is unknown, if that
  /// is an error.
  static func lock(key: String, subject: String?, _ transaction: Transaction, context: ServiceContext)
    throws -> Subject

  /// A transaction as `lock` and `prepare` take it: as it is, or `locked()` (see `Transaction`).
  static func books(_ transaction: any OrderTransaction) throws -> Transaction

  /// Whether the first transaction may run optimistically (`Store.writeOptimistically`): `lock`
  /// and `prepare` read and write only what `OptimisticReads` checks, so that a decision taken
  /// on unlocked reads is verified when the writes are applied. Undeclared: no, the transaction
  /// takes its locks as it reads.
  static var isOptimistic: Bool { get }

  /// The rows `lock` and `prepare` will read, fetched ahead in one round trip where that saves
  /// some (see `ReadAhead`); nothing by default.
  var readAhead: ReadAhead { get }

  /// Whether the journal may hold the key, judged from the locked subject; the default says yes.
  /// An operation whose subject marks its key's first use (a charge token's `usedAt`) saves the
  /// journal's read for a key never used.
  func mayBeRecorded(_ subject: Subject) -> Bool

  /// Whether `stored`, the fingerprint recorded under the key, is this request's. The default
  /// compares the texts.
  func matches(_ stored: String, _ subject: Subject, context: ServiceContext) throws -> Bool

  /// Decides on a key not recorded before, in the first transaction.
  func prepare(_ subject: Subject, _ transaction: Transaction, context: ServiceContext, now: Int64) throws
    -> Preparation<Result, Call>

  /// What makes the network call, or nil when this process has no way to (no remote gateway).
  static func sender(_ context: ServiceContext) -> (@Sendable (Call) -> PendingCall<Reply>)?

  /// Records the reply, in the second transaction, after `lock`.
  static func settle(
    _ call: Call, reply: Reply, _ subject: Subject, _ transaction: any StoreTransaction, context: ServiceContext,
    now: Int64
  ) throws -> Settlement<Result>

  /// The answer for a pending entry that is not sent again, and why.
  static func unsent(_ call: Call, because reason: UnsentReason, context: ServiceContext) throws -> Result

  /// How long a pending entry may be sent again: a gateway forgets idempotency keys (Stripe after
  /// 24 hours), and a call sent after that could happen twice.
  static var maxResendAgeSeconds: Int64 { get }

  /// The answer as the journal keeps it. By default its JSON; an answer that repeats rows the
  /// work wrote (an order's document) may be kept without them and read back by `result(journal:_:)`.
  static func journal(_ result: Result) -> String

  /// The answer from the journal's text, in the transaction that replays it.
  static func result(journal text: String, _ transaction: any OrderTransaction) throws -> Result
}

extension Operation {
  public static var isOptimistic: Bool { false }

  public var readAhead: ReadAhead { ReadAhead() }

  public func mayBeRecorded(_ subject: Subject) -> Bool { true }

  public func matches(_ stored: String, _ subject: Subject, context: ServiceContext) throws -> Bool {
    stored == fingerprint
  }

  /// Stripe prunes idempotency keys once they are at least 24 hours old.
  public static var maxResendAgeSeconds: Int64 { 23 * 3600 }

  public static func journal(_ result: Result) -> String { JSONWriter.string(result) }

  public static func result(journal text: String, _ transaction: any OrderTransaction) throws -> Result {
    try StoredJSON.read(text, as: Result.self, "\(kind) result")
  }
}

extension Operation where Transaction == any StoreTransaction {
  public static func books(_ transaction: any OrderTransaction) throws -> any StoreTransaction {
    try transaction.locked()
  }
}

extension Operation where Transaction == any OrderTransaction {
  public static func books(_ transaction: any OrderTransaction) -> any OrderTransaction { transaction }
}

/// What the first transaction decided.
public enum Preparation<Result, Call> {
  /// Done in this transaction with nothing to send. A `final` answer is stored under the key (the
  /// entry is settled at once); any other leaves the key unused, so that a corrected request may
  /// use it.
  case done(Result, final: Bool)
  /// Needs the network: the entry is recorded pending with `Call`, which is sent once that is durable.
  case send(Call)
}

/// What the second transaction made of a reply.
public enum Settlement<Result> {
  /// A final answer: stored under the key.
  case settled(Result)
  /// No final answer (no reply, or a refusal that changed nothing and may pass once its cause is
  /// fixed): the entry stays pending, and the same request again sends the same call.
  case pending(Result)
  /// The call changed nothing and never will: the entry goes and the key is unused again.
  case released(Result)
  /// As `released`, and the request is answered with the operation's `conflict` error (the remote
  /// side holds the key for another request).
  case releasedAsConflict
}

/// Why a pending entry is not sent again.
public enum UnsentReason: Error, Sendable, Equatable {
  /// Older than `maxResendAgeSeconds`: its remote side may have forgotten the key.
  case tooOld
  /// This process has no way to send it (no remote gateway configured).
  case noSender
}

/// The call of an operation with no network step: nothing.
public struct NoCall: WireObject, Sendable {
  public init() {}
  public static let shape = ObjectShape<NoCall>(blank: { NoCall() }, [])
}

/// An operation that only its key orders (an event, a notification, a transaction not recorded
/// yet: no row to lock): the same key from two processes at once queues on `lockKey`, and the
/// second reads the first's entry.
public protocol KeyLockedOperation: LocalOperation where Subject == Void {}

extension KeyLockedOperation {
  public static func lock(key: String, subject: String?, _ transaction: any StoreTransaction, context: ServiceContext)
    throws
  {
    try transaction.lockKey(kind, key)
  }
}

/// An operation done entirely in its first transaction: `prepare` always answers `.done`, so its
/// entry is never pending and it has nothing to send or settle. It still gets the journal's key,
/// fingerprint, replay and conflict, like every other kind.
public protocol LocalOperation: Operation where Call == NoCall, Reply == Never {}

extension LocalOperation {
  /// A local operation's entry is settled in the transaction that records it: a pending one is
  /// a store that was changed by hand, and is not answered from.
  public static func unsent(_ call: NoCall, because reason: UnsentReason, context: ServiceContext) throws -> Result {
    throw StoreError.unavailable(reason: "an operation \(kind) is pending, yet this kind is never sent")
  }

  public static func sender(_ context: ServiceContext) -> (@Sendable (NoCall) -> PendingCall<Never>)? { nil }

  public static func settle(
    _ call: NoCall, reply: Never, _ subject: Subject, _ transaction: any StoreTransaction, context: ServiceContext,
    now: Int64
  ) throws -> Settlement<Result> {
    switch reply {}
  }
}
