import Foundation
import GRDB

/// The store failed: it could not be opened, read or written. The reason is for the operator's log;
/// clients only ever see -32001.
public enum StoreError: Error, CustomStringConvertible, Sendable {
  case cannotOpen(path: String, reason: String)
  case newerSchema(path: String)
  case unavailable(reason: String)

  public var description: String {
    switch self {
    case .cannotOpen(let path, let reason): return "cannot open the store \(path): \(reason)"
    case .newerSchema(let path):
      return "the store \(path) was written by a newer payservice (unknown schema migrations); upgrade payservice"
    case .unavailable(let reason): return "store unavailable: \(reason)"
    }
  }
}

/// The order store: stock counts, charge tokens, charges and orders in one SQLite database.
///
/// One `Store` owns one `DatabaseQueue`. Files use WAL with `synchronous = FULL`, so a commit is
/// durable before anyone is answered; several processes may share a file, waiting up to
/// `busyTimeout` for each other's write transactions.
public final class Store: @unchecked Sendable {
  public static let busyTimeout: TimeInterval = 5

  let dbQueue: DatabaseQueue

  /// Opens (creating if needed) the store at `path`; `:memory:` is a private throwaway store.
  ///
  /// Several processes may open the same fresh file at once (plugins each start their own
  /// payservice): opening — the switch to WAL and the migrations — is serialized by `OpeningLock`.
  public init(path: String, busyTimeout: TimeInterval = Store.busyTimeout) throws(StoreError) {
    var configuration = Configuration()
    configuration.busyMode = .timeout(busyTimeout)
    configuration.label = "payservice.store"
    let openingLock = path == ":memory:" ? nil : OpeningLock(storePath: path, timeout: busyTimeout)
    defer { openingLock?.release() }
    do {
      if path == ":memory:" {
        dbQueue = try DatabaseQueue(configuration: configuration)
      } else {
        configuration.journalMode = .wal
        dbQueue = try DatabaseQueue(path: path, configuration: configuration)
        // Every commit is fsync'ed before it is answered. This must come after opening: GRDB's
        // WAL setup sets synchronous = NORMAL (commits not synced), which would override a
        // prepareDatabase step.
        try dbQueue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
      }
      // Statement and savepoint journals (a group commit's savepoints) stay in memory instead of
      // temporary files: they only serve rollbacks within a transaction, never recovery.
      try dbQueue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA temp_store = MEMORY") }
      let migrator = Store.migrator
      let superseded = try dbQueue.read { db in try migrator.hasBeenSuperseded(db) }
      if superseded { throw StoreError.newerSchema(path: path) }
      try migrator.migrate(dbQueue)
    } catch let error as StoreError {
      throw error
    } catch let error as DatabaseError {
      throw StoreError.cannotOpen(path: path, reason: error.message ?? "SQLite error \(error.resultCode)")
    } catch {
      throw StoreError.cannotOpen(path: path, reason: "\(error)")
    }
  }

  /// Serializes opening a store file (journal mode switch, migrations) among processes: an exclusive
  /// `flock` on the store's directory, which SQLite never locks itself, so its own locks are
  /// untouched. Waits at most `timeout` (the busy timeout); past it, or where flock is unavailable,
  /// opening goes on unserialized.
  final class OpeningLock {
    private var fd: Int32

    init(storePath: String, timeout: TimeInterval) {
      let deadline = Date().addingTimeInterval(timeout)
      let directory = (storePath as NSString).deletingLastPathComponent
      fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
      guard fd >= 0 else { return }
      while flock(fd, LOCK_EX | LOCK_NB) != 0 {
        guard errno == EWOULDBLOCK || errno == EINTR, Date() < deadline else { return }
        usleep(5_000)
      }
    }

    func release() {
      guard fd >= 0 else { return }
      flock(fd, LOCK_UN)
      close(fd)
      fd = -1
    }
  }

