/// One recorded order by id.
public enum GetOrder: RPCMethod {
  public static let name = "getOrder"
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
