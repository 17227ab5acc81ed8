import GRDB

/// An authorization hold placed for a decrypted Apple Pay token, as stored: the card's network,
/// type and last four digits and Apple's transaction id, and nothing else of the card.
public struct PaymentAuthorization: Sendable, Equatable {
  public enum Status: String, Sendable {
    /// Placed by the network, waiting for processOrder to capture it.
    case held
    /// Refused by the network: no charge token was issued.
    case declined
    /// Settled by processOrder.
    case captured
  }

  public var authorizationId: String
  /// Apple's `header.transactionId`, lower-case hex: a token is accepted once.
  public var transactionId: String
  public var network: String
  public var cardType: String
  public var lastFour: String
  public var amountMinor: Int64
  public var currencyCode: String
  public var status: Status

  /// The order document's `payment` member.
  var orderPayment: JSONValue {
    var payment = JSONObjectBuilder()
    payment.set("network", network)
    payment.set("type", cardType)
    payment.set("lastFour", lastFour)
    payment.set("transactionId", transactionId)
    return payment.value
  }
}

extension Store {
  /// Records an authorization. A transaction id seen before is a replay: nothing is written and
  /// `ApplePayTokenFailure.replay` is thrown.
  static func record(_ authorization: PaymentAuthorization, at now: String, in db: Database) throws {
    try db.cachedStatement(sql: """
        INSERT INTO paymentAuthorization
          (authorizationId, transactionId, network, cardType, lastFour, amountMinor, currencyCode, status, createdAt)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(transactionId) DO NOTHING
        """).execute(
      arguments: [
        authorization.authorizationId, authorization.transactionId, authorization.network, authorization.cardType,
        authorization.lastFour, authorization.amountMinor, authorization.currencyCode, authorization.status.rawValue,
        now,
      ])
    guard db.changesCount == 1 else {
      throw ApplePayTokenFailure(
        .replay, "this payment token was already used (header.transactionId \(authorization.transactionId)); authorize again")
    }
  }

  private static let authorizationColumns =
    "authorizationId, transactionId, network, cardType, lastFour, amountMinor, currencyCode, status"

  /// A row selected with `authorizationColumns`.
  private static func authorization(_ row: Row) -> PaymentAuthorization {
    PaymentAuthorization(
      authorizationId: row[0], transactionId: row[1], network: row[2], cardType: row[3], lastFour: row[4],
      amountMinor: row[5], currencyCode: row[6], status: PaymentAuthorization.Status(rawValue: row[7]) ?? .declined)
  }

  static func authorization(_ authorizationId: String, in db: Database) throws -> PaymentAuthorization? {
    let statement = try db.cachedStatement(
      sql: "SELECT \(authorizationColumns) FROM paymentAuthorization WHERE authorizationId = ?")
    return try Row.fetchOne(statement, arguments: [authorizationId]).map(authorization)
  }

  /// Settles a held authorization; anything but exactly one held row is a store failure.
  static func capture(_ authorizationId: String, chargeId: String, at now: String, in db: Database) throws {
    try db.cachedStatement(sql: """
        UPDATE paymentAuthorization SET status = 'captured', chargeId = ?, capturedAt = ?
        WHERE authorizationId = ? AND status = 'held'
        """).execute(arguments: [chargeId, now, authorizationId])
    guard db.changesCount == 1 else {
      throw StoreError.unavailable(reason: "authorization \(authorizationId) is not held")
    }
  }

  /// Every stored authorization, oldest first (for tests and audits).
  public func authorizations() throws(StoreError) -> [PaymentAuthorization] {
    try read { db in
      try Row.fetchAll(db, sql: "SELECT \(Store.authorizationColumns) FROM paymentAuthorization ORDER BY rowid").map(Store.authorization)
    }
  }
}
