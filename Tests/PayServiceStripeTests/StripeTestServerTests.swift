import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import PayServiceTestSupport
import Testing

/// The Stripe test server, through a real AsyncHTTPClient over TLS that trusts only the server's CA.
@Suite("Stripe test server", .serialized)
struct StripeTestServerTests {
  /// An answer as a client sees it.
  struct Answer {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: String
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
    var error: [String: Any] { json["error"] as? [String: Any] ?? [:] }
    func header(_ name: String) -> String? {
      headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
  }

  static func encode(_ text: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return text.addingPercentEncoding(withAllowedCharacters: allowed)!
  }

  static func form(_ pairs: [(String, String)]) -> String {
    pairs.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
  }

  static func charge(
    _ source: String, amount: Int = 1999, capture: String? = nil, extra: [(String, String)] = []
  ) -> [(String, String)] {
    var pairs = [("amount", String(amount)), ("currency", "usd"), ("confirm", "true")]
    if let capture { pairs.append(("capture_method", capture)) }
    // A test token's card as its test PaymentMethod: Stripe's spec has no payment_method_data[card]
    // (tokens become PaymentMethods by POST /v1/payment_methods, see tokenReuse).
    pairs.append(("payment_method", source.hasPrefix("tok_") ? "pm_card_" + source.dropFirst(4) : source))
    return pairs + [("payment_method_types[]", "card")] + extra
  }

  /// A fresh server and a client trusting its CA, shut down after `body`.
  static func withServer(_ body: (StripeTestServer, HTTPClient) async throws -> Void) async throws {
    let server = try StripeTestServer()
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(server.caCertificatePEM.utf8)))
    let client = HTTPClient(
      eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
    do {
      try await body(server, client)
    } catch {
      try? await client.shutdown()
      server.shutdown()
      throw error
    }
    try await client.shutdown()
    server.shutdown()
  }

  static func send(
    _ client: HTTPClient, _ server: StripeTestServer, _ path: String, method: String = "POST",
    form: [(String, String)] = [], idempotencyKey: String? = nil, authorization: String? = "default",
    timeout: TimeAmount = TimeAmount.seconds(60)
  ) async throws -> Answer {
    var request = HTTPClientRequest(url: server.baseURL + path)
    request.method = .init(rawValue: method)
    if let authorization {
      request.headers.add(
        name: "Authorization", value: authorization == "default" ? "Bearer \(server.secretKey)" : authorization)
    }
    request.headers.add(name: "Stripe-Version", value: "2024-06-20")
    if let idempotencyKey { request.headers.add(name: "Idempotency-Key", value: idempotencyKey) }
    if method == "POST" {
      request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
      request.body = .bytes(ByteBuffer(string: Self.form(form)))
    }
    let response = try await client.execute(request, timeout: timeout)
    let body = try await response.body.collect(upTo: 1 << 20)
    return Answer(
      status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
      body: String(buffer: body))
  }

  @Test("A tok_visa charge over TLS succeeds with Stripe's PaymentIntent")
  func chargeSucceeds() async throws {
    try await Self.withServer { server, client in
      #expect(server.baseURL == "https://127.0.0.1:\(server.port)")
      let answer = try await Self.send(
        client, server, "/v1/payment_intents",
        form: Self.charge("tok_visa", extra: [("metadata[order_id]", "ord 1/ä"), ("metadata[note]", "a+b&c")]),
        idempotencyKey: "key-visa")
      #expect(answer.status == 200)
      #expect(answer.header("Content-Type") == "application/json")
      #expect(answer.header("Request-Id") == "req_test000001")
      #expect(answer.header("Idempotent-Replayed") == nil)
      let intent = answer.json
      #expect(intent["id"] as? String == "pi_test000001")
      #expect(intent["object"] as? String == "payment_intent")
      #expect(intent["status"] as? String == "succeeded")
      #expect(intent["amount"] as? Int == 1999)
      #expect(intent["amount_received"] as? Int == 1999)
      #expect(intent["amount_capturable"] as? Int == 0)
      #expect(intent["currency"] as? String == "usd")
      #expect(intent["capture_method"] as? String == "automatic")
      #expect(intent["latest_charge"] as? String == "ch_test000001")
      #expect(intent["payment_method"] as? String == "pm_test000001")
      #expect(intent["metadata"] as? [String: String] == ["order_id": "ord 1/ä", "note": "a+b&c"])
      let stored = server.paymentIntent("pi_test000001")
      #expect(stored?["status"] == "succeeded")
      #expect(stored?["amount_received"] == "1999")
      #expect(stored?["metadata[order_id]"] == "ord 1/ä")
      #expect(server.paymentIntentCount == 1)
      #expect(server.paymentIntentsCreated(idempotencyKey: "key-visa") == 1)
      let recorded = try #require(server.requests.first)
      #expect(recorded.method == "POST")
      #expect(recorded.path == "/v1/payment_intents")
      #expect(recorded.idempotencyKey == "key-visa")
      #expect(recorded.stripeVersion == "2024-06-20")
      #expect(recorded.status == 200)
      #expect(recorded.replayed == false)
      #expect(recorded.body.contains("payment_method=pm_card_visa"))
      #expect(!recorded.body.contains(server.secretKey))

      let fetched = try await Self.send(client, server, "/v1/payment_intents/pi_test000001", method: "GET")
      #expect(fetched.status == 200)
      #expect(fetched.json["status"] as? String == "succeeded")
      let charge = try await Self.send(client, server, "/v1/charges/ch_test000001", method: "GET")
      #expect(charge.json["amount_captured"] as? Int == 1999)
      #expect(charge.json["captured"] as? Bool == true)
    }
  }

