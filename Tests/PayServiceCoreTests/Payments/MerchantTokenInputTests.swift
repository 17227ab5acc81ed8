import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// What a merchant token brings in from outside, at its edges: the event id of Apple's notification
/// path, the card Apple describes, and the decrypted payment data that carries both.
@Suite("Merchant token event ids")
struct MerchantTokenEventIdTests {
  @Test("1 to 128 letters, digits, - and _; empty, 129 characters, a slash, dots, percent, a space or a non-ASCII letter are refused")
  func isValid() {
    #expect(!MerchantTokenEventId.isValid(""))
    #expect(MerchantTokenEventId.isValid(String(repeating: "a", count: 127) + "_"))
    #expect(!MerchantTokenEventId.isValid(String(repeating: "a", count: 128) + "-"))
    #expect(MerchantTokenEventId.isValid("Az09-_"))
    #expect(!MerchantTokenEventId.isValid("a/b"))
    #expect(!MerchantTokenEventId.isValid(".."))
    #expect(!MerchantTokenEventId.isValid("%2F"))
    #expect(!MerchantTokenEventId.isValid("a b"))
    #expect(!MerchantTokenEventId.isValid("é"))
    // 128 bytes of a non-ASCII letter are 64 characters: still refused, whatever the count.
    #expect(!MerchantTokenEventId.isValid(String(repeating: "é", count: 64)))
  }
}

@Suite("MerchantTokenCard.read")
struct MerchantTokenCardReadTests {
  static func read(_ json: String) throws -> MerchantTokenCard? { MerchantTokenCard.read(try JSONParser.parse(json)) }

  static let full = MerchantTokenCard(
    cardCountry: "US", expirationDate: "12/29", fpanSuffix: "4321", longDescription: "Visa Signature ending in 4321",
    shortDescription: "Visa 4321")

  @Test("every field of cardMetadata, cardArt ignored")
  func fullCard() throws {
    #expect(
      try Self.read(
        #"{"cardArt":[{"url":"https://example.com/art.png"}],"cardMetadata":{"cardCountry":"US","expirationDate":"12/29","fpanSuffix":"4321","longDescription":"Visa Signature ending in 4321","shortDescription":"Visa 4321"}}"#
      ) == Self.full)
  }

  @Test("a field of 129 characters is dropped, one of 128 kept (characters, not bytes)")
  func length() throws {
    let kept = String(repeating: "L", count: 128)
    #expect(
      try Self.read(#"{"cardMetadata":{"fpanSuffix":"4321","longDescription":"\#(kept)L","shortDescription":"\#(kept)"}}"#)
        == MerchantTokenCard(fpanSuffix: "4321", shortDescription: kept))
    let letters = String(repeating: "é", count: 128)
    #expect(try Self.read(#"{"cardMetadata":{"longDescription":"\#(letters)"}}"#) == MerchantTokenCard(longDescription: letters))
  }

  @Test("a field with a control character or DEL is dropped")
  func controlCharacters() throws {
    #expect(
      try Self.read(
        #"{"cardMetadata":{"cardCountry":"US","shortDescription":"Visa\u0007 4321","longDescription":"Visa\n4321","fpanSuffix":"43\u007f21"}}"#
      ) == MerchantTokenCard(cardCountry: "US"))
  }

  @Test("a field that is not a string, or is empty, is dropped")
  func nonStrings() throws {
    #expect(
      try Self.read(
        #"{"cardMetadata":{"cardCountry":["US"],"expirationDate":1229,"fpanSuffix":null,"longDescription":"","shortDescription":"Visa 4321"}}"#
      ) == MerchantTokenCard(shortDescription: "Visa 4321"))
  }

  @Test("nothing left, no cardMetadata object, or no metadata object: nil")
  func nothing() throws {
    #expect(try Self.read(#"{"cardMetadata":{"fpanSuffix":4321,"cardCountry":"","other":"x"}}"#) == nil)
    #expect(try Self.read(#"{"cardMetadata":{}}"#) == nil)
    #expect(try Self.read(#"{"cardArt":"https://example.com/art.png"}"#) == nil)
    #expect(try Self.read(#"{"cardMetadata":"US 4321"}"#) == nil)
    #expect(try Self.read(#"[{"cardMetadata":{"cardCountry":"US"}}]"#) == nil)
    #expect(MerchantTokenCard.read(nil) == nil)
  }
}

/// The decrypted payment data's `merchantTokenIdentifier` and `merchantTokenMetadata`, through the
/// verifier, with tokens from a test authority.
@Suite("Apple Pay tokens carrying a merchant token")
struct MerchantTokenPaymentDataTests {
  static let invalidIdentifier = ApplePayTokenFailure(
    .paymentData,
    "the decrypted payment data is invalid: merchantTokenIdentifier must be 1 to 128 letters, digits, - and _ when present")

