import AsyncHTTPClient
import Foundation
import PayServiceTestSupport
import Testing

/// The Stripe test server's Customers, SetupIntents, attached PaymentMethods and off-session
/// PaymentIntents, through a real AsyncHTTPClient over TLS.
@Suite("Stripe test server: cards kept for later", .serialized)
struct StripeTestServerSavedCardTests {
  typealias Base = StripeTestServerTests

  static func send(
    _ client: HTTPClient, _ server: StripeTestServer, _ path: String, method: String = "POST",
    form: [(String, String)] = [], key: String? = nil
  ) async throws -> Base.Answer {
    try await Base.send(client, server, path, method: method, form: form, idempotencyKey: key)
  }

  /// A Customer made with `metadata[order_id]`: its id.
  static func customer(_ client: HTTPClient, _ server: StripeTestServer, order: String = "ord_1") async throws -> String {
    let made = try await send(client, server, "/v1/customers", form: [("metadata[order_id]", order)])
    return try #require(made.json["id"] as? String)
  }

  /// An off-session charge's form.
  static func offSession(_ customer: String, _ method: String, amount: Int = 1500, extra: [(String, String)] = [])
    -> [(String, String)]
  {
    [
      ("amount", String(amount)), ("currency", "usd"), ("confirm", "true"), ("payment_method_types[]", "card"),
      ("customer", customer), ("payment_method", method), ("off_session", "true"),
    ] + extra
  }

  static func eventTypes(_ server: StripeTestServer) -> [String] { server.events().map(\.type) }

  @Test(
    "POST /v1/customers makes a Customer with its metadata (customer.created), GET reads it back; the same key and form replay it, another form is an idempotency_error; unknown ids and parameters are refused"
  )
  func customers() async throws {
    try await Base.withServer { server, client in
      let form = [("metadata[order_id]", "ord_1"), ("metadata[agreement_id]", "agr_1")]
      let made = try await Self.send(client, server, "/v1/customers", form: form, key: "k-cus")
      #expect(made.status == 200)
      #expect(made.json["id"] as? String == "cus_test000001")
      #expect(made.json["object"] as? String == "customer")
      #expect(made.json["metadata"] as? [String: String] == ["agreement_id": "agr_1", "order_id": "ord_1"])
      #expect(made.json["email"] is NSNull && made.json["name"] is NSNull && made.json["livemode"] as? Bool == false)
      let again = try await Self.send(client, server, "/v1/customers", form: form, key: "k-cus")
      #expect(again.body == made.body && again.header("Idempotent-Replayed") == "true")
      let other = try await Self.send(client, server, "/v1/customers", form: [("metadata[order_id]", "ord_2")], key: "k-cus")
      #expect(other.status == 400 && other.error["type"] as? String == "idempotency_error")
      #expect(server.customersCreated(idempotencyKey: "k-cus") == 1)
      let records = server.customerRecords()
      #expect(records.map(\.id) == ["cus_test000001"])
      #expect(records.map(\.metadata) == [["agreement_id": "agr_1", "order_id": "ord_1"]])
      #expect(records.map(\.created) == [Int64(try #require(made.json["created"] as? Int))])
      let read = try await Self.send(client, server, "/v1/customers/cus_test000001", method: "GET")
      #expect(read.status == 200 && read.body == made.body)
      let unknown = try await Self.send(client, server, "/v1/customers/cus_nope", method: "GET")
      #expect(unknown.status == 404 && unknown.error["code"] as? String == "resource_missing")
      #expect(unknown.error["message"] as? String == "No such customer: 'cus_nope'")
      let unknownParameter = try await Self.send(client, server, "/v1/customers", form: [("colour", "red")])
      #expect(unknownParameter.status == 400 && unknownParameter.error["code"] as? String == "parameter_unknown")
      #expect(Self.eventTypes(server) == ["customer.created"])
    }
  }

