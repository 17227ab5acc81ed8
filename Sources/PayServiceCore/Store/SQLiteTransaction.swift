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
          expiresAt, usedAt, requestFingerprint, result, authorizationId
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
        requestFingerprint: row[10], result: row[11], authorizationId: row[12])
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
           issuedAt, expiresAt, authorizationId)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    ).execute(arguments: [
      token.token, token.sequence, token.binding, token.billingContact, token.paymentMethod, token.amountMinor,
      token.currencyCode, token.sandboxOutcome.rawValue, token.issuedAt, token.expiresAt, token.authorizationId,
    ])
  }

  func markUsed(token: String, at now: String, fingerprint: String, result: String) throws -> Bool {
    try db.cachedStatement(
      sql: "UPDATE chargeToken SET usedAt = ?, requestFingerprint = ?, result = ? WHERE token = ? AND usedAt IS NULL"
    ).execute(arguments: [now, fingerprint, result, token])
    return db.changesCount == 1
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
        INSERT INTO "order" (orderId, chargeId, createdAt, amountMinor, currencyCode, document)
        VALUES (?, ?, ?, ?, ?, ?)
        """
    ).execute(arguments: [
      order.orderId, order.chargeId, order.createdAt, order.amountMinor, order.currencyCode, order.document,
    ])
    let item = try db.cachedStatement(
      sql: "INSERT INTO orderItem (orderId, sku, quantity, unitPriceMinor, amountMinor) VALUES (?, ?, ?, ?, ?)")
    for line in order.items {
      try item.execute(arguments: [order.orderId, line.sku, line.quantity, line.unitPriceMinor, line.amountMinor])
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
}
