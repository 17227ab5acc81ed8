import Crypto
import SwiftASN1
import X509

/// The merchant's Apple Pay payment processing identity (config `applePay:`): the Payment Processing
/// Certificate Apple issued for `merchant.identifier`, its private key, the root every token's
/// signing chain must end at, and how old a token may be.
///
/// Built only by `load`, which checks at start-up that the certificate is this merchant's and that
/// key and certificate match, so a token is never checked against credentials that cannot work.
public struct ApplePayMerchant: Sendable {
  public let certificate: Certificate
  let privateKey: P256.KeyAgreement.PrivateKey
  public let rootCertificate: Certificate
  /// A token's signing time must be within this many seconds of the service clock.
  public let maxTokenAgeSeconds: Int
  /// SHA-256 of the merchant identifier: the certificate's merchant identifier extension, and the
  /// key derivation's party V information.
  let merchantIdentifierHash: [UInt8]
  /// SHA-256 of the certificate's SubjectPublicKeyInfo: what a token's `header.publicKeyHash` names.
  let publicKeyHash: [UInt8]

  /// The Apple Pay merchant identifier extension of a Payment Processing Certificate: the hex
  /// SHA-256 of the merchant identifier.
  static let merchantIdentifierExtension: ASN1ObjectIdentifier = "1.2.840.113635.100.6.32"
  /// The subject's UID attribute, which Apple sets to the merchant identifier.
  static let userIDAttribute: ASN1ObjectIdentifier = "0.9.2342.19200300.100.1.1"

  /// A problem with one of the `applePay` files: which key it belongs to and what is wrong.
  public struct Problem: Error, Equatable, Sendable {
    /// `merchantCertificate`, `merchantPrivateKey` or `rootCertificate`.
    public var key: String
    public var message: String
  }

  /// Reads and cross-checks the PEM texts. `rootPEM` nil means the Apple Root CA - G3 shipped in
  /// the package.
  public static func load(
    certificatePEM: String, privateKeyPEM: String, rootPEM: String?, merchantIdentifier: String,
    maxTokenAgeSeconds: Int
  ) throws(Problem) -> ApplePayMerchant {
    let certificate: Certificate
    do {
      certificate = try Certificate(pemEncoded: certificatePEM)
    } catch {
      throw Problem(key: "merchantCertificate", message: "is not a PEM X.509 certificate (-----BEGIN CERTIFICATE-----)")
    }
    guard let certificateKey = P256.Signing.PublicKey(certificate.publicKey) else {
      throw Problem(
        key: "merchantCertificate",
        message: "holds a \(certificate.publicKey) key; an Apple Pay Payment Processing Certificate holds a P-256 key")
    }
    let expected = Array(SHA256.hash(data: Array(merchantIdentifier.utf8)))
    guard let hash = merchantIdentifierHash(of: certificate) else {
      throw Problem(
        key: "merchantCertificate",
        message: """
          has no Apple Pay merchant identifier extension (\(merchantIdentifierExtension)); use the Payment \
          Processing Certificate Apple issued for \(merchantIdentifier)
          """)
    }
    guard hash == expected else {
      let owner = subjectAttribute(userIDAttribute, of: certificate).map { "merchant identifier \($0)" } ?? "another merchant identifier"
      throw Problem(
        key: "merchantCertificate",
        message: """
          belongs to \(owner) (extension \(merchantIdentifierExtension) is \(Hex.encode(hash))), not to \
          merchant.identifier \(merchantIdentifier) (SHA-256 \(Hex.encode(expected)))
          """)
    }

    let privateKey: P256.KeyAgreement.PrivateKey
    do {
      privateKey = try P256.KeyAgreement.PrivateKey(pemRepresentation: privateKeyPEM)
    } catch {
      throw Problem(
        key: "merchantPrivateKey",
        message: "is not a PEM P-256 private key (SEC1 \"EC PRIVATE KEY\" or PKCS#8 \"PRIVATE KEY\")")
    }
    guard privateKey.publicKey.x963Representation == certificateKey.x963Representation else {
      throw Problem(
        key: "merchantPrivateKey",
        message: "does not match merchantCertificate: it is the private key of another public key")
    }

    let root: Certificate
    do {
      root = try Certificate(pemEncoded: rootPEM ?? AppleRootCertificate.g3PEM)
    } catch {
      throw Problem(key: "rootCertificate", message: "is not a PEM X.509 certificate (-----BEGIN CERTIFICATE-----)")
    }
    return ApplePayMerchant(
      certificate: certificate, privateKey: privateKey, rootCertificate: root, maxTokenAgeSeconds: maxTokenAgeSeconds,
      merchantIdentifierHash: expected,
      publicKeyHash: Array(SHA256.hash(data: certificateKey.derRepresentation)))
  }

  /// The 32 bytes the merchant identifier extension names (hex text in a UTF8String or IA5String);
  /// nil when the extension is absent or holds something else.
  static func merchantIdentifierHash(of certificate: Certificate) -> [UInt8]? {
    guard let value = certificate.extensions[oid: merchantIdentifierExtension]?.value,
      let node = try? DER.parse(Array(value)), case .primitive(let text) = node.content,
      node.identifier == .utf8String || node.identifier == .ia5String,
      let bytes = Hex.decode(String(decoding: text, as: UTF8.self)), bytes.count == 32
    else { return nil }
    return bytes
  }

  /// The first value of a subject attribute (the UID, where Apple puts the merchant identifier, or
  /// the common name), if any.
  static func subjectAttribute(_ type: ASN1ObjectIdentifier, of certificate: Certificate) -> String? {
    for relativeName in certificate.subject {
      for attribute in relativeName where attribute.type == type {
        return attribute.value.description
      }
    }
    return nil
  }
}