  /// The factory's payment data (the real vector's values) with `members` (JSON text) added.
  static func plaintext(_ members: String) -> [UInt8] {
    Array(
      #"""
      {"applicationPrimaryAccountNumber":"4109370251004320","applicationExpirationDate":"200731","currencyCode":"840","transactionAmount":100,"deviceManufacturerIdentifier":"040010030273","paymentDataType":"3DSecure","paymentData":{"onlinePaymentCryptogram":"Af9x/QwAA/DjmU65oyc1MAABAAA=","eciIndicator":"5"}\#(members)}
      """#.utf8)
  }

  static func verify(_ plaintext: [UInt8]) throws -> Result<DecryptedPayment, ApplePayTokenFailure> {
    let factory = try TestTokenFactory()
    let merchant = try ApplePayMerchant.load(
      certificatePEM: try factory.merchantCertificatePEM, privateKeyPEM: factory.merchantPrivateKeyPEM,
      rootPEM: try factory.rootPEM, merchantIdentifier: factory.merchantIdentifier, maxTokenAgeSeconds: 300)
    guard case .object(let token) = try factory.token(plaintext: plaintext, signingTime: ApplePayVector.signingTime) else {
      Issue.record("the factory's token is not an object")
      return .failure(ApplePayTokenFailure(.format, "no token"))
    }
    return try ApplePayTokenTests.verify(token, merchant: merchant)
  }

  @Test("a valid identifier and metadata: accepted, the identifier and the card come through")
  func accepted() throws {
    let payment = try Self.verify(
      Self.plaintext(
        #","merchantTokenIdentifier":"DNITHE302308980427388297","merchantTokenMetadata":{"cardArt":[],"cardMetadata":{"cardCountry":"US","expirationDate":"12/29","fpanSuffix":"4321","longDescription":"Visa Signature ending in 4321","shortDescription":"Visa 4321"}}"#
      )
    ).get()
    #expect(payment.merchantTokenIdentifier == "DNITHE302308980427388297")
    #expect(payment.merchantTokenCard == MerchantTokenCardReadTests.full)
    #expect(payment.lastFour == "4320")
    #expect(payment.transactionAmount == 100)
  }

  @Test("the factory's own merchant token payment: 128 characters accepted, its metadata's bad fields dropped")
  func factoryPayment() throws {
    let factory = try TestTokenFactory()
    let merchant = try ApplePayMerchant.load(
      certificatePEM: try factory.merchantCertificatePEM, privateKeyPEM: factory.merchantPrivateKeyPEM,
      rootPEM: try factory.rootPEM, merchantIdentifier: factory.merchantIdentifier, maxTokenAgeSeconds: 300)
    var payment = TestTokenFactory.Payment()
    payment.merchantTokenIdentifier = String(repeating: "a", count: 127) + "_"
    payment.merchantTokenMetadata = #"{"cardMetadata":{"fpanSuffix":"4321","cardCountry":7}}"#
    guard case .object(let token) = try factory.token(payment, signingTime: ApplePayVector.signingTime) else {
      Issue.record("the factory's token is not an object")
      return
    }
    let decrypted = try ApplePayTokenTests.verify(token, merchant: merchant).get()
    #expect(decrypted.merchantTokenIdentifier == String(repeating: "a", count: 127) + "_")
    #expect(decrypted.merchantTokenCard == MerchantTokenCard(fpanSuffix: "4321"))
  }

  @Test("no identifier, or null: a device token's payment, its metadata ignored")
  func deviceToken() throws {
    for members in ["", #","merchantTokenIdentifier":null"#, #","merchantTokenMetadata":{"cardMetadata":{"fpanSuffix":"4321"}}"#] {
      let payment = try Self.verify(Self.plaintext(members)).get()
      #expect(payment.merchantTokenIdentifier == nil)
      #expect(payment.merchantTokenCard == nil)
    }
  }

  @Test("an identifier with a slash, dots, empty, of 129 characters, or a number: refused, the value not echoed")
  func refused() throws {
    for identifier in [#""a/b""#, #""..""#, #""""#, #""%2F""#, "\"" + String(repeating: "a", count: 129) + "\"", "42", "true", #"["a"]"#] {
      let result = try Self.verify(Self.plaintext(#","merchantTokenIdentifier":\#(identifier)"#))
      #expect(ApplePayTokenTests.failure(result) == Self.invalidIdentifier, "merchantTokenIdentifier \(identifier)")
    }
  }
}
