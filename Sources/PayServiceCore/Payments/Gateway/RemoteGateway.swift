import Foundation

/// A payment gateway across a network (Stripe): every call may be answered, refused, or never
/// answered at all. Each call carries an idempotency key; sending the same call with the same key
/// again gets the gateway's first answer, never a second charge or refund. Implementations retry
/// what the gateway says may be retried (429, 5xx, connection failures) with the same key, bounded,
/// and give `.unanswered` when no answer came.
public protocol RemoteGateway: Sendable {
  /// The gateway's name for messages ("Stripe").
  var name: String { get }
  /// Where the merchant looks its payments up, for messages ("the Stripe Dashboard").
  var dashboard: String { get }
  /// Why `paymentData` is not something this gateway charges (nil when it is): the forms it accepts.
  func paymentDataProblem(_ paymentData: String) -> String?
  func charge(_ request: GatewayCharge) async -> GatewayReply<GatewayPayment>
  func capture(_ request: GatewayCaptureRequest) async -> GatewayReply<GatewayPayment>
  func cancel(_ request: GatewayCancelRequest) async -> GatewayReply<GatewayPayment>
  func refund(_ request: GatewayRefundRequest) async -> GatewayReply<GatewayRefund>
  /// The card `paymentData` (a form `paymentDataProblem` accepts) stands for, as the gateway
  /// recorded it: what prices the card at authorization (`CardEvidence`). Reads only.
  func card(of paymentData: String) async -> GatewayReply<GatewayCard>
  /// The gateway's own token for an Apple Pay token exactly as the device handed it over (Stripe:
  /// `POST /v1/tokens` with `pk_token`, as Stripe's mobile SDKs send it), made under the request's
  /// idempotency key, with the card the gateway decrypted from it: what prices the card at
  /// authorization, and what `charge` later charges. Used with a gateway that holds the merchant's
  /// Payment Processing Certificate: payservice neither verifies nor decrypts the token.
  func tokenize(applePayToken: ApplePayTokenization) async -> GatewayReply<GatewayToken>
  /// One page of the objects of `kind` the gateway made at or after `createdSince` (Unix seconds),
  /// newest first, the first after `startingAfter` (an object id of the previous page), at most
  /// `limit` (1 to `GatewayListKind.pageSize`), as the gateway shows them now: what a
  /// reconciliation takes in. Reads only.
  func list(_ kind: GatewayListKind, createdSince: Int64, startingAfter: String?, limit: Int) async
    -> GatewayReply<GatewayListPage>
  /// What the gateway shows now of `work`, asked of it before and never settled here (no answer, or
  /// "accepted, outcome later" and no report since), read without asking it again: what the janitor
  /// (`resolvePending`) settles from. The reply is the one the work's own call would have had: done,
  /// declined, not done at all (a final refusal, so that the key is free again), or no answer. Nil
  /// when the gateway offers no way to look such work up (the merchant checks its dashboard).
  func lookUp(_ work: GatewayWork) async -> GatewayFound?
  /// Closes connections; called once when the process is done with the gateway.
  func shutdown() async
}

/// What a reconciliation lists at a remote gateway.
public enum GatewayListKind: String, Sendable, CaseIterable {
  /// Payments (Stripe: `GET /v1/payment_intents`).
  case paymentIntents = "payment_intents"
  case refunds
  case disputes

  /// Objects one reconciliation takes in at most, per kind: 100 pages of Stripe's largest page.
  public static let maxObjects = 10_000
  /// The most objects one page of a list holds (Stripe's largest page).
  public static let pageSize = 100
}

/// A page of a gateway's list: its objects, and whether more follow the last of them.
public struct GatewayListPage: Sendable, Equatable {
  public var objects: [JSONValue]
  public var more: Bool

  public init(objects: [JSONValue], more: Bool) {
    self.objects = objects
    self.more = more
  }
}

