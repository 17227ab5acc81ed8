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
    default: self = .approved
    }
  }

  /// nil when approved; else the failure code, decline code and a message for the buyer.
  public var failure: (failureCode: String, declineCode: String?, message: String)? {
    switch self {
    case .approved, .refundFails: return nil
    case .genericDecline: return ("card_declined", "generic_decline", "The card was declined.")
    case .insufficientFunds:
      return ("card_declined", "insufficient_funds", "The card was declined for insufficient funds.")
    case .expiredCard: return ("expired_card", nil, "The card has expired.")
    case .processingError:
      return ("processing_error", nil, "An error occurred while processing the card. Try again with a new payment.")
    }
  }
}
