import Foundation
import Synchronization

/// The stdio loop: reads LF-delimited lines from `input`, answers each through the handler, and
/// writes responses to `output` in request order.
///
/// Responses to the lines of one read are written together, and always before the loop blocks on
/// the next read, so an interactive client gets each answer without sending more. A line longer
/// than `maxLineBytes` is answered with one -32600 and skipped without being buffered.
///
/// The server thread reads, and answers every read's lines in request order before it reads
/// again. A line the borrowed path takes (`RequestHandler.answerBorrowed`) is answered from its
/// bytes; any other is parsed and answered by the general path. With `threads: 2`, a read that
/// brings many lines (a pipelined client) is split in two, and a second thread (`HalfAnswerer`)
/// answers the second part's store-free lines (pricing and sheet events, and lines answered with
/// an error) while this thread answers the first part; the split follows which side finished first
/// the time before. The helper parses the others (batches, authorizePayment, processOrder,
/// getOrder, listProducts) for this thread, which answers them after its own part, in order. Every
/// store access therefore still happens on one thread in request order, and responses and log
/// lines come in request order. The store-using lines are run by the `Executor` (operations in
/// their steps, pipelined orders in group commits); this type only frames, reads and writes.
public final class Server {
  public enum Exit: Equatable, Sendable {
    /// Input ended, or a stop was requested; everything read was answered.
    case finished
    /// The output was closed (EPIPE); what was in flight was committed.
    case outputClosed
  }

  /// The online CPUs, read without Foundation's `ProcessInfo`, which parses cgroup files at first
  /// use: work a one-request start does not need. At least 1.
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
  /// Runs what this thread answers: store work, operations, network calls.
  let executor: Executor
  /// What reloads the config (the same for every context it makes); nil: this server never reloads.
  private let reloader: ConfigReloader?
  /// The second thread (`threads: 2`): started at the first read it can help with (a
  /// one-request start pays nothing for it), stopped with the server.
  private var half: HalfAnswerer?
  /// Whether `half` answers with a config a reload replaced: it is stopped before its next batch.
  private var helperIsStale = false
  /// The percentage of a split read's lines the helper answers (30 to 70).
  private var helperShare = 50

  /// Lines the second thread answered (statistics for tests and benchmarks).
  public private(set) var linesAnsweredByHelper = 0
  /// Orders committed in groups of two or more (statistics for tests and benchmarks).
  public var ordersCommittedInGroups: Int { executor.ordersCommittedInGroups }
  /// The most bytes of an unfinished line ever kept between reads: never more than
  /// `maxLineBytes`, however long a line is (statistics for tests).
  public private(set) var mostLineBytesKept = 0

  /// Responses not yet written, one per line.
  private var pendingOutput = JSONWriter(capacity: 1 << 16)
  private var outputClosed = false

