import Foundation
import PayServiceCore
import PayServiceStripe
import PayServiceTestSupport
import Testing

/// Checkouts charged through Stripe (the local test server, over TLS): the two transactions around
/// the call, lost answers resolved by the replay and by the sweep, never a second charge.
@Suite("Stripe checkout", .serialized)
struct StripeCheckoutTests {
  static let cart = #"[{"sku":"mug","quantity":2}]"#
  static let contact = BackOfficeFixture.contacts[0]

  /// An authorized order's processOrder line, ready to send (and send again).
  struct Checkout {
    var token: String
    var amount: String
    var processLine: String
  }

  /// authorizePayment's params for `cart` paid with `paymentData` (its JSON) and claiming `card`.
  static func authorizeParams(_ paymentData: String, card: String = BackOfficeFixture.cards[0], cart: String = cart) -> String {
    #"{"items":\#(cart),"shippingMethod":"free","payment":{"token":{"paymentData":\#(paymentData),"paymentMethod":\#(card),"transactionIdentifier":"T"},"shippingContact":\#(contact),"billingContact":\#(contact)}}"#
  }

  static let mastercard = #"{"displayName":"MasterCard 4444","network":"masterCard","type":"credit"}"#

  static func authorize(
    _ handler: RequestHandler, paymentData: String = "tok_visa", cart: String = cart, card: String = BackOfficeFixture.cards[0]
  ) throws -> Checkout {
    let authorized = handler.call("authorizePayment", authorizeParams(#""\#(paymentData)""#, card: card, cart: cart))
    let result = try #require(authorized["result"], "\(authorized.compact)")
    #expect(result["status"] == .string("success"), "\(authorized.compact)")
    let token = try #require(result["chargeToken"]?.stringValue)
    let amount = try #require(result["amount"]?.stringValue)
    let line =
      #"{"jsonrpc":"2.0","id":7,"method":"processOrder","params":{"chargeToken":"\#(token)","items":\#(cart),"shippingMethod":"free","shippingContact":\#(contact),"amount":"\#(amount)","currencyCode":"USD"}}"#
    return Checkout(token: token, amount: amount, processLine: line)
  }

  static func stock(_ context: ServiceContext, _ sku: String = "mug") throws -> Int {
    try context.store.stock()[sku] ?? -1
  }

  @Test("a charge: the PaymentIntent is created once with the order's key, pinned version and metadata; a replay answers the same bytes", arguments: StoreBackend.available)
  func charge(backend: StoreBackend) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let context = try fixture.context(backend: backend)
    let handler = fixture.handler(context, backOffice: true)
    let checkout = try Self.authorize(handler)
    let answer = try #require(handler.respond(checkout.processLine))
    let result = try #require(try JSONParser.parse(answer)["result"], "\(answer)")
    #expect(result["status"] == .string("succeeded"), "\(answer)")
    let orderId = try #require(result["orderId"]?.stringValue)
    let chargeId = try #require(result["chargeId"]?.stringValue)
    let paymentId = try #require(result["order"]?["gatewayPaymentId"]?.stringValue)
    #expect(chargeId.hasPrefix("ch_"))
    #expect(paymentId.hasPrefix("pi_"))
    #expect(result["order"]?["status"] == .string("paid"))
    #expect(try Self.stock(context) == 98)

    let key = Identifiers.chargeIdempotencyKey(orderId: orderId)
    #expect(server.paymentIntentsCreated(idempotencyKey: key) == 1)
    let sent = try #require(server.requests.last)
    #expect(sent.method == "POST" && sent.path == "/v1/payment_intents")
    #expect(sent.idempotencyKey == key)
    #expect(sent.stripeVersion == StripeGateway.apiVersion)
    #expect(sent.body.contains("metadata%5Border_id%5D=\(orderId)"), "\(sent.body)")
    // The token became a PaymentMethod first, the documented way, under a key derived from the charge's.
    #expect(sent.body.contains("payment_method=pm_test000001"), "\(sent.body)")
    #expect(sent.body.contains("error_on_requires_action=true"), "\(sent.body)")
    #expect(!sent.body.contains("payment_method_data"), "\(sent.body)")
    let made = try #require(server.requests.dropLast().last)
    #expect(made.method == "POST" && made.path == "/v1/payment_methods")
    #expect(made.body == "type=card&card%5Btoken%5D=tok_visa")
    #expect(made.idempotencyKey == key + "-payment-method")
    let amountMinor = Int(checkout.amount.replacingOccurrences(of: ".", with: ""))!
    #expect(server.paymentIntent(paymentId)?["amount"] == String(amountMinor))
    #expect(server.paymentIntent(paymentId)?["currency"] == "usd")
    #expect(server.paymentIntent(paymentId)?["metadata[order_id]"] == orderId)

    // The replay is answered from the store: the same bytes, nothing sent.
    let requestsBefore = server.requests.count
    #expect(handler.respond(checkout.processLine) == answer)
    #expect(server.requests.count == requestsBefore)
    #expect(server.paymentIntentCount == 1)
    let order = handler.call("getOrder", #"{"orderId":"\#(orderId)"}"#)
    #expect(order["result"]?["order"]?["status"] == .string("paid"))
    #expect(order["result"]?["order"]?["gatewayPaymentId"] == .string(paymentId))
    #expect(try !fixture.secretLeaked(context))
    // The log the search read holds one line per request.
    #expect(try String(contentsOfFile: fixture.logPath, encoding: .utf8).contains(#"method="processOrder""#))
  }

  @Test("a decline is final: card_declined with Stripe's decline code, the stock back, the token used", arguments: StoreBackend.available)
  func decline(backend: StoreBackend) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let context = try fixture.context(backend: backend)
    let handler = fixture.handler(context)
    let checkout = try Self.authorize(handler, paymentData: "tok_chargeDeclinedInsufficientFunds")
    let answer = try #require(handler.respond(checkout.processLine))
    let result = try JSONParser.parse(answer)["result"]
    #expect(result?["status"] == .string("failed"), "\(answer)")
    #expect(result?["failureCode"] == .string("card_declined"))
    #expect(result?["declineCode"] == .string("insufficient_funds"))
    #expect(result?["chargeId"]?.stringValue?.hasPrefix("ch_") == true, "\(answer)")
    #expect(try Self.stock(context) == 100)
    #expect(handler.respond(checkout.processLine) == answer)
    #expect(server.requests.filter { $0.path == "/v1/payment_intents" }.count == 1)
    #expect(try !fixture.secretLeaked(context))
  }

  @Test("Stripe's record of the token's card prices it: a claim its brand or funding contradicts is refused, naming both")
  func cardClaims() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let context = try fixture.context(backend: .sqlite)
    let handler = fixture.handler(context)
    func message(_ paymentData: String, _ card: String) -> String? {
      let answer = handler.call("authorizePayment", Self.authorizeParams(#""\#(paymentData)""#, card: card))
      return answer["result"]?["errors"]?[0]?["message"]?.stringValue
    }
    let visaCredit = BackOfficeFixture.cards[0]
    #expect(
      message("tok_mastercard_debit", Self.mastercard)
        == "the card's network and type are mastercard debit (by Stripe's record of tok_mastercard_debit, brand MasterCard), but payment.token.paymentMethod says masterCard credit")
    #expect(
      message("pm_card_amex", visaCredit)
        == "the card's network and type are amex credit (by Stripe's record of pm_card_amex, brand amex), but payment.token.paymentMethod says visa credit")
    #expect(
      message("tok_nosuchcard", visaCredit)
        == "Stripe refused to show the payment's card (invalid_request_error): No such token: 'tok_nosuchcard'")
    // Agreeing claims authorize: a GET of the token and of the PaymentMethod, and no PaymentIntent.
    _ = try Self.authorize(handler, paymentData: "pm_card_visa")
    _ = try Self.authorize(handler, paymentData: "tok_mastercard", card: Self.mastercard)
    let reads = server.requests.filter { $0.method == "GET" }.map(\.path)
    #expect(
      reads == [
        "/v1/tokens/tok_mastercard_debit", "/v1/payment_methods/pm_card_amex", "/v1/tokens/tok_nosuchcard",
        "/v1/payment_methods/pm_card_visa", "/v1/tokens/tok_mastercard",
      ])
    #expect(server.paymentIntentCount == 0)
  }

  @Test("authorizePayment takes Stripe tokens, PaymentMethods and Apple Pay tokens; any other string is -32602 naming the forms")
  func paymentDataForms() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let context = try fixture.context(backend: .sqlite)
    let handler = fixture.handler(context)
    _ = try Self.authorize(handler, paymentData: "pm_card_visa")
    for bad in [#""visa""#, #""tok_visa extra""#, #""""#, "42"] {
      let answer = handler.call("authorizePayment", Self.authorizeParams(bad))
      #expect(answer["error"]?["code"] == .number("-32602"), "\(answer.compact)")
      #expect(answer["error"]?["data"]?["errors"]?[0]?["path"] == .string("payment.token.paymentData"))
      #expect(
        answer["error"]?["data"]?["errors"]?[0]?["message"]?.stringValue
          == "must be a Stripe token (tok_…) or PaymentMethod (pm_…) that Stripe's iOS or JS SDK created from the Apple Pay payment, or the Apple Pay token itself (PKPaymentToken.paymentData: an object, or its JSON text) (gateway.kind is stripe)",
        "\(answer.compact)")
    }
    #expect(try !fixture.secretLeaked(context))
  }

  /// A lost answer (`fault` on the charge): the order is pending with its stock taken; the client's
  /// replay re-sends the same call, Stripe answers from its idempotency record, and the order is paid.
  func lostAnswer(_ fault: StripeTestServer.Fault, backend: StoreBackend) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server, requestTimeoutSeconds: 1)
    let context = try fixture.context(backend: backend)
    let handler = fixture.handler(context, backOffice: true)
    let checkout = try Self.authorize(handler)
    server.inject(fault, on: .createPaymentIntent)
    let first = try JSONParser.parse(try #require(handler.respond(checkout.processLine)))
    #expect(first["result"]?["status"] == .string("failed"), "\(first.compact)")
    #expect(first["result"]?["failureCode"] == .string("gateway_unavailable"))
    #expect(first["result"]?["message"]?.stringValue?.contains("send the same processOrder again") == true)
    #expect(try Self.stock(context) == 98)
    let pending = handler.call("listOrders", #"{"status":"pending"}"#)
    let listed = try #require(pending["result"]?["orders"]?.arrayValue)
    #expect(listed.count == 1)
    let orderId = try #require(listed.first?["orderId"]?.stringValue)
    #expect(listed.first?["status"] == .string("pending"))
    #expect(handler.call("listOrders")["result"]?["orders"]?[0]?["status"] == .string("pending"))
    let lookedUp = handler.call("getOrder", #"{"orderId":"\#(orderId)"}"#)
    #expect(lookedUp["result"]?["order"]?["status"] == .string("pending"))
    #expect(lookedUp["result"]?["order"]?["chargeId"] == nil)

    let replay = try JSONParser.parse(try #require(handler.respond(checkout.processLine)))
    #expect(replay["result"]?["status"] == .string("succeeded"), "\(replay.compact)")
    #expect(replay["result"]?["orderId"] == .string(orderId))
    let key = Identifiers.chargeIdempotencyKey(orderId: orderId)
    #expect(server.paymentIntentsCreated(idempotencyKey: key) == 1)
    #expect(server.paymentIntentCount == 1)
    #expect(server.requests.filter { $0.idempotencyKey == key }.last?.replayed == true)
    #expect(try Self.stock(context) == 98)
    #expect(handler.call("listOrders", #"{"status":"pending"}"#)["result"]?["orders"]?.arrayValue?.isEmpty == true)
    #expect(try !fixture.secretLeaked(context))
  }

  @Test("Stripe charges, then the answer comes after the client's timeout: the replay recovers the order, one charge", arguments: StoreBackend.available)
  func timeoutAfterCharging(backend: StoreBackend) throws {
    try lostAnswer(.delayAfterExecuting(seconds: 10), backend: backend)
  }

  @Test("Stripe charges, then the connection is reset: the replay recovers the order, one charge", arguments: StoreBackend.available)
  func resetAfterCharging(backend: StoreBackend) throws {
    try lostAnswer(.resetAfterExecuting, backend: backend)
  }

  @Test("a 500 before Stripe executes and a 429 with Retry-After are retried with the same key: one charge")
  func retries() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server, maxRetries: 2)
    let context = try fixture.context(backend: .sqlite)
    let handler = fixture.handler(context)
    let first = try Self.authorize(handler)
    server.inject(.serverErrorBeforeExecuting, on: .createPaymentIntent)
    #expect(handler.call("processOrder", Self.params(first.processLine))["result"]?["status"] == .string("succeeded"))
    // Stripe's tokens are single-use: the second order pays with another one.
    let second = try Self.authorize(
      handler, paymentData: "tok_mastercard", cart: #"[{"sku":"lamp","quantity":1}]"#, card: Self.mastercard)
    server.inject(.rateLimited(retryAfterSeconds: 1), on: .createPaymentIntent)
    let started = Date()
    #expect(handler.call("processOrder", Self.params(second.processLine))["result"]?["status"] == .string("succeeded"))
    #expect(Date().timeIntervalSince(started) >= 1)
    #expect(server.paymentIntentCount == 2)
    let statuses = server.requests.filter { $0.path == "/v1/payment_intents" }.map(\.status)
    #expect(statuses == [500, 200, 429, 200])
    let keys = server.requests.filter { $0.path == "/v1/payment_intents" }.map(\.idempotencyKey)
    #expect(keys[0] == keys[1] && keys[2] == keys[3] && keys[0] != keys[2])
    #expect(try !fixture.secretLeaked(context))
  }

  /// The params of a request line.
  static func params(_ line: String) -> String {
    let value = try! JSONParser.parse(line)
    return value["params"]!.compact
  }

  @Test("the sweep at start-up resolves a pending order without the client: the same call, one charge", arguments: StoreBackend.available)
  func sweep(backend: StoreBackend) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server, requestTimeoutSeconds: 1)
    let context = try fixture.context(backend: backend)
    let handler = fixture.handler(context, backOffice: true)
    let checkout = try Self.authorize(handler)
    server.inject(.resetAfterExecuting, on: .createPaymentIntent)
    #expect(handler.call("processOrder", Self.params(checkout.processLine))["result"]?["failureCode"] == .string("gateway_unavailable"))
    #expect(try OperationRunner.sweep(context: context) == OperationRunner.Sweep(resolved: 1, pending: 0))
    #expect(try OperationRunner.sweep(context: context) == OperationRunner.Sweep(resolved: 0, pending: 0))
    #expect(server.paymentIntentCount == 1)
    let replay = handler.call("processOrder", Self.params(checkout.processLine))
    #expect(replay["result"]?["status"] == .string("succeeded"))
    #expect(handler.call("getOrder", #"{"orderId":"\#(replay["result"]!["orderId"]!.stringValue!)"}"#)["result"]?["order"]?["status"] == .string("paid"))
    #expect(try !fixture.secretLeaked(context))
  }

  @Test("manual capture, partial capture and a refund go to Stripe under keys from captureId and refundId; replays send nothing twice", arguments: StoreBackend.available)
  func backOffice(backend: StoreBackend) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server, capture: .manual)
    let context = try fixture.context(backend: backend)
    let handler = fixture.handler(context, backOffice: true)
    let checkout = try Self.authorize(handler)
    let placed = handler.call("processOrder", Self.params(checkout.processLine))
    #expect(placed["result"]?["order"]?["status"] == .string("authorized"), "\(placed.compact)")
    let orderId = try #require(placed["result"]?["orderId"]?.stringValue)
    let paymentId = try #require(placed["result"]?["order"]?["gatewayPaymentId"]?.stringValue)
    #expect(server.paymentIntent(paymentId)?["status"] == "requires_capture")

    let capture = #"{"orderId":"\#(orderId)","captureId":"cap-1","amount":"10.00"}"#
    let captured = handler.call("captureOrder", capture)
    #expect(captured["result"]?["status"] == .string("succeeded"), "\(captured.compact)")
    #expect(server.paymentIntent(paymentId)?["status"] == "succeeded")
    #expect(server.paymentIntent(paymentId)?["amount_received"] == "1000")
    #expect(handler.call("captureOrder", capture).compact == captured.compact)

    let refund = #"{"orderId":"\#(orderId)","refundId":"rf-1","amount":"4.00"}"#
    let refunded = handler.call("refundOrder", refund)
    #expect(refunded["result"]?["status"] == .string("succeeded"), "\(refunded.compact)")
    #expect(server.refunds(paymentIntent: paymentId).map(\.amount) == [400])
    #expect(handler.call("refundOrder", refund).compact == refunded.compact)
    let reused = handler.call("refundOrder", #"{"orderId":"\#(orderId)","refundId":"rf-1","amount":"5.00"}"#)
    #expect(reused["error"]?["code"] == .number("-32004"))
    #expect(server.refundCount == 1)
    let order = handler.call("getOrder", #"{"orderId":"\#(orderId)"}"#)["result"]?["order"]
    #expect(order?["refunds"]?[0]?["gatewayRefundId"] == .string(server.refunds(paymentIntent: paymentId)[0].id))
    #expect(order?["status"] == .string("partially_refunded"))
    #expect(try !fixture.secretLeaked(context))
  }

  @Test("a refund whose answer is lost is recorded by the client's replay: one refund at Stripe")
  func refundLostAnswer() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server, requestTimeoutSeconds: 1)
    let context = try fixture.context(backend: .sqlite)
    let handler = fixture.handler(context, backOffice: true)
    let checkout = try Self.authorize(handler)
    let orderId = try #require(handler.call("processOrder", Self.params(checkout.processLine))["result"]?["orderId"]?.stringValue)
    server.inject(.resetAfterExecuting, on: .refund)
    let refund = #"{"orderId":"\#(orderId)","refundId":"rf-lost","lines":[{"sku":"mug","quantity":1,"restock":"return"}]}"#
    let first = handler.call("refundOrder", refund)
    #expect(first["result"]?["failureCode"] == .string("gateway_unavailable"), "\(first.compact)")
    #expect(try Self.stock(context) == 98)
    let second = handler.call("refundOrder", refund)
    #expect(second["result"]?["status"] == .string("succeeded"), "\(second.compact)")
    #expect(server.refundCount == 1)
    #expect(try Self.stock(context) == 99)
    #expect(try !fixture.secretLeaked(context))
  }

  @Test(
    "a redirect is never followed: nothing reaches its Location, the order stays pending, and the same call completes it once the origin answers",
    arguments: [(302, "http"), (307, "http"), (307, "https")])
  func redirectNotFollowed(status: Int, scheme: String) throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let context = try fixture.context(backend: .sqlite)
    let handler = fixture.handler(context, backOffice: true)
    let checkout = try Self.authorize(handler)
    // To the test server itself: plain http there is a new connection, https the same one again.
    let location = "\(scheme)://127.0.0.1:\(server.port)/v1/payment_intents"
    server.inject(
      .answerWithoutExecuting(status: status, headers: [("Location", location), ("Content-Type", "text/html")], body: "moved"),
      on: .createPaymentIntent)
    let first = try JSONParser.parse(try #require(handler.respond(checkout.processLine)))
    #expect(first["result"]?["status"] == .string("failed"), "\(first.compact)")
    #expect(first["result"]?["failureCode"] == .string("gateway_error"))
    #expect(
      first["result"]?["message"]?.stringValue
        == "Stripe refused the request (api_error): HTTP \(status) from Stripe, a redirect, which payservice never follows: gateway.apiBase must be the API origin itself. The order is pending: once the cause is fixed, send the same processOrder again."
    )
    // Authorization read the token's card (a GET); the token became a PaymentMethod (a POST); the
    // charge is the one POST to /v1/payment_intents, not sent again.
    let posts = { server.requests.filter { $0.method == "POST" && $0.path == "/v1/payment_intents" } }
    #expect(posts().count == 1)
    #expect(server.requests.count == 3)
    #expect(server.connectionsAccepted == 1)
    #expect(server.paymentIntentCount == 0)
    #expect(try Self.stock(context) == 98)
    let pending = handler.call("listOrders", #"{"status":"pending"}"#)["result"]?["orders"]?.arrayValue
    #expect(pending?.count == 1)

    // The origin answers again: the same call, under the same key, completes the order once.
    let replay = try JSONParser.parse(try #require(handler.respond(checkout.processLine)))
    #expect(replay["result"]?["status"] == .string("succeeded"), "\(replay.compact)")
    #expect(server.paymentIntentCount == 1)
    #expect(posts().count == 2 && posts().map(\.idempotencyKey).allSatisfy { $0 == posts()[0].idempotencyKey })
    #expect(try Self.stock(context) == 98)
    #expect(try !fixture.secretLeaked(context))
  }

  @Test("a key in an upstream error, in any punctuation and in any field, reaches no answer, log or store row")
  func upstreamKeyScrubbed() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let context = try fixture.context(backend: .sqlite)
    let handler = fixture.handler(context)
    let checkout = try Self.authorize(handler)
    let key = server.secretKey
    let other = "rk_" + "live_" + "51Hq0therKey"
    let body = #"{"error":{"type":"invalid_request_error","code":"key=\#(key)","message":"Rejected key=\#(key) (\#(other)), \"whsec_abc\""}}"#
    server.inject(
      .answerWithoutExecuting(status: 400, headers: [("Content-Type", "application/json")], body: body),
      on: .createPaymentIntent)
    let answer = try #require(handler.respond(checkout.processLine))
    let result = try JSONParser.parse(answer)["result"]
    #expect(result?["failureCode"] == .string("gateway_error"), "\(answer)")
    #expect(
      result?["message"]?.stringValue
        == #"Stripe refused the request (invalid_request_error): Rejected key=[a key] ([a key]), "[a key]""#)
    #expect(!answer.contains(key) && !answer.contains("51Hq0therKey"), "\(answer)")
    #expect(try !fixture.secretLeaked(context))
    #expect(try !context.store.mentions("51Hq0therKey"))
  }

  @Test("the secret key appears in no answer, and no store row")
  func noSecret() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let config = try fixture.config()
    let path = fixture.directory.appendingPathComponent("store.sqlite").path
    let store = try SQLiteStore(path: path)
    try store.seedStock(config.catalog)
    // A wrong key: Stripe's 401 names it (masked); payservice says neither.
    let wrong = "sk_test_wrongwrongwrong1234"
    let wrongGateway = GatewayCalls(gateway: StripeGateway(settings: config.gateway.stripe!, secretKey: wrong), maxConcurrent: 4)
    let handler = TestConfig.handler(
      ServiceContext(config: config, store: store, clock: ServiceClock(pinned: TestConfig.now), gateway: wrongGateway))
    let good = TestConfig.handler(
      ServiceContext(config: config, store: store, clock: ServiceClock(pinned: TestConfig.now), gateway: fixture.gateway(config)))
    // Authorized with the right key (authorization reads the token's card at Stripe).
    let checkout = try Self.authorize(good)
    let refused = try #require(handler.respond(checkout.processLine))
    #expect(refused.contains(#""failureCode":"gateway_error""#), "\(refused)")
    #expect(refused.contains("authentication_error"), "\(refused)")
    #expect(!refused.contains("1234") && !refused.contains(wrong), "\(refused)")
    let paid = try #require(good.respond(checkout.processLine))
    #expect(paid.contains(#""status":"succeeded""#), "\(paid)")
    // The search finds what the store does hold (its charge token), so its misses mean something.
    #expect(try store.mentions(checkout.token))
    #expect(try !store.mentions(server.secretKey))
    #expect(try !store.mentions(wrong))
  }
}
