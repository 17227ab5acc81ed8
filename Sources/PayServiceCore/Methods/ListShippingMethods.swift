/// Every configured shipping method with its regions, free-shipping threshold and delivery window
/// (from the service clock), in config order.
public enum ListShippingMethods: RPCMethod {
  public static let name = "listShippingMethods"

  public static let documentation = MethodDocumentation(
    summary: "List every configured shipping method.",
    description: """
      Lists every configured shipping method in config order, whatever the region: identifier (what \
      shippingMethod takes), label, detail, configured amount, free-shipping threshold, transit days, \
      the delivery window from the service clock and the regions it serves. Takes no params and changes \
      nothing.
      """,
    readOnly: true, idempotent: true)
  public static let usesStore = false
  public static let params = NoParams.shape

  /// One configured shipping method, as configured.
  public struct Method: Equatable, Sendable, WireObject {
    public var identifier = ""
    public var label = ""
    public var detail = ""
    public var amount = ""
    public var freeOver: String?
    public var transitDays = 0
    public var transitDaysMax: Int?
    public var dateComponentsRange = DateComponentsRange()
    public var regions: [String]?
    public var exceptRegions: [String]?

    public static let shape = ObjectShape<Method>(
      blank: { Method() },
      [
        .member("identifier", \.identifier), .member("label", \.label, read: ParamReader.anyString),
        .member("detail", \.detail, read: ParamReader.anyString), .member("amount", \.amount, .required, Shapes.amount),
        .member("freeOver", \.freeOver, .optional, Shapes.amount),
        .member("transitDays", \.transitDays, .required, .integer(minimum: 0)),
        .member("transitDaysMax", \.transitDaysMax, .optional, .integer(minimum: 0)),
        .member("dateComponentsRange", \.dateComponentsRange),
        .member("regions", \.regions, .optional), .member("exceptRegions", \.exceptRegions, .optional),
      ])
  }

  public struct Result: MethodResult, WireObject {
    public var shippingMethods: [Method] = []

    public static let shape = ObjectShape<Result>(blank: { Result() }, [.member("shippingMethods", \.shippingMethods)])
  }

  public static func run(_ params: NoParams, context: ServiceContext) -> Result {
    let config = context.config
    let now = context.clock.now()
    return Result(
      shippingMethods: config.shipping.methods.map { method in
        Method(
          identifier: method.identifier, label: method.label, detail: method.detail,
          amount: config.format(method.amountMinor), freeOver: method.freeOverMinor.map(config.format),
          transitDays: method.transitDays, transitDaysMax: method.transitDaysMax,
          dateComponentsRange: DateComponentsRange(method: method, now: now), regions: method.regions,
          exceptRegions: method.exceptRegions)
      })
  }
}
