import Foundation
import PayServiceCore
import PayServiceStripe
import PayServiceTestSupport
import Testing

/// An agreement's charges through the real `StripeGateway` against the Stripe test server over
/// TLS: the first payment keeps the card (a Customer, `setup_future_usage=off_session`, or a
/// SetupIntent for nothing charged), later payments charge it off-session; declines, cards that
/// need their holder, a detached card, replays and 500s Stripe stored under the key.
@Suite("Stripe: cards kept for agreements", .serialized)
struct StripeSavedCardTests {
  /// The test server's clock: every `created` and `capture_before` comes from it.
  static let clock: Int64 = 1_795_000_000

  /// A gateway on a fresh test server (no retries, as the other lost-answer tests).
  struct Stripe {
    let server: StripeTestServer
    let gateway: StripeGateway

    func charge(_ request: GatewayCharge) async -> GatewayReply<GatewayPayment> { await gateway.charge(request) }

    /// Every request the server received since `index`, as "METHOD path key body".
    func sent(from index: Int = 0) -> [String] {
      server.requests.dropFirst(index).map { "\($0.method) \($0.path) \($0.idempotencyKey ?? "-") \($0.body)" }
    }
  }

  static func withStripe(_ body: (Stripe) async throws -> Void) async throws {
    let server = try StripeTestServer()
    server.setClock(clock)
    let fixture = try StripeFixture(server: server)
    let gateway = StripeGateway(settings: try #require(try fixture.config().gateway.stripe), secretKey: server.secretKey)
    do {
      try await body(Stripe(server: server, gateway: gateway))
    } catch {
      await gateway.shutdown()
      server.shutdown()
      throw error
    }
    await gateway.shutdown()
    server.shutdown()
  }

  static func payment(_ reply: GatewayReply<GatewayPayment>) -> GatewayPayment? {
    if case .succeeded(let payment) = reply { return payment }
    return nil
  }

  static func decline(_ reply: GatewayReply<GatewayPayment>) -> GatewayDecline? {
    if case .declined(let decline) = reply { return decline }
    return nil
  }

  static func refusal(_ reply: GatewayReply<GatewayPayment>) -> GatewayRefusal? {
    if case .refused(let refusal) = reply { return refusal }
    return nil
  }

  static func unanswered(_ reply: GatewayReply<GatewayPayment>) -> String? {
    if case .unanswered(let reason) = reply { return reason }
    return nil
  }

  /// An agreement's first payment of `amount` with `paymentData`, keeping the card.
  static func first(
    _ paymentData: String = "tok_visa", amount: Int64 = 1999, order: String = "ord_1", key: String = "key_1",
    agreement: String? = "agr_1", manual: Bool = false
  ) -> GatewayCharge {
    GatewayCharge(
      paymentData: paymentData, amountMinor: amount, currencyCode: "USD", orderId: order, captureManually: manual,
      idempotencyKey: key, saveCard: true, agreementId: agreement)
  }

  /// A later payment of the agreement, the buyer absent.
  static func later(
    _ card: GatewaySavedCard, amount: Int64 = 1500, order: String = "ord_2", key: String = "key_2",
    agreement: String = "agr_1", manual: Bool = false
  ) -> GatewayCharge {
    GatewayCharge(
      paymentData: "", amountMinor: amount, currencyCode: "USD", orderId: order, captureManually: manual,
      idempotencyKey: key, savedCard: card, agreementId: agreement)
  }

  static let saved = GatewaySavedCard(customerId: "cus_test000001", paymentMethodId: "pm_test000001")

  /// The form of `later(saved)`'s PaymentIntent.
  static func offSessionForm(amount: Int64 = 1500, order: String = "ord_2", capture: String = "automatic") -> String {
    "amount=\(amount)&currency=usd&confirm=true&capture_method=\(capture)&payment_method_types%5B%5D=card&metadata%5Border_id%5D=\(order)&metadata%5Bagreement_id%5D=agr_1&customer=cus_test000001&payment_method=pm_test000001&off_session=true&expand%5B%5D=latest_charge"
  }

  // MARK: - The first payment

  @Test(
    "a first payment with saveCard makes a Customer (metadata only, key -customer), the PaymentMethod, then the PaymentIntent with customer and setup_future_usage=off_session: the reply names the card kept; sent again, every step replays"
  )
  func firstPaymentKeepsCard() async throws {
    try await Self.withStripe { stripe in
      let expected = GatewayPayment(
        id: "pi_test000001", chargeId: "ch_test000001", status: .captured, amountCapturedMinor: 1999,
        savedCard: Self.saved)
      #expect(Self.payment(await stripe.charge(Self.first())) == expected)
      #expect(
        stripe.sent() == [
          "POST /v1/customers key_1-customer metadata%5Border_id%5D=ord_1&metadata%5Bagreement_id%5D=agr_1",
          "POST /v1/payment_methods key_1-payment-method type=card&card%5Btoken%5D=tok_visa",
          "POST /v1/payment_intents key_1 amount=1999&currency=usd&confirm=true&capture_method=automatic&payment_method_types%5B%5D=card&metadata%5Border_id%5D=ord_1&metadata%5Bagreement_id%5D=agr_1&payment_method=pm_test000001&customer=cus_test000001&setup_future_usage=off_session&error_on_requires_action=true&expand%5B%5D=latest_charge",
        ])
      #expect(stripe.server.paymentMethodCustomer("pm_test000001") == "cus_test000001")
      #expect(stripe.server.paymentMethodSetUpForOffSession("pm_test000001"))
      let intent = try #require(stripe.server.paymentIntent("pi_test000001"))
      #expect(intent["customer"] == "cus_test000001" && intent["setup_future_usage"] == "off_session")
      #expect(intent["metadata[agreement_id]"] == "agr_1" && intent["metadata[order_id]"] == "ord_1")
      #expect(stripe.server.customerRecords().map(\.metadata) == [["order_id": "ord_1", "agreement_id": "agr_1"]])

      #expect(Self.payment(await stripe.charge(Self.first())) == expected)
      #expect(stripe.server.requests.dropFirst(3).map(\.replayed) == [true, true, true])
      #expect(stripe.server.customersCreated(idempotencyKey: "key_1-customer") == 1)
      #expect(stripe.server.paymentIntentCount == 1)
      #expect(
        stripe.server.events().map(\.type) == [
          "customer.created", "charge.succeeded", "payment_intent.succeeded", "payment_method.attached",
        ])
    }
  }

  @Test(
    "a first payment held for capture (and with a PaymentMethod given: no PaymentMethod made) keeps the card too; without an agreement id no agreement metadata is sent"
  )
  func firstPaymentHeld() async throws {
    try await Self.withStripe { stripe in
      let reply = await stripe.charge(Self.first("pm_card_mastercard", amount: 2500, agreement: nil, manual: true))
      #expect(
        Self.payment(reply)
          == GatewayPayment(
            id: "pi_test000001", chargeId: "ch_test000001", status: .authorized, amountCapturedMinor: 0,
            captureBefore: Self.clock + 7 * 86_400,
            savedCard: GatewaySavedCard(customerId: "cus_test000001", paymentMethodId: "pm_test000001")))
      #expect(
        stripe.sent() == [
          "POST /v1/customers key_1-customer metadata%5Border_id%5D=ord_1",
          "POST /v1/payment_intents key_1 amount=2500&currency=usd&confirm=true&capture_method=manual&payment_method_types%5B%5D=card&metadata%5Border_id%5D=ord_1&payment_method=pm_card_mastercard&customer=cus_test000001&setup_future_usage=off_session&error_on_requires_action=true&expand%5B%5D=latest_charge",
        ])
      #expect(stripe.server.paymentMethodCustomer("pm_test000001") == "cus_test000001")
    }
  }

  @Test(
    "a first payment of 0.00 with saveCard is a SetupIntent (customer, payment_method, confirm, usage=off_session, card, metadata) under the charge's key: captured with the card kept, nothing charged; sent again it replays"
  )
  func freeFirstPayment() async throws {
    try await Self.withStripe { stripe in
      let expected = GatewayPayment(
        id: "seti_test000001", chargeId: nil, status: .captured, amountCapturedMinor: 0, savedCard: Self.saved)
      #expect(Self.payment(await stripe.charge(Self.first(amount: 0))) == expected)
      #expect(
        stripe.sent() == [
          "POST /v1/customers key_1-customer metadata%5Border_id%5D=ord_1&metadata%5Bagreement_id%5D=agr_1",
          "POST /v1/payment_methods key_1-payment-method type=card&card%5Btoken%5D=tok_visa",
          "POST /v1/setup_intents key_1 customer=cus_test000001&payment_method=pm_test000001&confirm=true&usage=off_session&payment_method_types%5B%5D=card&metadata%5Border_id%5D=ord_1&metadata%5Bagreement_id%5D=agr_1",
        ])
      #expect(stripe.server.paymentIntentCount == 0)
      #expect(
        stripe.server.setupIntent("seti_test000001")
          == [
            "id": "seti_test000001", "status": "succeeded", "usage": "off_session", "customer": "cus_test000001",
            "payment_method": "pm_test000001", "metadata[order_id]": "ord_1", "metadata[agreement_id]": "agr_1",
          ])
      #expect(stripe.server.paymentMethodCustomer("pm_test000001") == "cus_test000001")
      #expect(Self.payment(await stripe.charge(Self.first(amount: 0))) == expected)
      #expect(stripe.server.requests.dropFirst(3).map(\.replayed) == [true, true, true])
      #expect(stripe.server.setupIntentsCreated(idempotencyKey: "key_1") == 1)
      #expect(
        stripe.server.events().map(\.type) == [
          "customer.created", "setup_intent.created", "setup_intent.succeeded", "payment_method.attached",
        ])
      // The card kept this way is charged later off-session.
      #expect(
        Self.payment(await stripe.charge(Self.later(Self.saved)))
          == GatewayPayment(id: "pi_test000001", chargeId: "ch_test000001", status: .captured, amountCapturedMinor: 1500))
    }
  }

  @Test(
    "saving declines: a first payment declined keeps nothing; a SetupIntent with a card that declines is declined (Stripe's card error, no charge); one that needs the holder is requiresAction, nothing kept"
  )
  func savingDeclines() async throws {
    try await Self.withStripe { stripe in
      #expect(
        Self.decline(await stripe.charge(Self.first("tok_chargeDeclined")))
          == GatewayDecline(
            code: "card_declined", declineCode: "generic_decline", chargeId: "ch_test000001",
            message: "Your card was declined."))
      #expect(stripe.server.paymentMethodCustomer("pm_test000001") == nil)
      #expect(
        Self.decline(await stripe.charge(Self.first("tok_chargeDeclinedInsufficientFunds", amount: 0, key: "key_2")))
          == GatewayDecline(
            code: "card_declined", declineCode: "insufficient_funds", chargeId: nil,
            message: "Your card has insufficient funds."))
      #expect(stripe.server.setupIntent("seti_test000001")?["status"] == "requires_payment_method")
      #expect(
        Self.payment(await stripe.charge(Self.first("tok_authenticationRequired", amount: 0, key: "key_3")))
          == GatewayPayment(id: "seti_test000002", chargeId: nil, status: .requiresAction, amountCapturedMinor: 0))
      // On-session with error_on_requires_action: the 3-D Secure card's first payment is declined.
      #expect(
        Self.decline(await stripe.charge(Self.first("tok_authenticationRequiredOnSetup", key: "key_4")))
          == GatewayDecline(
            code: "authentication_required", declineCode: "authentication_required", chargeId: "ch_test000002",
            message: "Your card was declined. This transaction requires authentication."))
      #expect(stripe.server.customerRecords().count == 4)
      #expect(stripe.server.events().filter { $0.type == "payment_method.attached" }.isEmpty)
    }
  }

  // MARK: - Later payments, off-session

  @Test(
    "a later payment charges the kept card off-session (customer, payment_method, off_session=true, no error_on_requires_action, no Customer or PaymentMethod made); the same request again replays: one PaymentIntent at the server"
  )
  func offSessionCharge() async throws {
    try await Self.withStripe { stripe in
      #expect(Self.payment(await stripe.charge(Self.first()))?.savedCard == Self.saved)
      let expected = GatewayPayment(
        id: "pi_test000002", chargeId: "ch_test000002", status: .captured, amountCapturedMinor: 1500)
      #expect(Self.payment(await stripe.charge(Self.later(Self.saved))) == expected)
      #expect(stripe.sent(from: 3) == ["POST /v1/payment_intents key_2 " + Self.offSessionForm()])
      #expect(Self.payment(await stripe.charge(Self.later(Self.saved))) == expected)
      #expect(stripe.server.requests.last?.replayed == true)
      #expect(stripe.server.paymentIntentsCreated(idempotencyKey: "key_2") == 1)
      // Held for capture.
      #expect(
        Self.payment(await stripe.charge(Self.later(Self.saved, amount: 900, order: "ord_3", key: "key_3", manual: true)))
          == GatewayPayment(
            id: "pi_test000003", chargeId: "ch_test000003", status: .authorized, amountCapturedMinor: 0,
            captureBefore: Self.clock + 7 * 86_400))
      #expect(
        stripe.server.paymentIntents(agreementId: "agr_1").map {
          "\($0.id) \($0.amount) \($0.status) \($0.offSession) \($0.idempotencyKey ?? "-") \($0.metadata["order_id"] ?? "-")"
        } == [
          "pi_test000001 1999 succeeded false key_1 ord_1", "pi_test000002 1500 succeeded true key_2 ord_2",
          "pi_test000003 900 requires_capture true key_3 ord_3",
        ])
      #expect(stripe.server.customerRecords().count == 1)
      #expect(stripe.server.requests.filter { $0.path == "/v1/payment_methods" }.count == 1)
    }
  }

  @Test(
    "declineNextOffSessionCharges: the next off-session payments are declined with Stripe's card error (insufficient_funds), the same request again gives the same decline, a later period's payment succeeds"
  )
  func offSessionDeclines() async throws {
    try await Self.withStripe { stripe in
      _ = await stripe.charge(Self.first())
      stripe.server.declineNextOffSessionCharges(
        customer: "cus_test000001", code: "card_declined", declineCode: "insufficient_funds", count: 2)
      let declined = GatewayDecline(
        code: "card_declined", declineCode: "insufficient_funds", chargeId: "ch_test000002",
        message: "Your card has insufficient funds.")
      #expect(Self.decline(await stripe.charge(Self.later(Self.saved))) == declined)
      #expect(Self.decline(await stripe.charge(Self.later(Self.saved))) == declined)
      #expect(stripe.server.requests.last?.replayed == true)
      #expect(
        Self.decline(await stripe.charge(Self.later(Self.saved, order: "ord_3", key: "key_3")))
          == GatewayDecline(
            code: "card_declined", declineCode: "insufficient_funds", chargeId: "ch_test000003",
            message: "Your card has insufficient funds."))
      #expect(
        Self.payment(await stripe.charge(Self.later(Self.saved, order: "ord_4", key: "key_4")))
          == GatewayPayment(id: "pi_test000004", chargeId: "ch_test000004", status: .captured, amountCapturedMinor: 1500))
      #expect(
        stripe.server.paymentIntents(agreementId: "agr_1").map(\.status) == [
          "succeeded", "requires_payment_method", "requires_payment_method", "succeeded",
        ])
      // Stripe's expired_card has no decline code of its own: the code stands for it, as for every card error.
      stripe.server.declineNextOffSessionCharges(customer: "cus_test000001", code: "expired_card", declineCode: nil, count: 1)
      #expect(
        Self.decline(await stripe.charge(Self.later(Self.saved, order: "ord_5", key: "key_5")))
          == GatewayDecline(
            code: "expired_card", declineCode: "expired_card", chargeId: "ch_test000005",
            message: "Your card has expired."))
    }
  }

  /// A card of Stripe's for off-session payments, kept by a 0.00 first payment its holder
  /// authenticated, then charged off-session.
  struct AuthenticationCase: Sendable, CustomTestStringConvertible {
    var card: String
    /// The off-session payment's decline code; nil when it succeeds.
    var decline: String?
    var testDescription: String { card }
  }

  @Test(
    "cards that ask for their holder: a SetupIntent waits (requiresAction) until the holder authenticates; then authenticationRequired's off-session payments are declined authentication_required, authenticationRequiredOnSetup's succeed",
    arguments: [
      AuthenticationCase(card: "authenticationRequired", decline: "authentication_required"),
      AuthenticationCase(card: "authenticationRequiredOnSetup", decline: nil),
    ])
  func authentication(_ testCase: AuthenticationCase) async throws {
    try await Self.withStripe { stripe in
      #expect(
        Self.payment(await stripe.charge(Self.first("tok_" + testCase.card, amount: 0)))
          == GatewayPayment(id: "seti_test000001", chargeId: nil, status: .requiresAction, amountCapturedMinor: 0))
      #expect(stripe.server.authenticateSetupIntent("seti_test000001"))
      #expect(stripe.server.paymentMethodCustomer("pm_test000001") == "cus_test000001")
      let reply = await stripe.charge(Self.later(Self.saved))
      if let code = testCase.decline {
        #expect(
          Self.decline(reply)
            == GatewayDecline(
              code: code, declineCode: code, chargeId: "ch_test000001",
              message: "Your card was declined. This transaction requires authentication."))
        #expect(stripe.server.paymentIntent("pi_test000001")?["status"] == "requires_payment_method")
      } else {
        #expect(
          Self.payment(reply)
            == GatewayPayment(id: "pi_test000001", chargeId: "ch_test000001", status: .captured, amountCapturedMinor: 1500))
      }
      #expect(stripe.sent(from: 3) == ["POST /v1/payment_intents key_2 " + Self.offSessionForm()])
    }
  }

  @Test("the chargeCustomerFail card is kept (a SetupIntent succeeds) and every off-session payment of it is declined")
  func chargeCustomerFail() async throws {
    try await Self.withStripe { stripe in
      #expect(Self.payment(await stripe.charge(Self.first("tok_chargeCustomerFail", amount: 0)))?.status == .captured)
      #expect(
        Self.decline(await stripe.charge(Self.later(Self.saved)))
          == GatewayDecline(
            code: "card_declined", declineCode: "generic_decline", chargeId: "ch_test000001",
            message: "Your card was declined."))
    }
  }

  @Test(
    "a detached PaymentMethod: the off-session payment is refused for good (invalid_request_error, payment_method_unexpected_state kept as the refusal's code), again the same; nothing charged"
  )
  func detached() async throws {
    try await Self.withStripe { stripe in
      _ = await stripe.charge(Self.first(amount: 0))
      #expect(stripe.server.detachPaymentMethod("pm_test000001"))
      let refused = GatewayRefusal(
        type: "invalid_request_error", code: "payment_method_unexpected_state",
        message: StripeTestServerSavedCardTests.detachedMessage, final: true)
      #expect(Self.refusal(await stripe.charge(Self.later(Self.saved))) == refused)
      #expect(Self.refusal(await stripe.charge(Self.later(Self.saved))) == refused)
      #expect(stripe.server.requests.last?.replayed == true)
      #expect(stripe.server.paymentIntentCount == 0)
      #expect(stripe.server.events().last?.type == "payment_method.detached")
    }
  }

  // MARK: - Answers lost, and 500s Stripe stored

  /// Where a 500 is stored, and what the same charge sent again comes to.
  struct StoredCase: Sendable, CustomTestStringConvertible {
    var name: String
    var route: StripeTestServer.Route
    var executed: Bool
    /// A first payment of this amount; nil for an off-session payment.
    var firstAmount: Int64?
    var testDescription: String { name }
  }

  static let storedCases = [
    StoredCase(name: "off-session PaymentIntent, executed", route: .createPaymentIntent, executed: true, firstAmount: nil),
    StoredCase(name: "off-session PaymentIntent, not executed", route: .createPaymentIntent, executed: false, firstAmount: nil),
    StoredCase(name: "first PaymentIntent, executed", route: .createPaymentIntent, executed: true, firstAmount: 1999),
    StoredCase(name: "SetupIntent, executed", route: .createSetupIntent, executed: true, firstAmount: 0),
    StoredCase(name: "SetupIntent, not executed", route: .createSetupIntent, executed: false, firstAmount: 0),
    StoredCase(name: "Customer of a first payment, not executed", route: .createCustomer, executed: false, firstAmount: 1999),
    StoredCase(name: "Customer of a 0.00 first payment, not executed", route: .createCustomer, executed: false, firstAmount: 0),
  ]

  @Test(
    "a 500 Stripe stored under the key: the first answer is lost (unanswered); the same charge again is resolved by the search (PaymentIntents) or the Customer's SetupIntent list: what was made, with the card kept, or notFound",
    arguments: storedCases)
  func storedServerError(_ testCase: StoredCase) async throws {
    try await Self.withStripe { stripe in
      let request: GatewayCharge
      if let amount = testCase.firstAmount {
        request = Self.first(amount: amount)
      } else {
        _ = await stripe.charge(Self.first(amount: 0, key: "key_0"))
        request = Self.later(Self.saved)
      }
      let before = stripe.server.requests.count
      stripe.server.inject(.serverErrorStored(testCase.executed ? .afterExecuting : .withoutExecuting), on: testCase.route)
      #expect(Self.unanswered(await stripe.charge(request)) == "HTTP 500 from Stripe")
      let reply = await stripe.charge(request)
      let reads = stripe.server.requests.dropFirst(before).filter { $0.method == "GET" }.map(\.path)
      switch (testCase.route, testCase.executed, testCase.firstAmount) {
      case (.createPaymentIntent, true, nil):
        #expect(
          Self.payment(reply)
            == GatewayPayment(id: "pi_test000001", chargeId: "ch_test000001", status: .captured, amountCapturedMinor: 1500))
        #expect(reads == ["/v1/payment_intents/search"])
      case (.createPaymentIntent, true, _):
        #expect(
          Self.payment(reply)
            == GatewayPayment(
              id: "pi_test000001", chargeId: "ch_test000001", status: .captured, amountCapturedMinor: 1999,
              savedCard: Self.saved))
        #expect(reads == ["/v1/payment_intents/search"])
      case (.createSetupIntent, true, _):
        #expect(
          Self.payment(reply)
            == GatewayPayment(
              id: "seti_test000001", chargeId: nil, status: .captured, amountCapturedMinor: 0, savedCard: Self.saved))
        #expect(reads == ["/v1/setup_intents"])
      case (.createSetupIntent, false, _):
        #expect(Self.payment(reply) == GatewayPayment(id: "", chargeId: nil, status: .notFound, amountCapturedMinor: 0))
        #expect(reads == ["/v1/setup_intents"])
      case (.createCustomer, _, .some(0)):
        #expect(Self.payment(reply) == GatewayPayment(id: "", chargeId: nil, status: .notFound, amountCapturedMinor: 0))
        #expect(reads == [])
      default:
        #expect(Self.payment(reply) == GatewayPayment(id: "", chargeId: nil, status: .notFound, amountCapturedMinor: 0))
        #expect(reads == ["/v1/payment_intents/search"])
      }
    }
  }

  @Test(
    "processing: a SetupIntent (and a first PaymentIntent) left processing is processing with the card named; the same charge again reads it anew (GET) and answers it settled"
  )
  func processing() async throws {
    try await Self.withStripe { stripe in
      let setup = Self.first("tok_processing", amount: 0)
      #expect(
        Self.payment(await stripe.charge(setup))
          == GatewayPayment(
            id: "seti_test000001", chargeId: nil, status: .processing, amountCapturedMinor: 0, savedCard: Self.saved))
      #expect(stripe.server.settleProcessing(setupIntent: "seti_test000001", succeeded: true))
      #expect(
        Self.payment(await stripe.charge(setup))
          == GatewayPayment(
            id: "seti_test000001", chargeId: nil, status: .captured, amountCapturedMinor: 0, savedCard: Self.saved))
      #expect(stripe.server.requests.last.map { "\($0.method) \($0.path)" } == "GET /v1/setup_intents/seti_test000001")

      let payment = Self.first("pm_card_processing", order: "ord_2", key: "key_2")
      let kept = GatewaySavedCard(customerId: "cus_test000002", paymentMethodId: "pm_test000002")
      #expect(
        Self.payment(await stripe.charge(payment))
          == GatewayPayment(
            id: "pi_test000001", chargeId: "ch_test000001", status: .processing, amountCapturedMinor: 0, savedCard: kept))
      #expect(stripe.server.paymentMethodCustomer("pm_test000002") == nil)
      #expect(stripe.server.settleProcessing(paymentIntent: "pi_test000001", succeeded: true))
      #expect(stripe.server.paymentMethodCustomer("pm_test000002") == "cus_test000002")
      #expect(
        Self.payment(await stripe.charge(payment))
          == GatewayPayment(
            id: "pi_test000001", chargeId: "ch_test000001", status: .captured, amountCapturedMinor: 1999, savedCard: kept))
      #expect(stripe.server.requests.last.map { "\($0.method) \($0.path)" } == "GET /v1/payment_intents/pi_test000001")
    }
  }

  @Test("a one-off charge (no saveCard, no savedCard) sends exactly what it sent before: no Customer, no agreement metadata")
  func oneOffUnchanged() async throws {
    try await Self.withStripe { stripe in
      let request = GatewayCharge(
        paymentData: "tok_visa", amountMinor: 1999, currencyCode: "USD", orderId: "ord_1", captureManually: false,
        idempotencyKey: "key_1")
      #expect(
        Self.payment(await stripe.charge(request))
          == GatewayPayment(id: "pi_test000001", chargeId: "ch_test000001", status: .captured, amountCapturedMinor: 1999))
      #expect(
        stripe.sent() == [
          "POST /v1/payment_methods key_1-payment-method type=card&card%5Btoken%5D=tok_visa",
          "POST /v1/payment_intents key_1 amount=1999&currency=usd&confirm=true&capture_method=automatic&payment_method_types%5B%5D=card&metadata%5Border_id%5D=ord_1&payment_method=pm_test000001&error_on_requires_action=true&expand%5B%5D=latest_charge",
        ])
      #expect(stripe.server.customerRecords().isEmpty)
    }
  }
}
