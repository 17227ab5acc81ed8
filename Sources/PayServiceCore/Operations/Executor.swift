/// Runs requests for the transport, in request order, on the store's thread.
///
/// A request of an operation method (`OperationMethod`) runs in the operation's steps, and a run
/// of such requests whose method commits in groups (pipelined `processOrder`s) shares them, up to
/// the remote gateway's concurrency at a time:
/// 1. each one's first transaction (`OperationRunner.start`: its call recorded as pending), all of
///    them in one group commit when group commits are on;
/// 2. once that is durable, every network call starts, and their round trips overlap;
/// 3. once every reply is in, each one's settlement (one group commit again), and the answers
///    are written in request order.
/// No transaction is open while a call is in flight. A group that cannot commit kept nothing: its
/// requests run again one transaction each (step 1 before any call was sent, step 3 with the
/// replies already in). Any other request runs its method (`RequestHandler.answer`).
///
/// Answers of work that may have committed are handed to `flush` before the next request's work
/// begins, so that no later failure (even a trap that ends the process) can lose the answer of
/// something done; store-free answers wait for the transport's next write.
public final class Executor {
  let handler: RequestHandler
  let log: RequestLog
  /// Whether grouped requests share transactions (`--no-group-commit` turns it off).
  let groupCommits: Bool

  /// Requests committed in groups of two or more (statistics for tests and benchmarks).
  public private(set) var ordersCommittedInGroups = 0

  public init(handler: RequestHandler, log: RequestLog, groupCommits: Bool = true) {
    self.handler = handler
    self.log = log
    self.groupCommits = groupCommits
  }

  private var context: ServiceContext { handler.context }

  /// Time the client gives while it makes this process wait: opens the store a later request
  /// may need.
  public func prepareWhileIdle() {
    context.storeSource.startOpening()
  }

  /// Answers one line on its own.
  func answer(
    _ line: RequestHandler.ParsedLine, into writer: inout JSONWriter, flush: (inout JSONWriter) -> Void
  ) {
    if let request = operationRequest(line) {
      answerGroup([request], into: &writer, flush: flush)
    } else {
      answerRun(line, into: &writer, flush: flush)
    }
  }

  /// Answers the line at `first`, together with the requests after it (before `limit`) that
  /// commit in a group with it. `line` gives each line parsed (nil: not this thread's to answer);
  /// it is asked once per line. Returns the index of the next line to answer.
  func answer(
    from first: Int, before limit: Int, _ line: (Int) -> RequestHandler.ParsedLine?, into writer: inout JSONWriter,
    flush: (inout JSONWriter) -> Void
  ) -> Int {
    guard let firstLine = line(first) else { preconditionFailure("line \(first) is not this thread's") }
    guard let firstRequest = operationRequest(firstLine) else {
      answerRun(firstLine, into: &writer, flush: flush)
      return first + 1
    }
    // With a remote gateway, grouped requests overlap their calls (with or without group commits).
    guard groupCommits || context.gatewayCalls != nil, firstRequest.groups else {
      answerGroup([firstRequest], into: &writer, flush: flush)
      return first + 1
    }
    var group = [firstRequest]
    var next = first + 1
    while next < limit, let candidate = line(next) {
      guard let request = operationRequest(candidate), request.groups else {
        // Parsed already: answered here, after the group.
        answerGroup(group, into: &writer, flush: flush)
        answer(candidate, into: &writer, flush: flush)
        return next + 1
      }
      group.append(request)
      next += 1
    }
    answerGroup(group, into: &writer, flush: flush)
    return next
  }

  /// A line that is a request (with an id) of an operation method, with what makes its operation.
  private struct Request {
    let request: RequestHandler.Request
    let operation: @Sendable (JSONValue?, ServiceContext) throws -> OperationRequest
    /// Whether its method commits in groups.
    let groups: Bool
  }

  private func operationRequest(_ line: RequestHandler.ParsedLine) -> Request? {
    guard case .single(.valid(let request)) = line, !request.isNotification,
      let (operation, groups) = request.unretainedEntry?._withUnsafeGuaranteedRef({ ($0.operation, $0.commitsInGroups) }),
      let operation
    else { return nil }
    return Request(request: request, operation: operation, groups: groups)
  }

  /// Runs any other line's method; writes committed work's answer at once.
  private func answerRun(
    _ line: RequestHandler.ParsedLine, into writer: inout JSONWriter, flush: (inout JSONWriter) -> Void
  ) {
    _ = handler.answer(line, into: &writer)
    if handler.needsStore(line) {
      flush(&writer)
      afterAnswers()
    }
  }

