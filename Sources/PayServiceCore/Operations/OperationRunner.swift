import Synchronization

/// Runs every `Operation` through the journal, in the same three steps (see `Operation`): prepare
/// in a transaction, call with none open, settle in a second one; and at start-up sends again what
/// a previous process left pending (`sweep`).
public enum OperationRunner {
  /// Every kind of operation, for the sweep: the kinds the methods declare (`RPCMethod.operationKinds`),
  /// each once. A pending entry of a kind not listed is left alone.
  public static let kinds: [any Operation.Type] = {
    var kinds: [any Operation.Type] = []
    for method in MethodRegistry.methods + MethodRegistry.backOfficeMethods {
      for kind in method.operationKinds where !kinds.contains(where: { $0.kind == kind.kind }) { kinds.append(kind) }
    }
    return kinds
  }()

  /// How far `start` took a request: answered, or recorded as pending with its call still to make.
  public enum Started<Op: Operation> {
    case answered(Op.Result)
    /// The journal's stored answer: an earlier request, or another process, did the work under
    /// this key.
    case recorded(Op.Result)
    case inFlight(InFlight<Op>)
  }

  /// Runs `operation` to its answer: `start`, then the call and the settlement when it needs them.
  public static func run<Op: Operation>(_ operation: Op, context: ServiceContext) throws -> Op.Result {
    switch try start(operation, context: context) {
    case .answered(let result), .recorded(let result): return result
    case .inFlight(let inFlight): return try inFlight.finish()
    }
  }

  /// Step 1: the first transaction. Returns the answer when there is one already (stored under the
  /// key, or decided without the network); otherwise the entry is pending (recorded now, or by an
  /// earlier request that got no answer) and its call is returned unsent: send it once the
  /// transaction is durable (a group commit may end after this returns).
  public static func start<Op: Operation>(_ operation: Op, context: ServiceContext) throws -> Started<Op> {
    typealias Step = PreparedStep<Op>
    let now = context.clock.now()
    let nowText = RFC3339.format(now)
    let prepare = { (transaction: any OrderTransaction) throws -> Step in
      let books = try Op.books(transaction)
      let subject = try Op.lock(key: operation.key, subject: operation.subject, books, context: context)
      if operation.mayBeRecorded(subject), let entry = try transaction.operation(kind: Op.kind, key: operation.key) {
        guard try operation.matches(entry.fingerprint, subject, context: context) else { throw operation.conflict }
        switch entry.state {
        case .settled: return .recorded(try result(of: entry, as: Op.self, transaction))
        case .pending:
          let (call, request) = try call(of: entry, as: Op.self)
          return .send(call, request: request, created: entry.created)
        }
      }
      let entry = { (state: OperationRow.State, request: String?, result: String?) in
        OperationRow(
          kind: Op.kind, key: operation.key, fingerprint: operation.fingerprint, state: state,
          subject: operation.subject, request: request, result: result, created: nowText,
          settled: state == .settled ? nowText : nil)
      }
      switch try operation.prepare(subject, books, context: context, now: now) {
      case .done(let result, let final):
        // Another process recorded the key meanwhile (for another subject: the same subject's
        // requests queue on its lock). Throwing undoes what `prepare` wrote.
        if final, try !transaction.insert(entry(.settled, nil, Op.journal(result))) { throw operation.conflict }
        return .answered(result)
      case .send(let call):
        let request = JSONWriter.string(call)
        guard try transaction.insert(entry(.pending, request, nil)) else { throw operation.conflict }
        return .send(call, request: request, created: nowText)
      }
    }
    let step =
      Op.isOptimistic
      ? try context.store.writeOptimistically(readAhead: operation.readAhead, prepare)
      : try context.store.write { try prepare($0) }
    switch step {
    case .answered(let result): return .answered(result)
    case .recorded(let result): return .recorded(result)
    case .send(let call, let request, let created):
      switch sendable(Op.self, created: created, now: now, context: context) {
      case .failure(let reason): return .answered(try Op.unsent(call, because: reason, context: context))
      case .success(let sender):
        return .inFlight(
          InFlight(
            key: operation.key, subject: operation.subject, call: call, request: request, conflict: operation.conflict,
            sender: sender, context: context))
      }
    }
  }

  /// What sends a pending entry created at `created`, or why it is not sent.
  static func sendable<Op: Operation>(_: Op.Type, created: String, now: Int64, context: ServiceContext)
    -> Swift.Result<@Sendable (Op.Call) -> PendingCall<Op.Reply>, UnsentReason>
  {
    guard let createdAt = RFC3339.parse(created), now - createdAt <= Op.maxResendAgeSeconds else {
      return .failure(.tooOld)
    }
    guard let sender = Op.sender(context) else { return .failure(.noSender) }
    return .success(sender)
  }

