import Crypto
import Foundation
import SwiftASN1
import X509

/// Why an Apple Pay token was refused: the check that failed and a message that says so. The
/// message never contains card data.
public struct ApplePayTokenFailure: Error, Equatable, Sendable {
  /// The checks, in the order they run (protocol.md, "Apple Pay tokens").
  public enum Check: String, Sendable, CaseIterable {
    case notConfigured, version, format, signatureFormat, certificates, chain, signature, messageDigest, signingTime
    case publicKeyHash, decryption, paymentData, currency, amount, applicationData, replay
  }

  public var check: Check
  public var message: String

  public init(_ check: Check, _ message: String) {
    self.check = check
    self.message = message
  }
}

/// What an EC_v1 token holds once verified and decrypted. It lives only in memory, for the
/// duration of one authorizePayment call: nothing here but `lastFour` and `transactionId` is ever
/// stored, logged or answered.
struct DecryptedPayment {
  /// Apple's `header.transactionId` (lower-case hex): what makes a token single-use.
  var transactionId: String
  /// The device account number (or PAN).
  var accountNumber: String
  /// `applicationExpirationDate`: YYMMDD.
  var expiration: (year: Int, month: Int, day: Int)
  var transactionAmount: Int64
  /// ISO 4217 numeric code, three digits.
  var currencyCode: String
  var paymentDataType: String
  var onlinePaymentCryptogram: String?
  var eciIndicator: String?
  /// The merchant token (MPAN) a recurring, deferred or automatic reload request brought, and the
  /// card Apple describes for it (`merchantTokenMetadata`); nil for a device token.
  var merchantTokenIdentifier: String?
  var merchantTokenCard: MerchantTokenCard?

  var lastFour: String { String(accountNumber.suffix(4)) }
}

/// Verifies and decrypts an Apple Pay EC_v1 payment token for one merchant, following Apple's
/// "Payment token format reference": the detached CMS signature and its certificate chain, the
/// signing time, the merchant certificate the token was encrypted for, then ECDH + the NIST
/// SP 800-56A concatenation KDF + AES-256-GCM, and finally the decrypted amount and currency
/// against the order.
struct ApplePayTokenVerifier {
  let merchant: ApplePayMerchant

  /// Apple's marker extensions of the leaf (token signing) and intermediate (Apple Application
  /// Integration CA) certificates.
  static let leafMarker: ASN1ObjectIdentifier = "1.2.840.113635.100.6.29"
  static let intermediateMarker: ASN1ObjectIdentifier = "1.2.840.113635.100.6.2.14"

  /// The EC_v1 token's parts, decoded.
  private struct Token {
    var data: [UInt8]
    var signature: [UInt8]
    var ephemeralPublicKey: [UInt8]
    var publicKeyHash: [UInt8]
    var transactionId: [UInt8]
    var applicationDataHash: [UInt8]?
  }

