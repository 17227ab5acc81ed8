import Foundation
import PayServiceCore
import PayServiceRemote

/// Adyen's Checkout API (v71) as payservice's remote gateway, over HTTPS (`HTTPRemoteTransport`).
///
/// Every call is a JSON POST with the API key in `X-API-Key` and an `Idempotency-Key` ("API
/// idempotency", https://docs.adyen.com/development-resources/api-idempotency): Adyen keeps the
/// first answer under a key and answers the same request with it again, so a call sent again after
/// a lost answer never pays, captures or refunds twice. 429 and 5xx answers and connection failures
/// are retried with the same key, at most `maxRetries` times, after `Retry-After` or a short
/// backoff (`RetryPolicy`).
///
/// What differs from Stripe, and how it maps onto `RemoteGateway`:
/// - Adyen decrypts the Apple Pay token itself: `tokenize` makes no call; the token's payment data
///   goes with the payment as `paymentMethod.applePayToken` (base64 of its JSON text).
/// - A payment answers `resultCode` at once: `Authorised` (captured, or held with manual capture),
///   `Refused` (a decline in the shopper's words), `Received`/`Pending` (processing: a notification
///   settles it), `Error`, `Cancelled`, or an action payservice's server checkout cannot take.
/// - Captures and cancels answer `received`: `.accepted`, settled by their notification (CAPTURE,
///   CAPTURE_FAILED, CANCELLATION). A refund answers `received` too, which is a pending refund
///   (`GatewayRefund.Status.pending`), settled by REFUND or REFUND_FAILED.
/// - No API lists payments: `list` is refused (reconciliation takes Adyen's notifications).
///
/// Every answer is checked against what was sent (amount, currency, reference): an answer that
/// differs is never taken as paid; it leaves the call pending, and says which.
///
/// The API key never leaves this type: not in an error, a message or a log line; Adyen's messages
/// are read with the key and the Apple Pay token's text taken out. Redirects are never followed.
public final class AdyenGateway: RemoteGateway {
  /// The Checkout API version every request names in its path.
  public static let apiVersion = "v71"
  /// What `tokenize` puts before the Apple Pay token's base64 text in the payment data it returns.
  public static let applePayPrefix = "adyen-applepay:"
  /// The largest Apple Pay token's JSON text taken (Apple's are 1 to 3 KiB).
  public static let maxApplePayTokenBytes = 16 * 1024
  /// How long Adyen holds an authorization before it lapses, for `captureBefore`: card schemes
  /// allow 7 days and more; payservice assumes the shortest.
  public static let authorizationDays: Int64 = 7

  public let name = "Adyen"
  public let dashboard = "Adyen's Customer Area"
  private let transport: HTTPRemoteTransport
  private let settings: Gateway.Adyen
  private let retry: RetryPolicy
  private let apiKey: String
  private let clock: @Sendable () -> Int64

  /// - Parameters:
  ///   - apiKey: from the environment (`Gateway.Adyen.apiKey(environment:)`).
  ///   - clock: the service clock's seconds (for an authorization's `captureBefore`).
  public init(settings: Gateway.Adyen, apiKey: String, clock: @escaping @Sendable () -> Int64) {
    self.settings = settings
    self.apiKey = apiKey
    self.clock = clock
    transport = HTTPRemoteTransport.gateway(settings)
    retry = RetryPolicy.gateway(settings)
  }

  public func shutdown() async {
    await transport.close()
  }

  public func paymentDataProblem(_ paymentData: String) -> String? {
    """
    must be the Apple Pay token itself (PKPaymentToken.paymentData: an object, or its JSON text): Adyen \
    decrypts it (gateway.kind is adyen)
    """
  }

  /// No call: Adyen decrypts the token when it is paid with. The payment data returned carries the
  /// token to the payment; its card is the one the device named (a gateway that decrypts at payment
  /// shows no card before it), which the config may only price by when payservice can decrypt the
  /// token itself (`applePay`'s keys).
  public func tokenize(applePayToken token: ApplePayTokenization) async -> GatewayReply<GatewayToken> {
    guard token.paymentData.utf8.count <= Self.maxApplePayTokenBytes else {
      return .refused(
        GatewayRefusal(
          type: "validation", code: nil,
          message: "the Apple Pay token is more than \(Self.maxApplePayTokenBytes) bytes, which no device makes",
          final: true))
    }
    let encoded = Data(token.paymentData.utf8).base64EncodedString()
    return .succeeded(
      GatewayToken(
        id: Self.applePayPrefix + encoded,
        card: GatewayCard(network: nil, type: nil, brand: token.displayName ?? token.network),
        label: "(the Apple Pay token, which Adyen decrypts when it charges it)"))
  }

