import Foundation
import Synchronization

/// A thread of the server's own that runs the tasks it is given (a `TaskExecutor`), so that the
/// server thread can wait for them whichever thread it is: the process's main thread, or, in
/// tests, a thread of Swift's task pool (waiting there for a task of that pool could wait forever).
/// The thread ends with `stop`.
final class TaskThread: TaskExecutor, Sendable {
  private enum Item: Sendable {
    case job(UnownedJob)
    case stop
  }

  private let items = Mutex<[Item]>([])
  private let ready = DispatchSemaphore(value: 0)

  init(name: String) {
    startServerHelperThread(name: name) { [self] in
      while true {
        ready.wait()
        switch items.withLock({ $0.removeFirst() }) {
        case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
        case .stop: return
        }
      }
    }
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    items.withLock { $0.append(.job(job)) }
    ready.signal()
  }

  /// Ends the thread once the tasks given before have run.
  func stop() {
    items.withLock { $0.append(.stop) }
    ready.signal()
  }
}

/// A value a task computes while the thread that started it goes on, and then waits for. The task
/// starts at once on `executor`; `wait` returns its value (and may be called again).
final class Awaited<Value: Sendable>: Sendable {
  private let done = DispatchSemaphore(value: 0)
  private let value = Mutex<Value?>(nil)

  init(on executor: TaskThread, _ work: @escaping @Sendable () async -> Value) {
    Task.detached(executorPreference: executor) { [self] in
      let result = await work()
      value.withLock { $0 = result }
      done.signal()
    }
  }

  func wait() -> Value {
    done.wait()
    done.signal()
    return value.withLock { $0! }
  }
}

/// Starts a thread of the server's own running `body`, with the stop signals (SIGTERM, SIGINT)
/// blocked: they are the server thread's to take.
func startServerHelperThread(name: String, _ body: @escaping @Sendable () -> Void) {
  let thread = Thread {
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGTERM)
    sigaddset(&signals, SIGINT)
    pthread_sigmask(SIG_BLOCK, &signals, nil)
    body()
  }
  thread.name = name
  thread.start()
}