/// A charge for an order: exactly what is sent, and re-sent under the same key after a crash.
public struct GatewayCharge: Sendable, Equatable {
  /// The gateway's payment data (`tok_…` or `pm_…` for Stripe).
  public var paymentData: String
  public var amountMinor: Int64
  public var currencyCode: String
  public var orderId: String
  /// Authorize only (`gateway.capture: manual`); capture comes with captureOrder.
  public var captureManually: Bool
  public var idempotencyKey: String
  /// The first payment of an agreement (`Agreement`): the card is kept for payments the merchant
  /// starts later, and the payment's `savedCard` names where. Stripe: a Customer is made first
  /// (`POST /v1/customers`, under this charge's key with `-customer` appended), and the
  /// PaymentIntent is confirmed with `customer` and `setup_future_usage=off_session`; a charge of
  /// nothing (`amountMinor` 0: a free trial, a pre-order) is a SetupIntent instead
  /// (`usage=off_session`), whose id is the payment's `id`, with status `captured` once it succeeded.
  public var saveCard: Bool
  /// A payment the merchant starts with a card kept before (an agreement's renewal, pre-order
  /// payment or reload), the buyer not present: `paymentData` is not used. Stripe: a PaymentIntent
  /// confirmed with `customer`, `payment_method` and `off_session=true`.
  public var savedCard: GatewaySavedCard?
  /// The agreement the payment belongs to, sent as metadata (`agreement_id`); nil for a one-off order.
  public var agreementId: String?
  /// The agreement's payments follow no fixed schedule (an automatic reload, a pre-order's payment
  /// date): card networks tell these from a subscription's (Adyen: `UnscheduledCardOnFile` rather
  /// than `Subscription`).
  public var unscheduled: Bool

  public init(
    paymentData: String, amountMinor: Int64, currencyCode: String, orderId: String, captureManually: Bool,
    idempotencyKey: String, saveCard: Bool = false, savedCard: GatewaySavedCard? = nil, agreementId: String? = nil,
    unscheduled: Bool = false
  ) {
    self.paymentData = paymentData
    self.amountMinor = amountMinor
    self.currencyCode = currencyCode
    self.orderId = orderId
    self.captureManually = captureManually
    self.idempotencyKey = idempotencyKey
    self.saveCard = saveCard
    self.savedCard = savedCard
    self.agreementId = agreementId
    self.unscheduled = unscheduled
  }
}

/// A card a gateway keeps for payments the merchant starts later (Stripe: a Customer and a
/// PaymentMethod attached to it for off-session use). Ids only: no card data.
public struct GatewaySavedCard: Sendable, Equatable {
  /// Stripe's `cus_…`.
  public var customerId: String
  /// Stripe's `pm_…`.
  public var paymentMethodId: String

  public init(customerId: String, paymentMethodId: String) {
    self.customerId = customerId
    self.paymentMethodId = paymentMethodId
  }
}

public struct GatewayRefundRequest: Sendable, Equatable {
  public var paymentId: String
  public var amountMinor: Int64
  public var currencyCode: String
  public var orderId: String
  public var refundId: String
  public var idempotencyKey: String

  public init(
    paymentId: String, amountMinor: Int64, currencyCode: String, orderId: String, refundId: String, idempotencyKey: String
  ) {
    self.paymentId = paymentId
    self.amountMinor = amountMinor
    self.currencyCode = currencyCode
    self.orderId = orderId
    self.refundId = refundId
    self.idempotencyKey = idempotencyKey
  }
}

/// A capture of an authorized payment, in full or in part (`captureOrder`).
public struct GatewayCaptureRequest: Sendable, Equatable {
  public var paymentId: String
  public var amountMinor: Int64
  public var currencyCode: String
  public var orderId: String
  /// The merchant's name for the capture (its captureId), which the gateway's later report names.
  public var captureId: String
  public var idempotencyKey: String