  public func card(of paymentData: String) async -> GatewayReply<GatewayCard> {
    .refused(GatewayRefusal(type: "unsupported", code: nil, message: "Adyen shows no card before a payment", final: true))
  }

  /// Adyen's Checkout API reads no payment or modification back (there is no GET of a payment):
  /// what it did is in its notifications, and in the Customer Area for the merchant to check.
  public func lookUp(_ work: GatewayWork) async -> GatewayFound? { nil }

  public func list(_ kind: GatewayListKind, createdSince: Int64, startingAfter: String?, limit: Int) async
    -> GatewayReply<GatewayListPage>
  {
    .refused(
      GatewayRefusal(
        type: "unsupported", code: nil,
        message: "Adyen has no API that lists payments: its notifications are how payservice hears of them", final: true))
  }

  // MARK: Calls

  /// `POST /v71/payments` ("Make a payment", Checkout API): the Apple Pay token as Adyen decrypts
  /// it, or a card stored at an agreement's first payment (`storedPaymentMethodId`, the shopper
  /// not present: `ContAuth`), under the charge's idempotency key.
  public func charge(_ request: GatewayCharge) async -> GatewayReply<GatewayPayment> {
    guard let currency = Currency(code: request.currencyCode),
      let value = AdyenAmount.value(ofMinor: request.amountMinor, currency)
    else {
      return .refused(
        GatewayRefusal(
          type: "validation", code: nil,
          message: "\(request.amountMinor) minor units of \(request.currencyCode) cannot be written in Adyen's minor units",
          final: true))
    }
    var body = JSONWriter()
    body.beginObject()
    Self.amount(value, request.currencyCode, into: &body)
    body.member("reference", request.orderId)
    body.member("merchantAccount", settings.merchantAccount)
    body.key("paymentMethod")
    body.beginObject()
    if let saved = request.savedCard {
      body.member("type", "scheme")
      body.member("storedPaymentMethodId", saved.paymentMethodId)
    } else {
      guard request.paymentData.hasPrefix(Self.applePayPrefix) else {
        return .refused(
          GatewayRefusal(
            type: "validation", code: nil,
            message: "the charge token holds no Apple Pay token for Adyen: authorize the payment again", final: true))
      }
      body.member("type", "applepay")
      body.member("applePayToken", String(request.paymentData.dropFirst(Self.applePayPrefix.count)))
    }
    body.endObject()
    if let saved = request.savedCard {
      body.member("shopperReference", saved.customerId)
      body.member("shopperInteraction", "ContAuth")
      body.member("recurringProcessingModel", request.unscheduled ? "UnscheduledCardOnFile" : "Subscription")
    } else {
      body.member("shopperInteraction", "Ecommerce")
      if request.saveCard, let agreementId = request.agreementId {
        body.member("storePaymentMethod", true)
        body.member("shopperReference", agreementId)
        body.member("recurringProcessingModel", request.unscheduled ? "UnscheduledCardOnFile" : "Subscription")
      }
    }
    if request.captureManually {
      body.key("additionalData")
      body.beginObject()
      body.member("manualCapture", "true")
      body.endObject()
    }
    if let agreementId = request.agreementId {
      body.key("metadata")
      body.beginObject()
      body.member("agreementId", agreementId)
      body.endObject()
    }
    body.endObject()
    let answer = await post("/payments", body.string, key: request.idempotencyKey, token: request.paymentData)
    guard case .object(let object) = answer else { return answer.reply() }
    return payment(object, request, currency: currency, sentValue: value)
  }

