import Foundation
import Synchronization
import Testing

@testable import PayServiceCore

/// The blocking bridge: a synchronous caller runs or starts a remote call on the bridge's own
/// thread and waits for it, from any thread; under one key a call is never in flight twice.
@Suite("Remote call thread")
struct RemoteCallThreadTests {
  /// Counts the calls that ran.
  final class Runs: Sendable {
    private let count = Mutex(0)

    var value: Int { count.withLock { $0 } }

    func add() { count.withLock { $0 += 1 } }
  }

  @Test("run blocks until the call's value is in")
  func run() {
    let thread = RemoteCallThread(name: "payservice-test-remote")
    let value = thread.run { () async -> Int in
      try? await Task.sleep(for: .milliseconds(50))
      return 42
    }
    #expect(value == 42)
  }

  @Test("run from a thread of Swift's task pool: the call runs on the bridge's thread, not waiting for the pool")
  func runFromTaskPool() async {
    let thread = RemoteCallThread(name: "payservice-test-remote")
    let values = await withTaskGroup(of: Int.self) { group in
      for index in 0..<8 {
        group.addTask { thread.run { index * 2 } }
      }
      return await group.reduce(into: []) { $0.append($1) }
    }
    #expect(values.sorted() == [0, 2, 4, 6, 8, 10, 12, 14])
  }

  @Test("a second call under a key in flight gets the first one's answer; once waited for, the key is free again")
  func oneCallPerKey() {
    let thread = RemoteCallThread(name: "payservice-test-remote")
    let runs = Runs()
    let gate = DispatchSemaphore(value: 0)
    let first = thread.start(key: "order-1") { () async -> String in
      runs.add()
      gate.wait()
      return "first"
    }
    let second = thread.start(key: "order-1") { () async -> String in
      runs.add()
      return "second"
    }
    gate.signal()
    #expect(first.wait() == "first")
    #expect(second.wait() == "first")
    #expect(first.wait() == "first")
    #expect(runs.value == 1)
    let third = thread.start(key: "order-1") { () async -> String in
      runs.add()
      return "third"
    }
    #expect(third.wait() == "third")
    #expect(runs.value == 2)
  }

  @Test("calls under different keys each run, and are waited for in any order")
  func differentKeys() {
    let thread = RemoteCallThread(name: "payservice-test-remote")
    let runs = Runs()
    let pending = (0..<5).map { index in
      thread.start(key: "key-\(index)") { () async -> Int in
        runs.add()
        return index
      }
    }
    #expect(pending.reversed().map { $0.wait() } == [4, 3, 2, 1, 0])
    #expect(runs.value == 5)
  }
}
