import Foundation
import Synchronization

/// The second thread of `threads: 2`: answers the store-free lines of the second half of a read
/// while the server thread answers the first half, into buffers it keeps from read to read.
///
/// A dedicated thread rather than a task per read: half a read of pricing requests is about
/// 100 µs of work, and a task started and awaited per read (its allocations, the text copied
/// for it, a semaphore each way and a sleeping thread's wake-up) cost as much as it saved. Here
/// the server thread posts the lines in place (it does not touch its read buffer until `wait`
/// returns), and each side spins briefly on one atomic state before it parks on a semaphore.
///
/// Unchecked Sendable: the fields are handed over by `state` (posted, then done), so that only
/// one thread uses them at a time.
final class HalfAnswerer: @unchecked Sendable {
  /// What became of each line of a batch: its answer's bytes in `output` and `log`, or the line
  /// parsed, left to the server thread because it may touch the store.
  enum Outcome {
    case answered(output: Range<Int>, log: Range<Int>)
    case deferred(RequestHandler.ParsedLine)
  }

  private enum State: Int {
    case idle = 0, posted, done, stopping
  }

  private let handler: RequestHandler
  private let log: RequestLog
  private let maxLineBytes: Int
  private let state = Atomic<Int>(State.idle.rawValue)
  private let helperParked = Atomic<Bool>(false)
  private let serverParked = Atomic<Bool>(false)
  private let wakeHelper = DispatchSemaphore(value: 0)
  private let wakeServer = DispatchSemaphore(value: 0)
  /// Rounds of polling `state` before parking: some tens of microseconds.
  private static let spins = 20_000

  // Posted by the server thread.
  private var text = UnsafeRawBufferPointer(start: nil, count: 0)
  private var lines: ArraySlice<Range<Int>> = []
  // Written by the helper thread, read by the server thread once done.
  private(set) var output = JSONWriter(capacity: 1 << 16)
  private(set) var outcomes: [Outcome] = []

  init(context: ServiceContext, methods: MethodTable, level: RequestLog.Level, timestamps: Bool, maxLineBytes: Int) {
    log = RequestLog(collecting: level, timestamps: timestamps)
    handler = RequestHandler(context: context, methods: methods, log: log)
    self.maxLineBytes = maxLineBytes
    startServerHelperThread(name: "payservice-half") { [self] in run() }
  }

  /// Starts answering `lines` of `text`, which must stay as they are until `wait` returns.
  func post(_ lines: ArraySlice<Range<Int>>, of text: UnsafeRawBufferPointer) {
    self.text = text
    self.lines = lines
    hand(to: .posted, waking: helperParked, wakeHelper)
  }

  /// Waits for the posted lines' outcomes (`outcomes`, in order; bytes in `output` and `logBytes`).
  /// Returns whether they were ready already (the helper finished first).
  @discardableResult
  func wait() -> Bool {
    let ready = state.load(ordering: .sequentiallyConsistent) == State.done.rawValue
    waitFor(.done, parking: serverParked, on: wakeServer)
    state.store(State.idle.rawValue, ordering: .sequentiallyConsistent)
    return ready
  }

  /// The log lines of the last batch.
  func logBytes(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Void) {
    log.withCollected { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
  }

  /// Ends the thread (after the batch in hand, if any).
  func stop() {
    hand(to: .stopping, waking: helperParked, wakeHelper)
  }

  private func run() {
    while true {
      let next = waitFor(.posted, orStopping: true, parking: helperParked, on: wakeHelper)
      if next == .stopping { return }
      answer()
      hand(to: .done, waking: serverParked, wakeServer)
    }
  }

  private func answer() {
    output.reset(capacityLimit: 1 << 20)
    log.reset()
    outcomes.removeAll(keepingCapacity: true)
    for range in lines {
      let bytes = UnsafeRawBufferPointer(rebasing: text[range])
      let (outputStart, logStart) = (output.count, log.count)
      if Server.answeredBorrowed(bytes, handler, maxLineBytes, into: &output) {
        outcomes.append(.answered(output: outputStart..<output.count, log: logStart..<log.count))
        continue
      }
      let line = Server.parsedLine(bytes, handler, maxLineBytes)
      if handler.needsStore(line) {
        outcomes.append(.deferred(line))
      } else {
        _ = handler.answer(line, into: &output)
        outcomes.append(.answered(output: outputStart..<output.count, log: logStart..<log.count))
      }
    }
  }

  /// Sets the state, then wakes the other thread if it parked. Both sides store and load with
  /// sequential consistency, so that one of them always sees the other (no lost wake-up); a
  /// wake-up of a thread that did not park leaves the semaphore one ahead, and the loop in
  /// `waitFor` absorbs it.
  private func hand(to next: State, waking parked: borrowing Atomic<Bool>, _ semaphore: DispatchSemaphore) {
    state.store(next.rawValue, ordering: .sequentiallyConsistent)
    if parked.load(ordering: .sequentiallyConsistent) { semaphore.signal() }
  }

  @discardableResult
  private func waitFor(
    _ wanted: State, orStopping: Bool = false, parking parked: borrowing Atomic<Bool>, on semaphore: DispatchSemaphore
  ) -> State {
    func arrived() -> State? {
      let current = State(rawValue: state.load(ordering: .sequentiallyConsistent))!
      return current == wanted || (orStopping && current == .stopping) ? current : nil
    }
    for _ in 0..<Self.spins {
      if let current = arrived() { return current }
    }
    while true {
      parked.store(true, ordering: .sequentiallyConsistent)
      if let current = arrived() {
        parked.store(false, ordering: .sequentiallyConsistent)
        return current
      }
      semaphore.wait()
      parked.store(false, ordering: .sequentiallyConsistent)
    }
  }
}