  /// What a payment's answer says, checked against what was sent.
  func payment(_ object: JSONObject, _ request: GatewayCharge, currency: Currency, sentValue: Int64)
    -> GatewayReply<GatewayPayment>
  {
    guard case .string(let resultCode)? = object["resultCode"] else {
      return .unanswered(reason: "an answer payservice cannot read (no resultCode)")
    }
    let psp = Self.text(object["pspReference"])
    if let mismatch = Self.mismatch(
      object, sent: (sentValue, request.currencyCode), reference: request.orderId, referenceMember: "merchantReference")
    {
      return .unanswered(reason: "Adyen's answer does not fit the payment sent (\(mismatch)); it is not taken as paid")
    }
    switch resultCode {
    case "Authorised":
      guard let psp else { return .unanswered(reason: "an answer payservice cannot read (no pspReference)") }
      let manual = request.captureManually && request.amountMinor > 0
      var saved: GatewaySavedCard?
      if request.saveCard, let agreementId = request.agreementId {
        guard let stored = Self.storedPaymentMethodId(object) else {
          return .unanswered(reason: "Adyen authorised the first payment but named no stored payment method")
        }
        saved = GatewaySavedCard(customerId: agreementId, paymentMethodId: stored)
      } else if let card = request.savedCard {
        saved = card
      }
      return .succeeded(
        GatewayPayment(
          id: psp, chargeId: psp, status: manual ? .authorized : .captured,
          amountCapturedMinor: manual ? 0 : request.amountMinor,
          captureBefore: manual ? clock() + Self.authorizationDays * 86_400 : nil, savedCard: saved))
    case "Received", "Pending", "PresentToShopper":
      guard let psp else { return .unanswered(reason: "an answer payservice cannot read (no pspReference)") }
      return .succeeded(GatewayPayment(id: psp, chargeId: psp, status: .processing, amountCapturedMinor: 0))
    case "Refused":
      return .declined(Self.decline(object, pspReference: psp))
    case "Error":
      let reason = Self.text(object["refusalReason"]) ?? "an error while the payment was processed"
      return .declined(
        GatewayDecline(
          code: "processing_error", declineCode: nil, chargeId: psp,
          message: "The payment could not be processed (\(reason)). Try again, or use another card."))
    case "Cancelled":
      return .succeeded(GatewayPayment(id: psp ?? "", chargeId: psp, status: .canceled, amountCapturedMinor: 0))
    case "RedirectShopper", "IdentifyShopper", "ChallengeShopper":
      return .succeeded(GatewayPayment(id: psp ?? "", chargeId: psp, status: .requiresAction, amountCapturedMinor: 0))
    default:
      return .succeeded(GatewayPayment(id: psp ?? "", chargeId: psp, status: .incomplete, amountCapturedMinor: 0))
    }
  }

  /// `POST /v71/payments/{paymentPspReference}/captures`: accepted (`received`); its notification
  /// (CAPTURE or CAPTURE_FAILED) says what came of it.
  public func capture(_ request: GatewayCaptureRequest) async -> GatewayReply<GatewayPayment> {
    await modification(
      "captures", paymentId: request.paymentId, reference: request.captureId, key: request.idempotencyKey,
      amount: (request.amountMinor, request.currencyCode)
    ).acceptance()
  }

  /// `POST /v71/payments/{paymentPspReference}/cancels`: accepted (`received`); its notification
  /// (CANCELLATION) says what came of it.
  public func cancel(_ request: GatewayCancelRequest) async -> GatewayReply<GatewayPayment> {
    await modification("cancels", paymentId: request.paymentId, reference: request.cancelId, key: request.idempotencyKey)
      .acceptance()
  }

  /// `POST /v71/payments/{paymentPspReference}/refunds`: a pending refund (`received`) under its
  /// own pspReference; its notification (REFUND or REFUND_FAILED) settles it.
  public func refund(_ request: GatewayRefundRequest) async -> GatewayReply<GatewayRefund> {
    switch await modification(
      "refunds", paymentId: request.paymentId, reference: request.refundId, key: request.idempotencyKey,
      amount: (request.amountMinor, request.currencyCode))
    {
    case .succeeded(let reference): return .succeeded(GatewayRefund(id: reference, status: .pending))
    case .declined(let decline): return .declined(decline)
    case .refused(let refusal): return .refused(refusal)
    case .unanswered(let reason): return .unanswered(reason: reason)
    case .accepted(let reference): return .succeeded(GatewayRefund(id: reference, status: .pending))
    }
  }

