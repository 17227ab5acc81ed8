import Foundation
import PayServiceCore
import PayServiceRemote

/// Stripe's API as payservice's remote gateway: Apple Pay tokens made into Stripe tokens,
/// PaymentIntents created and confirmed for orders, captured, canceled and refunded, over HTTPS
/// (`HTTPRemoteTransport`: connections kept and reused, the system's trust roots unless
/// `gateway.trustRoots` names others).
///
/// Every call is a form-encoded POST with the secret key as a bearer token, `Stripe-Version`
/// pinned to `apiVersion`, and an `Idempotency-Key`: Stripe keeps the first answer under a key for
/// at least 24 hours and answers the same request with it again (`Idempotent-Replayed: true`), so
/// a call retried after a lost answer never charges or refunds twice. 429, 409 (the same key still
/// in flight), 5xx answers Stripe does not mark `Stripe-Should-Retry: false`, and connection
/// failures are retried with the same key, at most `maxRetries` times, after `Retry-After` or a
/// short backoff (`RetryPolicy`).
///
/// The key never leaves this type: not in an error, a message or a log line. Every string of
/// Stripe's answers is scrubbed of the key and of anything shaped like a key before it is read
/// (`KeyScrubber`). Redirects are never followed: the form (and the key in its header) goes to
/// `apiBase` and nowhere else, and a 3xx answer is a refusal.
public final class StripeGateway: RemoteGateway {
  /// The API version every request pins: its objects and errors are what this type reads.
  public static let apiVersion = "2024-06-20"

  public let name = "Stripe"
  public let dashboard = "the Stripe Dashboard"
  private let transport: HTTPRemoteTransport
  private let settings: Gateway.Stripe
  private let retry: RetryPolicy
  private let authorization: String
  private let scrubber: KeyScrubber

  /// - Parameter secretKey: from the environment (`Gateway.Stripe.secretKey(environment:)`).
  public init(settings: Gateway.Stripe, secretKey: String) {
    self.settings = settings
    self.authorization = "Bearer " + secretKey
    self.scrubber = KeyScrubber(key: secretKey)
    transport = HTTPRemoteTransport.gateway(settings)
    retry = RetryPolicy.gateway(settings)
  }

  public func shutdown() async {
    await transport.close()
  }

  public func paymentDataProblem(_ paymentData: String) -> String? {
    let isID: (String) -> Bool = { text in
      (text.hasPrefix("tok_") || text.hasPrefix("pm_")) && text.utf8.count <= 255
        && text.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }
    if isID(paymentData) { return nil }
    return """
      must be a Stripe token (tok_…) or PaymentMethod (pm_…) that Stripe's iOS or JS SDK created from the \
      Apple Pay payment, or the Apple Pay token itself (PKPaymentToken.paymentData: an object, or its JSON \
      text) (gateway.kind is stripe)
      """
  }

  // MARK: Calls

  /// A charge as Stripe documents it: a token (`tok_…`) first becomes a PaymentMethod
  /// (`POST /v1/payment_methods` with `type=card` and `card[token]`, under the charge's key with
  /// `-payment-method` appended), then the PaymentIntent is created and confirmed with
  /// `payment_method=pm_…`, `error_on_requires_action=true` (a card that needs the customer to
  /// authenticate is a decline, `authentication_required`, rather than a PaymentIntent left open)
  /// and `expand[]=latest_charge` (for `capture_before`).
  ///
  /// Sent again (a recovery), Stripe replays its first answer under the key; two answers are
  /// then read further: a replayed `processing` PaymentIntent is read again
  /// (`GET /v1/payment_intents/{id}`) for its current state, and a 500 Stripe stored under the key
  /// (replayed, or an `idempotency_error` for a form sent by an earlier release) is resolved by
  /// searching for the order's PaymentIntent by `metadata['order_id']`.
  ///
  /// An agreement's charges (`GatewayCharge.saveCard`, `GatewayCharge.savedCard`) take the
  /// documented ways to keep a card and to charge it later:
  /// - `saveCard` (the buyer present): a Customer first (`saveCustomer`), then the PaymentMethod as
  ///   above, then either the PaymentIntent as above with `customer` and
  ///   `setup_future_usage=off_session` ("If you provide a Customer with the PaymentIntent, you can
  ///   use this parameter to attach the payment method to the Customer after the PaymentIntent is
  ///   confirmed and the customer completes any required actions", the reference's
  ///   `setup_future_usage`; https://docs.stripe.com/payments/save-during-payment), or, for a charge
  ///   of nothing, a SetupIntent (`setUpCard`). `error_on_requires_action=true` stays: the buyer
  ///   confirmed the payment on the device, and payservice's server confirmation cannot show them a
  ///   3-D Secure challenge.
  /// - `savedCard` (the buyer absent): `chargeSavedCard`.
  ///
  /// `metadata[agreement_id]` is sent with each of them when the charge names its agreement.
  public func charge(_ request: GatewayCharge) async -> GatewayReply<GatewayPayment> {
    if let saved = request.savedCard { return await chargeSavedCard(request, saved) }
    var customer: String?
    if request.saveCard {
      switch await saveCustomer(request) {
      case .success(let id): customer = id
      case .failure(let refused): return refused.reply
      }
    }
    let setsUp = request.saveCard && request.amountMinor == 0
    var paymentMethod = request.paymentData
    if !paymentMethod.hasPrefix("pm_") {
      let made = await post(
        "/v1/payment_methods", [("type", "card"), ("card[token]", request.paymentData)],
        key: Self.paymentMethodKey(request.idempotencyKey))
      switch made {
      case .object(let object, _):
        guard case .string(let id)? = object.member("id"), id.hasPrefix("pm_") else {
          return .unanswered(reason: "an answer payservice cannot read")
        }
        paymentMethod = id
      case .storedServerError:
        // The PaymentMethod was never made, so no PaymentIntent (or SetupIntent) can have been:
        // Stripe's search says which.
        if let customer, setsUp { return await searchForSetup(customer: customer, orderId: request.orderId) }
        return await searchForPayment(orderId: request.orderId, savesCard: request.saveCard)
      case .reply(let reply): return reply.map()
      }
    }
    if let customer, setsUp { return await setUpCard(request, customer: customer, paymentMethod: paymentMethod) }
    var form = Self.paymentIntentForm(request)
    form.append(("payment_method", paymentMethod))
    if let customer {
      form.append(("customer", customer))
      form.append(("setup_future_usage", "off_session"))
    }
    form.append(("error_on_requires_action", "true"))
    form.append(("expand[]", "latest_charge"))
    return await createPaymentIntent(form, request, savesCard: request.saveCard)
  }

