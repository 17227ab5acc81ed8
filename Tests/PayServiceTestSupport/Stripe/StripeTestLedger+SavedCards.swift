import Foundation

/// Cards kept for later, as Stripe documents them: Customers
/// (https://docs.stripe.com/api/customers), PaymentMethods attached to them
/// (https://docs.stripe.com/api/payment_methods/attach, `/detach`), SetupIntents
/// (https://docs.stripe.com/api/setup_intents), PaymentIntents that keep their card
/// (`setup_future_usage`) and PaymentIntents that charge a kept card with the customer absent
/// (`off_session=true`; https://docs.stripe.com/payments/save-during-payment, "Charge the saved
/// payment method later").
///
/// What Stripe's reference leaves open, this server decides as follows (each said where it is done):
/// - `off_session` without `confirm=true` is refused (the reference: "This parameter can only be
///   used with confirm=true"); the message is this server's.
/// - `off_session=true` with `error_on_requires_action=true` is taken: the reference sets no rule
///   against it, and off-session a card that needs its holder is declined either way.
/// - An off-session PaymentIntent must name a PaymentMethod attached to its `customer`; any other
///   is 400 `invalid_request_error`, code `payment_method_unexpected_state` ("The provided payment
///   method's state was incompatible with the operation you were trying to perform", Stripe's error
///   codes). The reference documents the case of a PaymentMethod attached to another Customer
///   ("Payment methods attached to other Customers cannot be used with this PaymentIntent"), and
///   Stripe's answer for a detached one is the message `detachedMessage` (as Stripe words it);
///   refusing an unattached PaymentMethod off-session is this server's stricter rule.
extension StripeTestLedger {
  /// A Customer: ids and metadata, and what the request gave of `email`, `name`, `description`.
  struct Customer: Sendable {
    var id: String
    var created: Int64
    var metadata: [(key: String, value: String)]
    var email: String?
    var name: String?
    var description: String?
  }

  /// A SetupIntent (https://docs.stripe.com/api/setup_intents/object). Its SetupAttempts are not
  /// kept: `latest_attempt` is null.
  struct SetupIntent: Sendable {
    var id: String
    var customer: String?
    var paymentMethod: String?
    var status: String
    var usage: String
    var created: Int64
    var metadata: [(key: String, value: String)]
    var clientSecret: String
    var description: String?
    var paymentMethodTypes: [String]
    var lastSetupError: StripeJSON?
    /// Waiting for the customer (`requires_action`): `next_action` is `use_stripe_sdk`.
    var nextAction = false
    /// The Idempotency-Key of the request that made it.
    var idempotencyKey: String?
  }

  /// A card error queued for a Customer's next off-session PaymentIntents.
  struct ForcedDecline: Sendable {
    var code: String
    var declineCode: String?
    var message: String
    var remaining: Int
  }

  /// What confirming a payment or a setup comes to.
  enum Confirmation: Sendable {
    case succeeds, processing, requiresAction
    case declines(code: String, declineCode: String?, message: String, param: String?)
  }

  static let authenticationRequiredDecline = Confirmation.declines(
    code: "authentication_required", declineCode: "authentication_required",
    message: "Your card was declined. This transaction requires authentication.", param: nil)

  /// Stripe's answer for a PaymentMethod detached from its Customer (or used once without one).
  static let detachedMessage =
    "The provided PaymentMethod was previously used with a PaymentIntent without Customer attachment, shared with "
    + "a connected account without Customer attachment, or was detached from a Customer. It may not be used again. "
    + "To use a PaymentMethod multiple times, you must attach it to a Customer first."

  // MARK: - Parameters

  static let customerParameters: Set<String> = [
    "address", "balance", "cash_balance", "description", "email", "expand", "invoice_prefix", "invoice_settings",
    "metadata", "name", "next_invoice_sequence", "payment_method", "phone", "preferred_locales", "shipping", "source",
    "tax", "tax_exempt", "tax_id_data", "test_clock",
  ]
  static let setupIntentParameters: Set<String> = [
    "attach_to_self", "automatic_payment_methods", "confirm", "confirmation_token", "customer", "description",
    "excluded_payment_method_types", "expand", "flow_directions", "mandate_data", "metadata", "on_behalf_of",
    "payment_method", "payment_method_configuration", "payment_method_data", "payment_method_options",
    "payment_method_types", "return_url", "single_use", "usage", "use_stripe_sdk",
  ]
  static let attachParameters: Set<String> = ["customer", "expand"]
  static let detachParameters: Set<String> = ["expand"]

