/// What the back-office methods (captureOrder, cancelOrder, refundOrder) share: the client's
/// idempotency key, failure results, and how their operations (`Operation`, one per method) lock
/// the order, reach its gateway and read its replies.
public enum BackOffice {
  /// Why a back-office call did not go through. Apart from `refund_declined` (the gateway's answer,
  /// kept under the key), a failure leaves the key unused: fix the request and send it again.
  public enum FailureCode: String, Sendable, WireEnum {
    /// capture or cancel of an order that is not `authorized`.
    case notAuthorized = "not_authorized"
    case captureExceedsAuthorized = "capture_exceeds_authorized"
    /// refund of an order that is not `paid` or `partially_refunded`, or of lines the store has no
    /// per-line amounts for.
    case orderNotRefundable = "order_not_refundable"
    case refundExceedsRemaining = "refund_exceeds_remaining"
    case quantityExceedsRemaining = "quantity_exceeds_remaining"
    case unknownSku = "unknown_sku"
    /// adjustStock: the change would take the stock on hand below zero.
    case insufficientStock = "insufficient_stock"
    case shippingAlreadyRefunded = "shipping_already_refunded"
    /// `amount` with lines or shipping is more than they paid: it may only lower the refund.
    case amountExceedsComputed = "amount_exceeds_computed"
    /// The gateway refused the refund: nothing changed, and the key keeps this answer.
    case refundDeclined = "refund_declined"
    /// The order's remote gateway did not answer: the request is pending under its key; the same
    /// request again (or the sweep at start-up) finds out what the gateway did, and never does it twice.
    case gatewayUnavailable = "gateway_unavailable"
    /// The order's remote gateway refused the request (its error type and message say why).
    case gatewayError = "gateway_error"
    /// The order's remote gateway accepted the request and reports its outcome later (Adyen's
    /// notifications): the request is pending under its key until the report arrives.
    case outcomePending = "outcome_pending"
    /// captureOrder after the authorization lapsed (the order's `captureBefore`: Stripe cancels a
    /// PaymentIntent left uncaptured 7 days): nothing is sent; cancelOrder still cancels the order.
    case authorizationExpired = "authorization_expired"
    /// shipOrder of a canceled order: nothing ships.
    case orderCanceled = "order_canceled"
    /// shipOrder: a shipment's status would go back, or it is delivered or cancelled already.
    case statusBackwards = "status_backwards"
    /// shipOrder: another carrier or tracking number for a shipment recorded with others.
    case trackingChanged = "tracking_changed"
    /// shipOrder: the order has the most shipments it may have.
    case tooManyShipments = "too_many_shipments"

    /// Whether the answer is kept under the key: the gateway was asked and answered.
    var isFinal: Bool { self == .refundDeclined }
  }

  /// One problem with one part of the request (a refund line).
  public struct Problem: Equatable, Sendable, WireObject {
    public var path = ""
    public var message = ""

    public static let shape = ObjectShape<Problem>(
      blank: { Problem() },
      [
        .member("path", \.path, .required, .string("The params member, like lines[1].quantity.")),
        .member("message", \.message, .required, .string("What is wrong and what would be valid."), read: ParamReader.anyString),
      ])
  }

  /// A back-office call that did not go through, and why.
  public struct Failed: Equatable, Sendable, WireObject, FailureReporting {
    public var failureCode = FailureCode.notAuthorized
    public var message = ""
    public var errors: [Problem]?

    public static let shape = ObjectShape<Failed>(
      blank: { Failed() },
      [
        .constant("status", "failed"), .member("failureCode", \.failureCode),
        .member("message", \.message, .required, .string("Why, and what would be valid."), read: ParamReader.anyString),
        .member("errors", \.errors, .optional, .array(Problem.schema, "Each refund line that is not valid.")),
      ])

    public var report: ResultFailure {
      ResultFailure(
        status: "failed", code: failureCode.rawValue, message: message,
        lines: (errors ?? []).map { "\($0.path): \($0.message)" })
    }
  }

  /// A back-office answer: the method's success, or a failure.
  public typealias Result<Succeeded: WireObject & Equatable & Sendable> = Outcome<Succeeded, Failed>

  /// The schema of a client's idempotency key.
  static func keySchema(_ description: String) -> JSONSchema {
    .string(description, pattern: "^[\\x20-\\x7E]{1,255}$")
  }

