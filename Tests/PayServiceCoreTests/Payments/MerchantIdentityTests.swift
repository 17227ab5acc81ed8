import Crypto
import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// Loading the merchant identity certificate and key: the key must be the certificate's, the
/// certificate this merchant's; validity reported for expiry warnings.
@Suite("Merchant identity")
struct MerchantIdentityTests {
  static let merchant = "merchant.com.example.shop"
  static let other = "merchant.com.example.other"
  static let start: Int64 = 1_767_225_600  // 2026-01-01T00:00:00Z
  static let end: Int64 = 1_798_761_600  // 2027-01-01T00:00:00Z
  static let authority = try! TestMerchantIdentityAuthority()

  static func issue(
    _ merchant: String = merchant, key: TestMerchantIdentity.KeyKind = .p256, userID: Bool = true, identifierExtension: Bool = true
  ) throws -> TestMerchantIdentity {
    try authority.issue(
      merchantIdentifier: merchant, notValidBefore: Date(timeIntervalSince1970: Double(start)),
      notValidAfter: Date(timeIntervalSince1970: Double(end)), key: key, userID: userID, identifierExtension: identifierExtension)
  }

  static func problem(_ certificatePEM: String, _ keyPEM: String, merchant: String = merchant) -> MerchantIdentity.Problem? {
    do {
      _ = try MerchantIdentity.load(certificatePEM: certificatePEM, keyPEM: keyPEM, merchantIdentifier: merchant)
      return nil
    } catch {
      return error
    }
  }

  static func hash(_ text: String) -> String {
    SHA256.hash(data: Array(text.utf8)).map { String(format: "%02x", $0) }.joined()
  }

  @Test("an RSA 2048 identity loads: chain, key and validity kept")
  func validRSA() throws {
    let issued = try Self.issue(key: .rsa2048)
    let identity = try MerchantIdentity.load(certificatePEM: issued.certificatePEM, keyPEM: issued.keyPEM, merchantIdentifier: Self.merchant)
    #expect(identity.merchantIdentifier == Self.merchant)
    #expect(identity.certificateChainPEM.count == 1)
    #expect(identity.certificateChainPEM[0].hasPrefix("-----BEGIN CERTIFICATE-----\n"))
    #expect(identity.keyPEM.contains("PRIVATE KEY-----"))
    #expect(identity.certificate.publicKey.description == "RSA2048.PublicKey")
    #expect(identity.notValidBefore == Self.start)
    #expect(identity.notValidAfter == Self.end)
    #expect(identity.validity(at: Self.start + 86_400) == .valid)
  }

  @Test("a P-256 identity loads; a chain keeps its leaf first; one stacked PEM serves as both texts")
  func validP256AndChain() throws {
    let issued = try Self.issue()
    let chain = issued.certificatePEM + issued.caPEM
    let identity = try MerchantIdentity.load(certificatePEM: chain, keyPEM: issued.keyPEM, merchantIdentifier: Self.merchant)
    #expect(identity.certificateChainPEM.count == 2)
    #expect(identity.certificate.publicKey.description == "P256.PublicKey")
    #expect(identity.certificateChainPEM[0] == issued.certificatePEM)

    // What `openssl pkcs12 -nodes` writes: attributes, the key and the certificate in one file.
    let stacked = "Bag Attributes\n    friendlyName: Merchant ID\n" + issued.keyPEM + "\n" + "subject=UID=\(Self.merchant)\n"
      + issued.certificatePEM
    let fromStacked = try MerchantIdentity.load(certificatePEM: stacked, keyPEM: stacked, merchantIdentifier: Self.merchant)
    #expect(fromStacked.certificateChainPEM == [issued.certificatePEM])
  }

