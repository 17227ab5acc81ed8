/// The statements both backends run, by concern (the protocols of `StoreTransaction`), and the
/// values each binds, in its placeholders' order.
public enum StoreSQL {}

// MARK: Orders and tokens (`OrderBook`, `TokenBook`)

extension StoreSQL {
  /// A charge token's columns, in `ChargeTokenRecord`'s order.
  public static let chargeTokenColumns = """
    token, binding, billingContact, paymentMethod, issuedAt, amountMinor, currencyCode, sandboxOutcome, \
    expiresAt, usedAt, authorizationId, gatewayPaymentData
    """

  /// A charge token by its token (PostgreSQL locks it).
  public static let chargeToken = StoreStatement("SELECT \(chargeTokenColumns) FROM chargeToken WHERE token = ?")

  /// (now, token)
  public static let markUsed = StoreStatement("UPDATE chargeToken SET usedAt = ? WHERE token = ? AND usedAt IS NULL")

  /// (quantity, sku)
  public static let decrementStock = StoreStatement(
    """
    UPDATE stock SET quantityOnHand = quantityOnHand - ?1, sold = sold + ?1
    WHERE sku = ?2 AND quantityOnHand >= ?1
    """)

  public static let insertCharge = StoreStatement(
    """
    INSERT INTO charge (chargeId, token, status, failureCode, declineCode, amountMinor, currencyCode, createdAt)
    VALUES (\(StoreStatement.placeholders(8)))
    """)

  public static func values(_ charge: ChargeRow) -> [StoreValue] {
    [
      .text(charge.chargeId), .text(charge.token), .text(charge.succeeded ? "succeeded" : "failed"),
      .text(charge.failureCode), .text(charge.declineCode), .integer(charge.amountMinor), .text(charge.currencyCode),
      .text(charge.createdAt),
    ]
  }

  /// The order's row; its lines go in as each backend inserts many rows.
  public static let insertOrder = StoreStatement(
    """
    INSERT INTO "order"
      (orderId, chargeId, createdAt, amountMinor, currencyCode, document, status, capturedMinor, shippingMinor,
       shippingTaxMinor, gatewayPaymentId, taxIncluded, agreementId)
    VALUES (\(StoreStatement.placeholders(13)))
    """)

  public static func values(_ order: OrderRow) -> [StoreValue] {
    [
      .text(order.orderId), .text(order.chargeId), .text(order.createdAt), .integer(order.amountMinor),
      .text(order.currencyCode), .text(order.document), .text(order.status.rawValue), .integer(order.capturedMinor),
      .integer(order.shippingMinor), .integer(order.shippingTaxMinor), .text(order.gatewayPaymentId),
      .bool(order.taxIncluded), .text(order.agreementId),
    ]
  }

  /// An authorization's columns, in `PaymentAuthorization`'s order.
  public static let authorizationColumns =
    "authorizationId, transactionId, network, cardType, lastFour, amountMinor, currencyCode, status"

  public static let authorization = StoreStatement(
    "SELECT \(authorizationColumns) FROM paymentAuthorization WHERE authorizationId = ?")

  /// (chargeId, now, authorizationId)
  public static let markCaptured = StoreStatement(
    """
    UPDATE paymentAuthorization SET status = 'captured', chargeId = ?, capturedAt = ?
    WHERE authorizationId = ? AND status = 'held'
    """)

  /// (now, authorizationId)
  public static let markReleased = StoreStatement(
    """
    UPDATE paymentAuthorization SET releasedAt = ?
    WHERE authorizationId = ? AND status = 'held' AND releasedAt IS NULL
    """)

  public static let nextChargeTokenSequence = StoreStatement("SELECT COALESCE(MAX(sequence), 0) + 1 FROM chargeToken")

  public static let insertChargeToken = StoreStatement(
    """
    INSERT INTO chargeToken
      (token, sequence, binding, billingContact, paymentMethod, amountMinor, currencyCode, sandboxOutcome,
       issuedAt, expiresAt, authorizationId, gatewayPaymentData, walletOrderToken)
    VALUES (\(StoreStatement.placeholders(13)))
    """)

  public static func values(_ token: NewChargeToken) -> [StoreValue] {
    [
      .text(token.token), .integer(token.sequence), .text(token.binding), .text(token.billingContact),
      .text(token.paymentMethod), .integer(token.amountMinor), .text(token.currencyCode),
      .text(token.sandboxOutcome.rawValue), .text(token.issuedAt), .integer(token.expiresAt),
      .text(token.authorizationId), .text(token.gatewayPaymentData), .text(token.walletOrderToken),
    ]
  }

  /// (now, limit)
  public static let purgeExpiredChargeTokens = StoreStatement(
    """
    DELETE FROM chargeToken WHERE token IN (
      SELECT token FROM chargeToken
      WHERE usedAt IS NULL AND expiresAt <= ? AND sequence < (SELECT MAX(sequence) FROM chargeToken)
      LIMIT ?)
    """)

  public static let insertAuthorization = StoreStatement(
    """
    INSERT INTO paymentAuthorization
      (authorizationId, transactionId, network, cardType, lastFour, amountMinor, currencyCode, status, createdAt)
    VALUES (\(StoreStatement.placeholders(9)))
    ON CONFLICT (transactionId) DO NOTHING
    """)

  public static func values(_ authorization: PaymentAuthorization, at now: String) -> [StoreValue] {
    [
      .text(authorization.authorizationId), .text(authorization.transactionId), .text(authorization.network),
      .text(authorization.cardType), .text(authorization.lastFour), .integer(authorization.amountMinor),
      .text(authorization.currencyCode), .text(authorization.status.rawValue), .text(now),
    ]
  }
}

extension StatementRunner {
  public func markUsed(token: String, at now: String) throws -> Bool {
    try execute(StoreSQL.markUsed, [.text(now), .text(token)]) == 1
  }

  public func decrementStock(_ sku: String, by quantity: Int) throws -> Bool {
    try execute(StoreSQL.decrementStock, [.int(quantity), .text(sku)]) == 1
  }

  public func insert(_ charge: ChargeRow) throws {
    try execute(StoreSQL.insertCharge, StoreSQL.values(charge))
  }

  public func markCaptured(_ authorizationId: String, chargeId: String, at now: String) throws -> Bool {
    try execute(StoreSQL.markCaptured, [.text(chargeId), .text(now), .text(authorizationId)]) == 1
  }

  public func markReleased(_ authorizationId: String, at now: String) throws -> Bool {
    try execute(StoreSQL.markReleased, [.text(now), .text(authorizationId)]) == 1
  }

  public func purgeExpiredChargeTokens(now: Int64, limit: Int) throws -> Int {
    try execute(StoreSQL.purgeExpiredChargeTokens, [.integer(now), .int(limit)])
  }
}
