/// Prices a cart: cart lines, Shipping, Tax and the grand total.
public enum ComputeSummaryItems: RPCMethod {
  public static let name = "computeSummaryItems"

  public struct Params: Sendable {
    public var items: [CartItem]
    public var shippingMethod: String?
    public var shippingContact: Contact?
  }

  public struct Output: JSONRepresentable {
    public var currencyCode: String
    public var shippingMethod: String?
    public var summaryItems: [SummaryItem]

    public var json: JSONValue {
      var object = JSONObjectBuilder()
      object.set("currencyCode", currencyCode)
      object.set("shippingMethod", shippingMethod.map(JSONValue.string) ?? .null)
      object.set("summaryItems", summaryItems.json)
      return object.value
    }
  }

  public static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> Params? {
    reader.rejectUnknown(params, "", allowed: ["items", "shippingMethod", "shippingContact"])
    let items = CartItem.read(params["items"], "items", reader: reader, config: context.config)
    let method = context.readShippingMethod(params["shippingMethod"], "shippingMethod", reader: reader, required: false)
    let contact = Contact.read(params["shippingContact"], "shippingContact", reader: reader, required: false)
    guard let items, let method else { return nil }
    return Params(items: items, shippingMethod: method, shippingContact: contact)
  }

  /// The priced method is the requested one when it is offered for the contact's region, else the
  /// first offered one; with no contact the merchant's country is the region.
  public static func run(_ params: Params, context: ServiceContext) -> Output {
    let pricer = context.pricer
    let region = pricer.region(of: params.shippingContact)
    let method = pricer.orderedMethods(for: region, preferred: params.shippingMethod).first
    let quote = pricer.quote(items: params.items, method: method, region: region)
    return Output(
      currencyCode: context.config.currency.code, shippingMethod: method?.identifier,
      summaryItems: quote.summaryItems)
  }
}
