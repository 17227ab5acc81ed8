import Foundation

/// A store being opened on another thread, so that opening overlaps reading the config at start.
public final class StoreOpening: @unchecked Sendable {
  private let done = DispatchSemaphore(value: 0)
  private var result: Result<any Store, StoreError>?

  /// Starts `open` on a new thread.
  public init(_ open: @escaping @Sendable () throws(StoreError) -> any Store) {
    let thread = Thread { [self] in
      do throws(StoreError) {
        result = .success(try open())
      } catch {
        result = .failure(error)
      }
      done.signal()
    }
    thread.start()
  }

  /// Opens the SQLite store at `path` on a new thread.
  public convenience init(path: String, busyTimeout: TimeInterval = SQLiteStore.busyTimeout) {
    self.init { () throws(StoreError) -> any Store in try SQLiteStore(path: path, busyTimeout: busyTimeout) }
  }

  /// Waits for the store to be open.
  public func wait() throws(StoreError) -> any Store {
    done.wait()
    done.signal()
    return try result!.get()
  }
}

/// Where a `ServiceContext` gets its store: one already open, or one being opened on another thread
/// that is waited for (and prepared, e.g. seeded) only when a request first needs it.
///
/// A throwaway `:memory:` store is served this way, so a session that never touches the store
/// (pricing and sheet events only, the common one-shot call) neither waits for the migrations nor
/// pays for them. A store file is always opened before serving, so that a store that cannot be
/// opened stops the start with exit 2 instead of failing requests.
public final class StoreSource: @unchecked Sendable {
  private let lock = NSLock()
  private var opening: StoreOpening?
  private var prepare: ((any Store) throws -> Void)?
  private var result: Result<any Store, StoreError>?

  /// A store that is already open and prepared.
  public init(_ store: any Store) {
    result = .success(store)
  }

  /// A store being opened; `prepare` runs once on it, on the thread that first asks for it.
  public init(opening: StoreOpening, prepare: @escaping (any Store) throws -> Void) {
    self.opening = opening
    self.prepare = prepare
  }

  /// The store, waiting for it to be open the first time. A store that failed to open or prepare
  /// keeps failing with the same error.
  public func get() throws(StoreError) -> any Store {
    lock.lock()
    defer { lock.unlock() }
    if let result { return try result.get() }
    let resolved: Result<any Store, StoreError>
    do {
      let store = try opening!.wait()
      try prepare!(store)
      resolved = .success(store)
    } catch let error as StoreError {
      resolved = .failure(error)
    } catch {
      resolved = .failure(.unavailable(reason: "\(error)"))
    }
    result = resolved
    opening = nil
    prepare = nil
    return try resolved.get()
  }

  /// Whether any request has asked for the store yet (a deferred store may still be opening).
  public var wasUsed: Bool {
    lock.lock()
    defer { lock.unlock() }
    return result != nil
  }
}