  /// Reads an idempotency key: 1 to 255 printable ASCII characters (space to tilde).
  static let readKey: MemberReader<String> = { value, path, reader in
    guard case .string(let key) = value else {
      reader.fail(path(), "must be a string of 1 to 255 printable ASCII characters, got \(value.kindName)")
      return nil
    }
    guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
      reader.fail(path(), "must be 1 to 255 printable ASCII characters (space to ~), like \"refund-1001-a\"")
      return nil
    }
    return key
  }

  /// Reads an amount that must be more than zero.
  static func readPositiveAmount(_ what: String) -> MemberReader<Amount> {
    { value, path, reader in
      guard let amount = Amount.read(value, at: path, reader: reader) else { return nil }
      guard amount.minor > 0 else {
        reader.fail(path(), "must be more than \(MoneyText.format(0, digits: amount.digits)); \(what)")
        return nil
      }
      return amount
    }
  }

  /// The order a back-office operation is about, locked for the transaction (so that calls on one
  /// order take turns deciding); -32003 when unknown.
  static func lockOrder(_ orderId: String?, _ transaction: any BackOfficeBook) throws -> OrderState {
    guard let orderId, let order = try transaction.lockOrder(orderId) else {
      throw ServiceError.orderNotFound(orderId ?? "")
    }
    return order
  }

  /// Where an order's back-office call goes.
  enum Route {
    /// The order was charged by the sandbox: the store alone decides, in one transaction.
    case sandbox
    /// The order's remote gateway: its payment, and the idempotency key derived from the client's
    /// key (the same request after a lost answer or a crash is the same call, which the gateway
    /// does once).
    case remote(paymentId: String, idempotencyKey: String)
    /// The order was charged through a remote gateway this process does not have.
    case unavailable(Failed)
  }

  static func route(_ order: OrderState, kind: String, key: String, context: ServiceContext) -> Route {
    guard let paymentId = order.gatewayPaymentId else { return .sandbox }
    guard context.gatewayCalls != nil else {
      return .unavailable(
        Failed(
          failureCode: .gatewayUnavailable,
          message: "This order was charged through a remote gateway, and this payservice has none (gateway.kind is sandbox)."))
    }
    return .remote(
      paymentId: paymentId, idempotencyKey: Identifiers.backOfficeIdempotencyKey(kind: kind, orderId: order.orderId, key: key))
  }

  /// The work of `kind` pending at the order's gateway on `order`: each entry's key, call and when
  /// it was made. An order the sandbox charged has none, and asks for no locks.
  static func pending<Call: WireObject>(
    _ kind: String, as _: Call.Type, on order: OrderState, _ transaction: any OrderTransaction
  ) throws -> [(key: String, call: Call, created: String)] {
    guard order.gatewayPaymentId != nil else { return [] }
    return try transaction.locked().pendingOperations(subject: order.orderId).filter { $0.kind == kind }.map { entry in
      guard let request = entry.request else {
        throw StoreError.unavailable(reason: "operation \(kind) \(entry.key) is pending without its call")
      }
      return (entry.key, try StoredJSON.read(request, as: Call.self, "\(kind) call"), entry.created)
    }
  }

  /// A capture or cancel of `order` waiting for its gateway's answer, as the failure of another
  /// capture or cancel (the hold has one fate); nil when there is none.
  static func holdChangePending(on order: OrderState, _ transaction: any OrderTransaction, now: Int64) throws -> Failed? {
    let waiting = { (what: String, keyName: String, key: String, created: String) in
      guard let made = RFC3339.parse(created), now - made <= CaptureOrder.Capture.maxResendAgeSeconds else {
        return Failed(
          failureCode: .notAuthorized,
          message: """
            A \(what) of this order (\(keyName) \(key)) has waited for its gateway's answer for more than 23 hours, \
            and payservice will not send it again; look the order's payment up at the gateway.
            """)
      }
      return Failed(
        failureCode: .notAuthorized,
        message: "A \(what) of this order (\(keyName) \(key)) is waiting for its gateway's answer; send it again to complete it.")
    }
    if let entry = try pending(CaptureOrder.Capture.kind, as: CaptureOrder.Capture.Call.self, on: order, transaction).first {
      return waiting("capture", "captureId", entry.key, entry.created)
    }
    if let entry = try pending(CancelOrder.Cancellation.kind, as: CancelOrder.Cancellation.Call.self, on: order, transaction)
      .first
    {
      return waiting("cancel", "cancelId", entry.key, entry.created)
    }
    return nil
  }

  /// Makes a back-office call through the remote gateway, under the call's idempotency key.
  static func sender<Call: GatewayKeyed, Value: Sendable>(
    _ context: ServiceContext, _ call: @escaping @Sendable (any RemoteGateway, Call) async -> GatewayReply<Value>
  ) -> (@Sendable (Call) -> PendingCall<GatewayReply<Value>>)? {
    guard let calls = context.gatewayCalls else { return nil }
    return { request in calls.start(key: request.idempotencyKey) { await call($0, request) } }
  }

  /// What a reply that did not go through comes to (nil when it succeeded: the operation records
  /// that): a refusal that changed nothing releases the key, no answer (or a refusal whose cause
  /// may pass) leaves the call pending, the gateway holding the key for other params is -32004.
  static func settlement<Value, Succeeded>(
    of reply: GatewayReply<Value>, context: ServiceContext, declined: (GatewayDecline) -> Settlement<Result<Succeeded>>
  ) -> Settlement<Result<Succeeded>>? {
    let name = context.gatewayCalls?.gateway.name ?? "The gateway"
    switch reply {
    case .succeeded: return nil
    case .declined(let decline): return declined(decline)
    case .refused(let refusal) where refusal.type == "idempotency_error":
      // The gateway holds this key for a call with other params: the client reused its key.
      return .releasedAsConflict
    case .refused(let refusal) where refusal.final:
      return .released(.failed(.gatewayError, "\(name) refused the request (\(refusal.type)): \(refusal.message)"))
    case .refused(let refusal):
      return .pending(
        .failed(
          .gatewayError,
          """
          \(name) refused the request (\(refusal.type)): \(refusal.message) The request is pending: once the cause \
          is fixed, send the same request again.
          """))
    case .accepted(let reference):
      return .pending(
        .failed(
          .outcomePending,
          """
          \(name) accepted the request (its reference \(reference)) and says later what came of it: the order shows \
          the outcome once \(name)'s notification arrives. The same request again answers the same; it is never done twice.
          """))
    case .unanswered(let reason):
      return .pending(
        .failed(
          .gatewayUnavailable,
          "\(name) did not answer (\(reason)). The request is pending: send the same request again to complete it; it is never done twice."
        ))
    }
  }

  /// The answer for a pending back-office call that is not sent again.
  static func unsent<Succeeded>(_ reason: UnsentReason, orderId: String) -> Result<Succeeded> {
    switch reason {
    case .tooOld:
      return .failed(
        .gatewayError,
        """
        This request has been pending for more than 23 hours: its gateway may have forgotten the idempotency key, \
        so payservice will not send it again (that could do it twice). Look order \(orderId)'s payment up at the gateway.
        """)
    case .noSender:
      return .failed(
        .gatewayUnavailable,
        "This order was charged through a remote gateway, and this payservice has none (gateway.kind is sandbox).")
    }
  }

  /// The params as canonical JSON text: what a key is bound to.
  static func fingerprint<Params>(_ params: Params, _ shape: ObjectShape<Params>) -> String {
    var writer = JSONWriter()
    shape.write(params, to: &writer)
    return writer.string
  }

  /// Whether `stored`, a back-office call's recorded fingerprint, is this call's: the same text, or
  /// the same once its `reason` was erased with the order's personal data.
  static func matches(_ stored: String, _ fingerprint: String, reason: String?) -> Bool {
    guard stored != fingerprint else { return true }
    guard let reason, stored.contains(ErasePersonalData.Erasure.marker) else { return false }
    return stored == ErasePersonalData.Erasure.erasing(reason, in: fingerprint)
  }

  /// Why an order in `status` cannot be captured or canceled.
  static func notAuthorizedMessage(_ status: OrderStatus, action: String) -> String {
    switch status {
    case .authorized: return "The order is authorized."
    case .paid, .partiallyRefunded, .refunded, .disputed:
      return "The order was already captured (status \(status.rawValue)); it cannot be \(action). Refund it with refundOrder."
    case .canceled: return "The order was canceled; its authorization was released and nothing can be \(action)."
    case .pending:
      return "The order is pending: its payment's answer is not recorded yet. Send its processOrder again first."
    }
  }
}

