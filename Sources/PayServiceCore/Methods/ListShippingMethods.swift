/// Every configured shipping method with its regions, free-shipping threshold and delivery window
/// (from the service clock), in config order.
public enum ListShippingMethods: RPCMethod {
  public static let name = "listShippingMethods"

  public struct Output: JSONRepresentable {
    public var value: JSONValue

    public func write(to writer: inout JSONWriter) {
      writer.write(value)
    }
  }

  public static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> Void? {
    reader.rejectUnknown(params, "", allowed: [])
    return ()
  }

  public static func run(_ params: Void, context: ServiceContext) -> Output {
    let config = context.config
    let now = context.clock.now()
    let methods: [JSONValue] = config.shipping.methods.map { method in
      var object = JSONObjectBuilder()
      object.set("identifier", method.identifier)
      object.set("label", method.label)
      object.set("detail", method.detail)
      object.set("amount", config.format(method.amountMinor))
      object.set("freeOver", method.freeOverMinor.map(config.format))
      object.set("transitDays", method.transitDays)
      if let last = method.transitDaysMax { object.set("transitDaysMax", last) }
      object.set("dateComponentsRange", DateComponentsRange(method: method, now: now).json)
      object.set("regions", method.regions.map { .array($0.map(JSONValue.string)) })
      object.set("exceptRegions", method.exceptRegions.map { .array($0.map(JSONValue.string)) })
      return object.value
    }
    var result = JSONObjectBuilder()
    result.set("shippingMethods", .array(methods))
    return Output(value: result.value)
  }
}
