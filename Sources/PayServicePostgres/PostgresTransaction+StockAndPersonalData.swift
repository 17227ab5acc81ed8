import PayServiceCore
import PostgresNIO

// MARK: Stock by hand and personal data

extension PostgresTransaction: StockBook, PersonalDataBook {
  static let stockLevel = StoreSQL.stockLevel.postgres + " FOR UPDATE"

  func stockLevel(_ sku: String) throws -> StockLevel? {
    try takenAtCommit?.apply(self)
    return try one(Self.stockLevel, [.text(sku)]) { row in
      let (onHand, sold) = try row.columns((Int, Int).self)
      return StockLevel(sku: sku, quantityOnHand: onHand, sold: sold)
    }
  }

  func nextStockEventPosition(_ sku: String) throws -> Int {
    try one(StoreSQL.nextStockEventPosition.postgres, [.text(sku)]) { try $0.columns(Int.self) } ?? 1
  }

  /// A row selected with `StoreSQL.stockEventColumns`.
  static func stockEvent(_ row: PostgresRow) throws -> StockEventRow {
    let (sku, position, kind, at, delta, onHand, adjustmentId, reason) = try row.columns(
      (String, Int, String, String, Int, Int, String, String).self)
    guard let kind = StockEventRow.Kind(rawValue: kind) else {
      throw StoreError.unavailable(reason: "a stock event of unknown kind")
    }
    return StockEventRow(
      sku: sku, position: position, kind: kind, at: at, delta: delta, quantityOnHand: onHand,
      adjustmentId: adjustmentId, reason: reason)
  }

  /// ASCII letters of `expression` lower-cased, as SQLite's lower() does (and `ErasureSelector.foldedEmail`).
  private static func asciiLower(_ expression: String) -> String {
    "translate(\(expression), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
  }

  /// A contact's address folded as SQLite's lower() folds it.
  static let emailCondition = """
    (\(asciiLower("t.binding::jsonb #>> '{shippingContact,emailAddress}'")) = ?1
      OR \(asciiLower("t.billingContact::jsonb ->> 'emailAddress'")) = ?1
      OR \(asciiLower("(op.fingerprint::jsonb ->> 'billingContact')::jsonb ->> 'emailAddress'")) = ?1)
    """

  func tokensToErase(_ selector: ErasureSelector, limit: Int) throws -> [String] {
    let (sql, values) = StoreSQL.tokensToErase(selector, limit: limit, in: .postgres, emailCondition: Self.emailCondition)
    // FOR UPDATE OF t: an erasure and an order on the same token take turns.
    return try all(sql + " FOR UPDATE OF t", values) { try $0.columns(String.self) }
  }

  static let personalData = StoreSQL.personalData.postgres + " FOR UPDATE OF t"

  func personalData(token: String) throws -> PersonalDataRow? {
    try one(Self.personalData, [.text(token)]) { row in
      let (binding, billing, orderId, document) = try row.columns((String, String?, String?, String?).self)
      return PersonalDataRow(
        token: token, binding: binding, billingContact: billing, orderId: orderId, orderDocument: document)
    }
  }

  func eraseStaffReasons(orderId: String, marker: String) throws -> [OrderEventRow] {
    let values: [StoreValue] = [.text(orderId), .text(marker)]
    let erased = try all(StoreSQL.staffReasonEvents.postgres, values) { row in
      let (position, kind, at, amount, reference, reason) = try row.columns((Int, String, String, Int64, String, String).self)
      return OrderEventRow(
        orderId: orderId, position: position, kind: OrderEventRow.Kind(rawValue: kind) ?? .refunded, at: at,
        amountMinor: amount, reference: reference, reason: reason)
    }
    try execute(StoreSQL.eraseStaffReasons, values)
    return erased
  }
}