  @Test("A client that does not trust the server's CA fails the TLS handshake")
  func untrustedCertificateFails() async throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    var request = HTTPClientRequest(url: server.baseURL + "/v1/payment_intents")
    request.method = .POST
    await #expect(throws: (any Error).self) { _ = try await client.execute(request, timeout: .seconds(1)) }
    try await client.shutdown()
    #expect(server.requests.isEmpty)
  }

  @Test("A declined card answers 402 with Stripe's card_error and stores the declined intent")
  func declines() async throws {
    try await Self.withServer { server, client in
      let answer = try await Self.send(client, server, "/v1/payment_intents", form: Self.charge("tok_chargeDeclined"))
      #expect(answer.status == 402)
      let error = answer.error
      #expect(error["type"] as? String == "card_error")
      #expect(error["code"] as? String == "card_declined")
      #expect(error["decline_code"] as? String == "generic_decline")
      #expect(error["message"] as? String == "Your card was declined.")
      #expect(error["charge"] as? String == "ch_test000001")
      #expect(error["doc_url"] as? String == "https://stripe.com/docs/error-codes/card-declined")
      let intent = try #require(error["payment_intent"] as? [String: Any])
      #expect(intent["id"] as? String == "pi_test000001")
      #expect(intent["status"] as? String == "requires_payment_method")
      #expect(intent["amount_received"] as? Int == 0)
      #expect((intent["last_payment_error"] as? [String: Any])?["decline_code"] as? String == "generic_decline")
      #expect(server.paymentIntent("pi_test000001")?["status"] == "requires_payment_method")
      #expect(server.paymentIntentCount == 1)

      let insufficient = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge("pm_card_chargeDeclinedInsufficientFunds"))
      #expect(insufficient.status == 402)
      #expect(insufficient.error["code"] as? String == "card_declined")
      #expect(insufficient.error["decline_code"] as? String == "insufficient_funds")
      #expect(insufficient.error["message"] as? String == "Your card has insufficient funds.")

      let expired = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge("tok_chargeDeclinedExpiredCard"))
      #expect(expired.status == 402)
      #expect(expired.error["code"] as? String == "expired_card")
      #expect(expired.error["message"] as? String == "Your card has expired.")

      let cvc = try await Self.send(client, server, "/v1/payment_intents", form: Self.charge("tok_chargeDeclinedIncorrectCvc"))
      #expect(cvc.error["code"] as? String == "incorrect_cvc")
      let processing = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge("pm_card_chargeDeclinedProcessingError"))
      #expect(processing.error["code"] as? String == "processing_error")

      let unknownToken = try await Self.send(
        client, server, "/v1/payment_methods", form: [("type", "card"), ("card[token]", "tok_nope")])
      #expect(unknownToken.status == 400)
      #expect(unknownToken.error["code"] as? String == "resource_missing")
      #expect(unknownToken.error["message"] as? String == "No such token: 'tok_nope'")
      #expect(unknownToken.error["param"] as? String == "card[token]")
      let undocumented = try await Self.send(
        client, server, "/v1/payment_intents",
        form: [
          ("amount", "1999"), ("currency", "usd"), ("confirm", "true"), ("payment_method_data[type]", "card"),
          ("payment_method_data[card][token]", "tok_visa"),
        ])
      #expect(undocumented.status == 400)
      #expect(undocumented.error["code"] as? String == "parameter_unknown")
      #expect(undocumented.error["message"] as? String == "Received unknown parameter: payment_method_data[card]")
      let unknownMethod = try await Self.send(client, server, "/v1/payment_intents", form: Self.charge("pm_nope"))
      #expect(unknownMethod.status == 400)
      #expect(unknownMethod.error["message"] as? String == "No such PaymentMethod: 'pm_nope'")
      #expect(unknownMethod.error["param"] as? String == "payment_method")
    }
  }

  @Test("Authentication failures answer 401, mask the key, and save nothing under the idempotency key")
  func authentication() async throws {
    try await Self.withServer { server, client in
      let wrongKey = "sk_test_wrongwrongwrong9876"
      let wrong = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa"), idempotencyKey: "key-auth",
        authorization: "Bearer \(wrongKey)")
      #expect(wrong.status == 401)
      #expect(wrong.error["type"] as? String == "invalid_request_error")
      #expect(wrong.error["message"] as? String == "Invalid API Key provided: sk_test_***************9876")
      #expect(!wrong.body.contains(wrongKey))
      let missing = try await Self.send(client, server, "/v1/payment_intents", form: [], authorization: nil)
      #expect(missing.status == 401)
      #expect((missing.error["message"] as? String)?.hasPrefix("You did not provide an API key.") == true)
      #expect(server.paymentIntentCount == 0)

      let basic = "Basic " + Data((server.secretKey + ":").utf8).base64EncodedString()
      let accepted = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa"), idempotencyKey: "key-auth",
        authorization: basic)
      #expect(accepted.status == 200)
      #expect(accepted.header("Idempotent-Replayed") == nil)
      #expect(server.paymentIntentsCreated(idempotencyKey: "key-auth") == 1)
      #expect(server.requests.map(\.status) == [401, 401, 200])
    }
  }

  @Test("A retry with the same key and parameters replays the saved answer byte for byte")
  func replay() async throws {
    try await Self.withServer { server, client in
      let form = Self.charge("tok_visa", extra: [("metadata[order_id]", "ord_2")])
      let first = try await Self.send(client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-replay")
      let second = try await Self.send(client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-replay")
      #expect(first.status == 200)
      #expect(second.status == 200)
      #expect(second.body == first.body)
      #expect(second.header("Idempotent-Replayed") == "true")
      #expect(second.header("Original-Request") == first.header("Request-Id"))
      #expect(second.header("Request-Id") != first.header("Request-Id"))
      #expect(server.paymentIntentsCreated(idempotencyKey: "key-replay") == 1)
      #expect(server.paymentIntentCount == 1)
      #expect(server.requests.map(\.replayed) == [false, true])

      // A declined charge is saved too: its retry replays the 402 without a second attempt.
      let declined = Self.charge("pm_card_chargeDeclined")
      let decline = try await Self.send(client, server, "/v1/payment_intents", form: declined, idempotencyKey: "key-402")
      let again = try await Self.send(client, server, "/v1/payment_intents", form: declined, idempotencyKey: "key-402")
      #expect(decline.status == 402)
      #expect(again.status == 402)
      #expect(again.body == decline.body)
      #expect(again.header("Idempotent-Replayed") == "true")
      #expect(server.paymentIntentCount == 2)
    }
  }

  @Test("The same key with other parameters or another endpoint is an idempotency_error")
  func keyMisuse() async throws {
    try await Self.withServer { server, client in
      let first = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa", amount: 1000),
        idempotencyKey: "key-misuse")
      #expect(first.status == 200)
      let other = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa", amount: 2000),
        idempotencyKey: "key-misuse")
      #expect(other.status == 400)
      #expect(other.error["type"] as? String == "idempotency_error")
      #expect(
        other.error["message"] as? String
          == "Keys for idempotent requests can only be used with the same parameters they were first used with. "
          + "Try using a key other than 'key-misuse' if you meant to execute a different request.")
      let refund = try await Self.send(
        client, server, "/v1/refunds", form: [("payment_intent", "pi_test000001")], idempotencyKey: "key-misuse")
      #expect(refund.status == 400)
      #expect(refund.error["type"] as? String == "idempotency_error")
      #expect(server.paymentIntentsCreated(idempotencyKey: "key-misuse") == 1)
      #expect(server.refundCount == 0)
      // Reordered parameters are the same parameters.
      let reordered = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa", amount: 1000).reversed(),
        idempotencyKey: "key-misuse")
      #expect(reordered.status == 200)
      #expect(reordered.header("Idempotent-Replayed") == "true")
    }
  }

  @Test("Parameter validation errors answer 400 and are not saved")
  func validation() async throws {
    try await Self.withServer { server, client in
      var form = Self.charge("pm_card_visa")
      form.removeFirst()
      let missing = try await Self.send(client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-valid")
      #expect(missing.status == 400)
      #expect(missing.error["type"] as? String == "invalid_request_error")
      #expect(missing.error["code"] as? String == "parameter_missing")
      #expect(missing.error["param"] as? String == "amount")
      #expect(missing.error["message"] as? String == "Missing required param: amount.")
      let unknown = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa", extra: [("colour", "red")]))
      #expect(unknown.error["code"] as? String == "parameter_unknown")
      #expect(unknown.error["message"] as? String == "Received unknown parameter: colour")
      let badAmount = try await Self.send(client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa", amount: 0))
      #expect(badAmount.status == 400)
      #expect(badAmount.error["param"] as? String == "amount")
      let small = try await Self.send(client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa", amount: 20))
      #expect(small.error["code"] as? String == "amount_too_small")
      #expect(small.error["message"] as? String == "Amount must be at least $0.50 usd")
      let currency = try await Self.send(
        client, server, "/v1/payment_intents",
        form: [("amount", "100"), ("currency", "xyz"), ("confirm", "true"), ("payment_method", "pm_card_visa")])
      #expect(currency.error["param"] as? String == "currency")
      let capture = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa", capture: "later"))
      #expect(capture.error["param"] as? String == "capture_method")
      let indexed = try await Self.send(
        client, server, "/v1/payment_intents",
        form: [
          ("amount", "100"), ("currency", "eur"), ("confirm", "true"), ("capture_method", "automatic_async"),
          ("payment_method", "pm_card_mastercard"), ("payment_method_types[0]", "card"),
        ])
      #expect(indexed.status == 200)
      #expect(indexed.json["currency"] as? String == "eur")

      let valid = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa"), idempotencyKey: "key-valid")
      #expect(valid.status == 200)
      #expect(valid.header("Idempotent-Replayed") == nil)
      #expect(server.paymentIntentsCreated(idempotencyKey: "key-valid") == 1)
      let unrouted = try await Self.send(client, server, "/v1/subscriptions", form: [])
      #expect(unrouted.status == 404)
    }
  }

  @Test("Manual capture, partial capture, refunds, and an over-refund rejected")
  func captureAndRefund() async throws {
    try await Self.withServer { server, client in
      let created = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge("tok_mastercard", amount: 5000, capture: "manual"))
      #expect(created.json["status"] as? String == "requires_capture")
      #expect(created.json["amount_capturable"] as? Int == 5000)
      #expect(created.json["amount_received"] as? Int == 0)
      let id = try #require(created.json["id"] as? String)

      let early = try await Self.send(client, server, "/v1/refunds", form: [("payment_intent", id)])
      #expect(early.status == 400)
      #expect(early.error["type"] as? String == "invalid_request_error")
      let tooMuch = try await Self.send(
        client, server, "/v1/payment_intents/\(id)/capture", form: [("amount_to_capture", "6000")])
      #expect(tooMuch.status == 400)
      #expect(tooMuch.error["param"] as? String == "amount_to_capture")

      let captured = try await Self.send(
        client, server, "/v1/payment_intents/\(id)/capture", form: [("amount_to_capture", "3000")],
        idempotencyKey: "key-capture")
      #expect(captured.status == 200)
      #expect(captured.json["status"] as? String == "succeeded")
      #expect(captured.json["amount_received"] as? Int == 3000)
      #expect(captured.json["amount_capturable"] as? Int == 0)
      let twice = try await Self.send(client, server, "/v1/payment_intents/\(id)/capture", form: [])
      #expect(twice.status == 400)
      #expect(twice.error["code"] as? String == "payment_intent_unexpected_state")

      let refund = try await Self.send(
        client, server, "/v1/refunds",
        form: [("payment_intent", id), ("amount", "1000"), ("reason", "requested_by_customer"), ("metadata[order_id]", "o1")],
        idempotencyKey: "key-refund-1")
      #expect(refund.status == 200)
      #expect(refund.json["id"] as? String == "re_test000001")
      #expect(refund.json["object"] as? String == "refund")
      #expect(refund.json["amount"] as? Int == 1000)
      #expect(refund.json["currency"] as? String == "usd")
      #expect(refund.json["payment_intent"] as? String == id)
      #expect(refund.json["charge"] as? String == "ch_test000001")
      #expect(refund.json["status"] as? String == "succeeded")
      #expect(refund.json["reason"] as? String == "requested_by_customer")
      #expect(refund.json["metadata"] as? [String: String] == ["order_id": "o1"])

      let over = try await Self.send(client, server, "/v1/refunds", form: [("payment_intent", id), ("amount", "2500")])
      #expect(over.status == 400)
      #expect(over.error["type"] as? String == "invalid_request_error")
      #expect(
        over.error["message"] as? String
          == "Refund amount ($25.00) is greater than unrefunded amount on charge ($20.00)")
      #expect(over.error["param"] as? String == "amount")

      let rest = try await Self.send(client, server, "/v1/refunds", form: [("charge", "ch_test000001")])
      #expect(rest.status == 200)
      #expect(rest.json["amount"] as? Int == 2000)
      let done = try await Self.send(client, server, "/v1/refunds", form: [("payment_intent", id)])
      #expect(done.status == 400)
      #expect(done.error["code"] as? String == "charge_already_refunded")
      #expect(server.refundCount == 2)
      #expect(server.refunds(paymentIntent: id).map(\.amount) == [1000, 2000])
      #expect(server.refunds(paymentIntent: id).map(\.id) == ["re_test000001", "re_test000002"])
      #expect(server.paymentIntent(id)?["amount_refunded"] == "3000")
      let missing = try await Self.send(client, server, "/v1/refunds", form: [("payment_intent", "pi_missing")])
      #expect(missing.status == 404)
      #expect(missing.error["code"] as? String == "resource_missing")
    }
  }

  @Test("Cancel releases an uncaptured intent; a succeeded one cannot be canceled")
  func cancel() async throws {
    try await Self.withServer { server, client in
      let created = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.charge("pm_card_amex", amount: 4200, capture: "manual"))
      let id = try #require(created.json["id"] as? String)
      let badReason = try await Self.send(
        client, server, "/v1/payment_intents/\(id)/cancel", form: [("cancellation_reason", "bored")])
      #expect(badReason.status == 400)
      #expect(badReason.error["param"] as? String == "cancellation_reason")
      let canceled = try await Self.send(
        client, server, "/v1/payment_intents/\(id)/cancel", form: [("cancellation_reason", "requested_by_customer")])
      #expect(canceled.status == 200)
      #expect(canceled.json["status"] as? String == "canceled")
      #expect(canceled.json["cancellation_reason"] as? String == "requested_by_customer")
      #expect(canceled.json["amount_capturable"] as? Int == 0)
      #expect(server.paymentIntent(id)?["status"] == "canceled")
      let capture = try await Self.send(client, server, "/v1/payment_intents/\(id)/capture", form: [])
      #expect(capture.error["code"] as? String == "payment_intent_unexpected_state")

      let paid = try await Self.send(client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa"))
      let paidID = try #require(paid.json["id"] as? String)
      let refused = try await Self.send(client, server, "/v1/payment_intents/\(paidID)/cancel", form: [])
      #expect(refused.status == 400)
      #expect(refused.error["code"] as? String == "payment_intent_unexpected_state")
      #expect((refused.error["message"] as? String)?.contains("status of succeeded") == true)
      let unknown = try await Self.send(client, server, "/v1/payment_intents/pi_nope/cancel", form: [])
      #expect(unknown.status == 404)
      #expect(unknown.error["code"] as? String == "resource_missing")
      #expect(unknown.error["message"] as? String == "No such payment_intent: 'pi_nope'")
    }
  }

  @Test("A delay after executing: the client times out, and its retry replays the one charge")
  func delayAfterExecuting() async throws {
    try await Self.withServer { server, client in
      // A first request opens the connection, so that the timeout below covers only the delay.
      _ = try await Self.send(client, server, "/v1/payment_intents/pi_none", method: "GET")
      server.inject(.delayAfterExecuting(seconds: 5), on: .createPaymentIntent)
      let form = Self.charge("tok_visa")
      await #expect(throws: HTTPClientError.deadlineExceeded) {
        _ = try await Self.send(
          client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-delay",
          timeout: TimeAmount.seconds(1))
      }
      #expect(server.paymentIntentCount == 1)
      let retry = try await Self.send(client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-delay")
      #expect(retry.status == 200)
      #expect(retry.header("Idempotent-Replayed") == "true")
      #expect(retry.json["status"] as? String == "succeeded")
      #expect(server.paymentIntentsCreated(idempotencyKey: "key-delay") == 1)
      #expect(server.paymentIntentCount == 1)
    }
  }

  @Test("A reset after executing: the client sees a broken connection, and its retry replays the one charge")
  func resetAfterExecuting() async throws {
    try await Self.withServer { server, client in
      server.inject(.resetAfterExecuting, on: .createPaymentIntent)
      let form = Self.charge("pm_card_visa")
      await #expect(throws: (any Error).self) {
        _ = try await Self.send(client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-reset")
      }
      #expect(server.paymentIntentCount == 1)
      #expect(server.requests.first?.status == 0)
      let retry = try await Self.send(client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-reset")
      #expect(retry.status == 200)
      #expect(retry.header("Idempotent-Replayed") == "true")
      #expect(server.paymentIntentsCreated(idempotencyKey: "key-reset") == 1)
    }
  }

  @Test("A 500 before executing saves nothing: the retry executes once")
  func serverErrorBeforeExecuting() async throws {
    try await Self.withServer { server, client in
      server.inject(.serverErrorBeforeExecuting)
      let form = Self.charge("pm_card_visa")
      let failed = try await Self.send(client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-500")
      #expect(failed.status == 500)
      #expect(failed.header("Stripe-Should-Retry") == "true")
      #expect(failed.error["type"] as? String == "api_error")
      #expect(server.paymentIntentCount == 0)
      let retry = try await Self.send(client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-500")
      #expect(retry.status == 200)
      #expect(retry.header("Idempotent-Replayed") == nil)
      #expect(server.paymentIntentsCreated(idempotencyKey: "key-500") == 1)
    }
  }

  @Test("Rate limited: 429 with Retry-After, nothing executed")
  func rateLimited() async throws {
    try await Self.withServer { server, client in
      server.inject(.rateLimited(retryAfterSeconds: 7), on: .refund)
      // The fault waits for a refund: a create passes it by.
      let created = try await Self.send(client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa"))
      #expect(created.status == 200)
      let id = try #require(created.json["id"] as? String)
      let limited = try await Self.send(
        client, server, "/v1/refunds", form: [("payment_intent", id)], idempotencyKey: "key-429")
      #expect(limited.status == 429)
      #expect(limited.header("Retry-After") == "7")
      #expect(limited.error["type"] as? String == "invalid_request_error")
      #expect(limited.error["code"] as? String == "rate_limit")
      #expect(server.refundCount == 0)
      let retry = try await Self.send(
        client, server, "/v1/refunds", form: [("payment_intent", id)], idempotencyKey: "key-429")
      #expect(retry.status == 200)
      #expect(retry.header("Idempotent-Replayed") == nil)
      #expect(server.refundCount == 1)
    }
  }

  @Test("Hold after executing: charged before the gate opens, answered after")
  func holdAfterExecuting() async throws {
    try await Self.withServer { server, client in
      let gate = StripeTestServer.Gate()
      server.inject(.holdAfterExecuting(gate), on: .createPaymentIntent)
      let form = Self.charge("pm_card_visa")
      let pending = Task {
        try await Self.send(client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-hold-after")
      }
      #expect(await gate.waitUntilReachedAsync(timeout: 60))
      #expect(gate.reached)
      #expect(server.paymentIntentCount == 1)
      // Executed and saved: a same-key retry meanwhile is a replay.
      let retry = try await Self.send(
        client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-hold-after")
      #expect(retry.header("Idempotent-Replayed") == "true")
      gate.release()
      let answer = try await pending.value
      #expect(answer.status == 200)
      #expect(answer.body == retry.body)
      #expect(server.paymentIntentsCreated(idempotencyKey: "key-hold-after") == 1)
    }
  }

  @Test("Hold before executing: a same-key request meanwhile gets 409; released, the first one charges once")
  func holdBeforeExecuting() async throws {
    try await Self.withServer { server, client in
      let gate = StripeTestServer.Gate()
      server.inject(.holdBeforeExecuting(gate), on: .createPaymentIntent)
      let form = Self.charge("tok_visa")
      let pending = Task {
        try await Self.send(client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-hold-before")
      }
      #expect(await gate.waitUntilReachedAsync(timeout: 60))
      #expect(server.paymentIntentCount == 0)
      let conflict = try await Self.send(
        client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-hold-before")
      #expect(conflict.status == 409)
      #expect(conflict.error["type"] as? String == "idempotency_error")
      #expect(conflict.error["code"] as? String == "idempotency_key_in_use")
      gate.release()
      let answer = try await pending.value
      #expect(answer.status == 200)
      #expect(answer.header("Idempotent-Replayed") == nil)
      #expect(server.paymentIntentsCreated(idempotencyKey: "key-hold-before") == 1)
      // The 409 was not saved: the key holds the first request's result.
      let replay = try await Self.send(
        client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-hold-before")
      #expect(replay.header("Idempotent-Replayed") == "true")
      #expect(replay.body == answer.body)
      #expect(server.requests.map(\.status) == [200, 409, 200])
    }
  }

  @Test("Hold before executing: if the client gives up, the request is dropped unexecuted")
  func holdBeforeExecutingDropped() async throws {
    try await Self.withServer { server, client in
      let gate = StripeTestServer.Gate()
      server.inject(.holdBeforeExecuting(gate), on: .createPaymentIntent)
      let form = Self.charge("pm_card_visa")
      let pending = Task {
        try await Self.send(client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-dropped")
      }
      #expect(await gate.waitUntilReachedAsync(timeout: 60))
      pending.cancel()
      await #expect(throws: (any Error).self) { _ = try await pending.value }
      // Cancelling closes the client's connection; the server drops the held request and its
      // reservation of the key (until then, the same key is answered 409).
      var fresh: Answer?
      for _ in 0..<200 {
        let attempt = try await Self.send(
          client, server, "/v1/payment_intents", form: form, idempotencyKey: "key-dropped")
        if attempt.status != 409 {
          fresh = attempt
          break
        }
        try await Task.sleep(nanoseconds: 20_000_000)
      }
      let again = try #require(fresh)
      #expect(again.status == 200)
      #expect(again.header("Idempotent-Replayed") == nil)
      #expect(server.requests.first?.status == 0)
      gate.release()
      try await Task.sleep(nanoseconds: 100_000_000)
      #expect(server.paymentIntentsCreated(idempotencyKey: "key-dropped") == 1)
      #expect(server.paymentIntentCount == 1)
    }
  }

  @Test("A Stripe token becomes a PaymentMethod once (POST /v1/payment_methods, card[token]); test PaymentMethods are reusable")
  func tokenReuse() async throws {
    try await Self.withServer { server, client in
      let token: [(String, String)] = [("type", "card"), ("card[token]", "tok_visa")]
      let made = try await Self.send(client, server, "/v1/payment_methods", form: token, idempotencyKey: "pm-1")
      #expect(made.status == 200, "\(made.body)")
      #expect(made.json["id"] as? String == "pm_test000001")
      #expect(made.json["object"] as? String == "payment_method")
      #expect((made.json["card"] as? [String: Any])?["last4"] as? String == "4242")
      let replayed = try await Self.send(client, server, "/v1/payment_methods", form: token, idempotencyKey: "pm-1")
      #expect(replayed.json["id"] as? String == "pm_test000001")
      #expect(server.paymentMethodsCreated(idempotencyKey: "pm-1") == 1)
      let first = try await Self.send(client, server, "/v1/payment_intents", form: Self.charge("pm_test000001", amount: 1000))
      #expect(first.status == 200)
      let reused = try await Self.send(client, server, "/v1/payment_methods", form: token, idempotencyKey: "pm-2")
      #expect(reused.status == 400)
      #expect(reused.error["type"] as? String == "invalid_request_error")
      #expect(reused.error["code"] as? String == "token_already_used")
      #expect(reused.error["message"] as? String == "You cannot use a Stripe token more than once: tok_visa.")
      #expect(server.paymentIntentCount == 1)
      for amount in [1002, 1003] {
        let method = try await Self.send(client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa", amount: amount))
        #expect(method.status == 200)
      }
      server.setSingleUseTokens(false)
      let allowed = try await Self.send(client, server, "/v1/payment_methods", form: token, idempotencyKey: "pm-3")
      #expect(allowed.status == 200)
    }
  }

  @Test(
    "a 500 saved under the key is replayed with Idempotent-Replayed; search finds PaymentIntents by metadata with their charge expanded (capture_before on a manual one); processing ends on settleProcessing"
  )
  func storedErrorSearchAndProcessing() async throws {
    try await Self.withServer { server, client in
      server.inject(.serverErrorStored(.afterExecuting), on: .createPaymentIntent)
      let form = Self.charge("pm_card_visa", capture: "manual", extra: [("metadata[order_id]", "ord_1")])
      let first = try await Self.send(client, server, "/v1/payment_intents", form: form, idempotencyKey: "k-500")
      let again = try await Self.send(client, server, "/v1/payment_intents", form: form, idempotencyKey: "k-500")
      #expect(first.status == 500 && again.status == 500)
      #expect(first.error["type"] as? String == "api_error" && again.body == first.body)
      #expect(first.header("Idempotent-Replayed") == nil && again.header("Idempotent-Replayed") == "true")
      #expect(server.paymentIntentCount == 1)

      let query = "query=" + Self.encode("metadata['order_id']:'ord_1'") + "&expand%5B%5D=data.latest_charge"
      let found = try await Self.send(client, server, "/v1/payment_intents/search?" + query, method: "GET")
      #expect(found.json["object"] as? String == "search_result" && found.json["has_more"] as? Bool == false)
      let data = try #require(found.json["data"] as? [[String: Any]])
      #expect(data.map { $0["id"] as? String } == ["pi_test000001"] && data.first?["status"] as? String == "requires_capture")
      let charge = try #require(data.first?["latest_charge"] as? [String: Any])
      let card = (charge["payment_method_details"] as? [String: Any])?["card"] as? [String: Any]
      #expect(card?["capture_before"] as? Int == Int(try #require(server.paymentIntent("pi_test000001")?["capture_before"])))
      let none = try await Self.send(
        client, server, "/v1/payment_intents/search?query=" + Self.encode("metadata['order_id']:'ord_2'"), method: "GET")
      #expect((none.json["data"] as? [Any])?.isEmpty == true)
      #expect(server.expireAuthorization(paymentIntent: "pi_test000001"))
      #expect(server.paymentIntent("pi_test000001")?["cancellation_reason"] == "automatic")

      let processing = try await Self.send(client, server, "/v1/payment_intents", form: Self.charge("pm_card_processing"))
      #expect(processing.json["status"] as? String == "processing")
      let id = try #require(processing.json["id"] as? String)
      #expect(server.settleProcessing(paymentIntent: id, succeeded: true))
      let read = try await Self.send(client, server, "/v1/payment_intents/\(id)", method: "GET")
      #expect(read.json["status"] as? String == "succeeded")
      #expect(server.settleProcessing(paymentIntent: id, succeeded: true) == false)

      let open = try await Self.send(client, server, "/v1/payment_intents", form: Self.charge("pm_card_authenticationRequired"))
      #expect(open.json["status"] as? String == "requires_action")
      let declined = try await Self.send(
        client, server, "/v1/payment_intents",
        form: Self.charge("pm_card_authenticationRequired", extra: [("error_on_requires_action", "true")]))
      #expect(declined.status == 402 && declined.error["code"] as? String == "authentication_required")
      #expect(declined.error["decline_code"] as? String == "authentication_required")
      #expect(declined.error["message"] as? String == "Your card was declined. This transaction requires authentication.")
    }
  }

  @Test("The refund-failure test card: the refund answers succeeded, then fails")
  func refundFailCard() async throws {
    try await Self.withServer { server, client in
      let created = try await Self.send(client, server, "/v1/payment_intents", form: Self.charge("pm_card_refundFail"))
      let id = try #require(created.json["id"] as? String)
      #expect(created.json["status"] as? String == "succeeded")
      let refund = try await Self.send(client, server, "/v1/refunds", form: [("payment_intent", id)])
      #expect(refund.status == 200)
      #expect(refund.json["status"] as? String == "succeeded")
      let refundID = try #require(refund.json["id"] as? String)
      #expect(server.refundStatus(refundID) == "failed")
      let fetched = try await Self.send(client, server, "/v1/refunds/\(refundID)", method: "GET")
      #expect(fetched.json["status"] as? String == "failed")
      #expect(fetched.json["failure_reason"] as? String != nil)
      #expect(server.paymentIntent(id)?["amount_refunded"] == "0")
    }
  }

  @Test("Keep-alive and many concurrent connections; latency is added before each answer")
  func concurrencyAndLatency() async throws {
    try await Self.withServer { server, client in
      for amount in 1000..<1005 {
        let answer = try await Self.send(
          client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa", amount: amount))
        #expect(answer.status == 200)
      }
      #expect(server.connectionsAccepted == 1)
      let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
        for index in 0..<40 {
          group.addTask {
            try await Self.send(
              client, server, "/v1/payment_intents", form: Self.charge("pm_card_visa", amount: 1000 + index),
              idempotencyKey: "key-concurrent-\(index)"
            ).status
          }
        }
        return try await group.reduce(into: []) { $0.append($1) }
      }
      #expect(statuses == Array(repeating: 200, count: 40))
      #expect(server.paymentIntentCount == 45)
      #expect(server.connectionsAccepted > 1)
      server.setLatency(milliseconds: 300)
      let start = Date()
      let slow = try await Self.send(client, server, "/v1/payment_intents/pi_test000001", method: "GET")
      #expect(slow.status == 200)
      #expect(Date().timeIntervalSince(start) >= 0.29)
      server.setLatency(milliseconds: 0)
    }
  }

  @Test("The CA certificate is written as PEM; shutdown is idempotent")
  func certificateAndShutdown() async throws {
    let server = try StripeTestServer()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stripe-ca-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = try server.writeCACertificate(to: directory)
    let pem = try String(contentsOfFile: path, encoding: .utf8)
    #expect(pem == server.caCertificatePEM)
    #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
    #expect(server.port > 0)
    server.shutdown()
    server.shutdown()
  }
}