  /// A modification of a payment: its own pspReference once Adyen answered `received`, checked
  /// against what was sent.
  func modification(
    _ kind: String, paymentId: String, reference: String, key: String, amount: (minor: Int64, currency: String)? = nil
  ) async -> GatewayReply<String> {
    var body = JSONWriter()
    body.beginObject()
    body.member("merchantAccount", settings.merchantAccount)
    body.member("reference", reference)
    var sent: (Int64, String)?
    if let amount {
      guard let currency = Currency(code: amount.currency), let value = AdyenAmount.value(ofMinor: amount.minor, currency)
      else {
        return .refused(
          GatewayRefusal(
            type: "validation", code: nil,
            message: "\(amount.minor) minor units of \(amount.currency) cannot be written in Adyen's minor units", final: true))
      }
      Self.amount(value, amount.currency, into: &body)
      sent = (value, amount.currency)
    }
    body.endObject()
    let path = "/payments/\(RemoteText.percentEncoded(paymentId))/\(kind)"
    let answer = await post(path, body.string, key: key, token: nil)
    guard case .object(let object) = answer else { return answer.reply() }
    guard case .string("received")? = object["status"], let psp = Self.text(object["pspReference"]) else {
      return .unanswered(reason: "an answer payservice cannot read (no status received and pspReference)")
    }
    if Self.text(object["paymentPspReference"]).map({ $0 != paymentId }) ?? false {
      return .unanswered(reason: "Adyen's answer names another payment than \(paymentId); it is not taken as done")
    }
    if let mismatch = Self.mismatch(object, sent: sent, reference: reference, referenceMember: "reference") {
      return .unanswered(reason: "Adyen's answer does not fit the \(kind.dropLast()) sent (\(mismatch)); it is not taken as done")
    }
    return .succeeded(psp)
  }

  // MARK: Reading answers

  /// What differs between an answer and what was sent: its amount, currency or reference, where
  /// it names them; nil when nothing does.
  static func mismatch(
    _ object: JSONObject, sent: (value: Int64, currency: String)?, reference: String, referenceMember: String
  ) -> String? {
    if let named = text(object[referenceMember]), named != reference {
      return "its \(referenceMember) is \(named), not \(reference)"
    }
    if let sent, case .object(let amount)? = object["amount"] {
      if let currency = text(amount["currency"]), currency != sent.currency {
        return "its currency is \(currency), not \(sent.currency)"
      }
      if case .number(let value)? = amount["value"], value != String(sent.value) {
        return "its amount is \(value), not \(sent.value)"
      }
    }
    return nil
  }

  /// A refusal in the sandbox's vocabulary, its message for the shopper ("Refusal reasons",
  /// https://docs.adyen.com/development-resources/refusal-reasons).
  static func decline(_ object: JSONObject, pspReference: String?) -> GatewayDecline {
    let reason = text(object["refusalReason"]) ?? "Refused"
    let code: String
    let message: String
    switch text(object["refusalReasonCode"]) {
    case "6":
      code = "expired_card"
      message = "Your card has expired. Use another card."
    case "12":
      code = "card_declined"
      message = "Your card has insufficient funds. Use another card."
    case "8", "34":
      code = "incorrect_number"
      message = "Your card number is not valid. Use another card."
    case "24", "32":
      code = "incorrect_cvc"
      message = "Your card's security code did not match. Use another card."
    default:
      code = "card_declined"
      message = "Your card was declined. Use another card."
    }
    let declineCode = text(object["refusalReasonCode"]).map { "\(reason) (\($0))" } ?? reason
    return GatewayDecline(code: code, declineCode: declineCode, chargeId: pspReference, message: message)
  }

  /// The stored payment method's id in an answer: `additionalData["tokenization.storedPaymentMethodId"]`,
  /// or (before Checkout API v68) `recurring.recurringDetailReference`.
  static func storedPaymentMethodId(_ object: JSONObject) -> String? {
    guard case .object(let data)? = object["additionalData"] else { return nil }
    return text(data["tokenization.storedPaymentMethodId"]) ?? text(data["recurring.recurringDetailReference"])
  }

  static func text(_ value: JSONValue?) -> String? {
    if case .string(let text)? = value, !text.isEmpty { return text }
    return nil
  }

  static func amount(_ value: Int64, _ currency: String, into body: inout JSONWriter) {
    body.key("amount")
    body.beginObject()
    body.member("currency", currency)
    body.member("value", Int(value))
    body.endObject()
  }

  // MARK: HTTP

  /// An answer, or what a call came to without one.
  enum Answer {
    case object(JSONObject)
    case reply(GatewayReply<Never>)

    func reply<Value: Sendable>() -> GatewayReply<Value> {
      switch self {
      case .object: return .unanswered(reason: "an answer payservice cannot read")
      case .reply(let reply): return reply.widened()
      }
    }
  }

