import GRDB

/// The store's statements on SQLite, inside a transaction `SQLiteStore` opened. The write lock is
/// the whole store's and is held from the transaction's start, so reads need no row locks.
struct SQLiteTransaction: StoreTransaction {
  let db: Database

  func chargeToken(_ token: String) throws -> ChargeTokenRecord? {
    // Columns by position (named lookups showed in order profiles), in the order selected.
    let statement = try db.cachedStatement(
      sql: """
        SELECT token, binding, billingContact, paymentMethod, issuedAt, amountMinor, currencyCode, sandboxOutcome,
          expiresAt, usedAt, requestFingerprint, result, authorizationId, gatewayPaymentData
        FROM chargeToken WHERE token = ?
        """)
    // A cursor's row reads the statement in place (fetchOne copies every column first); the row is
    // only valid while its cursor lives.
    let cursor = try Row.fetchCursor(statement, arguments: [token])
    return try withExtendedLifetime(cursor) {
      guard let row = try cursor.next() else { return nil }
      return try ChargeTokenRecord(
        token: row[0], binding: row[1], billingContact: row[2], paymentMethod: row[3],
        issuedAt: row[4], amountMinor: row[5], currencyCode: row[6], sandboxOutcome: row[7], expiresAt: row[8],
        usedAt: row[9],
        requestFingerprint: row[10], result: row[11], authorizationId: row[12], gatewayPaymentData: row[13])
    }
  }

  func nextChargeTokenSequence() throws -> Int64 {
    try Int64.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(MAX(sequence), 0) + 1 FROM chargeToken")) ?? 1
  }

  func insert(_ token: NewChargeToken) throws {
    try db.cachedStatement(
      sql: """
        INSERT INTO chargeToken
          (token, sequence, binding, billingContact, paymentMethod, amountMinor, currencyCode, sandboxOutcome,
           issuedAt, expiresAt, authorizationId, gatewayPaymentData, walletOrderToken)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    ).execute(arguments: [
      token.token, token.sequence, token.binding, token.billingContact, token.paymentMethod, token.amountMinor,
      token.currencyCode, token.sandboxOutcome.rawValue, token.issuedAt, token.expiresAt, token.authorizationId,
      token.gatewayPaymentData, token.walletOrderToken,
    ])
  }

  func purgeExpiredChargeTokens(now: Int64, limit: Int) throws -> Int {
    try db.cachedStatement(
      sql: """
        DELETE FROM chargeToken WHERE token IN (
          SELECT token FROM chargeToken
          WHERE usedAt IS NULL AND expiresAt <= ? AND sequence < (SELECT MAX(sequence) FROM chargeToken)
          LIMIT ?)
        """
    ).execute(arguments: [now, limit])
    return db.changesCount
  }

  func markUsed(token: String, at now: String, fingerprint: String, result: String?) throws -> Bool {
    try db.cachedStatement(
      sql: "UPDATE chargeToken SET usedAt = ?, requestFingerprint = ?, result = ? WHERE token = ? AND usedAt IS NULL"
    ).execute(arguments: [now, fingerprint, result, token])
    return db.changesCount == 1
  }

  func setResult(token: String, result: String) throws {
    try db.cachedStatement(
      sql: "UPDATE chargeToken SET result = ? WHERE token = ? AND usedAt IS NOT NULL AND result IS NULL"
    ).execute(arguments: [result, token])
    guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "charge token changed concurrently") }
  }

  func quantitiesOnHand(_ skus: [String]) throws -> [Int] {
    let statement = try db.cachedStatement(sql: "SELECT quantityOnHand FROM stock WHERE sku = ?")
    return try skus.map { sku in try Int.fetchOne(statement, arguments: [sku]) ?? 0 }
  }

  func decrementStock(_ sku: String, by quantity: Int) throws -> Bool {
    try db.cachedStatement(
      sql: """
        UPDATE stock SET quantityOnHand = quantityOnHand - ?1, sold = sold + ?1
        WHERE sku = ?2 AND quantityOnHand >= ?1
        """
    ).execute(arguments: [quantity, sku])
    return db.changesCount == 1
  }

  func insert(_ charge: ChargeRow) throws {
    try db.cachedStatement(
      sql: """
        INSERT INTO charge (chargeId, token, status, failureCode, declineCode, amountMinor, currencyCode, createdAt)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        """
    ).execute(arguments: [
      charge.chargeId, charge.token, charge.succeeded ? "succeeded" : "failed", charge.failureCode,
      charge.declineCode, charge.amountMinor, charge.currencyCode, charge.createdAt,
    ])
  }

  func insert(_ order: OrderRow) throws {
    try db.cachedStatement(
      sql: """
        INSERT INTO "order"
          (orderId, chargeId, createdAt, amountMinor, currencyCode, document, status, capturedMinor, shippingMinor,
           shippingTaxMinor, gatewayPaymentId, taxIncluded)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    ).execute(arguments: [
      order.orderId, order.chargeId, order.createdAt, order.amountMinor, order.currencyCode, order.document,
      order.status.rawValue, order.capturedMinor, order.shippingMinor, order.shippingTaxMinor, order.gatewayPaymentId,
      order.taxIncluded,
    ])
    let item = try db.cachedStatement(
      sql: """
        INSERT INTO orderItem (orderId, sku, quantity, unitPriceMinor, amountMinor, discountMinor, taxMinor)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """)
    for line in order.items {
      try item.execute(arguments: [
        order.orderId, line.sku, line.quantity, line.unitPriceMinor, line.amountMinor, line.discountMinor, line.taxMinor,
      ])
    }
  }