  /// `off_session` is `true`/`false`, or (Stripe's other form) `one_off`/`recurring`, both "true".
  static func isOffSession(_ form: StripeForm) -> Bool {
    ["true", "one_off", "recurring"].contains(form["off_session"] ?? "")
  }

  /// `off_session` is a boolean (or `one_off`/`recurring`), and "can only be used with confirm=true".
  static func checkOffSession(_ form: StripeForm, confirm: Bool) -> StripeAPIError? {
    guard let value = form["off_session"] else { return nil }
    guard ["true", "false", "one_off", "recurring"].contains(value) else {
      return .invalidRequest("Invalid boolean: \(value)", param: "off_session")
    }
    if isOffSession(form) && !confirm {
      return .invalidRequest(
        "You can only pass off_session when confirming a PaymentIntent: it can only be used with confirm=true.",
        param: "off_session")
    }
    return nil
  }

  static func validateCustomer(_ form: StripeForm) -> StripeAPIError? {
    if let error = checkUnknown(form, allowed: customerParameters) { return error }
    return checkMetadata(form)
  }

  static func validateSetupIntent(_ form: StripeForm) -> StripeAPIError? {
    if let error = checkUnknown(form, allowed: setupIntentParameters) { return error }
    let confirm: Bool
    switch boolean(form, "confirm") {
    case .failure(let error): return error
    case .success(let value): confirm = value ?? false
    }
    if let error = enumValue(form, "usage", ["off_session", "on_session"]) { return error }
    for type in form.array("payment_method_types") where type != "card" {
      return .invalidRequest(
        "The payment method type provided: \(type) is invalid. This test server supports only card.",
        param: "payment_method_types")
    }
    if let error = checkMetadata(form) { return error }
    if form.pairs.contains(where: { $0.name.hasPrefix("payment_method_data[") }) {
      return .invalidRequest(
        "This test server takes a payment method as payment_method only.", param: "payment_method_data")
    }
    if confirm && (form["payment_method"] ?? "").isEmpty {
      return .invalidRequest(
        "You cannot confirm this SetupIntent because it's missing a payment method. You can either update the "
          + "SetupIntent with a payment method and then confirm it again, or confirm it again directly with a "
          + "payment method.", code: "setup_intent_unexpected_state")
    }
    return nil
  }

  static func validateAttach(_ form: StripeForm) -> StripeAPIError? {
    if let error = checkUnknown(form, allowed: attachParameters) { return error }
    guard let customer = form["customer"], !customer.isEmpty else { return .missing("customer") }
    return nil
  }

  static func validateDetach(_ form: StripeForm) -> StripeAPIError? {
    checkUnknown(form, allowed: detachParameters)
  }

  // MARK: - Customers

  /// `customer` of a form: nil when not sent, an error when no such Customer exists.
  func resolveCustomer(_ form: StripeForm) -> Result<String?, StripeAPIError> {
    guard let id = form["customer"], !id.isEmpty else { return .success(nil) }
    guard customers[id] != nil else {
      return .failure(.resourceMissing("No such customer: '\(id)'", param: "customer", status: 400))
    }
    return .success(id)
  }

  /// `POST /v1/customers`. Event `customer.created`.
  mutating func createCustomer(_ form: StripeForm, idempotencyKey: String?, now: Int64) -> Result<StripeJSON, StripeAPIError> {
    let customer = Customer(
      id: nextID("cus"), created: now, metadata: form.hash("metadata").filter { !$0.value.isEmpty },
      email: form["email"], name: form["name"], description: form["description"])
    customers[customer.id] = customer
    customerOrder.append(customer.id)
    if let idempotencyKey { customersPerIdempotencyKey[idempotencyKey, default: 0] += 1 }
    emit("customer.created", render(customer))
    return .success(render(customer))
  }

  func retrieveCustomer(_ id: String) -> Result<StripeJSON, StripeAPIError> {
    guard let customer = customers[id] else { return .failure(.resourceMissing("No such customer: '\(id)'", param: "id")) }
    return .success(render(customer))
  }

  // MARK: - PaymentMethods on Customers

