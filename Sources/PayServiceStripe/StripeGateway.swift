import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import PayServiceCore

/// Stripe's API as payservice's remote gateway: Apple Pay tokens made into Stripe tokens,
/// PaymentIntents created and confirmed for orders, captured, canceled and refunded, over HTTPS (AsyncHTTPClient, connections kept and reused, the
/// system's trust roots unless `gateway.trustRoots` names others).
///
/// Every call is a form-encoded POST with the secret key as a bearer token, `Stripe-Version`
/// pinned to `apiVersion`, and an `Idempotency-Key`: Stripe keeps the first answer under a key for
/// at least 24 hours and answers the same request with it again (`Idempotent-Replayed: true`), so
/// a call retried after a lost answer never charges or refunds twice. 429, 409 (the same key still
/// in flight), 5xx answers Stripe does not mark `Stripe-Should-Retry: false`, and connection
/// failures are retried with the same key, at most `maxRetries` times, after `Retry-After` or a
/// short backoff.
///
/// The key never leaves this type: not in an error, a message or a log line. Every string of
/// Stripe's answers is scrubbed of the key and of anything shaped like a key before it is read
/// (`KeyScrubber`). Redirects are never followed: the form (and the key in its header) goes to
/// `apiBase` and nowhere else, and a 3xx answer is a refusal.
public final class StripeGateway: RemoteGateway {
  /// The API version every request pins: its objects and errors are what this type reads.
  public static let apiVersion = "2024-06-20"

  public let name = "Stripe"
  private let client: HTTPClient
  private let settings: Gateway.Stripe
  private let authorization: String
  private let scrubber: KeyScrubber

  /// - Parameter secretKey: from the environment (`Gateway.Stripe.secretKey(environment:)`).
  public init(settings: Gateway.Stripe, secretKey: String) {
    self.settings = settings
    self.authorization = "Bearer " + secretKey
    self.scrubber = KeyScrubber(key: secretKey)
    var tls = TLSConfiguration.makeClientConfiguration()
    if let roots = settings.trustRoots { tls.trustRoots = .file(roots) }
    var configuration = HTTPClient.Configuration(
      tlsConfiguration: tls,
      timeout: .init(connect: Self.amount(settings.connectTimeoutSeconds), read: Self.amount(settings.requestTimeoutSeconds)))
    configuration.connectionPool = .init(
      idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: settings.maxConcurrentCalls)
    // A redirect would send the form, and the key, elsewhere (https to http included).
    configuration.redirectConfiguration = .disallow
    client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
  }

  deinit {
    // A client must be shut down before it goes; one shut down already just says so.
    try? client.syncShutdown()
  }

  static func amount(_ seconds: Double) -> TimeAmount { .milliseconds(Int64(seconds * 1000)) }

