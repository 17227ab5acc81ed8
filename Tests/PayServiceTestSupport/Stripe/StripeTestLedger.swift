import Foundation

/// An error the way Stripe answers one: an HTTP status and `{"error": {…}}`
/// (https://docs.stripe.com/api/errors). `saved` is false for errors raised before an endpoint
/// begins executing (authentication, parameter validation, idempotency conflicts), which Stripe
/// does not store under an idempotency key.
struct StripeAPIError: Error, Sendable {
  var status: Int
  var error: [(String, StripeJSON)]

  var body: StripeJSON { .object([("error", .object(error))]) }

  /// An error object with Stripe's fields in Stripe's (alphabetical) order; nil fields are left out.
  init(
    status: Int, type: String, message: String, code: String? = nil, declineCode: String? = nil,
    param: String? = nil, charge: String? = nil, paymentIntent: StripeJSON? = nil,
    paymentMethod: StripeJSON? = nil, setupIntent: StripeJSON? = nil
  ) {
    self.status = status
    var fields: [(String, StripeJSON)] = []
    if let charge { fields.append(("charge", .string(charge))) }
    if let code {
      fields.append(("code", .string(code)))
    }
    if let declineCode { fields.append(("decline_code", .string(declineCode))) }
    if let code {
      fields.append(
        ("doc_url", .string("https://stripe.com/docs/error-codes/" + code.replacingOccurrences(of: "_", with: "-"))))
    }
    fields.append(("message", .string(message)))
    if let param { fields.append(("param", .string(param))) }
    if let paymentIntent { fields.append(("payment_intent", paymentIntent)) }
    if let paymentMethod { fields.append(("payment_method", paymentMethod)) }
    if let setupIntent { fields.append(("setup_intent", setupIntent)) }
    fields.append(("type", .string(type)))
    error = fields
  }

  static func invalidRequest(_ message: String, param: String? = nil, code: String? = nil, status: Int = 400)
    -> StripeAPIError
  {
    StripeAPIError(status: status, type: "invalid_request_error", message: message, code: code, param: param)
  }

  static func missing(_ param: String) -> StripeAPIError {
    invalidRequest("Missing required param: \(param).", param: param, code: "parameter_missing")
  }

  static func resourceMissing(_ message: String, param: String, status: Int = 404) -> StripeAPIError {
    invalidRequest(message, param: param, code: "resource_missing", status: status)
  }
}

/// What the test server knows: PaymentIntents, their charges, refunds and the PaymentMethods
/// made from test cards, with Stripe's state machine over them
/// (https://docs.stripe.com/payments/paymentintents/lifecycle), Customers, SetupIntents and the
/// PaymentMethods attached to Customers (StripeTestLedger+SavedCards.swift), and what it tells of
/// them after the fact: events, balance transactions and disputes (StripeTestFeed.swift). Not
/// thread-safe by itself: the server keeps it behind a lock.
///
/// IDs are deterministic per server: a prefix, `test`, and a six-digit counter per kind, in
/// creation order (`pi_test000001`, `ch_test000001`, `re_test000001`, `pm_test000001`,
/// `evt_test000001`, `txn_test000001`, `dp_test000001`). Every time comes from `now`: the settable
/// clock, or the wall clock.
struct StripeTestLedger: Sendable {
  struct PaymentMethod: Sendable {
    var id: String
    var card: StripeTestCard
    var created: Int64
    /// The Customer it is attached to.
    var customer: String? = nil
    /// Detached from its Customer: Stripe never charges it again ("It may not be used again").
    var detached = false
    /// Set up for payments without the customer (a SetupIntent with `usage=off_session`, or a
    /// PaymentIntent with `setup_future_usage=off_session`, that succeeded).
    var setUpForOffSession = false
  }

  /// A card token made from an Apple Pay token (`POST /v1/tokens` with `pk_token`).
  struct Token: Sendable {
    var id: String
    var cardID: String
    var card: StripeTestCard
    var created: Int64
  }

  struct PaymentIntent: Sendable {
    var id: String
    var amount: Int64
    var currency: String
    var status: String
    var amountReceived: Int64 = 0
    var amountCapturable: Int64 = 0
    var captureMethod: String
    var clientSecret: String
    var created: Int64
    var metadata: [(key: String, value: String)]
    var description: String?
    var receiptEmail: String?
    var statementDescriptor: String?
    var statementDescriptorSuffix: String?
    var paymentMethod: String?
    var paymentMethodTypes: [String]
    var latestCharge: String?
    var lastPaymentError: StripeJSON?
    /// Waiting for the customer (`requires_action`): `next_action` is `use_stripe_sdk`.
    var nextAction = false
    var canceledAt: Int64?
    var cancellationReason: String?
    /// The Customer it belongs to (`customer`).
    var customer: String? = nil
    /// `setup_future_usage` (`on_session` or `off_session`): the PaymentMethod is attached to the
    /// Customer once the payment succeeds.
    var setupFutureUsage: String? = nil
    /// Confirmed with `off_session=true` (a request parameter only: Stripe's object does not show it).
    var offSession = false
    /// The Idempotency-Key of the request that made it.
    var idempotencyKey: String? = nil
  }

  struct Charge: Sendable {
    var id: String
    var amount: Int64
    var amountCaptured: Int64 = 0
    var amountRefunded: Int64 = 0
    var captured: Bool
    var status: String
    var currency: String
    var paymentIntent: String
    var paymentMethod: String
    var card: StripeTestCard
    var created: Int64
    var failureCode: String?
    var failureMessage: String?
    /// Manual capture: when the authorization lapses (`payment_method_details.card.capture_before`).
    var captureBefore: Int64?
    /// The `charge` balance transaction, once captured.
    var balanceTransaction: String?
    /// Whether a dispute was opened on it.
    var disputed = false
  }