  public init(
    paymentId: String, amountMinor: Int64, currencyCode: String, orderId: String, captureId: String, idempotencyKey: String
  ) {
    self.paymentId = paymentId
    self.amountMinor = amountMinor
    self.currencyCode = currencyCode
    self.orderId = orderId
    self.captureId = captureId
    self.idempotencyKey = idempotencyKey
  }
}

/// A cancel of an authorized payment that was not captured (`cancelOrder`).
public struct GatewayCancelRequest: Sendable, Equatable {
  public var paymentId: String
  public var orderId: String
  /// The merchant's name for the cancel (its cancelId).
  public var cancelId: String
  public var idempotencyKey: String

  public init(paymentId: String, orderId: String, cancelId: String, idempotencyKey: String) {
    self.paymentId = paymentId
    self.orderId = orderId
    self.cancelId = cancelId
    self.idempotencyKey = idempotencyKey
  }
}

/// Work payservice asks of a gateway, as the journal's pending entry names it: what the janitor
/// looks up (`RemoteGateway.lookUp`).
public enum GatewayWork: Sendable, Equatable {
  case charge(GatewayCharge)
  case capture(GatewayCaptureRequest)
  case cancel(GatewayCancelRequest)
  case refund(GatewayRefundRequest)
}

/// What a gateway's lookup found of a piece of work, as the work's own reply.
public enum GatewayFound: Sendable {
  /// A charge, capture or cancel: the payment as it stands.
  case payment(GatewayReply<GatewayPayment>)
  case refund(GatewayReply<GatewayRefund>)

  /// The refusal a lookup answers for work the gateway never did: final, so that its key is free
  /// again and the merchant may ask again.
  public static func notDone(_ message: String) -> GatewayRefusal {
    GatewayRefusal(type: "not_found", code: nil, message: message, final: true)
  }
}

/// A payment at the gateway (a Stripe PaymentIntent) after a call.
public struct GatewayPayment: Sendable, Equatable {
  public enum Status: String, Sendable {
    /// The money was taken.
    case captured
    /// The money is held, waiting for a capture.
    case authorized
    case canceled
    /// The gateway is still processing the payment (Stripe's `processing`): the money may still
    /// arrive, or not. Final later; asking again (the same call, which reads the current state)
    /// finds out.
    case processing
    /// The payment waits for the customer (Stripe's `requires_action`, e.g. 3-D Secure), which a
    /// checkout confirmed by the server cannot give.
    case requiresAction
    /// No payment exists for the order: the gateway stored an error under the charge's key (a
    /// 500 it replays) and holds no payment made for the order (Stripe's search by
    /// `metadata['order_id']`). `id` is empty.
    case notFound
    /// Anything else the gateway reports (a payment method still required, a confirmation).
    case incomplete
  }

  /// The gateway's id of the payment (`pi_…`): what capture, cancel and refund name.
  public var id: String
  /// The gateway's id of the charge (`ch_…`) when it has one: the order's chargeId.
  public var chargeId: String?
  public var status: Status
  public var amountCapturedMinor: Int64
  /// When an uncaptured authorization lapses (Stripe: the charge's
  /// `payment_method_details.card.capture_before`, else 7 days after the PaymentIntent's
  /// creation), in seconds since the epoch; nil when the payment is not waiting for a capture.
  public var captureBefore: Int64?
  /// Where the card was kept, for a charge sent with `saveCard` that succeeded (or is processing);
  /// nil otherwise.
  public var savedCard: GatewaySavedCard?

  public init(
    id: String, chargeId: String?, status: Status, amountCapturedMinor: Int64, captureBefore: Int64? = nil,
    savedCard: GatewaySavedCard? = nil
  ) {
    self.id = id
    self.chargeId = chargeId
    self.status = status
    self.amountCapturedMinor = amountCapturedMinor
    self.captureBefore = captureBefore
    self.savedCard = savedCard
  }
}

