import Foundation
import PayServiceCore
import PayServiceStripe
import PayServiceTestSupport
import Testing

/// What payservice says to Stripe is what Stripe documents, and every status Stripe's spec allows
/// has a meaning on the order (issue 35): tokens become PaymentMethods by `POST /v1/payment_methods`;
/// each refund status; `processing` kept pending until it is final; `error_on_requires_action`; a 500
/// Stripe stored resolved by its search; the manual-capture expiry; no invented charge ids. Each
/// test also shows nothing was charged or refunded twice.
@Suite("Stripe: only what Stripe documents, every status it allows", .serialized)
struct StripeDocumentedTests {
  static let cart = StripeCheckoutTests.cart

  /// A shop charging through a fresh test server, on a fresh store of `backend`.
  struct Shop {
    let server: StripeTestServer
    let fixture: StripeFixture
    let context: ServiceContext
    let handler: RequestHandler

    init(backend: StoreBackend, capture: Gateway.Capture = .automatic) throws {
      server = try StripeTestServer()
      fixture = try StripeFixture(server: server, capture: capture, requestTimeoutSeconds: 1)
      context = try fixture.context(backend: backend)
      handler = fixture.handler(context, backOffice: true)
    }

    /// The same store and gateway with the clock at `now`, and a handler on it.
    func later(_ now: Int64) -> (ServiceContext, RequestHandler) {
      let context = ServiceContext(
        config: self.context.config, storeSource: self.context.storeSource, clock: ServiceClock(pinned: now),
        gateway: self.context.gatewayCalls)
      return (context, fixture.handler(context, backOffice: true))
    }

    func authorize(_ paymentData: String) throws -> StripeCheckoutTests.Checkout {
      try StripeCheckoutTests.authorize(handler, paymentData: paymentData)
    }

    func process(_ checkout: StripeCheckoutTests.Checkout, with handler: RequestHandler? = nil) throws -> JSONValue {
      let answer = try #require((handler ?? self.handler).respond(checkout.processLine))
      return try #require(try JSONParser.parse(answer)["result"])
    }

    /// Places a paid order charged with `paymentData`: its id and PaymentIntent.
    func place(_ paymentData: String) throws -> (orderId: String, paymentId: String) {
      let result = try process(try authorize(paymentData))
      #expect(result["status"] == .string("succeeded"), "\(result.compact)")
      return (
        try #require(result["orderId"]?.stringValue), try #require(result["order"]?["gatewayPaymentId"]?.stringValue)
      )
    }

    func order(_ orderId: String, _ handler: RequestHandler? = nil) -> JSONValue? {
      (handler ?? self.handler).call("getOrder", #"{"orderId":"\#(orderId)"}"#)["result"]?["order"]
    }

    func stock() throws -> Int { try StripeCheckoutTests.stock(context) }

    func pending() throws -> [[String]] {
      try context.store.pendingOperations().map { [$0.kind, $0.key, $0.subject ?? ""] }
    }

    func requests(_ method: String, _ path: String) -> [StripeTestServer.RecordedRequest] {
      server.requests.filter { $0.method == method && $0.path == path }
    }
  }

  // MARK: 1. Tokens become PaymentMethods