  /// What every PaymentIntent of a charge is created with: its amount and currency, confirmed at
  /// once, captured as asked, by card, with the order (and agreement) as metadata.
  static func paymentIntentForm(_ request: GatewayCharge) -> [(String, String)] {
    var form: [(String, String)] = [
      ("amount", String(request.amountMinor)),
      ("currency", request.currencyCode.lowercased()),
      ("confirm", "true"),
      ("capture_method", request.captureManually ? "manual" : "automatic"),
      ("payment_method_types[]", "card"),
      ("metadata[order_id]", request.orderId),
    ]
    if let agreement = request.agreementId { form.append(("metadata[agreement_id]", agreement)) }
    return form
  }

  /// `POST /v1/payment_intents` with `form` under the charge's key, read as `charge` documents:
  /// a replayed `processing` PaymentIntent read again, a stored 500 (or another release's form
  /// under the key) resolved by the search for the order.
  private func createPaymentIntent(_ form: [(String, String)], _ request: GatewayCharge, savesCard: Bool) async
    -> GatewayReply<GatewayPayment>
  {
    switch await post("/v1/payment_intents", form, key: request.idempotencyKey) {
    case .object(let object, let replayed):
      let reply = Self.paymentReply(object, savesCard: savesCard)
      if replayed, case .succeeded(let payment) = reply, payment.status == .processing {
        return await retrievePayment(payment.id, savesCard: savesCard)
      }
      return reply
    case .storedServerError:
      return await searchForPayment(orderId: request.orderId, savesCard: savesCard)
    case .reply(.refused(let refusal)) where Self.isOtherForm(refusal):
      // The key holds another form (a charge left pending by an earlier release): what it did is
      // found by the order's metadata instead.
      return await searchForPayment(orderId: request.orderId, savesCard: savesCard)
    case .reply(let reply): return reply.map()
    }
  }

  /// Whether Stripe refused a key because it holds another form (`idempotency_error`, "same
  /// parameters"), not because it is in flight.
  static func isOtherForm(_ refusal: GatewayRefusal) -> Bool {
    refusal.type == "idempotency_error" && refusal.final == false && refusal.code == nil
      && refusal.message.contains("same parameters")
  }

  /// A payment the merchant starts with a card kept before, the buyer absent, as Stripe documents
  /// charging a saved card (https://docs.stripe.com/payments/save-during-payment, "Charge the
  /// saved payment method later"): a PaymentIntent created and confirmed with `customer`,
  /// `payment_method` and `off_session=true` ("Set to true to indicate that the customer isn't in
  /// your checkout flow during this payment attempt and can't authenticate … can only be used with
  /// confirm=true", the reference's `off_session`), under the charge's key. No Customer and no
  /// PaymentMethod are made.
  ///
  /// `error_on_requires_action` is not sent: off-session, a card whose bank asks for the
  /// cardholder fails the payment anyway ("If a payment attempt fails, the request also fails with
  /// a 402 HTTP status code, and the PaymentIntent status is requires_payment_method"), with the
  /// card error `authentication_required`, read as every card error is: `.declined` with `code`
  /// and `declineCode` `authentication_required`. A PaymentMethod Stripe no longer charges for the
  /// Customer (detached, or never attached to it) is an `invalid_request_error` (400), kept under
  /// the key: `.refused(final: true)` with Stripe's `code` in `GatewayRefusal.code`. Replays and
  /// stored 500s are resolved as for every charge (`createPaymentIntent`).
  func chargeSavedCard(_ request: GatewayCharge, _ saved: GatewaySavedCard) async -> GatewayReply<GatewayPayment> {
    var form = Self.paymentIntentForm(request)
    form += [
      ("customer", saved.customerId),
      ("payment_method", saved.paymentMethodId),
      ("off_session", "true"),
      ("expand[]", "latest_charge"),
    ]
    return await createPaymentIntent(form, request, savesCard: false)
  }

