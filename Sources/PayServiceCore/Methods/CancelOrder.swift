/// Voids an authorized order: its hold is released (no money moved) and every line restocked.
/// Back office only (`--back-office`).
public enum CancelOrder: RPCMethod {
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

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let config = context.config
    return try BackOffice.run(
      kind: "cancel", keyName: "cancelId", key: params.cancelId, orderId: params.orderId,
      fingerprint: BackOffice.fingerprint(params, Self.params), context: context
    ) { order, transaction, now in
      guard order.status == .authorized else {
        return .failed(.notAuthorized, BackOffice.notAuthorizedMessage(order.status, action: "canceled"))
      }
      switch try BackOffice.callGateway(order, kind: "cancel", keyName: "cancelId", key: params.cancelId, context: context, {
        gateway, paymentId, idempotencyKey in
        await gateway.cancel(paymentId: paymentId, idempotencyKey: idempotencyKey)
      }) {
      case .sandbox, .done: break
      case .declined(let message): return .failed(.gatewayError, message)
      case .failed(let failure): return .failed(failure)
      }
      if let authorizationId = order.authorizationId {
        guard try transaction.markReleased(authorizationId, at: now) else {
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
          orderId: order.orderId, position: order.nextEventPosition, kind: .canceled, at: now,
          amountMinor: order.amountMinor, reference: params.cancelId, reason: params.reason))
      return .succeeded(
        Succeeded(
          orderId: order.orderId, cancelId: params.cancelId, amountReleased: config.format(order.amountMinor),
          restocked: order.lines.map { Restocked(sku: $0.sku, quantity: $0.quantity) }))
    }
  }
}