  @Test(
    "a token becomes a PaymentMethod by POST /v1/payment_methods (type=card, card[token]) under the charge's key plus -payment-method, then the PaymentIntent takes payment_method=pm_…; a lost answer's replay makes no second PaymentMethod or PaymentIntent",
    arguments: StoreBackend.available)
  func tokenBecomesPaymentMethod(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let checkout = try shop.authorize("tok_visa")
    shop.server.inject(.resetAfterExecuting, on: .createPaymentIntent)
    let lost = try shop.process(checkout)
    #expect(lost["failureCode"] == .string("gateway_unavailable"), "\(lost.compact)")
    let replayed = try shop.process(checkout)
    #expect(replayed["status"] == .string("succeeded"), "\(replayed.compact)")
    #expect(replayed["chargeId"] == .string("ch_test000001"))
    #expect(replayed["order"]?["gatewayPaymentId"] == .string("pi_test000001"))

    let orderId = try #require(replayed["orderId"]?.stringValue)
    let key = Identifiers.chargeIdempotencyKey(orderId: orderId)
    let methods = shop.requests("POST", "/v1/payment_methods")
    #expect(methods.map(\.body) == Array(repeating: "type=card&card%5Btoken%5D=tok_visa", count: 2))
    #expect(methods.map(\.idempotencyKey) == [key + "-payment-method", key + "-payment-method"])
    #expect(methods.map(\.replayed) == [false, true])
    let intents = shop.requests("POST", "/v1/payment_intents")
    #expect(intents.map(\.replayed) == [false, true])
    #expect(
      intents.first?.body
        == "amount=\(shop.minor(checkout.amount))&currency=usd&confirm=true&capture_method=automatic&payment_method_types%5B%5D=card&metadata%5Border_id%5D=\(orderId)&payment_method=pm_test000001&error_on_requires_action=true&expand%5B%5D=latest_charge"
    )
    #expect(shop.server.paymentMethodsCreated(idempotencyKey: key + "-payment-method") == 1)
    #expect(shop.server.paymentIntentsCreated(idempotencyKey: key) == 1)
    #expect(shop.server.paymentIntentCount == 1)
    #expect(try shop.stock() == 98)
  }

  // MARK: 2. Every refund status

  /// Where a refund answered with each status Stripe allows leaves the order.
  struct RefundCase: Sendable, CustomTestStringConvertible {
    var card: String
    /// Stripe's status in its answer ("null" for none).
    var stripeStatus: String
    /// The refund's status on the order; nil when recorded as succeeded; "declined" when not recorded.
    var recorded: String?
    var testDescription: String { "\(stripeStatus) (\(card))" }
  }

  static let refundCases = [
    RefundCase(card: "tok_visa", stripeStatus: "succeeded", recorded: nil),
    RefundCase(card: "tok_pendingRefund", stripeStatus: "pending", recorded: "pending"),
    RefundCase(card: "tok_refundNoStatus", stripeStatus: "null", recorded: "pending"),
    RefundCase(card: "tok_refundRequiresAction", stripeStatus: "requires_action", recorded: "requires_action"),
    RefundCase(card: "tok_refundFailsAtOnce", stripeStatus: "failed", recorded: "declined"),
    RefundCase(card: "tok_refundCanceled", stripeStatus: "canceled", recorded: "declined"),
  ]