  /// Why a charge's Customer was not made: the reply the charge gives.
  struct CustomerRefused: Error {
    var reply: GatewayReply<GatewayPayment>
  }

  /// The Customer a charge that keeps its card belongs to: `POST /v1/customers` with
  /// `metadata[order_id]` (and `metadata[agreement_id]`), nothing about the buyer, under the
  /// charge's key with `-customer` appended (`customerKey`): one Customer per charge, however
  /// often sent ("To set a card up for future payments, you must attach it to a Customer",
  /// https://docs.stripe.com/payments/save-during-payment; https://docs.stripe.com/api/customers/create).
  /// A 500 Stripe stored under that key means no Customer can come of this charge: nothing was
  /// charged or set up under it either, which Stripe's search confirms.
  func saveCustomer(_ request: GatewayCharge) async -> Result<String, CustomerRefused> {
    var form = [("metadata[order_id]", request.orderId)]
    if let agreement = request.agreementId { form.append(("metadata[agreement_id]", agreement)) }
    switch await post("/v1/customers", form, key: Self.customerKey(request.idempotencyKey)) {
    case .object(let object, _):
      guard case .string(let id)? = object.member("id"), id.hasPrefix("cus_") else {
        return .failure(CustomerRefused(reply: .unanswered(reason: "an answer payservice cannot read")))
      }
      return .success(id)
    case .storedServerError:
      if request.amountMinor == 0 {
        return .failure(
          CustomerRefused(reply: .succeeded(GatewayPayment(id: "", chargeId: nil, status: .notFound, amountCapturedMinor: 0))))
      }
      return .failure(CustomerRefused(reply: await searchForPayment(orderId: request.orderId, savesCard: true)))
    case .reply(let reply): return .failure(CustomerRefused(reply: reply.map()))
    }
  }

  /// The Customer's key for a charge's key.
  static func customerKey(_ chargeKey: String) -> String { chargeKey + "-customer" }

  /// A card kept with nothing charged (a free trial, a pre-order), as Stripe documents setting up
  /// future payments (https://docs.stripe.com/payments/setup-intents;
  /// https://docs.stripe.com/api/setup_intents/create): `POST /v1/setup_intents` with the
  /// `customer`, the `payment_method`, `confirm=true`, `usage=off_session` ("Use off_session if
  /// your customer may or may not be present in your checkout flow"), `payment_method_types[]=card`
  /// and the metadata, under the charge's key. "If you use the SetupIntent with a Customer, it
  /// automatically attaches the resulting payment method to that Customer after successful setup."
  /// The answer is read by `setupReply`; a replayed `processing` SetupIntent is read again
  /// (`GET /v1/setup_intents/{id}`), and a 500 stored under the key is resolved by listing the
  /// Customer's SetupIntents (`searchForSetup`).
  func setUpCard(_ request: GatewayCharge, customer: String, paymentMethod: String) async -> GatewayReply<GatewayPayment> {
    var form: [(String, String)] = [
      ("customer", customer),
      ("payment_method", paymentMethod),
      ("confirm", "true"),
      ("usage", "off_session"),
      ("payment_method_types[]", "card"),
      ("metadata[order_id]", request.orderId),
    ]
    if let agreement = request.agreementId { form.append(("metadata[agreement_id]", agreement)) }
    switch await post("/v1/setup_intents", form, key: request.idempotencyKey) {
    case .object(let object, let replayed):
      let reply = Self.setupReply(object)
      if replayed, case .succeeded(let setup) = reply, setup.status == .processing {
        return await retrieveSetup(setup.id)
      }
      return reply
    case .storedServerError:
      return await searchForSetup(customer: customer, orderId: request.orderId)
    case .reply(.refused(let refusal)) where Self.isOtherForm(refusal):
      return await searchForSetup(customer: customer, orderId: request.orderId)
    case .reply(let reply): return reply.map()
    }
  }

  /// `GET /v1/setup_intents/{id}`: the SetupIntent as it stands now.
  func retrieveSetup(_ id: String) async -> GatewayReply<GatewayPayment> {
    switch await get("/v1/setup_intents/\(Self.pathSegment(id))") {
    case .object(let object, _): return Self.setupReply(object)
    case .storedServerError(let reason): return .unanswered(reason: reason)
    case .reply(let reply): return reply.map()
    }
  }

