import Foundation
import GRDB
import PayServiceCore
import PayServicePostgres
import PostgresNIO

/// Audits of a store's rows that the service itself never makes: read with plain SQL, on either
/// backend, for tests that check what a store holds after orders, crashes and races.
extension Store {
  /// Each sku's stock on hand and units sold; their sum never changes (no sale is lost or invented).
  public func stockLedger() throws -> [String: (onHand: Int, sold: Int)] {
    var ledger: [String: (onHand: Int, sold: Int)] = [:]
    for row in try auditRows("SELECT sku, quantityOnHand, sold FROM stock") {
      ledger[row[0]] = (Int(row[1])!, Int(row[2])!)
    }
    return ledger
  }

  /// Succeeded charges, orders and the units their order lines hold.
  public func orderTotals() throws -> (charges: Int, orders: Int, unitsBySKU: [String: Int]) {
    let counts = try auditRows(
      #"SELECT (SELECT COUNT(*) FROM charge WHERE status = 'succeeded'), (SELECT COUNT(*) FROM "order")"#)[0]
    var units: [String: Int] = [:]
    for row in try auditRows("SELECT sku, CAST(SUM(quantity) AS BIGINT) FROM orderItem GROUP BY sku") { units[row[0]] = Int(row[1])! }
    return (Int(counts[0])!, Int(counts[1])!, units)
  }

  /// Every stored Apple Pay authorization, oldest first.
  public func authorizations() throws -> [PaymentAuthorization] {
    let order = self is SQLiteStore ? "rowid" : "position"
    return try auditRows(
      """
      SELECT authorizationId, transactionId, network, cardType, lastFour, amountMinor, currencyCode, status
      FROM paymentAuthorization ORDER BY \(order)
      """
    ).map { row in
      PaymentAuthorization(
        authorizationId: row[0], transactionId: row[1], network: row[2], cardType: row[3], lastFour: row[4],
        amountMinor: Int64(row[5])!, currencyCode: row[6], status: try PaymentAuthorization.Status(stored: row[7]))
    }
  }

  /// The ids of the Apple Pay authorizations released by a cancel, oldest first.
  public func releasedAuthorizations() throws -> [String] {
    try auditRows("SELECT authorizationId FROM paymentAuthorization WHERE releasedAt IS NOT NULL ORDER BY authorizationId")
      .map { $0[0] }
  }

  /// Charges still pending at a remote gateway (the journal's pending `order` entries).
  public func pendingAttemptCount() throws -> Int {
    Int(try auditRows("SELECT COUNT(*) FROM operation WHERE kind = 'order' AND state = 'pending'")[0][0])!
  }

  /// The journal's entries still pending, of every kind.
  public func pendingOperationCount() throws -> Int {
    Int(try auditRows("SELECT COUNT(*) FROM operation WHERE state = 'pending'")[0][0])!
  }

  /// Whether `needle` (letters, digits and _) appears anywhere in the store: in its files' bytes
  /// (SQLite: the database, its WAL and shared memory), or in any row of any table (PostgreSQL).
  /// The Wallet order tokens kept with the charge tokens, by charge token.
  public func walletOrderTokens() throws -> [String: String] {
    Dictionary(
      uniqueKeysWithValues: try auditRows(
        "SELECT token, walletOrderToken FROM chargeToken WHERE walletOrderToken IS NOT NULL"
      ).map { ($0[0], $0[1]) })
  }

  public func mentions(_ needle: String) throws -> Bool {
    precondition(needle.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
    switch self {
    case let store as SQLiteStore:
      let path = store.dbQueue.path
      for file in [path, path + "-wal", path + "-shm"] {
        guard let bytes = FileManager.default.contents(atPath: file) else { continue }
        if bytes.range(of: Data(needle.utf8)) != nil { return true }
      }
      return false
    default:
      let tables = try auditRows("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").map { $0[0] }
      precondition(tables.contains("operation"))
      for table in tables {
        let count = try auditRows(#"SELECT COUNT(*) FROM "\#(table)" t WHERE t::text LIKE '%\#(needle)%'"#)[0][0]
        if count != "0" { return true }
      }
      return false
    }
  }

  /// The rows of `sql` with every column as text (no column of these queries is null).
  private func auditRows(_ sql: String) throws -> [[String]] {
    switch self {
    case let store as SQLiteStore:
      return try store.dbQueue.read { db in
        try Row.fetchAll(db, sql: sql).map { row in
          (0..<row.count).map { index -> String in
            switch (row[index] as DatabaseValue).storage {
            case .int64(let number): return String(number)
            case .string(let text): return text
            case .double(let number): return String(number)
            case .blob, .null: preconditionFailure("audit column \(index) of \(sql) is not text or a number")
            }
          }
        }
      }
    case let store as PostgresStore:
      // The store's own server (a test may run one of its own beside the shared one).
      let url = store.url
      let configuration = PostgresConnection.Configuration(
        host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
        tls: .disable)
      let connection = try PostgresConnection.connect(
        on: TestPostgres.group.next(), configuration: configuration, id: 0, logger: TestPostgres.logger
      ).wait()
      defer { try? connection.close().wait() }
      let result = try connection.query(PostgresQuery(unsafeSQL: sql), logger: TestPostgres.logger).wait()
      return try result.rows.map { row in
        try row.map { cell in
          switch cell.dataType {
          case .int8: return String(try cell.decode(Int64.self))
          case .int4: return String(try cell.decode(Int32.self))
          default: return try cell.decode(String.self)
          }
        }
      }
    default:
      preconditionFailure("no audit for \(type(of: self))")
    }
  }
}