public struct GatewayRefund: Sendable, Equatable {
  public enum Status: String, Sendable {
    case succeeded
    /// Accepted, settling later (it may still fail; the gateway reports that later). Stripe's
    /// `pending`, and a refund answered with a null `status`.
    case pending
    /// Waiting for an action (Stripe's `requires_action`: for some payment methods the customer
    /// must give details before the money goes back); it may still succeed, fail or be canceled.
    case requiresAction
    case failed
    /// Canceled before it was made (Stripe's `canceled`): no money went back.
    case canceled
  }

  public var id: String
  public var status: Status
  /// Why it failed, as the gateway says (Stripe's `failure_reason`); nil otherwise.
  public var failureReason: String?

  public init(id: String, status: Status, failureReason: String? = nil) {
    self.id = id
    self.status = status
    self.failureReason = failureReason
  }
}

/// An Apple Pay token for a gateway to turn into its own token (`RemoteGateway.tokenize`). It holds
/// the encrypted payment data: it is sent to the gateway and never stored or logged.
public struct ApplePayTokenization: Sendable, Equatable {
  /// The JSON text of `PKPaymentToken.paymentData` (EC_v1 or RSA_v1), as the device made it.
  public var paymentData: String
  /// `paymentMethod.displayName` ("Visa 0492"); nil or empty is not sent.
  public var displayName: String?
  /// `paymentMethod.network` as the device named it ("Visa", "masterCard").
  public var network: String
  /// `PKPaymentToken.transactionIdentifier`.
  public var transactionIdentifier: String
  /// One per payment (`Identifiers.tokenIdempotencyKey`): an authorization sent again makes no
  /// second token at the gateway.
  public var idempotencyKey: String

  public init(
    paymentData: String, displayName: String?, network: String, transactionIdentifier: String, idempotencyKey: String
  ) {
    self.paymentData = paymentData
    self.displayName = displayName
    self.network = network
    self.transactionIdentifier = transactionIdentifier
    self.idempotencyKey = idempotencyKey
  }
}

/// A token a gateway made (Stripe's `tok_…`): what a charge charges, and the card behind it.
public struct GatewayToken: Sendable, Equatable {
  public var id: String
  public var card: GatewayCard
  /// How messages name the token: its id, unless the id carries the Apple Pay token itself (a
  /// gateway that decrypts at payment), which no message shows.
  public var label: String

  public init(id: String, card: GatewayCard, label: String? = nil) {
    self.id = id
    self.card = card
    self.label = label ?? id
  }
}

/// A card as a gateway recorded it when the buyer's device tokenized it.
public struct GatewayCard: Sendable, Equatable {
  /// The network as Apple Pay names it, lower-cased; nil when the gateway does not know it or
  /// Apple Pay has no such network.
  public var network: String?
  /// nil when the gateway does not know the funding.
  public var type: CardType?
  /// The gateway's own word for the brand, for messages.
  public var brand: String

  public init(network: String?, type: CardType?, brand: String) {
    self.network = network
    self.type = type
    self.brand = brand
  }
}

/// What a gateway call came to.
public enum GatewayReply<Value: Sendable>: Sendable {
  case succeeded(Value)
  /// The card was declined (Stripe's `card_error`): a final answer.
  case declined(GatewayDecline)
  /// The gateway refused the request itself: a final answer when `final` (an invalid request,
  /// which the gateway keeps under the key), else nothing happened and the same request may succeed
  /// once the cause is fixed (authentication or permission errors, a key conflict).
  case refused(GatewayRefusal)
  /// No answer: a timeout, a reset connection, or 429/5xx after the retries. The call may or may not
  /// have taken effect; the same call with the same key finds out.
  case unanswered(reason: String)
  /// The gateway took the request and says later what came of it (Adyen's captures and cancels
  /// answer `received`; their outcome arrives in a notification): nothing is final yet, and the
  /// same call with the same key answers the same. `reference` is the gateway's reference of the
  /// request, which its later report names.
  case accepted(reference: String)
}

