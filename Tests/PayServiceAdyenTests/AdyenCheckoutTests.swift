import Foundation
import PayServiceAdyen
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Checkouts charged through Adyen (the local test server, over TLS): the Apple Pay token passed on
/// for Adyen to decrypt, the payment made once under the order's key, Adyen's outcomes on the order,
/// and answers that do not fit what was sent never taken as paid.
@Suite("Adyen checkout", .serialized)
struct AdyenCheckoutTests {
  static let cart = AdyenFixture.cart
  static let contact = AdyenFixture.contact

  struct Checkout {
    var token: String
    var amount: String
    var processLine: String
  }

  static func authorizeParams(_ paymentData: String, cart: String = cart, transaction: String) -> String {
    AdyenFixture.authorizeParams(paymentData, cart: cart, transaction: transaction)
  }

  /// authorizePayment with an Apple Pay token for the cart's total paid with `number`: the total is
  /// read from a first authorization (payservice does not decrypt the token, so its amount does not
  /// matter there), and the token that goes to Adyen carries it, as the device's would.
  static func authorize(_ handler: RequestHandler, _ fixture: AdyenFixture, number: String = "4111111111111111")
    throws -> Checkout
  {
    let probe = handler.call(
      "authorizePayment", authorizeParams(try fixture.applePayToken(amountMinor: 1), transaction: "probe"))
    let total = try #require(probe["result"]?["amount"]?.stringValue, "\(probe.compact)")
    let minor = try #require(Int(total.replacingOccurrences(of: ".", with: "")))
    let paymentData = try fixture.applePayToken(amountMinor: minor, number: number)
    let authorized = handler.call("authorizePayment", authorizeParams(paymentData, transaction: "T-\(number)"))
    let result = try #require(authorized["result"], "\(authorized.compact)")
    #expect(result["status"] == .string("success"), "\(authorized.compact)")
    let token = try #require(result["chargeToken"]?.stringValue)
    let line =
      #"{"jsonrpc":"2.0","id":7,"method":"processOrder","params":{"chargeToken":"\#(token)","items":\#(cart),"shippingMethod":"free","shippingContact":\#(contact),"amount":"\#(total)","currencyCode":"USD"}}"#
    return Checkout(token: token, amount: total, processLine: line)
  }

  static func stock(_ context: ServiceContext) throws -> Int { try context.store.stock()["mug"] ?? -1 }

  /// The result of `line`'s answer.
  static func result(_ handler: RequestHandler, _ line: String) throws -> JSONValue {
    let answer = try #require(handler.respond(line))
    return try #require(try JSONParser.parse(answer)["result"], "\(answer)")
  }

  @Test(
    "a payment: the Apple Pay token goes to Adyen as it came, once, under the order's key; the order is paid",
    arguments: StoreBackend.available)
  func payment(backend: StoreBackend) throws {
    let fixture = try AdyenFixture()
    defer { fixture.server.shutdown() }
    let context = try fixture.context(backend: backend)
    let handler = RequestHandler(context: context, methods: .payservice(backOffice: true), log: RequestLog(level: .warnings))
    let checkout = try Self.authorize(handler, fixture)
    #expect(fixture.server.paymentCount == 0)
    let answer = try #require(handler.respond(checkout.processLine))
    let result = try #require(try JSONParser.parse(answer)["result"], "\(answer)")
    #expect(result["status"] == .string("succeeded"), "\(answer)")
    let orderId = try #require(result["orderId"]?.stringValue)
    #expect(result["chargeId"] == .string("TEST000000000001"))
    #expect(result["order"]?["gatewayPaymentId"] == .string("TEST000000000001"))
    #expect(result["order"]?["status"] == .string("paid"))
    #expect(try Self.stock(context) == 98)
    #expect(fixture.server.paymentCount == 1)
    let sent = try #require(fixture.server.requests.last)
    #expect(sent.method == "POST" && sent.path == "/v71/payments")
    #expect(sent.idempotencyKey == Identifiers.chargeIdempotencyKey(orderId: orderId))
    let value = checkout.amount.replacingOccurrences(of: ".", with: "")
    let body = try JSONParser.parse(sent.body)
    let token = try #require(body["paymentMethod"]?["applePayToken"]?.stringValue)
    #expect(
      sent.body
        == #"{"amount":{"currency":"USD","value":\#(value)},"reference":"\#(orderId)","merchantAccount":"PayServiceECOM","paymentMethod":{"type":"applepay","applePayToken":"\#(token)"},"shopperInteraction":"Ecommerce"}"#
    )
    // The token Adyen got is the one the device made, byte for byte.
    let decoded = try #require(Data(base64Encoded: token))
    #expect(try JSONParser.parse(Array(decoded))["version"] == .string("EC_v1"))

