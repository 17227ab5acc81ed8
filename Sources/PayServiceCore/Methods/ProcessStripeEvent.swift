/// A Stripe webhook delivery, passed on by the merchant's webhook endpoint: verified with the
/// endpoint's signing secret, then recorded once by its event id in the journal (kind
/// `stripeEvent`). Not a back-office method: the endpoint that receives Stripe's webhooks is not
/// the back office.
public enum ProcessStripeEvent: RPCMethod {
  public static let name = "processStripeEvent"

  public static let documentation = MethodDocumentation(
    summary: "Verify a Stripe webhook delivery and record its event once.",
    description: """
      Give the request body exactly as received (payload) and its Stripe-Signature header (signature). The \
      signature is checked as Stripe documents it: some v1 HMAC-SHA256 of "t.payload" under the webhook \
      secret (the environment variable gateway.webhookSecretVariable, default STRIPE_WEBHOOK_SECRET; \
      several separated by commas while one is rolled), compared in constant time, with t within 300 s of \
      the service clock. A delivery that fails a check, or a payload that is not a Stripe event, is failed \
      with the reason and changes nothing: answer the webhook with a 400. A verified event is recorded once \
      by its id and answered succeeded (answer the webhook with a 2xx); Stripe's redelivery of the same \
      event is answered the same, and recorded nothing more. What the event says goes on its order once, \
      whatever order events arrive in (a refund only moves forward, a dispute keeps its latest stage): a \
      payment_intent.* event about an order a lost answer left pending sends its pending charge again, as \
      recovery would (order_resumed); a refund event settles a refund payservice made (refund_succeeded, \
      refund_failed: its amount comes off the order) or puts one made outside payservice, in the \
      Dashboard, on the order, amount only (refund_recorded), attached only through the order's own \
      PaymentIntent; a charge.dispute.* event shows the dispute \
      on the order, disputed while open or lost (dispute_opened, dispute_updated, dispute_won, \
      dispute_lost, dispute_closed). An event about a refund payservice is still recording is failed \
      retry_later and not recorded: answer the webhook with a 503 and Stripe sends it again. A refund or \
      dispute that does not fit its order (another currency, more than the order captured or has left to \
      refund, an amount past 10^15 minor units) is recorded with effect refused and the reason in message, \
      and changes nothing: a redelivery answers the same. An event whose livemode is not the configured \
      key's mode (gateway.mode) is failed wrong_mode and not recorded. Every other \
      event is recorded and acknowledged (effect none).
      """,
    errors: [.storeUnavailable, .idempotencyKeyConflict], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  /// Stripe's events are at most a few tens of KiB; a body larger than this is not one.
  public static let maxPayloadBytes = 1 << 20

  public struct Params: Sendable {
    public var payload = ""
    public var signature = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "payload", \.payload, .required,
        .string("The webhook request's body exactly as received (not parsed and written again).", minLength: 1),
        read: ParamReader.string(maxBytes: maxPayloadBytes)),
      .member(
        "signature", \.signature, .required,
        .string("The request's Stripe-Signature header: t=…,v1=…", maxLength: 4096),
        read: { value, path, reader in
          guard let header = reader.string(value, path(), nonEmpty: false) else { return nil }
          guard header.utf8.count <= 4096 else {
            reader.fail(path(), "must be at most 4096 bytes, got \(header.utf8.count)")
            return nil
          }
          return header
        }),
    ])

  /// Why a delivery was not recorded.
  public enum FailureCode: String, Sendable, WireEnum {
    /// This payservice has no webhook secret: its gateway is not Stripe, or the variable is unset.
    case notConfigured = "not_configured"
    /// The Stripe-Signature header is missing parts (no t=, no v1=).
    case malformedSignature = "malformed_signature"
    /// No v1 signature matches the payload under the secret: not Stripe's, or changed on the way.
    case invalidSignature = "invalid_signature"
    /// Signed more than 300 s before the service clock: a replayed delivery.
    case staleTimestamp = "stale_timestamp"
    /// Signed more than 300 s after the service clock.
    case futureTimestamp = "future_timestamp"
    /// Signed, but not a Stripe event object (JSON with an id evt_…, a type and created).
    case notAnEvent = "not_an_event"
    /// About a refund payservice is still recording: nothing recorded; Stripe's next delivery
    /// (answer 503) is taken in.
    case retryLater = "retry_later"
    /// A live event at a test-mode payservice, or a test event at a live one.
    case wrongMode = "wrong_mode"
  }

  public struct Rejected: Equatable, Sendable, WireObject, FailureReporting {
    public var failureCode = FailureCode.invalidSignature
    public var message = ""

    public static let shape = ObjectShape<Rejected>(
      blank: { Rejected() },
      [
        .constant("status", "failed"), .member("failureCode", \.failureCode),
        .member("message", \.message, .required, .string("Which check failed."), read: ParamReader.anyString),
      ])

    public var report: ResultFailure { ResultFailure(status: "failed", code: failureCode.rawValue, message: message) }
  }

  /// A verified event, recorded.
  public struct Recorded: Equatable, Sendable, WireObject {
    public var eventId = ""
    public var type = ""
    public var livemode = false
    /// When Stripe created the event (its `created`).
    public var created = ""
    /// The order the event is about, when it is one of this store's.
    public var orderId: String?
    /// What the event changed in the store.
    public var effect = "none"
    /// When payservice first recorded it.
    public var recordedAt = ""
    /// Why the event changed nothing, when its effect is refused.
    public var message: String?

    public static let shape = ObjectShape<Recorded>(
      blank: { Recorded() },
      [
        .constant("status", "succeeded"),
        .member("eventId", \.eventId, .required, .string("Stripe's event id (evt_…).")),
        .member("type", \.type, .required, .string("The event type, like charge.refunded.")),
        .member("livemode", \.livemode),
        .member("created", \.created, .required, Shapes.timestamp),
        .member("orderId", \.orderId, .optional, .string("The order the event is about, when it is one of this store's.")),
        .member(
          "effect", \.effect, .required,
          .string(
            """
            What the event changed: order_resumed (the order's pending charge was sent again, as recovery \
            would), refund_recorded (a refund made outside payservice is on the order), refund_succeeded (a \
            pending refund went through), refund_failed (a refund came back: its amount is off the order), \
            dispute_opened, dispute_updated, dispute_won (its funds are back), dispute_lost, dispute_closed \
            (an inquiry closed), or none (recorded and acknowledged; also for an event older than what the \
            order shows).
            """,
            values: GatewayReport.Effect.allCases.map(\.rawValue))),
        .member("recordedAt", \.recordedAt, .required, Shapes.timestamp),
        .member(
          "message", \.message, .optional,
          .string("With effect refused: what about the event does not fit its order."), read: ParamReader.anyString),
      ])
  }

  public typealias Result = Outcome<Recorded, Rejected>

  public static let operationKinds: [any Operation.Type] = [Recording.self]

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let (result, resumed) = try record(params, context: context)
    try OperationRunner.complete(resumed)
    return result
  }

  /// The answer, and the pending work about the event's order to send again: what recovery (the
  /// same request again, or the sweep at start) would send. A redelivered event resumes it too,
  /// so that an order still pending after a first try is tried again.
  static func record(_ params: Params, context: ServiceContext) throws -> (Result, [any Resumed]) {
    let (result, event) = try verifyAndRecord(params, context: context)
    // Only an event recorded while its order had work pending resumes it (most payment_intent
    // events are about orders long settled: they read nothing more).
    guard case .succeeded(let recorded) = result, recorded.effect == "order_resumed",
      let orderId = event?.paymentIntentOrderId
    else { return (result, []) }
    return (result, try OperationRunner.resumable(subject: orderId, context: context))
  }

  /// The answer, and the event when the delivery was Stripe's.
  static func verifyAndRecord(_ params: Params, context: ServiceContext) throws -> (Result, StripeEvent?) {
    guard let secrets = context.gatewayCalls?.webhookSecrets, !secrets.isEmpty else {
      let variable = context.config.gateway.stripe?.webhookSecretVariable
      let message =
        variable.map { "the environment variable \($0) (gateway.webhookSecretVariable) is not set" }
        ?? "this payservice's gateway is not Stripe: it takes no Stripe webhooks"
      return (.failed(Rejected(failureCode: .notConfigured, message: message)), nil)
    }
    if let failure = StripeWebhookSignature.verify(
      payload: params.payload, header: params.signature, secrets: secrets, now: context.clock.now())
    {
      let code: FailureCode
      switch failure {
      case .malformedHeader: code = .malformedSignature
      case .noMatchingSignature: code = .invalidSignature
      case .staleTimestamp: code = .staleTimestamp
      case .futureTimestamp: code = .futureTimestamp
      }
      return (.failed(Rejected(failureCode: code, message: failure.message)), nil)
    }
    guard let event = StripeEvent(payload: params.payload) else {
      let message = "the payload is signed but is not a Stripe event (a JSON object with id evt_…, type and created)"
      return (.failed(Rejected(failureCode: .notAnEvent, message: message)), nil)
    }
    if let mode = context.config.gateway.stripe?.mode, event.livemode != (mode == .live) {
      let message = """
        the event is \(event.livemode ? "live" : "a test event") and this payservice's key is in \(mode.rawValue) mode \
        (gateway.mode): nothing was recorded; point the webhook endpoint of the other mode elsewhere
        """
      return (.failed(Rejected(failureCode: .wrongMode, message: message)), nil)
    }
    do {
      return (try OperationRunner.run(Recording(event: event), context: context), event)
    } catch let wait as RetryLater {
      let message = """
        the event is about refund \(wait.refundId), which payservice is still recording (its refundOrder waits for \
        Stripe's answer): nothing was recorded; answer the webhook with a 503 and Stripe sends it again
        """
      return (.failed(Rejected(failureCode: .retryLater, message: message)), nil)
    }
  }

  /// Thrown out of an event's transaction (undoing it) when it must be heard again later.
  struct RetryLater: Error {
    var refundId: String
  }

  /// The members of a Stripe event this method reads.
  struct StripeEvent: Equatable {
    var id: String
    var type: String
    var created: Int64
    var livemode: Bool
    /// `data.object`: the object the event is about, as it was when the event happened.
    var object: JSONValue?
    /// The order a `payment_intent.*` event's PaymentIntent pays for (its `metadata.order_id`).
    var paymentIntentOrderId: String?

    init?(payload: String) {
      guard case .object(let object)? = try? JSONParser.parse(payload), case .string("event")? = object["object"],
        case .string(let id)? = object["id"], id.hasPrefix("evt_"), (5...255).contains(id.utf8.count),
        id.utf8.allSatisfy({ (0x21...0x7E).contains($0) }),
        case .string(let type)? = object["type"], !type.isEmpty, type.utf8.count <= 255,
        case .number(let text)? = object["created"], text.utf8.count <= 12, let created = Int64(text),
        (0...253_402_300_799).contains(created)
      else { return nil }
      self.id = id
      self.type = type
      self.created = created
      if case .bool(let live)? = object["livemode"] { livemode = live } else { livemode = false }
      if case .object(let data)? = object["data"] { self.object = data["object"] }
      if type.hasPrefix("payment_intent."), case .object(let intent)? = self.object,
        case .string("payment_intent")? = intent["object"],
        case .object(let metadata)? = intent["metadata"], case .string(let orderId)? = metadata["order_id"]
      {
        paymentIntentOrderId = orderId
      }
    }

    /// The event types whose object is a refund.
    static let refundTypes: Set<String> = ["refund.created", "refund.updated", "refund.failed", "charge.refund.updated"]

    /// The refunds the event reports: its refund, or the refunds a `charge.refunded` event's charge
    /// lists (API versions before 2022-11-15 include them; later ones do not, and Stripe sends a
    /// `refund.created` for each refund anyway).
    var refunds: [GatewayReport.Refund] {
      if Self.refundTypes.contains(type) { return object.flatMap(GatewayReport.Refund.init).map { [$0] } ?? [] }
      guard type == "charge.refunded", case .object(let charge)? = object, case .object(let list)? = charge["refunds"],
        case .array(let data)? = list["data"]
      else { return [] }
      return data.compactMap(GatewayReport.Refund.init)
    }

    /// The dispute a `charge.dispute.*` event reports.
    var dispute: GatewayReport.Dispute? {
      guard type.hasPrefix("charge.dispute.") else { return nil }
      return object.flatMap(GatewayReport.Dispute.init)
    }
  }

  /// A verified event as an operation of the journal (kind `stripeEvent`, keyed by the event id):
  /// recorded in one transaction, so that a redelivery is answered from the journal.
  public struct Recording: KeyLockedOperation {
    public static let kind = "stripeEvent"

    let event: StripeEvent
    public var key: String { event.id }
    public var subject: String? { nil }
    /// Stripe sends an event again unchanged; the same id with another type or time is not Stripe's.
    public var fingerprint: String { "\(event.type) \(event.created) \(event.livemode)" }
    public var conflict: ServiceError { .stripeEventConflict }

    /// Applies what the event says, in the transaction that records it: a refund (payservice's,
    /// settled; or one made outside payservice, recorded), a dispute, or a pending order to resume
    /// once this transaction is over. An event about a refund payservice is still recording is not
    /// recorded (`retry_later`): Stripe sends it again.
    public func prepare(_ subject: Void, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64)
      throws -> Preparation<Result, NoCall>
    {
      var effect = GatewayReport.Effect.none
      var orderId: String?
      var refusals: [String] = []
      if let order = event.paymentIntentOrderId {
        if try !transaction.pendingOperations(subject: order).isEmpty {
          // Resumed once this transaction is over, as recovery would (`ProcessStripeEvent.record`).
          (effect, orderId) = (.orderResumed, order)
        } else if try transaction.orderDocument(order) != nil {
          orderId = order
        }
      }
      var applied: [GatewayReport.Applied] = try event.refunds.map {
        try GatewayReport.apply($0, transaction, context: context, now: now)
      }
      if let dispute = event.dispute {
        let observed = DisputeRow.Observation(rank: DisputeRow.rank(of: dispute.status), at: event.created, by: event.id)
        applied.append(try GatewayReport.apply(dispute, observed: observed, transaction, context: context, now: now))
      }
      for outcome in applied {
        switch outcome {
        case .retryLater(let refundId):
          // Nothing of this transaction is kept: the key stays unused for Stripe's next delivery.
          throw RetryLater(refundId: refundId)
        case .applied(let order, let made):
          if made != .none { (effect, orderId) = (made, order) } else if orderId == nil { orderId = order }
        case .refused(let order, let reason):
          refusals.append(reason)
          if orderId == nil { orderId = order }
        }
      }
      if !refusals.isEmpty, effect == .none {
        // Recorded as refused: Stripe's redelivery answers the same, and changes nothing either.
        effect = .refused
      }
      return .done(
        .succeeded(
          Recorded(
            eventId: event.id, type: event.type, livemode: event.livemode, created: RFC3339.format(event.created),
            orderId: orderId, effect: effect.rawValue, recordedAt: RFC3339.format(now),
            message: refusals.isEmpty ? nil : refusals.joined(separator: "; "))),
        final: true)
    }
  }
}
