import Foundation
import PayServiceCore
import PayServiceStripe
import PayServiceTestSupport
import Testing

/// An Apple Pay token exactly as Apple Pay JS or PassKit hands it over (the EC_v1 object), taken by
/// authorizePayment with `gateway.kind: stripe`: made a Stripe token with `pk_token` under a key
/// from the payment, its card checked against the claim, and charged by processOrder.
@Suite("Stripe Apple Pay tokens", .serialized)
struct StripeApplePayTokenTests {
  static let cart = StripeCheckoutTests.cart
  static let contact = BackOfficeFixture.contacts[0]
  static let visaCredit = #"{"displayName":"Visa 4320","network":"visa","type":"credit"}"#
  /// Apple's transaction identifier of the vector, as PassKit gives it (upper-case hex).
  static let transactionIdentifier = ApplePayVector.transactionId.uppercased()

  /// authorizePayment's params paying `cart` with `paymentData` (its JSON), claiming `card`.
  static func params(
    _ paymentData: String, card: String = visaCredit, transactionIdentifier: String = transactionIdentifier
  ) -> String {
    #"{"items":\#(cart),"shippingMethod":"free","payment":{"token":{"paymentData":\#(paymentData),"paymentMethod":\#(card),"transactionIdentifier":"\#(transactionIdentifier)"},"shippingContact":\#(contact),"billingContact":\#(contact)}}"#
  }

  /// The vector's token object as JSON.
  static let tokenJSON = JSONWriter.string(JSONValue.object(ApplePayVector.tokenObject))

