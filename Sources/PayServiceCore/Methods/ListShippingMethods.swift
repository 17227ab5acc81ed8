/// Every configured shipping method with its regions, free-shipping threshold and delivery window
/// (from the service clock), in config order.
public enum ListShippingMethods: RPCMethod {
  public static let name = "listShippingMethods"

  public static let documentation = MethodDescription(
    summary: "List every configured shipping method.",
    description: """
      Lists every configured shipping method in config order, whatever the region: identifier (what \
      shippingMethod takes), label, detail, configured amount, free-shipping threshold, transit days, \
      the delivery window from the service clock and the regions it serves. Takes no params and changes \
      nothing.
      """,
    params: [],
    result: .object(
      [
        (
          "shippingMethods",
          .array(
            .object(
              [
                ("identifier", .string()), ("label", .string()), ("detail", .string()), ("amount", Shapes.amount),
                ("freeOver", Shapes.amount), ("transitDays", .integer(minimum: 0)),
                ("transitDaysMax", .integer(minimum: 0)), ("dateComponentsRange", Shapes.dateComponentsRange),
                ("regions", .array(.string())), ("exceptRegions", .array(.string())),
              ], required: ["identifier", "label", "detail", "amount", "transitDays", "dateComponentsRange"]))
        )
      ], required: ["shippingMethods"]),
    errors: MethodDescription.paramErrors, readOnly: true, idempotent: true)

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