  func insertAuthorization(_ authorization: PaymentAuthorization, at now: String) throws -> Bool {
    try db.cachedStatement(
      sql: """
        INSERT INTO paymentAuthorization
          (authorizationId, transactionId, network, cardType, lastFour, amountMinor, currencyCode, status, createdAt)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(transactionId) DO NOTHING
        """
    ).execute(arguments: [
      authorization.authorizationId, authorization.transactionId, authorization.network, authorization.cardType,
      authorization.lastFour, authorization.amountMinor, authorization.currencyCode, authorization.status.rawValue,
      now,
    ])
    return db.changesCount == 1
  }

  static let authorizationColumns =
    "authorizationId, transactionId, network, cardType, lastFour, amountMinor, currencyCode, status"

  /// A row selected with `authorizationColumns`.
  static func authorization(_ row: Row) throws(StoreError) -> PaymentAuthorization {
    PaymentAuthorization(
      authorizationId: row[0], transactionId: row[1], network: row[2], cardType: row[3], lastFour: row[4],
      amountMinor: row[5], currencyCode: row[6], status: try PaymentAuthorization.Status(stored: row[7]))
  }

  func authorization(_ authorizationId: String) throws -> PaymentAuthorization? {
    let statement = try db.cachedStatement(
      sql: "SELECT \(Self.authorizationColumns) FROM paymentAuthorization WHERE authorizationId = ?")
    return try Row.fetchOne(statement, arguments: [authorizationId]).map(Self.authorization)
  }

  func markCaptured(_ authorizationId: String, chargeId: String, at now: String) throws -> Bool {
    try db.cachedStatement(
      sql: """
        UPDATE paymentAuthorization SET status = 'captured', chargeId = ?, capturedAt = ?
        WHERE authorizationId = ? AND status = 'held'
        """
    ).execute(arguments: [chargeId, now, authorizationId])
    return db.changesCount == 1
  }

  func markReleased(_ authorizationId: String, at now: String) throws -> Bool {
    try db.cachedStatement(
      sql: """
        UPDATE paymentAuthorization SET releasedAt = ?
        WHERE authorizationId = ? AND status = 'held' AND releasedAt IS NULL
        """
    ).execute(arguments: [now, authorizationId])
    return db.changesCount == 1
  }

