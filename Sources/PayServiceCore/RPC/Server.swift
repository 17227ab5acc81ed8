import Foundation

/// The stdio loop: reads LF-delimited lines from `input`, answers each through the handler, and
/// writes responses to `output` in request order.
///
/// Responses to the lines of one read are written together, and always before the loop blocks on
/// the next read, so an interactive client gets each answer without sending more. A line longer
/// than `maxLineBytes` is answered with one -32600 and skipped without being buffered.
///
/// With `threads: 2`, a read that brings many lines (a pipelined client) is split in two: a helper
/// thread answers the second half while this thread answers the first. The helper only answers
/// lines that cannot touch the store (pricing and sheet events, and lines answered with an error);
/// it leaves the others (batches, authorizePayment, processOrder, getOrder, listProducts) to this
/// thread, which answers them after its own half, in order. Every store access therefore still
/// happens on one thread in request order, and responses and log lines come in request order.
///
/// With `groupCommits`, consecutive processOrder requests of one read share one store transaction
/// (group commit): each runs in its own savepoint, the transaction commits once, and only then
/// are they answered. A lone order (an interactive client) is committed and answered at once.
public final class Server {
  public enum Exit: Equatable, Sendable {
    /// Input ended, or a stop was requested; everything read was answered.
    case finished
    /// The output was closed (EPIPE); what was in flight was committed.
    case outputClosed
  }

  /// The online CPUs, read without Foundation's `ProcessInfo`, which parses cgroup files at first
  /// use (a tenth of a millisecond of every start). At least 1.
  public static var availableProcessors: Int {
    max(sysconf(Int32(_SC_NPROCESSORS_ONLN)), 1)
  }

  /// Reads with fewer complete lines than this are answered on one thread.
  static let parallelMinimumLines = 64

  let handler: RequestHandler
  let input: Int32
  let output: Int32
  let maxLineBytes: Int
  let stopSignal: Int32?
  let log: RequestLog
  let threads: Int
  let groupCommits: Bool
  /// Started at the first read that it can help with, so a one-request start pays nothing for it.
  private lazy var helper: Helper? = threads > 1 ? Helper(handler: handler, maxLineBytes: maxLineBytes) : nil

  /// Lines the helper thread answered (statistics for tests and benchmarks).
  public private(set) var linesAnsweredByHelper = 0
  /// Orders committed in groups of two or more (statistics for tests and benchmarks).
  public private(set) var ordersCommittedInGroups = 0

  /// Responses not yet written, one per line.
  private var pendingOutput = JSONWriter(capacity: 1 << 16)
  private var outputClosed = false

  /// - Parameter stopSignal: a descriptor that becomes readable when the process should stop
  ///   (the signal handler's self-pipe); the loop then finishes the request in flight and returns.
  /// - Parameter threads: 1, or 2 to answer pipelined store-free requests on a helper thread too.
  public init(
    handler: RequestHandler, input: Int32, output: Int32, maxLineBytes: Int, stopSignal: Int32? = nil,
    log: RequestLog, threads: Int = 1, groupCommits: Bool = true
  ) {
    self.handler = handler
    self.input = input
    self.output = output
    self.maxLineBytes = maxLineBytes
    self.stopSignal = stopSignal
    self.log = log
    self.threads = threads
    self.groupCommits = groupCommits
  }

  public func run() -> Exit {
    let chunkSize = 1 << 16
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 1)
    defer { chunk.deallocate() }
    // The start of a line whose end has not been read yet.
    var line: [UInt8] = []
    // Set while the rest of an over-long line is being skipped.
    var skipping = false
    var lines: [Range<Int>] = []

