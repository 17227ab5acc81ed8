import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The Apple Pay token object through the built binary with `gateway.kind: stripe`, against the
/// Stripe test server: authorized (twice, as a client that lost the first answer would), made one
/// Stripe token, charged by processOrder in a later process; the token's encrypted strings on no
/// stdout or stderr line.
@Suite("Stripe Apple Pay tokens, end to end", .serialized)
struct StripeApplePayTokenEndToEndTests {
  static let cart = #"[{"sku":"mug","quantity":2}]"#
  static let tokenJSON = JSONWriter.string(JSONValue.object(ApplePayVector.tokenObject))
  static let secrets = [
    ApplePayVector.tokenObject["data"]!.stringValue!, ApplePayVector.tokenObject["signature"]!.stringValue!,
    ApplePayVector.tokenObject["header"]!["ephemeralPublicKey"]!.stringValue!,
  ]

  static func authorizeLine(id: Int) -> String {
    let contact = BackOfficeFixture.contacts[0]
    return #"{"jsonrpc":"2.0","id":\#(id),"method":"authorizePayment","params":{"items":\#(cart),"shippingMethod":"free","payment":{"token":{"paymentData":\#(tokenJSON),"paymentMethod":{"displayName":"Visa 4320","network":"Visa","type":"credit"},"transactionIdentifier":"\#(ApplePayVector.transactionId.uppercased())"},"shippingContact":\#(contact),"billingContact":\#(contact)}}}"#
  }

  static func run(_ fixture: StripeFixture, database: String, _ lines: [String]) throws -> (answers: [JSONValue], output: String) {
    let result = try PayserviceProcess.run(
      ["--config", fixture.configPath, "--database", database, "--now", "2026-11-21T12:05:00Z"],
      stdin: Data((lines.joined(separator: "\n") + "\n").utf8), environment: fixture.environment)
    #expect(result.status == 0, "\(result.stderr)")
    let answers = try result.stdoutText.split(separator: "\n").map { try JSONParser.parse(String($0)) }
    return (answers, result.stdoutText + result.stderr)
  }

  @Test(
    "the EC_v1 object sent twice makes one Stripe token under one Idempotency-Key, and processOrder charges it; no token data in any output",
    arguments: StoreBackend.available)
  func tokenObjectCharged(backend: StoreBackend) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let database = try backend.freshDatabase()
    let authorized = try Self.run(fixture, database: database, [Self.authorizeLine(id: 1), Self.authorizeLine(id: 2)])
    #expect(authorized.answers.count == 2)
    for answer in authorized.answers {
      #expect(answer["result"]?["status"] == .string("success"), "\(answer.compact)")
      #expect(answer["result"]?["errors"] == .array([]))
    }
    let posts = server.requests.filter { $0.path == "/v1/tokens" }
    #expect(posts.count == 2)
    #expect(posts.map(\.replayed) == [false, true])
    #expect(posts[0].idempotencyKey == posts[1].idempotencyKey)
    #expect(posts[0].idempotencyKey?.hasPrefix("payservice-token-") == true)
    #expect(server.tokenCount == 1)

    let result = try #require(authorized.answers.last?["result"])
    let line = StripeFixture.processLine(
      token: try #require(result["chargeToken"]?.stringValue), amount: try #require(result["amount"]?.stringValue),
      cart: Self.cart, id: 3)
    let charged = try Self.run(fixture, database: database, [line])
    let order = try #require(charged.answers.first?["result"])
    #expect(order["status"] == .string("succeeded"), "\(charged.output)")
    #expect(order["chargeId"] == .string("ch_test000001"))
    #expect(order["order"]?["gatewayPaymentId"] == .string("pi_test000001"))
    #expect(server.requests.last?.body.contains("payment_method=pm_test000001") == true)
    #expect(server.requests.dropLast().last?.body == "type=card&card%5Btoken%5D=tok_test000001")
    #expect(server.paymentIntentCount == 1)
    for output in [authorized.output, charged.output] {
      for secret in Self.secrets + [server.secretKey] { #expect(!output.contains(secret)) }
      #expect(!output.contains("Visa 4320"))
    }
    // The log's lines name the methods (one line per request), not their params.
    #expect(authorized.output.contains(#"method="authorizePayment""#), "\(authorized.output)")
  }

  @Test("through the binary, Stripe not answering the token is a failure saying to authorize again")
  func unanswered() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server, requestTimeoutSeconds: 1)
    server.inject(.resetAfterExecuting, on: .createToken)
    let run = try Self.run(fixture, database: try StoreBackend.sqlite.freshDatabase(), [Self.authorizeLine(id: 1)])
    let result = try #require(run.answers.first?["result"])
    #expect(result["status"] == .string("failure"))
    #expect(
      result["errors"]?.compact
        == #"[{"code":"unknown","message":"Stripe did not answer (the connection failed); authorize again"}]"#)
    #expect(result["chargeToken"] == nil)
    for secret in Self.secrets { #expect(!run.output.contains(secret)) }
  }
}
