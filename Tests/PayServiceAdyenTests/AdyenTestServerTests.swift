import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The Adyen test server, through a real AsyncHTTPClient over TLS that trusts only the server's
/// CA, with Apple Pay tokens from `TestTokenFactory` encrypted for the server's merchant key. The
/// clock is fixed at 2026-11-21T12:00:00Z (13:00 in Amsterdam), so answers and notification
/// bodies are compared byte for byte; their HMAC signatures were checked with Python's `hmac`
/// against the server's key when these tests were written.
@Suite("Adyen test server", .serialized)
struct AdyenTestServerTests {
  /// An answer as a client sees it.
  struct Answer {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: String
    func header(_ name: String) -> String? {
      headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
  }

  static let now: Int64 = 1_795_262_400
  static let account = AdyenTestServer.defaultMerchantAccount

  /// A fresh server decrypting for a fresh token factory's key, and a client trusting its CA.
  static func withServer(_ body: (AdyenTestServer, HTTPClient, TestTokenFactory) async throws -> Void) async throws {
    let factory = try TestTokenFactory()
    let server = try AdyenTestServer(
      applePayMerchantIdentifier: factory.merchantIdentifier, applePayPrivateKeyPEM: factory.merchantPrivateKeyPEM)
    server.setClock(now)
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(server.caCertificatePEM.utf8)))
    let client = HTTPClient(
      eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
    do {
      try await body(server, client, factory)
    } catch {
      try? await client.shutdown()
      server.shutdown()
      throw error
    }
    try await client.shutdown()
    server.shutdown()
  }

  static func send(
    _ client: HTTPClient, _ server: AdyenTestServer, _ path: String, _ json: String, idempotencyKey: String? = nil,
    apiKey: String? = AdyenTestServer.defaultAPIKey, timeout: TimeAmount = .seconds(60)
  ) async throws -> Answer {
    var request = HTTPClientRequest(url: server.baseURL + path)
    request.method = .POST
    if let apiKey { request.headers.add(name: "X-API-Key", value: apiKey) }
    if let idempotencyKey { request.headers.add(name: "Idempotency-Key", value: idempotencyKey) }
    request.headers.add(name: "Content-Type", value: "application/json")
    request.body = .bytes(ByteBuffer(string: json))
    let response = try await client.execute(request, timeout: timeout)
    let body = try await response.body.collect(upTo: 1 << 20)
    return Answer(
      status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
      body: String(buffer: body))
  }

  /// `applePayToken`: base64 of the paymentData JSON of a token for `number`.
  static func token(
    _ factory: TestTokenFactory, number: String = "4111111111111111", expiration: String = "301231",
    amount: Int = 1999, currencyCode: String = "840"
  ) throws -> String {
    var payment = TestTokenFactory.Payment()
    payment.accountNumber = number
    payment.expiration = expiration
    payment.transactionAmount = amount
    payment.currencyCode = currencyCode
    let paymentData = try factory.token(payment, signingTime: now)
    return Data(JSONWriter.string(paymentData).utf8).base64EncodedString()
  }

  /// A `/payments` body; `extra` is added as members (`"a":1,"b":2`).
  static func payment(
    _ method: String, value: Int = 1999, currency: String = "USD", reference: String = "order-1",
    account: String = account, extra: String = ""
  ) -> String {
    #"{"amount":{"currency":"\#(currency)","value":\#(value)},"reference":"\#(reference)","merchantAccount":"\#(account)","paymentMethod":\#(method)\#(extra.isEmpty ? "" : "," + extra)}"#
  }