  struct Refund: Sendable {
    var id: String
    var amount: Int64
    var currency: String
    var charge: String
    var paymentIntent: String
    /// Null is a status Stripe's Refund object allows.
    var status: String?
    var reason: String?
    var metadata: [(key: String, value: String)]
    var created: Int64
    var failureReason: String?
    /// The `refund` balance transaction (none for a refund that moved no money: canceled or failed at once).
    var balanceTransaction: String?
    /// The `refund_failure` balance transaction that gave the money back when it failed later.
    var failureBalanceTransaction: String?
  }

  var counters: [String: Int] = [:]
  var paymentIntents: [String: PaymentIntent] = [:]
  var paymentIntentOrder: [String] = []
  var charges: [String: Charge] = [:]
  var refunds: [String: Refund] = [:]
  var refundOrder: [String] = []
  var paymentMethods: [String: PaymentMethod] = [:]
  var consumedTokens: Set<String> = []
  var tokens: [String: Token] = [:]
  var tokenOrder: [String] = []
  var tokensPerIdempotencyKey: [String: Int] = [:]
  var createdPerIdempotencyKey: [String: Int] = [:]
  var paymentMethodsPerIdempotencyKey: [String: Int] = [:]
  /// Whether a `tok_…` is rejected the second time it is used (Stripe tokens are single-use).
  var singleUseTokens = true
  /// The settable clock (`StripeTestServer.setClock`): nil is the wall clock.
  var clock: Int64?
  /// The API request being executed, for the events it causes (`request` of an Event); nil for a
  /// control-API change and for what Stripe does "some time later".
  var request: (id: String, idempotencyKey: String?)?
  var events: [FeedEvent] = []
  var eventIndex: [String: Int] = [:]
  var balanceTransactions: [String: BalanceTransaction] = [:]
  var balanceTransactionOrder: [String] = []
  var disputes: [String: Dispute] = [:]
  var disputeOrder: [String] = []
  var customers: [String: Customer] = [:]
  var customerOrder: [String] = []
  var customersPerIdempotencyKey: [String: Int] = [:]
  var setupIntents: [String: SetupIntent] = [:]
  var setupIntentOrder: [String] = []
  var setupIntentsPerIdempotencyKey: [String: Int] = [:]
  /// Each list's objects newest first, kept while no object of the kind is added.
  let listOrder = ListOrderCache()
  /// Card errors queued per Customer for its next off-session PaymentIntents
  /// (`StripeTestServer.declineNextOffSessionCharges`), oldest first.
  var offSessionDeclines: [String: [ForcedDecline]] = [:]

  /// Now, in Unix seconds, by the settable clock.
  var now: Int64 { clock ?? Int64(Date().timeIntervalSince1970) }

  mutating func nextID(_ prefix: String) -> String {
    let next = (counters[prefix] ?? 0) + 1
    counters[prefix] = next
    let digits = String(next)
    return prefix + "_test" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
  }

  // MARK: - Validation (before an endpoint begins executing: nothing saved)

  static let createParameters: Set<String> = [
    "amount", "currency", "confirm", "capture_method", "payment_method", "payment_method_data",
    "payment_method_types", "metadata", "description", "receipt_email", "statement_descriptor",
    "statement_descriptor_suffix", "confirmation_method", "automatic_payment_methods", "expand", "off_session",
    "error_on_requires_action", "return_url", "setup_future_usage", "shipping", "payment_method_options",
    "use_stripe_sdk", "mandate_data", "radar_options", "transfer_group", "payment_method_configuration", "customer",
  ]
  static let paymentMethodParameters: Set<String> = ["type", "card", "billing_details", "metadata", "expand"]
  static let captureParameters: Set<String> = [
    "amount_to_capture", "metadata", "expand", "statement_descriptor", "statement_descriptor_suffix", "final_capture",
  ]
  static let cancelParameters: Set<String> = ["cancellation_reason", "expand"]
  static let refundParameters: Set<String> = [
    "payment_intent", "charge", "amount", "metadata", "reason", "expand", "instructions_email",
  ]
  static let tokenParameters: Set<String> = [
    "pk_token", "pk_token_instrument_name", "pk_token_payment_network", "pk_token_transaction_id", "card", "expand",
  ]
  static let cancellationReasons = ["duplicate", "fraudulent", "requested_by_customer", "abandoned"]
  static let refundReasons = ["duplicate", "fraudulent", "requested_by_customer"]

  static func checkUnknown(_ form: StripeForm, allowed: Set<String>) -> StripeAPIError? {
    for name in form.topLevelNames where !allowed.contains(name) {
      return .invalidRequest("Received unknown parameter: \(name)", param: name, code: "parameter_unknown")
    }
    return nil
  }

  static func positiveInteger(_ form: StripeForm, _ name: String) -> Result<Int64?, StripeAPIError> {
    guard let text = form[name] else { return .success(nil) }
    guard let value = Int64(text) else {
      return .failure(.invalidRequest("Invalid integer: \(text)", param: name, code: "parameter_invalid_integer"))
    }
    guard value >= 1 else {
      return .failure(
        .invalidRequest("This value must be greater than or equal to 1.", param: name, code: "parameter_invalid_integer"))
    }
    return .success(value)
  }

  static func boolean(_ form: StripeForm, _ name: String) -> Result<Bool?, StripeAPIError> {
    guard let text = form[name] else { return .success(nil) }
    switch text {
    case "true": return .success(true)
    case "false": return .success(false)
    default: return .failure(.invalidRequest("Invalid boolean: \(text)", param: name))
    }
  }