  /// A form body's pairs, decoded.
  static func pairs(_ body: String) -> [[String]] {
    body.split(separator: "&").map { pair in
      pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
        String($0).removingPercentEncoding ?? "?"
      }
    }
  }

  /// The strings of the vector's token that must never be logged, answered or stored.
  static let secrets = [
    ApplePayVector.tokenObject["data"]!.stringValue!, ApplePayVector.tokenObject["signature"]!.stringValue!,
    ApplePayVector.tokenObject["header"]!["ephemeralPublicKey"]!.stringValue!,
  ]

  /// Whether the log file or the store holds any of the token's encrypted strings.
  static func tokenLeaked(_ fixture: StripeFixture, _ context: ServiceContext) throws -> Bool {
    let log = (try? String(contentsOfFile: fixture.logPath, encoding: .utf8)) ?? ""
    for secret in secrets {
      // The store search takes letters, digits and "_": the longest such run of the base64 text.
      let run = secret.split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }.max { $0.count < $1.count }!
      #expect(run.count >= 16)
      if try log.contains(secret) || context.store.mentions(String(run)) { return true }
    }
    return false
  }

  /// authorizePayment's result, required to be success: the charge token and the processOrder line.
  static func authorized(_ answer: JSONValue) throws -> (token: String, processLine: String) {
    let result = try #require(answer["result"], "\(answer.compact)")
    #expect(result["status"] == .string("success"), "\(answer.compact)")
    #expect(result["errors"] == .array([]))
    let token = try #require(result["chargeToken"]?.stringValue)
    let amount = try #require(result["amount"]?.stringValue)
    return (token, StripeFixture.processLine(token: token, amount: amount, cart: cart, id: 7))
  }

  @Test(
    "the EC_v1 token object is made a Stripe token with pk_token under the payment's key, then charged by processOrder",
    arguments: StoreBackend.available)
  func tokenObjectCharged(backend: StoreBackend) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let context = try fixture.context(backend: backend)
    let handler = fixture.handler(context)
    let checkout = try Self.authorized(handler.call("authorizePayment", Self.params(Self.tokenJSON)))

    let key = try context.identifiers.tokenIdempotencyKey(
      merchant: context.config.merchant.identifier, transactionIdentifier: Self.transactionIdentifier)
    #expect(key.hasPrefix("payservice-token-") && key.count == 49, "\(key)")
    #expect(server.requests.count == 1)
    let sent = try #require(server.requests.first)
    #expect(sent.method == "POST" && sent.path == "/v1/tokens")
    #expect(sent.idempotencyKey == key)
    #expect(sent.stripeVersion == StripeGateway.apiVersion)
    #expect(
      Self.pairs(sent.body) == [
        ["pk_token", Self.tokenJSON], ["pk_token_instrument_name", "Visa 4320"], ["pk_token_payment_network", "visa"],
        ["pk_token_transaction_id", Self.transactionIdentifier],
      ])
    #expect(server.tokensCreated(idempotencyKey: key) == 1)

    let answer = try #require(handler.respond(checkout.processLine))
    let result = try #require(try JSONParser.parse(answer)["result"], "\(answer)")
    #expect(result["status"] == .string("succeeded"), "\(answer)")
    #expect(result["chargeId"] == .string("ch_test000001"))
    #expect(result["order"]?["gatewayPaymentId"] == .string("pi_test000001"))
    #expect(result["order"]?["status"] == .string("paid"))
    let charge = try #require(server.requests.last)
    #expect(charge.path == "/v1/payment_intents")
    #expect(Self.pairs(charge.body).contains(["payment_method", "pm_test000001"]), "\(charge.body)")
    let method = try #require(server.requests.dropLast().last)
    #expect(method.path == "/v1/payment_methods")
    #expect(Self.pairs(method.body).contains(["card[token]", "tok_test000001"]), "\(method.body)")
    #expect(server.paymentIntent("pi_test000001")?["status"] == "succeeded")
    #expect(server.paymentIntentCount == 1)
    #expect(try !fixture.secretLeaked(context))
    #expect(try !Self.tokenLeaked(fixture, context))
  }

  @Test("the token's JSON text is taken as the object is: the same pk_token, and charged")
  func tokenTextCharged() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let context = try fixture.context(backend: .sqlite)
    let handler = fixture.handler(context)
    let text = JSONWriter.string(JSONValue.string(ApplePayVector.tokenText))
    let checkout = try Self.authorized(handler.call("authorizePayment", Self.params(text)))
    #expect(Self.pairs(try #require(server.requests.first).body)[0] == ["pk_token", Self.tokenJSON])
    let answer = try JSONParser.parse(try #require(handler.respond(checkout.processLine)))
    #expect(answer["result"]?["status"] == .string("succeeded"), "\(answer.compact)")
    #expect(server.tokenCount == 1 && server.paymentIntentCount == 1)
    #expect(try !Self.tokenLeaked(fixture, context))
  }

  @Test("a claimed card that Stripe's token contradicts is refused, naming both; no charge token")
  func contradictedClaim() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let context = try fixture.context(backend: .sqlite)
    let handler = fixture.handler(context)
    func result(_ card: String, _ transaction: String) -> JSONValue? {
      handler.call("authorizePayment", Self.params(Self.tokenJSON, card: card, transactionIdentifier: transaction))["result"]
    }
    let debit = result(#"{"displayName":"Visa 7000","network":"visa","type":"debit"}"#, "T1")
    #expect(debit?["status"] == .string("failure"))
    #expect(
      debit?["errors"]
        == .array([
          .object(
            JSONObject([
              ("code", .string("unknown")),
              (
                "message",
                .string(
                  "the card's network and type are visa credit (by Stripe's token tok_test000001 from the Apple Pay payment, brand Visa), but payment.token.paymentMethod says visa debit"
                )
              ),
            ]))
        ]))
    #expect(debit?["chargeToken"] == nil)
    // Stripe decrypted an Amex card (the test server's card named by the instrument name).
    let amex = result(#"{"displayName":"amex","network":"visa","type":"credit"}"#, "T2")
    #expect(
      amex?["errors"]?[0]?["message"]
        == .string(
          "the card's network and type are amex credit (by Stripe's token tok_test000002 from the Apple Pay payment, brand American Express), but payment.token.paymentMethod says visa credit"
        ))
    #expect(server.tokenCount == 2)
    #expect(server.paymentIntentCount == 0)
    #expect(try context.store.mentions("tok_test00000") == false)
  }

  @Test("an invalid pk_token is a failure naming Stripe's reason; nothing is issued")
  func invalidToken() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let context = try fixture.context(backend: .sqlite)
    let handler = fixture.handler(context)
    for paymentData in [
      #"{"version":"EC_v1","data":"x","signature":"y","header":{}}"#,
      JSONWriter.string(JSONValue.string(#"{"version":"EC_v1","data":"x","signature":"y","header":{}}"#)),
    ] {
      let answer = handler.call("authorizePayment", Self.params(paymentData))
      let result = try #require(answer["result"], "\(answer.compact)")
      #expect(result["status"] == .string("failure"))
      #expect(
        result["errors"]?.compact
          == #"[{"code":"unknown","message":"Stripe could not use the Apple Pay payment (invalid_request_error): Invalid pk_token: header.transactionId must be a non-empty string."}]"#
      )
      #expect(result["chargeToken"] == nil)
    }
    #expect(server.tokenCount == 0)
    // An object that is not a token at all still reaches Stripe (which says why); text that starts
    // with "{" but is not an object is -32602, as with the sandbox.
    let broken = handler.call("authorizePayment", Self.params(#""{not json""#))
    #expect(broken["error"]?["code"] == .number("-32602"))
    #expect(
      broken["error"]?["data"]?["errors"]?.compact
        == #"[{"path":"payment.token.paymentData","message":"starts with \"{\" but is not the JSON text of an object"}]"#)
  }

  @Test("a card error when Stripe tokenizes is a failure with Stripe's message, the token's text taken out")
  func cardErrorAtTokenization() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let context = try fixture.context(backend: .sqlite)
    let handler = fixture.handler(context)
    let data = Self.secrets[0]
    let body =
      #"{"error":{"code":"card_declined","decline_code":"generic_decline","message":"Your card was declined (\#(data)).","type":"card_error"}}"#
    server.inject(
      .answerWithoutExecuting(status: 402, headers: [("Content-Type", "application/json")], body: body), on: .createToken)
    let result = handler.call("authorizePayment", Self.params(Self.tokenJSON))["result"]
    #expect(result?["status"] == .string("failure"))
    #expect(
      result?["errors"]?.compact
        == #"[{"code":"unknown","message":"Stripe declined the Apple Pay payment: Your card was declined ([the Apple Pay token])."}]"#
    )
    #expect(try !Self.tokenLeaked(fixture, context))
  }

  @Test(
    "Stripe unanswered is a failure saying to authorize again; the same authorizePayment again sends the same Idempotency-Key, and Stripe answers its one token"
  )
  func unansweredThenRetried() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server, requestTimeoutSeconds: 1)
    let context = try fixture.context(backend: .sqlite)
    let handler = fixture.handler(context)
    server.inject(.resetAfterExecuting, on: .createToken)
    let lost = handler.call("authorizePayment", Self.params(Self.tokenJSON))["result"]
    #expect(lost?["status"] == .string("failure"))
    #expect(
      lost?["errors"]?.compact
        == #"[{"code":"unknown","message":"Stripe did not answer (the connection failed); authorize again"}]"#)
    #expect(lost?["chargeToken"] == nil)
    #expect(server.tokenCount == 1)

    let checkout = try Self.authorized(handler.call("authorizePayment", Self.params(Self.tokenJSON)))
    let again = try Self.authorized(handler.call("authorizePayment", Self.params(Self.tokenJSON)))
    let posts = server.requests.filter { $0.path == "/v1/tokens" }
    #expect(posts.count == 3)
    #expect(Set(posts.map(\.idempotencyKey)).count == 1)
    #expect(posts.map(\.replayed) == [false, true, true])
    #expect(server.tokenCount == 1)
    #expect(checkout.token != again.token)
    // Either charge token charges Stripe's one token; the first order uses it.
    let paid = try JSONParser.parse(try #require(handler.respond(again.processLine)))
    #expect(paid["result"]?["status"] == .string("succeeded"), "\(paid.compact)")
    #expect(server.paymentIntentCount == 1)
  }

  @Test("a token of a declining card authorizes, and processOrder is declined by Stripe with its decline code")
  func decliningCard() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let context = try fixture.context(backend: .sqlite)
    let handler = fixture.handler(context)
    let card = #"{"displayName":"visa_chargeDeclinedInsufficientFunds","network":"visa","type":"credit"}"#
    let checkout = try Self.authorized(handler.call("authorizePayment", Self.params(Self.tokenJSON, card: card)))
    let answer = try #require(handler.respond(checkout.processLine))
    #expect(
      answer
        == #"{"jsonrpc":"2.0","id":7,"result":{"status":"failed","failureCode":"card_declined","declineCode":"insufficient_funds","chargeId":"ch_test000001","message":"Your card has insufficient funds."}}"#
    )
    #expect(try StripeCheckoutTests.stock(context) == 100)
  }

  @Test("with an applePay section in the config too, the token goes to Stripe: payservice does not decrypt it")
  func applePaySectionIgnored() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let directory = ApplePayVector.directory
    // The vector's merchant, whose Payment Processing Certificate and key these are.
    let yaml = try String(contentsOfFile: fixture.configPath, encoding: .utf8).replacingOccurrences(
      of: "identifier: merchant.com.example.acme", with: "identifier: merchant.com.seatgeek.SeatGeek") + """

      applePay:
        merchantCertificate: \(directory)/merchant_certificate.pem
        merchantPrivateKey: \(directory)/merchant_private_key.pem

      """
    try yaml.write(toFile: fixture.configPath, atomically: true, encoding: .utf8)
    let context = try fixture.context(backend: .sqlite)
    #expect(context.config.applePay != nil)
    let handler = fixture.handler(context)
    // The vector's token is for 1.00 USD and signed in 2014: payservice's own checks would refuse it.
    let checkout = try Self.authorized(handler.call("authorizePayment", Self.params(Self.tokenJSON)))
    #expect(server.tokenCount == 1)
    let answer = try JSONParser.parse(try #require(handler.respond(checkout.processLine)))
    #expect(answer["result"]?["status"] == .string("succeeded"), "\(answer.compact)")
  }
}
