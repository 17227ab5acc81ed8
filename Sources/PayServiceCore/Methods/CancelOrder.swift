/// Voids an authorized order: its hold is released (no money moved) and every line restocked.
/// Back office only (`--back-office`).
public enum CancelOrder: OperationMethod {
  public static let name = "cancelOrder"

  public static let documentation = MethodDocumentation(
    summary: "Cancel an authorized order: release the hold and restock every line.",
    description: """
      Voids an order processOrder authorized with gateway.capture manual: no money moves, the \
      authorization is released and every line goes back on hand, and the order becomes canceled. A \
      captured order (paid, partially_refunded, refunded) cannot be canceled: the failure not_authorized \
      says to refund it with refundOrder. cancelId is the client's idempotency key: the same cancelId \
      with the same params returns the stored result; with other params it is error -32004. A failure \
      changes nothing and leaves the cancelId unused.
      """,
    errors: [.storeUnavailable, .orderNotFound, .idempotencyKeyConflict], readOnly: false, idempotent: true,
    destructive: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  public struct Params: Sendable {
    public var orderId = ""
    public var reason: String?
    public var cancelId = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member("orderId", \.orderId, .required, .string("From processOrder or listOrders.", minLength: 1)),
      .member(
        "reason", \.reason, .optional, .string("Why, for the order's history (at most 500 characters).", maxLength: 500),
        read: RefundOrder.readReason),
      .member(
        "cancelId", \.cancelId, .required,
        BackOffice.keySchema("Your idempotency key for this cancel: 1 to 255 printable ASCII characters."),
        read: BackOffice.readKey),
    ])

  /// Units put back on hand.
  public struct Restocked: Equatable, Sendable, WireObject {
    public var sku = ""
    public var quantity = 1

    public static let shape = ObjectShape<Restocked>(
      blank: { Restocked() }, [.member("sku", \.sku), .member("quantity", \.quantity, .required, .integer(minimum: 1))])
  }

  /// A cancel succeeded.
  public struct Succeeded: Equatable, Sendable, WireObject {
    public var orderId = ""
    public var cancelId = ""
    public var amountReleased = ""
    public var restocked: [Restocked] = []
    public var orderStatus = OrderStatus.canceled

    public static let shape = ObjectShape<Succeeded>(
      blank: { Succeeded() },
      [
        .constant("status", "succeeded"), .member("orderId", \.orderId), .member("cancelId", \.cancelId),
        .member(
          "amountReleased", \.amountReleased, .required,
          .string("The authorization released; nothing was taken.", pattern: MoneyText.pattern)),
        .member("restocked", \.restocked, .required, .array(Restocked.schema, "Every line, back on hand.")),
        .member("orderStatus", \.orderStatus),
      ])
  }

  public typealias Result = BackOffice.Result<Succeeded>

  public static func operation(_ params: Params, context: ServiceContext) -> Cancellation {
    Cancellation(params: params, fingerprint: BackOffice.fingerprint(params, Self.params))
  }

  /// cancelOrder as an operation of the journal (kind `cancel`, keyed by the cancelId).
  public struct Cancellation: BackOfficeOperation, GatewayOperation {
    public typealias Succeeded = CancelOrder.Succeeded

    public static let kind = "cancel"

    let params: Params
    public let fingerprint: String
    public var key: String { params.cancelId }
    public var subject: String? { params.orderId }

    public func matches(_ stored: String, _ subject: OrderState, context: ServiceContext) throws -> Bool {
      BackOffice.matches(stored, fingerprint, reason: params.reason)
    }
    public var conflict: ServiceError { .idempotencyKeyConflict("cancelId") }

    /// What is sent to the order's gateway, and recorded when it is done.
    public struct Call: Sendable, WireObject, GatewayKeyed {
      public var orderId = ""
      public var cancelId = ""
      var reason: String?
      public var paymentId = ""
      public var idempotencyKey = ""

      public static let shape = ObjectShape<Call>(
        blank: { Call() },
        [
          .member("orderId", \.orderId), .member("cancelId", \.cancelId),
          .member("reason", \.reason, .optional, read: ParamReader.anyString), .member("paymentId", \.paymentId),
          .member("idempotencyKey", \.idempotencyKey),
        ])
    }

    public func prepare(
      _ order: OrderState, _ transaction: any OrderTransaction, context: ServiceContext, now: Int64
    ) throws -> Preparation<Result, Call> {
      guard order.status == .authorized else {
        return .done(.failed(.notAuthorized, BackOffice.notAuthorizedMessage(order.status, action: "canceled")), final: false)
      }
      if let busy = try BackOffice.holdChangePending(on: order, transaction, now: now) { return .done(.failed(busy), final: false) }
      let call = Call(orderId: order.orderId, cancelId: params.cancelId, reason: params.reason)
      return try route(call, order, transaction, context: context, now: now)
    }

    public static func sender(_ context: ServiceContext) -> (@Sendable (Call) -> PendingCall<GatewayReply<GatewayPayment>>)? {
      BackOffice.sender(context) { gateway, call in await gateway.cancel(request(call)) }
    }

    static func request(_ call: Call) -> GatewayCancelRequest {
      GatewayCancelRequest(
        paymentId: call.paymentId, orderId: call.orderId, cancelId: call.cancelId, idempotencyKey: call.idempotencyKey)
    }

    public static func work(_ call: Call, context: ServiceContext) -> GatewayWork { .cancel(request(call)) }

    /// Records the cancel: the hold released, every line restocked, the order canceled.
    public static func record(
      _ call: Call, _ order: OrderState, _ transaction: any OrderTransaction, context: ServiceContext, now: Int64
    ) throws -> Result {
      guard order.status == .authorized else {
        throw StoreError.unavailable(reason: "order \(order.orderId) changed while its cancel was pending")
      }
      let at = RFC3339.format(now)
      if let authorizationId = order.authorizationId {
        guard try transaction.markReleased(authorizationId, at: at) else {
          throw StoreError.unavailable(reason: "authorization \(authorizationId) is not held")
        }
      }
      for line in order.lines {
        guard try transaction.restock(line.sku, by: line.quantity) else {
          throw StoreError.unavailable(reason: "stock of \(line.sku) cannot take back \(line.quantity) units")
        }
      }
      try transaction.updateOrder(
        order.orderId, status: .canceled, capturedMinor: nil, refundedMinor: 0, shippingRefunded: false)
      try transaction.insert(
        OrderEventRow(
          orderId: order.orderId, position: order.nextEventPosition, kind: .canceled, at: at,
          amountMinor: order.amountMinor, reference: call.cancelId, reason: call.reason))
      try WalletOrderUpdates.changed(order.orderId, transaction, context: context, now: now)
      return .succeeded(
        Succeeded(
          orderId: order.orderId, cancelId: call.cancelId, amountReleased: context.config.format(order.amountMinor),
          restocked: order.lines.map { Restocked(sku: $0.sku, quantity: $0.quantity) }))
    }
  }
}