  /// The order's SetupIntent among the Customer's (`GET /v1/setup_intents?customer=cus_…`, 100 a
  /// page, every page): the one whose `metadata.order_id` is the order's, or `.notFound` when there
  /// is none. SetupIntents have no search API; the Customer is the charge's own, so its list is
  /// short.
  func searchForSetup(customer: String, orderId: String) async -> GatewayReply<GatewayPayment> {
    var found: [JSONValue] = []
    var after: String?
    while true {
      let page: GatewayListPage
      switch await listPage("setup_intents", [("customer", customer)], startingAfter: after, limit: GatewayListKind.pageSize) {
      case .succeeded(let read): page = read
      case .declined(let decline): return .declined(decline)
      case .refused(let refusal): return .refused(refusal)
      case .unanswered(let reason): return .unanswered(reason: reason)
      case .accepted(let reference): return .accepted(reference: reference)
      }
      found += page.objects.filter { $0.member("metadata")?.member("order_id") == .string(orderId) }
      guard page.more, case .string(let last)? = page.objects.last?.member("id"), found.count < GatewayListKind.maxObjects
      else { break }
      after = last
    }
    func status(_ intent: JSONValue) -> GatewayPayment.Status? { Self.setup(intent)?.status }
    let chosen =
      found.first { status($0) == .captured } ?? found.first { status($0) == .processing } ?? found.first
    guard let chosen else {
      return .succeeded(GatewayPayment(id: "", chargeId: nil, status: .notFound, amountCapturedMinor: 0))
    }
    return Self.setupReply(chosen)
  }

  /// A SetupIntent read back as the reply it amounts to: one that returned to
  /// `requires_payment_method` with a `last_setup_error` (a card error while setting up) is that
  /// error's decline, as for PaymentIntents; any other is the setup.
  static func setupReply(_ object: JSONValue) -> GatewayReply<GatewayPayment> {
    guard let setup = setup(object) else { return .unanswered(reason: "an answer payservice cannot read") }
    if setup.status == .incomplete, let error = object.member("last_setup_error"), case .object = error {
      return .declined(decline(error, chargeId: nil, fallback: "The card could not be set up."))
    }
    return .succeeded(setup)
  }

  /// A SetupIntent object as the payment it stands for (https://docs.stripe.com/api/setup_intents/object):
  /// `id` the `seti_…`, no charge, nothing captured; `succeeded` is `.captured`, `processing`
  /// `.processing`, `requires_action` `.requiresAction`, anything else `.incomplete`. `savedCard`
  /// is its `customer` and `payment_method` once it succeeded or is processing. Nil when it is not
  /// a SetupIntent.
  static func setup(_ object: JSONValue) -> GatewayPayment? {
    guard case .string(let id)? = object.member("id"), id.hasPrefix("seti_"), case .string(let status)? = object.member("status")
    else { return nil }
    let mapped: GatewayPayment.Status =
      switch status {
      case "succeeded": .captured
      case "processing": .processing
      case "requires_action": .requiresAction
      default: .incomplete
      }
    let saved = mapped == .captured || mapped == .processing ? savedCard(object) : nil
    return GatewayPayment(id: id, chargeId: nil, status: mapped, amountCapturedMinor: 0, savedCard: saved)
  }

  /// An intent's `customer` and `payment_method` (ids, or expanded objects' ids); nil without both.
  static func savedCard(_ object: JSONValue) -> GatewaySavedCard? {
    func id(_ name: String) -> String? {
      switch object.member(name) {
      case .string(let value)?: return value
      case .object?: if case .string(let value)? = object.member(name)?.member("id") { return value }
      default: break
      }
      return nil
    }
    guard let customer = id("customer"), customer.hasPrefix("cus_"), let method = id("payment_method"),
      method.hasPrefix("pm_")
    else { return nil }
    return GatewaySavedCard(customerId: customer, paymentMethodId: method)
  }

  /// The PaymentMethod's key for a charge's key: one PaymentMethod per charge, however often sent.
  static func paymentMethodKey(_ chargeKey: String) -> String { chargeKey + "-payment-method" }

  /// `GET /v1/payment_intents/{id}` with its latest charge: the payment as it stands now.
  func retrievePayment(_ id: String, savesCard: Bool = false) async -> GatewayReply<GatewayPayment> {
    switch await get("/v1/payment_intents/\(Self.pathSegment(id))?expand%5B%5D=latest_charge") {
    case .object(let object, _): return Self.paymentReply(object, savesCard: savesCard)
    case let other: return other.map(Self.payment)
    }
  }

  /// `GET /v1/payment_intents/search` with `query=metadata['order_id']:'<orderId>'`: the order's
  /// PaymentIntent, or `.notFound` when Stripe holds none. Stripe's search results can lag a new
  /// PaymentIntent by up to a minute: the caller decides how old the charge must be before
  /// `.notFound` is taken as "never charged".
  func searchForPayment(orderId: String, savesCard: Bool = false) async -> GatewayReply<GatewayPayment> {
    let query = "metadata['order_id']:'\(orderId)'"
    let path =
      "/v1/payment_intents/search?" + RemoteText.formEncoded([("query", query), ("expand[]", "data.latest_charge")])
    switch await get(path) {
    case .object(let object, _):
      guard case .array(let found)? = object.member("data") else { return .unanswered(reason: "an answer payservice cannot read") }
      let intents = found.filter { $0.member("metadata")?.member("order_id") == .string(orderId) }
      // One PaymentIntent per order's key; should there be more, the one that took or holds money.
      func status(_ intent: JSONValue) -> GatewayPayment.Status? { Self.payment(intent)?.status }
      let chosen =
        intents.first { status($0) == .captured || status($0) == .authorized }
        ?? intents.first { status($0) == .processing } ?? intents.first
      guard let chosen else {
        return .succeeded(GatewayPayment(id: "", chargeId: nil, status: .notFound, amountCapturedMinor: 0))
      }
      return Self.paymentReply(chosen, savesCard: savesCard)
    case .storedServerError(let reason): return .unanswered(reason: reason)
    case .reply(let reply): return reply.map()
    }
  }

