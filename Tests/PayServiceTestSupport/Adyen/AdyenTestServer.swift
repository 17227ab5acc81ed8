import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// A local stand-in for Adyen's Checkout API (v71), written from Adyen's documentation and its
/// OpenAPI description (https://github.com/Adyen/adyen-openapi, json/CheckoutService-v71.json):
/// HTTP/1.1 over real TLS on 127.0.0.1, so that a real HTTPS client (AsyncHTTPClient trusting
/// `caCertificatePEM`) talks to it exactly as it would to Adyen. It shares no code with
/// payservice's Adyen gateway.
///
/// It serves, with JSON bodies and Adyen's `ServiceError` for errors:
/// - `POST /v71/payments` with an Apple Pay token (`paymentMethod` `{type: "applepay",
///   applePayToken}`), decrypted with the merchant's payment processing key
///   (AdyenApplePayDecryption.swift; 422 5_002 "Invalid Apple Pay token", 5_004 "Could not find
///   Merchant Private Key", 5_001 "Apple Pay token amount-mismatch" when the token's amount is not
///   the request's), or with a stored payment method (`paymentMethod` `{type: "scheme",
///   storedPaymentMethodId}` and the `shopperReference` it was stored for; otherwise 422 800
///   "Contract not found"). The card decides the outcome (AdyenTestCards.swift): `Authorised`,
///   `Refused` or `Error` with Adyen's `refusalReason` and `refusalReasonCode`, or `Received`
///   until `settle`. `additionalData.manualCapture` `"true"` holds the authorisation for a capture;
///   otherwise the payment is captured at once and, as with Adyen's default automatic capture,
///   only AUTHORISATION is notified. `storePaymentMethod: true` with a `shopperReference` stores
///   the card: the answer's and the AUTHORISATION's `additionalData` carry
///   `tokenization.storedPaymentMethodId`, `tokenization.shopperReference` and
///   `tokenization.store.operationType` (the `subscription-first-transaction` example). An amount of
///   0 is a zero-value authorisation ("For BIN or card verification requests, set amount to 0"),
///   which stores a card without charging it.
/// - `POST /v71/payments/{paymentPspReference}/captures`, `/cancels`, `/refunds`: 201 with `status`
///   `received`, the modification's own `pspReference`, `paymentPspReference`, `merchantAccount`,
///   `reference` and (captures, refunds) `amount`; the outcome only in a notification
///   (AdyenTestLedger+Modifications.swift).
///
/// Authentication is the `X-API-Key` header (the `ApiKeyAuth` scheme); a missing or wrong key is
/// 401 with `errorType` `security`. A `merchantAccount` other than the server's is 403 901
/// "Invalid Merchant Account"; a field outside the request's schema is 400 702; an unknown path
/// is 404. `Idempotency-Key` works as AdyenServerCore.execute describes.
///
/// Notifications (AdyenNotifications.swift): every payment outcome, modification and dispute event
/// queues a `NotificationRequestItem` signed with `hmacKey`; `releaseNotifications` hands them out
/// as one Standard webhook body. The clock (`setClock`; the wall clock by default) gives every
/// `eventDate` and the day cards expire against: the same requests with the same clock give the
/// same bytes.
public final class AdyenTestServer: Sendable {
  /// The API key the server accepts by default.
  public static let defaultAPIKey = "AQEpayserviceTestKey_adyen_7KhQ2nWm4Vx9"
  /// The HMAC key notifications are signed with by default (32 bytes, hex, as Adyen shows one).
  public static let defaultHMACKey = "6A1F3C0E9B7D4A2C8E5F1B3D7C9A0E2F4B6D8A1C3E5F7B9D0A2C4E6F8B1D3A5C"
  public static let defaultMerchantAccount = "PayServiceECOM"

  public let apiKey: String
  public let hmacKey: String
  public let merchantAccount: String
  /// The Apple Pay merchant identifier tokens are decrypted for.
  public let applePayMerchantIdentifier: String
  public let port: Int
  /// "https://127.0.0.1:PORT"; the API's paths start with `/v71`.
  public var baseURL: String { "https://127.0.0.1:\(port)" }
  /// The certificate authority (PEM) that issued the server's certificate: the only root a
  /// client needs to trust.
  public let caCertificatePEM: String

  let listener: TestHTTPSListener
  let core: AdyenServerCore