    var stopped = false
    while !outputClosed {
      if !waitForInput() {
        stopped = true
        break
      }
      let count = read(input, chunk.baseAddress, chunkSize)
      if count < 0 {
        if errno == EINTR { continue }
        break
      }
      if count == 0 { break }
      let bytes = UnsafeRawBufferPointer(rebasing: chunk[0..<count])
      var start = 0
      // 1. The end of a line begun in an earlier read.
      if skipping || !line.isEmpty {
        guard let newline = Self.newline(in: bytes, from: 0) else {
          keepFragment(bytes, line: &line, skipping: &skipping)
          flush()
          continue
        }
        if skipping {
          skipping = false
        } else if line.count + newline > maxLineBytes {
          line.removeAll(keepingCapacity: false)
          tooLong()
        } else {
          line.append(contentsOf: bytes[0..<newline])
          line.withUnsafeBytes { answer($0) }
          line.removeAll(keepingCapacity: line.count <= 1 << 16)
        }
        start = newline + 1
        if stopRequested() {
          flush()
          return outputClosed ? .outputClosed : .finished
        }
      }
      // 2. The lines that begin and end in this read.
      lines.removeAll(keepingCapacity: true)
      while start < count, let newline = Self.newline(in: bytes, from: start) {
        lines.append(start..<newline)
        start = newline + 1
      }
      if !answer(lines, in: bytes) {
        flush()
        return outputClosed ? .outputClosed : .finished
      }
      // 3. The start of a line that ends in a later read.
      if start < count {
        keepFragment(UnsafeRawBufferPointer(rebasing: bytes[start...]), line: &line, skipping: &skipping)
      }
      flush()
    }
    // At EOF a last line without LF is still a request; after a stop signal it is not run, since
    // the client may not have finished writing it.
    if !stopped && !outputClosed && !skipping && !line.isEmpty {
      line.withUnsafeBytes { answer($0) }
    }
    flush()
    return outputClosed ? .outputClosed : .finished
  }

  /// The index of the first LF in `bytes` at or after `start` (memchr: vectorised, unlike a
  /// byte-by-byte `firstIndex(of:)`, which was a twentieth of the cost of a pricing request).
  static func newline(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
    guard start < bytes.count, let base = bytes.baseAddress,
      let found = memchr(base + start, 0x0A, bytes.count - start)
    else { return nil }
    return base.distance(to: UnsafeRawPointer(found))
  }

  /// Keeps the start of an unfinished line, or starts skipping it once it is too long.
  private func keepFragment(_ fragment: UnsafeRawBufferPointer, line: inout [UInt8], skipping: inout Bool) {
    guard !skipping else { return }
    if line.count + fragment.count > maxLineBytes {
      line.removeAll(keepingCapacity: false)
      skipping = true
      tooLong()
    } else {
      line.append(contentsOf: fragment)
    }
  }

  /// Answers complete lines in order; false when a stop was requested (the rest are not answered).
  private func answer(_ lines: [Range<Int>], in bytes: UnsafeRawBufferPointer) -> Bool {
    guard threads > 1, lines.count >= Self.parallelMinimumLines, let helper else {
      var next = 0
      while next < lines.count {
        next = answerHere(from: next, before: lines.count, of: lines, in: bytes) { _ in true }
        if stopRequested() { return false }
      }
      return true
    }
    let half = lines.count / 2
    helper.start(lines[half...], in: bytes)
    defer { helper.reset() }
    var next = 0
    while next < half {
      next = answerHere(from: next, before: half, of: lines, in: bytes) { _ in true }
      if stopRequested() {
        helper.wait()
        return false
      }
    }
    helper.wait()
    // The helper's answers in order, with the lines it left answered here in their places.
    while next < lines.count {
      if let answer = helper.results[next - half] {
        helper.copy(answer, into: &pendingOutput, log: log)
        linesAnsweredByHelper += 1
        next += 1
      } else {
        next = answerHere(from: next, before: lines.count, of: lines, in: bytes) { helper.results[$0 - half] == nil }
      }
      if stopRequested() { return false }
    }
    return true
  }

  /// Answers `lines[first]` on this thread, together with the processOrder requests that follow it
  /// before `limit` (while `here` says they are this thread's to answer) when it is one: those
  /// commit as a group.
  /// Returns the index of the next line to answer.
  private func answerHere(
    from first: Int, before limit: Int, of lines: [Range<Int>], in bytes: UnsafeRawBufferPointer,
    here: (Int) -> Bool
  ) -> Int {
    func line(_ index: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[lines[index]]) }
    // A grouped line is parsed once: the request read to decide is the request answered.
    func groupedRequest(_ index: Int) -> JSONValue? {
      line(index).count <= maxLineBytes ? handler.groupedRequest(line: line(index)) : nil
    }
    guard groupCommits, let firstRequest = groupedRequest(first) else {
      answerComplete(line(first))
      return first + 1
    }
    var requests = [firstRequest]
    while first + requests.count < limit, here(first + requests.count),
      let request = groupedRequest(first + requests.count)
    {
      requests.append(request)
    }
    guard requests.count > 1 else {
      answer(request: firstRequest)
      return first + 1
    }
    let mark = pendingOutput.mark
    do {
      try handler.context.store.groupCommit {
        for request in requests { answer(request: request) }
      }
      ordersCommittedInGroups += requests.count
    } catch {
      // Nothing of the group was kept: answer each order again, in its own transaction.
      log.warning("the group commit of the \(requests.count) orders above failed (\(error)); retrying them one by one")
      pendingOutput.rewind(to: mark)
      for request in requests { answer(request: request) }
    }
    return first + requests.count
  }

  /// Answers a request (with an id) already read from its line.
  private func answer(request: JSONValue) {
    if handler.handle(value: request, into: &pendingOutput) { pendingOutput.newline() }
  }

  private func answerComplete(_ line: UnsafeRawBufferPointer) {
    if line.count > maxLineBytes {
      tooLong()
    } else {
      answer(line)
    }
  }

  /// Answers one line (without its LF).
  private func answer(_ line: UnsafeRawBufferPointer) {
    switch Self.answer(line, handler: handler, into: &pendingOutput, storeFreeOnly: false) {
    case .deferred: preconditionFailure("only the helper defers lines")
    case .answered, .silent: break
    }
  }

  enum LineResult { case answered, silent, deferred }

  /// Answers one line (without its LF) into `writer`; with `storeFreeOnly`, a line that could touch
  /// the store is left alone (`deferred`).
  static func answer(
    _ line: UnsafeRawBufferPointer, handler: RequestHandler, into writer: inout JSONWriter, storeFreeOnly: Bool
  ) -> LineResult {
    var slice = line
    if let last = slice.last, last == UInt8(ascii: "\r") {
      slice = UnsafeRawBufferPointer(rebasing: slice.dropLast())
    }
    // Only JSON whitespace (spaces, tabs, CRs): a blank line, not a request.
    if slice.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return .silent }
    let answered: Bool
    if storeFreeOnly {
      guard let result = handler.handleIfStoreFree(line: slice, into: &writer) else { return .deferred }
      answered = result
    } else {
      answered = handler.handle(line: slice, into: &writer)
    }
    guard answered else { return .silent }
    writer.newline()
    return .answered
  }

  private func tooLong() {
    log.request(id: nil, method: "", seconds: 0, outcome: "error(-32600)")
    RequestHandler.writeError(
      id: .null, .invalidRequest("line exceeds the limit of \(maxLineBytes) bytes (--max-line-bytes)"),
      into: &pendingOutput)
    pendingOutput.newline()
  }

  /// Blocks until input is readable; false when a stop was requested.
  private func waitForInput() -> Bool {
    guard let stopSignal else { return true }
    var fds = [
      pollfd(fd: input, events: Int16(POLLIN), revents: 0), pollfd(fd: stopSignal, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      let ready = poll(&fds, 2, -1)
      if ready < 0 {
        if errno == EINTR { continue }
        return true
      }
      if fds[1].revents != 0 { return false }
      return true
    }
  }

  private func stopRequested() -> Bool {
    stopSignal != nil && StopSignal.requested
  }

  private func flush() {
    defer { log.flush() }
    guard !pendingOutput.isEmpty, !outputClosed else {
      pendingOutput.reset()
      return
    }
    pendingOutput.withBytes { raw in
      var offset = 0
      while offset < raw.count {
        let written = write(output, raw.baseAddress! + offset, raw.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          outputClosed = true
          return
        }
        offset += written
      }
    }
    pendingOutput.reset(capacityLimit: 1 << 20)
  }

  /// The helper thread: answers store-free lines of a read while the server thread answers others.
  /// The two hand over with semaphores; the helper's buffers are only touched by one side at a time.
  final class Helper: @unchecked Sendable {
    /// Where one line's response and log lines are in the helper's buffers.
    struct Answer {
      let output: Range<Int>
      let log: Range<Int>
    }

    private let handler: RequestHandler
    private let log: RequestLog
    private let maxLineBytes: Int
    private let go = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private var lines: [Range<Int>] = []
    private var bytes = UnsafeRawBufferPointer(start: nil, count: 0)
    private var output = JSONWriter(capacity: 1 << 16)
    /// One per line given to `start`: its answer, or nil when the server thread must answer it.
    private(set) var results: [Answer?] = []

    init(handler: RequestHandler, maxLineBytes: Int) {
      log = RequestLog(collectingFor: handler.log)
      self.handler = RequestHandler(context: handler.context, registry: handler.registry, log: log)
      self.maxLineBytes = maxLineBytes
      let thread = Thread { [self] in run() }
      thread.name = "payservice-helper"
      thread.start()
    }

    private func run() {
      // Stop signals are the server thread's to take.
      var signals = sigset_t()
      sigemptyset(&signals)
      sigaddset(&signals, SIGTERM)
      sigaddset(&signals, SIGINT)
      pthread_sigmask(SIG_BLOCK, &signals, nil)
      while true {
        go.wait()
        for range in lines {
          let line = UnsafeRawBufferPointer(rebasing: bytes[range])
          let (outputStart, logStart) = (output.count, log.count)
          if line.count > maxLineBytes
            || Server.answer(line, handler: handler, into: &output, storeFreeOnly: true) == .deferred
          {
            results.append(nil)
          } else {
            results.append(Answer(output: outputStart..<output.count, log: logStart..<log.count))
          }
        }
        done.signal()
      }
    }

    /// Starts answering `lines` of `bytes`, which must stay valid until `wait` returns.
    func start(_ lines: ArraySlice<Range<Int>>, in bytes: UnsafeRawBufferPointer) {
      self.lines.removeAll(keepingCapacity: true)
      self.lines.append(contentsOf: lines)
      self.bytes = bytes
      go.signal()
    }

    /// Waits until every line given to `start` has a result.
    func wait() {
      done.wait()
    }

    /// Appends one answer's response and log lines.
    func copy(_ answer: Answer, into writer: inout JSONWriter, log serverLog: RequestLog) {
      output.withBytes { writer.appendLines(UnsafeRawBufferPointer(rebasing: $0[answer.output])) }
      log.copy(answer.log, to: serverLog)
    }

    /// Forgets the results, after `wait`.
    func reset() {
      results.removeAll(keepingCapacity: true)
      output.reset(capacityLimit: 1 << 20)
      log.discard()
    }
  }
}
