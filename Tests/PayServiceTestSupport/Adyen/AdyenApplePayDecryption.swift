import Crypto
import Foundation

/// The merchant side of an Apple Pay payment token, as Adyen decrypts one with the merchant's
/// payment processing key ("Payment token format reference",
/// https://developer.apple.com/documentation/passkit/payment-token-format-reference; Adyen's
/// "Decrypt Apple Pay tokens",
/// https://docs.adyen.com/payment-methods/apple-pay/api-only/apple-pay-token-decryption).
///
/// `applePayToken` is the base64 of the token's `paymentData` JSON text. An `EC_v1` token is
/// decrypted so:
/// 1. `header.publicKeyHash` must be the base64 SHA-256 of the merchant key's public key
///    (X.509 SubjectPublicKeyInfo, DER); otherwise the key is not this merchant's.
/// 2. Z = ECDH(merchant private key, `header.ephemeralPublicKey`), the ephemeral key being a
///    base64 DER SubjectPublicKeyInfo on P-256.
/// 3. The key is NIST SP 800-56A's single-step KDF with SHA-256, one round:
///    SHA-256(00000001 ‖ Z ‖ 0x0D ‖ "id-aes256-GCM" ‖ "Apple" ‖ SHA-256(merchant identifier)).
/// 4. `data` (base64) is the ciphertext followed by the 16-byte tag, opened with AES-256-GCM and a
///    16-byte zero nonce.
/// The signature is not verified here: Adyen checks it against Apple's root, which a test token
/// (signed by a throwaway CA) does not chain to.
struct AdyenApplePayDecryption: Sendable {
  let merchantIdentifier: String
  let privateKey: P256.KeyAgreement.PrivateKey

  /// Why a token was refused, as Adyen's "Handle Apple Pay errors" names it
  /// (https://docs.adyen.com/payment-methods/apple-pay/handle-apple-pay-errors).
  enum Failure: Error, Equatable {
    /// 5_002 "Invalid Apple Pay token": not base64 of a JSON `EC_v1` paymentData, or its data does
    /// not decrypt to a payment.
    case invalidToken
    /// 5_004 "Could not find Merchant Private Key": encrypted for another key.
    case unknownMerchantKey
  }

  /// What the token's decrypted payment data holds that the payment needs.
  struct Payment: Equatable {
    var card: AdyenTestCard
    /// ISO 4217 numeric code (`currencyCode`).
    var currencyCode: String
    /// In the currency's ISO 4217 minor units (`transactionAmount`).
    var transactionAmount: Int64
  }

  func decrypt(applePayToken: String) -> Result<Payment, Failure> {
    guard let tokenData = Data(base64Encoded: applePayToken),
      let paymentData = try? AdyenJSON.parse(String(decoding: tokenData, as: UTF8.self)),
      paymentData["version"]?.string == "EC_v1",
      let data = paymentData["data"]?.string.flatMap({ Data(base64Encoded: $0) }), data.count > 16,
      paymentData["signature"]?.string?.isEmpty == false,
      let header = paymentData["header"],
      let ephemeralText = header["ephemeralPublicKey"]?.string, let ephemeralDER = Data(base64Encoded: ephemeralText),
      let keyHash = header["publicKeyHash"]?.string, header["transactionId"]?.string?.isEmpty == false
    else { return .failure(.invalidToken) }
    let merchantSPKI = privateKey.publicKey.derRepresentation
    guard keyHash == Data(SHA256.hash(data: merchantSPKI)).base64EncodedString() else {
      return .failure(.unknownMerchantKey)
    }
    guard let ephemeral = try? P256.KeyAgreement.PublicKey(derRepresentation: ephemeralDER),
      let shared = try? privateKey.sharedSecretFromKeyAgreement(with: ephemeral)
    else { return .failure(.invalidToken) }
    var kdfInput: [UInt8] = [0, 0, 0, 1]
    shared.withUnsafeBytes { kdfInput += $0 }
    kdfInput += [0x0D] + Array("id-aes256-GCM".utf8) + Array("Apple".utf8)
    kdfInput += Array(SHA256.hash(data: Array(merchantIdentifier.utf8)))
    let key = SymmetricKey(data: SHA256.hash(data: kdfInput))
    guard let nonce = try? AES.GCM.Nonce(data: [UInt8](repeating: 0, count: 16)),
      let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: data.dropLast(16), tag: data.suffix(16)),
      let plaintext = try? AES.GCM.open(box, using: key),
      let payment = try? AdyenJSON.parse(String(decoding: plaintext, as: UTF8.self)),
      let number = payment["applicationPrimaryAccountNumber"]?.string,
      let expiration = payment["applicationExpirationDate"]?.string,
      let currencyCode = payment["currencyCode"]?.string,
      let amount = payment["transactionAmount"]?.int64
    else { return .failure(.invalidToken) }
    return .success(
      Payment(
        card: AdyenTestCard(number: number, expiration: expiration), currencyCode: currencyCode,
        transactionAmount: amount))
  }
}

