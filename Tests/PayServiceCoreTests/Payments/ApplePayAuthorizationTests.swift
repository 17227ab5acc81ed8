import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// authorizePayment and processOrder with the real Apple Pay token: the hold, its capture, replays.
@Suite("Apple Pay authorization holds")
struct ApplePayAuthorizationTests {
  static func handler(config: Config? = nil, now: Int64 = ApplePayVector.now) throws -> (RequestHandler, any Store) {
    let context = try TestConfig.context(config: config ?? ApplePayVector.config(), now: now)
    return (TestConfig.handler(context, backOffice: true), try context.store)
  }

  static let token = JSONValue.object(ApplePayVector.tokenObject)

  /// The one ApplePayError of a failed authorization, as compact JSON.
  static func failure(_ response: JSONValue) -> String? {
    guard response["result"]?["status"]?.stringValue == "failure", response["result"]?["chargeToken"] == nil else {
      return nil
    }
    return response["result"]?["errors"]?.compact
  }

  static func unknown(_ message: String) -> String {
    JSONWriter.string(JSONValue.array([.object(JSONObject([("code", .string("unknown")), ("message", .string(message))]))]))
  }

  @Test("the vector authorizes a hold, processOrder captures it once, and the order keeps only the card's last four")
  func authorizeAndCapture() throws {
    let (handler, store) = try Self.handler()
    let authorized = handler.call("authorizePayment", ApplePayVector.authorizeParams(paymentData: Self.token))
    #expect(authorized["result"]?["status"]?.stringValue == "success")
    #expect(authorized["result"]?["errors"]?.compact == "[]")
    let chargeToken = try #require(authorized["result"]?["chargeToken"]?.stringValue)
    let hold = PaymentAuthorization(
      authorizationId: store.identifiers.authorizationId(transactionId: ApplePayVector.transactionId),
      transactionId: ApplePayVector.transactionId, network: "Visa", cardType: "debit", lastFour: "4320",
      amountMinor: 100, currencyCode: "USD", status: .held)
    #expect(try store.authorizations() == [hold])

    let params = #"{"chargeToken":"\#(chargeToken)",\#(ApplePayVector.processParams)}"#
    let order = handler.call("processOrder", params)
    #expect(order["result"]?["status"]?.stringValue == "succeeded")
    #expect(
      order["result"]?["order"]?["payment"]?.compact
        == #"{"network":"Visa","type":"debit","lastFour":"4320","transactionId":"\#(ApplePayVector.transactionId)"}"#)
    var captured = hold
    captured.status = .captured
    #expect(try store.authorizations() == [captured])

    // The identical request again: the stored answer, no second capture or charge.
    let again = handler.call("processOrder", params, id: 2)
    #expect(again["result"] == order["result"])
    #expect(try store.authorizations() == [captured])
    #expect(try store.orderTotals().charges == 1)
    let orderId = try #require(order["result"]?["orderId"]?.stringValue)
    #expect(handler.call("getOrder", #"{"orderId":"\#(orderId)"}"#)["result"]?["order"]?["payment"] == order["result"]?["order"]?["payment"])
  }

