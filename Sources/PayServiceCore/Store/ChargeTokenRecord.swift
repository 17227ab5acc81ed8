import GRDB

/// A charge token as stored: what it was authorized for and, once used, the answer it produced.
public struct ChargeTokenRecord: Sendable {
  public var token: String
  public var binding: String
  public var billingContact: String?
  /// The authorized card's network and type (`{"network":…,"type":…}`); nil for tokens issued before
  /// version 2 (migration v2), which were priced without a card adjustment.
  public var paymentMethod: String?
  public var issuedAt: Int64
  public var amountMinor: Int64
  public var currencyCode: String
  public var sandboxOutcome: SandboxOutcome
  public var expiresAt: Int64
  public var usedAt: String?
  public var requestFingerprint: String?
  public var result: String?
  /// The Apple Pay authorization hold the token charges; nil for sandbox test tokens.
  public var authorizationId: String?
}

extension Store {
  /// Inserts a new charge token in the caller's transaction and returns it; `authorizationId` names
  /// the Apple Pay authorization hold it charges. The token is derived from the next sequence number,
  /// so the same store state and clock issue the same token.
  static func insertChargeToken(
    merchant: String, binding: String, billingContact: String?, paymentMethod: String?, amountMinor: Int64,
    currencyCode: String, outcome: SandboxOutcome, issuedAt: Int64, ttlSeconds: Int, authorizationId: String?,
    in db: Database
  ) throws -> String {
    let sequence = try Int64.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(MAX(sequence), 0) + 1 FROM chargeToken")) ?? 1
    let token = Identifiers.chargeToken(merchant: merchant, sequence: sequence, binding: binding, issuedAt: issuedAt)
    try db.cachedStatement(sql: """
        INSERT INTO chargeToken
          (token, sequence, binding, billingContact, paymentMethod, amountMinor, currencyCode, sandboxOutcome,
           issuedAt, expiresAt, authorizationId)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """).execute(
        arguments: [
        token, sequence, binding, billingContact, paymentMethod, amountMinor, currencyCode, outcome.rawValue,
        RFC3339.format(issuedAt), issuedAt + Int64(ttlSeconds), authorizationId,
      ])
    return token
  }

  static func chargeToken(_ token: String, in db: Database) throws -> ChargeTokenRecord? {
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
      return ChargeTokenRecord(
        token: row[0], binding: row[1], billingContact: row[2], paymentMethod: row[3],
        issuedAt: RFC3339.parse(row[4]) ?? 0, amountMinor: row[5], currencyCode: row[6],
        sandboxOutcome: SandboxOutcome(rawValue: row[7]) ?? .processingError, expiresAt: row[8], usedAt: row[9],
        requestFingerprint: row[10], result: row[11], authorizationId: row[12])
    }
  }

  static func consume(_ token: String, at now: String, fingerprint: String, result: String, in db: Database) throws {
    try db.cachedStatement(sql: "UPDATE chargeToken SET usedAt = ?, requestFingerprint = ?, result = ? WHERE token = ? AND usedAt IS NULL").execute(
          arguments: [now, fingerprint, result, token])
    guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "charge token changed concurrently") }
  }

  static func quantityOnHand(_ sku: String, in db: Database) throws -> Int {
    try Int.fetchOne(db.cachedStatement(sql: "SELECT quantityOnHand FROM stock WHERE sku = ?"), arguments: [sku]) ?? 0
  }

  /// Takes `quantity` off the stock of `sku`; false (and nothing changed) when there is not enough.
  static func decrementStock(_ sku: String, by quantity: Int, in db: Database) throws -> Bool {
    try db.cachedStatement(sql: """
        UPDATE stock SET quantityOnHand = quantityOnHand - ?1, sold = sold + ?1
        WHERE sku = ?2 AND quantityOnHand >= ?1
        """).execute(
          arguments: [quantity, sku])
    return db.changesCount == 1
  }
}
