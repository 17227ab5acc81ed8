import GRDB

// MARK: Agreements

extension SQLiteTransaction: AgreementBook {
  /// A row selected with `StoreSchema.agreementColumns`.
  static func agreement(_ row: Row) throws(StoreError) -> AgreementRow {
    let id: String = row[0]
    guard let kind = BillingPlan.Kind(rawValue: row[2]), let status = AgreementStatus(rawValue: row[7]) else {
      throw StoreError.unavailable(reason: "agreement \(id) has an unknown kind or status")
    }
    return AgreementRow(
      agreementId: id, orderId: row[1], kind: kind, sku: row[3], quantity: row[4], currencyCode: row[5],
      createdAt: row[6], status: status, nextPaymentAt: row[8], period: row[9], attempt: row[10],
      cancelAtPeriodEnd: (row[11] as Int64) != 0, terms: row[12], credential: row[13], sandboxOutcome: row[14],
      customerAction: row[15], updatedAt: row[16])
  }

  /// A row selected with `StoreSchema.agreementEventColumns`.
  static func agreementEvent(_ row: Row) throws(StoreError) -> AgreementEventRow {
    guard let kind = AgreementEventRow.Kind(rawValue: row[2]) else {
      throw StoreError.unavailable(reason: "an agreement event has an unknown kind")
    }
    return AgreementEventRow(
      agreementId: row[0], position: row[1], kind: kind, at: row[3], period: row[4], attempt: row[5], orderId: row[6],
      amountMinor: row[7], code: row[8], declineCode: row[9])
  }

  func lockAgreement(_ agreementId: String) throws -> AgreementRow? {
    // The store's write lock is held already.
    try one(StoreSQL.agreement, [.text(agreementId)], Self.agreement)
  }

  static let nextAgreementEventPosition = StoreStatement(
    "SELECT COALESCE(MAX(position), 0) + 1 FROM agreementEvent WHERE agreementId = ?")
  static let insertAgreementEvent = StoreStatement(
    "INSERT INTO agreementEvent (\(StoreSchema.agreementEventColumns)) VALUES (\(StoreStatement.placeholders(10)))")

  @discardableResult func append(_ event: AgreementEventRow) throws -> AgreementEventRow {
    var event = event
    event.position = try one(Self.nextAgreementEventPosition, [.text(event.agreementId)]) { row -> Int in row[0] } ?? 1
    try execute(
      Self.insertAgreementEvent,
      [.text(event.agreementId), .int(event.position)] + StoreSQL.valuesAfterPosition(event))
    return event
  }
}