  /// A pending entry's call, started at most once, and what settles it.
  public final class InFlight<Op: Operation>: Sendable {
    let key: String
    let subject: String?
    let call: Op.Call
    /// The call's text as the entry holds it: settling checks the entry still holds this call.
    let request: String
    let conflict: ServiceError?
    private let sender: @Sendable (Op.Call) -> PendingCall<Op.Reply>
    private let context: ServiceContext
    private let pending = Mutex<PendingCall<Op.Reply>?>(nil)

    init(
      key: String, subject: String?, call: Op.Call, request: String, conflict: ServiceError?,
      sender: @escaping @Sendable (Op.Call) -> PendingCall<Op.Reply>, context: ServiceContext
    ) {
      self.key = key
      self.subject = subject
      self.call = call
      self.request = request
      self.conflict = conflict
      self.sender = sender
      self.context = context
    }

    /// Step 2: starts the call (once), with no transaction open.
    public func send() {
      pending.withLock { pending in
        if pending == nil { pending = sender(call) }
      }
    }

    /// The reply, waited for (the call is sent first if it was not).
    public func reply() -> Op.Reply {
      send()
      return pending.withLock { $0! }.wait()
    }

    /// Step 3: waits for the reply and records it in the second transaction.
    public func finish() throws -> Op.Result {
      try settle().result
    }

    /// As `finish`, and whether the answer is the journal's: another request or process recorded
    /// it meanwhile, from a reply to this same call (`recorded`).
    public func finishRecorded() throws -> (result: Op.Result, recorded: Bool) {
      let settled = try settle()
      return (settled.result, settled.entry == .recorded)
    }

    /// What became of the entry when its reply was recorded.
    enum Entry: Equatable {
      /// The answer is kept under the key.
      case settled
      /// No final answer: still pending.
      case pending
      /// The call changed nothing: the entry went, the key is unused again.
      case released
      /// Another request or process recorded the answer meanwhile (this is it).
      case recorded
    }

    /// The answer, and what became of the entry.
    func settle() throws -> (result: Op.Result, entry: Entry) {
      let reply = reply()
      let now = context.clock.now()
      let nowText = RFC3339.format(now)
      typealias Outcome = SettledStep<Op.Result, Entry>
      let (key, subject, call, request, context) = (self.key, self.subject, self.call, self.request, self.context)
      let outcome = try context.store.write { transaction -> Outcome in
        let locked = try Op.lock(key: key, subject: subject, Op.books(transaction), context: context)
        // A settled entry keeps no call (`StoreSQL.settleOperation`): its answer is this key's. A
        // pending one must still hold this call.
        guard let entry = try transaction.operation(kind: Op.kind, key: key), entry.state == .settled || entry.request == request
        else {
          throw StoreError.unavailable(
            reason: "operation \(Op.kind) \(key) was released by another request while its call was in flight")
        }
        // Settled meanwhile by another request or process, from a reply to this same call.
        if entry.state == .settled { return .recorded(try OperationRunner.result(of: entry, as: Op.self, transaction)) }
        switch try Op.settle(call, reply: reply, locked, transaction, context: context, now: now) {
        case .settled(let result):
          try transaction.settleOperation(kind: Op.kind, key: key, result: Op.journal(result), at: nowText)
          return .answered(result, .settled)
        case .pending(let result):
          return .answered(result, .pending)
        case .released(let result):
          try transaction.removeOperation(kind: Op.kind, key: key)
          return .answered(result, .released)
        case .releasedAsConflict:
          try transaction.removeOperation(kind: Op.kind, key: key)
          return .conflict
        }
      }
      switch outcome {
      case .answered(let result, let entry): return (result, entry)
      case .recorded(let result): return (result, .recorded)
      case .conflict: throw conflict ?? StoreError.unavailable(reason: "operation \(Op.kind) \(key) conflicts remotely")
      }
    }
  }

  static func result<Op: Operation>(of entry: OperationRow, as _: Op.Type, _ transaction: any OrderTransaction) throws
    -> Op.Result
  {
    guard let text = entry.result else {
      throw StoreError.unavailable(reason: "operation \(Op.kind) \(entry.key) is settled without an answer")
    }
    return try Op.result(journal: text, transaction)
  }

  static func call<Op: Operation>(of entry: OperationRow, as _: Op.Type) throws(StoreError) -> (Op.Call, String) {
    guard let text = entry.request else {
      throw StoreError.unavailable(reason: "operation \(Op.kind) \(entry.key) is pending without its call")
    }
    return (try StoredJSON.read(text, as: Op.Call.self, "\(Op.kind) call"), text)
  }

  // MARK: The sweep at start-up

  public struct Sweep: Equatable, Sendable {
    /// Entries whose answer is now recorded.
    public var resolved = 0
    /// Entries still pending (no answer again, too old to send, or nothing to send them with).
    public var pending = 0