  /// Starts listening on 127.0.0.1, an ephemeral port, TLS with a fresh self-signed CA and leaf
  /// certificate, on its own one-thread event loop group.
  /// - Parameter applePayPrivateKeyPEM: the merchant's payment processing key (a P-256 private key,
  ///   PEM), as `TestTokenFactory.merchantPrivateKeyPEM` gives it; a fresh key when nil.
  public init(
    apiKey: String = AdyenTestServer.defaultAPIKey, hmacKey: String = AdyenTestServer.defaultHMACKey,
    merchantAccount: String = AdyenTestServer.defaultMerchantAccount,
    applePayMerchantIdentifier: String = "merchant.com.seatgeek.SeatGeek", applePayPrivateKeyPEM: String? = nil
  ) throws {
    self.apiKey = apiKey
    self.hmacKey = hmacKey
    self.merchantAccount = merchantAccount
    self.applePayMerchantIdentifier = applePayMerchantIdentifier
    let key =
      try applePayPrivateKeyPEM.map { try P256.KeyAgreement.PrivateKey(pemRepresentation: $0) }
      ?? P256.KeyAgreement.PrivateKey()
    let certificate = try TestTLSCertificate(caName: "payservice Adyen test server CA")
    caCertificatePEM = certificate.caPEM
    let core = AdyenServerCore(
      apiKey: apiKey, hmacKey: hmacKey,
      ledger: AdyenTestLedger(
        merchantAccount: merchantAccount,
        applePay: AdyenApplePayDecryption(merchantIdentifier: applePayMerchantIdentifier, privateKey: key)))
    self.core = core
    listener = try TestHTTPSListener(tls: try certificate.serverContext(), backlog: 256) { operations, closer in
      try operations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: true)
      try operations.addHandler(AdyenHTTPHandler(core: core, closer: closer))
    }
    port = listener.port
  }

  deinit { shutdown() }

  /// Writes the CA certificate to `directory/adyen-test-ca.pem` and returns that path.
  public func writeCACertificate(to directory: URL) throws -> String {
    let url = directory.appendingPathComponent("adyen-test-ca.pem")
    try caCertificatePEM.write(to: url, atomically: true, encoding: .utf8)
    return url.path
  }

  /// Stops listening, closes every connection and shuts the event loop group down. Idempotent.
  /// Call it from a thread that is not the server's event loop (any test thread will do).
  public func shutdown() {
    listener.shutdown()
  }

  // MARK: - Settings

  /// Added latency before every response, scheduled on the event loop: default 0.
  public func setLatency(milliseconds: Int) {
    core.state.withLock { $0.latencyMilliseconds = max(0, milliseconds) }
  }

  /// Fixes the clock at `unixSeconds`, or gives it back to the wall clock (nil).
  public func setClock(_ unixSeconds: Int64?) {
    core.state.withLock { $0.ledger.clock = unixSeconds }
  }

  /// The optional `additionalData` fields a payment's answer carries, as a merchant selects them in
  /// Adyen's Customer Area: any of `authCode`, `cardBin`, `cardSummary`, `expiryDate`,
  /// `paymentMethod`, `recurringProcessingModel` (others are ignored). None by default.
  public func setAdditionalData(_ fields: Set<String>) {
    core.state.withLock { $0.ledger.additionalDataFields = fields.intersection(AdyenTestLedger.optionalAdditionalData) }
  }

  // MARK: - Faults

  /// Which requests a fault applies to.
  public enum Route: Sendable, Equatable {
    case any, payments, captures, cancels, refunds
  }

  /// A gate a test waits on (shared with the Stripe test server): `reached` becomes true when a
  /// request arrives at the fault; `release()` lets it (and any later arrival) go on.
  public typealias Gate = StripeTestServer.Gate

  /// A value an answer carries instead of the one the request sent.
  public enum Tamper: Sendable, Equatable {
    /// `amount.value`.
    case amount(Int64)
    /// `amount.currency`.
    case currency(String)
    /// A payment's `merchantReference`, a modification's `reference`.
    case reference(String)
  }

  /// A failure injected into the next request of a route, once it is authenticated and routed.
  public enum Fault: Sendable {
    /// Executes the request (saving its answer under its Idempotency-Key), then waits `seconds`
    /// before answering (past a client's timeout).
    case delayAfterExecuting(seconds: Double)
    /// Executes the request, then resets the connection (TCP RST, no TLS close_notify) without
    /// answering.
    case resetAfterExecuting
    /// Answers 500 (`errorCode` 000, `errorType` `internal`) without executing or saving anything.
    case serverErrorBeforeExecuting
    /// Answers 429 without executing or saving anything, with the code and detail of Adyen's rate
    /// limit error (00_500, "too many requests"; https://docs.adyen.com/errors/internal). Adyen
    /// documents no Retry-After header, and none is sent.
    case rateLimited
    /// Holds the request without executing until the gate is released; meanwhile its
    /// Idempotency-Key is in progress (another request with it is 409 704). If the client's
    /// connection closes while held, the request is dropped unexecuted.
    case holdBeforeExecuting(Gate)
    /// Executes the request (saving its answer), then holds the answer until the gate is released.
    case holdAfterExecuting(Gate)
    /// Executes the request and answers it with one value changed (`Tamper`), for a client's
    /// integrity checks. The saved answer, which a same-key retry gets, is the true one.
    case tamper(Tamper)
  }

  /// Queues `fault` for the next request that matches `route` (first in, first out among the
  /// faults a request matches). A request takes at most one fault.
  public func inject(_ fault: Fault, on route: Route = .any) {
    core.state.withLock { $0.faults.append((route, fault)) }
  }

  // MARK: - What happens later

  /// Ends a `Received` payment: `authorised` (captured or held as its request asked) or refused
  /// (2 "Refused"), queueing its AUTHORISATION. False when it is unknown or not `Received`.
  @discardableResult
  public func settle(paymentPspReference: String, authorised: Bool) -> Bool {
    core.state.withLock { $0.ledger.settle(paymentPspReference, authorised: authorised) }
  }

  /// Makes the next `count` payments with a stored payment method refused with `refusalReasonCode`
  /// (a code of `AdyenRefusal.byCode`; 4 answers `Error`). False when the method or code is unknown.
  @discardableResult
  public func refuseStoredPayments(storedPaymentMethodId: String, refusalReasonCode: Int, count: Int = 1) -> Bool {
    guard let refusal = AdyenRefusal.byCode[refusalReasonCode] else { return false }
    return core.state.withLock { state in
      guard state.ledger.storedMethods[storedPaymentMethodId] != nil else { return false }
      state.ledger.storedMethods[storedPaymentMethodId]!.refusals += Array(repeating: refusal, count: max(0, count))
      return true
    }
  }

  /// Disables a stored payment method (as Adyen's `DELETE /storedPaymentMethods/{id}` does): a
  /// payment with it is then 422 800 "Contract not found". False when it is unknown.
  @discardableResult
  public func disableStoredPaymentMethod(_ id: String) -> Bool {
    core.state.withLock { state in
      guard state.ledger.storedMethods[id] != nil else { return false }
      state.ledger.storedMethods[id]!.disabled = true
      return true
    }
  }

  /// Makes a successful capture or refund fail later: CAPTURE_FAILED or REFUND_FAILED follows its
  /// CAPTURE or REFUND, and the amount returns to the payment. False when `pspReference` is not a
  /// capture or refund that succeeded and has not failed yet.
  @discardableResult
  public func failModification(pspReference: String) -> Bool {
    core.state.withLock { $0.ledger.failModification(pspReference) }
  }

  /// The events of a dispute, in the order Adyen sends them.
  public enum DisputeEvent: String, Sendable {
    case requestForInformation = "REQUEST_FOR_INFORMATION"
    case notificationOfChargeback = "NOTIFICATION_OF_CHARGEBACK"
    case chargeback = "CHARGEBACK"
    case chargebackReversed = "CHARGEBACK_REVERSED"
    case secondChargeback = "SECOND_CHARGEBACK"
  }

  /// Opens a dispute on an Authorised payment for `value` (at most its amount) with `event`
  /// (`requestForInformation`, `notificationOfChargeback` or `chargeback`) and returns the
  /// dispute's pspReference, or nil. `disputeStatus` overrides the event's default
  /// (Unresponded, Undefended, Undefended, Won, Lost).
  public func openDispute(
    paymentPspReference: String, value: Int64, event: DisputeEvent = .notificationOfChargeback,
    disputeStatus: String? = nil
  ) -> String? {
    core.state.withLock {
      $0.ledger.openDispute(payment: paymentPspReference, value: value, event: event.rawValue, status: disputeStatus)
    }
  }

  /// Moves a dispute to `event`: after REQUEST_FOR_INFORMATION, NOTIFICATION_OF_CHARGEBACK or
  /// CHARGEBACK; after NOTIFICATION_OF_CHARGEBACK, CHARGEBACK; after CHARGEBACK,
  /// CHARGEBACK_REVERSED or SECOND_CHARGEBACK; after CHARGEBACK_REVERSED, SECOND_CHARGEBACK.
  /// False for any other move.
  @discardableResult
  public func advanceDispute(_ disputePspReference: String, to event: DisputeEvent, disputeStatus: String? = nil)
    -> Bool
  {
    core.state.withLock { $0.ledger.advanceDispute(disputePspReference, event: event.rawValue, status: disputeStatus) }
  }

  // MARK: - Notifications

  /// The queued notifications, oldest first, without taking them.
  public var pendingNotifications: [AdyenNotificationItem] { core.state.withLock { $0.ledger.queued } }

  /// Takes every queued notification and returns them as one Standard webhook body, the exact
  /// text Adyen would POST: `{"live":"false","notificationItems":[{"NotificationRequestItem":{…}},…]}`
  /// (`notificationItems` empty when none is queued).
  public func releaseNotifications() -> String {
    let items = core.state.withLock { state -> [AdyenNotificationItem] in
      defer { state.ledger.queued = [] }
      return state.ledger.queued
    }
    return AdyenNotificationItem.body(items, hmacKey: hmacKey)
  }

  // MARK: - Inspection (thread-safe)

  /// Payments made (executed, not replayed; refused and `Received` ones included).
  public var paymentCount: Int { core.state.withLock { $0.ledger.paymentOrder.count } }
  public var captureCount: Int { modificationCount(.capture) }
  public var cancelCount: Int { modificationCount(.cancel) }
  public var refundCount: Int { modificationCount(.refund) }

  func modificationCount(_ kind: AdyenTestLedger.Modification.Kind) -> Int {
    core.state.withLock { state in
      state.ledger.modificationOrder.filter { state.ledger.modifications[$0]!.kind == kind }.count
    }
  }

  /// Payments and modifications made (executed, not replayed) with this Idempotency-Key.
  public func created(idempotencyKey: String) -> Int {
    core.state.withLock { $0.ledger.createdPerIdempotencyKey[idempotencyKey] ?? 0 }
  }

  /// A payment as stored, flattened for assertions: `pspReference`, `reference`, `currency`,
  /// `value`, `resultCode`, `refusalReason`, `brand`, `last4`, `type`, `manualCapture`,
  /// `capturable`, `captured`, `refunded`, `cancelled`, `chargedBack`, and when set
  /// `shopperReference`, `storedPaymentMethodId`, `recurringProcessingModel`,
  /// `shopperInteraction`, `idempotencyKey`. Nil for an unknown pspReference.
  public func payment(_ pspReference: String) -> [String: String]? {
    core.state.withLock { state in
      guard let payment = state.ledger.payments[pspReference] else { return nil }
      var fields: [String: String] = [
        "pspReference": payment.pspReference, "reference": payment.reference, "currency": payment.amount.currency,
        "value": String(payment.amount.value), "resultCode": payment.resultCode, "brand": payment.card.brand,
        "last4": payment.card.last4, "type": payment.methodType, "manualCapture": String(payment.manualCapture),
        "capturable": String(payment.capturable), "captured": String(payment.captured),
        "refunded": String(payment.refunded), "cancelled": String(payment.cancelled),
        "chargedBack": String(payment.chargedBack),
      ]
      fields["refusalReason"] = payment.refusal?.reason
      fields["shopperReference"] = payment.shopperReference
      fields["storedPaymentMethodId"] = payment.storedPaymentMethodId
      fields["recurringProcessingModel"] = payment.recurringProcessingModel
      fields["shopperInteraction"] = payment.shopperInteraction
      fields["idempotencyKey"] = payment.idempotencyKey
      return fields
    }
  }

  /// The payments' pspReferences in the order they were made.
  public var paymentReferences: [String] { core.state.withLock { $0.ledger.paymentOrder } }

  /// A stored payment method: `id`, `shopperReference`, `brand`, `last4`, `expiration` (YYMMDD),
  /// `disabled`, `pendingRefusals`, and `recurringProcessingModel` when set. Nil when unknown.
  public func storedPaymentMethod(_ id: String) -> [String: String]? {
    core.state.withLock { state in
      guard let method = state.ledger.storedMethods[id] else { return nil }
      var fields = [
        "id": method.id, "shopperReference": method.shopperReference, "brand": method.card.brand,
        "last4": method.card.last4, "expiration": method.card.expiration, "disabled": String(method.disabled),
        "pendingRefusals": String(method.refusals.count),
      ]
      fields["recurringProcessingModel"] = method.recurringProcessingModel
      return fields
    }
  }

  /// A request as received (the API key is never stored).
  public struct RecordedRequest: Sendable {
    public var method: String
    public var path: String
    public var idempotencyKey: String?
    /// Whether it was answered with a saved idempotent result.
    public var replayed: Bool
    /// The HTTP status answered; 0 while unanswered, or if no answer was sent (a reset, or a
    /// request dropped because its connection closed).
    public var status: Int
    /// The raw JSON body.
    public var body: String
  }

  /// Every request received, in order of arrival.
  public var requests: [RecordedRequest] { core.state.withLock { $0.requests } }

  /// TLS connections accepted so far (a keep-alive client reuses one for many requests).
  public var connectionsAccepted: Int { listener.accepted }
}
