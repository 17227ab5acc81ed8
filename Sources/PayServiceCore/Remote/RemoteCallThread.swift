import Synchronization

/// The blocking bridge between the server's synchronous code (the store's thread) and a remote
/// service's async client: a call runs as a task on a thread of its own while the caller goes on
/// or waits for it, so that the client's event loop never waits for the server thread, and the
/// caller can be any thread (`TaskThread`). Under an idempotency key, one call is never in flight
/// twice: a second call with a key in flight gets the first one's answer. The thread ends with
/// this object.
final class RemoteCallThread: Sendable {
  private let executor: TaskThread
  /// The calls in flight by key (each an `Awaited` of its value type).
  private let inFlight = Mutex<[String: any AnyObject & Sendable]>([:])

  /// - Parameter name: the thread's, as the process's thread list shows it.
  init(name: String) {
    executor = TaskThread(name: name)
  }

  deinit {
    executor.stop()
  }

  /// Runs `call` to its end on this thread, blocking the caller.
  func run<Value: Sendable>(_ call: @escaping @Sendable () async -> Value) -> Value {
    Awaited(on: executor, call).wait()
  }

  /// Starts `call` under `key`, unless a call under that key is in flight: then that one's answer.
  func start<Value: Sendable>(key: String, _ call: @escaping @Sendable () async -> Value) -> PendingCall<Value> {
    let awaited = inFlight.withLock { calls -> Awaited<Value> in
      if let running = calls[key] as? Awaited<Value> { return running }
      let started = Awaited(on: executor, call)
      calls[key] = started
      return started
    }
    return PendingCall { [self] in
      let value = awaited.wait()
      inFlight.withLock { calls in
        if calls[key] === awaited { calls[key] = nil }
      }
      return value
    }
  }
}

/// A call started and not yet waited for.
public struct PendingCall<Value: Sendable>: Sendable {
  let waitForReply: @Sendable () -> Value

  init(_ wait: @escaping @Sendable () -> Value) {
    self.waitForReply = wait
  }

  /// Blocks until the answer is in.
  func wait() -> Value { waitForReply() }
}
