/// One recorded order by id.
public enum GetOrder: RPCMethod {
  public static let name = "getOrder"

  public static let documentation = MethodDescription(
    summary: "Fetch a recorded order by its orderId.",
    description: """
      Returns the order processOrder recorded, exactly as processOrder returned it. An unknown orderId \
      is error -32003. Changes nothing.
      """,
    params: [MethodDescription.Param("orderId", required: true, .string("From processOrder.", minLength: 1))],
    result: .object([("order", Shapes.order)], required: ["order"]),
    errors: MethodDescription.paramErrors + [.storeUnavailable, .orderNotFound], readOnly: true, idempotent: true)
  public static let usesStore = true

  public struct Output: JSONRepresentable {
    public var value: JSONValue

    public func write(to writer: inout JSONWriter) {
      writer.write(value)
    }
  }

  public static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> String? {
    reader.rejectUnknown(params, "", allowed: ["orderId"])
    return reader.string(params["orderId"], "orderId")
  }

  public static func run(_ orderId: String, context: ServiceContext) throws -> Output {
    guard let document = try context.store.orderDocument(id: orderId) else {
      throw ServiceError.orderNotFound(orderId)
    }
    var result = JSONObjectBuilder()
    result.set("order", try JSONParser.parse(document))
    return Output(value: result.value)
  }
}
