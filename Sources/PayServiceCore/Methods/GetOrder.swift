/// One recorded order by id.
public enum GetOrder: RPCMethod {
  public static let name = "getOrder"

  public static let documentation = MethodDocumentation(
    summary: "Fetch a recorded order by its orderId.",
    description: """
      Returns the order processOrder recorded, as processOrder returned it, with where it stands now: \
      status (authorized, paid, partially_refunded, refunded, canceled), amountCaptured, amountRefunded, \
      the refunds and the events (placed, authorized, captured, canceled, refunded; each with time, \
      amount and id). An unknown orderId is error -32003. Changes nothing.
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
    guard let stored = try context.store.order(id: params.orderId) else {
      throw ServiceError.orderNotFound(params.orderId)
    }
    let config = context.config
    var order = try StoredJSON.read(stored.document, as: OrderDocument.self, "order document")
    order.status = stored.status
    order.amountCaptured = config.format(stored.capturedMinor ?? 0)
    order.amountRefunded = config.format(stored.refundedMinor)
    order.refunds = try stored.refunds.map { text throws(StoreError) in
      try StoredJSON.read(text, as: RefundRecord.self, "refund")
    }
    order.events = stored.events.map { OrderEvent($0, config: config) }
    return Result(order: order)
  }
}