  @Test(
    "each refund status Stripe allows has a state on the order: succeeded counted; pending and null counted with status pending and amountRefundPending; requires_action likewise; failed and canceled refund_declined with the order unchanged; a lost answer's replay records it once, never unavailable; settling it later settles once",
    arguments: StoreBackend.available, refundCases)
  func refundStatuses(backend: StoreBackend, refund: RefundCase) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let (orderId, paymentId) = try shop.place(refund.card)
    let params = #"{"orderId":"\#(orderId)","refundId":"rf-1","amount":"1.00","reason":"dented"}"#
    // Stripe refunds, and its answer is lost: pending under the key; the replay reads Stripe's answer.
    shop.server.inject(.resetAfterExecuting, on: .refund)
    let lost = shop.handler.call("refundOrder", params)["result"]
    #expect(lost?["failureCode"] == .string("gateway_unavailable"), "\(lost?.compact ?? "")")
    let answer = try #require(shop.handler.call("refundOrder", params)["result"])
    let again = try #require(shop.handler.call("refundOrder", params)["result"])
    #expect(again == answer)
    #expect(shop.server.refundCount == 1)
    #expect(shop.server.refunds(paymentIntent: paymentId).map(\.amount) == [100])
    #expect(try shop.pending().isEmpty)
    let order = try #require(shop.order(orderId))
    switch refund.recorded {
    case "declined":
      let reason = refund.stripeStatus == "failed" ? " (declined)" : ""
      #expect(
        answer.compact
          == #"{"status":"failed","failureCode":"refund_declined","message":"Stripe answered refund re_test000001 as \#(refund.stripeStatus)\#(reason): no money went back, and the order is unchanged. Refund the buyer another way, or try again with a new refundId."}"#
      )
      #expect(order["status"] == .string("paid"))
      #expect(order["amountRefunded"] == .string("0.00"))
      #expect(order["amountRefundPending"] == nil)
      #expect(order["refunds"] == .array([]))
    default:
      #expect(answer["status"] == .string("succeeded"), "\(answer.compact)")
      #expect(answer["orderStatus"] == .string("partially_refunded"))
      #expect(answer["amountRefunded"] == .string("1.00"))
      #expect(answer["refund"]?["gatewayRefundId"] == .string("re_test000001"))
      #expect(answer["refund"]?["status"] == refund.recorded.map(JSONValue.string))
      #expect(order["status"] == .string("partially_refunded"))
      #expect(order["amountRefunded"] == .string("1.00"))
      #expect(order["amountRefundPending"] == refund.recorded.map { _ in .string("1.00") })
      #expect(order["refunds"]?[0]?["status"] == refund.recorded.map(JSONValue.string))
      guard refund.recorded != nil else { break }
      // What a later event does (processStripeEvent's part): settles it once, by refundId and Stripe's id.
      let succeeds = refund.stripeStatus != "requires_action"
      let outcome: GatewayReport.RefundOutcome = succeeds ? .succeeded : .failed(status: "canceled")
      let settle = {
        try shop.context.store.write { transaction in
          try GatewayReport.settleRefund(
            refundId: "rf-1", gatewayRefundId: "re_test000001", outcome: outcome, transaction, at: "2026-11-21T12:00:00Z")
        }
      }
      #expect(try settle() == true)
      #expect(try settle() == false)
      let settled = try #require(shop.order(orderId))
      #expect(settled["amountRefundPending"] == nil)
      #expect(settled["refunds"]?[0]?["status"] == (succeeds ? nil : .string("canceled")))
      #expect(settled["amountRefunded"] == .string(succeeds ? "1.00" : "0.00"))
      #expect(settled["status"] == .string(succeeds ? "partially_refunded" : "paid"))
    }
    #expect(shop.server.refundCount == 1)
  }

  // MARK: 3. processing

  @Test(
    "a PaymentIntent in processing keeps the order pending (stock held, listed pending, payment_processing); the same processOrder asks Stripe for its state (GET /v1/payment_intents/{id}) and settles it once final: paid, or failed with the stock back",
    arguments: StoreBackend.available, [true, false])
  func processingKeptPending(backend: StoreBackend, succeeds: Bool) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let checkout = try shop.authorize("tok_processing")
    let processing =
      #"{"status":"failed","failureCode":"payment_processing","message":"Stripe is processing the payment pi_test000001: the money may still arrive. The order is pending with its stock held: send the same processOrder again later to settle it once Stripe has decided; the card is never charged twice."}"#
    #expect(try shop.process(checkout).compact == processing)
    let orderId = try shop.context.identifiers.orderId(token: checkout.token)
    #expect(try shop.stock() == 98)
    #expect(try shop.pending() == [["order", checkout.token, orderId]])
    #expect(shop.order(orderId)?["status"] == .string("pending"))
    let listed = shop.handler.call("listOrders", #"{"status":"pending"}"#)["result"]?["orders"]?[0]?["orderId"]
    #expect(listed == .string(orderId))
    // Still processing: the replay re-sends the same POST (replayed), reads the PaymentIntent, stays pending.
    #expect(try shop.process(checkout).compact == processing)
    #expect(shop.requests("GET", "/v1/payment_intents/pi_test000001").count == 1)
    #expect(shop.server.settleProcessing(paymentIntent: "pi_test000001", succeeded: succeeds))
    if succeeds {
      let settled = try shop.process(checkout)
      #expect(settled["status"] == .string("succeeded"), "\(settled.compact)")
      #expect(settled["chargeId"] == .string("ch_test000001"))
      #expect(settled["order"]?["status"] == .string("paid"))
      #expect(try shop.stock() == 98)
    } else {
      // The sweep at start settles it the same way.
      #expect(try OperationRunner.sweep(context: shop.context) == OperationRunner.Sweep(resolved: 1, pending: 0))
      let settled = try shop.process(checkout)
      #expect(
        settled.compact
          == #"{"status":"failed","failureCode":"card_declined","declineCode":"generic_decline","chargeId":"ch_test000001","message":"Your card was declined."}"#
      )
      #expect(try shop.stock() == 100)
    }
    #expect(try shop.pending().isEmpty)
    #expect(shop.requests("GET", "/v1/payment_intents/pi_test000001").count == 2)
    #expect(shop.server.paymentIntentCount == 1)
    #expect(shop.requests("POST", "/v1/payment_intents").map(\.replayed) == [false, true, true])
  }

  // MARK: 4. requires_action

  @Test(
    "a card that needs the customer to authenticate: error_on_requires_action=true makes it Stripe's authentication_required decline, answered card_declined / authentication_required with the stock back, and no PaymentIntent left open",
    arguments: StoreBackend.available)
  func authenticationRequired(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let checkout = try shop.authorize("tok_authenticationRequired")
    let declined = try shop.process(checkout)
    #expect(
      declined.compact
        == #"{"status":"failed","failureCode":"card_declined","declineCode":"authentication_required","chargeId":"ch_test000001","message":"The card's bank asks the buyer to authenticate this payment, which a payment confirmed by the server cannot do: the card was not charged. Ask the buyer to pay again (Apple Pay authenticates on the device) or with another card."}"#
    )
    #expect(try shop.process(checkout) == declined)
    #expect(try shop.stock() == 100)
    #expect(shop.server.paymentIntent("pi_test000001")?["status"] == "requires_payment_method")
    #expect(shop.requests("POST", "/v1/payment_intents").count == 1)
    #expect(shop.requests("POST", "/v1/payment_intents").first?.body.contains("error_on_requires_action=true") == true)
    #expect(shop.server.paymentIntentCount == 1)
  }

  // MARK: 5. A 500 Stripe stored

  @Test(
    "a 500 Stripe stored under the key after charging: the replay gets the stored 500 again, searches for the order's PaymentIntent by metadata order_id, and records the order once",
    arguments: StoreBackend.available)
  func storedServerErrorCharged(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let checkout = try shop.authorize("tok_visa")
    shop.server.inject(.serverErrorStored(.afterExecuting), on: .createPaymentIntent)
    #expect(try shop.process(checkout)["failureCode"] == .string("gateway_unavailable"))
    let settled = try shop.process(checkout)
    #expect(settled["status"] == .string("succeeded"), "\(settled.compact)")
    #expect(settled["chargeId"] == .string("ch_test000001"))
    let orderId = try #require(settled["orderId"]?.stringValue)
    let searches = shop.requests("GET", "/v1/payment_intents/search")
    #expect(searches.count == 1)
    #expect(shop.requests("POST", "/v1/payment_intents").map { [$0.status, $0.replayed ? 1 : 0] } == [[500, 0], [500, 1]])
    #expect(shop.server.paymentIntentCount == 1)
    #expect(try shop.pending().isEmpty)
    #expect(shop.order(orderId)?["status"] == .string("paid"))
    #expect(try shop.stock() == 98)
  }

  @Test(
    "a 500 Stripe stored under the key before charging: a search that finds nothing within two minutes keeps the order pending; after them the order is released as gateway_failed, the stock back, no chargeId, and nothing charged",
    arguments: StoreBackend.available)
  func storedServerErrorNotCharged(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let checkout = try shop.authorize("tok_visa")
    shop.server.inject(.serverErrorStored(.withoutExecuting), on: .createPaymentIntent)
    #expect(try shop.process(checkout)["failureCode"] == .string("gateway_unavailable"))
    let orderId = try shop.context.identifiers.orderId(token: checkout.token)
    let young = try shop.process(checkout)
    #expect(
      young.compact
        == #"{"status":"failed","failureCode":"gateway_unavailable","message":"Stripe answered the charge with a server error it stored under the idempotency key, and its search finds no payment for order \#(orderId) yet (search results can lag a minute behind). The order is pending: send the same processOrder again in 2 minutes to settle it."}"#
    )
    #expect(try shop.pending() == [["order", checkout.token, orderId]])
    #expect(try shop.stock() == 98)
    let (_, later) = shop.later(TestConfig.now + 120)
    let released = try shop.process(checkout, with: later)
    let expected =
      #"{"status":"failed","failureCode":"gateway_failed","message":"Stripe failed the charge with a server error it stored under the idempotency key, and holds no payment for order \#(orderId): the card was not charged. Authorize the payment again to retry."}"#
    #expect(released.compact == expected)
    #expect(try shop.process(checkout, with: later).compact == expected)
    #expect(try shop.pending().isEmpty)
    #expect(try shop.stock() == 100)
    #expect(shop.requests("GET", "/v1/payment_intents/search").count == 2)
    #expect(shop.server.paymentIntentCount == 0)
  }

  // MARK: 6. Manual capture's expiry

  @Test(
    "manual capture: getOrder shows captureBefore (Stripe's capture_before); captureOrder from then on is authorization_expired with nothing sent; cancelOrder cancels the order Stripe canceled",
    arguments: StoreBackend.available)
  func captureExpiry(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend, capture: .manual)
    defer { shop.server.shutdown() }
    let (orderId, paymentId) = try shop.place("tok_visa")
    let captureBefore = try #require(shop.order(orderId)?["captureBefore"]?.stringValue)
    #expect(captureBefore == shop.server.paymentIntent(paymentId)?["capture_before"].flatMap { Int64($0) }.map(RFC3339.format))
    let deadline = try #require(RFC3339.parse(captureBefore))
    #expect(abs(deadline - 7 * 86_400 - Int64(Date().timeIntervalSince1970)) < 120)

    shop.server.expireAuthorization(paymentIntent: paymentId)
    let (_, expired) = shop.later(deadline)
    let sent = shop.server.requests.count
    let capture = expired.call("captureOrder", #"{"orderId":"\#(orderId)","captureId":"cap-1"}"#)["result"]
    #expect(
      capture?.compact
        == #"{"status":"failed","failureCode":"authorization_expired","message":"The authorization expired at \#(captureBefore): Stripe cancels a payment left uncaptured that long, so nothing can be captured. Cancel the order with cancelOrder, and ask the buyer to pay again."}"#
    )
    #expect(shop.server.requests.count == sent)
    let cancel = expired.call("cancelOrder", #"{"orderId":"\#(orderId)","cancelId":"cx-1"}"#)["result"]
    #expect(cancel?["status"] == .string("succeeded"), "\(cancel?.compact ?? "")")
    #expect(shop.order(orderId)?["status"] == .string("canceled"))
    #expect(shop.server.paymentIntent(paymentId)?["status"] == "canceled")
    #expect(try shop.stock() == 100)
  }

  // MARK: 7. No invented ids

  @Test(
    "a gateway_error answers no chargeId (none is made up in Stripe's ch_ form); a decline names Stripe's own failed charge",
    arguments: StoreBackend.available)
  func noInventedIds(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let checkout = try shop.authorize("tok_visa")
    let body =
      #"{"error":{"message":"Invalid currency: xyz.","param":"currency","type":"invalid_request_error"}}"#
    shop.server.inject(
      .answerWithoutExecuting(status: 400, headers: [("Content-Type", "application/json")], body: body),
      on: .createPaymentIntent)
    let refused = try shop.process(checkout)
    #expect(
      refused.compact
        == #"{"status":"failed","failureCode":"gateway_error","message":"Stripe refused the request (invalid_request_error): Invalid currency: xyz."}"#
    )
    #expect(try shop.process(checkout) == refused)
    #expect(try shop.stock() == 100)
    let declined = try shop.process(try shop.authorize("tok_chargeDeclined"))
    #expect(declined["chargeId"] == .string("ch_test000001"), "\(declined.compact)")
  }
}

extension StripeDocumentedTests.Shop {
  func minor(_ text: String) -> Int64 { Int64(text.replacingOccurrences(of: ".", with: ""))! }
}
