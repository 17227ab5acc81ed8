import Foundation
import Synchronization

/// A store being opened on another thread, so that opening overlaps reading the config at start.
public final class StoreOpening: Sendable {
  private let done = DispatchSemaphore(value: 0)
  private let result = Mutex<Result<any Store, StoreError>?>(nil)
  private let open: @Sendable () throws(StoreError) -> any Store
  private let started = Mutex(false)

  /// Starts `open` on a new thread, which ends when the store is open (or failed to open); with
  /// `deferred`, only at `start()` or when first waited for.
  public init(deferred: Bool = false, _ open: @escaping @Sendable () throws(StoreError) -> any Store) {
    self.open = open
    if !deferred { start() }
  }

  /// Starts opening the store, unless it was started already.
  public func start() {
    guard started.withLock({ started in
      defer { started = true }
      return !started
    })
    else { return }
    let open = self.open
    let thread = Thread { [self] in
      let opened: Result<any Store, StoreError>
      do throws(StoreError) {
        opened = .success(try open())
      } catch {
        opened = .failure(error)
      }
      result.withLock { $0 = opened }
      done.signal()
    }
    thread.start()
  }

  /// Opens the SQLite store at `path` on a new thread (with `deferred`, once started).
  public convenience init(path: String, busyTimeout: TimeInterval = SQLiteStore.busyTimeout, deferred: Bool = false) {
    self.init(deferred: deferred) { () throws(StoreError) -> any Store in
      try SQLiteStore(path: path, busyTimeout: busyTimeout)
    }
  }

  /// Waits for the store to be open (starting it when it was deferred).
  public func wait() throws(StoreError) -> any Store {
    start()
    done.wait()
    done.signal()
    return try result.withLock { $0! }.get()
  }
}

/// Where a `ServiceContext` gets its store: one already open, or one being opened on another thread
/// that is waited for (and prepared, e.g. seeded) only when a request first needs it.
///
/// A throwaway `:memory:` store is served this way, so a session that never touches the store
/// (pricing and sheet events only, the common one-shot call) neither waits for the migrations nor
/// pays for them. A store file is always opened before serving, so that a store that cannot be
/// opened stops the start with exit 2 instead of failing requests.
public final class StoreSource: Sendable {
  private struct State {
    var opening: StoreOpening?
    var prepare: (@Sendable (any Store) throws -> Void)?
    var result: Result<any Store, StoreError>?
  }

  /// Held while a deferred store is waited for and prepared, so that it is prepared once.
  private let state: Mutex<State>

  /// A store that is already open and prepared.
  public init(_ store: any Store) {
    state = Mutex(State(result: .success(store)))
    opening = nil
  }

  /// A store being opened; `prepare` runs once on it, on the thread that first asks for it.
  public init(opening: StoreOpening, prepare: @escaping @Sendable (any Store) throws -> Void) {
    state = Mutex(State(opening: opening, prepare: prepare))
    self.opening = opening
  }

  private let opening: StoreOpening?

  /// Starts opening a deferred store in the background (the server calls it when it first waits
  /// for input), so that a later request finds it open; nothing for a store already open.
  public func startOpening() {
    opening?.start()
  }

  /// The store, waiting for it to be open the first time. A store that failed to open or prepare
  /// keeps failing with the same error.
  public func get() throws(StoreError) -> any Store {
    try state.withLock { state throws(StoreError) -> any Store in
      if let result = state.result { return try result.get() }
      let resolved: Result<any Store, StoreError>
      do {
        let store = try state.opening!.wait()
        try state.prepare!(store)
        resolved = .success(store)
      } catch let error as StoreError {
        resolved = .failure(error)
      } catch {
        resolved = .failure(.unavailable(reason: "\(error)"))
      }
      state = State(result: resolved)
      return try resolved.get()
    }
  }

  /// Whether any request has asked for the store yet (a deferred store may still be opening).
  public var wasUsed: Bool {
    state.withLock { $0.result != nil }
  }
}
