import AsyncHTTPClient
import Foundation
import PayServiceTestSupport
import Testing

/// `POST /v1/tokens` with `pk_token`: the Stripe test server making card tokens from Apple Pay
/// tokens, as Stripe's mobile SDKs ask for them.
extension StripeTestServerTests {
  /// The form Stripe's SDKs send for an Apple Pay payment.
  static func applePayForm(
    _ pkToken: String = ApplePayVector.tokenText, name: String? = "Visa 4320", network: String? = "Visa",
    transactionId: String = ApplePayVector.transactionId.uppercased()
  ) -> [(String, String)] {
    var pairs = [("pk_token", pkToken)]
    if let name { pairs.append(("pk_token_instrument_name", name)) }
    if let network { pairs.append(("pk_token_payment_network", network)) }
    return pairs + [("pk_token_transaction_id", transactionId)]
  }

  @Test("an Apple Pay token becomes Stripe's token object, its card from the network, chargeable once")
  func applePayToken() async throws {
    try await Self.withServer { server, client in
      let answer = try await Self.send(client, server, "/v1/tokens", form: Self.applePayForm(), idempotencyKey: "tk-1")
      #expect(answer.status == 200, "\(answer.body)")
      let token = answer.json
      #expect(token["id"] as? String == "tok_test000001")
      #expect(token["object"] as? String == "token")
      #expect(token["type"] as? String == "card")
      #expect(token["used"] as? Bool == false)
      #expect(token["livemode"] as? Bool == false)
      let card = try #require(token["card"] as? [String: Any])
      #expect(card["id"] as? String == "card_test000001")
      #expect(card["object"] as? String == "card")
      #expect(card["brand"] as? String == "Visa")
      #expect(card["funding"] as? String == "credit")
      #expect(card["last4"] as? String == "4242")
      #expect(card["dynamic_last4"] as? String == "4242")
      #expect(card["tokenization_method"] as? String == "apple_pay")
      #expect(server.tokenCount == 1)
      #expect(server.tokensCreated(idempotencyKey: "tk-1") == 1)

      let tokenForm: [(String, String)] = [("type", "card"), ("card[token]", "tok_test000001")]
      let method = try await Self.send(client, server, "/v1/payment_methods", form: tokenForm, idempotencyKey: "pm-1")
      #expect(method.status == 200, "\(method.body)")
      let methodId = try #require(method.json["id"] as? String)
      let charged = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge(methodId), idempotencyKey: "pi-1")
      #expect(charged.status == 200, "\(charged.body)")
      #expect(charged.json["status"] as? String == "succeeded")
      let again = try await Self.send(client, server, "/v1/payment_methods", form: tokenForm, idempotencyKey: "pm-2")
      #expect(again.status == 400)
      #expect(again.error["code"] as? String == "token_already_used")
      #expect(again.error["message"] as? String == "You cannot use a Stripe token more than once: tok_test000001.")
      let read = try await Self.send(client, server, "/v1/tokens/tok_test000001", method: "GET")
      #expect(read.status == 200)
      #expect(read.json["used"] as? Bool == true)
      #expect((read.json["card"] as? [String: Any])?["brand"] as? String == "Visa")
    }
  }

  @Test(
    "the network picks the card, any case; an instrument name naming a test card makes that card",
    arguments: [
      ("masterCard", "MasterCard 4444", "MasterCard", "credit", "4444"),
      ("AmEx", "Amex 8431", "American Express", "credit", "8431"),
      ("chinaUnionPay", "UnionPay 0005", "UnionPay", "credit", "0005"),
      ("visa", "visa_debit", "Visa", "debit", "5556"),
      ("visa", "amex", "American Express", "credit", "8431"),
      ("privateLabel", "visa_chargeDeclinedInsufficientFunds", "Visa", "credit", "9995"),
    ])
  func applePayTokenCards(network: String, name: String, brand: String, funding: String, last4: String) async throws {
    try await Self.withServer { server, client in
      let answer = try await Self.send(
        client, server, "/v1/tokens", form: Self.applePayForm(name: name, network: network), idempotencyKey: "tk")
      #expect(answer.status == 200, "\(answer.body)")
      let card = answer.json["card"] as? [String: Any]
      #expect(card?["brand"] as? String == brand)
      #expect(card?["funding"] as? String == funding)
      #expect(card?["last4"] as? String == last4)
    }
  }

  @Test("a token of a declining test card is declined when a PaymentIntent charges it")
  func applePayTokenDeclines() async throws {
    try await Self.withServer { server, client in
      let made = try await Self.send(
        client, server, "/v1/tokens", form: Self.applePayForm(name: "visa_chargeDeclinedInsufficientFunds"),
        idempotencyKey: "tk")
      let id = try #require(made.json["id"] as? String)
      let method = try await Self.send(
        client, server, "/v1/payment_methods", form: [("type", "card"), ("card[token]", id)], idempotencyKey: "pm")
      let methodId = try #require(method.json["id"] as? String, "\(method.body)")
      let charged = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge(methodId), idempotencyKey: "pi")
      #expect(charged.status == 402)
      #expect(charged.error["type"] as? String == "card_error")
      #expect(charged.error["code"] as? String == "card_declined")
      #expect(charged.error["decline_code"] as? String == "insufficient_funds")
      #expect(charged.error["message"] as? String == "Your card has insufficient funds.")
    }
  }

  @Test(
    "a pk_token that is not an Apple Pay token, or a network without a card, is 400 naming the param; nothing is saved under the key",
    arguments: [
      (nil as String?, "Visa", "pk_token", "Missing required param: pk_token."),
      ("not json", "Visa", "pk_token",
       "Invalid pk_token: it must be the JSON text of an Apple Pay payment token (PKPaymentToken.paymentData)."),
      ("[1]", "Visa", "pk_token",
       "Invalid pk_token: it must be the JSON text of an Apple Pay payment token (PKPaymentToken.paymentData)."),
      (#"{"version":"EC_v2","data":"x","signature":"y","header":{"transactionId":"t"}}"#, "Visa", "pk_token",
       "Invalid pk_token: version must be EC_v1 or RSA_v1."),
      (#"{"version":"EC_v1","signature":"y","header":{"transactionId":"t"}}"#, "Visa", "pk_token",
       "Invalid pk_token: data must be a non-empty string."),
      (#"{"version":"RSA_v1","data":"x","signature":"","header":{"transactionId":"t"}}"#, "Visa", "pk_token",
       "Invalid pk_token: signature must be a non-empty string."),
      (#"{"version":"EC_v1","data":"x","signature":"y","header":"h"}"#, "Visa", "pk_token",
       "Invalid pk_token: header must be an object."),
      (#"{"version":"EC_v1","data":"x","signature":"y","header":{}}"#, "Visa", "pk_token",
       "Invalid pk_token: header.transactionId must be a non-empty string."),
      (ApplePayVector.tokenText, "interac", "pk_token_payment_network",
       "This test server has no card for the Apple Pay network 'interac': use visa, masterCard, amex, discover, JCB or chinaUnionPay, or a test card's name as pk_token_instrument_name."),
    ])
  func applePayTokenInvalid(pkToken: String?, network: String, param: String, message: String) async throws {
    try await Self.withServer { server, client in
      var form = Self.applePayForm(network: network)
      if let pkToken { form[0].1 = pkToken } else { form.removeFirst() }
      let answer = try await Self.send(client, server, "/v1/tokens", form: form, idempotencyKey: "tk")
      #expect(answer.status == 400)
      #expect(answer.error["type"] as? String == "invalid_request_error")
      #expect(answer.error["param"] as? String == param)
      #expect(answer.error["message"] as? String == message)
      #expect(server.tokenCount == 0)
      // Nothing was saved under the key: a valid form with it makes the token.
      let valid = try await Self.send(client, server, "/v1/tokens", form: Self.applePayForm(), idempotencyKey: "tk")
      #expect(valid.status == 200)
      #expect(valid.header("Idempotent-Replayed") == nil)
      #expect(server.tokenCount == 1)
    }
  }

  @Test("the same key and form answer the same token again; another form under the key is an idempotency_error")
  func applePayTokenIdempotency() async throws {
    try await Self.withServer { server, client in
      let first = try await Self.send(client, server, "/v1/tokens", form: Self.applePayForm(), idempotencyKey: "tk")
      let second = try await Self.send(client, server, "/v1/tokens", form: Self.applePayForm(), idempotencyKey: "tk")
      #expect(second.status == 200)
      #expect(second.body == first.body)
      #expect(second.header("Idempotent-Replayed") == "true")
      #expect(server.tokenCount == 1)
      #expect(server.tokensCreated(idempotencyKey: "tk") == 1)
      let other = try await Self.send(
        client, server, "/v1/tokens", form: Self.applePayForm(network: "masterCard"), idempotencyKey: "tk")
      #expect(other.status == 400)
      #expect(other.error["type"] as? String == "idempotency_error")
      #expect(server.tokenCount == 1)
    }
  }
}
