import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// Paths the one real vector cannot reach, with tokens signed by a throwaway certificate authority
/// (TestTokenFactory) configured as `applePay.rootCertificate`.
@Suite("Apple Pay tokens from a test authority")
struct ApplePayTestAuthorityTests {
  static let signingTime = ApplePayVector.signingTime

  static func handler(_ factory: TestTokenFactory) throws -> (RequestHandler, any Store) {
    let directory = TestPaths.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }  // read once, while parsing
    let config = try ConfigLoader.parse(
      yaml: ApplePayVector.configYAML(applePay: try factory.writeCredentials(to: directory)),
      file: directory.appendingPathComponent("config.yaml").path)
    let context = try TestConfig.context(config: config, now: ApplePayVector.now)
    return (TestConfig.handler(context), try context.store)
  }

  static func authorize(_ handler: RequestHandler, _ token: JSONValue, extra: String = "") -> JSONValue {
    handler.call("authorizePayment", ApplePayVector.authorizeParams(paymentData: token, extra: extra))
  }

  static func message(_ response: JSONValue) -> String? {
    guard response["result"]?["chargeToken"] == nil else { return nil }
    return response["result"]?["errors"]?[0]?["message"]?.stringValue
  }

  @Test("a token signed like Apple's authorizes, with applicationData that matches its header")
  func authorizesWithApplicationData() throws {
    let factory = try TestTokenFactory()
    let (handler, _) = try Self.handler(factory)
    let plain = try factory.token(signingTime: Self.signingTime)
    #expect(Self.authorize(handler, plain)["result"]?["status"]?.stringValue == "success")
    let bound = try factory.token(signingTime: Self.signingTime, applicationData: Array("order-42".utf8))
    #expect(
      Self.message(Self.authorize(handler, bound, extra: #","applicationData":"b3JkZXItNDM=""#))
        == "applicationData does not match the token: its SHA-256 is not header.applicationData")
    // The failed check used nothing up: the right applicationData authorizes the same token.
    #expect(
      Self.authorize(handler, bound, extra: #","applicationData":"b3JkZXItNDI=""#)["result"]?["status"]?.stringValue
        == "success")
  }

  @Test("the network declines an expired card or an invalid number: no charge token, and the token is spent")
  func networkDeclines() throws {
    let factory = try TestTokenFactory()
    let (handler, store) = try Self.handler(factory)
    var expired = TestTokenFactory.Payment()
    expired.expiration = "140930"
    let expiredToken = try factory.token(expired, signingTime: Self.signingTime)
    #expect(
      Self.message(Self.authorize(handler, expiredToken))
        == "the card network declined the authorization: the card has expired")
    #expect(Self.message(Self.authorize(handler, expiredToken))?.hasPrefix("this payment token was already used") == true)
    var invalid = TestTokenFactory.Payment()
    invalid.accountNumber = "4109370251004321"
    #expect(
      Self.message(Self.authorize(handler, try factory.token(invalid, signingTime: Self.signingTime)))
        == "the card network declined the authorization: the account number is not valid")
    let holds = try store.authorizations()
    #expect(holds.map(\.status) == [.declined, .declined])
    #expect(holds.map(\.lastFour) == ["4320", "4321"])
  }

  @Test("decrypted data that is not a payment is refused without echoing it")
  func invalidPaymentData() throws {
    let factory = try TestTokenFactory()
    let (handler, store) = try Self.handler(factory)
    var short = TestTokenFactory.Payment()
    short.accountNumber = "12345"
    #expect(
      Self.message(Self.authorize(handler, try factory.token(short, signingTime: Self.signingTime)))
        == "the decrypted payment data is invalid: applicationPrimaryAccountNumber must be 12 to 19 digits")
    #expect(try store.authorizations().isEmpty)
  }

  @Test("a leaf certificate not valid at the signing time is refused")
  func leafOutsideValidity() throws {
    let start = Date(timeIntervalSince1970: TimeInterval(Self.signingTime - 86_400 * 10))
    let factory = try TestTokenFactory(leafValidity: start...start.addingTimeInterval(86_400))
    let (handler, _) = try Self.handler(factory)
    #expect(
      Self.message(Self.authorize(handler, try factory.token(signingTime: Self.signingTime)))
        == "the leaf certificate was not valid at the signing time 2014-10-27T19:51:43Z (valid 2014-10-17T19:51:43Z to 2014-10-18T19:51:43Z)")
  }

  @Test("a chain with the configured root's names but another key is refused")
  func impostorAuthority() throws {
    let configured = try TestTokenFactory()
    let impostor = try TestTokenFactory()
    let (handler, _) = try Self.handler(configured)
    #expect(
      Self.message(Self.authorize(handler, try impostor.token(signingTime: Self.signingTime)))
        == "the certificate chain does not end at payservice test root: the intermediate certificate is not signed by it")
  }
}

