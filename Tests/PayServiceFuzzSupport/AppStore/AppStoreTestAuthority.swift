import Crypto
import Foundation
import SwiftASN1
import X509

/// A throwaway stand-in for Apple's App Store signing chain: a self-signed P-256 root, an
/// intermediate carrying Apple's WWDR marker (1.2.840.113635.100.6.2.1) and a leaf carrying the App
/// Store signing marker (1.2.840.113635.100.6.11.1), as Apple's chains and the test chain of
/// Apple's own library have them. It signs JWS the way the App Store does (compact, ES256, an `x5c`
/// of leaf, intermediate and root), for transactions, renewal infos and notifications. Options make
/// the faults a verifier must refuse: a leaf without its marker, an expired leaf, another root.
public struct AppStoreTestAuthority: Sendable {
  public static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
  public static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

  public let root: Certificate
  public let intermediate: Certificate
  public let leaf: Certificate
  let leafKey: P256.Signing.PrivateKey

  /// - Parameters:
  ///   - validFrom, validUntil: the leaf's validity (the root and intermediate cover 20 years around it).
  ///   - leafMarker, intermediateMarker: false leaves Apple's marker out of that certificate.
  public init(
    validFrom: Date = Date(timeIntervalSince1970: 1_640_995_200), validUntil: Date = Date(timeIntervalSince1970: 2_000_000_000),
    leafMarker: Bool = true, intermediateMarker: Bool = true
  ) throws {
    let rootKey = P256.Signing.PrivateKey()
    let intermediateKey = P256.Signing.PrivateKey()
    leafKey = P256.Signing.PrivateKey()
    let rootName = try DistinguishedName {
      CountryName("US")
      OrganizationName("payservice tests")
      CommonName("payservice test App Store root")
    }
    let intermediateName = try DistinguishedName {
      CountryName("US")
      OrganizationName("payservice tests")
      CommonName("payservice test App Store intermediate")
    }
    let leafName = try DistinguishedName {
      CountryName("US")
      OrganizationName("payservice tests")
      CommonName("payservice test App Store signing")
    }
    let from = validFrom.addingTimeInterval(-10 * 365 * 86_400)
    let until = validUntil.addingTimeInterval(10 * 365 * 86_400)
    root = try Certificate(
      version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(rootKey.publicKey), notValidBefore: from,
      notValidAfter: until, issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions {
        Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
        Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        SubjectKeyIdentifier(hash: Certificate.PublicKey(rootKey.publicKey))
      }, issuerPrivateKey: .init(rootKey))
    var intermediateExtensions = try Certificate.Extensions {
      Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
      Critical(KeyUsage(keyCertSign: true, cRLSign: true))
      SubjectKeyIdentifier(hash: Certificate.PublicKey(intermediateKey.publicKey))
      AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: Certificate.PublicKey(rootKey.publicKey)).keyIdentifier)
    }
    if intermediateMarker { try intermediateExtensions.append(Self.marker(Self.intermediateMarker)) }
    intermediate = try Certificate(
      version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(intermediateKey.publicKey),
      notValidBefore: from, notValidAfter: until, issuer: rootName, subject: intermediateName,
      signatureAlgorithm: .ecdsaWithSHA256, extensions: intermediateExtensions, issuerPrivateKey: .init(rootKey))
    var leafExtensions = try Certificate.Extensions {
      Critical(BasicConstraints.notCertificateAuthority)
      Critical(KeyUsage(digitalSignature: true))
      AuthorityKeyIdentifier(
        keyIdentifier: SubjectKeyIdentifier(hash: Certificate.PublicKey(intermediateKey.publicKey)).keyIdentifier)
    }
    if leafMarker { try leafExtensions.append(Self.marker(Self.leafMarker)) }
    leaf = try Certificate(
      version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(leafKey.publicKey),
      notValidBefore: validFrom, notValidAfter: validUntil, issuer: intermediateName, subject: leafName,
      signatureAlgorithm: .ecdsaWithSHA256, extensions: leafExtensions, issuerPrivateKey: .init(intermediateKey))
  }

  /// Apple's markers are extensions whose value is an ASN.1 NULL.
  static func marker(_ oid: ASN1ObjectIdentifier) throws -> Certificate.Extension {
    var serializer = DER.Serializer()
    try serializer.serialize(ASN1Null())
    return Certificate.Extension(oid: oid, critical: false, value: serializer.serializedBytes[...])
  }

  /// The compact JWS of `payload` (JSON text) as the App Store signs it; `x5c` replaces the header's
  /// certificates (base64 DER) when given.
  public func sign(_ payload: String, x5c: [String]? = nil) throws -> String {
    let chain = try x5c ?? [leaf, intermediate, root].map { certificate in
      var serializer = DER.Serializer()
      try serializer.serialize(certificate)
      return Data(serializer.serializedBytes).base64EncodedString()
    }
    let header = #"{"alg":"ES256","x5c":[\#(chain.map { "\"\($0)\"" }.joined(separator: ","))]}"#
    let signingInput = Self.base64URL(Array(header.utf8)) + "." + Self.base64URL(Array(payload.utf8))
    let signature = try leafKey.signature(for: Array(signingInput.utf8))
    return signingInput + "." + Self.base64URL(Array(signature.rawRepresentation))
  }

  public static func base64URL(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }
}
