import Crypto

/// The built-in deterministic test gateway. The outcome of a charge is fixed when the payment is
/// authorized, from the Apple Pay token's `paymentData` test name; the name itself is never stored.
public enum SandboxOutcome: String, Sendable, CaseIterable {
  case approved
  case genericDecline
  case insufficientFunds
  case expiredCard
  case processingError
  /// The charge is approved; every refund of it is declined (Stripe's `tok_refundFail`).
  case refundFails
  /// The checkout is approved and the card kept; the first later payment the merchant starts
  /// (an agreement's) is declined for insufficient funds, every other approved: a decline that a
  /// retry recovers.
  case laterDeclinedOnce
  /// The checkout is approved; every later payment is declined for insufficient funds (Stripe's
  /// `4000000000000341`, `tok_chargeCustomerFail`: attaching succeeds, charges fail).
  case laterDeclined
  /// The checkout is approved; every later payment needs the customer to authenticate (Stripe's
  /// `4000002760003184`: `authentication_required` off-session).
  case laterNeedsAuthentication

  /// The outcome for a payment token: the test names below, anything else approved.
  public init(paymentData: JSONValue) {
    guard case .string(let name) = paymentData else {
      self = .approved
      return
    }
    switch name {
    case "tok_visa_chargeDeclined": self = .genericDecline
    case "tok_visa_chargeDeclinedInsufficientFunds": self = .insufficientFunds
    case "tok_chargeDeclinedExpiredCard": self = .expiredCard
    case "tok_chargeDeclinedProcessingError": self = .processingError
    case "tok_refundFail": self = .refundFails
    case "tok_visa_laterDeclinedOnce": self = .laterDeclinedOnce
    case "tok_chargeCustomerFail": self = .laterDeclined
    case "tok_visa_laterAuthenticationRequired": self = .laterNeedsAuthentication
    default: self = .approved
    }
  }

  /// A later payment of an agreement (the merchant starts it, the customer is not there); `first`
  /// when it is the first attempt at the agreement's first later payment: nil when approved; else
  /// the failure code, decline code and a message.
  public func laterFailure(first: Bool) -> (failureCode: String, declineCode: String?, message: String)? {
    switch self {
    case .laterDeclinedOnce where first, .laterDeclined:
      return ("card_declined", "insufficient_funds", "The card was declined for insufficient funds.")
    case .laterNeedsAuthentication:
      return ("card_declined", "authentication_required", "The card's bank asks the customer to authenticate this payment.")
    case .laterDeclinedOnce, .refundFails: return nil
    default: return failure
    }
  }

  /// nil when approved; else the failure code, decline code and a message for the buyer.
  public var failure: (failureCode: String, declineCode: String?, message: String)? {
    switch self {
    case .approved, .refundFails, .laterDeclinedOnce, .laterDeclined, .laterNeedsAuthentication: return nil
    case .genericDecline: return ("card_declined", "generic_decline", "The card was declined.")
    case .insufficientFunds:
      return ("card_declined", "insufficient_funds", "The card was declined for insufficient funds.")
    case .expiredCard: return ("expired_card", nil, "The card has expired.")
    case .processingError:
      return ("processing_error", nil, "An error occurred while processing the card. Try again with a new payment.")
    }
  }
}