  /// Work looked up, never sent again: a charge by Stripe's search for its order (a zero-amount
  /// charge that saves a card is a SetupIntent, which the search does not find: not looked up); a
  /// capture or cancel by the PaymentIntent as it stands; a refund among the PaymentIntent's
  /// refunds, by its `metadata.refund_id`.
  public func lookUp(_ work: GatewayWork) async -> GatewayFound? {
    switch work {
    case .charge(let request):
      if request.saveCard && request.amountMinor == 0 { return nil }
      return .payment(await searchForPayment(orderId: request.orderId, savesCard: request.saveCard))
    case .capture(let request):
      return .payment(await modification(of: request.paymentId, done: .captured, "capture", "captured"))
    case .cancel(let request):
      return .payment(await modification(of: request.paymentId, done: .canceled, "cancel", "canceled"))
    case .refund(let request):
      return .refund(await findRefund(request))
    }
  }

  /// A capture or cancel of the PaymentIntent `id` as the PaymentIntent shows it now: done when it
  /// is `done`; never made while it is still authorized; undecided while Stripe processes it; and a
  /// final failure in any other state.
  func modification(of id: String, done: GatewayPayment.Status, _ noun: String, _ participle: String) async
    -> GatewayReply<GatewayPayment>
  {
    await retrievePayment(id).found { payment in
      switch payment.status {
      case done: return .succeeded(payment)
      case .authorized:
        return .refused(GatewayFound.notDone("Stripe holds \(payment.id) authorized: the \(noun) was never made"))
      case .processing: return .unanswered(reason: "Stripe is still processing \(payment.id)")
      default:
        return .declined(
          GatewayDecline(
            code: "payment_intent_unexpected_state", declineCode: nil, chargeId: nil,
            message: "Stripe shows \(payment.id) \(payment.status.rawValue): it cannot be \(participle)"))
      }
    }
  }

  /// The refund payservice asked for as `request`, among its PaymentIntent's refunds (Stripe's
  /// largest page; a payment is refunded in far fewer parts): final "not done" when none is its.
  func findRefund(_ request: GatewayRefundRequest) async -> GatewayReply<GatewayRefund> {
    await listPage("refunds", [("payment_intent", request.paymentId)], startingAfter: nil, limit: GatewayListKind.pageSize)
      .found { page in
        if let ours = page.objects.first(where: { $0.member("metadata")?.member("refund_id") == .string(request.refundId) }) {
          guard let refund = Self.refund(ours) else { return .unanswered(reason: "a refund payservice cannot read") }
          return .succeeded(refund)
        }
        if page.more { return .unanswered(reason: "more refunds of \(request.paymentId) than one page holds") }
        return .refused(
          GatewayFound.notDone("Stripe holds no refund \(request.refundId) of \(request.paymentId): it was never made"))
      }
  }

  /// `GET /v1/{payment_intents|refunds|disputes}` with `created[gte]`.
  public func list(_ kind: GatewayListKind, createdSince: Int64, startingAfter: String?, limit: Int) async
    -> GatewayReply<GatewayListPage>
  {
    await listPage(kind.rawValue, [("created[gte]", String(createdSince))], startingAfter: startingAfter, limit: limit)
  }

  /// One page of `GET /v1/{resource}` with `filters`, `limit` (1 to 100) and `starting_after`, as
  /// Stripe documents pagination.
  func listPage(_ resource: String, _ filters: [(String, String)], startingAfter: String?, limit: Int) async
    -> GatewayReply<GatewayListPage>
  {
    var query = filters + [("limit", String(min(max(limit, 1), GatewayListKind.pageSize)))]
    if let startingAfter { query.append(("starting_after", startingAfter)) }
    let page: JSONValue
    switch await get("/v1/\(resource)?" + RemoteText.formEncoded(query)) {
    case .object(let object, _): page = object
    case .storedServerError(let reason): return .unanswered(reason: reason)
    case .reply(let reply): return reply.map()
    }
    guard case .array(let data)? = page.member("data"), case .bool(let more)? = page.member("has_more") else {
      return .unanswered(reason: "a list payservice cannot read")
    }
    if more {
      guard case .string? = data.last?.member("id") else {
        return .unanswered(reason: "a list page with more to come and no last id")
      }
    }
    return .succeeded(GatewayListPage(objects: data, more: more))
  }

  public func capture(_ request: GatewayCaptureRequest) async -> GatewayReply<GatewayPayment> {
    await post(
      "/v1/payment_intents/\(Self.pathSegment(request.paymentId))/capture",
      [("amount_to_capture", String(request.amountMinor))], key: request.idempotencyKey
    ).map(Self.payment)
  }

