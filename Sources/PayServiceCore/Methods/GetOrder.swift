/// One recorded order by id.
public enum GetOrder: RPCMethod {
  public static let name = "getOrder"

  public static let documentation = MethodDocumentation(
    summary: "Fetch a recorded order by its orderId.",
    description: """
      Returns the order processOrder recorded, exactly as processOrder returned it. An unknown orderId \
      is error -32003. Changes nothing.
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
    guard let document = try context.store.orderDocument(id: params.orderId) else {
      throw ServiceError.orderNotFound(params.orderId)
    }
    return Result(order: try StoredJSON.read(document, as: OrderDocument.self, "order document"))
  }
}