  func lockOrder(_ orderId: String) throws -> OrderState? {
    // The store's write lock is held already: nothing else changes the order meanwhile.
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(
          sql: """
            SELECT o.chargeId, o.currencyCode, o.status, o.amountMinor, o.capturedMinor, o.refundedMinor,
              o.shippingMinor, o.shippingTaxMinor, o.shippingRefunded, t.sandboxOutcome, t.authorizationId,
              (SELECT COALESCE(MAX(position), 0) + 1 FROM orderEvent e WHERE e.orderId = o.orderId), o.gatewayPaymentId,
              o.taxIncluded
            FROM "order" o JOIN charge c ON c.chargeId = o.chargeId JOIN chargeToken t ON t.token = c.token
            WHERE o.orderId = ?
            """), arguments: [orderId])
    else { return nil }
    let lines = try Row.fetchAll(
      db.cachedStatement(
        sql: """
          SELECT sku, quantity, amountMinor, discountMinor, taxMinor, refundedQuantity
          FROM orderItem WHERE orderId = ? ORDER BY rowid
          """), arguments: [orderId]
    ).map { line in
      OrderState.Line(
        sku: line[0], quantity: line[1], amountMinor: line[2], discountMinor: line[3], taxMinor: line[4],
        refundedQuantity: line[5])
    }
    guard let outcome = SandboxOutcome(rawValue: row[9]) else {
      throw StoreError.unavailable(reason: "order \(orderId) was paid with a token of unknown sandboxOutcome")
    }
    return OrderState(
      orderId: orderId, chargeId: row[0], currencyCode: row[1], status: try OrderStatus(stored: row[2]),
      amountMinor: row[3], capturedMinor: row[4], refundedMinor: row[5], shippingMinor: row[6],
      shippingTaxMinor: row[7], shippingRefunded: row[8], lines: lines, sandboxOutcome: outcome,
      authorizationId: row[10], nextEventPosition: row[11], gatewayPaymentId: row[12], taxIncluded: row[13])
  }

  func updateOrder(
    _ orderId: String, status: OrderStatus, capturedMinor: Int64?, refundedMinor: Int64, shippingRefunded: Bool
  ) throws {
    try db.cachedStatement(
      sql: """
        UPDATE "order" SET status = ?, capturedMinor = ?, refundedMinor = ?, shippingRefunded = ? WHERE orderId = ?
        """
    ).execute(arguments: [status.rawValue, capturedMinor, refundedMinor, shippingRefunded, orderId])
    guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "order \(orderId) vanished") }
  }

  func setRefundedQuantity(orderId: String, sku: String, to quantity: Int) throws {
    try db.cachedStatement(sql: "UPDATE orderItem SET refundedQuantity = ? WHERE orderId = ? AND sku = ?")
      .execute(arguments: [quantity, orderId, sku])
    guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "order \(orderId) has no line \(sku)") }
  }

  func restock(_ sku: String, by quantity: Int) throws -> Bool {
    try db.cachedStatement(
      sql: """
        UPDATE stock SET quantityOnHand = quantityOnHand + ?1, sold = sold - ?1
        WHERE sku = ?2 AND sold >= ?1
        """
    ).execute(arguments: [quantity, sku])
    return db.changesCount == 1
  }

  func insert(_ event: OrderEventRow) throws {
    try db.cachedStatement(
      sql: """
        INSERT INTO orderEvent (orderId, position, kind, at, amountMinor, reference, reason)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """
    ).execute(arguments: [
      event.orderId, event.position, event.kind.rawValue, event.at, event.amountMinor, event.reference, event.reason,
    ])
  }

  func insert(_ refund: RefundRow) throws {
    try db.cachedStatement(
      sql: """
        INSERT INTO refund (refundId, orderId, position, createdAt, amountMinor, document) VALUES (?, ?, ?, ?, ?, ?)
        """
    ).execute(arguments: [
      refund.refundId, refund.orderId, refund.position, refund.createdAt, refund.amountMinor, refund.document,
    ])
  }

  func backOfficeRequest(kind: String, key: String) throws -> BackOfficeRequestRow? {
    try Row.fetchOne(
      db.cachedStatement(
        sql: "SELECT orderId, fingerprint, result, createdAt FROM backOfficeRequest WHERE kind = ? AND key = ?"),
      arguments: [kind, key]
    ).map { row in
      BackOfficeRequestRow(
        kind: kind, key: key, orderId: row[0], fingerprint: row[1], result: row[2], createdAt: row[3])
    }
  }

  func insert(_ request: BackOfficeRequestRow) throws -> Bool {
    try db.cachedStatement(
      sql: """
        INSERT INTO backOfficeRequest (kind, key, orderId, fingerprint, result, createdAt) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (kind, key) DO NOTHING
        """
    ).execute(arguments: [
      request.kind, request.key, request.orderId, request.fingerprint, request.result, request.createdAt,
    ])
    return db.changesCount == 1
  }

  func insert(_ attempt: PaymentAttemptRow) throws {
    try db.cachedStatement(
      sql: """
        INSERT INTO paymentAttempt
          (orderId, token, idempotencyKey, paymentData, amountMinor, currencyCode, captureManually, createdAt,
           itemCount, prepared)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    ).execute(arguments: [
      attempt.orderId, attempt.token, attempt.idempotencyKey, attempt.paymentData, attempt.amountMinor,
      attempt.currencyCode, attempt.captureManually, attempt.createdAt, attempt.itemCount, attempt.prepared,
    ])
  }

  static let attemptColumns = """
    orderId, token, idempotencyKey, paymentData, amountMinor, currencyCode, captureManually, createdAt, itemCount,
    prepared
    """

  /// A row selected with `attemptColumns`.
  static func attempt(_ row: Row) -> PaymentAttemptRow {
    PaymentAttemptRow(
      orderId: row[0], token: row[1], idempotencyKey: row[2], paymentData: row[3], amountMinor: row[4],
      currencyCode: row[5], captureManually: row[6], createdAt: row[7], itemCount: row[8], prepared: row[9])
  }

  func lockPaymentAttempt(orderId: String) throws -> PaymentAttemptRow? {
    try Row.fetchOne(
      db.cachedStatement(sql: "SELECT \(Self.attemptColumns) FROM paymentAttempt WHERE orderId = ?"),
      arguments: [orderId]
    ).map(Self.attempt)
  }

  func deletePaymentAttempt(orderId: String) throws {
    try db.cachedStatement(sql: "DELETE FROM paymentAttempt WHERE orderId = ?").execute(arguments: [orderId])
    guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "payment attempt \(orderId) vanished") }
  }
}