  /// Cancels the PaymentIntent. One Stripe canceled already (an authorization it let lapse after
  /// 7 days: `payment_intent_unexpected_state`) is read back and answered as canceled.
  public func cancel(_ request: GatewayCancelRequest) async -> GatewayReply<GatewayPayment> {
    let reply = await post(
      "/v1/payment_intents/\(Self.pathSegment(request.paymentId))/cancel", [], key: request.idempotencyKey
    ).map(Self.payment)
    if case .refused(let refusal) = reply, refusal.code == "payment_intent_unexpected_state" {
      if case .succeeded(let payment) = await retrievePayment(request.paymentId), payment.status == .canceled {
        return .succeeded(payment)
      }
    }
    return reply
  }

  /// A refund, with every status Stripe's Refund object allows read as one: `succeeded`;
  /// `pending` and null (accepted, not settled yet); `requires_action`; `failed`; `canceled`.
  public func refund(_ request: GatewayRefundRequest) async -> GatewayReply<GatewayRefund> {
    await post(
      "/v1/refunds",
      [
        ("payment_intent", request.paymentId), ("amount", String(request.amountMinor)),
        ("metadata[order_id]", request.orderId), ("metadata[refund_id]", request.refundId),
      ], key: request.idempotencyKey
    ).map(Self.refund)
  }

  /// A Refund object as the refund it is; nil when it is not one.
  static func refund(_ object: JSONValue) -> GatewayRefund? {
    guard case .string(let id)? = object.member("id"), id.hasPrefix("re_") || id.hasPrefix("pyr_") else { return nil }
    let status: GatewayRefund.Status
    switch object.member("status") {
    case .string("succeeded")?: status = .succeeded
    case .string("pending")?, .null?, nil: status = .pending
    case .string("requires_action")?: status = .requiresAction
    case .string("failed")?: status = .failed
    case .string("canceled")?: status = .canceled
    default: return nil
    }
    var reason: String?
    if case .string(let text)? = object.member("failure_reason") { reason = text }
    return GatewayRefund(id: id, status: status, failureReason: reason)
  }

  /// The card a token (`tok_…`: `GET /v1/tokens/{id}`) or a PaymentMethod (`pm_…`:
  /// `GET /v1/payment_methods/{id}`) was made from: its `card.brand` and `card.funding`.
  public func card(of paymentData: String) async -> GatewayReply<GatewayCard> {
    let path = paymentData.hasPrefix("pm_") ? "/v1/payment_methods/" : "/v1/tokens/"
    return await get(path + Self.pathSegment(paymentData)).map(Self.card)
  }

  /// A Stripe token for an Apple Pay token, made the way Stripe's iOS and Android SDKs make one
  /// (`STPAPIClient.createToken(with: PKPayment)`): `POST /v1/tokens` with `pk_token` (the
  /// payment data's JSON text), `pk_token_instrument_name`, `pk_token_payment_network` and
  /// `pk_token_transaction_id`, under the payment's idempotency key. Stripe decrypts the token with
  /// the merchant's Payment Processing Certificate, which it made. Its answer, a token object
  /// (`tok_…`, `type: "card"`, `card.tokenization_method: "apple_pay"`), carries the card's
  /// `brand` and `funding`: no second call reads them. Stripe's messages are read with the token's
  /// encrypted text taken out (`withoutToken`).
  public func tokenize(applePayToken token: ApplePayTokenization) async -> GatewayReply<GatewayToken> {
    var form: [(String, String)] = [("pk_token", token.paymentData)]
    if let name = token.displayName, !name.isEmpty { form.append(("pk_token_instrument_name", name)) }
    form.append(("pk_token_payment_network", token.network))
    form.append(("pk_token_transaction_id", token.transactionIdentifier))
    let reply = await post("/v1/tokens", form, key: token.idempotencyKey).map { object -> GatewayToken? in
      guard case .string(let id)? = object.member("id"), id.hasPrefix("tok_"), let card = Self.card(object) else { return nil }
      return GatewayToken(id: id, card: card)
    }
    switch reply {
    case .succeeded, .unanswered, .accepted: return reply
    case .declined(var decline):
      decline.message = Self.withoutToken(decline.message, token.paymentData)
      return .declined(decline)
    case .refused(var refusal):
      refusal.message = Self.withoutToken(refusal.message, token.paymentData)
      return .refused(refusal)
    }
  }

  /// `message` with the Apple Pay token's text, and each of its strings of 16 characters or more
  /// (`data`, `signature`, the header's keys and hashes), replaced by "[the Apple Pay token]": an
  /// error that quotes what it could not read passes on no encrypted card data.
  static func withoutToken(_ message: String, _ paymentData: String) -> String {
    var parts: [String] = [paymentData]
    func collect(_ value: JSONValue) {
      switch value {
      case .string(let text) where text.count >= 16: parts.append(text)
      case .array(let values): values.forEach(collect)
      case .object(let object): object.members.forEach { collect($0.value) }
      default: break
      }
    }
    if let parsed = try? JSONParser.parse(paymentData) { collect(parsed) }
    var scrubbed = message
    for part in parts.sorted(by: { $0.count > $1.count }) where scrubbed.contains(part) {
      scrubbed = scrubbed.replacingOccurrences(of: part, with: "[the Apple Pay token]")
    }
    return scrubbed
  }