/// Apple Pay in mainland China: China UnionPay tokens carry EMV data instead of a 3-D Secure
/// cryptogram.
@Suite("Apple Pay EMV tokens (China UnionPay)")
struct ApplePayEMVTests {
  static func handler(_ factory: TestTokenFactory, capabilities: String) throws -> (RequestHandler, any Store, String) {
    let directory = TestPaths.temporaryDirectory()
    let yaml = ApplePayVector.configYAML(applePay: try factory.writeCredentials(to: directory))
      .replacingOccurrences(of: "supportedNetworks: [visa]", with: "supportedNetworks: [visa, chinaUnionPay]")
      .replacingOccurrences(of: "merchantCapabilities: [supports3DS]", with: "merchantCapabilities: \(capabilities)")
    let config = try ConfigLoader.parse(yaml: yaml, file: directory.appendingPathComponent("config.yaml").path)
    let path = directory.appendingPathComponent("store.sqlite").path
    let context = try TestConfig.context(config: config, storePath: path, now: ApplePayVector.now)
    return (TestConfig.handler(context), try context.store, path)
  }

  static func authorize(_ handler: RequestHandler, _ token: JSONValue) -> JSONValue {
    handler.call(
      "authorizePayment",
      ApplePayVector.authorizeParams(paymentData: token)
        .replacingOccurrences(of: #""network":"Visa""#, with: #""network":"chinaUnionPay""#))
  }

  /// A UnionPay card (its number in UnionPay's range: the claimed network must be the number's).
  static func unionPay(emv: Bool) -> TestTokenFactory.Payment {
    var payment = TestTokenFactory.Payment()
    payment.accountNumber = "6200000000000005"
    payment.emv = emv
    return payment
  }

  @Test("with supportsEMV an EMV token authorizes and is charged once; its EMV data and PIN block are in no answer and no store file")
  func emv() throws {
    let factory = try TestTokenFactory()
    let (handler, store, path) = try Self.handler(factory, capabilities: "[supports3DS, supportsEMV]")
    let token = try factory.token(Self.unionPay(emv: true), signingTime: ApplePayVector.signingTime)
    let authorized = Self.authorize(handler, token)
    #expect(authorized["result"]?["status"] == .string("success"), "\(authorized.compact)")
    let chargeToken = try #require(authorized["result"]?["chargeToken"]?.stringValue)
    let order = handler.call("processOrder", #"{"chargeToken":"\#(chargeToken)",\#(ApplePayVector.processParams)}"#)
    #expect(order["result"]?["status"] == .string("succeeded"), "\(order.compact)")
    #expect(order["result"]?["order"]?["payment"]?["lastFour"] == .string("0005"))
    #expect(try store.authorizations().map(\.status) == [.captured])
    var texts = [authorized.compact, order.compact]
    for file in [path, path + "-wal"] {
      if let data = FileManager.default.contents(atPath: file) { texts.append(String(decoding: data, as: UTF8.self)) }
    }
    for secret in [TestTokenFactory.Payment.emvData, TestTokenFactory.Payment.encryptedPINData, "6200000000000005"] {
      #expect(texts.allSatisfy { !$0.contains(secret) }, "\(secret)")
    }
  }

  @Test("without supportsEMV the token is refused and stays unused; a 3-D Secure token still authorizes")
  func withoutEMV() throws {
    let factory = try TestTokenFactory()
    let (handler, store, _) = try Self.handler(factory, capabilities: "[supports3DS]")
    let token = try factory.token(Self.unionPay(emv: true), signingTime: ApplePayVector.signingTime)
    let refused = Self.authorize(handler, token)
    #expect(
      refused["result"]?["errors"]?[0]?["message"]
        == .string("this merchant does not take EMV payments (China UnionPay): its merchantCapabilities lack supportsEMV"))
    #expect(try store.authorizations().isEmpty)
    #expect(
      Self.authorize(handler, try factory.token(Self.unionPay(emv: false), signingTime: ApplePayVector.signingTime))[
        "result"]?["status"] == .string("success"))
  }
}
