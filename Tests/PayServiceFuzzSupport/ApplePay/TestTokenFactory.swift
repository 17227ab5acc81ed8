import Crypto
import Foundation
import PayServiceCore
import SwiftASN1
import X509

/// Makes EC_v1 tokens the way Apple does, but signed by a throwaway certificate authority of its
/// own: for the paths the one real vector cannot reach (applicationData that matches, a card the
/// network declines, certificates outside their validity). Configure payservice with `rootPEM` as
/// `applePay.rootCertificate` and the factory's merchant certificate and key.
public struct TestTokenFactory {
  public let merchantIdentifier: String
  let rootKey = P256.Signing.PrivateKey()
  let intermediateKey = P256.Signing.PrivateKey()
  let leafKey = P256.Signing.PrivateKey()
  let merchantKey = P256.KeyAgreement.PrivateKey()
  let root: Certificate
  let intermediate: Certificate
  let leaf: Certificate
  let merchantCertificate: Certificate

  public static let leafMarker: ASN1ObjectIdentifier = "1.2.840.113635.100.6.29"
  public static let intermediateMarker: ASN1ObjectIdentifier = "1.2.840.113635.100.6.2.14"
  static let merchantIdentifierExtension: ASN1ObjectIdentifier = "1.2.840.113635.100.6.32"