/// What a back-office operation sends to an order's remote gateway: about an order's payment, under
/// an idempotency key (both empty while the sandbox decides).
public protocol GatewayKeyed: Sendable {
  var orderId: String { get }
  var paymentId: String { get set }
  var idempotencyKey: String { get set }
}

/// A back-office operation (capture, cancel, refund): about one order, locked at the start of each
/// of its transactions; recorded at once when the sandbox charged the order, else sent to the order's
/// gateway and recorded when it answers.
///
/// Their first step may run optimistically: it is given the books of an `OrderTransaction`, and
/// records in them what the sandbox did.
public protocol BackOfficeOperation: Operation
where
  Subject == OrderState, Call: GatewayKeyed, Result == BackOffice.Result<Succeeded>,
  Transaction == any OrderTransaction
{
  associatedtype Succeeded: WireObject & Equatable & Sendable
  /// Records what `call` did to the order.
  static func record(
    _ call: Call, _ order: OrderState, _ transaction: any OrderTransaction, context: ServiceContext, now: Int64
  ) throws -> Result
}

extension BackOfficeOperation {
  public static func lock(
    key: String, subject: String?, _ transaction: any OrderTransaction, context: ServiceContext
  ) throws -> OrderState {
    try BackOffice.lockOrder(subject, transaction)
  }

