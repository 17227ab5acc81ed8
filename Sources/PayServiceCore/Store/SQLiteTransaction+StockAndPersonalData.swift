import GRDB

// MARK: Stock by hand and personal data

extension SQLiteTransaction: StockBook, PersonalDataBook {
  func stockLevel(_ sku: String) throws -> StockLevel? {
    try one(StoreSQL.stockLevel, [.text(sku)]) { StockLevel(sku: sku, quantityOnHand: $0[0], sold: $0[1]) }
  }

  func nextStockEventPosition(_ sku: String) throws -> Int {
    try one(StoreSQL.nextStockEventPosition, [.text(sku)]) { row -> Int in row[0] } ?? 1
  }

  /// A row selected with `StoreSQL.stockEventColumns`.
  static func stockEvent(_ row: Row) throws(StoreError) -> StockEventRow {
    guard let kind = StockEventRow.Kind(rawValue: row[2]) else {
      throw StoreError.unavailable(reason: "a stock event of unknown kind")
    }
    return StockEventRow(
      sku: row[0], position: row[1], kind: kind, at: row[3], delta: row[4], quantityOnHand: row[5],
      adjustmentId: row[6], reason: row[7])
  }

  /// ASCII case folding on both sides (SQLite's lower() folds ASCII only; PostgreSQL's store folds the same).
  static let emailCondition = """
    (lower(json_extract(t.binding, '$.shippingContact.emailAddress')) = ?1
      OR lower(json_extract(t.billingContact, '$.emailAddress')) = ?1
      OR lower(json_extract(json_extract(op.fingerprint, '$.billingContact'), '$.emailAddress')) = ?1)
    """

  func tokensToErase(_ selector: ErasureSelector, limit: Int) throws -> [String] {
    let (sql, values) = StoreSQL.tokensToErase(selector, limit: limit, in: .sqlite, emailCondition: Self.emailCondition)
    return try String.fetchAll(db, sql: sql, arguments: Self.arguments(values))
  }

  func personalData(token: String) throws -> PersonalDataRow? {
    try one(StoreSQL.personalData, [.text(token)]) { row in
      PersonalDataRow(token: token, binding: row[0], billingContact: row[1], orderId: row[2], orderDocument: row[3])
    }
  }

  func eraseStaffReasons(orderId: String, marker: String) throws -> [OrderEventRow] {
    let values: [StoreValue] = [.text(orderId), .text(marker)]
    let erased = try all(StoreSQL.staffReasonEvents, values) { row in
      OrderEventRow(
        orderId: orderId, position: row[0], kind: OrderEventRow.Kind(rawValue: row[1]) ?? .refunded, at: row[2],
        amountMinor: row[3], reference: row[4], reason: row[5])
    }
    try execute(StoreSQL.eraseStaffReasons, values)
    return erased
  }
}