  /// POSTs `body` under the idempotency key, retrying what may be retried (same key, same body).
  /// `token`: payment data whose text Adyen's messages may quote, taken out of them.
  func post(_ path: String, _ body: String, key: String, token: String?) async -> Answer {
    let request = RemoteRequest(
      method: .POST, url: settings.apiBase + "/" + Self.apiVersion + path,
      headers: [("X-API-Key", apiKey), ("Content-Type", "application/json")], body: Array(body.utf8),
      idempotencyKey: key)
    switch await retry.run({ read(await transport.send(request), token: token) }) {
    case .done(let answer): return answer
    case .exhausted(let reason, let attempts):
      return .reply(.unanswered(reason: reason + RetryPolicy.afterAttempts(attempts)))
    }
  }

  /// One attempt's answer, or why it is worth sending again with the same key. Adyen's errors
  /// ("Response handling", https://docs.adyen.com/development-resources/response-handling) are a
  /// ServiceError: `status`, `errorCode`, `message`, `errorType`.
  func read(_ sent: Result<RemoteResponse, RemoteFailure>, token: String?) -> RemoteAttempt<Answer, String> {
    let response: RemoteResponse
    switch sent {
    case .failure(let failure): return .retry(failure.description, after: nil)
    case .success(let answered): response = answered
    }
    let status = response.status
    if (300..<400).contains(status) {
      return .done(
        .reply(
          .refused(
            GatewayRefusal(
              type: "configuration", code: nil,
              message:
                "HTTP \(status) from Adyen, a redirect, which payservice never follows: gateway.apiBase must be the Checkout API's base itself.",
              final: false))))
    }
    let parsed = try? JSONParser.parse(String(decoding: response.body, as: UTF8.self))
    if (200..<300).contains(status) {
      guard case .object(let object)? = parsed else {
        return .done(.reply(.unanswered(reason: "an answer payservice cannot read")))
      }
      return .done(.object(object))
    }
    var error = JSONObject()
    if case .object(let object)? = parsed { error = object }
    let errorCode = Self.text(error["errorCode"])
    let errorType = Self.text(error["errorType"]) ?? "internal"
    let message = scrubbed(Self.text(error["message"]) ?? "HTTP \(status)", token: token)
    if status == 429 || status >= 500 {
      return .retry("HTTP \(status) from Adyen" + (errorCode.map { " (\($0))" } ?? ""), after: response.retryAfter())
    }
    switch status {
    case 401:
      return .done(
        .reply(.refused(GatewayRefusal(type: "authentication_error", code: errorCode, message: message, final: false))))
    case 403:
      return .done(.reply(.refused(GatewayRefusal(type: "permission_error", code: errorCode, message: message, final: false))))
    default:
      // 704: a request under this key is still in progress (a transient error: sent again later it
      // is answered), or the key was used for another request (not transient).
      if errorCode == "704" {
        if response.header("Transient-Error")?.lowercased() == "true" {
          return .retry("HTTP \(status) from Adyen: the same request is still in progress", after: response.retryAfter())
        }
        return .done(.reply(.refused(GatewayRefusal(type: "idempotency_error", code: errorCode, message: message, final: false))))
      }
      // A request Adyen found invalid (422 validation, 400): the same request fails the same way.
      return .done(.reply(.refused(GatewayRefusal(type: errorType, code: errorCode, message: message, final: true))))
    }
  }

  /// `message` without the API key and without the Apple Pay token's text.
  func scrubbed(_ message: String, token: String?) -> String {
    var text = message.replacingOccurrences(of: apiKey, with: "[the API key]")
    if let token, token.hasPrefix(Self.applePayPrefix) {
      text = text.replacingOccurrences(of: String(token.dropFirst(Self.applePayPrefix.count)), with: "[the Apple Pay token]")
    }
    return String(text.prefix(1024))
  }
}

extension GatewayReply where Value == String {
  /// A modification's pspReference as what it is: accepted, its outcome later.
  func acceptance() -> GatewayReply<GatewayPayment> {
    switch self {
    case .succeeded(let reference), .accepted(let reference): return .accepted(reference: reference)
    case .declined(let decline): return .declined(decline)
    case .refused(let refusal): return .refused(refusal)
    case .unanswered(let reason): return .unanswered(reason: reason)
    }
  }
}

extension GatewayReply where Value == Never {
  /// A reply with no value (never `.succeeded`) as a reply of any type.
  func widened<Other: Sendable>() -> GatewayReply<Other> {
    switch self {
    case .succeeded: preconditionFailure("never")
    case .declined(let decline): return .declined(decline)
    case .refused(let refusal): return .refused(refusal)
    case .unanswered(let reason): return .unanswered(reason: reason)
    case .accepted(let reference): return .accepted(reference: reference)
    }
  }
}
