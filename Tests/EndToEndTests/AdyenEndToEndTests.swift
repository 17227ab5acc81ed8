import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// payservice started with `gateway.kind: adyen` against the Adyen test server, through the built
/// binary: the keys' checks at start, check-config's summary, and a checkout Adyen decides later,
/// settled by its notification, with no key in any output.
@Suite("Adyen end to end", .serialized)
struct AdyenEndToEndTests {
  @Test("no API key: exit 2 naming the variable; a malformed HMAC key: exit 2; none: a warning, and serving")
  func keyProblems() throws {
    let fixture = try AdyenFixture()
    defer { fixture.server.shutdown() }
    var environment = fixture.environment
    environment["ADYEN_API_KEY"] = nil
    let noKey = try PayserviceProcess.run(
      ["--config", fixture.configPath, "--database", ":memory:"], stdin: Data(), environment: environment)
    #expect(noKey.status == 2)
    #expect(
      noKey.stderr
        == "payservice: gateway.kind is adyen but the environment variable ADYEN_API_KEY (gateway.apiKeyVariable) is not set\n")
    environment = fixture.environment
    environment["ADYEN_HMAC_KEY"] = "not-hex-at-all"
    let badHMAC = try PayserviceProcess.run(
      ["--config", fixture.configPath, "--database", ":memory:"], stdin: Data(), environment: environment)
    #expect(badHMAC.status == 2)
    #expect(
      badHMAC.stderr
        == "payservice: ADYEN_HMAC_KEY's key 1 is not an HMAC key as Adyen's Customer Area shows it (32 to 128 hex digits)\n")
    environment["ADYEN_HMAC_KEY"] = nil
    let unkeyed = try PayserviceProcess.run(
      ["--config", fixture.configPath, "--database", ":memory:", "--quiet"],
      stdin: Data(#"{"jsonrpc":"2.0","id":1,"method":"processAdyenNotification","params":{"payload":"{}"}}"#.utf8),
      environment: environment)
    #expect(unkeyed.status == 0)
    #expect(
      unkeyed.stdoutText
        == #"{"jsonrpc":"2.0","id":1,"result":{"status":"failed","failureCode":"not_configured","message":"the environment variable ADYEN_HMAC_KEY (gateway.hmacKeyVariable) is not set"}}"#
        + "\n")
    #expect(unkeyed.stderr.contains("ADYEN_HMAC_KEY is not set: processAdyenNotification answers not_configured"))
  }

  @Test("check-config says whether each key is set, never the keys")
  func checkConfig() throws {
    let fixture = try AdyenFixture()
    defer { fixture.server.shutdown() }
    let result = try PayserviceProcess.run(["check-config", "--config", fixture.configPath], environment: fixture.environment)
    #expect(result.status == 0)
    let lines = result.stdoutText.split(separator: "\n").filter { $0.hasPrefix("gateway") || $0.hasPrefix("  adyen") }
    #expect(
      lines == [
        "gateway    adyen, charge tokens valid 3600 s, capture automatic",
        "  adyen    test mode, \(fixture.server.baseURL), merchant account PayServiceECOM, keys: ADYEN_API_KEY set, ADYEN_HMAC_KEY set, 1 key",
      ])
    #expect(!result.stdoutText.contains(fixture.server.apiKey))
    #expect(!result.stdoutText.contains(fixture.server.hmacKey))
  }

  @Test("a checkout Adyen decides later, through the process: pending, then paid by its notification, once")
  func checkoutSettledByNotification() throws {
    let fixture = try AdyenFixture()
    defer { fixture.server.shutdown() }
    let database = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    func call(_ method: String, _ params: String) throws -> (JSONValue, ProcessResult) {
      let result = try PayserviceProcess.run(
        ["call", method, params, "--config", fixture.configPath, "--database", database, "--now", "2026-11-21T12:00:00Z"],
        environment: fixture.environment)
      return (try JSONParser.parse(result.stdoutText), result)
    }
    let cart = AdyenFixture.cart
    let probe = try call(
      "authorizePayment",
      AdyenFixture.authorizeParams(try fixture.applePayToken(amountMinor: 1), cart: cart, transaction: "probe")).0
    let total = try #require(probe["amount"]?.stringValue, "\(probe.compact)")
    let token = try fixture.applePayToken(
      amountMinor: try #require(Int(total.replacingOccurrences(of: ".", with: ""))), number: "4000000000000077")
    let authorized = try call(
      "authorizePayment", AdyenFixture.authorizeParams(token, cart: cart, transaction: "T-later")).0
    let chargeToken = try #require(authorized["chargeToken"]?.stringValue, "\(authorized.compact)")
    let order =
      #"{"chargeToken":"\#(chargeToken)","items":\#(cart),"shippingMethod":"free","shippingContact":\#(AdyenFixture.contact),"amount":"\#(total)","currencyCode":"USD"}"#
    let (pending, first) = try call("processOrder", order)
    #expect(pending["failureCode"] == .string("payment_processing"), "\(pending.compact)")
    #expect(fixture.server.settle(paymentPspReference: "TEST000000000001", authorised: true))
    let payload = fixture.server.releaseNotifications()
    let params = JSONWriter.string(JSONValue.object(JSONObject([("payload", .string(payload))])))
    let (notified, second) = try call("processAdyenNotification", params)
    #expect(notified["items"]?[0]?["effect"] == .string("order_paid"), "\(notified.compact)")
    #expect(try call("processAdyenNotification", params).0 == notified)
    let (paid, third) = try call("processOrder", order)
    #expect(paid["status"] == .string("succeeded"), "\(paid.compact)")
    #expect(paid["order"]?["status"] == .string("paid"))
    #expect(fixture.server.paymentCount == 1)
    for result in [first, second, third] {
      #expect(!result.stdoutText.contains(fixture.server.apiKey) && !result.stderr.contains(fixture.server.apiKey))
      #expect(!result.stdoutText.contains(fixture.server.hmacKey) && !result.stderr.contains(fixture.server.hmacKey))
    }
  }
}
