import GRDB

// MARK: The journal and key locks

extension SQLiteTransaction: Journal, JournalUpkeep {
  /// A row selected with `StoreSQL.operationColumns`.
  static func operation(_ row: Row) throws(StoreError) -> OperationRow {
    OperationRow(
      kind: row[0], key: row[1], fingerprint: row[2], state: try OperationRow.State(stored: row[3]), subject: row[4],
      request: row[5], result: row[6], created: row[7], settled: row[8])
  }

  func operation(kind: String, key: String) throws -> OperationRow? {
    // The store's write lock is held already: nothing else changes the entry meanwhile.
    try one(StoreSQL.operation, [.text(kind), .text(key)], Self.operation)
  }

  func pendingOperations(subject: String) throws -> [OperationRow] {
    try all(StoreSQL.pendingOperationsAbout, [.text(subject)], Self.operation)
  }

  func lockKey(_ space: String, _ key: String) throws {
    // The store's write lock is held already: one writer at a time.
  }
}