  /// Named migrations. Never edit one that has shipped: add a new one.
  static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    // Both migrations only create tables and add a column, so foreign keys are checked as each
    // statement runs (`.immediate`) instead of by a whole-database check after each migration:
    // the same guarantee, and a fifth of a cold start's store opening saved.
    migrator.registerMigration("v1: stock, charge tokens, charges, orders", foreignKeyChecks: .immediate) { db in
      try db.execute(
        sql: """
          CREATE TABLE stock (
            sku TEXT PRIMARY KEY NOT NULL,
            quantityOnHand INTEGER NOT NULL CHECK (quantityOnHand >= 0),
            sold INTEGER NOT NULL DEFAULT 0 CHECK (sold >= 0)
          );
          CREATE TABLE chargeToken (
            token TEXT PRIMARY KEY NOT NULL,
            sequence INTEGER NOT NULL UNIQUE,
            binding TEXT NOT NULL,
            billingContact TEXT,
            amountMinor INTEGER NOT NULL,
            currencyCode TEXT NOT NULL,
            sandboxOutcome TEXT NOT NULL,
            issuedAt TEXT NOT NULL,
            expiresAt INTEGER NOT NULL,
            usedAt TEXT,
            requestFingerprint TEXT,
            result TEXT
          );
          CREATE TABLE charge (
            chargeId TEXT PRIMARY KEY NOT NULL,
            token TEXT NOT NULL UNIQUE REFERENCES chargeToken(token),
            status TEXT NOT NULL CHECK (status IN ('succeeded', 'failed')),
            failureCode TEXT,
            declineCode TEXT,
            amountMinor INTEGER NOT NULL,
            currencyCode TEXT NOT NULL,
            createdAt TEXT NOT NULL
          );
          CREATE TABLE "order" (
            orderId TEXT PRIMARY KEY NOT NULL,
            chargeId TEXT NOT NULL UNIQUE REFERENCES charge(chargeId),
            createdAt TEXT NOT NULL,
            amountMinor INTEGER NOT NULL,
            currencyCode TEXT NOT NULL,
            document TEXT NOT NULL
          );
          CREATE TABLE orderItem (
            orderId TEXT NOT NULL REFERENCES "order"(orderId),
            sku TEXT NOT NULL,
            quantity INTEGER NOT NULL CHECK (quantity > 0),
            unitPriceMinor INTEGER NOT NULL,
            amountMinor INTEGER NOT NULL,
            PRIMARY KEY (orderId, sku)
          );
          """)
    }
    migrator.registerMigration("v2: the authorized card on charge tokens", foreignKeyChecks: .immediate) { db in
      try db.execute(sql: "ALTER TABLE chargeToken ADD COLUMN paymentMethod TEXT")
    }
    migrator.registerMigration("v3: Apple Pay authorization holds", foreignKeyChecks: .immediate) { db in
      // One row per Apple Pay token that passed verification: its transactionId is accepted once.
      // The card is kept as network, type and last four digits only.
      try db.execute(
        sql: """
          CREATE TABLE paymentAuthorization (
            authorizationId TEXT PRIMARY KEY NOT NULL,
            transactionId TEXT NOT NULL UNIQUE,
            network TEXT NOT NULL,
            cardType TEXT NOT NULL,
            lastFour TEXT NOT NULL CHECK (length(lastFour) = 4),
            amountMinor INTEGER NOT NULL,
            currencyCode TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('held', 'declined', 'captured')),
            createdAt TEXT NOT NULL,
            chargeId TEXT,
            capturedAt TEXT
          );
          ALTER TABLE chargeToken ADD COLUMN authorizationId TEXT REFERENCES paymentAuthorization(authorizationId);
          """)
    }
    return migrator
  }

  /// Adds catalog products the store has not seen with their configured stock. Existing counts win:
  /// after the first start the store's count is the truth.
  public func seedStock(_ catalog: [Product]) throws {
    try write { db in
      for product in catalog {
        try db.execute(
          sql: "INSERT INTO stock (sku, quantityOnHand) VALUES (?, ?) ON CONFLICT(sku) DO NOTHING",
          arguments: [product.sku, product.quantityOnHand])
      }
    }
  }

  /// Runs `body` in one IMMEDIATE transaction (the write lock is taken up front, so concurrent
  /// processes queue on the busy timeout instead of failing on a lock upgrade). All or nothing.
  /// Errors thrown by `body` itself pass through unchanged (after the rollback).
  ///
  /// Inside `groupCommit`, `body` runs instead in a savepoint of the group's transaction: its
  /// writes are undone alone if it throws, and made durable with the group's commit.
  public func write<T>(_ body: (Database) throws -> T) throws -> T {
    if let db = groupTransaction {
      // SQLite rolls a whole transaction back on some errors (a full disk): then nothing may run
      // outside it, in autocommit.
      guard db.isInsideTransaction else {
        throw StoreError.unavailable(reason: "the group's transaction was rolled back")
      }
      do {
        var result: T?
        try db.inSavepoint {
          result = try body(db)
          return .commit
        }
        return result!
      } catch let error as DatabaseError {
        throw StoreError.unavailable(reason: error.message ?? "SQLite error \(error.resultCode)")
      }
    }
    do {
      return try dbQueue.writeWithoutTransaction { db in
        var result: T?
        try db.inTransaction(.immediate) {
          result = try body(db)
          return .commit
        }
        return result!
      }
    } catch let error as DatabaseError {
      throw StoreError.unavailable(reason: error.message ?? "SQLite error \(error.resultCode)")
    }
  }

  /// The open transaction of `groupCommit`, while `body` runs.
  private var groupTransaction: Database?

  /// Group commit: runs `body`, in which every `write` is a savepoint of one IMMEDIATE transaction
  /// committed when `body` returns, so many orders cost one fsync. Throws when the transaction
  /// cannot begin or commit, and then nothing `body` wrote was kept. `body` must not call other
  /// store methods than `write`.
  public func groupCommit(_ body: () -> Void) throws(StoreError) {
    do {
      try dbQueue.writeWithoutTransaction { db in
        try db.inTransaction(.immediate) {
          groupTransaction = db
          defer { groupTransaction = nil }
          body()
          return .commit
        }
      }
    } catch let error as DatabaseError {
      throw StoreError.unavailable(reason: error.message ?? "SQLite error \(error.resultCode)")
    } catch {
      throw StoreError.unavailable(reason: "\(error)")
    }
  }

  public func read<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
    do {
      return try dbQueue.read(body)
    } catch let error as DatabaseError {
      throw StoreError.unavailable(reason: error.message ?? "SQLite error \(error.resultCode)")
    } catch {
      throw StoreError.unavailable(reason: "\(error)")
    }
  }

  /// Current stock by sku.
  public func stock() throws(StoreError) -> [String: Int] {
    try read { db in
      var result: [String: Int] = [:]
      for row in try Row.fetchAll(db, sql: "SELECT sku, quantityOnHand FROM stock") {
        result[row["sku"]] = row["quantityOnHand"]
      }
      return result
    }
  }

  /// Each sku's stock on hand and units sold; their sum never changes (no sale is lost or invented).
  public func stockLedger() throws(StoreError) -> [String: (onHand: Int, sold: Int)] {
    try read { db in
      var result: [String: (onHand: Int, sold: Int)] = [:]
      for row in try Row.fetchAll(db, sql: "SELECT sku, quantityOnHand, sold FROM stock") {
        result[row["sku"]] = (row["quantityOnHand"], row["sold"])
      }
      return result
    }
  }

  /// Succeeded charges, orders and the units their order lines hold, for consistency checks.
  public func orderTotals() throws(StoreError) -> (charges: Int, orders: Int, unitsBySKU: [String: Int]) {
    try read { db in
      let charges = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM charge WHERE status = 'succeeded'") ?? 0
      let orders = try Int.fetchOne(db, sql: #"SELECT COUNT(*) FROM "order""#) ?? 0
      var units: [String: Int] = [:]
      for row in try Row.fetchAll(db, sql: "SELECT sku, SUM(quantity) AS units FROM orderItem GROUP BY sku") {
        units[row["sku"]] = row["units"]
      }
      return (charges, orders, units)
    }
  }

  /// The stored order document (JSON text), or nil.
  public func orderDocument(id: String) throws(StoreError) -> String? {
    try read { db in
      try String.fetchOne(db, sql: #"SELECT document FROM "order" WHERE orderId = ?"#, arguments: [id])
    }
  }
}

/// A store being opened on another thread, so that opening overlaps reading the config at start.
public final class StoreOpening: @unchecked Sendable {
  private let done = DispatchSemaphore(value: 0)
  private var result: Result<Store, StoreError>?

  public init(path: String, busyTimeout: TimeInterval = Store.busyTimeout) {
    let thread = Thread { [self] in
      do throws(StoreError) {
        result = .success(try Store(path: path, busyTimeout: busyTimeout))
      } catch {
        result = .failure(error)
      }
      done.signal()
    }
    thread.start()
  }

  /// Waits for the store to be open.
  public func wait() throws(StoreError) -> Store {
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
  private var prepare: ((Store) throws -> Void)?
  private var result: Result<Store, StoreError>?

  /// A store that is already open and prepared.
  public init(_ store: Store) {
    result = .success(store)
  }

  /// A store being opened; `prepare` runs once on it, on the thread that first asks for it.
  public init(opening: StoreOpening, prepare: @escaping (Store) throws -> Void) {
    self.opening = opening
    self.prepare = prepare
  }

  /// The store, waiting for it to be open the first time. A store that failed to open or prepare
  /// keeps failing with the same error.
  public func get() throws(StoreError) -> Store {
    lock.lock()
    defer { lock.unlock() }
    if let result { return try result.get() }
    let resolved: Result<Store, StoreError>
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