  static func checkMetadata(_ form: StripeForm) -> StripeAPIError? {
    let entries = form.hash("metadata")
    if entries.count > 50 {
      return .invalidRequest("Invalid metadata: metadata can have at most 50 keys.", param: "metadata")
    }
    for entry in entries {
      if entry.key.count > 40 {
        return .invalidRequest(
          "Invalid metadata: metadata keys must be at most 40 characters long.", param: "metadata[\(entry.key)]")
      }
      if entry.value.count > 500 {
        return .invalidRequest(
          "Invalid metadata: metadata values must be at most 500 characters long.", param: "metadata[\(entry.key)]")
      }
    }
    return nil
  }

  static func enumValue(_ form: StripeForm, _ name: String, _ allowed: [String]) -> StripeAPIError? {
    guard let value = form[name], !allowed.contains(value) else { return nil }
    let list =
      allowed.count > 1 ? allowed.dropLast().joined(separator: ", ") + ", or " + allowed.last! : allowed.joined()
    return .invalidRequest("Invalid \(name): must be one of \(list)", param: name)
  }

  static func validateCreate(_ form: StripeForm) -> StripeAPIError? {
    if let error = checkUnknown(form, allowed: createParameters) { return error }
    guard form.contains("amount") else { return .missing("amount") }
    let amount: Int64
    switch positiveInteger(form, "amount") {
    case .failure(let error): return error
    case .success(let value): amount = value!
    }
    guard let rawCurrency = form["currency"] else { return .missing("currency") }
    let currency = rawCurrency.lowercased()
    guard StripeCurrency.supportedSet.contains(currency) else {
      return .invalidRequest(
        "Invalid currency: \(rawCurrency). Stripe currently supports these currencies: "
          + StripeCurrency.supported.joined(separator: ", "), param: "currency")
    }
    if let minimum = StripeCurrency.minimumCharge[currency], amount < minimum {
      return .invalidRequest(
        "Amount must be at least \(StripeCurrency.format(minimum, currency)) \(currency)", param: "amount",
        code: "amount_too_small")
    }
    if amount > 99_999_999 {
      return .invalidRequest(
        "Amount must be no more than \(StripeCurrency.format(99_999_999, currency))", param: "amount",
        code: "amount_too_large")
    }
    let confirm: Bool
    switch boolean(form, "confirm") {
    case .failure(let error): return error
    case .success(let value): confirm = value ?? false
    }
    if let error = enumValue(form, "capture_method", ["automatic", "automatic_async", "manual"]) { return error }
    for type in form.array("payment_method_types") where type != "card" {
      return .invalidRequest(
        "The payment method type provided: \(type) is invalid. This test server supports only card.",
        param: "payment_method_types")
    }
    if let error = checkMetadata(form) { return error }
    if case .failure(let error) = boolean(form, "error_on_requires_action") { return error }
    if let error = checkOffSession(form, confirm: confirm) { return error }
    if let error = enumValue(form, "setup_future_usage", ["off_session", "on_session"]) { return error }
    let hasData = form.pairs.contains { $0.name.hasPrefix("payment_method_data[") }
    if hasData {
      // Stripe's OpenAPI description has no `card` under payment_method_data: a token becomes a
      // PaymentMethod first (POST /v1/payment_methods with card[token]).
      if form.pairs.contains(where: { $0.name.hasPrefix("payment_method_data[card]") }) {
        return .invalidRequest(
          "Received unknown parameter: payment_method_data[card]", param: "payment_method_data[card]",
          code: "parameter_unknown")
      }
      return .invalidRequest(
        "This test server takes a payment method as payment_method only.", param: "payment_method_data")
    } else if confirm && (form["payment_method"] ?? "").isEmpty {
      return .invalidRequest(
        "You cannot confirm this PaymentIntent because it's missing a payment method. You can either update the "
          + "PaymentIntent with a payment method and then confirm it again, or confirm it again directly with a "
          + "payment method.", code: "payment_intent_unexpected_state")
    }
    return nil
  }

  static func validateCapture(_ form: StripeForm) -> StripeAPIError? {
    if let error = checkUnknown(form, allowed: captureParameters) { return error }
    if case .failure(let error) = positiveInteger(form, "amount_to_capture") { return error }
    return checkMetadata(form)
  }

  static func validateCancel(_ form: StripeForm) -> StripeAPIError? {
    if let error = checkUnknown(form, allowed: cancelParameters) { return error }
    return enumValue(form, "cancellation_reason", cancellationReasons)
  }

  static func validateRefund(_ form: StripeForm) -> StripeAPIError? {
    if let error = checkUnknown(form, allowed: refundParameters) { return error }
    if (form["payment_intent"] ?? "").isEmpty && (form["charge"] ?? "").isEmpty {
      return .invalidRequest(
        "One of the following params should be provided for this request: payment_intent or charge.",
        param: "payment_intent")
    }
    if case .failure(let error) = positiveInteger(form, "amount") { return error }
    if let error = enumValue(form, "reason", refundReasons) { return error }
    return checkMetadata(form)
  }

  /// `POST /v1/payment_methods` with `type=card` and `card[token]=tok_…`: a card PaymentMethod
  /// from a token, as Stripe documents (https://docs.stripe.com/api/payment_methods/create).
  /// Raw card numbers (`card[number]`) are not taken.
  static func validatePaymentMethod(_ form: StripeForm) -> StripeAPIError? {
    if let error = checkUnknown(form, allowed: paymentMethodParameters) { return error }
    guard let type = form["type"], !type.isEmpty else { return .missing("type") }
    guard type == "card" else {
      return .invalidRequest("Invalid type: this test server supports only card.", param: "type")
    }
    guard let token = form["card[token]"], !token.isEmpty else {
      if form.pairs.contains(where: { $0.name.hasPrefix("card[") }) {
        return .invalidRequest(
          "Sending credit card numbers directly to the Stripe API is generally unsafe. This test server takes card[token] only.",
          param: "card[number]")
      }
      return .missing("card")
    }
    return checkMetadata(form)
  }