  static func applePay(_ token: String) -> String { #"{"type":"applepay","applePayToken":"\#(token)"}"# }

  @Test("an Apple Pay payment is Authorised and captured, with one signed AUTHORISATION")
  func authorised() async throws {
    try await Self.withServer { server, client, factory in
      let answer = try await Self.send(
        client, server, "/v71/payments", Self.payment(Self.applePay(try Self.token(factory))))
      #expect(answer.status == 200)
      #expect(
        answer.body
          == #"{"amount":{"currency":"USD","value":1999},"merchantReference":"order-1","paymentMethod":{"brand":"visa","type":"applepay"},"pspReference":"TEST000000000001","resultCode":"Authorised"}"#
      )
      #expect(answer.header("Content-Type") == "application/json;charset=utf-8")
      #expect(answer.header("pspReference") == "TEST000000000001")
      #expect(answer.header("Idempotency-Key") == nil)
      #expect(server.payment("TEST000000000001")?["captured"] == "1999")
      #expect(server.payment("TEST000000000001")?["capturable"] == "0")
      #expect(server.paymentCount == 1)
      #expect(server.pendingNotifications.count == 1)
      #expect(
        server.releaseNotifications()
          == #"{"live":"false","notificationItems":[{"NotificationRequestItem":{"additionalData":{"hmacSignature":"iFAesXpnUTDS+WWF7Ul7FuI6krIByF5SmlAoYaHFruk="},"amount":{"currency":"USD","value":1999},"eventCode":"AUTHORISATION","eventDate":"2026-11-21T13:00:00+01:00","merchantAccountCode":"PayServiceECOM","merchantReference":"order-1","operations":["REFUND"],"paymentMethod":"visa","pspReference":"TEST000000000001","reason":"100001:1111:12/2030","success":"true"}}]}"#
      )
      #expect(server.releaseNotifications() == #"{"live":"false","notificationItems":[]}"#)
      #expect(server.requests.first?.path == "/v71/payments")
      #expect(server.requests.first?.status == 200)
    }
  }

  @Test("HMAC signatures: Adyen's documented vector, byte for byte")
  func documentedSignature() {
    // Adyen's "Verify HMAC signatures" example, as its Python library tests it (UtilTest.py).
    let item = AdyenNotificationItem(
      eventCode: "AUTHORISATION", success: true, pspReference: "7914073381342284", merchantAccountCode: "TestMerchant",
      merchantReference: "TestPayment-1407325143704", currency: "EUR", value: 1130,
      eventDate: "2019-05-06T17:15:34+02:00")
    #expect(item.signedText == "7914073381342284::TestMerchant:TestPayment-1407325143704:1130:EUR:AUTHORISATION:true")
    #expect(
      item.signature(hmacKey: "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056")
        == "coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0=")
    #expect(item.signature(hmacKey: "4478ZZ") == nil)
  }

  @Test(
    "card outcomes: expired, Luhn, the test numbers, with Adyen's refusal reasons",
    arguments: [
      ("4111111111111111", "261120", #""refusalReason":"Expired Card","refusalReasonCode":"6","resultCode":"Refused""#),
      (
        "4111111111111112", "301231",
        #""refusalReason":"Invalid Card Number","refusalReasonCode":"8","resultCode":"Refused""#
      ),
      ("4000000000000002", "301231", #""refusalReason":"Refused","refusalReasonCode":"2","resultCode":"Refused""#),
      (
        "4000000000009995", "301231",
        #""refusalReason":"Not enough balance","refusalReasonCode":"12","resultCode":"Refused""#
      ),
      ("4000000000009987", "301231", #""refusalReason":"Blocked Card","refusalReasonCode":"5","resultCode":"Refused""#),
      ("4000000000000119", "301231", #""refusalReason":"Acquirer Error","refusalReasonCode":"4","resultCode":"Error""#),
    ])
  func refusals(number: String, expiration: String, tail: String) async throws {
    try await Self.withServer { server, client, factory in
      let answer = try await Self.send(
        client, server, "/v71/payments",
        Self.payment(Self.applePay(try Self.token(factory, number: number, expiration: expiration))))
      #expect(answer.status == 200)
      #expect(
        answer.body
          == #"{"amount":{"currency":"USD","value":1999},"merchantReference":"order-1","pspReference":"TEST000000000001",\#(tail)}"#
      )
      let item = try #require(server.pendingNotifications.first)
      #expect(item.eventCode == "AUTHORISATION")
      #expect(item.success == false)
      #expect(item.operations == nil)
      #expect(item.reason == server.payment("TEST000000000001")?["refusalReason"])
    }
  }

  @Test("a card expiring today still pays; the brand comes from the number")
  func brands() async throws {
    try await Self.withServer { server, client, factory in
      for (index, (number, brand)) in [
        ("5555555555554444", "mc"), ("378282246310005", "amex"), ("6011111111111117", "discover"),
        ("3566002020360505", "jcb"), ("36227206271667", "diners"), ("6200000000000005", "cup"),
      ].enumerated() {
        let answer = try await Self.send(
          client, server, "/v71/payments",
          Self.payment(Self.applePay(try Self.token(factory, number: number, expiration: "261121"))))
        #expect(
          answer.body
            == #"{"amount":{"currency":"USD","value":1999},"merchantReference":"order-1","paymentMethod":{"brand":"\#(brand)","type":"applepay"},"pspReference":"TEST00000000000\#(index + 1)","resultCode":"Authorised"}"#
        )
      }
    }
  }

  @Test("a Received payment is settled later by an AUTHORISATION")
  func received() async throws {
    try await Self.withServer { server, client, factory in
      let token = try Self.token(factory, number: "4000000000000077")
      let answer = try await Self.send(
        client, server, "/v71/payments",
        Self.payment(Self.applePay(token), extra: #""additionalData":{"manualCapture":"true"}"#))
      #expect(
        answer.body
          == #"{"amount":{"currency":"USD","value":1999},"merchantReference":"order-1","pspReference":"TEST000000000001","resultCode":"Received"}"#
      )
      #expect(server.pendingNotifications.isEmpty)
      #expect(!server.settle(paymentPspReference: "TEST000000000009", authorised: true))
      #expect(server.settle(paymentPspReference: "TEST000000000001", authorised: true))
      #expect(!server.settle(paymentPspReference: "TEST000000000001", authorised: false))
      let item = try #require(server.pendingNotifications.first)
      #expect(item.success)
      #expect(item.operations == ["CANCEL", "CAPTURE", "REFUND"])
      #expect(server.payment("TEST000000000001")?["capturable"] == "1999")
    }
  }

  @Test("Apple Pay token errors: 5_002, 5_004, 5_001, each with Adyen's ServiceError")
  func tokenErrors() async throws {
    try await Self.withServer { server, client, factory in
      let garbage = try await Self.send(
        client, server, "/v71/payments",
        Self.payment(Self.applePay(Data("{\"version\":\"EC_v1\"}".utf8).base64EncodedString())))
      #expect(garbage.status == 422)
      #expect(
        garbage.body
          == #"{"status":422,"errorCode":"5_002","message":"Invalid Apple Pay token","errorType":"validation","pspReference":"TEST000000000001"}"#
      )
      let other = try TestTokenFactory()
      let foreign = try await Self.send(
        client, server, "/v71/payments", Self.payment(Self.applePay(try Self.token(other))))
      #expect(
        foreign.body
          == #"{"status":422,"errorCode":"5_004","message":"Could not find Merchant Private Key","errorType":"validation","pspReference":"TEST000000000002"}"#
      )
      let mismatch = try await Self.send(
        client, server, "/v71/payments", Self.payment(Self.applePay(try Self.token(factory, amount: 1998))))
      #expect(
        mismatch.body
          == #"{"status":422,"errorCode":"5_001","message":"Apple Pay token amount-mismatch","errorType":"validation","pspReference":"TEST000000000003"}"#
      )
      // ISK has 2 decimals at Adyen, 0 in ISO 4217 (the token's): ISK 1,000 is 1000 there, 100000 here.
      let isk = try await Self.send(
        client, server, "/v71/payments",
        Self.payment(
          Self.applePay(try Self.token(factory, amount: 1000, currencyCode: "352")), value: 100_000, currency: "ISK"))
      #expect(isk.status == 200)
      #expect(server.paymentCount == 1)
      #expect(server.pendingNotifications.count == 1)
    }
  }

  @Test("authentication, merchant account, schema and required fields")
  func requestErrors() async throws {
    try await Self.withServer { server, client, factory in
      let token = try Self.token(factory)
      let noKey = try await Self.send(client, server, "/v71/payments", Self.payment(Self.applePay(token)), apiKey: nil)
      #expect(noKey.status == 401)
      #expect(
        noKey.body
          == #"{"status":401,"errorCode":"000","message":"HTTP Status Response - Unauthorized","errorType":"security"}"#
      )
      let wrongKey = try await Self.send(
        client, server, "/v71/payments", Self.payment(Self.applePay(token)), apiKey: "AQEnope")
      #expect(wrongKey.status == 401)
      let account = try await Self.send(
        client, server, "/v71/payments", Self.payment(Self.applePay(token), account: "SomeoneElseECOM"))
      #expect(account.status == 403)
      #expect(
        account.body
          == #"{"status":403,"errorCode":"901","message":"Invalid Merchant Account","errorType":"security","pspReference":"TEST000000000001"}"#
      )
      let unknown = try await Self.send(
        client, server, "/v71/payments", Self.payment(Self.applePay(token), extra: #""captureNow":true"#))
      #expect(unknown.status == 400)
      #expect(
        unknown.body
          == #"{"status":400,"errorCode":"702","message":"Structure of PaymentRequest contains the following unknown fields: [captureNow]","errorType":"validation"}"#
      )
      let notJSON = try await Self.send(client, server, "/v71/payments", #"{"amount":"#)
      #expect(
        notJSON.body
          == #"{"status":400,"errorCode":"702","message":"Unexpected input: end of input","errorType":"validation"}"#)
      let noAmount = try await Self.send(
        client, server, "/v71/payments", #"{"reference":"r","merchantAccount":"\#(Self.account)","paymentMethod":{}}"#)
      #expect(
        noAmount.body
          == #"{"status":422,"errorCode":"100","message":"Required object 'amount' is not provided","errorType":"validation","pspReference":"TEST000000000002"}"#
      )
      let noReference = try await Self.send(
        client, server, "/v71/payments", Self.payment(Self.applePay(token), reference: ""))
      #expect(
        noReference.body
          == #"{"status":422,"errorCode":"130","message":"Required field 'reference' is not provided.","errorType":"validation","pspReference":"TEST000000000003"}"#
      )
      let negative = try await Self.send(client, server, "/v71/payments", Self.payment(Self.applePay(token), value: -1))
      #expect(negative.status == 422)
      #expect(
        negative.body
          == #"{"status":422,"errorCode":"137","message":"Invalid amount specified","errorType":"validation","pspReference":"TEST000000000004"}"#
      )
      let nowhere = try await Self.send(client, server, "/v70/payments", Self.payment(Self.applePay(token)))
      #expect(nowhere.status == 404)
      #expect(server.paymentCount == 0)
      #expect(server.requests.allSatisfy { !$0.body.contains(AdyenTestServer.defaultAPIKey) })
    }
  }
}
