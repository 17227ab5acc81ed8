// MARK: The journal and key locks (`Journal`, `JournalUpkeep`)

extension StoreSQL {
  /// A journal entry's columns, in `OperationRow`'s order.
  public static let operationColumns = "kind, key, fingerprint, state, subject, request, result, created, settled"

  /// An entry by kind and key (PostgreSQL locks it).
  public static let operation = StoreStatement("SELECT \(operationColumns) FROM operation WHERE kind = ? AND key = ?")

  public static let insertOperation = StoreStatement(
    """
    INSERT INTO operation (\(operationColumns)) VALUES (\(StoreStatement.placeholders(9)))
    ON CONFLICT (kind, key) DO NOTHING
    """)

  public static func values(_ operation: OperationRow) -> [StoreValue] {
    [
      .text(operation.kind), .text(operation.key), .text(operation.fingerprint), .text(operation.state.rawValue),
      .text(operation.subject), .text(operation.request), .text(operation.result), .text(operation.created),
      .text(operation.settled),
    ]
  }

  /// (result, now, kind, key). The call goes: it is never sent again, and a charge's holds the
  /// payment data.
  public static let settleOperation = StoreStatement(
    """
    UPDATE operation SET state = 'settled', result = ?, settled = ?, request = NULL
    WHERE kind = ? AND key = ? AND state = 'pending'
    """)

  /// (kind, key)
  public static let removeOperation = StoreStatement(
    "DELETE FROM operation WHERE kind = ? AND key = ? AND state = 'pending'")

  /// (fingerprint, result, kind, key)
  public static let rewriteOperation = StoreStatement(
    "UPDATE operation SET fingerprint = ?, result = ? WHERE kind = ? AND key = ? AND state = 'settled'")

  /// The pending entries about a subject, oldest first.
  public static let pendingOperationsAbout = StoreStatement { dialect in
    """
    SELECT \(operationColumns) FROM operation WHERE subject = ? AND state = 'pending'
    ORDER BY created\(dialect.collate), kind\(dialect.collate), key\(dialect.collate)
    """
  }

  /// (createdBy, created, created, kind, kind, key, limit): a page of the pending entries created at
  /// or before a time, oldest first, after a position.
  public static let pendingOperationsPage = StoreStatement { dialect in
    let c = dialect.collate
    return """
      SELECT \(operationColumns) FROM operation WHERE state = 'pending' AND created\(c) <= ?
        AND (created\(c) > ? OR (created\(c) = ? AND (kind\(c) > ? OR (kind\(c) = ? AND key\(c) > ?))))
      ORDER BY created\(c), kind\(c), key\(c) LIMIT ?
      """
  }

  /// The values of `pendingOperationsPage`.
  public static func pendingOperationsPage(createdBy: String, after: OperationPosition?, limit: Int) -> [StoreValue] {
    let position = after ?? OperationPosition(created: "", kind: "", key: "")
    return [
      .text(createdBy), .text(position.created), .text(position.created), .text(position.kind), .text(position.kind),
      .text(position.key), .int(limit),
    ]
  }

  /// Every pending entry, oldest first.
  public static let pendingOperations = StoreStatement { dialect in
    """
    SELECT \(operationColumns) FROM operation WHERE state = 'pending'
    ORDER BY created\(dialect.collate), kind\(dialect.collate), key\(dialect.collate)
    """
  }
}

extension StatementRunner {
  public func insert(_ operation: OperationRow) throws -> Bool {
    // PostgreSQL: a concurrent insert of the same key waits here for the other transaction, then
    // does nothing.
    try execute(StoreSQL.insertOperation, StoreSQL.values(operation)) == 1
  }

  public func settleOperation(kind: String, key: String, result: String, at now: String) throws {
    try executeOne(
      StoreSQL.settleOperation, [.text(result), .text(now), .text(kind), .text(key)],
      orFail: "operation \(kind) \(key) is not pending")
  }

  public func removeOperation(kind: String, key: String) throws {
    try executeOne(
      StoreSQL.removeOperation, [.text(kind), .text(key)], orFail: "operation \(kind) \(key) is not pending")
  }

  public func rewriteOperation(kind: String, key: String, fingerprint: String, result: String?) throws {
    try executeOne(
      StoreSQL.rewriteOperation, [.text(fingerprint), .text(result), .text(kind), .text(key)],
      orFail: "operation \(kind) \(key) is not settled")
  }
}
