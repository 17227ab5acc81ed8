// MARK: Agreements (`AgreementBook`)

extension StoreSQL {
  /// An agreement by its id (PostgreSQL locks it).
  public static let agreement = StoreStatement(
    "SELECT \(StoreSchema.agreementColumns) FROM agreement WHERE agreementId = ?")

  public static let insertAgreement = StoreStatement(
    "INSERT INTO agreement (\(StoreSchema.agreementColumns)) VALUES (\(StoreStatement.placeholders(17)))")

  public static func values(_ agreement: AgreementRow) -> [StoreValue] {
    [
      .text(agreement.agreementId), .text(agreement.orderId), .text(agreement.kind.rawValue), .text(agreement.sku),
      .int(agreement.quantity), .text(agreement.currencyCode), .text(agreement.createdAt),
      .text(agreement.status.rawValue), .integer(agreement.nextPaymentAt), .int(agreement.period),
      .int(agreement.attempt), .integer(agreement.cancelAtPeriodEnd ? 1 : 0), .text(agreement.terms),
      .text(agreement.credential), .text(agreement.sandboxOutcome), .text(agreement.customerAction),
      .text(agreement.updatedAt),
    ]
  }

  public static let updateAgreement = StoreStatement(
    """
    UPDATE agreement SET status = ?, nextPaymentAt = ?, period = ?, attempt = ?, cancelAtPeriodEnd = ?,
      credential = ?, customerAction = ?, updatedAt = ?
    WHERE agreementId = ?
    """)

  /// What `updateAgreement` binds.
  public static func updatedValues(_ agreement: AgreementRow) -> [StoreValue] {
    [
      .text(agreement.status.rawValue), .integer(agreement.nextPaymentAt), .int(agreement.period),
      .int(agreement.attempt), .integer(agreement.cancelAtPeriodEnd ? 1 : 0), .text(agreement.credential),
      .text(agreement.customerAction), .text(agreement.updatedAt), .text(agreement.agreementId),
    ]
  }

  /// An agreement event's values after its agreementId and position, in `agreementEventColumns`' order.
  public static func valuesAfterPosition(_ event: AgreementEventRow) -> [StoreValue] {
    [
      .text(event.kind.rawValue), .text(event.at), .int(event.period), .int(event.attempt), .text(event.orderId),
      .integer(event.amountMinor), .text(event.code), .text(event.declineCode),
    ]
  }
}

extension StatementRunner {
  public func insert(_ agreement: AgreementRow) throws {
    try execute(StoreSQL.insertAgreement, StoreSQL.values(agreement))
  }

  public func update(_ agreement: AgreementRow) throws {
    try executeOne(
      StoreSQL.updateAgreement, StoreSQL.updatedValues(agreement), orFail: "agreement \(agreement.agreementId) vanished")
  }
}