  @Test("the key of another certificate is refused")
  func keyOfAnotherCertificate() throws {
    let issued = try Self.issue()
    let another = try Self.issue()
    #expect(
      Self.problem(issued.certificatePEM, another.keyPEM)
        == MerchantIdentity.Problem(
          key: "merchantIdentityKey",
          message: "does not match merchantIdentityCertificate: it is the private key of another public key"))
  }

  @Test("another merchant's certificate is refused, naming its owner")
  func anotherMerchant() throws {
    let issued = try Self.issue(Self.other)
    #expect(
      Self.problem(issued.certificatePEM, issued.keyPEM)
        == MerchantIdentity.Problem(
          key: "merchantIdentityCertificate",
          message: """
            belongs to merchant identifier \(Self.other) (extension 1.2.840.113635.100.6.32 is \(Self.hash(Self.other))), \
            not to \(Self.merchant) (SHA-256 \(Self.hash(Self.merchant))); use the Merchant Identity Certificate Apple \
            issued for \(Self.merchant)
            """))

    let uidOnly = try Self.issue(Self.other, identifierExtension: false)
    #expect(
      Self.problem(uidOnly.certificatePEM, uidOnly.keyPEM)
        == MerchantIdentity.Problem(
          key: "merchantIdentityCertificate",
          message: """
            belongs to merchant identifier \(Self.other) (subject UID), not to \(Self.merchant); use the Merchant \
            Identity Certificate Apple issued for \(Self.merchant)
            """))

    let extensionOnly = try Self.issue(Self.other, userID: false)
    #expect(
      Self.problem(extensionOnly.certificatePEM, extensionOnly.keyPEM)?.message.hasPrefix(
        "belongs to another merchant identifier (extension 1.2.840.113635.100.6.32 is \(Self.hash(Self.other)))") == true)

    let anonymous = try Self.issue(userID: false, identifierExtension: false)
    #expect(
      Self.problem(anonymous.certificatePEM, anonymous.keyPEM)
        == MerchantIdentity.Problem(
          key: "merchantIdentityCertificate",
          message: """
            names no merchant identifier (neither a subject UID nor extension 1.2.840.113635.100.6.32); use the \
            Merchant Identity Certificate Apple issued for \(Self.merchant)
            """))
  }

  @Test("either the UID or the extension is enough when it names the merchant")
  func eitherName() throws {
    let uidOnly = try Self.issue(identifierExtension: false)
    #expect(Self.problem(uidOnly.certificatePEM, uidOnly.keyPEM) == nil)
    let extensionOnly = try Self.issue(userID: false)
    #expect(Self.problem(extensionOnly.certificatePEM, extensionOnly.keyPEM) == nil)
  }

  @Test("texts that are not PEM, an encrypted key, a damaged certificate; no message quotes them")
  func notPEM() throws {
    let issued = try Self.issue()
    let notCertificate = MerchantIdentity.Problem(
      key: "merchantIdentityCertificate", message: "is not a PEM X.509 certificate (-----BEGIN CERTIFICATE-----)")
    #expect(Self.problem("hello", issued.keyPEM) == notCertificate)
    #expect(Self.problem("", issued.keyPEM) == notCertificate)
    #expect(Self.problem(issued.keyPEM, issued.keyPEM) == notCertificate)
    #expect(
      Self.problem(issued.certificatePEM, "hello")
        == MerchantIdentity.Problem(
          key: "merchantIdentityKey",
          message: "is not a PEM private key (PKCS#8 \"PRIVATE KEY\", \"RSA PRIVATE KEY\" or SEC1 \"EC PRIVATE KEY\")"))
    #expect(
      Self.problem(issued.certificatePEM, issued.certificatePEM)?.message
        == "is not a PEM private key (PKCS#8 \"PRIVATE KEY\", \"RSA PRIVATE KEY\" or SEC1 \"EC PRIVATE KEY\")")
    #expect(
      Self.problem(issued.certificatePEM, "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n")
        == MerchantIdentity.Problem(
          key: "merchantIdentityKey",
          message: "is encrypted; give the key unencrypted, readable only by payservice"))
    #expect(
      Self.problem(
        issued.certificatePEM,
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nMIIB\n-----END RSA PRIVATE KEY-----\n")?.message
        == "is encrypted; give the key unencrypted, readable only by payservice")
    #expect(
      Self.problem(issued.certificatePEM, "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n")
        == MerchantIdentity.Problem(key: "merchantIdentityKey", message: "is not a readable RSA or EC private key (EC PRIVATE KEY)"))
    #expect(
      Self.problem("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", issued.keyPEM)
        == MerchantIdentity.Problem(
          key: "merchantIdentityCertificate",
          message: "holds a PEM block that is not an X.509 certificate (its first certificate)"))
    #expect(
      Self.problem(issued.certificatePEM + "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", issued.keyPEM)?.message
        == "holds a PEM block that is not an X.509 certificate (certificate 2 of its chain)")
    let keyBody = issued.keyPEM.split(separator: "\n").dropFirst().first.map(String.init) ?? "?"
    for problem in [Self.problem(issued.certificatePEM, try Self.issue().keyPEM), Self.problem(issued.keyPEM, issued.keyPEM)] {
      #expect(problem?.message.contains(keyBody) == false)
      #expect(problem?.message.contains("PRIVATE KEY-----") == false)
    }
  }

  @Test("validity: valid, expiring within 30 days, expired, not yet valid")
  func validity() throws {
    let issued = try Self.issue()
    let identity = try MerchantIdentity.load(certificatePEM: issued.certificatePEM, keyPEM: issued.keyPEM, merchantIdentifier: Self.merchant)
    #expect(identity.validity(at: Self.start) == .valid)
    #expect(identity.validity(at: Self.end - 30 * 86_400) == .valid)
    #expect(identity.validity(at: Self.end - 30 * 86_400 + 1) == .expiresSoon(days: 29))
    #expect(identity.validity(at: Self.end - 10 * 86_400 - 3_600) == .expiresSoon(days: 10))
    #expect(identity.validity(at: Self.end) == .expiresSoon(days: 0))
    #expect(identity.validity(at: Self.end + 1) == .expired(since: "2027-01-01T00:00:00Z"))
    #expect(identity.validity(at: Self.start - 1) == .notYetValid(until: "2026-01-01T00:00:00Z"))
  }
}
