import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A throwaway certificate authority and the server certificate it issued, made fresh for each
/// `StripeTestServer`: the leaf names DNS `localhost` and IP `127.0.0.1`, is good for TLS server
/// authentication, and is valid from an hour ago for a year. A client trusts `caPEM` (and only it)
/// to talk to the server exactly as it would to api.stripe.com.
struct TestTLSCertificate: Sendable {
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
      CommonName("payservice Stripe test server CA")
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

  /// The server side of TLS: the leaf certificate and key, TLS 1.2 or later, and ALPN offering
  /// only `http/1.1` (the server speaks nothing else).
  func serverContext() throws -> NIOSSLContext {
    var configuration = TLSConfiguration.makeServerConfiguration(
      certificateChain: [.certificate(try NIOSSLCertificate(bytes: leafDER, format: .der))],
      privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(leafKeyPEM.utf8), format: .pem)))
    configuration.minimumTLSVersion = .tlsv12
    configuration.applicationProtocols = ["http/1.1"]
    return try NIOSSLContext(configuration: configuration)
  }
}