    public init(resolved: Int = 0, pending: Int = 0) {
      self.resolved = resolved
      self.pending = pending
    }
  }

  /// Sends every pending entry again, up to the gateway's concurrency at once, and records the
  /// answers: what a previous process left when its call's answer was lost (a timeout, a reset, a
  /// crash or kill -9 between the two transactions). For a process's start-up.
  public static func sweep(context: ServiceContext, kinds: [any Operation.Type] = kinds) throws -> Sweep {
    var sweep = Sweep()
    let entries = try context.store.pendingOperations()
    let width = max(context.gatewayCalls?.maxConcurrent ?? 1, 1)
    var index = 0
    let now = context.clock.now()
    while index < entries.count {
      let batch = entries[index..<min(index + width, entries.count)]
      index = batch.endIndex
      var started: [any Resumed] = []
      for entry in batch {
        guard let kind = kinds.first(where: { $0.kind == entry.kind }), let resumed = try kind.resume(entry, now: now, context: context)
        else {
          sweep.pending += 1
          continue
        }
        resumed.send()
        started.append(resumed)
      }
      for resumed in started {
        if try resumed.settleStillPending() { sweep.pending += 1 } else { sweep.resolved += 1 }
      }
    }
    return sweep
  }
}

/// What the first transaction of `OperationRunner.start` came to.
enum PreparedStep<Op: Operation> {
  case answered(Op.Result)
  case recorded(Op.Result)
  case send(Op.Call, request: String, created: String)
}

/// What the second transaction of `OperationRunner.InFlight.settle` came to.
enum SettledStep<Result, Entry> {
  case answered(Result, Entry)
  /// Settled meanwhile by another request or process: its answer.
  case recorded(Result)
  case conflict
}

/// A pending entry the sweep sends again, whatever its kind.
protocol Resumed: Sendable {
  func send()
  /// Blocks until the call's reply is in (sending it first if it was not).
  func waitForReply()
  /// Settles it; true when it is still pending.
  func settleStillPending() throws -> Bool
}

extension OperationRunner.InFlight: Resumed {
  func waitForReply() { _ = reply() }
  func settleStillPending() throws -> Bool { try settle().entry == .pending }
}

extension OperationRunner {
  /// The pending entries about `subject` (an order), ready to send again as the sweep would: what
  /// a webhook that says the gateway decided resumes.
  static func resumable(subject: String, context: ServiceContext) throws -> [any Resumed] {
    let now = context.clock.now()
    return try pending(about: subject, context: context).compactMap { entry in
      guard let kind = kinds.first(where: { $0.kind == entry.kind }) else { return nil }
      return try kind.resume(entry, now: now, context: context)
    }
  }

  /// Settles the pending entries of `Op` about `subject` whose call `report` answers, with what
  /// the gateway reported later of what the call came to (Adyen's notifications) as their reply:
  /// nothing is sent. An entry settled meanwhile, or one `report` does not answer, is left as it
  /// is, so that a report heard twice settles once. Returns the results of those it settled.
  static func settleReported<Op: Operation>(
    _: Op.Type, subject: String, context: ServiceContext, report: (Op.Call) -> Op.Reply?
  ) throws -> [Op.Result] {
    var results: [Op.Result] = []
    for entry in try pending(about: subject, context: context) where entry.kind == Op.kind {
      let (call, request) = try call(of: entry, as: Op.self)
      guard let reply = report(call) else { continue }
      let reported = InFlight<Op>(
        key: entry.key, subject: entry.subject, call: call, request: request, conflict: nil,
        sender: { _ in PendingCall { reply } }, context: context)
      let settled = try reported.settle()
      if settled.entry == .settled || settled.entry == .released { results.append(settled.result) }
    }
    return results
  }

  /// The pending entries about `subject`, read through the journal's index of them (one short
  /// transaction), not by going through every pending entry.
  static func pending(about subject: String, context: ServiceContext) throws -> [OperationRow] {
    try context.store.write { try $0.pendingOperations(subject: subject) }
  }

  /// Sends resumed work (all of it, so that the calls overlap) and settles each, with no
  /// transaction open across the calls.
  static func complete(_ resumed: [any Resumed]) throws {
    for work in resumed { work.send() }
    for work in resumed { _ = try work.settleStillPending() }
  }
}

extension Operation {
  /// A pending entry of this kind, ready to send again; nil when it is not sent (too old, or no sender).
  static func resume(_ entry: OperationRow, now: Int64, context: ServiceContext) throws -> (any Resumed)? {
    let (call, request) = try OperationRunner.call(of: entry, as: Self.self)
    guard case .success(let sender) = OperationRunner.sendable(Self.self, created: entry.created, now: now, context: context)
    else { return nil }
    return OperationRunner.InFlight<Self>(
      key: entry.key, subject: entry.subject, call: call, request: request, conflict: nil, sender: sender,
      context: context)
  }
}