    // The same processOrder again: the same answer, no second payment.
    #expect(handler.respond(checkout.processLine) == answer)
    #expect(fixture.server.paymentCount == 1)
  }

  @Test("a refusal reaches the shopper in their words, the stock comes back, and the token is spent")
  func refused() throws {
    let fixture = try AdyenFixture()
    defer { fixture.server.shutdown() }
    let context = try fixture.context(backend: .sqlite)
    let handler = RequestHandler(context: context, methods: .payservice(backOffice: true), log: RequestLog(level: .warnings))
    let checkout = try Self.authorize(handler, fixture, number: "4000000000009995")
    let answer = try #require(handler.respond(checkout.processLine))
    let result = try #require(try JSONParser.parse(answer)["result"], "\(answer)")
    #expect(result["status"] == .string("failed"), "\(answer)")
    #expect(result["failureCode"] == .string("card_declined"))
    #expect(result["declineCode"] == .string("Not enough balance (12)"))
    #expect(result["message"] == .string("Your card has insufficient funds. Use another card."))
    #expect(try Self.stock(context) == 100)
    #expect(fixture.server.paymentCount == 1)
    #expect(handler.respond(checkout.processLine) == answer)
    #expect(fixture.server.paymentCount == 1)
  }

  @Test("a payment Adyen receives and decides later stays pending with its stock held, and is never sent twice")
  func received() throws {
    let fixture = try AdyenFixture()
    defer { fixture.server.shutdown() }
    let context = try fixture.context(backend: .sqlite)
    let handler = RequestHandler(context: context, methods: .payservice(backOffice: true), log: RequestLog(level: .warnings))
    let checkout = try Self.authorize(handler, fixture, number: "4000000000000077")
    let answer = try #require(handler.respond(checkout.processLine))
    let result = try #require(try JSONParser.parse(answer)["result"], "\(answer)")
    #expect(result["status"] == .string("failed"), "\(answer)")
    #expect(result["failureCode"] == .string("payment_processing"))
    #expect(try Self.stock(context) == 98)
    _ = handler.respond(checkout.processLine)
    #expect(fixture.server.paymentCount == 1)
    #expect(fixture.server.requests.last?.replayed == true)
  }

  @Test("an answer whose amount is not what was sent is never taken as paid")
  func tamperedAmount() throws {
    let fixture = try AdyenFixture()
    defer { fixture.server.shutdown() }
    let context = try fixture.context(backend: .sqlite)
    let handler = RequestHandler(context: context, methods: .payservice(backOffice: true), log: RequestLog(level: .warnings))
    let checkout = try Self.authorize(handler, fixture)
    fixture.server.inject(.tamper(.amount(1)), on: .payments)
    let answer = try #require(handler.respond(checkout.processLine))
    let result = try #require(try JSONParser.parse(answer)["result"], "\(answer)")
    #expect(result["status"] == .string("failed"), "\(answer)")
    #expect(result["failureCode"] == .string("gateway_unavailable"))
    let value = checkout.amount.replacingOccurrences(of: ".", with: "")
    #expect(
      result["message"]?.stringValue?.hasPrefix(
        "Adyen did not answer (Adyen's answer does not fit the payment sent (its amount is 1, not \(value)); it is not taken as paid).")
        == true, "\(answer)")
    let listed = handler.call("listOrders", "{}")["result"]?["orders"]
    #expect(listed?[0]?["status"] == .string("pending") && listed?[1] == nil, "\(String(describing: listed))")
    // Sent again, the same key gets Adyen's true saved answer: the order is paid, once.
    let again = try Self.result(handler, checkout.processLine)
    #expect(again["status"] == .string("succeeded"))
    #expect(fixture.server.paymentCount == 1)
  }

  @Test("manual capture: the order is authorized; Adyen accepts the capture, and the order waits for its notification")
  func manualCapture() throws {
    let fixture = try AdyenFixture(capture: .manual)
    defer { fixture.server.shutdown() }
    let context = try fixture.context(backend: .sqlite)
    let handler = RequestHandler(context: context, methods: .payservice(backOffice: true), log: RequestLog(level: .warnings))
    let checkout = try Self.authorize(handler, fixture)
    let placed = try Self.result(handler, checkout.processLine)
    #expect(placed["order"]?["status"] == .string("authorized"))
    let orderId = try #require(placed["orderId"]?.stringValue)
    let paid = try #require(fixture.server.requests.last?.body)
    #expect(try JSONParser.parse(paid)["additionalData"]?["manualCapture"] == .string("true"))
    let capture = handler.call("captureOrder", #"{"orderId":"\#(orderId)","captureId":"cap-1"}"#)
    let result = try #require(capture["result"], "\(capture.compact)")
    #expect(result["status"] == .string("failed"))
    #expect(result["failureCode"] == .string("outcome_pending"))
    #expect(
      result["message"]
        == .string(
          "Adyen accepted the request (its reference TEST000000000002) and says later what came of it: the order shows the outcome once Adyen's notification arrives. The same request again answers the same; it is never done twice."
        ))
    let sent = try #require(fixture.server.requests.last)
    #expect(sent.path == "/v71/payments/TEST000000000001/captures")
    let value = checkout.amount.replacingOccurrences(of: ".", with: "")
    #expect(
      sent.body
        == #"{"merchantAccount":"PayServiceECOM","reference":"cap-1","amount":{"currency":"USD","value":\#(value)}}"#)
    #expect(handler.call("captureOrder", #"{"orderId":"\#(orderId)","captureId":"cap-1"}"#) == capture)
    #expect(fixture.server.captureCount == 1)
    let order = handler.call("getOrder", #"{"orderId":"\#(orderId)"}"#)
    #expect(order["result"]?["order"]?["status"] == .string("authorized"), "\(order.compact)")
  }

  @Test("a refund is pending at Adyen until its notification settles it")
  func refund() throws {
    let fixture = try AdyenFixture()
    defer { fixture.server.shutdown() }
    let context = try fixture.context(backend: .sqlite)
    let handler = RequestHandler(context: context, methods: .payservice(backOffice: true), log: RequestLog(level: .warnings))
    let checkout = try Self.authorize(handler, fixture)
    let placed = try Self.result(handler, checkout.processLine)
    let orderId = try #require(placed["orderId"]?.stringValue)
    let refund = handler.call("refundOrder", #"{"orderId":"\#(orderId)","refundId":"r-1","amount":"1.00"}"#)
    let result = try #require(refund["result"], "\(refund.compact)")
    #expect(result["status"] == .string("succeeded"), "\(refund.compact)")
    let sent = try #require(fixture.server.requests.last)
    #expect(sent.path == "/v71/payments/TEST000000000001/refunds")
    #expect(sent.body == #"{"merchantAccount":"PayServiceECOM","reference":"r-1","amount":{"currency":"USD","value":100}}"#)
    #expect(fixture.server.refundCount == 1)
    #expect(handler.call("refundOrder", #"{"orderId":"\#(orderId)","refundId":"r-1","amount":"1.00"}"#) == refund)
    #expect(fixture.server.refundCount == 1)
  }

  @Test("a card adjustment's price never follows the card the device claims: such a config does not load")
  func noClaimedPricing() throws {
    let fixture = try AdyenFixture()
    defer { fixture.server.shutdown() }
    let text = try String(contentsOfFile: fixture.configPath, encoding: .utf8)
      + "\npaymentMethodAdjustments:\n  - {label: Credit fee, type: credit, percent: \"2\"}\n"
    #expect(throws: ConfigError.self) { try ConfigLoader.parse(yaml: text) }
  }
}