  /// A token's or PaymentMethod's `card` as the card it is; nil when the object has none.
  static func card(_ object: JSONValue) -> GatewayCard? {
    guard case .string(let brand)? = object.member("card")?.member("brand") else { return nil }
    var funding: CardType?
    if case .string(let text)? = object.member("card")?.member("funding") { funding = CardType(rawValue: text) }
    return GatewayCard(network: network(ofBrand: brand), type: funding, brand: brand)
  }

  /// Stripe's brand as Apple Pay's network (lower-cased): tokens spell brands for people ("Visa",
  /// "American Express", "MasterCard"), PaymentMethods as codes ("visa", "amex", "mastercard").
  /// Diners Club, Link and "unknown" have no Apple Pay network: nil.
  static func network(ofBrand brand: String) -> String? {
    switch brand.lowercased() {
    case "visa": "visa"
    case "mastercard": "mastercard"
    case "amex", "american express": "amex"
    case "discover": "discover"
    case "jcb": "jcb"
    case "unionpay": "chinaunionpay"
    case "eftpos_au", "eftpos australia": "eftpos"
    case "girocard": "girocard"
    case "cartes_bancaires": "cartesbancaires"
    default: nil
    }
  }

  /// A PaymentIntent read back (created, retrieved or found) as the reply it amounts to: one that
  /// returned to `requires_payment_method` with a `last_payment_error` (a payment that failed
  /// while processing) is that error's decline; any other is the payment. With `savesCard` (a
  /// charge sent with `saveCard`), a payment that succeeded, is held or is processing names the
  /// card kept: the PaymentIntent's `customer` and `payment_method`.
  static func paymentReply(_ object: JSONValue, savesCard: Bool = false) -> GatewayReply<GatewayPayment> {
    guard var payment = payment(object) else { return .unanswered(reason: "an answer payservice cannot read") }
    if payment.status == .incomplete, let error = object.member("last_payment_error"), case .object = error {
      return .declined(decline(error, chargeId: payment.chargeId, fallback: "The payment failed."))
    }
    if savesCard, [.captured, .authorized, .processing].contains(payment.status) {
      payment.savedCard = savedCard(object)
    }
    return .succeeded(payment)
  }

  /// A `last_payment_error` or `last_setup_error` as the decline it is.
  static func decline(_ error: JSONValue, chargeId: String?, fallback: String) -> GatewayDecline {
    func text(_ name: String) -> String? {
      if case .string(let value)? = error.member(name) { return value }
      return nil
    }
    let code = text("code") ?? "card_declined"
    return GatewayDecline(
      code: code, declineCode: text("decline_code") ?? (code == "card_declined" ? nil : code),
      chargeId: text("charge") ?? chargeId, message: text("message") ?? fallback)
  }

  /// How long Stripe keeps an uncaptured card authorization before it cancels the PaymentIntent,
  /// when the charge does not say (`capture_before`).
  static let authorizationLifetime: Int64 = 7 * 86_400

  /// A PaymentIntent object as the payment it is; nil when it is not one.
  static func payment(_ object: JSONValue) -> GatewayPayment? {
    guard case .string(let id)? = object.member("id"), id.hasPrefix("pi_"), case .string(let status)? = object.member("status")
    else { return nil }
    var chargeId: String?
    switch object.member("latest_charge") {
    case .string(let charge)?: chargeId = charge
    case .object?: if case .string(let charge)? = object.member("latest_charge")?.member("id") { chargeId = charge }
    default: break
    }
    func integer(_ value: JSONValue?) -> Int64? {
      if case .number(let text)? = value { return Int64(text) }
      return nil
    }
    let received = integer(object.member("amount_received")) ?? 0
    let mapped: GatewayPayment.Status =
      switch status {
      case "succeeded": .captured
      case "requires_capture": .authorized
      case "canceled": .canceled
      case "processing": .processing
      case "requires_action": .requiresAction
      default: .incomplete
      }
    var captureBefore: Int64?
    if mapped == .authorized {
      captureBefore =
        integer(object.member("latest_charge")?.member("payment_method_details")?.member("card")?.member("capture_before"))
        ?? integer(object.member("created")).map { $0 + authorizationLifetime }
    }
    return GatewayPayment(
      id: id, chargeId: chargeId, status: mapped, amountCapturedMinor: received, captureBefore: captureBefore)
  }

  // MARK: HTTP

  /// What one POST came to, before it is read as a particular object.
  enum Answer {
    /// An object, and whether Stripe replayed it from the idempotency key (`Idempotent-Replayed`).
    case object(JSONValue, replayed: Bool)
    /// A 5xx Stripe stored under the idempotency key and replays (`Idempotent-Replayed: true`):
    /// sending the same request again can never get another answer.
    case storedServerError(String)
    case reply(GatewayReply<Never>)

    func map<Value: Sendable>(_ read: (JSONValue) -> Value?) -> GatewayReply<Value> {
      switch self {
      case .object(let object, _):
        guard let value = read(object) else { return .unanswered(reason: "an answer payservice cannot read") }
        return .succeeded(value)
      case .storedServerError(let reason): return .unanswered(reason: reason)
      case .reply(let reply): return reply.map()
      }
    }
  }

