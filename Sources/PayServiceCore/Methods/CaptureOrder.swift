/// Takes the money of an authorized order (placed with `gateway.capture: manual`), in full or in
/// part; the rest of the hold is released. Back office only (`--back-office`).
public enum CaptureOrder: OperationMethod {
  public static let name = "captureOrder"

  public static let documentation = MethodDocumentation(
    summary: "Capture an authorized order, fully or partly (at shipment); the rest is released.",
    description: """
      Captures an order processOrder authorized with gateway.capture manual: amount (default: all of it) \
      is taken and the rest of the hold released, and the order becomes paid. captureId is the client's \
      idempotency key: the same captureId with the same params returns the stored result and captures \
      nothing more; with other params it is error -32004. A failure (status failed, failureCode \
      not_authorized when the order is not authorized, capture_exceeds_authorized, authorization_expired \
      once the order's captureBefore has passed) changes nothing and leaves the captureId unused.
      """,
    errors: [.storeUnavailable, .orderNotFound, .idempotencyKeyConflict], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  public struct Params: Sendable {
    public var orderId = ""
    public var amount: Amount?
    public var captureId = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member("orderId", \.orderId, .required, .string("From processOrder or listOrders.", minLength: 1)),
      .member(
        "amount", \.amount, .optional,
        .string("How much to take, at most the authorized amount; default all of it.", pattern: MoneyText.pattern),
        read: BackOffice.readPositiveAmount("cancelOrder releases a whole authorization")),
      .member(
        "captureId", \.captureId, .required,
        BackOffice.keySchema("Your idempotency key for this capture: 1 to 255 printable ASCII characters."),
        read: BackOffice.readKey),
    ])

  /// A capture succeeded.
  public struct Succeeded: Equatable, Sendable, WireObject {
    public var orderId = ""
    public var captureId = ""
    public var amountCaptured = ""
    public var amountReleased = ""
    public var orderStatus = OrderStatus.paid

    public static let shape = ObjectShape<Succeeded>(
      blank: { Succeeded() },
      [
        .constant("status", "succeeded"), .member("orderId", \.orderId), .member("captureId", \.captureId),
        .member("amountCaptured", \.amountCaptured, .required, .string("The money taken.", pattern: MoneyText.pattern)),
        .member(
          "amountReleased", \.amountReleased, .required,
          .string("The rest of the authorization, released.", pattern: MoneyText.pattern)),
        .member("orderStatus", \.orderStatus),
      ])
  }

  public typealias Result = BackOffice.Result<Succeeded>

  public static func operation(_ params: Params, context: ServiceContext) -> Capture {
    Capture(params: params, fingerprint: BackOffice.fingerprint(params, Self.params))
  }

  /// captureOrder as an operation of the journal (kind `capture`, keyed by the captureId).
  public struct Capture: BackOfficeOperation, GatewayOperation {
    public typealias Succeeded = CaptureOrder.Succeeded

    public static let kind = "capture"

    let params: Params
    public let fingerprint: String
    public var key: String { params.captureId }
    public var subject: String? { params.orderId }
    public var conflict: ServiceError { .idempotencyKeyConflict("captureId") }

    /// What is sent to the order's gateway, and recorded when it is done.
    public struct Call: Sendable, WireObject, GatewayKeyed {
      public var orderId = ""
      public var captureId = ""
      var amountMinor = 0
      public var paymentId = ""
      public var idempotencyKey = ""

      public static let shape = ObjectShape<Call>(
        blank: { Call() },
        [
          .member("orderId", \.orderId), .member("captureId", \.captureId), .member("amountMinor", \.amountMinor),
          .member("paymentId", \.paymentId), .member("idempotencyKey", \.idempotencyKey),
        ])
    }

    public func prepare(
      _ order: OrderState, _ transaction: any OrderTransaction, context: ServiceContext, now: Int64
    ) throws -> Preparation<Result, Call> {
      let config = context.config
      guard order.status == .authorized else {
        return .done(.failed(.notAuthorized, BackOffice.notAuthorizedMessage(order.status, action: "captured")), final: false)
      }
      if let busy = try BackOffice.holdChangePending(on: order, transaction, now: now) { return .done(.failed(busy), final: false) }
      // An authorization the gateway let lapse cannot be captured: said at once, nothing sent.
      if order.gatewayPaymentId != nil, let text = try transaction.locked().orderDocument(order.orderId),
        let captureBefore = try StoredJSON.read(text, as: OrderDocument.self, "order document").captureBefore,
        let deadline = RFC3339.parse(captureBefore), now >= deadline
      {
        let name = context.gatewayCalls?.gateway.name ?? "The gateway"
        return .done(
          .failed(
            .authorizationExpired,
            """
            The authorization expired at \(captureBefore): \(name) cancels a payment left uncaptured that long, so \
            nothing can be captured. Cancel the order with cancelOrder, and ask the buyer to pay again.
            """), final: false)
      }
      let amount = params.amount?.minor ?? order.amountMinor
      guard amount <= order.amountMinor else {
        return .done(
          .failed(
            .captureExceedsAuthorized,
            "\(config.format(amount)) is more than the \(config.format(order.amountMinor)) \(order.currencyCode) "
              + "authorized; capture at most \(config.format(order.amountMinor))."), final: false)
      }
      let call = Call(orderId: order.orderId, captureId: params.captureId, amountMinor: Int(amount))
      return try route(call, order, transaction, context: context, now: now)
    }

    public static func sender(_ context: ServiceContext) -> (@Sendable (Call) -> PendingCall<GatewayReply<GatewayPayment>>)? {
      let currencyCode = context.config.currency.code
      return BackOffice.sender(context) { gateway, call in await gateway.capture(request(call, currencyCode)) }
    }

    static func request(_ call: Call, _ currencyCode: String) -> GatewayCaptureRequest {
      GatewayCaptureRequest(
        paymentId: call.paymentId, amountMinor: Int64(call.amountMinor), currencyCode: currencyCode,
        orderId: call.orderId, captureId: call.captureId, idempotencyKey: call.idempotencyKey)
    }

    public static func work(_ call: Call, context: ServiceContext) -> GatewayWork {
      .capture(request(call, context.config.currency.code))
    }

    /// Records the capture: the hold settled, the order paid.
    public static func record(
      _ call: Call, _ order: OrderState, _ transaction: any OrderTransaction, context: ServiceContext, now: Int64
    ) throws -> Result {
      guard order.status == .authorized else {
        throw StoreError.unavailable(reason: "order \(order.orderId) changed while its capture was pending")
      }
      let (config, at, amount) = (context.config, RFC3339.format(now), Int64(call.amountMinor))
      if let authorizationId = order.authorizationId {
        try transaction.capture(authorizationId, chargeId: order.chargeId, at: at)
      }
      try transaction.updateOrder(
        order.orderId, status: .paid, capturedMinor: amount, refundedMinor: 0, shippingRefunded: false)
      try transaction.insert(
        OrderEventRow(
          orderId: order.orderId, position: order.nextEventPosition, kind: .captured, at: at, amountMinor: amount,
          reference: call.captureId))
      try WalletOrderUpdates.changed(order.orderId, transaction, context: context, now: now)
      return .succeeded(
        Succeeded(
          orderId: order.orderId, captureId: call.captureId, amountCaptured: config.format(amount),
          amountReleased: config.format(order.amountMinor - amount)))
    }
  }
}
