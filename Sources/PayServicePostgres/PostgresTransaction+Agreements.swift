import PayServiceCore
import PostgresNIO

// MARK: Agreements

extension PostgresTransaction: AgreementBook {
  /// A row selected with `StoreSchema.agreementColumns`.
  static func agreement(_ row: PostgresRow) throws -> AgreementRow {
    let (
      id, orderId, kind, sku, quantity, currency, createdAt, status, next, period, attempt, cancelAtEnd, terms,
      credential, outcome, action, updatedAt
    ) = try row.columns(
      (String, String, String, String, Int, String, String, String, Int64?, Int, Int, Int64, String, String, String?,
        String?, String).self)
    guard let kind = BillingPlan.Kind(rawValue: kind), let status = AgreementStatus(rawValue: status) else {
      throw StoreError.unavailable(reason: "agreement \(id) has an unknown kind or status")
    }
    return AgreementRow(
      agreementId: id, orderId: orderId, kind: kind, sku: sku, quantity: quantity, currencyCode: currency,
      createdAt: createdAt, status: status, nextPaymentAt: next, period: period, attempt: attempt,
      cancelAtPeriodEnd: cancelAtEnd != 0, terms: terms, credential: credential, sandboxOutcome: outcome,
      customerAction: action, updatedAt: updatedAt)
  }

  /// A row selected with `StoreSchema.agreementEventColumns`.
  static func agreementEvent(_ row: PostgresRow) throws -> AgreementEventRow {
    let (id, position, kind, at, period, attempt, orderId, amount, code, declineCode) = try row.columns(
      (String, Int, String, String, Int?, Int?, String?, Int64?, String?, String?).self)
    guard let kind = AgreementEventRow.Kind(rawValue: kind) else {
      throw StoreError.unavailable(reason: "an agreement event has an unknown kind")
    }
    return AgreementEventRow(
      agreementId: id, position: position, kind: kind, at: at, period: period, attempt: attempt, orderId: orderId,
      amountMinor: amount, code: code, declineCode: declineCode)
  }

  static let lockAgreement = StoreSQL.agreement.postgres + " FOR UPDATE"

  func lockAgreement(_ agreementId: String) throws -> AgreementRow? {
    try one(Self.lockAgreement, [.text(agreementId)], Self.agreement)
  }

  /// One round trip: the position is the agreement's next, taken in the insert itself.
  static let appendAgreementEvent = """
    INSERT INTO agreementEvent (\(StoreSchema.agreementEventColumns))
    SELECT $1, COALESCE(MAX(position), 0) + 1, $2, $3, $4, $5, $6, $7, $8, $9
    FROM agreementEvent WHERE agreementId = $1
    RETURNING position
    """

  @discardableResult func append(_ event: AgreementEventRow) throws -> AgreementEventRow {
    var recorded = event
    recorded.position =
      try one(Self.appendAgreementEvent, [.text(event.agreementId)] + StoreSQL.valuesAfterPosition(event)) {
        try $0.columns(Int.self)
      } ?? 0
    return recorded
  }
}
