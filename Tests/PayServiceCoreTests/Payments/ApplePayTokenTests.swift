import Crypto
import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing
import X509

/// The EC_v1 token checks, one by one, against the real Apple-signed vector.
@Suite("Apple Pay EC_v1 tokens")
struct ApplePayTokenTests {
  static func merchant(_ config: Config? = nil) throws -> ApplePayMerchant {
    try #require(try (config ?? ApplePayVector.config()).applePay)
  }

  static func verify(
    _ token: JSONObject, merchant: ApplePayMerchant? = nil, now: Int64 = ApplePayVector.now, totalMinor: Int64 = 100,
    currency: String = "USD", applicationData: [UInt8]? = nil
  ) throws -> Result<DecryptedPayment, ApplePayTokenFailure> {
    let verifier = ApplePayTokenVerifier(merchant: try merchant ?? Self.merchant())
    do throws(ApplePayTokenFailure) {
      return .success(
        try verifier.verify(
          token, now: now, totalMinor: totalMinor, currency: Currency(code: currency)!, applicationData: applicationData))
    } catch {
      return .failure(error)
    }
  }

  /// The failure `verify` must give.
  static func failure(_ result: Result<DecryptedPayment, ApplePayTokenFailure>) -> ApplePayTokenFailure? {
    if case .failure(let failure) = result { return failure }
    return nil
  }

  /// `member` of the token, base64-decoded, changed by `body`, and encoded again.
  static func tampered(_ member: String, _ body: (inout [UInt8]) -> Void) -> JSONObject {
    ApplePayVector.token { object in
      guard case .string(let text)? = object[member], var bytes = Data(base64Encoded: text).map(Array.init) else {
        fatalError("\(member) is not base64")
      }
      body(&bytes)
      object.members = object.members.map { $0.key == member ? ($0.key, .string(Data(bytes).base64EncodedString())) : $0 }
    }
  }

  static func header(_ body: (inout JSONObject) -> Void) -> JSONObject {
    ApplePayVector.token { object in
      guard case .object(var header)? = object["header"] else { fatalError("no header") }
      body(&header)
      object.members = object.members.map { $0.key == "header" ? ($0.key, .object(header)) : $0 }
    }
  }

  @Test("the vector verifies and decrypts to what Apple encrypted")
  func vectorDecrypts() throws {
    let payment = try Self.verify(ApplePayVector.tokenObject).get()
    #expect(payment.accountNumber == ApplePayVector.accountNumber)
    #expect(payment.lastFour == "4320")
    #expect(payment.expiration == (2020, 7, 31))
    #expect(payment.transactionAmount == 100)
    #expect(payment.currencyCode == "840")
    #expect(payment.paymentDataType == "3DSecure")
    #expect(payment.onlinePaymentCryptogram == ApplePayVector.cryptogram)
    #expect(payment.eciIndicator == "5")
    #expect(payment.transactionId == ApplePayVector.transactionId)
  }