  @Test(
    "a PaymentIntent with customer and setup_future_usage=off_session shows both, and attaches its PaymentMethod once it succeeded (payment_method.attached after its own events); an unknown customer is 400 resource_missing"
  )
  func setupFutureUsage() async throws {
    try await Base.withServer { server, client in
      let customer = try await Self.customer(client, server)
      let paid = try await Self.send(
        client, server, "/v1/payment_intents",
        form: Base.charge("pm_card_visa", extra: [("customer", customer), ("setup_future_usage", "off_session")]))
      #expect(paid.status == 200 && paid.json["status"] as? String == "succeeded")
      #expect(paid.json["customer"] as? String == customer)
      #expect(paid.json["setup_future_usage"] as? String == "off_session")
      #expect(paid.json["payment_method"] as? String == "pm_test000001")
      #expect(server.paymentMethodCustomer("pm_test000001") == customer)
      #expect(server.paymentMethodSetUpForOffSession("pm_test000001"))
      let method = try await Self.send(client, server, "/v1/payment_methods/pm_test000001", method: "GET")
      #expect(method.json["customer"] as? String == customer)
      #expect(
        Self.eventTypes(server) == [
          "customer.created", "charge.succeeded", "payment_intent.succeeded", "payment_method.attached",
        ])
      // Declined: nothing attached.
      let declined = try await Self.send(
        client, server, "/v1/payment_intents",
        form: Base.charge(
          "pm_card_visa_chargeDeclined", extra: [("customer", customer), ("setup_future_usage", "off_session")]))
      #expect(declined.status == 402 && declined.error["decline_code"] as? String == "generic_decline")
      #expect(server.paymentMethodCustomer("pm_test000002") == nil)
      let unknown = try await Self.send(
        client, server, "/v1/payment_intents", form: Base.charge("pm_card_visa", extra: [("customer", "cus_nope")]))
      #expect(unknown.status == 400 && unknown.error["code"] as? String == "resource_missing")
      #expect(unknown.error["param"] as? String == "customer")
      #expect(unknown.error["message"] as? String == "No such customer: 'cus_nope'")
      let usage = try await Self.send(
        client, server, "/v1/payment_intents", form: Base.charge("pm_card_visa", extra: [("setup_future_usage", "later")]))
      #expect(usage.status == 400 && usage.error["param"] as? String == "setup_future_usage")
    }
  }

  @Test(
    "off_session: needs confirm=true, a PaymentMethod attached to the PaymentIntent's customer (not another's, not a detached one); detach (endpoint) makes it unusable for good and says payment_method.detached"
  )
  func offSessionRules() async throws {
    try await Base.withServer { server, client in
      let owner = try await Self.customer(client, server, order: "ord_1")
      let stranger = try await Self.customer(client, server, order: "ord_2")
      let attached = try await Self.send(
        client, server, "/v1/payment_methods/pm_card_visa/attach", form: [("customer", owner)])
      #expect(attached.status == 200 && attached.json["id"] as? String == "pm_test000001")
      #expect(attached.json["customer"] as? String == owner)

      let unconfirmed = try await Self.send(
        client, server, "/v1/payment_intents",
        form: [("amount", "1500"), ("currency", "usd"), ("customer", owner), ("payment_method", "pm_test000001"),
          ("off_session", "true")])
      #expect(unconfirmed.status == 400 && unconfirmed.error["param"] as? String == "off_session")
      #expect(server.paymentIntentCount == 0)

      let paid = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.offSession(owner, "pm_test000001"), key: "k-off")
      #expect(paid.status == 200 && paid.json["status"] as? String == "succeeded")
      let replay = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.offSession(owner, "pm_test000001"), key: "k-off")
      #expect(replay.body == paid.body && replay.header("Idempotent-Replayed") == "true")
      let changed = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.offSession(owner, "pm_test000001", amount: 1600), key: "k-off")
      #expect(changed.status == 400 && changed.error["type"] as? String == "idempotency_error")
      #expect(server.paymentIntentsCreated(idempotencyKey: "k-off") == 1)

      let foreign = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.offSession(stranger, "pm_test000001"))
      #expect(foreign.status == 400 && foreign.error["code"] as? String == "payment_method_unexpected_state")
      #expect(foreign.error["param"] as? String == "payment_method")
      let unattached = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.offSession(owner, "pm_card_visa"))
      #expect(unattached.status == 400 && unattached.error["code"] as? String == "payment_method_unexpected_state")

      let detached = try await Self.send(client, server, "/v1/payment_methods/pm_test000001/detach")
      #expect(detached.status == 200 && detached.json["customer"] is NSNull)
      #expect(server.paymentMethodCustomer("pm_test000001") == nil)
      let refused = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.offSession(owner, "pm_test000001"), key: "k-after")
      #expect(refused.status == 400 && refused.error["type"] as? String == "invalid_request_error")
      #expect(refused.error["code"] as? String == "payment_method_unexpected_state")
      #expect(refused.error["message"] as? String == StripeTestServerSavedCardTests.detachedMessage)
      let refusedAgain = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.offSession(owner, "pm_test000001"), key: "k-after")
      #expect(refusedAgain.body == refused.body && refusedAgain.header("Idempotent-Replayed") == "true")
      let detachAgain = try await Self.send(client, server, "/v1/payment_methods/pm_test000001/detach")
      #expect(detachAgain.status == 400 && detachAgain.error["code"] as? String == "payment_method_unexpected_state")
      let reattach = try await Self.send(
        client, server, "/v1/payment_methods/pm_test000001/attach", form: [("customer", owner)])
      #expect(reattach.status == 400)
      #expect(server.detachPaymentMethod("pm_test000001") == false)
      let detachedEvent = try #require(server.events().last { $0.type == "payment_method.detached" })
      #expect(detachedEvent.payload.contains(#""previous_attributes": {"#))
      #expect(detachedEvent.payload.contains(#""customer": "\#(owner)""#))
      #expect(server.paymentIntentCount == 1)
      let records = server.paymentIntentRecords()
      #expect(records.map(\.offSession) == [true] && records.map(\.idempotencyKey) == ["k-off"])
      #expect(records.map(\.customer) == [owner] && records.map(\.paymentMethod) == ["pm_test000001"])
    }
  }

  static let detachedMessage =
    "The provided PaymentMethod was previously used with a PaymentIntent without Customer attachment, shared with "
    + "a connected account without Customer attachment, or was detached from a Customer. It may not be used again. "
    + "To use a PaymentMethod multiple times, you must attach it to a Customer first."

  @Test(
    "SetupIntents: confirmed with a customer they succeed and attach the card (setup_intent.created, .succeeded, payment_method.attached); GET reads one; the list pages by customer; a declining card is 402 with the SetupIntent in the error (setup_intent.setup_failed); a card that needs its holder waits in requires_action until authenticateSetupIntent"
  )
  func setupIntents() async throws {
    try await Base.withServer { server, client in
      let customer = try await Self.customer(client, server)
      func setup(_ method: String, order: String, key: String? = nil) async throws -> Base.Answer {
        try await Self.send(
          client, server, "/v1/setup_intents",
          form: [
            ("customer", customer), ("payment_method", method), ("confirm", "true"), ("usage", "off_session"),
            ("payment_method_types[]", "card"), ("metadata[order_id]", order),
          ], key: key)
      }
      let made = try await setup("pm_card_visa", order: "ord_1", key: "k-seti")
      #expect(made.status == 200)
      #expect(made.json["id"] as? String == "seti_test000001" && made.json["object"] as? String == "setup_intent")
      #expect(made.json["status"] as? String == "succeeded" && made.json["usage"] as? String == "off_session")
      #expect(made.json["customer"] as? String == customer && made.json["payment_method"] as? String == "pm_test000001")
      #expect(made.json["metadata"] as? [String: String] == ["order_id": "ord_1"])
      #expect(made.json["last_setup_error"] is NSNull && made.json["next_action"] is NSNull)
      #expect(server.paymentMethodCustomer("pm_test000001") == customer)
      #expect(server.paymentMethodSetUpForOffSession("pm_test000001"))
      let replay = try await setup("pm_card_visa", order: "ord_1", key: "k-seti")
      #expect(replay.body == made.body && replay.header("Idempotent-Replayed") == "true")
      let otherForm = try await setup("pm_card_visa", order: "ord_9", key: "k-seti")
      #expect(otherForm.status == 400 && otherForm.error["type"] as? String == "idempotency_error")
      #expect(server.setupIntentsCreated(idempotencyKey: "k-seti") == 1)
      let read = try await Self.send(client, server, "/v1/setup_intents/seti_test000001", method: "GET")
      #expect(read.body == made.body)
      let missing = try await Self.send(client, server, "/v1/setup_intents/seti_nope", method: "GET")
      #expect(missing.status == 404 && missing.error["code"] as? String == "resource_missing")

      let declined = try await setup("pm_card_visa_chargeDeclinedInsufficientFunds", order: "ord_2")
      #expect(declined.status == 402 && declined.error["type"] as? String == "card_error")
      #expect(declined.error["code"] as? String == "card_declined")
      #expect(declined.error["decline_code"] as? String == "insufficient_funds")
      let failed = try #require(declined.error["setup_intent"] as? [String: Any])
      #expect(failed["id"] as? String == "seti_test000002" && failed["status"] as? String == "requires_payment_method")
      #expect((failed["last_setup_error"] as? [String: Any])?["decline_code"] as? String == "insufficient_funds")
      #expect(server.paymentMethodCustomer("pm_test000002") == nil)

      let waiting = try await setup("pm_card_authenticationRequiredOnSetup", order: "ord_3")
      #expect(waiting.json["status"] as? String == "requires_action")
      #expect((waiting.json["next_action"] as? [String: Any])?["type"] as? String == "use_stripe_sdk")
      #expect(server.paymentMethodCustomer("pm_test000003") == nil)
      #expect(server.authenticateSetupIntent("seti_test000003"))
      #expect(server.setupIntent("seti_test000003")?["status"] == "succeeded")
      #expect(server.paymentMethodCustomer("pm_test000003") == customer)
      #expect(server.authenticateSetupIntent("seti_test000003") == false)

      let page = try await Self.send(
        client, server, "/v1/setup_intents?customer=\(customer)&limit=2", method: "GET")
      #expect(page.json["object"] as? String == "list" && page.json["url"] as? String == "/v1/setup_intents")
      #expect(page.json["has_more"] as? Bool == true)
      let first = try #require(page.json["data"] as? [[String: Any]])
      #expect(first.map { $0["id"] as? String } == ["seti_test000003", "seti_test000002"])
      let rest = try await Self.send(
        client, server, "/v1/setup_intents?customer=\(customer)&limit=2&starting_after=seti_test000002", method: "GET")
      #expect((rest.json["data"] as? [[String: Any]])?.map { $0["id"] as? String } == ["seti_test000001"])
      #expect(rest.json["has_more"] as? Bool == false)
      let nobody = try await Self.send(client, server, "/v1/setup_intents?customer=cus_other", method: "GET")
      #expect((nobody.json["data"] as? [Any])?.isEmpty == true)

      let unconfirmable = try await Self.send(
        client, server, "/v1/setup_intents", form: [("customer", customer), ("confirm", "true")])
      #expect(unconfirmable.status == 400 && unconfirmable.error["code"] as? String == "setup_intent_unexpected_state")
      #expect(
        Self.eventTypes(server) == [
          "customer.created", "setup_intent.created", "setup_intent.succeeded", "payment_method.attached",
          "setup_intent.created", "setup_intent.setup_failed", "setup_intent.created", "setup_intent.requires_action",
          "setup_intent.succeeded", "payment_method.attached",
        ])
      #expect(server.setupIntentRecords().map(\.status) == ["succeeded", "requires_payment_method", "succeeded"])
    }
  }

  /// One of Stripe's "Authentication and setup" cards, what it does on and off session.
  struct CardCase: Sendable, CustomTestStringConvertible {
    var card: String
    /// How it was kept: attached without authentication, or set up by a SetupIntent its holder
    /// authenticated where it asked.
    var setUp: Bool
    /// The off-session payment's answer: nil for succeeded, else its decline code.
    var offSession: String?
    var testDescription: String { "\(card) \(setUp ? "set up" : "attached")" }
  }

  static let cardCases = [
    CardCase(card: "authenticationRequiredOnSetup", setUp: false, offSession: "authentication_required"),
    CardCase(card: "authenticationRequiredOnSetup", setUp: true, offSession: nil),
    CardCase(card: "authenticationRequired", setUp: true, offSession: "authentication_required"),
    CardCase(card: "authenticationRequiredSetupForOffSession", setUp: false, offSession: nil),
    CardCase(card: "authenticationRequiredChargeDeclinedInsufficientFunds", setUp: true, offSession: "insufficient_funds"),
    CardCase(card: "chargeCustomerFail", setUp: true, offSession: "generic_decline"),
    CardCase(card: "visa", setUp: false, offSession: nil),
  ]

  @Test("Stripe's cards for off-session payments do off-session what Stripe's testing page says", arguments: cardCases)
  func offSessionCards(_ testCase: CardCase) async throws {
    try await Base.withServer { server, client in
      let customer = try await Self.customer(client, server)
      if testCase.setUp {
        let made = try await Self.send(
          client, server, "/v1/setup_intents",
          form: [("customer", customer), ("payment_method", "pm_card_" + testCase.card), ("confirm", "true")])
        #expect(made.status == 200)
        if made.json["status"] as? String == "requires_action" {
          #expect(server.authenticateSetupIntent("seti_test000001"))
        }
        #expect(server.setupIntent("seti_test000001")?["status"] == "succeeded")
      } else {
        let attached = try await Self.send(
          client, server, "/v1/payment_methods/pm_card_\(testCase.card)/attach", form: [("customer", customer)])
        #expect(attached.status == 200)
      }
      #expect(server.paymentMethodCustomer("pm_test000001") == customer)
      let charged = try await Self.send(
        client, server, "/v1/payment_intents", form: Self.offSession(customer, "pm_test000001"))
      if let decline = testCase.offSession {
        #expect(charged.status == 402 && charged.error["type"] as? String == "card_error")
        #expect(charged.error["decline_code"] as? String == decline)
        #expect(
          charged.error["code"] as? String == (decline == "authentication_required" ? decline : "card_declined"))
        #expect((charged.error["payment_intent"] as? [String: Any])?["status"] as? String == "requires_payment_method")
      } else {
        #expect(charged.status == 200 && charged.json["status"] as? String == "succeeded")
      }
      // On-session (the buyer present, error_on_requires_action): the 3-D Secure cards always need them.
      let onSession = try await Self.send(
        client, server, "/v1/payment_intents",
        form: Base.charge("pm_test000001", extra: [("customer", customer), ("error_on_requires_action", "true")]))
      switch testCase.card {
      case "visa": #expect(onSession.status == 200)
      case "chargeCustomerFail": #expect(onSession.error["decline_code"] as? String == "generic_decline")
      default: #expect(onSession.error["code"] as? String == "authentication_required")
      }
    }
  }

  @Test("a card that declines issuer-side cannot be attached (402); tok_chargeCustomerFail becomes a PaymentMethod, attaches, and its charges decline")
  func attachRefusals() async throws {
    try await Base.withServer { server, client in
      let customer = try await Self.customer(client, server)
      let refused = try await Self.send(
        client, server, "/v1/payment_methods/pm_card_visa_chargeDeclined/attach", form: [("customer", customer)])
      #expect(refused.status == 402 && refused.error["decline_code"] as? String == "generic_decline")
      let missing = try await Self.send(client, server, "/v1/payment_methods/pm_card_visa/attach")
      #expect(missing.status == 400 && missing.error["code"] as? String == "parameter_missing")
      let made = try await Self.send(
        client, server, "/v1/payment_methods", form: [("type", "card"), ("card[token]", "tok_chargeCustomerFail")])
      let method = try #require(made.json["id"] as? String)
      #expect((made.json["card"] as? [String: Any])?["last4"] as? String == "0341")
      let attached = try await Self.send(
        client, server, "/v1/payment_methods/\(method)/attach", form: [("customer", customer)])
      #expect(attached.status == 200 && attached.json["customer"] as? String == customer)
      let charged = try await Self.send(client, server, "/v1/payment_intents", form: Self.offSession(customer, method))
      #expect(charged.status == 402 && charged.error["code"] as? String == "card_declined")
    }
  }

  @Test(
    "declineNextOffSessionCharges fails exactly the Customer's next N off-session PaymentIntents with that card error; on-session ones and other Customers' are not counted"
  )
  func forcedDeclines() async throws {
    try await Base.withServer { server, client in
      let customer = try await Self.customer(client, server, order: "ord_1")
      let other = try await Self.customer(client, server, order: "ord_2")
      for (owner, method) in [(customer, "pm_card_visa"), (other, "pm_card_mastercard")] {
        let attached = try await Self.send(
          client, server, "/v1/payment_methods/\(method)/attach", form: [("customer", owner)])
        #expect(attached.status == 200)
      }
      server.declineNextOffSessionCharges(customer: customer, code: "card_declined", declineCode: "insufficient_funds", count: 2)
      server.declineNextOffSessionCharges(customer: customer, code: "expired_card", declineCode: nil, count: 1)
      let otherPaid = try await Self.send(client, server, "/v1/payment_intents", form: Self.offSession(other, "pm_test000002"))
      #expect(otherPaid.status == 200)
      let onSession = try await Self.send(
        client, server, "/v1/payment_intents", form: Base.charge("pm_test000001", extra: [("customer", customer)]))
      #expect(onSession.status == 200)
      var answers: [String] = []
      for _ in 0..<4 {
        let answer = try await Self.send(
          client, server, "/v1/payment_intents", form: Self.offSession(customer, "pm_test000001"))
        answers.append(
          answer.status == 200
            ? "succeeded"
            : "\(answer.status) \(answer.error["code"] as? String ?? "-") \(answer.error["decline_code"] as? String ?? "-") \(answer.error["message"] as? String ?? "-")")
      }
      #expect(
        answers == [
          "402 card_declined insufficient_funds Your card has insufficient funds.",
          "402 card_declined insufficient_funds Your card has insufficient funds.",
          "402 expired_card - Your card has expired.",
          "succeeded",
        ])
      #expect(
        server.paymentIntentRecords().map { "\($0.offSession) \($0.status)" } == [
          "true succeeded", "false succeeded", "true requires_payment_method", "true requires_payment_method",
          "true requires_payment_method", "true succeeded",
        ])
      let listed = try await Self.send(client, server, "/v1/payment_intents?customer=\(other)", method: "GET")
      #expect((listed.json["data"] as? [[String: Any]])?.map { $0["id"] as? String } == ["pi_test000001"])
    }
  }
}
