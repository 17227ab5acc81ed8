// MARK: Stock by hand and personal data (`StockBook`, `PersonalDataBook`)

extension StoreSQL {
  /// (sku) Its stock (PostgreSQL locks it).
  public static let stockLevel = StoreStatement("SELECT quantityOnHand, sold FROM stock WHERE sku = ?")

  /// (quantity, sku)
  public static let setQuantityOnHand = StoreStatement("UPDATE stock SET quantityOnHand = ? WHERE sku = ?")

  public static let nextStockEventPosition = StoreStatement(
    "SELECT COALESCE(MAX(position), 0) + 1 FROM stockEvent WHERE sku = ?")

  /// A stock event's columns, in `StockEventRow`'s order.
  public static let stockEventColumns = "sku, position, kind, at, delta, quantityOnHand, adjustmentId, reason"

  public static let insertStockEvent = StoreStatement(
    "INSERT INTO stockEvent (\(stockEventColumns)) VALUES (\(StoreStatement.placeholders(8)))")

  public static func values(_ event: StockEventRow) -> [StoreValue] {
    [
      .text(event.sku), .int(event.position), .text(event.kind.rawValue), .text(event.at), .int(event.delta),
      .int(event.quantityOnHand), .text(event.adjustmentId), .text(event.reason),
    ]
  }

  /// The tokens an erasure by `selector` covers, oldest first, at most `limit`, as `dialect`
  /// writes it, and what it binds. `emailCondition` is the backend's test, on `t` the token and
  /// `op` its journal entry, that a contact the token or its request kept has the address `?1`
  /// (ASCII letters folded: `ErasureSelector.foldedEmail`).
  public static func tokensToErase(
    _ selector: ErasureSelector, limit: Int, in dialect: StoreStatement.Dialect, emailCondition: String
  ) -> (sql: String, values: [StoreValue]) {
    let condition: String
    let value: String
    switch selector {
    case .emailAddress(let address):
      condition = emailCondition
      value = ErasureSelector.foldedEmail(address)
    case .orderId(let orderId):
      condition = "o.orderId = ?1"
      value = orderId
    case .issuedBefore(let time):
      condition = "t.issuedAt\(dialect.collate) < ?1"
      value = time
    }
    let sql = """
      SELECT t.token FROM chargeToken t
      LEFT JOIN charge c ON c.token = t.token LEFT JOIN "order" o ON o.chargeId = c.chargeId
      LEFT JOIN operation op ON op.kind = 'order' AND op.key = t.token
      WHERE t.erasedAt IS NULL AND (op.state IS NULL OR op.state = 'settled') AND \(condition)
      ORDER BY t.sequence LIMIT ?2
      """
    return (dialect.placing(sql), [.text(value), .int(limit)])
  }

  /// (token) What a token and its order hold of the buyer (PostgreSQL locks the token).
  public static let personalData = StoreStatement(
    """
    SELECT t.binding, t.billingContact, o.orderId, o.document FROM chargeToken t
    LEFT JOIN charge c ON c.token = t.token LEFT JOIN "order" o ON o.chargeId = c.chargeId
    WHERE t.token = ?
    """)

  /// (binding, billingContact, now, token)
  public static let eraseChargeToken = StoreStatement(
    "UPDATE chargeToken SET binding = ?, billingContact = ?, erasedAt = ? WHERE token = ?")

  /// (document, now, orderId)
  public static let eraseOrder = StoreStatement(#"UPDATE "order" SET document = ?, erasedAt = ? WHERE orderId = ?"#)

  /// (orderId, marker) The events whose staff reason `eraseStaffReasons` replaces with the marker.
  static let staffReasons =
    "orderId = ?1 AND kind IN ('refunded', 'canceled') AND reason IS NOT NULL AND reason <> ?2"
  public static let staffReasonEvents = StoreStatement(
    "SELECT position, kind, at, amountMinor, reference, reason FROM orderEvent WHERE \(staffReasons)")
  public static let eraseStaffReasons = StoreStatement("UPDATE orderEvent SET reason = ?2 WHERE \(staffReasons)")
}

extension StatementRunner {
  public func setQuantityOnHand(_ sku: String, to quantity: Int) throws {
    try executeOne(StoreSQL.setQuantityOnHand, [.int(quantity), .text(sku)], orFail: "stock of \(sku) vanished")
  }

  public func insert(_ event: StockEventRow) throws {
    try execute(StoreSQL.insertStockEvent, StoreSQL.values(event))
  }

  public func erasePersonalData(_ row: PersonalDataRow, at now: String) throws {
    try executeOne(
      StoreSQL.eraseChargeToken, [.text(row.binding), .text(row.billingContact), .text(now), .text(row.token)],
      orFail: "a charge token vanished")
    if let orderId = row.orderId, let document = row.orderDocument {
      try executeOne(
        StoreSQL.eraseOrder, [.text(document), .text(now), .text(orderId)], orFail: "order \(orderId) vanished")
    }
  }
}
