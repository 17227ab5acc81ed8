/// Takes the money of an authorized order (placed with `gateway.capture: manual`), in full or in
/// part; the rest of the hold is released. Back office only (`--back-office`).
public enum CaptureOrder: RPCMethod {
  public static let name = "captureOrder"

  public static let documentation = MethodDocumentation(
    summary: "Capture an authorized order, fully or partly (at shipment); the rest is released.",
    description: """
      Captures an order processOrder authorized with gateway.capture manual: amount (default: all of it) \
      is taken and the rest of the hold released, and the order becomes paid. captureId is the client's \
      idempotency key: the same captureId with the same params returns the stored result and captures \
      nothing more; with other params it is error -32004. A failure (status failed, failureCode \
      not_authorized when the order is not authorized, capture_exceeds_authorized) changes nothing and \
      leaves the captureId unused.
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

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let config = context.config
    return try BackOffice.run(
      kind: "capture", keyName: "captureId", key: params.captureId, orderId: params.orderId,
      fingerprint: BackOffice.fingerprint(params, Self.params), context: context
    ) { order, transaction, now in
      guard order.status == .authorized else {
        return .failed(.notAuthorized, BackOffice.notAuthorizedMessage(order.status, action: "captured"))
      }
      let amount = params.amount?.minor ?? order.amountMinor
      guard amount <= order.amountMinor else {
        return .failed(
          .captureExceedsAuthorized,
          "\(config.format(amount)) is more than the \(config.format(order.amountMinor)) \(order.currencyCode) "
            + "authorized; capture at most \(config.format(order.amountMinor)).")
      }
      switch try BackOffice.callGateway(order, kind: "capture", keyName: "captureId", key: params.captureId, context: context, {
        gateway, paymentId, idempotencyKey in
        await gateway.capture(paymentId: paymentId, amountMinor: amount, idempotencyKey: idempotencyKey)
      }) {
      case .sandbox, .done: break
      case .declined(let message): return .failed(.gatewayError, message)
      case .failed(let failure): return .failed(failure)
      }
      if let authorizationId = order.authorizationId {
        try transaction.capture(authorizationId, chargeId: order.chargeId, at: now)
      }
      try transaction.updateOrder(
        order.orderId, status: .paid, capturedMinor: amount, refundedMinor: 0, shippingRefunded: false)
      try transaction.insert(
        OrderEventRow(
          orderId: order.orderId, position: order.nextEventPosition, kind: .captured, at: now, amountMinor: amount,
          reference: params.captureId))
      return .succeeded(
        Succeeded(
          orderId: order.orderId, captureId: params.captureId, amountCaptured: config.format(amount),
          amountReleased: config.format(order.amountMinor - amount)))
    }
  }
}