  public static func unsent(_ call: Call, because reason: UnsentReason, context: ServiceContext) -> Result {
    BackOffice.unsent(reason, orderId: call.orderId)
  }

  /// Optimistic for an order the sandbox charged: the order and the journal entry are checked
  /// unchanged when the writes are applied (and a capture's or cancel's hold still held, a refund's
  /// disputes still none). An order charged through a remote gateway, a refund of a disputed order,
  /// or one with a remote gateway's pending calls to count, takes locks.
  public static var isOptimistic: Bool { true }

  /// The order and the journal entry, the rows the first transaction reads.
  public var readAhead: ReadAhead {
    ReadAhead(orders: subject.map { [$0] } ?? [], entries: [ReadAhead.Entry(kind: Self.kind, key: key)])
  }

  /// Where a decided call goes: the sandbox's is recorded now (a final answer), a remote gateway's
  /// is sent; an order whose gateway this process lacks is a failure that changes nothing.
  func route(
    _ call: Call, _ order: OrderState, _ transaction: any OrderTransaction, context: ServiceContext, now: Int64
  ) throws -> Preparation<Result, Call> {
    switch BackOffice.route(order, kind: Self.kind, key: key, context: context) {
    case .sandbox: return .done(try Self.record(call, order, transaction, context: context, now: now), final: true)
    case .unavailable(let failure): return .done(.failed(failure), final: false)
    case .remote(let paymentId, let idempotencyKey):
      var call = call
      call.paymentId = paymentId
      call.idempotencyKey = idempotencyKey
      return .send(call)
    }
  }
}

extension BackOfficeOperation where Reply == GatewayReply<GatewayPayment> {
  /// A capture or cancel: recorded when the gateway did it; a decline (the gateway's final word,
  /// or its report that the capture or cancel failed) changes nothing on the order and is the
  /// answer kept under the key.
  public static func settle(
    _ call: Call, reply: Reply, _ order: OrderState, _ transaction: any StoreTransaction, context: ServiceContext,
    now: Int64
  ) throws -> Settlement<Result> {
    let settlement = BackOffice.settlement(of: reply, context: context) { decline -> Settlement<Result> in
      .settled(.failed(.gatewayError, decline.message))
    }
    return try settlement ?? .settled(record(call, order, transaction, context: context, now: now))
  }
}

extension Outcome where Failed == BackOffice.Failed {
  static func failed(_ code: BackOffice.FailureCode, _ message: String, errors: [BackOffice.Problem]? = nil) -> Outcome {
    .failed(BackOffice.Failed(failureCode: code, message: message, errors: errors))
  }

  /// Whether the answer is kept under the client's key: a success, or the gateway's final refusal.
  var isFinal: Bool {
    switch self {
    case .succeeded: return true
    case .failed(let failed): return failed.failureCode.isFinal
    }
  }
}