  /// Certificates valid from `validFrom` for `validity` seconds (the leaf's window can be narrowed).
  public init(
    merchantIdentifier: String = "merchant.com.seatgeek.SeatGeek", validFrom: Date = Date(timeIntervalSince1970: 1_400_000_000),
    validity: TimeInterval = 50 * 365 * 86_400, leafValidity: ClosedRange<Date>? = nil
  ) throws {
    self.merchantIdentifier = merchantIdentifier
    let until = validFrom.addingTimeInterval(validity)
    let rootName = try DistinguishedName { CommonName("payservice test root") }
    let intermediateName = try DistinguishedName { CommonName("payservice test intermediate") }
    root = try Certificate(
      version: .v3, serialNumber: .init(1), publicKey: .init(rootKey.publicKey), notValidBefore: validFrom,
      notValidAfter: until, issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) },
      issuerPrivateKey: .init(rootKey))
    intermediate = try Certificate(
      version: .v3, serialNumber: .init(2), publicKey: .init(intermediateKey.publicKey), notValidBefore: validFrom,
      notValidAfter: until, issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions([
        try Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0)).makeCertificateExtension(),
        Certificate.Extension(oid: Self.intermediateMarker, critical: false, value: [0x05, 0x00]),
      ]),
      issuerPrivateKey: .init(rootKey))
    leaf = try Certificate(
      version: .v3, serialNumber: .init(3), publicKey: .init(leafKey.publicKey),
      notValidBefore: leafValidity?.lowerBound ?? validFrom, notValidAfter: leafValidity?.upperBound ?? until,
      issuer: intermediateName, subject: try DistinguishedName { CommonName("payservice test token signer") },
      signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions([
        Certificate.Extension(oid: Self.leafMarker, critical: false, value: [0x05, 0x00])
      ]),
      issuerPrivateKey: .init(intermediateKey))
    let hash = SHA256.hash(data: Array(merchantIdentifier.utf8)).map { String(format: "%02x", $0) }.joined()
    merchantCertificate = try Certificate(
      version: .v3, serialNumber: .init(4),
      publicKey: .init(try P256.Signing.PublicKey(rawRepresentation: merchantKey.publicKey.rawRepresentation)),
      notValidBefore: validFrom, notValidAfter: until, issuer: intermediateName,
      subject: try DistinguishedName { CommonName("Merchant ID: \(merchantIdentifier)") },
      signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions([
        Certificate.Extension(
          oid: Self.merchantIdentifierExtension, critical: false, value: Self.der(0x0C, Array(hash.utf8))[...])
      ]),
      issuerPrivateKey: .init(intermediateKey))
  }

  public var rootPEM: String { get throws { try root.serializeAsPEM().pemString } }
  public var merchantCertificatePEM: String { get throws { try merchantCertificate.serializeAsPEM().pemString } }
  public var merchantPrivateKeyPEM: String { merchantKey.pemRepresentation }

  /// Writes the root, merchant certificate and key into `directory` and returns the `applePay`
  /// section's body naming them.
  public func writeCredentials(to directory: URL, maxTokenAgeSeconds: Int = 300) throws -> String {
    try rootPEM.write(to: directory.appendingPathComponent("root.pem"), atomically: true, encoding: .utf8)
    try merchantCertificatePEM.write(
      to: directory.appendingPathComponent("merchant.pem"), atomically: true, encoding: .utf8)
    try merchantPrivateKeyPEM.write(to: directory.appendingPathComponent("merchant.key"), atomically: true, encoding: .utf8)
    return """
        merchantCertificate: \(directory.path)/merchant.pem
        merchantPrivateKey: \(directory.path)/merchant.key
        rootCertificate: \(directory.path)/root.pem
        maxTokenAgeSeconds: \(maxTokenAgeSeconds)
      """
  }

  /// What the token encrypts; the defaults are the real vector's values.
  public struct Payment {
    public var accountNumber = "4109370251004320"
    public var expiration = "200731"
    public var currencyCode = "840"
    public var transactionAmount = 100
    /// An EMV payment (China UnionPay) rather than a 3-D Secure one.
    public var emv = false
    /// The EMV data and encrypted PIN block an EMV payment carries (test values, never real).
    public static let emvData = "ZmFrZS1lbXYtZGF0YS1mb3ItdGVzdHMtb25seQ=="
    public static let encryptedPINData = "ZmFrZS1waW4tYmxvY2stMDEyMzQ1Njc4OWFi"
    /// A merchant token (MPAN) payment's `merchantTokenIdentifier` and its `merchantTokenMetadata`
    /// (JSON text, written as given); nil: a device token's payment.
    public var merchantTokenIdentifier: String?
    public var merchantTokenMetadata: String?
    public init() {}
  }

  /// An EC_v1 token's paymentData for `payment`, signed at `signingTime`.
  public func token(
    _ payment: Payment = Payment(), signingTime: Int64, applicationData: [UInt8]? = nil,
    transactionId: [UInt8] = (0..<32).map { _ in UInt8.random(in: 0...255) }
  ) throws -> JSONValue {
    let threeDSPart = #""paymentDataType":"3DSecure","paymentData":{"onlinePaymentCryptogram":"Af9x/QwAA/DjmU65oyc1MAABAAA=","eciIndicator":"5"}"#
    let emvPart =
      #""paymentDataType":"EMV","paymentData":{"emvData":"\#(Payment.emvData)","encryptedPINData":"\#(Payment.encryptedPINData)"}"#
    var merchantTokenPart = ""
    if let identifier = payment.merchantTokenIdentifier {
      merchantTokenPart = #","merchantTokenIdentifier":"\#(identifier)""#
      if let metadata = payment.merchantTokenMetadata { merchantTokenPart += #","merchantTokenMetadata":\#(metadata)"# }
    }
    let plaintext = """
      {"applicationPrimaryAccountNumber":"\(payment.accountNumber)","applicationExpirationDate":"\(payment.expiration)",\
      "currencyCode":"\(payment.currencyCode)","transactionAmount":\(payment.transactionAmount),\
      "deviceManufacturerIdentifier":"040010030273",\(payment.emv ? emvPart : threeDSPart)\(merchantTokenPart)}
      """
    return try token(
      plaintext: Array(plaintext.utf8), signingTime: signingTime, applicationData: applicationData,
      transactionId: transactionId)
  }

  /// An EC_v1 token's paymentData whose decrypted payment data is `plaintext`, byte for byte
  /// (JSON or not: the fuzz harness encrypts hostile claims), signed at `signingTime`.
  public func token(
    plaintext: [UInt8], signingTime: Int64, applicationData: [UInt8]? = nil,
    transactionId: [UInt8] = (0..<32).map { _ in UInt8.random(in: 0...255) }
  ) throws -> JSONValue {
    let ephemeral = P256.KeyAgreement.PrivateKey()
    let shared = try ephemeral.sharedSecretFromKeyAgreement(with: merchantKey.publicKey)
    var kdf: [UInt8] = [0, 0, 0, 1]
    shared.withUnsafeBytes { kdf += $0 }
    kdf += [0x0D] + Array("id-aes256-GCM".utf8) + Array("Apple".utf8) + Array(SHA256.hash(data: Array(merchantIdentifier.utf8)))
    let key = SymmetricKey(data: SHA256.hash(data: kdf))
    let sealed = try AES.GCM.seal(
      plaintext, using: key, nonce: try AES.GCM.Nonce(data: [UInt8](repeating: 0, count: 16)))
    let data = Array(sealed.ciphertext) + Array(sealed.tag)
    let ephemeralDER = Array(ephemeral.publicKey.derRepresentation)
    let applicationDataHash = applicationData.map { Array(SHA256.hash(data: $0)) }
    let content = ephemeralDER + data + transactionId + (applicationDataHash ?? [])
    let signature = try cms(content: content, signingTime: signingTime)
    let merchantSPKI = try P256.Signing.PublicKey(rawRepresentation: merchantKey.publicKey.rawRepresentation).derRepresentation
    var header: [(key: String, value: JSONValue)] = []
    if let applicationDataHash {
      header.append(("applicationData", .string(applicationDataHash.map { String(format: "%02x", $0) }.joined())))
    }
    header += [
      ("ephemeralPublicKey", .string(Data(ephemeralDER).base64EncodedString())),
      ("publicKeyHash", .string(Data(SHA256.hash(data: merchantSPKI)).base64EncodedString())),
      ("transactionId", .string(transactionId.map { String(format: "%02x", $0) }.joined())),
    ]
    return .object(
      JSONObject([
        ("version", .string("EC_v1")), ("data", .string(Data(data).base64EncodedString())),
        ("signature", .string(Data(signature).base64EncodedString())), ("header", .object(JSONObject(header))),
      ]))
  }

  /// A detached CMS SignedData over `content`, DER-encoded, signed by the leaf.
  func cms(content: [UInt8], signingTime: Int64) throws -> [UInt8] {
    func oid(_ text: ASN1ObjectIdentifier) throws -> [UInt8] {
      var serializer = DER.Serializer()
      try serializer.serialize(text)
      return serializer.serializedBytes
    }
    func encoded<T: DERSerializable>(_ value: T) throws -> [UInt8] {
      var serializer = DER.Serializer()
      try serializer.serialize(value)
      return serializer.serializedBytes
    }
    let sha256 = Self.der(0x30, try oid("2.16.840.1.101.3.4.2.1") + [0x05, 0x00])
    let ecdsaSHA256 = Self.der(0x30, try oid("1.2.840.10045.4.3.2"))
    let data = try oid("1.2.840.113549.1.7.1")
    let date = Date(timeIntervalSince1970: TimeInterval(signingTime))
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
    let utc = String(
      format: "%02d%02d%02d%02d%02d%02dZ", parts.year! % 100, parts.month!, parts.day!, parts.hour!, parts.minute!,
      parts.second!)
    let attributes =
      Self.der(0x30, try oid("1.2.840.113549.1.9.3") + Self.der(0x31, data))
      + Self.der(0x30, try oid("1.2.840.113549.1.9.5") + Self.der(0x31, Self.der(0x17, Array(utc.utf8))))
      + Self.der(
        0x30, try oid("1.2.840.113549.1.9.4") + Self.der(0x31, Self.der(0x04, Array(SHA256.hash(data: content)))))
    let signature = try leafKey.signature(for: SHA256.hash(data: Self.der(0x31, attributes))).derRepresentation
    let signer = Self.der(
      0x30,
      Self.der(0x02, [1]) + Self.der(0x30, try encoded(leaf.issuer) + Self.der(0x02, Array(leaf.serialNumber.bytes)))
        + sha256 + Self.der(0xA0, attributes) + ecdsaSHA256 + Self.der(0x04, Array(signature)))
    let signedData = Self.der(
      0x30,
      Self.der(0x02, [1]) + Self.der(0x31, sha256) + Self.der(0x30, data)
        + Self.der(0xA0, try encoded(leaf) + encoded(intermediate)) + Self.der(0x31, signer))
    return Self.der(0x30, try oid("1.2.840.113549.1.7.2") + Self.der(0xA0, signedData))
  }

  /// One DER TLV.
  static func der(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
    var length: [UInt8]
    if content.count < 0x80 {
      length = [UInt8(content.count)]
    } else {
      var bytes: [UInt8] = []
      var count = content.count
      while count > 0 {
        bytes.insert(UInt8(count & 0xFF), at: 0)
        count >>= 8
      }
      length = [0x80 | UInt8(bytes.count)] + bytes
    }
    return [tag] + length + content
  }
}
