import Crypto
import Foundation

/// Stripe's webhook signature scheme, as Stripe documents it ("Verify webhook signatures"): the
/// `Stripe-Signature` header is `t=TIMESTAMP,v1=SIGNATURE[,v1=…][,v0=…]`, each `v1` the hex
/// HMAC-SHA256 of `TIMESTAMP.PAYLOAD` under an endpoint's signing secret (`whsec_…`). The payload is
/// the request body exactly as received. A header may carry several `v1` signatures (Stripe signs
/// with the old and the new secret while a secret is rolled), and the merchant may hold several
/// secrets: any `v1` that any secret made is enough. Other schemes (`v0`) are ignored.
public enum StripeWebhookSignature {
  /// Stripe's libraries' default: a timestamp further than this from the clock is refused, so a
  /// captured delivery cannot be replayed later.
  public static let toleranceSeconds: Int64 = 300

  /// Why a delivery is not Stripe's, for the answer (no secret, signature or payload in it).
  public enum Failure: Error, Equatable, Sendable {
    /// No header, or one with no `t=` or no `v1=`.
    case malformedHeader(String)
    /// No `v1` signature matches the payload under any secret.
    case noMatchingSignature
    /// Signed more than the tolerance before the clock.
    case staleTimestamp(ageSeconds: Int64)
    /// Signed more than the tolerance after the clock.
    case futureTimestamp(aheadSeconds: Int64)

    public var message: String {
      switch self {
      case .malformedHeader(let why): return "the Stripe-Signature header \(why)"
      case .noMatchingSignature:
        return "no v1 signature in the Stripe-Signature header matches the payload under the webhook secret"
      case .staleTimestamp(let age):
        return "the signature's timestamp is \(age) s old, more than the \(toleranceSeconds) s allowed"
      case .futureTimestamp(let ahead):
        return "the signature's timestamp is \(ahead) s ahead of the service clock, more than the \(toleranceSeconds) s allowed"
      }
    }
  }

  /// The header's timestamp and `v1` signatures (bytes), or why it cannot be read.
  static func parse(_ header: String) -> Result<(timestamp: Int64, signatures: [[UInt8]]), Failure> {
    var timestamp: Int64?
    var signatures: [[UInt8]] = []
    for item in header.split(separator: ",", omittingEmptySubsequences: true) {
      let pair = item.split(separator: "=", maxSplits: 1)
      guard pair.count == 2 else { continue }
      let name = pair[0].trimmingCharacters(in: .whitespaces)
      let value = pair[1].trimmingCharacters(in: .whitespaces)
      switch name {
      case "t":
        guard timestamp == nil, value.utf8.count <= 12, let seconds = Int64(value), seconds >= 0 else {
          return .failure(.malformedHeader("has a t= that is not one Unix time in seconds"))
        }
        timestamp = seconds
      case "v1":
        // A v1 that is not 64 hex digits cannot match; it is skipped, as Stripe's libraries do.
        if value.utf8.count == 64, let bytes = Hex.decode(value) { signatures.append(bytes) }
      default: continue
      }
    }
    guard let timestamp else { return .failure(.malformedHeader("has no t= timestamp")) }
    guard !signatures.isEmpty else { return .failure(.malformedHeader("has no v1= signature")) }
    return .success((timestamp, signatures))
  }

  /// Nil when `header` signs `payload` under one of `secrets` within the tolerance of `now`; else
  /// why not. The signatures are compared in constant time (swift-crypto's HMAC validation).
  public static func verify(payload: String, header: String, secrets: [String], now: Int64) -> Failure? {
    let parsed: (timestamp: Int64, signatures: [[UInt8]])
    switch parse(header) {
    case .failure(let failure): return failure
    case .success(let value): parsed = value
    }
    let signed = Data("\(parsed.timestamp).".utf8) + Data(payload.utf8)
    var matched = false
    for secret in secrets where !secret.isEmpty {
      let key = SymmetricKey(data: Data(secret.utf8))
      for signature in parsed.signatures
      where HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signed, using: key) {
        matched = true
      }
    }
    guard matched else { return .noMatchingSignature }
    // Checked after the signature, as Stripe's libraries do: the timestamp is only trusted once signed.
    if now - parsed.timestamp > toleranceSeconds { return .staleTimestamp(ageSeconds: now - parsed.timestamp) }
    if parsed.timestamp - now > toleranceSeconds { return .futureTimestamp(aheadSeconds: parsed.timestamp - now) }
    return nil
  }

  /// The header Stripe would send for `payload` signed with `secret` at `timestamp`: for the Stripe
  /// test server and tests.
  public static func header(payload: String, secret: String, timestamp: Int64) -> String {
    let code = HMAC<SHA256>.authenticationCode(
      for: Data("\(timestamp).".utf8) + Data(payload.utf8), using: SymmetricKey(data: Data(secret.utf8)))
    return "t=\(timestamp),v1=\(Hex.encode(Array(code)))"
  }

  /// The secrets in an environment variable's value: one, or several separated by commas or
  /// whitespace while a secret is rolled.
  public static func secrets(in value: String) -> [String] {
    value.split(whereSeparator: { $0 == "," || $0.isWhitespace }).map(String.init)
  }
}