extension GatewayReply {
  /// A lookup's reply from what was found: `judge` says what a value found means for the work;
  /// anything but a value found is the reply as it is.
  public func found<Other>(_ judge: (Value) -> GatewayReply<Other>) -> GatewayReply<Other> {
    switch self {
    case .succeeded(let value): return judge(value)
    case .declined(let decline): return .declined(decline)
    case .refused(let refusal): return .refused(refusal)
    case .unanswered(let reason): return .unanswered(reason: reason)
    case .accepted(let reference): return .accepted(reference: reference)
    }
  }

  /// Whether the reply says nothing final about the call (no answer, or a refusal that changed
  /// nothing): a charge stays pending.
  public var leavesPending: Bool {
    switch self {
    case .unanswered, .accepted: return true
    case .refused(let refusal): return !refusal.final
    case .succeeded, .declined: return false
    }
  }
}

public struct GatewayDecline: Sendable, Equatable {
  /// The failure code, in the sandbox's vocabulary: card_declined, expired_card, processing_error, …
  public var code: String
  public var declineCode: String?
  /// The failed charge's id, when the gateway made one.
  public var chargeId: String?
  /// For the buyer (the gateway's card-error messages are written for them).
  public var message: String

  public init(code: String, declineCode: String?, chargeId: String?, message: String) {
    self.code = code
    self.declineCode = declineCode
    self.chargeId = chargeId
    self.message = message
  }
}

public struct GatewayRefusal: Sendable, Equatable {
  /// The gateway's error type (Stripe: invalid_request_error, authentication_error, permission_error,
  /// idempotency_error).
  public var type: String
  public var code: String?
  /// The gateway's message, with anything that looks like a key removed.
  public var message: String
  public var final: Bool

  public init(type: String, code: String?, message: String, final: Bool) {
    self.type = type
    self.code = code
    self.message = message
    self.final = final
  }
}

/// The remote gateway and the thread its calls' tasks run on (`RemoteCallThread`), shared by every
/// request of a process. A synchronous caller starts a call and waits for it later (the server
/// overlaps pipelined orders this way); one key is never in flight twice: a second call with a key
/// in flight waits for the first one's answer.
public final class GatewayCalls: Sendable {
  public let gateway: any RemoteGateway
  /// Calls the server lets overlap.
  public let maxConcurrent: Int
  private let thread = RemoteCallThread(name: "payservice-gateway")

  /// The webhook endpoint's signing secrets (`processStripeEvent`), from the environment; empty
  /// when none is set. Never written anywhere.
  public let webhookSecrets: [String]
  /// The HMAC keys Adyen's notifications are signed with (`processAdyenNotification`), from the
  /// environment; empty when none is set. Never written anywhere.
  public let notificationKeys: [[UInt8]]

  public init(
    gateway: any RemoteGateway, maxConcurrent: Int, webhookSecrets: [String] = [], notificationKeys: [[UInt8]] = []
  ) {
    self.gateway = gateway
    self.maxConcurrent = maxConcurrent
    self.webhookSecrets = webhookSecrets
    self.notificationKeys = notificationKeys
  }

  /// Starts `call` under its idempotency key `key`, unless a call under that key is in flight:
  /// then that one's answer.
  func start<Value: Sendable>(key: String, _ call: @escaping @Sendable (any RemoteGateway) async -> Value)
    -> PendingCall<Value>
  {
    let gateway = self.gateway
    return thread.start(key: key) { await call(gateway) }
  }

  /// Runs `call` to its end on the gateway's thread, blocking this one (a read, like a token's card).
  func run<Value: Sendable>(_ call: @escaping @Sendable (any RemoteGateway) async -> Value) -> Value {
    let gateway = self.gateway
    return thread.run { await call(gateway) }
  }

  /// Closes the gateway's connections (waiting for that).
  public func shutdown() {
    let gateway = self.gateway
    thread.run { await gateway.shutdown() }
  }
}
