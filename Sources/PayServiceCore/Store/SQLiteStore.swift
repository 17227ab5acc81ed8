import Foundation
import GRDB

/// The order store in one SQLite database (the default backend).
///
/// One `SQLiteStore` owns one `DatabaseQueue`. Files use WAL with `synchronous = FULL`, so a commit is
/// durable before anyone is answered; several processes may share a file, waiting up to
/// `busyTimeout` for each other's write transactions.
///
/// Unchecked Sendable: its one mutable property, `inGroup`, is only set and read inside `dbQueue`'s
/// write closures, which GRDB runs one at a time.
public final class SQLiteStore: Store, @unchecked Sendable {
  public static let busyTimeout: TimeInterval = 5

  /// The database itself, for tests and maintenance tools; the service goes through the `Store` methods.
  public let dbQueue: DatabaseQueue

  public let identifiers: Identifiers

  /// Opens (creating if needed) the store at `path`; `:memory:` is a private throwaway store.
  ///
  /// Several processes may open the same fresh file at once (plugins each start their own
  /// payservice): opening — the switch to WAL and the migrations — is serialized by `OpeningLock`.
  ///
  /// - Parameter newIdentifierKey: the identifier key if this opening creates the store; by
  ///   default a random one, or the one `PAYSERVICE_ID_KEY` pins (`IdentifierKey.forNewStore`),
  ///   made only when the store is created.
  public init(
    path: String, busyTimeout: TimeInterval = SQLiteStore.busyTimeout, newIdentifierKey: IdentifierKey? = nil
  ) throws(StoreError) {
    let candidateKey = { @Sendable () throws -> IdentifierKey in
      if let newIdentifierKey { return newIdentifierKey }
      return try IdentifierKey.forNewStore()
    }
    var configuration = Configuration()
    configuration.busyMode = .timeout(busyTimeout)
    configuration.label = "payservice.store"
    let openingLock = path == ":memory:" ? nil : OpeningLock(storePath: path, timeout: busyTimeout)
    defer { openingLock?.release() }
    do {
      if path == ":memory:" {
        dbQueue = try DatabaseQueue(configuration: configuration)
      } else {
        // The files hold contacts: refused when someone else could have written them, created
        // 0600 (SQLiteFiles).
        try SQLiteFiles.check(path)
        configuration.journalMode = .wal
        dbQueue = try SQLiteFiles.creatingPrivately { try DatabaseQueue(path: path, configuration: configuration) }
        try dbQueue.writeWithoutTransaction { db in
          // Every commit is fsync'ed before it is answered. This must come after opening: GRDB's
          // WAL setup sets synchronous = NORMAL (commits not synced), which would override a
          // prepareDatabase step.
          try db.execute(sql: "PRAGMA synchronous = FULL")
          // The log is copied back into the file every `checkpointPages` pages rather than
          // SQLite's 1,000: an order writes a dozen index pages at random places, and a checkpoint
          // writes each page changed since the last one once, so checkpoints further apart write
          // less of a large store again (see docs/performance.md).
          _ = try Row.fetchOne(db, sql: "PRAGMA wal_autocheckpoint = \(SQLiteStore.checkpointPages)")
          // The connection caches up to `cacheKiB` of the file's pages instead of SQLite's 2 MB: a
          // large store's indexes are keyed by random ids, and with 2 MB nearly every leaf an
          // order's inserts reach was read again from the file (see docs/internals/store.md).
          try db.execute(sql: "PRAGMA cache_size = -\(SQLiteStore.cacheKiB)")
        }
      }
      // Statement and savepoint journals (a group commit's savepoints) stay in memory instead of
      // temporary files: they only serve rollbacks within a transaction, never recovery.
      try dbQueue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA temp_store = MEMORY") }
      // Content a write frees (an erased contact's old text) is zeroed where that costs no extra I/O,
      // so that it does not linger in the file's free space.
      try dbQueue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA secure_delete = FAST") }
      let migrator = SQLiteStore.migrator(newIdentifierKey: candidateKey)
      let superseded = try dbQueue.read { db in try migrator.hasBeenSuperseded(db) }
      if superseded { throw StoreError.newerSchema(location: path) }
      try migrator.migrate(dbQueue)
      // Again now that SQLite has opened the -wal and -shm: one someone else made meanwhile is refused.
      if path != ":memory:" { try SQLiteFiles.check(path) }
      let keyHex = try dbQueue.read { db in
        try String.fetchOne(
          db, sql: "SELECT keyHex FROM storeKey WHERE purpose = ?", arguments: [StoreSchema.identifierKeyPurpose])
      }
      guard let key = keyHex.flatMap(IdentifierKey.init(hex:)) else {
        throw StoreError.cannotOpen(location: path, reason: "its identifier key (table storeKey) is missing or unreadable")
      }
      identifiers = Identifiers(key: key)
    } catch let error as StoreError {
      throw error
    } catch let error as DatabaseError {
      throw StoreError.cannotOpen(location: path, reason: error.message ?? "SQLite error \(error.resultCode)")
    } catch {
      throw StoreError.cannotOpen(location: path, reason: "\(error)")
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
      let directory = PathText.directory(of: storePath)
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

  /// Pages the write-ahead log grows by between automatic checkpoints (about 40 MB of 4 KiB pages).
  static let checkpointPages = 10_000

  /// The size of the connection's page cache, in KiB (64 MiB; memory is taken as pages are read).
  static let cacheKiB = 65_536

  /// `StoreSchema.migrations` in SQLite's SQL. Never edit one that has shipped: add a new one.
  /// `newIdentifierKey` makes the key migration v8 gives a store that has none.
  static func migrator(newIdentifierKey: @escaping @Sendable () throws -> IdentifierKey) -> DatabaseMigrator {
    var migrator = DatabaseMigrator()
    // The migrations only create tables and add columns, so foreign keys are checked as each
    // statement runs (`.immediate`) instead of by a whole-database check after each migration:
    // the same guarantee, without reading the whole database when a store is opened.
    migrator.registerMigration(StoreSchema.migrations[0], foreignKeyChecks: .immediate) { db in
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
    migrator.registerMigration(StoreSchema.migrations[1], foreignKeyChecks: .immediate) { db in
      try db.execute(sql: "ALTER TABLE chargeToken ADD COLUMN paymentMethod TEXT")
    }
    migrator.registerMigration(StoreSchema.migrations[2], foreignKeyChecks: .immediate) { db in
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
    migrator.registerMigration(StoreSchema.migrations[3], foreignKeyChecks: .immediate) { db in
      try db.execute(sql: SQLiteStore.backOfficeMigration)
    }
    migrator.registerMigration(StoreSchema.migrations[4], foreignKeyChecks: .immediate) { db in
      try db.execute(sql: SQLiteStore.remoteGatewayMigration)
    }
    migrator.registerMigration(StoreSchema.migrations[5], foreignKeyChecks: .immediate) { db in
      // Orders before it were priced with tax added.
      try db.execute(sql: #"ALTER TABLE "order" ADD COLUMN taxIncluded INTEGER NOT NULL DEFAULT 0"#)
    }
    migrator.registerMigration(StoreSchema.migrations[6], foreignKeyChecks: .immediate) { db in
      // The order a token pays for is ord_ + its digest, so the token's row keeps it for the order.
      try db.execute(sql: "ALTER TABLE chargeToken ADD COLUMN walletOrderToken TEXT")
    }
    migrator.registerMigration(StoreSchema.migrations[7], foreignKeyChecks: .immediate) { db in
      // The key identifiers are made under (`Identifiers`): created once, with the store.
      try db.execute(sql: StoreSchema.storeKeyTable)
      try db.execute(sql: StoreSchema.unusedChargeTokenIndex)
      try db.execute(
        sql: "INSERT INTO storeKey (purpose, keyHex) VALUES (?, ?)",
        arguments: [StoreSchema.identifierKeyPurpose, try newIdentifierKey().hex])
    }
    migrator.registerMigration(StoreSchema.migrations[8], foreignKeyChecks: .immediate) { db in
      try db.execute(sql: StoreSchema.operationTable)
      try db.execute(sql: StoreSchema.pendingOperationIndex)
      try db.execute(sql: StoreSchema.usedChargeTokensToOperations(attemptObject: SQLiteStore.attemptObject))
      try db.execute(sql: StoreSchema.backOfficeRequestsToOperations)
      for statement in StoreSchema.supersededByOperations { try db.execute(sql: statement) }
    }
    migrator.registerMigration(StoreSchema.migrations[9], foreignKeyChecks: .immediate) { db in
      for statement in StoreSchema.shopMigration { try db.execute(sql: statement) }
    }
    migrator.registerMigration(StoreSchema.migrations[10], foreignKeyChecks: .immediate) { db in
      for statement in StoreSchema.gatewayMoneyTables { try db.execute(sql: statement) }
      try db.execute(
        sql: "UPDATE refund SET gatewayRefundId = NULLIF(json_extract(document, '$.gatewayRefundId'), '')")
      try db.execute(sql: StoreSchema.refundByGatewayRefundIndex)
      try Self.remakeOrderEvent(db)
    }
    // Foreign keys are checked once after this migration (GRDB's default): the charge table is
    // made again, as SQLite documents for changing a column, so that a payment the merchant
    // starts from an agreement has a charge without a charge token.
    migrator.registerMigration(StoreSchema.migrations[11]) { db in
      try db.execute(
        sql: """
          CREATE TABLE chargeNew (
            chargeId TEXT PRIMARY KEY NOT NULL,
            token TEXT UNIQUE REFERENCES chargeToken(token),
            status TEXT NOT NULL CHECK (status IN ('succeeded', 'failed')),
            failureCode TEXT,
            declineCode TEXT,
            amountMinor INTEGER NOT NULL,
            currencyCode TEXT NOT NULL,
            createdAt TEXT NOT NULL
          );
          INSERT INTO chargeNew (chargeId, token, status, failureCode, declineCode, amountMinor, currencyCode, createdAt)
            SELECT chargeId, token, status, failureCode, declineCode, amountMinor, currencyCode, createdAt FROM charge;
          DROP TABLE charge;
          ALTER TABLE chargeNew RENAME TO charge;
          """)
      for statement in StoreSchema.agreementTables { try db.execute(sql: statement) }
    }
    migrator.registerMigration(StoreSchema.migrations[12], foreignKeyChecks: .immediate) { db in
      for statement in StoreSchema.appStoreTables { try db.execute(sql: statement) }
    }
    // PostgreSQL's batch function: nothing to make here (SQLite's statements cost no round trip).
    migrator.registerMigration(StoreSchema.migrations[13], foreignKeyChecks: .immediate) { _ in }
    migrator.registerMigration(StoreSchema.migrations[14], foreignKeyChecks: .immediate) { _ in }
    migrator.registerMigration(StoreSchema.migrations[15], foreignKeyChecks: .immediate) { _ in }
    migrator.registerMigration(StoreSchema.migrations[16], foreignKeyChecks: .immediate) { _ in }
    migrator.registerMigration(StoreSchema.migrations[17], foreignKeyChecks: .immediate) { db in
      try db.execute(sql: StoreSchema.settledCallsCleared)
    }
    migrator.registerMigration(StoreSchema.migrations[18], foreignKeyChecks: .immediate) { db in
      try Self.remakeOrderEvent(db)
    }
    migrator.registerMigration(StoreSchema.migrations[19], foreignKeyChecks: .immediate) { db in
      for statement in StoreSchema.walletOrderTables { try db.execute(sql: statement) }
    }
    migrator.registerMigration(StoreSchema.migrations[20], foreignKeyChecks: .immediate) { db in
      for statement in StoreSchema.merchantTokenTables { try db.execute(sql: statement) }
    }
    return migrator
  }

  /// Migrations v11 and v19: the order event table with today's kinds in its check. SQLite cannot
  /// change a column's check, so the table is made again (nothing refers to it).
  static func remakeOrderEvent(_ db: Database) throws {
    try db.execute(
      sql: """
        CREATE TABLE orderEventNew (
          orderId TEXT NOT NULL REFERENCES "order"(orderId),
          position INTEGER NOT NULL CHECK (position > 0),
          kind TEXT NOT NULL \(StoreSchema.orderEventKindCheck),
          at TEXT NOT NULL,
          amountMinor INTEGER NOT NULL,
          reference TEXT NOT NULL,
          reason TEXT,
          PRIMARY KEY (orderId, position)
        );
        INSERT INTO orderEventNew (orderId, position, kind, at, amountMinor, reference, reason)
          SELECT orderId, position, kind, at, amountMinor, reference, reason FROM orderEvent;
        DROP TABLE orderEvent;
        ALTER TABLE orderEventNew RENAME TO orderEvent;
        """)
  }

  /// Migration v4. Orders recorded before it were charged at once: they are `paid` with their
  /// whole amount captured; their lines and shipping have no per-line amounts (NULL), so they are
  /// refunded by amount only. `orderEvent` holds what happened after placement (the placement's own
  /// events are read from the order document).
  static let backOfficeMigration = """
    ALTER TABLE "order" ADD COLUMN status TEXT NOT NULL DEFAULT 'paid'
      CHECK (status IN ('authorized', 'paid', 'partially_refunded', 'refunded', 'canceled'));
    ALTER TABLE "order" ADD COLUMN capturedMinor INTEGER;
    ALTER TABLE "order" ADD COLUMN refundedMinor INTEGER NOT NULL DEFAULT 0 CHECK (refundedMinor >= 0);
    ALTER TABLE "order" ADD COLUMN shippingMinor INTEGER;
    ALTER TABLE "order" ADD COLUMN shippingTaxMinor INTEGER;
    ALTER TABLE "order" ADD COLUMN shippingRefunded INTEGER NOT NULL DEFAULT 0;
    UPDATE "order" SET capturedMinor = amountMinor;
    CREATE INDEX orderByCreation ON "order" (createdAt, orderId);
    ALTER TABLE orderItem ADD COLUMN discountMinor INTEGER;
    ALTER TABLE orderItem ADD COLUMN taxMinor INTEGER;
    ALTER TABLE orderItem ADD COLUMN refundedQuantity INTEGER NOT NULL DEFAULT 0 CHECK (refundedQuantity >= 0);
    CREATE TABLE orderEvent (
      orderId TEXT NOT NULL REFERENCES "order"(orderId),
      position INTEGER NOT NULL CHECK (position > 0),
      kind TEXT NOT NULL CHECK (kind IN ('placed', 'authorized', 'captured', 'canceled', 'refunded')),
      at TEXT NOT NULL,
      amountMinor INTEGER NOT NULL,
      reference TEXT NOT NULL,
      reason TEXT,
      PRIMARY KEY (orderId, position)
    );
    CREATE TABLE refund (
      refundId TEXT PRIMARY KEY NOT NULL,
      orderId TEXT NOT NULL REFERENCES "order"(orderId),
      position INTEGER NOT NULL,
      createdAt TEXT NOT NULL,
      amountMinor INTEGER NOT NULL CHECK (amountMinor >= 0),
      document TEXT NOT NULL,
      UNIQUE (orderId, position)
    );
    CREATE TABLE backOfficeRequest (
      kind TEXT NOT NULL CHECK (kind IN ('capture', 'cancel', 'refund')),
      key TEXT NOT NULL,
      orderId TEXT NOT NULL REFERENCES "order"(orderId),
      fingerprint TEXT NOT NULL,
      result TEXT NOT NULL,
      createdAt TEXT NOT NULL,
      PRIMARY KEY (kind, key)
    );
    ALTER TABLE paymentAuthorization ADD COLUMN releasedAt TEXT;
    """

  /// Migration v5. A charge through a remote gateway is first a `paymentAttempt` (its stock taken,
  /// its token used without an answer), committed before the gateway is called; the row goes when
  /// the answer is recorded. The token keeps what the gateway charges, the order the gateway's payment.
  static let remoteGatewayMigration = """
    ALTER TABLE chargeToken ADD COLUMN gatewayPaymentData TEXT;
    ALTER TABLE "order" ADD COLUMN gatewayPaymentId TEXT;
    CREATE TABLE paymentAttempt (
      orderId TEXT PRIMARY KEY NOT NULL,
      token TEXT NOT NULL UNIQUE REFERENCES chargeToken(token),
      idempotencyKey TEXT NOT NULL UNIQUE,
      paymentData TEXT NOT NULL,
      amountMinor INTEGER NOT NULL CHECK (amountMinor > 0),
      currencyCode TEXT NOT NULL,
      captureManually INTEGER NOT NULL,
      createdAt TEXT NOT NULL,
      itemCount INTEGER NOT NULL,
      prepared TEXT NOT NULL
    );
    """

  /// A `paymentAttempt` row `a` as the JSON object of its pending charge (`ProcessOrder.Charge`),
  /// for migration v9.
  static let attemptObject = """
    json_object('orderId', a.orderId, 'token', a.token, 'idempotencyKey', a.idempotencyKey,
      'paymentData', a.paymentData, 'amountMinor', a.amountMinor, 'currencyCode', a.currencyCode,
      'captureManually', json(CASE WHEN a.captureManually THEN 'true' ELSE 'false' END), 'createdAt', a.createdAt,
      'itemCount', a.itemCount, 'prepared', a.prepared)
    """

  public func seedStock(_ catalog: [Product]) throws(StoreError) {
    do {
      try dbQueue.write { db in
        for product in catalog {
          try db.execute(
            sql: "INSERT INTO stock (sku, quantityOnHand) VALUES (?, ?) ON CONFLICT(sku) DO NOTHING",
            arguments: [product.sku, product.quantityOnHand])
        }
      }
    } catch {
      throw SQLiteStore.unavailable(error)
    }
  }

  /// An IMMEDIATE transaction: the write lock is taken up front, so concurrent processes queue on
  /// the busy timeout instead of failing on a lock upgrade. Inside `groupCommit` (on its queue), a
  /// savepoint of the group's transaction. Any other thread waits for GRDB's queue, so it never
  /// sees the group.
  public func write<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
    do {
      return try dbQueue.unsafeReentrantWrite { db in
        var result: T?
        if inGroup {
          // SQLite rolls a whole transaction back on some errors (a full disk): then nothing may
          // run outside it, in autocommit.
          guard db.isInsideTransaction else {
            throw StoreError.unavailable(reason: "the group's transaction was rolled back")
          }
          try db.inSavepoint {
            result = try body(SQLiteTransaction(db: db))
            return .commit
          }
        } else {
          try db.inTransaction(.immediate) {
            result = try body(SQLiteTransaction(db: db))
            return .commit
          }
        }
        return result!
      }
    } catch let error as DatabaseError {
      throw SQLiteStore.unavailable(error)
    }
  }

  /// Whether `groupCommit`'s transaction is open: set, cleared and read only on `dbQueue`.
  private var inGroup = false

  /// One IMMEDIATE transaction: many orders cost one fsync. (Reading ahead saves nothing here.)
  public func groupCommit(readAhead: ReadAhead, _ body: () -> Void) throws(StoreError) {
    do {
      try dbQueue.writeWithoutTransaction { db in
        try db.inTransaction(.immediate) {
          inGroup = true
          defer { inGroup = false }
          body()
          return .commit
        }
      }
    } catch {
      throw SQLiteStore.unavailable(error)
    }
  }

  /// Errors of SQLite (or GRDB) as the store's.
  static func unavailable(_ error: any Error) -> StoreError {
    if let error = error as? StoreError { return error }
    if let error = error as? DatabaseError {
      return .unavailable(reason: error.message ?? "SQLite error \(error.resultCode)")
    }
    return .unavailable(reason: "\(error)")
  }

  public func read<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
    do {
      return try dbQueue.read(body)
    } catch {
      throw SQLiteStore.unavailable(error)
    }
  }

  public func stock() throws(StoreError) -> [String: Int] {
    try read { db in
      var result: [String: Int] = [:]
      for row in try Row.fetchAll(db, sql: "SELECT sku, quantityOnHand FROM stock") {
        result[row["sku"]] = row["quantityOnHand"]
      }
      return result
    }
  }

  public func stockLevels() throws(StoreError) -> [StockLevel] {
    try read { db in
      try Row.fetchAll(db, sql: StoreSQL.stockLevels.sqlite).map { row in
        StockLevel(sku: row[0], quantityOnHand: row[1], sold: row[2])
      }
    }
  }

  public func stockEvents(sku: String, limit: Int) throws(StoreError) -> [StockEventRow] {
    try read { db in
      try Row.fetchAll(db, sql: StoreSQL.stockEvents.sqlite, arguments: [sku, limit]).map(SQLiteTransaction.stockEvent)
    }
  }

  public func scrubErased() throws(StoreError) {
    do {
      try dbQueue.writeWithoutTransaction { db in _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    } catch {
      throw SQLiteStore.unavailable(error)
    }
  }

  public func check() throws(StoreError) {
    _ = try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM storeKey") }
  }

  public func order(id: String) throws(StoreError) -> StoredOrder? {
    try read { db in
      guard
        let row = try Row.fetchOne(db, sql: StoreSQL.storedOrder.sqlite, arguments: [id])
      else { return nil }
      let events = try Row.fetchAll(db, sql: StoreSQL.orderEvents.sqlite, arguments: [id]).map { event throws(StoreError) in
        guard let kind = OrderEventRow.Kind(rawValue: event[1]) else {
          throw StoreError.unavailable(reason: "order \(id) has an event of unknown kind")
        }
        return OrderEventRow(
          orderId: id, position: event[0], kind: kind, at: event[2], amountMinor: event[3], reference: event[4],
          reason: event[5])
      }
      let refunds = try String.fetchAll(db, sql: StoreSQL.refundDocuments.sqlite, arguments: [id])
      let disputes = try Row.fetchAll(db, sql: StoreSQL.disputesOfOrder.sqlite, arguments: [id]).map(SQLiteTransaction.dispute)
      return StoredOrder(
        document: row[0], status: try OrderStatus(stored: row[1]), capturedMinor: row[2], refundedMinor: row[3],
        events: events, refunds: refunds, disputes: disputes)
    }
  }

  public func orders(_ query: OrderQuery) throws(StoreError) -> [OrderSummaryRow] {
    let (sql, values) = StoreSQL.orders(query, in: .sqlite)
    return try read { db in
      try Row.fetchAll(db, sql: sql, arguments: SQLiteTransaction.arguments(values)).map { row throws(StoreError) in
        OrderSummaryRow(
          orderId: row[0], createdAt: row[1], status: try OrderStatus(stored: row[2]), amountMinor: row[3],
          refundedMinor: row[4], currencyCode: row[5], itemCount: row[6], agreementId: row[7])
      }
    }
  }

  public func moneyMovements(from: String, to: String) throws(StoreError) -> [MoneyMovementRow] {
    try read { db in
      try Row.fetchAll(
        db, sql: StoreSchema.moneyMovementsQuery(placeholders: ["?1", "?2", "?1", "?2"], collate: ""),
        arguments: [from, to]
      ).map { row throws(StoreError) in
        guard let kind = OrderEventRow.Kind(rawValue: row[2]) else {
          throw StoreError.unavailable(reason: "an order event has an unknown kind")
        }
        return MoneyMovementRow(day: row[0], currencyCode: row[1], kind: kind, amountMinor: row[3])
      }
    }
  }

  public func agreement(id: String) throws(StoreError) -> StoredAgreement? {
    try read { db in
      guard
        let row = try Row.fetchOne(db, sql: StoreSQL.agreement.sqlite, arguments: [id])
      else { return nil }
      let events = try Row.fetchAll(db, sql: StoreSQL.agreementEvents.sqlite, arguments: [id])
        .map(SQLiteTransaction.agreementEvent)
      return StoredAgreement(row: try SQLiteTransaction.agreement(row), events: events)
    }
  }

  public func agreements(_ query: AgreementQuery) throws(StoreError) -> [AgreementRow] {
    let (sql, values) = StoreSQL.agreements(query, in: .sqlite)
    return try read { db in
      try Row.fetchAll(db, sql: sql, arguments: SQLiteTransaction.arguments(values)).map(SQLiteTransaction.agreement)
    }
  }

  public func dueAgreements(by: Int64, after: AgreementCursor?, limit: Int, shard: AgreementShard?) throws(StoreError)
    -> [AgreementRow]
  {
    let (statement, values) = StoreSQL.dueAgreements(by: by, after: after, limit: limit, shard: shard)
    return try read { db in
      try Row.fetchAll(db, sql: statement.sqlite, arguments: SQLiteTransaction.arguments(values))
        .map(SQLiteTransaction.agreement)
    }
  }

  public func pendingOperations() throws(StoreError) -> [OperationRow] {
    try read { db in
      try Row.fetchAll(db, sql: StoreSQL.pendingOperations.sqlite).map(SQLiteTransaction.operation)
    }
  }

  public func pendingOperations(createdBy: String, after: OperationPosition?, limit: Int) throws(StoreError)
    -> [OperationRow]
  {
    let values = StoreSQL.pendingOperationsPage(createdBy: createdBy, after: after, limit: limit)
    return try read { db in
      try Row.fetchAll(db, sql: StoreSQL.pendingOperationsPage.sqlite, arguments: SQLiteTransaction.arguments(values))
        .map(SQLiteTransaction.operation)
    }
  }
}
