/// Every configured shipping method with its regions, in config order.
public enum ListShippingMethods: RPCMethod {
  public static let name = "listShippingMethods"

  public struct Output: JSONRepresentable {
    public var json: JSONValue
  }

  public static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> Void? {
    reader.rejectUnknown(params, "", allowed: [])
    return ()
  }

  public static func run(_ params: Void, context: ServiceContext) -> Output {
    let config = context.config
    let methods: [JSONValue] = config.shipping.methods.map { method in
      var object = JSONObjectBuilder()
      object.set("identifier", method.identifier)
      object.set("label", method.label)
      object.set("detail", method.detail)
      object.set("amount", config.format(method.amountMinor))
      object.set("transitDays", method.transitDays)
      object.set("regions", method.regions.map { .array($0.map(JSONValue.string)) })
      object.set("exceptRegions", method.exceptRegions.map { .array($0.map(JSONValue.string)) })
      return object.value
    }
    var result = JSONObjectBuilder()
    result.set("shippingMethods", .array(methods))
    return Output(json: result.value)
  }
}
