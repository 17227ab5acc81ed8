import Synchronization

/// Work a change records for after it is durable rather than a request asks for: a push to a
/// device, the unlinking of a merchant token. Its entry is recorded pending in the change's own
/// transaction (`RecordedCalls.record`), so that the change and its call are durable together,
/// and sent once that transaction is: by the executor after its answers, by a one-shot call after
/// its one (`RecordedCalls.sendRecorded`), by the sweep at the next start when a crash came
/// between, and by `resolvePending`. Sending one again is harmless at the remote side, so none is
/// lost and each is sent at most once more than it should be.
public protocol RecordedOperation: Operation where Subject == Void {}

extension RecordedOperation {
  public static func lock(key: String, subject: String?, _ transaction: any StoreTransaction, context: ServiceContext)
    throws
  {
    try transaction.lockKey(kind, key)
  }
}

/// The entries this process recorded (`RecordedOperation`) and has not sent yet, each sent once
/// the transaction that recorded it is durable.
public final class RecordedCalls: Sendable {
  private let recorded = Mutex<[(kind: String, key: String)]>([])

  public init() {}

  /// Records `call` pending under `key` (its own fingerprint) in `transaction`, to be sent once
  /// the transaction commits; false when the journal holds the key already (nothing recorded).
  @discardableResult
  public func record<Op: RecordedOperation>(
    _: Op.Type, _ call: Op.Call, key: String, subject: String?, _ transaction: any StoreTransaction, now: Int64
  ) throws -> Bool {
    let inserted = try transaction.insert(
      OperationRow(
        kind: Op.kind, key: key, fingerprint: key, state: .pending, subject: subject, request: JSONWriter.string(call),
        result: nil, created: RFC3339.format(now), settled: nil))
    if inserted { recorded.withLock { $0.append((Op.kind, key)) } }
    return inserted
  }

  /// Sends the entries recorded since the last time, each at most once, and records what came of
  /// them. A key whose transaction was rolled back is not in the journal and is skipped; one
  /// settled meanwhile (by another process's sweep) too. Throws when the store fails: the entries
  /// stay pending in the journal, and the next start's sweep sends them.
  public func sendRecorded(context: ServiceContext) throws {
    // A transaction that ran again (a group commit's, an optimistic one's) noted its keys again.
    var seen = Set<String>()
    let noted = recorded.withLock { noted in
      defer { noted = [] }
      return noted
    }.filter { seen.insert("\($0.kind)\u{0}\($0.key)").inserted }
    guard !noted.isEmpty else { return }
    let now = context.clock.now()
    let entries = try context.store.write { transaction in
      try noted.compactMap { try transaction.operation(kind: $0.kind, key: $0.key) }
    }
    let resumed = try entries.filter { $0.state == .pending }.compactMap { entry -> (any Resumed)? in
      guard let kind = OperationRunner.kinds.first(where: { $0.kind == entry.kind }) else { return nil }
      return try kind.resume(entry, now: now, context: context)
    }
    try OperationRunner.complete(resumed)
  }
}