  /// Why `method` may not be used by an intent for `customer` (off-session or not); nil when it may.
  static func unusable(_ method: PaymentMethod, customer: String?, offSession: Bool) -> StripeAPIError? {
    func refused(_ message: String) -> StripeAPIError {
      .invalidRequest(message, param: "payment_method", code: "payment_method_unexpected_state")
    }
    if method.detached { return refused(detachedMessage) }
    if let owner = method.customer, owner != customer {
      return refused(
        "The provided PaymentMethod \(method.id) is attached to a Customer (\(owner)). Payment methods attached to "
          + "other Customers cannot be used: pass the PaymentMethod's Customer as customer.")
    }
    if offSession && method.customer == nil {
      return refused(
        "The provided PaymentMethod \(method.id) is not attached to the customer: this test server charges "
          + "off-session only a PaymentMethod attached to the PaymentIntent's customer.")
    }
    return nil
  }

  /// Attaches `id` to `customer`. Event `payment_method.attached`.
  mutating func attach(_ id: String, to customer: String) {
    guard var method = paymentMethods[id], method.customer == nil else { return }
    method.customer = customer
    paymentMethods[id] = method
    emit("payment_method.attached", render(method))
  }

  /// After a PaymentIntent with a `customer` and `setup_future_usage` succeeded (or holds the
  /// money): its PaymentMethod attached to the Customer, and set up for off-session payments when
  /// `setup_future_usage` is `off_session`.
  mutating func keepPaymentMethod(of intent: PaymentIntent) {
    guard let customer = intent.customer, let usage = intent.setupFutureUsage, let id = intent.paymentMethod,
      let method = paymentMethods[id], !method.detached
    else { return }
    if usage == "off_session" { paymentMethods[id]?.setUpForOffSession = true }
    attach(id, to: customer)
  }

  /// `POST /v1/payment_methods/{id}/attach` (https://docs.stripe.com/api/payment_methods/attach):
  /// a test PaymentMethod (`pm_card_…`) becomes a new one attached to the Customer. A card that
  /// simulates an issuer decline cannot be attached ("You can't attach cards that simulate issuer
  /// declines to a Customer object", https://docs.stripe.com/testing): its card error, HTTP 402.
  /// Attaching sets nothing up for off-session payments: no authentication happens.
  mutating func attachPaymentMethod(_ id: String, _ form: StripeForm, now: Int64) -> Result<StripeJSON, StripeAPIError> {
    let customer = form["customer"]!
    guard customers[customer] != nil else {
      return .failure(.resourceMissing("No such customer: '\(customer)'", param: "customer", status: 400))
    }
    var methodID = id
    if let magic = StripeTestCard.paymentMethod(id) {
      let method = PaymentMethod(id: nextID("pm"), card: magic, created: now)
      paymentMethods[method.id] = method
      methodID = method.id
    }
    guard let method = paymentMethods[methodID] else {
      return .failure(.resourceMissing("No such PaymentMethod: '\(id)'", param: "payment_method"))
    }
    if method.detached {
      return .failure(
        .invalidRequest(
          "This PaymentMethod was previously used without being attached to a Customer or was detached from a "
            + "Customer, and may not be used again.", param: "payment_method", code: "payment_method_unexpected_state"))
    }
    if let owner = method.customer {
      if owner == customer { return .success(render(method)) }
      return .failure(
        .invalidRequest(
          "The payment method you provided has already been attached to a customer.", param: "payment_method",
          code: "payment_method_unexpected_state"))
    }
    if case .declines(let code, let declineCode, let message, let param) = method.card.outcome {
      return .failure(
        StripeAPIError(
          status: 402, type: "card_error", message: message, code: code, declineCode: declineCode, param: param))
    }
    attach(methodID, to: customer)
    return .success(render(paymentMethods[methodID]!))
  }

  /// `POST /v1/payment_methods/{id}/detach` (https://docs.stripe.com/api/payment_methods/detach):
  /// the PaymentMethod leaves its Customer and is never charged again. Event
  /// `payment_method.detached` (`previous_attributes` the Customer).
  mutating func detachPaymentMethod(_ id: String) -> Result<StripeJSON, StripeAPIError> {
    guard var method = paymentMethods[id] else {
      if StripeTestCard.paymentMethod(id) == nil {
        return .failure(.resourceMissing("No such PaymentMethod: '\(id)'", param: "payment_method"))
      }
      return .failure(
        .invalidRequest(
          "The payment method you provided is not attached to a customer so detachment is impossible.",
          param: "payment_method", code: "payment_method_unexpected_state"))
    }
    guard let owner = method.customer else {
      return .failure(
        .invalidRequest(
          "The payment method you provided is not attached to a customer so detachment is impossible.",
          param: "payment_method", code: "payment_method_unexpected_state"))
    }
    method.customer = nil
    method.detached = true
    paymentMethods[id] = method
    emit("payment_method.detached", render(method), previous: .object([("customer", .string(owner))]))
    return .success(render(method))
  }