  /// What the work just answered left for after its answers: the messages devices sent for the
  /// log, and the calls it recorded (Wallet order pushes, merchant token unlinks), sent now that
  /// it is durable, so that no answer waits for a remote service.
  private func afterAnswers() {
    for message in context.walletDeviceMessages.take() { log.warning("a Wallet device reports: \(message)") }
    do {
      try context.recordedCalls.sendRecorded(context: context)
    } catch {
      log.warning("recorded calls not sent now (\(error)); they stay pending, and the next start sends them")
    }
  }

  /// A request in the executor's hands: its operation (or why there is none) and its first step.
  private struct Slot {
    let request: RequestHandler.Request
    let started: UInt64?
    let operation: Result<OperationRequest, any Error>
    /// The answer's bytes, or the call in flight.
    var step: Step = .answered([])

    enum Step {
      case answered([UInt8])
      case inFlight(any AnsweredInFlight)
    }
  }

  /// Runs operation requests in their steps, `maxInFlight` at a time, grouped as `groupCommits`
  /// says, and writes their answers in order.
  private func answerGroup(_ group: [Request], into writer: inout JSONWriter, flush: (inout JSONWriter) -> Void) {
    let width = max(context.gatewayCalls?.maxConcurrent ?? group.count, 1)
    var next = 0
    while next < group.count {
      let batch = group[next..<min(next + width, group.count)]
      next = batch.endIndex
      var slots = batch.map { member in
        let started = handler.timer()
        return Slot(
          request: member.request, started: started,
          operation: Result { try member.operation(member.request.params, context) })
      }
      // Step 1: the first transactions.
      let readAhead = slots.reduce(into: ReadAhead()) { rows, slot in
        if case .success(let operation) = slot.operation { rows.add(operation.readAhead) }
      }
      let begunTogether = shared(slots.count, "orders", readAhead: readAhead) { begin(&slots) }
      // Step 2: the calls, overlapping.
      let inFlight = slots.compactMap { slot -> (any AnsweredInFlight)? in
        if case .inFlight(let call) = slot.step { return call }
        return nil
      }
      for call in inFlight { call.send() }
      for call in inFlight { call.waitForReply() }
      // Step 3: the settlements, and every answer in order.
      let mark = writer.mark
      let settledTogether = shared(inFlight.count, "answers", readAhead: ReadAhead()) {
        writer.rewind(to: mark)
        finish(slots, into: &writer)
      }
      // The orders are recorded in the first transactions, or with the replies.
      if settledTogether {
        ordersCommittedInGroups += inFlight.count
      } else if begunTogether && inFlight.isEmpty {
        ordersCommittedInGroups += slots.count
      }
      flush(&writer)
    }
    afterAnswers()
  }

  /// Runs `body` in one group commit when group commits are on and it does `count > 1` requests'
  /// work; when the group cannot commit, nothing of it was kept and `body` runs again with each
  /// request in its own transaction. Returns whether the group committed.
  private func shared(_ count: Int, _ what: String, readAhead: ReadAhead, _ body: () -> Void) -> Bool {
    guard groupCommits && count > 1 else {
      body()
      return false
    }
    do {
      try context.store.groupCommit(readAhead: readAhead, body)
      return true
    } catch {
      log.warning("the group commit of the \(count) \(what) above failed (\(error)); retrying them one by one")
      body()
      return false
    }
  }

  /// Step 1 for each slot: its answer written, or its call to send.
  private func begin(_ slots: inout [Slot]) {
    let context = self.context
    for index in slots.indices {
      var answer = JSONWriter(capacity: 256)
      var inFlight: (any AnsweredInFlight)?
      let slot = slots[index]
      handler.respond(to: slot.request, started: slot.started, into: &answer) { writer in
        switch try slot.operation.get().start(context) {
        case .answered(let result):
          result.write(to: &writer)
          return .answered
        case .inFlight(let call):
          inFlight = call
          return .later
        }
      }
      if let inFlight {
        slots[index].step = .inFlight(inFlight)
      } else {
        answer.newline()
        slots[index].step = .answered(answer.bytes)
      }
    }
  }

  /// Step 3: each answer in request order, settling the calls in flight.
  private func finish(_ slots: [Slot], into writer: inout JSONWriter) {
    for slot in slots {
      switch slot.step {
      case .answered(let bytes): bytes.withUnsafeBytes { writer.appendLines($0) }
      case .inFlight(let call):
        handler.respond(to: slot.request, started: slot.started, into: &writer) { writer in
          try call.answer().write(to: &writer)
          return .answered
        }
        writer.newline()
      }
    }
  }
}