/// Currencies as the server needs them: ISO 4217's numeric code and minor units (an Apple Pay
/// token's `currencyCode` and `transactionAmount` use them), and Adyen's own minor units for its
/// `amount.value`, which differ from ISO 4217 for CLP, CVE, IDR and ISK ("Currency codes and minor
/// units", https://docs.adyen.com/development-resources/currency-codes).
enum AdyenCurrency {
  /// Alphabetic code → (numeric code, ISO 4217 minor units).
  static let iso: [String: (numeric: String, digits: Int)] = [
    "AED": ("784", 2), "AUD": ("036", 2), "BGN": ("975", 2), "BHD": ("048", 3), "BRL": ("986", 2),
    "CAD": ("124", 2), "CHF": ("756", 2), "CLP": ("152", 0), "CNY": ("156", 2), "CVE": ("132", 2),
    "CZK": ("203", 2), "DKK": ("208", 2), "EUR": ("978", 2), "GBP": ("826", 2), "HKD": ("344", 2),
    "HUF": ("348", 2), "IDR": ("360", 2), "ILS": ("376", 2), "INR": ("356", 2), "ISK": ("352", 0),
    "JOD": ("400", 3), "JPY": ("392", 0), "KRW": ("410", 0), "KWD": ("414", 3), "MXN": ("484", 2),
    "MYR": ("458", 2), "NOK": ("578", 2), "NZD": ("554", 2), "OMR": ("512", 3), "PHP": ("608", 2),
    "PLN": ("985", 2), "RON": ("946", 2), "SAR": ("682", 2), "SEK": ("752", 2), "SGD": ("702", 2),
    "THB": ("764", 2), "TND": ("788", 3), "TRY": ("949", 2), "TWD": ("901", 2), "USD": ("840", 2),
    "VND": ("704", 0), "ZAR": ("710", 2),
  ]

  /// Adyen's minor units where they differ from ISO 4217's.
  static let adyenDigits: [String: Int] = ["CLP": 2, "CVE": 0, "IDR": 0, "ISK": 2]

  /// Whether an Apple Pay token's amount (ISO numeric `currencyCode`, ISO minor units) is the
  /// request's amount (alphabetic currency, Adyen minor units): Adyen's 5_001 check. A currency
  /// missing from the table above never matches.
  static func tokenMatches(currencyCode: String, transactionAmount: Int64, currency: String, value: Int64) -> Bool {
    guard let (numeric, isoDigits) = iso[currency], numeric == currencyCode else { return false }
    let shift = (adyenDigits[currency] ?? isoDigits) - isoDigits
    var tokenValue = transactionAmount
    for _ in 0..<max(shift, 0) { tokenValue *= 10 }
    var requestValue = value
    for _ in 0..<max(-shift, 0) { requestValue *= 10 }
    return tokenValue == requestValue
  }
}
