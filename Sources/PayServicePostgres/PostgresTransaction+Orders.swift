import PayServiceCore
import PostgresNIO

// MARK: Orders and tokens

extension PostgresTransaction: OrderBook, TokenBook {
  /// The advisory lock key that serializes issuing charge tokens (ASCII "paysvc.t").
  static let tokenSequenceLock: Int64 = 0x7061_7973_7663_2E74

  // FOR UPDATE: a second processOrder with this token waits for the first to commit, then reads
  // the token as used and replays its answer, as on SQLite.
  static let chargeToken = StoreSQL.chargeToken.postgres + " FOR UPDATE"

  func chargeToken(_ token: String) throws -> ChargeTokenRecord? {
    try one(Self.chargeToken, [.text(token)]) { row in
      let (token, binding, billing, card, issuedAt, amount, currency, outcome, expiresAt, usedAt, authorizationId,
        gatewayPaymentData) = try row.columns(
          (String, String, String?, String?, String, Int64, String, String, Int64, String?, String?, String?).self)
      return try ChargeTokenRecord(
        token: token, binding: binding, billingContact: billing, paymentMethod: card, issuedAt: issuedAt,
        amountMinor: amount, currencyCode: currency, sandboxOutcome: outcome, expiresAt: expiresAt, usedAt: usedAt,
        authorizationId: authorizationId, gatewayPaymentData: gatewayPaymentData)
    }
  }

  func decrementStock(_ sku: String, by quantity: Int) throws -> Bool {
    guard let takenAtCommit else { return try execute(StoreSQL.decrementStock, [.int(quantity), .text(sku)]) == 1 }
    takenAtCommit.take(sku, quantity)
    return true
  }

  func restock(_ sku: String, by quantity: Int) throws -> Bool {
    if let takenAtCommit, takenAtCommit.putBack(sku, quantity) { return true }
    try takenAtCommit?.apply(self)
    return try execute(StoreSQL.restock, [.int(quantity), .text(sku)]) == 1
  }

  func quantitiesOnHand(_ skus: [String]) throws -> [Int] {
    try takenAtCommit?.apply(self)
    // Locked in sku order, whatever the order's line order, so that concurrent orders sharing skus
    // queue instead of deadlocking.
    var binds = PostgresBindings()
    binds.append(skus)
    let rows = try session.run("SELECT sku, quantityOnHand FROM stock WHERE sku = ANY($1) ORDER BY sku FOR UPDATE", binds)
      .rows
    var onHand: [String: Int] = [:]
    for row in rows {
      let (sku, quantity) = try row.columns((String, Int).self)
      onHand[sku] = quantity
    }
    return skus.map { onHand[$0] ?? 0 }
  }

  func insert(_ order: OrderRow) throws {
    try execute(StoreSQL.insertOrder, StoreSQL.values(order))
    // All lines in one statement: one round trip however long the order. WITH ORDINALITY keeps
    // the lines' order for `position`.
    var binds = PostgresBindings()
    binds.append(order.orderId)
    binds.append(order.items.map(\.sku))
    binds.append(order.items.map { Int64($0.quantity) })
    binds.append(order.items.map(\.unitPriceMinor))
    binds.append(order.items.map(\.amountMinor))
    binds.append(order.items.map(\.discountMinor))
    binds.append(order.items.map(\.taxMinor))
    try session.run(
      """
      INSERT INTO orderItem (orderId, sku, quantity, unitPriceMinor, amountMinor, discountMinor, taxMinor)
      SELECT $1, sku, quantity, unitPrice, amount, discount, tax
      FROM UNNEST($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[])
        WITH ORDINALITY AS line(sku, quantity, unitPrice, amount, discount, tax, n)
      ORDER BY n
      """, binds)
  }

  /// A row selected with `StoreSQL.authorizationColumns`.
  static func authorization(_ row: PostgresRow) throws -> PaymentAuthorization {
    let (id, transactionId, network, cardType, lastFour, amount, currency, status) = try row.columns(
      (String, String, String, String, String, Int64, String, String).self)
    return PaymentAuthorization(
      authorizationId: id, transactionId: transactionId, network: network, cardType: cardType, lastFour: lastFour,
      amountMinor: amount, currencyCode: currency, status: try PaymentAuthorization.Status(stored: status))
  }

  func authorization(_ authorizationId: String) throws -> PaymentAuthorization? {
    try one(StoreSQL.authorization.postgres, [.text(authorizationId)], Self.authorization)
  }

  func nextChargeTokenSequence() throws -> Int64 {
    // Held to the end of the transaction: two hosts issuing at once take turns, so each token gets
    // the next number and the same store state issues the same token.
    _ = try rows("SELECT pg_advisory_xact_lock($1)", [.integer(Self.tokenSequenceLock)])
    return try one(StoreSQL.nextChargeTokenSequence.postgres, []) { try $0.columns(Int64.self) } ?? 1
  }

  /// Returning the row's version, for `IssuedTokens`.
  static let insertChargeToken = StoreSQL.insertChargeToken.postgres + "\nRETURNING xmin::text"

  func insert(_ token: NewChargeToken) throws {
    let inserted = try rows(Self.insertChargeToken, StoreSQL.values(token))
    if let issued, let row = inserted.first {
      issued.tokens.append((try ChargeTokenRecord(issued: token), try row.columns(String.self)))
      issued.nextSequence = token.sequence + 1
    }
  }

  /// Returning the row's version, for `IssuedTokens`.
  static let insertAuthorization = StoreSQL.insertAuthorization.postgres + "\nRETURNING xmin::text"

  func insertAuthorization(_ authorization: PaymentAuthorization, at now: String) throws -> Bool {
    guard let version = try one(Self.insertAuthorization, StoreSQL.values(authorization, at: now), {
      try $0.columns(String.self)
    }) else { return false }
    issued?.authorizations.append((authorization, version))
    return true
  }
}