  public func shutdown() async {
    try? await client.shutdown()
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
  public func charge(_ request: GatewayCharge) async -> GatewayReply<GatewayPayment> {
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
        // The PaymentMethod was never made, so no PaymentIntent can have been: Stripe's search says which.
        return await searchForPayment(orderId: request.orderId)
      case .reply(let reply): return reply.map()
      }
    }
    let form: [(String, String)] = [
      ("amount", String(request.amountMinor)),
      ("currency", request.currencyCode.lowercased()),
      ("confirm", "true"),
      ("capture_method", request.captureManually ? "manual" : "automatic"),
      ("payment_method_types[]", "card"),
      ("metadata[order_id]", request.orderId),
      ("payment_method", paymentMethod),
      ("error_on_requires_action", "true"),
      ("expand[]", "latest_charge"),
    ]
    switch await post("/v1/payment_intents", form, key: request.idempotencyKey) {
    case .object(let object, let replayed):
      let reply = Self.paymentReply(object)
      if replayed, case .succeeded(let payment) = reply, payment.status == .processing {
        return await retrievePayment(payment.id)
      }
      return reply
    case .storedServerError:
      return await searchForPayment(orderId: request.orderId)
    case .reply(.refused(let refusal)) where refusal.type == "idempotency_error" && refusal.final == false
      && refusal.code == nil && refusal.message.contains("same parameters"):
      // The key holds another form (a charge left pending by an earlier release): what it did is
      // found by the order's metadata instead.
      return await searchForPayment(orderId: request.orderId)
    case .reply(let reply): return reply.map()
    }
  }

  /// The PaymentMethod's key for a charge's key: one PaymentMethod per charge, however often sent.
  static func paymentMethodKey(_ chargeKey: String) -> String { chargeKey + "-payment-method" }

  /// `GET /v1/payment_intents/{id}` with its latest charge: the payment as it stands now.
  func retrievePayment(_ id: String) async -> GatewayReply<GatewayPayment> {
    switch await get("/v1/payment_intents/\(Self.pathSegment(id))?expand%5B%5D=latest_charge") {
    case .object(let object, _): return Self.paymentReply(object)
    case let other: return other.map(Self.payment)
    }
  }

  /// `GET /v1/payment_intents/search` with `query=metadata['order_id']:'<orderId>'`: the order's
  /// PaymentIntent, or `.notFound` when Stripe holds none. Stripe's search results can lag a new
  /// PaymentIntent by up to a minute: the caller decides how old the charge must be before
  /// `.notFound` is taken as "never charged".
  func searchForPayment(orderId: String) async -> GatewayReply<GatewayPayment> {
    let query = "metadata['order_id']:'\(orderId)'"
    let path =
      "/v1/payment_intents/search?" + Self.formEncoded([("query", query), ("expand[]", "data.latest_charge")])
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
      return Self.paymentReply(chosen)
    case .storedServerError(let reason): return .unanswered(reason: reason)
    case .reply(let reply): return reply.map()
    }
  }

  /// `GET /v1/{payment_intents|refunds|disputes}` with `created[gte]`, 100 a page, following
  /// `has_more` with `starting_after` (the last id of each page), as Stripe documents pagination.
  public func list(_ kind: GatewayListKind, createdSince: Int64) async -> GatewayReply<[JSONValue]> {
    var objects: [JSONValue] = []
    var after: String?
    while true {
      var query = [("created[gte]", String(createdSince)), ("limit", "100")]
      if let after { query.append(("starting_after", after)) }
      let page: JSONValue
      switch await get("/v1/\(kind.rawValue)?" + Self.formEncoded(query)) {
      case .object(let object, _): page = object
      case .storedServerError(let reason): return .unanswered(reason: reason)
      case .reply(let reply): return reply.map()
      }
      guard case .array(let data)? = page.member("data"), case .bool(let more)? = page.member("has_more") else {
        return .unanswered(reason: "a list payservice cannot read")
      }
      objects += data
      guard more else { return .succeeded(objects) }
      guard case .string(let last)? = data.last?.member("id") else {
        return .unanswered(reason: "a list page with more to come and no last id")
      }
      guard objects.count < GatewayListKind.maxObjects else {
        return .refused(
          GatewayRefusal(
            type: "invalid_request_error", code: nil,
            message: "Stripe lists more than \(GatewayListKind.maxObjects) \(kind.rawValue) since then: reconcile a shorter span (a later since).",
            final: true))
      }
      after = last
    }
  }

  public func capture(paymentId: String, amountMinor: Int64, idempotencyKey: String) async -> GatewayReply<GatewayPayment> {
    await post(
      "/v1/payment_intents/\(Self.pathSegment(paymentId))/capture", [("amount_to_capture", String(amountMinor))],
      key: idempotencyKey
    ).map(Self.payment)
  }

  /// Cancels the PaymentIntent. One Stripe canceled already (an authorization it let lapse after
  /// 7 days: `payment_intent_unexpected_state`) is read back and answered as canceled.
  public func cancel(paymentId: String, idempotencyKey: String) async -> GatewayReply<GatewayPayment> {
    let reply = await post("/v1/payment_intents/\(Self.pathSegment(paymentId))/cancel", [], key: idempotencyKey).map(Self.payment)
    if case .refused(let refusal) = reply, refusal.code == "payment_intent_unexpected_state" {
      if case .succeeded(let payment) = await retrievePayment(paymentId), payment.status == .canceled {
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
    case .succeeded, .unanswered: return reply
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
  /// while processing) is that error's decline; any other is the payment.
  static func paymentReply(_ object: JSONValue) -> GatewayReply<GatewayPayment> {
    guard let payment = payment(object) else { return .unanswered(reason: "an answer payservice cannot read") }
    if payment.status == .incomplete, let error = object.member("last_payment_error"), case .object = error {
      func text(_ name: String) -> String? {
        if case .string(let value)? = error.member(name) { return value }
        return nil
      }
      let code = text("code") ?? "card_declined"
      return .declined(
        GatewayDecline(
          code: code, declineCode: text("decline_code") ?? (code == "card_declined" ? nil : code),
          chargeId: text("charge") ?? payment.chargeId, message: text("message") ?? "The payment failed."))
    }
    return .succeeded(payment)
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
    request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
    request.headers.add(name: "Idempotency-Key", value: key)
    return await perform(request, body: Self.formEncoded(form))
  }

  /// GETs an object (a read: no key, no body), retrying what may be retried.
  func get(_ path: String) async -> Answer {
    await perform(request(.GET, path), body: nil)
  }

  private func request(_ method: HTTPMethod, _ path: String) -> HTTPClientRequest {
    var request = HTTPClientRequest(url: settings.apiBase + path)
    request.method = method
    request.headers.add(name: "Authorization", value: authorization)
    request.headers.add(name: "Stripe-Version", value: Self.apiVersion)
    request.headers.add(name: "User-Agent", value: "payservice/\(PayServiceVersion.current)")
    return request
  }

  /// Sends `request` (with `body`, when given) until it is answered or may not be retried.
  private func perform(_ request: HTTPClientRequest, body: String?) async -> Answer {
    var request = request
    var attempt = 0
    while true {
      if let body { request.body = .bytes(NIOCore.ByteBuffer(string: body)) }
      let outcome = await send(request)
      guard case .retry(let reason, let after) = outcome else {
        if case .answer(let answer) = outcome { return answer }
        preconditionFailure("never")
      }
      guard attempt < settings.maxRetries else {
        return .reply(.unanswered(reason: attempt == 0 ? reason : "\(reason), after \(attempt + 1) attempts"))
      }
      attempt += 1
      let backoff = after ?? min(0.25 * Double(1 << min(attempt - 1, 5)), 8)
      try? await Task.sleep(for: .milliseconds(Int64(min(backoff, settings.requestTimeoutSeconds) * 1000)))
    }
  }

  enum Sent {
    case answer(Answer)
    /// Worth sending again with the same key: why, and after how many seconds Stripe asked for.
    case retry(String, after: Double?)
  }

  private func send(_ request: HTTPClientRequest) async -> Sent {
    let response: HTTPClientResponse
    let bytes: NIOCore.ByteBuffer
    do {
      response = try await client.execute(request, timeout: Self.amount(settings.requestTimeoutSeconds))
      bytes = try await response.body.collect(upTo: 1 << 22)
    } catch {
      return .retry(Self.describe(error), after: nil)
    }
    let status = Int(response.status.code)
    if (300..<400).contains(status) {
      // Not Stripe's answer (its API never redirects): a proxy or a wrong apiBase. Nothing reached
      // Stripe, so the same call may succeed once the origin is fixed. Its Location is not quoted.
      return .answer(
        .reply(
          .refused(
            GatewayRefusal(
              type: "api_error", code: nil,
              message: "HTTP \(status) from Stripe, a redirect, which payservice never follows: gateway.apiBase must be the API origin itself.",
              final: false))))
    }
    let shouldRetry = response.headers.first(name: "Stripe-Should-Retry")
    let retryAfter = response.headers.first(name: "Retry-After").flatMap(Double.init)
    let json = (try? JSONParser.parse(String(buffer: bytes))).map(scrubber.scrubbed)
    let replayed = response.headers.first(name: "Idempotent-Replayed") == "true"
    if (200..<300).contains(status) {
      guard let json, case .object = json else { return .answer(.reply(.unanswered(reason: "an answer payservice cannot read"))) }
      return .answer(.object(json, replayed: replayed))
    }
    let error = json?.member("error")
    func text(_ name: String) -> String? {
      if case .string(let value)? = error?.member(name) { return value }
      return nil
    }
    let type = text("type") ?? "api_error"
    let message = text("message") ?? "HTTP \(status)"
    if status >= 500 && replayed {
      return .answer(.storedServerError("HTTP \(status) from Stripe, stored under the idempotency key: \(message)"))
    }
    if status == 429 || status == 409 || status >= 500 {
      if shouldRetry == "false" && status >= 500 {
        return .answer(.reply(.unanswered(reason: "HTTP \(status) from Stripe: \(message)")))
      }
      return .retry("HTTP \(status) from Stripe", after: retryAfter)
    }
    if shouldRetry == "true" { return .retry("HTTP \(status) from Stripe", after: retryAfter) }
    switch (status, type) {
    case (402, _), (_, "card_error"):
      let code = text("code") ?? "card_declined"
      return .answer(
        .reply(
          .declined(
            GatewayDecline(
              code: code, declineCode: text("decline_code") ?? (code == "card_declined" ? nil : code),
              chargeId: text("charge"), message: message))))
    case (401, _):
      return .answer(.reply(.refused(GatewayRefusal(type: "authentication_error", code: text("code"), message: message, final: false))))
    case (403, _):
      return .answer(.reply(.refused(GatewayRefusal(type: "permission_error", code: text("code"), message: message, final: false))))
    case (_, "idempotency_error"):
      return .answer(.reply(.refused(GatewayRefusal(type: type, code: text("code"), message: message, final: false))))
    default:
      // An invalid request: Stripe keeps this answer under the key, so it is final.
      return .answer(.reply(.refused(GatewayRefusal(type: type, code: text("code"), message: message, final: true))))
    }
  }

  /// A transport failure in words: what happened, never the request (which holds the key).
  static func describe(_ error: any Error) -> String {
    if let error = error as? HTTPClientError {
      switch error {
      case .deadlineExceeded, .readTimeout: return "no answer within the request timeout"
      case .connectTimeout: return "cannot connect within the connect timeout"
      case .remoteConnectionClosed: return "the connection was closed before the answer"
      default: break
      }
    }
    if error is NIOSSLError || error is BoringSSLError { return "TLS failed: \(String(describing: type(of: error)))" }
    if error is ChannelError || error is IOError { return "the connection failed" }
    return "the request failed (\(String(describing: type(of: error))))"
  }

  /// `application/x-www-form-urlencoded`: unreserved characters kept, everything else %XX.
  static func formEncoded(_ form: [(String, String)]) -> String {
    func encode(_ text: String) -> String {
      var out = ""
      for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
          UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
          UInt8(ascii: "~"):
          out.unicodeScalars.append(Unicode.Scalar(byte))
        default:
          let hex = Array("0123456789ABCDEF".utf8)
          out += "%" + String(UnicodeScalar(hex[Int(byte >> 4)])) + String(UnicodeScalar(hex[Int(byte & 15)]))
        }
      }
      return out
    }
    return form.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
  }

  /// An id as one path segment (Stripe's ids are letters, digits and _; anything else is encoded).
  static func pathSegment(_ id: String) -> String {
    String(formEncoded([(id, "")]).dropLast())
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