  /// `POST /v1/tokens` as Stripe's SDKs send an Apple Pay token: `pk_token` must be the JSON text
  /// of an Apple Pay payment token, and `pk_token_payment_network` or `pk_token_instrument_name`
  /// must name a card this server has (`StripeTestCard.applePay`).
  static func validateToken(_ form: StripeForm) -> StripeAPIError? {
    if let error = checkUnknown(form, allowed: tokenParameters) { return error }
    guard let text = form["pk_token"], !text.isEmpty else {
      if form.pairs.contains(where: { $0.name.hasPrefix("card[") }) {
        return .invalidRequest("This test server makes tokens from Apple Pay tokens only (pk_token).", param: "card")
      }
      return .missing("pk_token")
    }
    func invalid(_ why: String) -> StripeAPIError {
      .invalidRequest("Invalid pk_token: \(why).", param: "pk_token")
    }
    guard let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8)), let token = parsed as? [String: Any] else {
      return invalid("it must be the JSON text of an Apple Pay payment token (PKPaymentToken.paymentData)")
    }
    guard let version = token["version"] as? String, ["EC_v1", "RSA_v1"].contains(version) else {
      return invalid("version must be EC_v1 or RSA_v1")
    }
    for name in ["data", "signature"] {
      guard let value = token[name] as? String, !value.isEmpty else { return invalid("\(name) must be a non-empty string") }
    }
    guard let header = token["header"] as? [String: Any] else { return invalid("header must be an object") }
    guard let transactionID = header["transactionId"] as? String, !transactionID.isEmpty else {
      return invalid("header.transactionId must be a non-empty string")
    }
    let network = form["pk_token_payment_network"] ?? ""
    guard StripeTestCard.applePay(network: network, instrumentName: form["pk_token_instrument_name"]) != nil else {
      return .invalidRequest(
        "This test server has no card for the Apple Pay network '\(network)': use visa, masterCard, amex, discover, "
          + "JCB or chinaUnionPay, or a test card's name as pk_token_instrument_name.",
        param: "pk_token_payment_network")
    }
    return nil
  }

  // MARK: - Execution (an endpoint has begun: the result is saved under an idempotency key)

  mutating func createPaymentIntent(_ form: StripeForm, idempotencyKey: String?, now: Int64) -> Result<
    StripeJSON, StripeAPIError
  > {
    let amount = Int64(form["amount"]!)!
    let currency = form["currency"]!.lowercased()
    let confirm = form["confirm"] == "true"
    let captureMethod = form["capture_method"] ?? "automatic"
    let offSession = Self.isOffSession(form)
    let customer: String?
    switch resolveCustomer(form) {
    case .failure(let error): return .failure(error)
    case .success(let id): customer = id
    }
    // Resolve the payment method: a magic test PaymentMethod, one made earlier, or a test token.
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
      if let error = Self.unusable(paymentMethod!, customer: customer, offSession: offSession) { return .failure(error) }
    }
    let expandCharge = form.array("expand").contains("latest_charge")
    let id = nextID("pi")
    var intent = PaymentIntent(
      id: id, amount: amount, currency: currency,
      status: paymentMethod == nil ? "requires_payment_method" : "requires_confirmation",
      captureMethod: captureMethod, clientSecret: "\(id)_secret_test\(id.suffix(6))", created: now,
      metadata: form.hash("metadata").filter { !$0.value.isEmpty }, description: form["description"],
      receiptEmail: form["receipt_email"], statementDescriptor: form["statement_descriptor"],
      statementDescriptorSuffix: form["statement_descriptor_suffix"], paymentMethod: paymentMethod?.id,
      paymentMethodTypes: ["card"], customer: customer, setupFutureUsage: form["setup_future_usage"],
      offSession: offSession && confirm, idempotencyKey: idempotencyKey)
    paymentIntentOrder.append(id)
    if let idempotencyKey { createdPerIdempotencyKey[idempotencyKey, default: 0] += 1 }
    defer { paymentIntents[id] = intent }
    guard confirm, let paymentMethod else { return .success(render(intent, expandCharge: expandCharge)) }

    let charge = Charge(
      id: nextID("ch"), amount: amount, captured: false, status: "succeeded", currency: currency, paymentIntent: id,
      paymentMethod: paymentMethod.id, card: paymentMethod.card, created: now,
      captureBefore: captureMethod == "manual" ? now + 7 * 86_400 : nil)
    intent.latestCharge = charge.id
    var confirmation = paymentConfirmation(paymentMethod, customer: customer, offSession: offSession)
    if case .requiresAction = confirmation {
      guard form["error_on_requires_action"] == "true" else {
        // Left open for the customer: no charge yet (https://docs.stripe.com/payments/paymentintents/lifecycle).
        intent.latestCharge = nil
        intent.status = "requires_action"
        intent.nextAction = true
        emit("payment_intent.requires_action", render(intent))
        return .success(render(intent, expandCharge: expandCharge))
      }
      confirmation = Self.authenticationRequiredDecline
    }
    if case .processing = confirmation {
      var pending = charge
      pending.status = "pending"
      charges[pending.id] = pending
      intent.status = "processing"
      emit("payment_intent.processing", render(intent))
      return .success(render(intent, expandCharge: expandCharge))
    }
    if case .declines(let code, let declineCode, let message, let param) = confirmation {
      var failed = charge
      failed.status = "failed"
      failed.failureCode = code
      failed.failureMessage = message
      charges[failed.id] = failed
      intent.status = "requires_payment_method"
      intent.paymentMethod = nil
      let paymentError = StripeAPIError(
        status: 402, type: "card_error", message: message, code: code, declineCode: declineCode, param: param,
        charge: charge.id, paymentMethod: render(paymentMethod))
      intent.lastPaymentError = .object(paymentError.error)
      emit("charge.failed", render(failed))
      emit("payment_intent.payment_failed", render(intent))
      let answered = StripeAPIError(
        status: 402, type: "card_error", message: message, code: code, declineCode: declineCode, param: param,
        charge: charge.id, paymentIntent: render(intent), paymentMethod: render(paymentMethod))
      return .failure(answered)
    }
    var approved = charge
    if captureMethod == "manual" {
      intent.status = "requires_capture"
      intent.amountCapturable = amount
    } else {
      approved.captured = true
      approved.amountCaptured = amount
      approved.balanceTransaction = addBalanceTransaction(
        type: "charge", reportingCategory: "charge", amount: amount, currency: currency, source: approved.id)
      intent.status = "succeeded"
      intent.amountReceived = amount
    }
    charges[approved.id] = approved
    emit("charge.succeeded", render(approved))
    emit(
      captureMethod == "manual" ? "payment_intent.amount_capturable_updated" : "payment_intent.succeeded",
      render(intent))
    keepPaymentMethod(of: intent)
    return .success(render(intent, expandCharge: expandCharge))
  }

  /// A card PaymentMethod from a token (validated form): the token is used up, as a PaymentIntent
  /// charging it would use it.
  mutating func createPaymentMethod(_ form: StripeForm, idempotencyKey: String?, now: Int64) -> Result<
    StripeJSON, StripeAPIError
  > {
    let token = form["card[token]"]!
    guard let card = tokens[token]?.card ?? StripeTestCard.token(token) else {
      return .failure(.resourceMissing("No such token: '\(token)'", param: "card[token]", status: 400))
    }
    if singleUseTokens && consumedTokens.contains(token) {
      return .failure(
        .invalidRequest(
          "You cannot use a Stripe token more than once: \(token).", param: "card[token]", code: "token_already_used"))
    }
    consumedTokens.insert(token)
    let method = PaymentMethod(id: nextID("pm"), card: card, created: now)
    paymentMethods[method.id] = method
    if let idempotencyKey { paymentMethodsPerIdempotencyKey[idempotencyKey, default: 0] += 1 }
    return .success(render(method))
  }

  /// `GET /v1/payment_intents/search`: `query` must be one `metadata['KEY']:'VALUE'` clause (the
  /// form payservice sends); the answer is Stripe's search_result, oldest first, with
  /// `expand[]=data.latest_charge` honoured. Unlike Stripe's, this index is never behind.
  func searchPaymentIntents(_ form: StripeForm) -> Result<StripeJSON, StripeAPIError> {
    guard let query = form["query"], !query.isEmpty else { return .failure(.missing("query")) }
    let pattern = /^metadata\['([^']+)'\]:'([^']*)'$/
    guard let match = query.wholeMatch(of: pattern) else {
      return .failure(
        .invalidRequest(
          "This test server searches PaymentIntents by one metadata['key']:'value' clause only: \(query)", param: "query"))
    }
    let (key, value) = (String(match.1), String(match.2))
    let expandCharge = form.array("expand").contains("data.latest_charge")
    let found = paymentIntentOrder.compactMap { paymentIntents[$0] }.filter { intent in
      intent.metadata.contains { $0.key == key && $0.value == value }
    }
    return .success(
      .object([
        ("object", .string("search_result")),
        ("data", .array(found.map { render($0, expandCharge: expandCharge) })),
        ("has_more", .bool(false)),
        ("next_page", .null),
        ("url", .string("/v1/payment_intents/search")),
      ]))
  }

  /// Ends a `processing` PaymentIntent (see `StripeTestServer.settleProcessing`).
  mutating func settleProcessing(_ id: String, succeeded: Bool) -> Bool {
    guard var intent = paymentIntents[id], intent.status == "processing", let chargeID = intent.latestCharge,
      var charge = charges[chargeID]
    else { return false }
    if succeeded {
      charge.status = "succeeded"
      if intent.captureMethod == "manual" {
        intent.status = "requires_capture"
        intent.amountCapturable = intent.amount
      } else {
        charge.captured = true
        charge.amountCaptured = charge.amount
        charge.balanceTransaction = addBalanceTransaction(
          type: "charge", reportingCategory: "charge", amount: charge.amount, currency: charge.currency,
          source: chargeID)
        intent.status = "succeeded"
        intent.amountReceived = intent.amount
      }
    } else {
      charge.status = "failed"
      charge.failureCode = "card_declined"
      charge.failureMessage = "Your card was declined."
      intent.status = "requires_payment_method"
      intent.paymentMethod = nil
      intent.lastPaymentError = .object(
        StripeAPIError(
          status: 402, type: "card_error", message: "Your card was declined.", code: "card_declined",
          declineCode: "generic_decline", charge: chargeID
        ).error)
    }
    charges[chargeID] = charge
    paymentIntents[id] = intent
    emit(succeeded ? "charge.succeeded" : "charge.failed", render(charge))
    emit(
      !succeeded ? "payment_intent.payment_failed"
        : intent.status == "requires_capture" ? "payment_intent.amount_capturable_updated" : "payment_intent.succeeded",
      render(intent))
    if succeeded { keepPaymentMethod(of: intent) }
    return true
  }

  /// Cancels an uncaptured PaymentIntent as Stripe does once its authorization lapses.
  mutating func expireAuthorization(_ id: String) -> Bool {
    guard var intent = paymentIntents[id], intent.status == "requires_capture" else { return false }
    intent.status = "canceled"
    intent.amountCapturable = 0
    intent.canceledAt = intent.created + 7 * 86_400
    intent.cancellationReason = "automatic"
    paymentIntents[id] = intent
    emit("payment_intent.canceled", render(intent))
    return true
  }

  /// A card token for the Apple Pay token of the (validated) form.
  mutating func createToken(_ form: StripeForm, idempotencyKey: String?, now: Int64) -> Result<StripeJSON, StripeAPIError> {
    let card = StripeTestCard.applePay(
      network: form["pk_token_payment_network"] ?? "", instrumentName: form["pk_token_instrument_name"])!
    let token = Token(id: nextID("tok"), cardID: nextID("card"), card: card, created: now)
    tokens[token.id] = token
    tokenOrder.append(token.id)
    if let idempotencyKey { tokensPerIdempotencyKey[idempotencyKey, default: 0] += 1 }
    return .success(render(token))
  }

  mutating func capture(_ id: String, _ form: StripeForm, now: Int64) -> Result<StripeJSON, StripeAPIError> {
    guard var intent = paymentIntents[id] else {
      return .failure(.resourceMissing("No such payment_intent: '\(id)'", param: "intent"))
    }
    guard intent.status == "requires_capture", let chargeID = intent.latestCharge, var charge = charges[chargeID] else {
      return .failure(
        StripeAPIError(
          status: 400, type: "invalid_request_error",
          message: "This PaymentIntent could not be captured because it has a status of \(intent.status). Only a "
            + "PaymentIntent with one of the following statuses may be captured: requires_capture.",
          code: "payment_intent_unexpected_state", paymentIntent: render(intent)))
    }
    let amount = form["amount_to_capture"].flatMap { Int64($0) } ?? intent.amountCapturable
    guard amount <= intent.amountCapturable else {
      return .failure(
        .invalidRequest(
          "The amount to capture (\(amount)) must be less than or equal to the amount capturable "
            + "(\(intent.amountCapturable)).", param: "amount_to_capture", code: "amount_too_large"))
    }
    charge.captured = true
    charge.amountCaptured = amount
    charge.balanceTransaction = addBalanceTransaction(
      type: "charge", reportingCategory: "charge", amount: amount, currency: charge.currency, source: chargeID)
    charges[chargeID] = charge
    intent.status = "succeeded"
    intent.amountReceived = amount
    intent.amountCapturable = 0
    intent.metadata = Self.merge(intent.metadata, form.hash("metadata"))
    paymentIntents[id] = intent
    emit("charge.captured", render(charge))
    emit("payment_intent.succeeded", render(intent))
    return .success(render(intent))
  }

  static let cancellableStatuses = [
    "requires_payment_method", "requires_capture", "requires_confirmation", "requires_action", "processing",
  ]

  mutating func cancel(_ id: String, _ form: StripeForm, now: Int64) -> Result<StripeJSON, StripeAPIError> {
    guard var intent = paymentIntents[id] else {
      return .failure(.resourceMissing("No such payment_intent: '\(id)'", param: "intent"))
    }
    guard Self.cancellableStatuses.contains(intent.status) else {
      return .failure(
        StripeAPIError(
          status: 400, type: "invalid_request_error",
          message: "You cannot cancel this PaymentIntent because it has a status of \(intent.status). Only a "
            + "PaymentIntent with one of the following statuses may be canceled: "
            + Self.cancellableStatuses.joined(separator: ", ") + ".",
          code: "payment_intent_unexpected_state", paymentIntent: render(intent)))
    }
    intent.status = "canceled"
    intent.amountCapturable = 0
    intent.canceledAt = now
    intent.cancellationReason = form["cancellation_reason"]
    paymentIntents[id] = intent
    emit("payment_intent.canceled", render(intent))
    return .success(render(intent))
  }

  mutating func createRefund(_ form: StripeForm, now: Int64) -> Result<StripeJSON, StripeAPIError> {
    let intentID: String
    if let id = form["payment_intent"], !id.isEmpty {
      guard paymentIntents[id] != nil else {
        return .failure(.resourceMissing("No such payment_intent: '\(id)'", param: "payment_intent"))
      }
      intentID = id
    } else {
      let chargeID = form["charge"]!
      guard let charge = charges[chargeID] else {
        return .failure(.resourceMissing("No such charge: '\(chargeID)'", param: "charge"))
      }
      intentID = charge.paymentIntent
    }
    let intent = paymentIntents[intentID]!
    guard intent.status == "succeeded", let chargeID = intent.latestCharge, var charge = charges[chargeID],
      charge.captured
    else {
      let message =
        intent.status == "requires_capture"
        ? "This PaymentIntent (\(intentID)) has an uncaptured charge, which cannot be refunded. Capture the "
          + "PaymentIntent first, or cancel it to release the authorization."
        : "This PaymentIntent (\(intentID)) does not have a successful charge to refund."
      return .failure(
        .invalidRequest(message, param: form["payment_intent"] != nil ? "payment_intent" : "charge",
          code: "payment_intent_unexpected_state"))
    }
    // A dispute withdrew the funds (https://docs.stripe.com/error-codes/charge-disputed).
    if isChargedBack(chargeID) {
      return .failure(
        .invalidRequest(
          "Charge \(chargeID) has been charged back; cannot issue a refund.",
          param: form["payment_intent"] != nil ? "payment_intent" : "charge", code: "charge_disputed"))
    }
    let refundable = charge.amountCaptured - charge.amountRefunded
    guard refundable > 0 else {
      return .failure(
        .invalidRequest("Charge \(chargeID) has already been refunded.", code: "charge_already_refunded"))
    }
    let amount = form["amount"].flatMap { Int64($0) } ?? refundable
    guard amount <= refundable else {
      return .failure(
        .invalidRequest(
          "Refund amount (\(StripeCurrency.format(amount, charge.currency))) is greater than unrefunded amount on "
            + "charge (\(StripeCurrency.format(refundable, charge.currency)))", param: "amount"))
    }
    var refund = Refund(
      id: nextID("re"), amount: amount, currency: charge.currency, charge: chargeID, paymentIntent: intentID,
      status: "succeeded", reason: form["reason"], metadata: form.hash("metadata").filter { !$0.value.isEmpty },
      created: now)
    switch charge.card.outcome {
    case .refundPending: refund.status = "pending"
    case .refundRequiresAction: refund.status = "requires_action"
    case .refundNoStatus: refund.status = nil
    case .refundCanceled: refund.status = "canceled"
    case .refundFailsAtOnce:
      refund.status = "failed"
      refund.failureReason = "declined"
    default: break
    }
    record(&refund, on: &charge)
    if refund.status == "failed" { emit("refund.failed", render(refund)) }
    let answer = render(refund)
    // Stripe's refund test cards change the refund's status "some time later"; here, right after
    // answering, as Stripe's own doing (events with a null `request`).
    let caused = request
    request = nil
    defer { request = caused }
    switch charge.card.outcome {
    case .refundFails: _ = failRefund(refund.id, reason: "expired_or_canceled_card")
    case .refundPending, .refundNoStatus: succeedRefund(refund.id)
    default: break
    }
    return .success(answer)
  }

  func retrievePaymentIntent(_ id: String, _ form: StripeForm = StripeForm(pairs: [])) -> Result<StripeJSON, StripeAPIError> {
    guard let intent = paymentIntents[id] else {
      return .failure(.resourceMissing("No such payment_intent: '\(id)'", param: "intent"))
    }
    return .success(render(intent, expandCharge: form.array("expand").contains("latest_charge")))
  }

  func retrieveRefund(_ id: String) -> Result<StripeJSON, StripeAPIError> {
    guard let refund = refunds[id] else { return .failure(.resourceMissing("No such refund: '\(id)'", param: "id")) }
    return .success(render(refund))
  }

  func retrieveCharge(_ id: String) -> Result<StripeJSON, StripeAPIError> {
    guard let charge = charges[id] else { return .failure(.resourceMissing("No such charge: '\(id)'", param: "charge")) }
    return .success(render(charge))
  }

  /// A card's brand as Stripe's Card object (on tokens) spells it: for people.
  static let tokenBrands = [
    "visa": "Visa", "mastercard": "MasterCard", "amex": "American Express", "discover": "Discover",
    "diners": "Diners Club", "jcb": "JCB", "unionpay": "UnionPay",
  ]

  /// `GET /v1/tokens/{id}`: a token made from an Apple Pay token, or a test token, as Stripe shows
  /// it, its card's `brand` spelled for people ("Visa", "American Express", "MasterCard"), as on
  /// Stripe's Card object.
  func retrieveToken(_ id: String) -> Result<StripeJSON, StripeAPIError> {
    if let token = tokens[id] { return .success(render(token)) }
    guard let card = StripeTestCard.token(id) else { return .failure(.resourceMissing("No such token: '\(id)'", param: "token")) }
    let brands = Self.tokenBrands
    return .success(
      .object([
        ("id", .string(id)), ("object", .string("token")), ("type", .string("card")), ("livemode", .bool(false)),
        ("used", .bool(false)),
        (
          "card",
          .object([
            ("object", .string("card")), ("brand", .string(brands[card.brand] ?? "Unknown")),
            ("funding", .string(card.funding)), ("last4", .string(card.last4)),
          ])
        ),
      ]))
  }

  /// `GET /v1/payment_methods/{id}`: a PaymentMethod made here (with the Customer it is attached
  /// to), or a test PaymentMethod, its card's `brand` as a code ("visa", "amex", "mastercard"), as
  /// on Stripe's PaymentMethod object.
  func retrievePaymentMethod(_ id: String) -> Result<StripeJSON, StripeAPIError> {
    if let method = paymentMethods[id] { return .success(render(method)) }
    guard let card = StripeTestCard.paymentMethod(id) else {
      return .failure(.resourceMissing("No such PaymentMethod: '\(id)'", param: "payment_method"))
    }
    return .success(
      .object([
        ("id", .string(id)), ("object", .string("payment_method")), ("type", .string("card")),
        ("livemode", .bool(false)),
        (
          "card",
          .object([("brand", .string(card.brand)), ("funding", .string(card.funding)), ("last4", .string(card.last4))])
        ),
      ]))
  }

  static func merge(_ metadata: [(key: String, value: String)], _ update: [(key: String, value: String)]) -> [(
    key: String, value: String
  )] {
    var merged = Dictionary(metadata.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
    for entry in update { merged[entry.key] = entry.value.isEmpty ? nil : entry.value }
    return merged.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
  }

  // MARK: - Rendering, in the shape of Stripe's objects

  static func metadataJSON(_ metadata: [(key: String, value: String)]) -> StripeJSON {
    .object(metadata.map { ($0.key, .string($0.value)) })
  }

  func render(_ intent: PaymentIntent, expandCharge: Bool = false) -> StripeJSON {
    var latestCharge = StripeJSON.optional(intent.latestCharge)
    if expandCharge, let id = intent.latestCharge, let charge = charges[id] { latestCharge = render(charge) }
    return .object([
      ("id", .string(intent.id)),
      ("object", .string("payment_intent")),
      ("amount", .int(intent.amount)),
      ("amount_capturable", .int(intent.amountCapturable)),
      ("amount_received", .int(intent.amountReceived)),
      ("application", .null),
      ("application_fee_amount", .null),
      ("automatic_payment_methods", .null),
      ("canceled_at", .optional(intent.canceledAt)),
      ("cancellation_reason", .optional(intent.cancellationReason)),
      ("capture_method", .string(intent.captureMethod)),
      ("client_secret", .string(intent.clientSecret)),
      ("confirmation_method", .string("automatic")),
      ("created", .int(intent.created)),
      ("currency", .string(intent.currency)),
      ("customer", .optional(intent.customer)),
      ("description", .optional(intent.description)),
      ("last_payment_error", intent.lastPaymentError ?? .null),
      ("latest_charge", latestCharge),
      ("livemode", .bool(false)),
      ("metadata", Self.metadataJSON(intent.metadata)),
      ("next_action", intent.nextAction ? .object([("type", .string("use_stripe_sdk")), ("use_stripe_sdk", .object([]))]) : .null),
      ("on_behalf_of", .null),
      ("payment_method", .optional(intent.paymentMethod)),
      ("payment_method_types", .array(intent.paymentMethodTypes.map(StripeJSON.string))),
      ("processing", .null),
      ("receipt_email", .optional(intent.receiptEmail)),
      ("review", .null),
      ("setup_future_usage", .optional(intent.setupFutureUsage)),
      ("shipping", .null),
      ("source", .null),
      ("statement_descriptor", .optional(intent.statementDescriptor)),
      ("statement_descriptor_suffix", .optional(intent.statementDescriptorSuffix)),
      ("status", .string(intent.status)),
      ("transfer_data", .null),
      ("transfer_group", .null),
    ])
  }

  func render(_ method: PaymentMethod) -> StripeJSON {
    .object([
      ("id", .string(method.id)),
      ("object", .string("payment_method")),
      (
        "card",
        .object([
          ("brand", .string(method.card.brand)),
          ("country", .string("US")),
          ("exp_month", .int(12)),
          ("exp_year", .int(2034)),
          ("funding", .string(method.card.funding)),
          ("last4", .string(method.card.last4)),
        ])
      ),
      ("created", .int(method.created)),
      ("customer", .optional(method.customer)),
      ("livemode", .bool(false)),
      ("metadata", .object([])),
      ("type", .string("card")),
    ])
  }

  /// A token object as Stripe answers `POST /v1/tokens` with `pk_token`.
  func render(_ token: Token) -> StripeJSON {
    .object([
      ("id", .string(token.id)),
      ("object", .string("token")),
      (
        "card",
        .object([
          ("id", .string(token.cardID)),
          ("object", .string("card")),
          ("brand", .string(Self.tokenBrands[token.card.brand] ?? "Unknown")),
          ("country", .string("US")),
          ("cvc_check", .null),
          ("dynamic_last4", .string(token.card.last4)),
          ("exp_month", .int(12)),
          ("exp_year", .int(2034)),
          ("funding", .string(token.card.funding)),
          ("last4", .string(token.card.last4)),
          ("metadata", .object([])),
          ("name", .null),
          ("tokenization_method", .string("apple_pay")),
          ("wallet", .null),
        ])
      ),
      ("client_ip", .null),
      ("created", .int(token.created)),
      ("livemode", .bool(false)),
      ("type", .string("card")),
      ("used", .bool(consumedTokens.contains(token.id))),
    ])
  }

  func render(_ refund: Refund) -> StripeJSON {
    var members: [(String, StripeJSON)] = [
      ("id", .string(refund.id)),
      ("object", .string("refund")),
      ("amount", .int(refund.amount)),
      ("balance_transaction", .optional(refund.balanceTransaction)),
      ("charge", .string(refund.charge)),
      ("created", .int(refund.created)),
      ("currency", .string(refund.currency)),
    ]
    if let failure = refund.failureBalanceTransaction {
      members.append(("failure_balance_transaction", .string(failure)))
    }
    if let failureReason = refund.failureReason { members.append(("failure_reason", .string(failureReason))) }
    members += [
      ("metadata", Self.metadataJSON(refund.metadata)),
      ("payment_intent", .string(refund.paymentIntent)),
      ("reason", .optional(refund.reason)),
      ("receipt_number", .null),
      ("source_transfer_reversal", .null),
      ("status", .optional(refund.status)),
      ("transfer_reversal", .null),
    ]
    return .object(members)
  }

  func render(_ charge: Charge) -> StripeJSON {
    .object([
      ("id", .string(charge.id)),
      ("object", .string("charge")),
      ("amount", .int(charge.amount)),
      ("amount_captured", .int(charge.amountCaptured)),
      ("amount_refunded", .int(charge.amountRefunded)),
      ("balance_transaction", .optional(charge.balanceTransaction)),
      ("captured", .bool(charge.captured)),
      ("created", .int(charge.created)),
      ("currency", .string(charge.currency)),
      ("disputed", .bool(charge.disputed)),
      ("failure_code", .optional(charge.failureCode)),
      ("failure_message", .optional(charge.failureMessage)),
      ("livemode", .bool(false)),
      ("paid", .bool(charge.status == "succeeded")),
      ("payment_intent", .string(charge.paymentIntent)),
      ("payment_method", .string(charge.paymentMethod)),
      (
        "payment_method_details",
        .object([
          (
            "card",
            .object([
              ("brand", .string(charge.card.brand)),
              ("capture_before", .optional(charge.captureBefore)),
              ("funding", .string(charge.card.funding)),
              ("last4", .string(charge.card.last4)),
            ])
          ),
          ("type", .string("card")),
        ])
      ),
      ("refunded", .bool(charge.amountCaptured > 0 && charge.amountRefunded == charge.amountCaptured)),
      ("status", .string(charge.status)),
    ])
  }
}

/// The newest-first order of each list's objects and each object's place in it, sorted again only
/// when the kind's objects changed (counted, and the last one's id): the ledger is only ever
/// read and changed under the server's lock.
final class ListOrderCache: @unchecked Sendable {
  typealias Order = (ordered: [(id: String, created: Int64)], rank: [String: Int])
  private var cached: [String: (count: Int, last: String?, order: Order)] = [:]

  func sorted(_ kind: StripeTestLedger.ListKind, count: Int, last: String?, _ sort: () -> Order) -> Order {
    let key = kind.url
    if let hit = cached[key], hit.count == count, hit.last == last { return hit.order }
    let order = sort()
    cached[key] = (count, last, order)
    return order
  }
}