  // MARK: - Confirmation

  /// What confirming a payment with `method` comes to: a card error queued for the Customer's next
  /// off-session payment first (`StripeTestServer.declineNextOffSessionCharges`), then the card's
  /// own outcome on-session or off-session (`StripeTestCard.Outcome`).
  mutating func paymentConfirmation(_ method: PaymentMethod, customer: String?, offSession: Bool) -> Confirmation {
    if offSession, let customer, var queue = offSessionDeclines[customer], let first = queue.first {
      queue[0].remaining -= 1
      if queue[0].remaining <= 0 { queue.removeFirst() }
      offSessionDeclines[customer] = queue.isEmpty ? nil : queue
      return .declines(code: first.code, declineCode: first.declineCode, message: first.message, param: nil)
    }
    switch method.card.outcome {
    case .declines(let code, let declineCode, let message, let param):
      return .declines(code: code, declineCode: declineCode, message: message, param: param)
    case .processing: return .processing
    case .authenticationRequired: return offSession ? Self.authenticationRequiredDecline : .requiresAction
    case .authenticationRequiredOnSetup:
      guard offSession else { return .requiresAction }
      return method.setUpForOffSession ? .succeeds : Self.authenticationRequiredDecline
    case .authenticationRequiredSetUpForOffSession: return offSession ? .succeeds : .requiresAction
    case .authenticationRequiredThenDeclines:
      guard offSession else { return .requiresAction }
      return .declines(
        code: "card_declined", declineCode: "insufficient_funds", message: "Your card has insufficient funds.", param: nil)
    case .chargeCustomerFail(let declineCode, let message):
      return .declines(code: "card_declined", declineCode: declineCode, message: message, param: nil)
    case .succeeds, .refundFails, .refundPending, .refundRequiresAction, .refundCanceled, .refundNoStatus,
      .refundFailsAtOnce:
      return .succeeds
    }
  }

  /// What confirming a SetupIntent with `method` comes to: cards that simulate issuer declines
  /// fail (they cannot be attached); cards that need their holder wait for them; the rest succeed
  /// (`chargeCustomerFail` included: it attaches, then declines every charge).
  static func setupConfirmation(_ method: PaymentMethod) -> Confirmation {
    switch method.card.outcome {
    case .declines(let code, let declineCode, let message, let param):
      return .declines(code: code, declineCode: declineCode, message: message, param: param)
    case .processing: return .processing
    case .authenticationRequired, .authenticationRequiredOnSetup, .authenticationRequiredThenDeclines:
      return .requiresAction
    case .succeeds, .authenticationRequiredSetUpForOffSession, .chargeCustomerFail, .refundFails, .refundPending,
      .refundRequiresAction, .refundCanceled, .refundNoStatus, .refundFailsAtOnce:
      return .succeeds
    }
  }

  /// The message Stripe gives a decline code's card error.
  static func declineMessage(code: String, declineCode: String?) -> String {
    switch declineCode ?? code {
    case "insufficient_funds": "Your card has insufficient funds."
    case "expired_card": "Your card has expired."
    case "incorrect_cvc": "Your card's security code is incorrect."
    case "processing_error": "An error occurred while processing your card. Try again in a little bit."
    case "authentication_required": "Your card was declined. This transaction requires authentication."
    default: "Your card was declined."
    }
  }

  // MARK: - SetupIntents

