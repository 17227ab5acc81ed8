import Crypto
import Foundation

/// A signer of compact JSON Web Signatures with ES256 (RFC 7515, RFC 7518 3.4), the tokens Apple's
/// services take: the App Store Server API's bearer token, APNs' provider token, and App Store
/// promotional offer signatures. The header and payload are JSON objects written in the order
/// their members were set (`JSONWriter`), each part base64url without padding, and the signature
/// the raw 64 bytes of r and s, not DER.
///
/// The key is read from a `.p8` file as Apple hands it out: a PEM `PRIVATE KEY` block (PKCS#8)
/// holding a P-256 key. It stays inside: never described, printed or put in an error.
public struct ES256JWT: Sendable, CustomStringConvertible {
  /// Why the key text is not one to sign with. The cases quote nothing of the text.
  public enum KeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text is not a PEM `PRIVATE KEY` (PKCS#8) block.
    case notPKCS8
    /// A PKCS#8 key, but not a P-256 one.
    case notP256

    public var description: String {
      switch self {
      case .notPKCS8: return "the key is not a PEM PKCS#8 private key (\"-----BEGIN PRIVATE KEY-----\")"
      case .notP256: return "the key is not a P-256 (ES256) private key"
      }
    }
  }

  private let key: P256.Signing.PrivateKey

  /// The key of a `.p8` file. swift-crypto's error is not passed on: it could say more about the
  /// text than the operator needs.
  public init(pkcs8PEM pem: String) throws(KeyError) {
    let trimmed = pem.trimmingCharacters(in: .whitespacesAndNewlines)
    guard trimmed.hasPrefix("-----BEGIN PRIVATE KEY-----"), trimmed.hasSuffix("-----END PRIVATE KEY-----") else {
      throw .notPKCS8
    }
    do {
      key = try P256.Signing.PrivateKey(pemRepresentation: trimmed)
    } catch {
      throw .notP256
    }
  }

  public init(key: P256.Signing.PrivateKey) {
    self.key = key
  }

  /// The public half, which verifies the tokens.
  public var publicKey: P256.Signing.PublicKey { key.publicKey }

  /// Names no key material.
  public var description: String { "an ES256 signing key" }

  /// The compact JWS `base64url(header).base64url(payload).base64url(r||s)`.
  public func sign(header: JSONObject, payload: JSONObject) throws -> String {
    let signingInput =
      Self.base64URL(Array(JSONWriter.string(JSONValue.object(header)).utf8)) + "."
      + Self.base64URL(Array(JSONWriter.string(JSONValue.object(payload)).utf8))
    let signature = try key.signature(for: Array(signingInput.utf8))
    return signingInput + "." + Self.base64URL(Array(signature.rawRepresentation))
  }

  /// Base64url without padding (RFC 7515, 2).
  public static func base64URL(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }
}