  @Test("with manual capture the network hold stays until captureOrder takes it or cancelOrder releases it")
  func manualCapture() throws {
    var config = try ApplePayVector.config()
    config.gateway.capture = .manual
    for action in ["capture", "cancel"] {
      let context = try TestConfig.context(config: config, now: ApplePayVector.now)
      let handler = TestConfig.handler(context, backOffice: true)
      let store = try context.store
      let authorized = handler.call("authorizePayment", ApplePayVector.authorizeParams(paymentData: Self.token))
      let chargeToken = try #require(authorized["result"]?["chargeToken"]?.stringValue)
      let order = handler.call("processOrder", #"{"chargeToken":"\#(chargeToken)",\#(ApplePayVector.processParams)}"#)
      #expect(order["result"]?["order"]?["status"]?.stringValue == "authorized")
      let orderId = try #require(order["result"]?["orderId"]?.stringValue)
      #expect(try store.authorizations().map(\.status) == [.held])
      #expect(try store.stock()["ticket"] == 4)
      if action == "capture" {
        let captured = handler.call("captureOrder", #"{"orderId":"\#(orderId)","captureId":"ship-1"}"#)
        #expect(captured["result"]?.compact == #"{"status":"succeeded","orderId":"\#(orderId)","captureId":"ship-1","amountCaptured":"1.00","amountReleased":"0.00","orderStatus":"paid"}"#)
        #expect(try store.authorizations().map(\.status) == [.captured])
        #expect(try store.releasedAuthorizations().isEmpty)
      } else {
        let canceled = handler.call("cancelOrder", #"{"orderId":"\#(orderId)","cancelId":"c-1"}"#)
        #expect(canceled["result"]?.compact == #"{"status":"succeeded","orderId":"\#(orderId)","cancelId":"c-1","amountReleased":"1.00","restocked":[{"sku":"ticket","quantity":1}],"orderStatus":"canceled"}"#)
        #expect(try store.authorizations().map(\.status) == [.held])
        #expect(try store.releasedAuthorizations() == [store.identifiers.authorizationId(transactionId: ApplePayVector.transactionId)])
        #expect(try store.stock()["ticket"] == 5)
      }
      #expect(try store.orderTotals().charges == 1)
    }
  }

  @Test("a token is accepted once: a replay fails, whether sent as an object or as JSON text")
  func replay() throws {
    let (handler, store) = try Self.handler()
    #expect(handler.call("authorizePayment", ApplePayVector.authorizeParams(paymentData: Self.token))["result"]?["status"]?.stringValue == "success")
    let message = Self.unknown(
      "this payment token was already used (header.transactionId \(ApplePayVector.transactionId)); authorize again")
    #expect(Self.failure(handler.call("authorizePayment", ApplePayVector.authorizeParams(paymentData: Self.token))) == message)
    // As JSON text, with the whitespace a copy from a file or a log may carry.
    let text = JSONValue.string("\n  " + ApplePayVector.tokenText)
    #expect(Self.failure(handler.call("authorizePayment", ApplePayVector.authorizeParams(paymentData: text))) == message)
    #expect(try store.authorizations().count == 1)

    // The JSON text form on its own authorizes.
    let (fresh, _) = try Self.handler()
    #expect(fresh.call("authorizePayment", ApplePayVector.authorizeParams(paymentData: text))["result"]?["status"]?.stringValue == "success")
  }

  @Test("a failed check answers failure with the check's message and records nothing")
  func failedChecksRecordNothing() throws {
    let cases: [(Config, Int64, Int, String)] = [
      (
        try ApplePayVector.config(currency: "EUR"), ApplePayVector.now, 1,
        "the token's currencyCode 840 is not the merchant currency EUR (978)"
      ),
      (
        try ApplePayVector.config(), ApplePayVector.now, 2,
        "the token's transactionAmount 100 is not the order total 2.00 USD (200 minor units)"
      ),
      (
        try ApplePayVector.config(), TestConfig.now, 1,
        "the token was signed at 2014-10-27T19:51:43Z, 380822897 seconds before the service clock 2026-11-21T12:00:00Z; applePay.maxTokenAgeSeconds allows 300"
      ),
    ]
    for (config, now, quantity, message) in cases {
      let (handler, store) = try Self.handler(config: config, now: now)
      let response = handler.call(
        "authorizePayment", ApplePayVector.authorizeParams(paymentData: Self.token, quantity: quantity))
      #expect(Self.failure(response) == Self.unknown(message))
      #expect(try store.authorizations().isEmpty)
    }
    // Nothing was used up: after the wrong total, the same token authorizes the right order in the same store.
    let (handler, _) = try Self.handler()
    let wrongTotal = handler.call("authorizePayment", ApplePayVector.authorizeParams(paymentData: Self.token, quantity: 2))
    #expect(Self.failure(wrongTotal) != nil)
    let right = handler.call("authorizePayment", ApplePayVector.authorizeParams(paymentData: Self.token), id: 2)
    #expect(right["result"]?["status"]?.stringValue == "success")
  }

  @Test("the real token's card number is a Visa: a MasterCard claim (and its price) is refused, naming both")
  func claimedNetworkMustBeTheCardNumbers() throws {
    // A shop that takes MasterCard too. (The vector's signed amount is the undiscounted 1.00, so a
    // MasterCard discount would fail the amount check first; the claim is refused either way.)
    let yaml = ApplePayVector.configYAML().replacingOccurrences(
      of: "supportedNetworks: [visa]", with: "supportedNetworks: [visa, masterCard]")
    let config = try ConfigLoader.parse(yaml: yaml, file: "\(ApplePayVector.directory)/config.yaml")
    let (handler, store) = try Self.handler(config: config)
    let claimed = handler.call(
      "authorizePayment",
      ApplePayVector.authorizeParams(
        paymentData: Self.token, card: #"{"displayName":"MasterCard 4320","network":"masterCard","type":"debit"}"#))
    #expect(
      Self.failure(claimed)
        == Self.unknown(
          "the card's network is visa (by the card number in the payment data), but payment.token.paymentMethod says masterCard"))
    #expect(try store.authorizations().isEmpty)
  }

  @Test("without an applePay section an EC_v1 token is refused; RSA_v1 is not supported anywhere")
  func notConfigured() throws {
    let handler = TestConfig.handler(try TestConfig.context())
    // The Golden store: credit cards only, a full shipping address.
    let params = ApplePayVector.authorizeParams(paymentData: Self.token).replacingOccurrences(of: "ticket", with: "clock")
      .replacingOccurrences(of: #""type":"debit""#, with: #""type":"credit""#)
      .replacingOccurrences(of: "\"mobile\"", with: "\"free\"")
      .replacingOccurrences(
        of: #"{"emailAddress":"fan@example.com"}"#,
        with: #"{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"},"billingContact":{"addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}"#)
    #expect(
      Self.failure(handler.call("authorizePayment", params))
        == Self.unknown(
          #"this payservice cannot verify Apple Pay tokens: its config has no applePay section (test tokens are strings such as "tok_visa")"#
        ))
    let rsa = params.replacingOccurrences(of: #""version":"EC_v1""#, with: #""version":"RSA_v1""#)
    #expect(
      Self.failure(handler.call("authorizePayment", rsa))
        == Self.unknown("RSA_v1 payment tokens are not supported: payservice decrypts EC_v1 tokens only"))
    let (configured, _) = try Self.handler()
    let rsaConfigured = ApplePayVector.authorizeParams(paymentData: Self.token)
      .replacingOccurrences(of: #""version":"EC_v1""#, with: #""version":"RSA_v1""#)
    #expect(
      Self.failure(configured.call("authorizePayment", rsaConfigured))
        == Self.unknown("RSA_v1 payment tokens are not supported: payservice decrypts EC_v1 tokens only"))
  }

  @Test("applicationData must be base64; paymentData text that starts with { must be a JSON object")
  func invalidParams() throws {
    let (handler, _) = try Self.handler()
    let badApplicationData = handler.call(
      "authorizePayment", ApplePayVector.authorizeParams(paymentData: Self.token, extra: #","applicationData":"%%%""#))
    #expect(
      badApplicationData["error"]?["data"]?.compact
        == #"{"errors":[{"path":"applicationData","message":"must be base64 text (the payment request's applicationData), got a string"}]}"#)
    let applicationData = handler.call(
      "authorizePayment", ApplePayVector.authorizeParams(paymentData: Self.token, extra: #","applicationData":"b3JkZXItNDI=""#))
    #expect(
      Self.failure(applicationData)
        == Self.unknown("the request carries applicationData but the token's header has no applicationData hash"))
    let badText = handler.call("authorizePayment", ApplePayVector.authorizeParams(paymentData: .string("{\"version\":")))
    #expect(
      badText["error"]?["data"]?.compact
        == #"{"errors":[{"path":"payment.token.paymentData","message":"starts with \"{\" but is not the JSON text of an object"}]}"#)
  }
}
