import GRDB

// MARK: Orders and tokens

extension SQLiteTransaction: OrderBook, TokenBook {
  func chargeToken(_ token: String) throws -> ChargeTokenRecord? {
    // Columns by position (named lookups showed in order profiles), in the order selected.
    let statement = try db.cachedStatement(sql: StoreSQL.chargeToken.sqlite)
    // A cursor's row reads the statement in place (fetchOne copies every column first); the row is
    // only valid while its cursor lives.
    let cursor = try Row.fetchCursor(statement, arguments: [token])
    return try withExtendedLifetime(cursor) {
      guard let row = try cursor.next() else { return nil }
      return try ChargeTokenRecord(
        token: row[0], binding: row[1], billingContact: row[2], paymentMethod: row[3],
        issuedAt: row[4], amountMinor: row[5], currencyCode: row[6], sandboxOutcome: row[7], expiresAt: row[8],
        usedAt: row[9], authorizationId: row[10], gatewayPaymentData: row[11])
    }
  }

  func quantitiesOnHand(_ skus: [String]) throws -> [Int] {
    let statement = try db.cachedStatement(sql: "SELECT quantityOnHand FROM stock WHERE sku = ?")
    return try skus.map { sku in try Int.fetchOne(statement, arguments: [sku]) ?? 0 }
  }

  func insert(_ order: OrderRow) throws {
    try execute(StoreSQL.insertOrder, StoreSQL.values(order))
    // One statement per line: SQLite's statements cost no round trip.
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

  /// A row selected with `StoreSQL.authorizationColumns`.
  static func authorization(_ row: Row) throws(StoreError) -> PaymentAuthorization {
    PaymentAuthorization(
      authorizationId: row[0], transactionId: row[1], network: row[2], cardType: row[3], lastFour: row[4],
      amountMinor: row[5], currencyCode: row[6], status: try PaymentAuthorization.Status(stored: row[7]))
  }

  func authorization(_ authorizationId: String) throws -> PaymentAuthorization? {
    try one(StoreSQL.authorization, [.text(authorizationId)], Self.authorization)
  }

  func nextChargeTokenSequence() throws -> Int64 {
    try one(StoreSQL.nextChargeTokenSequence, []) { row -> Int64 in row[0] } ?? 1
  }

  func insert(_ token: NewChargeToken) throws {
    try execute(StoreSQL.insertChargeToken, StoreSQL.values(token))
  }

  func insertAuthorization(_ authorization: PaymentAuthorization, at now: String) throws -> Bool {
    try execute(StoreSQL.insertAuthorization, StoreSQL.values(authorization, at: now)) == 1
  }
}