  /// POSTs the form under the idempotency key, retrying what may be retried (same key, same body).
  func post(_ path: String, _ form: [(String, String)], key: String) async -> Answer {
    var request = self.request(.POST, path)
    request.headers.append(("Content-Type", "application/x-www-form-urlencoded"))
    request.body = Array(RemoteText.formEncoded(form).utf8)
    request.idempotencyKey = key
    return await perform(request)
  }

  /// GETs an object (a read: no key, no body), retrying what may be retried.
  func get(_ path: String) async -> Answer {
    await perform(request(.GET, path))
  }

  private func request(_ method: RemoteRequest.Method, _ path: String) -> RemoteRequest {
    RemoteRequest(
      method: method, url: settings.apiBase + path,
      headers: [("Authorization", authorization), ("Stripe-Version", Self.apiVersion)])
  }

  /// Sends `request` until it is answered or may not be retried.
  private func perform(_ request: RemoteRequest) async -> Answer {
    switch await retry.run({ read(await transport.send(request)) }) {
    case .done(let answer): return answer
    case .exhausted(let reason, let attempts): return .reply(.unanswered(reason: reason + RetryPolicy.afterAttempts(attempts)))
    }
  }

  /// One attempt's answer, or why it is worth sending again with the same key.
  private func read(_ sent: Result<RemoteResponse, RemoteFailure>) -> RemoteAttempt<Answer, String> {
    let response: RemoteResponse
    switch sent {
    case .failure(let failure): return .retry(failure.description, after: nil)
    case .success(let answered): response = answered
    }
    let status = response.status
    if (300..<400).contains(status) {
      // Not Stripe's answer (its API never redirects): a proxy or a wrong apiBase. Nothing reached
      // Stripe, so the same call may succeed once the origin is fixed. Its Location is not quoted.
      return .done(
        .reply(
          .refused(
            GatewayRefusal(
              type: "api_error", code: nil,
              message: "HTTP \(status) from Stripe, a redirect, which payservice never follows: gateway.apiBase must be the API origin itself.",
              final: false))))
    }
    let shouldRetry = response.header("Stripe-Should-Retry")
    let retryAfter = response.retryAfter()
    let json = (try? JSONParser.parse(String(decoding: response.body, as: UTF8.self))).map(scrubber.scrubbed)
    let replayed = response.header("Idempotent-Replayed") == "true"
    if (200..<300).contains(status) {
      guard let json, case .object = json else { return .done(.reply(.unanswered(reason: "an answer payservice cannot read"))) }
      return .done(.object(json, replayed: replayed))
    }
    let error = json?.member("error")
    func text(_ name: String) -> String? {
      if case .string(let value)? = error?.member(name) { return value }
      return nil
    }
    let type = text("type") ?? "api_error"
    let message = text("message") ?? "HTTP \(status)"
    if status >= 500 && replayed {
      return .done(.storedServerError("HTTP \(status) from Stripe, stored under the idempotency key: \(message)"))
    }
    if status == 429 || status == 409 || status >= 500 {
      if shouldRetry == "false" && status >= 500 {
        return .done(.reply(.unanswered(reason: "HTTP \(status) from Stripe: \(message)")))
      }
      return .retry("HTTP \(status) from Stripe", after: retryAfter)
    }
    if shouldRetry == "true" { return .retry("HTTP \(status) from Stripe", after: retryAfter) }
    switch (status, type) {
    case (402, _), (_, "card_error"):
      let code = text("code") ?? "card_declined"
      return .done(
        .reply(
          .declined(
            GatewayDecline(
              code: code, declineCode: text("decline_code") ?? (code == "card_declined" ? nil : code),
              chargeId: text("charge"), message: message))))
    case (401, _):
      return .done(.reply(.refused(GatewayRefusal(type: "authentication_error", code: text("code"), message: message, final: false))))
    case (403, _):
      return .done(.reply(.refused(GatewayRefusal(type: "permission_error", code: text("code"), message: message, final: false))))
    case (_, "idempotency_error"):
      return .done(.reply(.refused(GatewayRefusal(type: type, code: text("code"), message: message, final: false))))
    default:
      // An invalid request: Stripe keeps this answer under the key, so it is final.
      return .done(.reply(.refused(GatewayRefusal(type: type, code: text("code"), message: message, final: true))))
    }
  }

  /// An id as one path segment (Stripe's ids are letters, digits and _; anything else is encoded).
  static func pathSegment(_ id: String) -> String {
    RemoteText.percentEncoded(id)
  }
}

extension GatewayReply where Value == Never {
  /// A reply with no value (never `.succeeded`) as a reply of any type.
  func map<Other: Sendable>() -> GatewayReply<Other> {
    switch self {
    case .succeeded: preconditionFailure("never")
    case .declined(let decline): return .declined(decline)
    case .refused(let refusal): return .refused(refusal)
    case .unanswered(let reason): return .unanswered(reason: reason)
    case .accepted(let reference): return .accepted(reference: reference)
    }
  }
}

extension JSONValue {
  /// The member `key` of an object; nil for anything else.
  fileprivate func member(_ key: String) -> JSONValue? {
    guard case .object(let object) = self else { return nil }
    return object[key]
  }
}