  /// `POST /v1/setup_intents` (https://docs.stripe.com/api/setup_intents/create): made
  /// (`setup_intent.created`), and with `confirm=true` confirmed at once: `succeeded`
  /// (`setup_intent.succeeded`, then the PaymentMethod attached to the `customer`:
  /// `payment_method.attached`; with `usage=off_session`, the default, set up for off-session
  /// payments), `requires_action` for a card that needs its holder (`setup_intent.requires_action`;
  /// `StripeTestServer.authenticateSetupIntent` plays the holder), `processing` for this server's
  /// `processing` card (until `StripeTestServer.settleProcessing(setupIntent:succeeded:)`), or a
  /// card error: HTTP 402 with the SetupIntent in `error.setup_intent`, the SetupIntent back to
  /// `requires_payment_method` with `last_setup_error` (`setup_intent.setup_failed`).
  mutating func createSetupIntent(_ form: StripeForm, idempotencyKey: String?, now: Int64) -> Result<
    StripeJSON, StripeAPIError
  > {
    let confirm = form["confirm"] == "true"
    let customer: String?
    switch resolveCustomer(form) {
    case .failure(let error): return .failure(error)
    case .success(let id): customer = id
    }
    var paymentMethod: PaymentMethod?
    if let id = form["payment_method"], !id.isEmpty {
      if let magic = StripeTestCard.paymentMethod(id) {
        let method = PaymentMethod(id: nextID("pm"), card: magic, created: now)
        paymentMethods[method.id] = method
        paymentMethod = method
      } else if let existing = paymentMethods[id] {
        paymentMethod = existing
      } else {
        return .failure(.resourceMissing("No such PaymentMethod: '\(id)'", param: "payment_method", status: 400))
      }
      if let error = Self.unusable(paymentMethod!, customer: customer, offSession: false) { return .failure(error) }
    }
    let id = nextID("seti")
    let types = form.array("payment_method_types")
    var intent = SetupIntent(
      id: id, customer: customer, paymentMethod: paymentMethod?.id,
      status: paymentMethod == nil ? "requires_payment_method" : "requires_confirmation",
      usage: form["usage"] ?? "off_session", created: now,
      metadata: form.hash("metadata").filter { !$0.value.isEmpty },
      clientSecret: "\(id)_secret_test\(id.suffix(6))", description: form["description"],
      paymentMethodTypes: types.isEmpty ? ["card"] : types, idempotencyKey: idempotencyKey)
    setupIntentOrder.append(id)
    if let idempotencyKey { setupIntentsPerIdempotencyKey[idempotencyKey, default: 0] += 1 }
    setupIntents[id] = intent
    emit("setup_intent.created", render(intent))
    guard confirm, let paymentMethod else { return .success(render(intent)) }
    switch Self.setupConfirmation(paymentMethod) {
    case .succeeds:
      intent.status = "succeeded"
      setupIntents[id] = intent
      setUpSucceeded(intent)
    case .processing:
      intent.status = "processing"
      setupIntents[id] = intent
    case .requiresAction:
      intent.status = "requires_action"
      intent.nextAction = true
      setupIntents[id] = intent
      emit("setup_intent.requires_action", render(intent))
    case .declines(let code, let declineCode, let message, let param):
      intent.status = "requires_payment_method"
      intent.paymentMethod = nil
      intent.lastSetupError = .object(
        StripeAPIError(
          status: 402, type: "card_error", message: message, code: code, declineCode: declineCode, param: param,
          paymentMethod: render(paymentMethod)
        ).error)
      setupIntents[id] = intent
      emit("setup_intent.setup_failed", render(intent))
      return .failure(
        StripeAPIError(
          status: 402, type: "card_error", message: message, code: code, declineCode: declineCode, param: param,
          paymentMethod: render(paymentMethod), setupIntent: render(intent)))
    }
    return .success(render(setupIntents[id]!))
  }

  /// A SetupIntent that succeeded: `setup_intent.succeeded`, then its PaymentMethod set up (for
  /// `usage=off_session`) and attached to its Customer.
  mutating func setUpSucceeded(_ intent: SetupIntent) {
    emit("setup_intent.succeeded", render(intent))
    guard let methodID = intent.paymentMethod else { return }
    if intent.usage == "off_session" { paymentMethods[methodID]?.setUpForOffSession = true }
    if let customer = intent.customer { attach(methodID, to: customer) }
  }

  /// The holder of a SetupIntent's card, asked to authenticate (`requires_action`), does so
  /// (`succeeded`: the card set up and attached) or fails (`requires_payment_method` with
  /// `last_setup_error` `setup_intent_authentication_failure`, `setup_intent.setup_failed`).
  mutating func authenticateSetupIntent(_ id: String, succeeded: Bool) -> Bool {
    guard var intent = setupIntents[id], intent.status == "requires_action" else { return false }
    intent.nextAction = false
    if succeeded {
      intent.status = "succeeded"
      setupIntents[id] = intent
      setUpSucceeded(intent)
    } else {
      fail(&intent, StripeAPIError(
        status: 400, type: "invalid_request_error",
        message: "We are unable to authenticate your payment method. Please choose a different payment method and "
          + "try again.", code: "setup_intent_authentication_failure"))
    }
    return true
  }

