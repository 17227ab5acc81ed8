/// Apple Pay merchant tokens (`MerchantTokenService`): which authorization brought which token,
/// and which agreements charge it. Written once for both backends (`StatementRunner`). What is
/// known of a token (its card, whether Apple unlinked it) lives with each agreement's credential
/// (`AgreementCredential.merchantToken`), so that reading an agreement costs no second query.
public protocol MerchantTokenBook {
  /// Records the merchant token an authorization's decrypted payment data carried (once: a
  /// second record of the same authorization writes nothing).
  func insertMerchantTokenHold(authorizationId: String, merchantTokenIdentifier: String, card: String?) throws
  /// The merchant token (its card as JSON text, and who unlinked it if Apple said so before an
  /// agreement charged it) the authorization brought; nil when none.
  func merchantTokenHold(authorizationId: String) throws -> (identifier: String, card: String?, unlinkedBy: String?)?
  /// Notes on every authorization that brought the token that Apple unlinked it (`by`: who, as
  /// Apple said), for an agreement made from one later.
  func markMerchantTokenHoldsUnlinked(_ identifier: String, by: String) throws
  /// Names the merchant token the agreement charges (lock the agreement first).
  func setMerchantToken(agreementId: String, identifier: String) throws
  /// The agreements that charge the merchant token, by agreementId.
  func agreementIds(merchantToken identifier: String) throws -> [String]
}

extension StoreSchema {
  /// Migration v21, the same on both backends.
  public static let merchantTokenTables = [
    "ALTER TABLE agreement ADD COLUMN merchantTokenIdentifier TEXT",
    "CREATE INDEX agreementByMerchantToken ON agreement (merchantTokenIdentifier)",
    """
    CREATE TABLE merchantTokenHold (
      authorizationId TEXT PRIMARY KEY NOT NULL, merchantTokenIdentifier TEXT NOT NULL, card TEXT, unlinkedBy TEXT
    )
    """,
    "CREATE INDEX merchantTokenHoldByToken ON merchantTokenHold (merchantTokenIdentifier)",
  ]
}

extension StoreSQL {
  static let insertMerchantTokenHold = StoreStatement(
    """
    INSERT INTO merchantTokenHold (authorizationId, merchantTokenIdentifier, card) VALUES (?, ?, ?)
    ON CONFLICT DO NOTHING
    """)
  static let merchantTokenHold = StoreStatement(
    "SELECT merchantTokenIdentifier, card, unlinkedBy FROM merchantTokenHold WHERE authorizationId = ?")
  static let markMerchantTokenHoldsUnlinked = StoreStatement(
    "UPDATE merchantTokenHold SET unlinkedBy = ? WHERE merchantTokenIdentifier = ? AND unlinkedBy IS NULL")
  static let setAgreementMerchantToken = StoreStatement(
    "UPDATE agreement SET merchantTokenIdentifier = ? WHERE agreementId = ?")
  static let agreementsOfMerchantToken = StoreStatement { dialect in
    "SELECT agreementId FROM agreement WHERE merchantTokenIdentifier = ? ORDER BY agreementId\(dialect.collate)"
  }
}

extension MerchantTokenBook where Self: StatementRunner {
  public func insertMerchantTokenHold(authorizationId: String, merchantTokenIdentifier: String, card: String?) throws {
    try execute(StoreSQL.insertMerchantTokenHold, [.text(authorizationId), .text(merchantTokenIdentifier), .text(card)])
  }

  public func merchantTokenHold(authorizationId: String) throws -> (identifier: String, card: String?, unlinkedBy: String?)? {
    try select(StoreSQL.merchantTokenHold, [.text(authorizationId)]).first.map { row in
      (try row.text(0), row.optionalText(1), row.optionalText(2))
    }
  }

  public func markMerchantTokenHoldsUnlinked(_ identifier: String, by: String) throws {
    try execute(StoreSQL.markMerchantTokenHoldsUnlinked, [.text(by), .text(identifier)])
  }

  public func setMerchantToken(agreementId: String, identifier: String) throws {
    try executeOne(
      StoreSQL.setAgreementMerchantToken, [.text(identifier), .text(agreementId)],
      orFail: "agreement \(agreementId) vanished")
  }

  public func agreementIds(merchantToken identifier: String) throws -> [String] {
    try select(StoreSQL.agreementsOfMerchantToken, [.text(identifier)]).map { try $0.text(0) }
  }
}
