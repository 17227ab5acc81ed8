import Foundation
@_spi(CMS) import X509

/// The Order Type ID certificate Apple issued for an order type identifier, its private key and
/// Apple's WWDR intermediate: what signs an order package's manifest.
///
/// Built only by `load`, which checks that the texts hold a certificate and the matching RSA or
/// EC key, that the certificate is this order type's (Apple puts the identifier in the subject's
/// UID, which is also the APNs topic of the order's pushes), and that the intermediate issued it.
public struct WalletOrderSigner: Sendable {
  public let orderTypeIdentifier: String
  public let certificate: Certificate
  public let intermediate: Certificate
  let privateKey: Certificate.PrivateKey
  /// The certificate's validity period, unix seconds (both ends inclusive).
  public let notValidBefore: Int64
  public let notValidAfter: Int64

  /// A problem with one of the texts: its config key (`certificate`, `privateKey`,
  /// `intermediateCertificate`) and what is wrong.
  public struct Problem: Error, Equatable, Sendable {
    public var key: String
    public var message: String
  }

  public static func load(
    certificatePEM: String, keyPEM: String, intermediatePEM: String, orderTypeIdentifier: String
  ) throws(Problem) -> WalletOrderSigner {
    let pair: CertificateKeyPair
    do {
      pair = try CertificateKeyPair.read(
        certificatePEM: certificatePEM, keyPEM: keyPEM, certificateKey: "certificate", privateKeyKey: "privateKey")
    } catch {
      throw Problem(key: error.key, message: error.message)
    }
    let leaf = pair.chain[0]
    let userID = ApplePayMerchant.subjectAttribute(ApplePayMerchant.userIDAttribute, of: leaf)
    guard userID == orderTypeIdentifier else {
      let owner = userID.map { "order type identifier \($0)" } ?? "no order type identifier (no subject UID)"
      throw Problem(
        key: "certificate",
        message: "names \(owner), not \(orderTypeIdentifier); use the Order Type ID certificate Apple issued for \(orderTypeIdentifier)")
    }
    guard let block = PEMBlock.split(intermediatePEM).first(where: { $0.label == "CERTIFICATE" }),
      let intermediate = try? Certificate(pemEncoded: block.text)
    else {
      throw Problem(
        key: "intermediateCertificate",
        message: "is not a PEM X.509 certificate (-----BEGIN CERTIFICATE-----): use Apple's WWDR intermediate")
    }
    guard intermediate.subject == leaf.issuer, intermediate.publicKey.isValidSignature(leaf.signature, for: leaf) else {
      throw Problem(
        key: "intermediateCertificate",
        message: "did not issue the certificate (its issuer is \(leaf.issuer)); use the WWDR intermediate that did")
    }
    return WalletOrderSigner(
      orderTypeIdentifier: orderTypeIdentifier, certificate: leaf, intermediate: intermediate,
      privateKey: pair.privateKey,
      notValidBefore: Int64(leaf.notValidBefore.timeIntervalSince1970.rounded(.down)),
      notValidAfter: Int64(leaf.notValidAfter.timeIntervalSince1970.rounded(.down)))
  }

  /// Where `now` (unix seconds) falls in the certificate's validity, as for a merchant identity.
  public func validity(at now: Int64) -> MerchantIdentity.Validity {
    if now < notValidBefore { return .notYetValid(until: RFC3339.format(notValidBefore)) }
    if now > notValidAfter { return .expired(since: RFC3339.format(notValidAfter)) }
    let left = notValidAfter - now
    if left < Int64(MerchantIdentity.expiryWarningDays) * 86_400 { return .expiresSoon(days: Int(left / 86_400)) }
    return .valid
  }

  /// A detached CMS signature (DER) of `manifest`, with the certificate and the intermediate and a
  /// signing time of `signedAt` (unix seconds), by swift-certificates. An RSA key signs with
  /// PKCS#1 v1.5, which is deterministic: the same manifest and time give the same bytes.
  public func sign(manifest: [UInt8], signedAt: Int64) throws -> [UInt8] {
    try CMS.sign(
      manifest, additionalIntermediateCertificates: [intermediate], certificate: certificate, privateKey: privateKey,
      signingTime: Date(timeIntervalSince1970: TimeInterval(signedAt)), detached: true)
  }
}