  /// Ends a `processing` SetupIntent: `succeeded`, or back to `requires_payment_method` with a
  /// `card_declined` `last_setup_error`.
  mutating func settleSetupIntent(_ id: String, succeeded: Bool) -> Bool {
    guard var intent = setupIntents[id], intent.status == "processing" else { return false }
    if succeeded {
      intent.status = "succeeded"
      setupIntents[id] = intent
      setUpSucceeded(intent)
    } else {
      fail(&intent, StripeAPIError(
        status: 402, type: "card_error", message: "Your card was declined.", code: "card_declined",
        declineCode: "generic_decline"))
    }
    return true
  }

  private mutating func fail(_ intent: inout SetupIntent, _ error: StripeAPIError) {
    var fields = error.error
    if let methodID = intent.paymentMethod, let method = paymentMethods[methodID] {
      fields.insert(("payment_method", render(method)), at: fields.count - 1)
    }
    intent.status = "requires_payment_method"
    intent.paymentMethod = nil
    intent.lastSetupError = .object(fields)
    setupIntents[intent.id] = intent
    emit("setup_intent.setup_failed", render(intent))
  }

  func retrieveSetupIntent(_ id: String) -> Result<StripeJSON, StripeAPIError> {
    guard let intent = setupIntents[id] else {
      return .failure(.resourceMissing("No such setupintent: '\(id)'", param: "intent"))
    }
    return .success(render(intent))
  }

  /// Queues `count` card errors for the Customer's next off-session PaymentIntents.
  mutating func declineNextOffSessionCharges(customer: String, code: String, declineCode: String?, count: Int) {
    guard count > 0 else { return }
    offSessionDeclines[customer, default: []].append(
      ForcedDecline(
        code: code, declineCode: declineCode, message: Self.declineMessage(code: code, declineCode: declineCode),
        remaining: count))
  }

  // MARK: - Rendering

  func render(_ customer: Customer) -> StripeJSON {
    .object([
      ("id", .string(customer.id)),
      ("object", .string("customer")),
      ("address", .null),
      ("balance", .int(0)),
      ("created", .int(customer.created)),
      ("currency", .null),
      ("default_source", .null),
      ("delinquent", .bool(false)),
      ("description", .optional(customer.description)),
      ("discount", .null),
      ("email", .optional(customer.email)),
      ("invoice_prefix", .string("TEST" + customer.id.suffix(4))),
      (
        "invoice_settings",
        .object([
          ("custom_fields", .null), ("default_payment_method", .null), ("footer", .null),
          ("rendering_options", .null),
        ])
      ),
      ("livemode", .bool(false)),
      ("metadata", Self.metadataJSON(customer.metadata)),
      ("name", .optional(customer.name)),
      ("next_invoice_sequence", .int(1)),
      ("phone", .null),
      ("preferred_locales", .array([])),
      ("shipping", .null),
      ("tax_exempt", .string("none")),
      ("test_clock", .null),
    ])
  }

  func render(_ intent: SetupIntent) -> StripeJSON {
    .object([
      ("id", .string(intent.id)),
      ("object", .string("setup_intent")),
      ("application", .null),
      ("automatic_payment_methods", .null),
      ("cancellation_reason", .null),
      ("client_secret", .string(intent.clientSecret)),
      ("created", .int(intent.created)),
      ("customer", .optional(intent.customer)),
      ("description", .optional(intent.description)),
      ("flow_directions", .null),
      ("last_setup_error", intent.lastSetupError ?? .null),
      ("latest_attempt", .null),
      ("livemode", .bool(false)),
      ("mandate", .null),
      ("metadata", Self.metadataJSON(intent.metadata)),
      (
        "next_action",
        intent.nextAction ? .object([("type", .string("use_stripe_sdk")), ("use_stripe_sdk", .object([]))]) : .null
      ),
      ("on_behalf_of", .null),
      ("payment_method", .optional(intent.paymentMethod)),
      ("payment_method_configuration_details", .null),
      (
        "payment_method_options",
        .object([
          (
            "card",
            .object([
              ("mandate_options", .null), ("network", .null), ("request_three_d_secure", .string("automatic")),
            ])
          )
        ])
      ),
      ("payment_method_types", .array(intent.paymentMethodTypes.map(StripeJSON.string))),
      ("single_use_mandate", .null),
      ("status", .string(intent.status)),
      ("usage", .string(intent.usage)),
    ])
  }
}