  /// - Parameter stopSignal: a descriptor that becomes readable when the process should stop
  ///   (the signal handler's self-pipe); the loop then finishes the request in flight and returns.
  /// - Parameter threads: 1, or 2 to answer pipelined store-free requests on a second thread too.
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
    self.executor = Executor(handler: handler, log: log, groupCommits: groupCommits)
    self.reloader = handler.context.reloader
  }

  deinit {
    half?.stop()
  }

  public func run() -> Exit {
    let chunkSize = 1 << 17
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 1)
    defer { chunk.deallocate() }
    // The start of a line whose end has not been read yet.
    var line: [UInt8] = []
    // Set while the rest of an over-long line is being skipped.
    var skipping = false
    var lines: [Range<Int>] = []

    var stopped = false
    var waitedForInput = false
    while !outputClosed {
      if !waitedForInput && !Self.isReadable(input) {
        // The first time the client makes this wait: time for what a later request may need.
        waitedForInput = true
        executor.prepareWhileIdle()
      }
      if !waitForInput() {
        stopped = true
        break
      }
      adoptReloadedConfig()
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
          mostLineBytesKept = max(mostLineBytesKept, line.count)
          line.withUnsafeBytes { answerAlone($0) }
          line.removeAll(keepingCapacity: line.count <= 1 << 16)
          adoptReloadedConfig()
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
      line.withUnsafeBytes { answerAlone($0) }
    }
    flush()
    return outputClosed ? .outputClosed : .finished
  }

  /// The index of the first LF in `bytes` at or after `start`, found with memchr (vectorised; a
  /// byte-by-byte search costs a noticeable part of a short request).
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
      mostLineBytesKept = max(mostLineBytesKept, line.count)
    }
  }

  /// Answers one line that is not part of a read's run of lines (it spanned reads, or ended the input).
  private func answerAlone(_ line: UnsafeRawBufferPointer) {
    if Server.answeredBorrowed(line, handler, maxLineBytes, into: &pendingOutput) { return }
    executor.answer(parsedLine(line), into: &pendingOutput, flush: writeOut)
  }

  /// Answers complete lines in order; false when a stop was requested (the rest are not answered).
  private func answer(_ lines: [Range<Int>], in bytes: UnsafeRawBufferPointer) -> Bool {
    func parse(_ index: Int) -> RequestHandler.ParsedLine? {
      parsedLine(UnsafeRawBufferPointer(rebasing: bytes[lines[index]]))
    }
    // A line the borrowed path answers is done; any other starts a run (a group) answered from its parse.
    func answerFrom(_ next: Int, before limit: Int) -> Int {
      if Server.answeredBorrowed(UnsafeRawBufferPointer(rebasing: bytes[lines[next]]), handler, maxLineBytes, into: &pendingOutput) {
        return next + 1
      }
      return answerHere(from: next, before: limit, parse)
    }
    // From `first` on, every line on this thread (after a reload: what the helper answered was
    // answered under the old config).
    func answerAll(from first: Int) -> Bool {
      var next = first
      while next < lines.count {
        next = answerFrom(next, before: lines.count)
        adoptReloadedConfig()
        if stopRequested() { return false }
      }
      return true
    }
    guard threads > 1, lines.count >= Self.parallelMinimumLines else { return answerAll(from: 0) }
    // The helper's share follows which side finished first last time: the server thread also
    // reads, writes and appends the helper's answers, so an even split would keep the helper waiting.
    let half = min(max(lines.count * (100 - helperShare) / 100, 1), lines.count - 1)
    if helperIsStale {
      // Idle here (its last batch was waited for): it answers with the config before a reload.
      self.half?.stop()
      self.half = nil
      helperIsStale = false
    }
    let helper =
      self.half
      ?? HalfAnswerer(
        context: handler.context, methods: handler.methods, level: log.logLevel, timestamps: log.timestamps,
        maxLineBytes: maxLineBytes)
    self.half = helper
    helper.post(lines[half...], of: bytes)
    var next = 0
    var reloaded = false
    while next < half {
      next = answerFrom(next, before: half)
      if adoptReloadedConfig() { reloaded = true }
      if stopRequested() {
        helper.wait()
        return false
      }
    }
    helperShare = helper.wait() ? min(helperShare + 2, 70) : max(helperShare - 2, 30)
    if reloaded { return answerAll(from: half) }
    // The helper's answers in order; the lines it left (parsed) are answered here in their places.
    func deferred(_ index: Int) -> RequestHandler.ParsedLine? {
      if case .deferred(let line) = helper.outcomes[index - half] { return line }
      return nil
    }
    while next < lines.count {
      // A run of answered lines is appended in one piece.
      var run: (output: Range<Int>, log: Range<Int>)?
      while next < lines.count, case .answered(let output, let log) = helper.outcomes[next - half] {
        run = run.map { ($0.output.lowerBound..<output.upperBound, $0.log.lowerBound..<log.upperBound) } ?? (output, log)
        linesAnsweredByHelper += 1
        next += 1
      }
      if let run {
        helper.output.withBytes { appendResponses(UnsafeRawBufferPointer(rebasing: $0[run.output])) }
        helper.logBytes(run.log) { log.append(collected: $0) }
      }
      if next < lines.count {
        next = answerHere(from: next, before: lines.count, deferred)
        if adoptReloadedConfig() { return answerAll(from: next) }
      }
      if stopRequested() { return false }
    }
    return true
  }

  // MARK: Config reload

  /// Swaps in a config reloaded since the last look (`reloadConfig`, or SIGHUP, which is loaded
  /// here first), logging what became of each reload; true when the config changed. Called on this
  /// thread between requests, so each request is answered under one config.
  @discardableResult @inline(__always)
  private func adoptReloadedConfig() -> Bool {
    // Between any two requests: two plain loads when nothing happened.
    guard StopSignal.reloadRequested || reloader?.hasNews == true else { return false }
    return adoptReload()
  }

  private func adoptReload() -> Bool {
    guard let reloader else { return false }
    if StopSignal.takeReloadRequest() { _ = reloader.reload(from: handler.context) }
    guard reloader.hasNews else { return false }
    for report in reloader.takeReports() {
      for line in report.lines { report.isWarning ? log.warning(line) : log.notice(line) }
    }
    guard let context = reloader.takePending() else { return false }
    handler.replace(context)
    // The second thread may be answering a batch right now: it is replaced before its next one.
    helperIsStale = half != nil
    return true
  }

  /// A line (without its LF) parsed; one longer than `maxLineBytes` is not parsed.
  private func parsedLine(_ line: UnsafeRawBufferPointer) -> RequestHandler.ParsedLine {
    Server.parsedLine(line, handler, maxLineBytes)
  }

  /// Whether the borrowed path answered `line` (never one longer than `maxLineBytes`, which gets
  /// the general path's -32600).
  static func answeredBorrowed(
    _ line: UnsafeRawBufferPointer, _ handler: RequestHandler, _ maxLineBytes: Int, into writer: inout JSONWriter
  ) -> Bool {
    line.count <= maxLineBytes && handler.answerBorrowed(line, into: &writer)
  }

  static func parsedLine(
    _ line: UnsafeRawBufferPointer, _ handler: RequestHandler, _ maxLineBytes: Int
  ) -> RequestHandler.ParsedLine {
    line.count <= maxLineBytes ? handler.parse(line) : .tooLong(limit: maxLineBytes)
  }

  /// Answers the line at `first` (with the requests grouped with it); the index of the next line.
  private func answerHere(
    from first: Int, before limit: Int, _ line: (Int) -> RequestHandler.ParsedLine?
  ) -> Int {
    executor.answer(from: first, before: limit, line, into: &pendingOutput, flush: writeOut)
  }

  private func tooLong() {
    _ = handler.answer(.tooLong(limit: maxLineBytes), into: &pendingOutput)
  }

  /// Whether a read of `fd` would not block now (data, or its end).
  static func isReadable(_ fd: Int32) -> Bool {
    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&descriptor, 1, 0) > 0
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
      if fds[1].revents != 0 {
        // The pipe is shared with SIGHUP: a reload is done here, between requests, and the wait goes on.
        var drained = [UInt8](repeating: 0, count: 64)
        _ = read(stopSignal, &drained, drained.count)
        if StopSignal.requested { return false }
        adoptReloadedConfig()
        log.flush()
        continue
      }
      return true
    }
  }

  private func stopRequested() -> Bool {
    stopSignal != nil && StopSignal.requested
  }

  /// Appends complete response lines; a large run of them (a helper's half of a read) is written
  /// as it is after what is pending, instead of being copied into the pending output first.
  private func appendResponses(_ lines: UnsafeRawBufferPointer) {
    guard lines.count >= 1 << 14, !outputClosed else {
      pendingOutput.appendLines(lines)
      return
    }
    if !pendingOutput.isEmpty && !pendingOutput.withBytes({ writeAll($0, to: output) }) { outputClosed = true }
    pendingOutput.reset(capacityLimit: 1 << 20)
    if !outputClosed && !writeAll(lines, to: output) { outputClosed = true }
  }

  private func flush() {
    writeOut(&pendingOutput)
  }

  /// Writes `pending` (this server's pending output) and empties it.
  private func writeOut(_ pending: inout JSONWriter) {
    defer { log.flush() }
    guard !pending.isEmpty, !outputClosed else {
      pending.reset()
      return
    }
    if !pending.withBytes({ writeAll($0, to: output) }) { outputClosed = true }
    pending.reset(capacityLimit: 1 << 20)
  }
}
