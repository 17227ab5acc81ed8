/// One recorded order by id.
public enum GetOrder: RPCMethod {
  public static let name = "getOrder"

  public static let documentation = MethodDocumentation(
    summary: "Fetch a recorded order by its orderId.",
    description: """
      Returns the order processOrder recorded, as processOrder returned it, with where it stands now: \
      status (pending, authorized, paid, partially_refunded, refunded, canceled, or disputed while a dispute \
      is open or after one was lost), amountCaptured, amountRefunded, the refunds and the events (placed, \
      authorized, captured, canceled, refunded, refund_failed, dispute_opened, dispute_funds_withdrawn, \
      dispute_funds_reinstated, dispute_closed; each with time, amount and id). Once Stripe reported money \
      moving outside payservice, also amountRefundedOutside, amountDisputed, amountNet and the disputes. An \
      unknown orderId is error -32003. Changes nothing.
      """,
    errors: [.storeUnavailable, .orderNotFound], readOnly: true, idempotent: true)
  public static let usesStore = true

  public struct Params: Sendable {
    public var orderId = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() }, [.member("orderId", \.orderId, .required, .string("From processOrder.", minLength: 1))])

  public struct Result: MethodResult, WireObject {
    public var order = OrderDocument()

    public static let shape = ObjectShape<Result>(blank: { Result() }, [.member("order", \.order)])
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let config = context.config
    guard let stored = try context.store.order(id: params.orderId) else {
      // Not recorded yet: it may be pending at a remote gateway.
      guard
        var order = try PendingOrders.of(context.store).first(where: { $0.document.orderId == params.orderId })?
          .document
      else { throw ServiceError.orderNotFound(params.orderId) }
      order.amountCaptured = config.format(0)
      order.amountRefunded = config.format(0)
      order.refunds = []
      order.events = [OrderEvent(type: .placed, at: order.createdAt, amount: order.amount, id: order.orderId)]
      return Result(order: order)
    }
    var order = try current(stored, config: config)
    let shipments = try context.store.write { try $0.shipments(orderId: params.orderId) }
    if !shipments.isEmpty { order.shipments = shipments.map(ShipmentRecord.init) }
    return Result(order: order)
  }

  /// A recorded order as it stands now: the document as placed, with its status, money, refunds,
  /// disputes and events as recorded since.
  public static func current(_ stored: StoredOrder, config: Config) throws -> OrderDocument {
    var order = try StoredJSON.read(stored.document, as: OrderDocument.self, "order document")
    // The document holds the order as placed: paid (charged at once) or authorized (manual capture).
    let placement = order.status == .authorized ? OrderEventRow.Kind.authorized : .captured
    order.status =
      stored.disputes.contains { DisputeRow.disputingStatuses.contains($0.status) } ? .disputed : stored.status
    order.amountCaptured = config.format(stored.capturedMinor ?? 0)
    order.amountRefunded = config.format(stored.refundedMinor)
    let refunds = try stored.refunds.map { text throws(StoreError) in
      try StoredJSON.read(text, as: RefundRecord.self, "refund")
    }
    order.refunds = refunds
    func total(_ refunds: [RefundRecord]) -> Int64 {
      refunds.reduce(Int64(0)) { $0 + ((try? MoneyText.minorUnits($1.amount, digits: config.currency.minorDigits).get()) ?? 0) }
    }
    // Refunds the gateway has not settled count in amountRefunded, and are named here too.
    let unsettled = refunds.filter { RefundRecord.unsettledStatuses.contains($0.status ?? "") }
    if !unsettled.isEmpty { order.amountRefundPending = config.format(total(unsettled)) }
    let outside = refunds.filter {
      $0.origin == RefundRecord.gatewayOrigin && !RefundRecord.failedStatuses.contains($0.status ?? "")
    }
    if !outside.isEmpty { order.amountRefundedOutside = config.format(total(outside)) }
    let disputed = stored.disputes.reduce(Int64(0)) { $0 + $1.withdrawnMinor - $1.reinstatedMinor }
    if !stored.disputes.isEmpty {
      order.amountDisputed = config.format(disputed)
      order.disputes = stored.disputes.map { DisputeRecord($0, config: config) }
    }
    // Net is captured less refunded until the gateway reports money moving outside payservice;
    // then it is said (and orders recorded before reports existed answer as they did).
    if !stored.disputes.isEmpty || refunds.contains(where: { $0.origin == RefundRecord.gatewayOrigin }) {
      order.amountNet = config.format((stored.capturedMinor ?? 0) - stored.refundedMinor - disputed)
    }
    // The placement's events come from the document as placed (processOrder writes no event rows,
    // which keeps an order's commit to what it must write); the rest were recorded as they happened.
    order.events =
      [
        OrderEvent(type: .placed, at: order.createdAt, amount: order.amount, id: order.orderId),
        OrderEvent(type: placement, at: order.createdAt, amount: order.amount, id: order.chargeId ?? ""),
      ] + stored.events.map { OrderEvent($0, config: config) }
    return order
  }
}
