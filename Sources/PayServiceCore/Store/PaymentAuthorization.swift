/// An authorization hold placed for a decrypted Apple Pay token, as stored: the card's network,
/// type and last four digits and Apple's transaction id, and nothing else of the card.
public struct PaymentAuthorization: Sendable, Equatable {
  public enum Status: String, Sendable, StoredText {
    /// Placed by the network, waiting for processOrder to capture it.
    case held
    /// Refused by the network: no charge token was issued.
    case declined
    /// Settled by processOrder.
    case captured

    public static let storedAs = "an authorization's status"
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

  public init(
    authorizationId: String, transactionId: String, network: String, cardType: String, lastFour: String,
    amountMinor: Int64, currencyCode: String, status: Status
  ) {
    self.authorizationId = authorizationId
    self.transactionId = transactionId
    self.network = network
    self.cardType = cardType
    self.lastFour = lastFour
    self.amountMinor = amountMinor
    self.currencyCode = currencyCode
    self.status = status
  }

  /// The order document's `payment` member.
  var orderPayment: OrderDocument.Payment {
    OrderDocument.Payment(network: network, type: cardType, lastFour: lastFour, transactionId: transactionId)
  }
}

extension TokenBook {
  /// Records an authorization. A transaction id seen before is a replay: nothing is written and
  /// `ApplePayTokenFailure.replay` is thrown.
  func record(_ authorization: PaymentAuthorization, at now: String) throws {
    guard try insertAuthorization(authorization, at: now) else {
      throw ApplePayTokenFailure(
        .replay, "this payment token was already used (header.transactionId \(authorization.transactionId)); authorize again")
    }
  }
}

extension OrderBook {
  /// Settles a held authorization; anything but exactly one held row is a store failure.
  func capture(_ authorizationId: String, chargeId: String, at now: String) throws {
    guard try markCaptured(authorizationId, chargeId: chargeId, at: now) else {
      throw StoreError.unavailable(reason: "authorization \(authorizationId) is not held")
    }
  }
}
