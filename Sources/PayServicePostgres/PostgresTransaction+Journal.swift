import PayServiceCore
import PostgresNIO

// MARK: The journal and key locks

extension PostgresTransaction: Journal, JournalUpkeep {
  /// A row selected with `StoreSQL.operationColumns`.
  static func operation(_ row: PostgresRow) throws -> OperationRow {
    let (kind, key, fingerprint, state, subject, request, result, created, settled) = try row.columns(
      (String, String, String, String, String?, String?, String?, String, String?).self)
    return OperationRow(
      kind: kind, key: key, fingerprint: fingerprint, state: try OperationRow.State(stored: state), subject: subject,
      request: request, result: result, created: created, settled: settled)
  }

  // FOR UPDATE: a second transaction on this key waits for the first to end, then reads what it left.
  static let operation = StoreSQL.operation.postgres + " FOR UPDATE"

  func operation(kind: String, key: String) throws -> OperationRow? {
    try one(Self.operation, [.text(kind), .text(key)], Self.operation)
  }

  func pendingOperations(subject: String) throws -> [OperationRow] {
    try all(StoreSQL.pendingOperationsAbout.postgres, [.text(subject)], Self.operation)
  }

  func lockKey(_ space: String, _ key: String) throws {
    _ = try rows("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", [.text(space), .text(key)])
  }
}
