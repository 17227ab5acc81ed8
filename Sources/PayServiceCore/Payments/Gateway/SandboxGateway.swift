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

/// Deterministic identifiers: the same store state and clock give the same identifiers, and no two
/// tokens of one store collide (the sequence number is part of the input).
public enum Identifiers {
  /// SHA-256 of the parts joined with U+001F, as 64 lowercase hex digits.
  static func digest(_ parts: [String]) -> String {
    SHA256.hash(data: Array(parts.joined(separator: "\u{1F}").utf8)).withUnsafeBytes { Hex.encode($0) }
  }

  public static func chargeToken(merchant: String, sequence: Int64, binding: String, issuedAt: Int64) -> String {
    "ctok_" + digest(["charge-token", merchant, String(sequence), binding, String(issuedAt)]).prefix(32)
  }

  public static func chargeId(token: String) -> String {
    "ch_" + digest(["charge", token]).prefix(24)
  }

  /// An Apple Pay authorization hold's id: one per token (Apple's transaction id).
  public static func authorizationId(transactionId: String) -> String {
    "auth_" + digest(["authorization", transactionId]).prefix(24)
  }

  public static func orderId(token: String) -> String {
    "ord_" + digest(["order", token]).prefix(20)
  }

  /// The idempotency key of an order's charge at a remote gateway: one per order, so the same
  /// charge sent again (a replay, the sweep at start-up) is the same call to the gateway.
  public static func chargeIdempotencyKey(orderId: String) -> String {
    "payservice-charge-" + orderId
  }

  /// The idempotency key of a back-office call at a remote gateway: one per kind (capture, cancel,
  /// refund), order and the client's key for it.
  public static func backOfficeIdempotencyKey(kind: String, orderId: String, key: String) -> String {
    "payservice-\(kind)-" + digest([kind, orderId, key]).prefix(32)
  }

  /// The gateway's id of a refund: one per order and refundId.
  public static func gatewayRefundId(orderId: String, refundId: String) -> String {
    "re_" + digest(["refund", orderId, refundId]).prefix(24)
  }
}