  @Test("the signing time may be up to maxTokenAgeSeconds either side of the service clock")
  func signingTimeWindow() throws {
    let signed = ApplePayVector.signingTime
    for now in [signed - 300, signed, signed + 300] {
      #expect(throws: Never.self) { try Self.verify(ApplePayVector.tokenObject, now: now).get() }
    }
    let late = Self.failure(try Self.verify(ApplePayVector.tokenObject, now: signed + 301))
    #expect(
      late
        == ApplePayTokenFailure(
          .signingTime,
          "the token was signed at 2014-10-27T19:51:43Z, 301 seconds before the service clock 2014-10-27T19:56:44Z; applePay.maxTokenAgeSeconds allows 300"
        ))
    let early = Self.failure(try Self.verify(ApplePayVector.tokenObject, now: signed - 301))
    #expect(
      early
        == ApplePayTokenFailure(
          .signingTime,
          "the token was signed at 2014-10-27T19:51:43Z, 301 seconds after the service clock 2014-10-27T19:46:42Z; applePay.maxTokenAgeSeconds allows 300"
        ))
    // Today's clock: the token is years old.
    let today = Self.failure(try Self.verify(ApplePayVector.tokenObject, now: TestConfig.now))
    #expect(today?.check == .signingTime)
  }

  @Test("tampered data fails the message digest")
  func tamperedData() throws {
    let token = Self.tampered("data") { $0[10] ^= 0x01 }
    #expect(
      Self.failure(try Self.verify(token))
        == ApplePayTokenFailure(
          .messageDigest,
          "the signed message digest does not match the token: data, header.ephemeralPublicKey, header.transactionId or header.applicationData was altered"
        ))
  }

  @Test("a tampered header (transaction id, ephemeral key) fails the message digest")
  func tamperedHeader() throws {
    let transaction = Self.header { header in
      header.members = header.members.map {
        $0.key == "transactionId" ? ($0.key, .string("3" + ApplePayVector.transactionId.dropFirst())) : $0
      }
    }
    #expect(Self.failure(try Self.verify(transaction))?.check == .messageDigest)
    let withApplicationData = Self.header { $0.members.append(("applicationData", .string(String(repeating: "ab", count: 32)))) }
    #expect(Self.failure(try Self.verify(withApplicationData))?.check == .messageDigest)
  }

  @Test("a tampered signature value does not verify")
  func tamperedSignature() throws {
    // The signer's ECDSA signature is the last SEQUENCE { INTEGER r, INTEGER s } in the structure.
    let token = Self.tampered("signature") { bytes in
      let marker: [UInt8] = [0x30, 0x45, 0x02, 0x21]
      let start = (0...(bytes.count - marker.count)).last { Array(bytes[$0..<($0 + marker.count)]) == marker }!
      bytes[start + 10] ^= 0x01
    }
    #expect(
      Self.failure(try Self.verify(token))
        == ApplePayTokenFailure(
          .signature,
          "the signature does not verify with the leaf certificate's key (signature or signed attributes altered)"))
  }

  @Test("a tampered signing time (a signed attribute) does not verify")
  func tamperedSigningTime() throws {
    // UTCTime 141027195143Z → 141027195243Z: the signed attributes no longer match the signature.
    let token = Self.tampered("signature") { bytes in
      let time = Array("141027195143Z".utf8)
      let start = (0...(bytes.count - time.count)).first { Array(bytes[$0..<($0 + time.count)]) == time }!
      bytes[start + 9] = UInt8(ascii: "2")
    }
    #expect(Self.failure(try Self.verify(token))?.check == .signature)
  }

  @Test("a signature that is not CMS is refused")
  func notCMS() throws {
    let token = ApplePayVector.token { object in
      object.members = object.members.map { $0.key == "signature" ? ($0.key, .string("aGVsbG8=")) : $0 }
    }
    #expect(
      Self.failure(try Self.verify(token))
        == ApplePayTokenFailure(.signatureFormat, "the signature is not a detached CMS SignedData: it is not BER-encoded ASN.1"))
  }

  @Test("wrong merchant certificate and key: the token was encrypted for another")
  func wrongMerchantCertificate() throws {
    let other = ApplePayVector.otherMerchantDirectory
    let config = try ApplePayVector.config(
      applePay: """
          merchantCertificate: \(other)/merchant_certificate.pem
          merchantPrivateKey: \(other)/merchant_private_key.pem
        """)
    #expect(
      Self.failure(try Self.verify(ApplePayVector.tokenObject, merchant: try Self.merchant(config)))
        == ApplePayTokenFailure(
          .publicKeyHash,
          "the token was encrypted for another merchant certificate: header.publicKeyHash does not match applePay.merchantCertificate"
        ))
  }

  @Test("wrong merchant private key for the right certificate: decryption fails")
  func wrongMerchantKey() throws {
    // Start-up refuses a key that does not match the certificate; built directly to reach decryption.
    let right = try Self.merchant()
    let otherKey = try P256.KeyAgreement.PrivateKey(
      pemRepresentation: String(contentsOfFile: "\(ApplePayVector.otherMerchantDirectory)/merchant_private_key.pem", encoding: .utf8))
    let wrong = ApplePayMerchant(
      certificate: right.certificate, privateKey: otherKey, rootCertificate: right.rootCertificate,
      maxTokenAgeSeconds: 300, merchantIdentifierHash: right.merchantIdentifierHash, publicKeyHash: right.publicKeyHash)
    #expect(
      Self.failure(try Self.verify(ApplePayVector.tokenObject, merchant: wrong))
        == ApplePayTokenFailure(
          .decryption,
          "the payment data does not decrypt with applePay.merchantPrivateKey (authentication failed: wrong key or altered data)"
        ))
  }

  @Test("wrong amount and wrong currency")
  func amountAndCurrency() throws {
    #expect(
      Self.failure(try Self.verify(ApplePayVector.tokenObject, totalMinor: 200))
        == ApplePayTokenFailure(.amount, "the token's transactionAmount 100 is not the order total 2.00 USD (200 minor units)"))
    #expect(
      Self.failure(try Self.verify(ApplePayVector.tokenObject, totalMinor: 100, currency: "EUR"))
        == ApplePayTokenFailure(.currency, "the token's currencyCode 840 is not the merchant currency EUR (978)"))
    #expect(
      Self.failure(try Self.verify(ApplePayVector.tokenObject, totalMinor: 1, currency: "JPY"))
        == ApplePayTokenFailure(.currency, "the token's currencyCode 840 is not the merchant currency JPY (392)"))
  }

  @Test("a chain that does not end at the configured root is refused")
  func otherRoot() throws {
    let config = try ApplePayVector.config(
      applePay: """
          merchantCertificate: merchant_certificate.pem
          merchantPrivateKey: merchant_private_key.pem
          rootCertificate: \(ApplePayVector.otherMerchantDirectory)/merchant_certificate.pem
        """)
    #expect(
      Self.failure(try Self.verify(ApplePayVector.tokenObject, merchant: try Self.merchant(config)))
        == ApplePayTokenFailure(
          .chain,
          "the certificate chain does not end at Test merchant (not Apple-issued): the intermediate certificate is not signed by it"))
  }

  @Test("applicationData the request carries must be hashed in the token's header")
  func applicationData() throws {
    #expect(
      Self.failure(try Self.verify(ApplePayVector.tokenObject, applicationData: Array("order-42".utf8)))
        == ApplePayTokenFailure(
          .applicationData, "the request carries applicationData but the token's header has no applicationData hash"))
  }

  @Test("versions other than EC_v1, and malformed members, are refused with what is wrong")
  func versionsAndFormat() throws {
    func withVersion(_ value: JSONValue?) -> JSONObject {
      ApplePayVector.token { object in
        object.members.removeAll { $0.key == "version" }
        if let value { object.members.append(("version", value)) }
      }
    }
    #expect(
      Self.failure(try Self.verify(withVersion(.string("RSA_v1"))))
        == ApplePayTokenFailure(.version, "RSA_v1 payment tokens are not supported: payservice decrypts EC_v1 tokens only"))
    #expect(
      Self.failure(try Self.verify(withVersion(.string("EC_v2"))))
        == ApplePayTokenFailure(.version, "payment data version \"EC_v2\" is not supported: payservice decrypts EC_v1 tokens only"))
    #expect(
      Self.failure(try Self.verify(withVersion(nil)))
        == ApplePayTokenFailure(.version, "the payment data has no version string; payservice decrypts EC_v1 tokens"))
    let noTransaction = Self.header { $0.members.removeAll { $0.key == "transactionId" } }
    #expect(
      Self.failure(try Self.verify(noTransaction))
        == ApplePayTokenFailure(.format, "the payment data is malformed: header.transactionId must be hexadecimal text"))
    let shortHash = Self.header { header in
      header.members = header.members.map { $0.key == "publicKeyHash" ? ($0.key, .string("AAAA")) : $0 }
    }
    #expect(
      Self.failure(try Self.verify(shortHash))
        == ApplePayTokenFailure(
          .format, "the payment data is malformed: header.publicKeyHash must be a base64 SHA-256 hash (32 bytes)"))
    let notBase64 = ApplePayVector.token { object in
      object.members = object.members.map { $0.key == "data" ? ($0.key, .string("not base64!")) : $0 }
    }
    #expect(
      Self.failure(try Self.verify(notBase64))
        == ApplePayTokenFailure(.format, "the payment data is malformed: data must be non-empty base64 text"))
  }

  @Test("the shipped Apple Root CA - G3 is Apple's (fingerprint) and the vector's")
  func shippedRoot() throws {
    let shipped = try Certificate(pemEncoded: AppleRootCertificate.g3PEM)
    let vector = try Certificate(
      pemEncoded: String(contentsOfFile: "\(ApplePayVector.directory)/AppleRootCA-G3.pem", encoding: .utf8))
    #expect(shipped == vector)
    let der = try AppleRootCertificate.g3PEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }
      .joined().data(using: .utf8).flatMap { Data(base64Encoded: $0) }
    let fingerprint = Hex.encode(Array(SHA256.hash(data: try #require(der)))).uppercased()
    #expect(fingerprint == "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179")
  }

  @Test("the sandbox network declines an invalid account number and an expired card")
  func sandboxNetwork() throws {
    var payment = try Self.verify(ApplePayVector.tokenObject).get()
    #expect(SandboxNetwork.declineReason(payment, now: ApplePayVector.now) == nil)
    #expect(SandboxNetwork.declineReason(payment, now: RFC3339.parse("2020-07-31T23:59:59Z")!) == nil)
    #expect(SandboxNetwork.declineReason(payment, now: RFC3339.parse("2020-08-01T00:00:00Z")!) == "the card has expired")
    payment.accountNumber = "4109370251004321"
    #expect(SandboxNetwork.declineReason(payment, now: ApplePayVector.now) == "the account number is not valid")
    #expect(SandboxNetwork.passesLuhn("79927398713"))
    #expect(!SandboxNetwork.passesLuhn("79927398710"))
  }

  @Test("every currency has its ISO 4217 numeric code")
  func numericCodes() {
    for code in Currency.allCodes {
      let numeric = Currency(code: code)?.numericCode
      #expect(numeric?.utf8.count == 3 && numeric!.allSatisfy(\.isNumber), "\(code)")
    }
    #expect(Currency(code: "USD")?.numericCode == "840")
    #expect(Currency(code: "EUR")?.numericCode == "978")
    #expect(Currency(code: "KWD")?.numericCode == "414")
  }
}