  /// Checks `paymentData` against the order (`totalMinor` in `currency`) at `now`; `applicationData`
  /// is what the request says the payment request carried. Returns the decrypted payment, or throws
  /// the first check that failed.
  func verify(
    _ paymentData: JSONObject, now: Int64, totalMinor: Int64, currency: Currency, applicationData: [UInt8]?
  ) throws(ApplePayTokenFailure) -> DecryptedPayment {
    let token = try Self.read(paymentData)

    // 1. The signature: a CMS SignedData from Apple's token signing certificate.
    let cms: CMSSignedData
    do {
      cms = try CMSSignedData(berEncoded: token.signature)
    } catch {
      throw ApplePayTokenFailure(.signatureFormat, "the signature is not a detached CMS SignedData: \(error.message)")
    }
    let leaf = try Self.certificate(in: cms, marked: Self.leafMarker, role: "leaf")
    let intermediate = try Self.certificate(in: cms, marked: Self.intermediateMarker, role: "intermediate")
    guard leaf.issuer == cms.signerIssuer, leaf.serialNumber == cms.signerSerialNumber else {
      throw ApplePayTokenFailure(.certificates, "the signer is not the leaf certificate (issuer and serial number differ)")
    }
    try checkChain(leaf: leaf, intermediate: intermediate, at: cms.signingTime)
    guard let leafKey = P256.Signing.PublicKey(leaf.publicKey),
      let signature = try? P256.Signing.ECDSASignature(derRepresentation: cms.signature),
      leafKey.isValidSignature(signature, for: SHA256.hash(data: cms.signedAttributesDER))
    else {
      throw ApplePayTokenFailure(
        .signature, "the signature does not verify with the leaf certificate's key (signature or signed attributes altered)")
    }
    var signedContent = token.ephemeralPublicKey + token.data + token.transactionId
    if let hash = token.applicationDataHash { signedContent += hash }
    guard Array(SHA256.hash(data: signedContent)) == cms.messageDigest else {
      throw ApplePayTokenFailure(
        .messageDigest,
        """
        the signed message digest does not match the token: data, header.ephemeralPublicKey, \
        header.transactionId or header.applicationData was altered
        """)
    }
    let age = now - cms.signingTime
    guard abs(age) <= Int64(merchant.maxTokenAgeSeconds) else {
      throw ApplePayTokenFailure(
        .signingTime,
        """
        the token was signed at \(RFC3339.format(cms.signingTime)), \(abs(age)) seconds \(age > 0 ? "before" : "after") \
        the service clock \(RFC3339.format(now)); applePay.maxTokenAgeSeconds allows \(merchant.maxTokenAgeSeconds)
        """)
    }

    // 2. Encrypted for this merchant's certificate: derive the key and decrypt.
    guard token.publicKeyHash == merchant.publicKeyHash else {
      throw ApplePayTokenFailure(
        .publicKeyHash,
        "the token was encrypted for another merchant certificate: header.publicKeyHash does not match applePay.merchantCertificate")
    }
    var plaintext = try decrypt(token)
    defer { plaintext.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
    let payment = try Self.payment(plaintext, transactionId: Hex.encode(token.transactionId))

    // 3. For this order.
    let numeric = currency.numericCode
    guard payment.currencyCode == numeric else {
      throw ApplePayTokenFailure(
        .currency,
        "the token's currencyCode \(payment.currencyCode) is not the merchant currency \(currency.code) (\(numeric ?? "no numeric code"))")
    }
    guard payment.transactionAmount == totalMinor else {
      throw ApplePayTokenFailure(
        .amount,
        """
        the token's transactionAmount \(payment.transactionAmount) is not the order total \
        \(MoneyText.format(totalMinor, digits: currency.minorDigits)) \(currency.code) (\(totalMinor) minor units)
        """)
    }
    if let applicationData {
      guard let hash = token.applicationDataHash else {
        throw ApplePayTokenFailure(
          .applicationData, "the request carries applicationData but the token's header has no applicationData hash")
      }
      guard Array(SHA256.hash(data: applicationData)) == hash else {
        throw ApplePayTokenFailure(
          .applicationData, "applicationData does not match the token: its SHA-256 is not header.applicationData")
      }
    }
    return payment
  }

  /// The token's members, decoded; any missing or undecodable one is a `format` failure (a version
  /// other than EC_v1 is a `version` failure).
  private static func read(_ paymentData: JSONObject) throws(ApplePayTokenFailure) -> Token {
    try requireVersion(paymentData)
    func malformed(_ path: String, _ expected: String) -> ApplePayTokenFailure {
      ApplePayTokenFailure(.format, "the payment data is malformed: \(path) must be \(expected)")
    }
    func base64(_ value: JSONValue?, _ path: String) throws(ApplePayTokenFailure) -> [UInt8] {
      guard case .string(let text)? = value, let data = Data(base64Encoded: text), !data.isEmpty else {
        throw malformed(path, "non-empty base64 text")
      }
      return Array(data)
    }
    func hex(_ value: JSONValue?, _ path: String) throws(ApplePayTokenFailure) -> [UInt8] {
      guard case .string(let text)? = value, let bytes = Hex.decode(text), !bytes.isEmpty else {
        throw malformed(path, "hexadecimal text")
      }
      return bytes
    }
    let data = try base64(paymentData["data"], "data")
    guard data.count > 16 else { throw malformed("data", "ciphertext followed by a 16-byte tag") }
    let signature = try base64(paymentData["signature"], "signature")
    guard case .object(let header)? = paymentData["header"] else { throw malformed("header", "an object") }
    let ephemeralPublicKey = try base64(header["ephemeralPublicKey"], "header.ephemeralPublicKey")
    let publicKeyHash = try base64(header["publicKeyHash"], "header.publicKeyHash")
    guard publicKeyHash.count == 32 else { throw malformed("header.publicKeyHash", "a base64 SHA-256 hash (32 bytes)") }
    let transactionId = try hex(header["transactionId"], "header.transactionId")
    var applicationDataHash: [UInt8]?
    if let value = header["applicationData"], value != .null {
      applicationDataHash = try hex(value, "header.applicationData")
    }
    return Token(
      data: data, signature: signature, ephemeralPublicKey: ephemeralPublicKey, publicKeyHash: publicKeyHash,
      transactionId: transactionId, applicationDataHash: applicationDataHash)
  }

  /// The first check, which needs no credentials: the token's version must be EC_v1.
  static func requireVersion(_ paymentData: JSONObject) throws(ApplePayTokenFailure) {
    switch paymentData["version"] {
    case .string("EC_v1")?: return
    case .string("RSA_v1")?:
      throw ApplePayTokenFailure(.version, "RSA_v1 payment tokens are not supported: payservice decrypts EC_v1 tokens only")
    case .string(let other)?:
      throw ApplePayTokenFailure(.version, "payment data version \"\(other)\" is not supported: payservice decrypts EC_v1 tokens only")
    default:
      throw ApplePayTokenFailure(.version, "the payment data has no version string; payservice decrypts EC_v1 tokens")
    }
  }

  /// The one certificate carrying Apple's marker extension for `role`.
  private static func certificate(
    in cms: CMSSignedData, marked marker: ASN1ObjectIdentifier, role: String
  ) throws(ApplePayTokenFailure) -> Certificate {
    let marked = cms.certificates.filter { $0.extensions[oid: marker] != nil }
    guard marked.count == 1, let certificate = marked.first else {
      throw ApplePayTokenFailure(
        .certificates,
        "the signature carries \(marked.count) certificates with Apple's \(role) marker extension \(marker); expected exactly one")
    }
    return certificate
  }

  /// leaf ← intermediate ← configured root, each signature checked and each certificate valid at
  /// the signing time (the leaf of a token signed years ago has long expired since).
  private func checkChain(leaf: Certificate, intermediate: Certificate, at signingTime: Int64)
    throws(ApplePayTokenFailure)
  {
    let root = merchant.rootCertificate
    let rootName =
      ApplePayMerchant.subjectAttribute(.RDNAttributeType.commonName, of: root) ?? "the root certificate"
    guard intermediate.issuer == root.subject, root.publicKey.isValidSignature(intermediate.signature, for: intermediate)
    else {
      throw ApplePayTokenFailure(
        .chain, "the certificate chain does not end at \(rootName): the intermediate certificate is not signed by it")
    }
    guard case .isCertificateAuthority? = try? intermediate.extensions.basicConstraints else {
      throw ApplePayTokenFailure(.chain, "the intermediate certificate is not a certificate authority")
    }
    guard leaf.issuer == intermediate.subject, intermediate.publicKey.isValidSignature(leaf.signature, for: leaf) else {
      throw ApplePayTokenFailure(.chain, "the leaf certificate is not signed by the intermediate certificate")
    }
    let at = Date(timeIntervalSince1970: TimeInterval(signingTime))
    for (certificate, role) in [(leaf, "leaf"), (intermediate, "intermediate"), (root, "root")] {
      guard certificate.notValidBefore <= at, at <= certificate.notValidAfter else {
        let from = RFC3339.format(Int64(certificate.notValidBefore.timeIntervalSince1970))
        let to = RFC3339.format(Int64(certificate.notValidAfter.timeIntervalSince1970))
        throw ApplePayTokenFailure(
          .chain,
          "the \(role) certificate was not valid at the signing time \(RFC3339.format(signingTime)) (valid \(from) to \(to))")
      }
    }
  }

  /// ECDH with the ephemeral key, the concatenation KDF (SHA-256; "id-aes256-GCM", "Apple", SHA-256
  /// of the merchant identifier), and AES-256-GCM with a 16-byte zero IV.
  private func decrypt(_ token: Token) throws(ApplePayTokenFailure) -> [UInt8] {
    guard let ephemeral = try? P256.KeyAgreement.PublicKey(derRepresentation: token.ephemeralPublicKey) else {
      throw ApplePayTokenFailure(.format, "the payment data is malformed: header.ephemeralPublicKey is not a P-256 public key")
    }
    let failure = ApplePayTokenFailure(
      .decryption,
      "the payment data does not decrypt with applePay.merchantPrivateKey (authentication failed: wrong key or altered data)")
    guard let shared = try? merchant.privateKey.sharedSecretFromKeyAgreement(with: ephemeral) else { throw failure }
    var kdfInput: [UInt8] = [0, 0, 0, 1]
    shared.withUnsafeBytes { kdfInput += $0 }
    kdfInput += [0x0D] + Array("id-aes256-GCM".utf8) + Array("Apple".utf8) + merchant.merchantIdentifierHash
    let key = SymmetricKey(data: SHA256.hash(data: kdfInput))
    kdfInput.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
    do {
      let box = try AES.GCM.SealedBox(
        nonce: AES.GCM.Nonce(data: [UInt8](repeating: 0, count: 16)), ciphertext: token.data.dropLast(16),
        tag: token.data.suffix(16))
      var opened = try AES.GCM.open(box, using: key)
      defer { opened.resetBytes(in: 0..<opened.count) }  // the caller zeroes its copy too
      return Array(opened)
    } catch {
      throw failure
    }
  }

  /// The decrypted JSON's fields. Messages name the field, never its value.
  private static func payment(_ plaintext: [UInt8], transactionId: String) throws(ApplePayTokenFailure) -> DecryptedPayment {
    func invalid(_ field: String, _ expected: String) -> ApplePayTokenFailure {
      ApplePayTokenFailure(.paymentData, "the decrypted payment data is invalid: \(field) must be \(expected)")
    }
    guard case .object(let object)? = try? JSONParser.parse(plaintext) else {
      throw ApplePayTokenFailure(.paymentData, "the decrypted payment data is not a JSON object")
    }
    func digits(_ text: String) -> Bool { !text.isEmpty && text.utf8.allSatisfy { (0x30...0x39).contains($0) } }
    guard case .string(let account)? = object["applicationPrimaryAccountNumber"], digits(account),
      (12...19).contains(account.utf8.count)
    else { throw invalid("applicationPrimaryAccountNumber", "12 to 19 digits") }
    guard case .string(let expiry)? = object["applicationExpirationDate"], digits(expiry), expiry.utf8.count == 6,
      let number = Int(expiry), (1...12).contains(number / 100 % 100), (1...31).contains(number % 100)
    else { throw invalid("applicationExpirationDate", "a YYMMDD date") }
    guard case .string(let currencyCode)? = object["currencyCode"], digits(currencyCode), currencyCode.utf8.count == 3
    else { throw invalid("currencyCode", "an ISO 4217 numeric code (3 digits)") }
    guard case .number(let amountText)? = object["transactionAmount"], digits(amountText), amountText.utf8.count <= 15,
      let amount = Int64(amountText)
    else { throw invalid("transactionAmount", "a whole number of minor units") }
    guard case .string(let dataType)? = object["paymentDataType"], dataType == "3DSecure" || dataType == "EMV" else {
      throw invalid("paymentDataType", "3DSecure or EMV")
    }
    guard case .object(let details)? = object["paymentData"] else { throw invalid("paymentData", "an object") }
    var cryptogram: String?
    var eci: String?
    if dataType == "3DSecure" {
      guard case .string(let text)? = details["onlinePaymentCryptogram"], !text.isEmpty else {
        throw invalid("paymentData.onlinePaymentCryptogram", "a non-empty string for 3DSecure payments")
      }
      cryptogram = text
      if case .string(let text)? = details["eciIndicator"] { eci = text }
    } else {
      // China UnionPay: the chip's EMV data (and, when the issuer asks for one, the encrypted PIN
      // block) go to the processor as they are; payservice only checks they are there.
      guard case .string(let text)? = details["emvData"], !text.isEmpty else {
        throw invalid("paymentData.emvData", "a non-empty string for EMV payments")
      }
      switch details["encryptedPINData"] {
      case nil, .string?: break
      default: throw invalid("paymentData.encryptedPINData", "a string when present")
      }
    }
    var merchantToken: String?
    switch object["merchantTokenIdentifier"] {
    case nil, .null?: break
    case .string(let text)? where MerchantTokenEventId.isValid(text): merchantToken = text
    default: throw invalid("merchantTokenIdentifier", "1 to 128 letters, digits, - and _ when present")
    }
    return DecryptedPayment(
      transactionId: transactionId, accountNumber: account,
      expiration: (2000 + number / 10_000, number / 100 % 100, number % 100), transactionAmount: amount,
      currencyCode: currencyCode, paymentDataType: dataType, onlinePaymentCryptogram: cryptogram, eciIndicator: eci,
      merchantTokenIdentifier: merchantToken,
      merchantTokenCard: merchantToken == nil ? nil : MerchantTokenCard.read(object["merchantTokenMetadata"]))
  }
}
