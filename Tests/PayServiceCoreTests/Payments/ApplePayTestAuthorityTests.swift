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
