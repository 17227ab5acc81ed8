import Crypto
import CryptoExtras
import Foundation
import SwiftASN1
import X509

/// A throwaway stand-in for the Apple certificate authority that issues Merchant Identity
/// Certificates: a self-signed P-256 CA that issues client certificates shaped like Apple's (subject
/// UID = the merchant identifier, CN "Merchant ID: <identifier>", the merchant identifier extension
/// 1.2.840.113635.100.6.32 holding the lowercase hex SHA-256 of the identifier as a UTF8String,
/// extended key usage clientAuth), for an RSA 2048 key as Apple's CSR instructions ask (TN3103) or
/// a P-256 key, with any validity period.
///
/// `AppleSessionTestServer` trusts exactly one such authority for client certificates; another
/// authority's certificates fail its TLS handshake, as a certificate Apple did not issue would.
public struct TestMerchantIdentityAuthority: Sendable {
  public let name: String
  /// The CA certificate (PEM): what a server requiring merchant identity certificates trusts.
  public let caPEM: String
  let caKey: P256.Signing.PrivateKey
  let caName: DistinguishedName

  public init(name: String = "payservice test Apple merchant identity CA", now: Date = Date()) throws {
    self.name = name
    let caKey = P256.Signing.PrivateKey()
    let caName = try DistinguishedName {
      CountryName("US")
      OrganizationName("payservice tests")
      OrganizationalUnitName("Test Merchant Identity Authority")
      CommonName(name)
    }
    let ca = try Certificate(
      version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(caKey.publicKey),
      notValidBefore: now.addingTimeInterval(-20 * 365 * 86_400), notValidAfter: now.addingTimeInterval(20 * 365 * 86_400),
      issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions {
        Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
        Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        SubjectKeyIdentifier(hash: Certificate.PublicKey(caKey.publicKey))
      },
      issuerPrivateKey: .init(caKey))
    self.caKey = caKey
    self.caName = caName
    caPEM = try ca.serializeAsPEM().pemString
  }

  /// A merchant identity certificate and key for `merchantIdentifier`, valid from `notValidBefore`
  /// to `notValidAfter`. `userID` and `identifierExtension` leave out the subject UID or the
  /// merchant identifier extension (to test certificates that name the merchant only one way).
  public func issue(
    merchantIdentifier: String, notValidBefore: Date, notValidAfter: Date, key: TestMerchantIdentity.KeyKind = .rsa2048,
    userID: Bool = true, identifierExtension: Bool = true
  ) throws -> TestMerchantIdentity {
    let privateKey: Certificate.PrivateKey
    let keyPEM: String
    switch key {
    case .rsa2048:
      let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
      privateKey = .init(rsa)
      keyPEM = rsa.pemRepresentation
    case .p256:
      let p256 = P256.Signing.PrivateKey()
      privateKey = .init(p256)
      keyPEM = p256.pemRepresentation
    }
    var subject: [RelativeDistinguishedName] = []
    if userID {
      subject.append(.init(.init(type: Self.userIDAttribute, utf8String: merchantIdentifier)))
    }
    subject.append(.init(.init(type: .RDNAttributeType.commonName, utf8String: "Merchant ID: \(merchantIdentifier)")))
    subject.append(.init(.init(type: .RDNAttributeType.organizationalUnitName, utf8String: "TESTTEAM01")))
    subject.append(.init(.init(type: .RDNAttributeType.organizationName, utf8String: "payservice tests")))
    subject.append(.init(.init(type: .RDNAttributeType.countryName, utf8String: "US")))

    var extensions = try Certificate.Extensions {
      Critical(BasicConstraints.notCertificateAuthority)
      Critical(KeyUsage(digitalSignature: true, keyEncipherment: true))
      try ExtendedKeyUsage([.clientAuth])
      AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: Certificate.PublicKey(caKey.publicKey)).keyIdentifier)
    }
    if identifierExtension {
      let hash = SHA256.hash(data: Array(merchantIdentifier.utf8)).map { String(format: "%02x", $0) }.joined()
      var serializer = DER.Serializer()
      try serializer.serialize(ASN1UTF8String(hash))
      try extensions.append(
        Certificate.Extension(oid: Self.merchantIdentifierExtension, critical: false, value: serializer.serializedBytes[...]))
    }
    let certificate = try Certificate(
      version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: privateKey.publicKey,
      notValidBefore: notValidBefore, notValidAfter: notValidAfter, issuer: caName,
      subject: DistinguishedName(subject), signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
      issuerPrivateKey: .init(caKey))
    return TestMerchantIdentity(
      merchantIdentifier: merchantIdentifier, certificatePEM: try certificate.serializeAsPEM().pemString, keyPEM: keyPEM,
      caPEM: caPEM, notValidBefore: notValidBefore, notValidAfter: notValidAfter)
  }

  /// A certificate valid from a day before `now` for `days` days.
  public func issue(
    merchantIdentifier: String, now: Date = Date(), days: Int = 365, key: TestMerchantIdentity.KeyKind = .rsa2048
  ) throws -> TestMerchantIdentity {
    try issue(
      merchantIdentifier: merchantIdentifier, notValidBefore: now.addingTimeInterval(-86_400),
      notValidAfter: now.addingTimeInterval(Double(days) * 86_400), key: key)
  }

  static let userIDAttribute: ASN1ObjectIdentifier = "0.9.2342.19200300.100.1.1"
  static let merchantIdentifierExtension: ASN1ObjectIdentifier = "1.2.840.113635.100.6.32"
}

/// A test merchant identity certificate (PEM) and its unencrypted private key (PEM).
public struct TestMerchantIdentity: Sendable {
  public enum KeyKind: Sendable {
    /// RSA 2048, what Apple's instructions for the merchant identity CSR ask for.
    case rsa2048
    /// P-256 (quicker to make).
    case p256
  }

  public let merchantIdentifier: String
  public let certificatePEM: String
  public let keyPEM: String
  /// The authority that issued it.
  public let caPEM: String
  public let notValidBefore: Date
  public let notValidAfter: Date

  /// Writes `<name>.pem` (certificate) and `<name>.key` into `directory`; returns their paths.
  public func write(to directory: URL, name: String = "merchant-identity") throws -> (certificate: String, key: String) {
    let certificate = directory.appendingPathComponent("\(name).pem")
    let key = directory.appendingPathComponent("\(name).key")
    try certificatePEM.write(to: certificate, atomically: true, encoding: .utf8)
    try keyPEM.write(to: key, atomically: true, encoding: .utf8)
    return (certificate.path, key.path)
  }
}
