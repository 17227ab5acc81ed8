import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// The TLS side of `AppleSessionTestServer`: a throwaway CA standing in for the public roots
/// Apple's gateways chain to, the server certificate it issued (DNS `localhost`, IP 127.0.0.1,
/// serverAuth, valid from an hour ago for a year), and a server context that requires a client
/// certificate issued by the merchant identity authority.
struct AppleSessionServerTLS: Sendable {
  let caPEM: String
  let leafDER: [UInt8]
  let leafKeyPEM: String

  init(now: Date = Date()) throws {
    let caKey = P256.Signing.PrivateKey()
    let leafKey = P256.Signing.PrivateKey()
    let notBefore = now.addingTimeInterval(-3_600)
    let notAfter = now.addingTimeInterval(365 * 86_400)
    let caName = try DistinguishedName {
      OrganizationName("payservice tests")
      CommonName("payservice Apple Pay gateway test CA")
    }
    let ca = try Certificate(
      version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(caKey.publicKey),
      notValidBefore: notBefore, notValidAfter: notAfter, issuer: caName, subject: caName,
      signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions {
        Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
        Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        SubjectKeyIdentifier(hash: Certificate.PublicKey(caKey.publicKey))
      },
      issuerPrivateKey: .init(caKey))
    let leaf = try Certificate(
      version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(leafKey.publicKey),
      notValidBefore: notBefore, notValidAfter: notAfter, issuer: caName,
      subject: try DistinguishedName { CommonName("localhost") },
      signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions {
        Critical(BasicConstraints.notCertificateAuthority)
        Critical(KeyUsage(digitalSignature: true))
        try ExtendedKeyUsage([.serverAuth])
        SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
        AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: Certificate.PublicKey(caKey.publicKey)).keyIdentifier)
      },
      issuerPrivateKey: .init(caKey))
    caPEM = try ca.serializeAsPEM().pemString
    var serializer = DER.Serializer()
    try serializer.serialize(leaf)
    leafDER = serializer.serializedBytes
    leafKeyPEM = leafKey.pemRepresentation
  }

  /// TLS 1.2 or later, ALPN `http/1.1`, and a client certificate required and verified against
  /// `clientCAPEM` (no hostname check: a client certificate names a merchant, not a host).
  func serverContext(clientCAPEM: String) throws -> NIOSSLContext {
    var configuration = TLSConfiguration.makeServerConfiguration(
      certificateChain: [.certificate(try NIOSSLCertificate(bytes: leafDER, format: .der))],
      privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(leafKeyPEM.utf8), format: .pem)))
    configuration.minimumTLSVersion = .tlsv12
    configuration.applicationProtocols = ["http/1.1"]
    configuration.certificateVerification = .noHostnameVerification
    configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(clientCAPEM.utf8)))
    return try NIOSSLContext(configuration: configuration)
  }
}
