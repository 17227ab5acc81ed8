/// The payment sheet's shipping contact changed: validate the (redacted) address, offer the
/// shipping methods for its region and reprice.
public enum SelectShippingContact: RPCMethod {
  public static let name = "selectShippingContact"

  public enum Status: String, Sendable, CaseIterable {
    case success, invalidShippingPostalAddress
  }

  public struct Params: Sendable {
    public var items: [CartItem]
    public var shippingContact: Contact
    public var shippingMethod: String?
  }

  public struct Output: JSONRepresentable {
    public var status: Status
    public var errors: [ApplePayError]
    public var shippingMethods: [ShippingMethodOffer]
    public var shippingMethod: String?
    public var summaryItems: [SummaryItem]
    public var currencyCode: String

    public var json: JSONValue {
      var object = JSONObjectBuilder()
      object.set("status", status.rawValue)
      object.set("errors", errors.json)
      object.set("shippingMethods", shippingMethods.json)
      object.set("shippingMethod", shippingMethod.map(JSONValue.string) ?? .null)
      object.set("summaryItems", summaryItems.json)
      object.set("currencyCode", currencyCode)
      return object.value
    }
  }

  public static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> Params? {
    reader.rejectUnknown(params, "", allowed: ["items", "shippingMethod", "shippingContact"])
    let items = CartItem.read(params["items"], "items", reader: reader, config: context.config)
    let method = context.readShippingMethod(params["shippingMethod"], "shippingMethod", reader: reader, required: false)
    let contact = Contact.read(params["shippingContact"], "shippingContact", reader: reader, required: true)
    guard let items, let method, let contact else { return nil }
    return Params(items: items, shippingContact: contact, shippingMethod: method)
  }

  public static func run(_ params: Params, context: ServiceContext) -> Output {
    let pricer = context.pricer
    let region = pricer.region(of: params.shippingContact)
    var errors = context.validator.addressErrors(params.shippingContact, role: .shipping, complete: false)
    var methods: [ShippingMethod] = []
    if errors.isEmpty {
      methods = pricer.orderedMethods(for: region, preferred: params.shippingMethod)
      if methods.isEmpty {
        errors.append(
          ApplePayError(.addressUnserviceable, .postalAddress, "We can't ship to this address. Try another address."))
      }
    }
    let quote = pricer.quote(items: params.items, method: methods.first, region: region)
    return Output(
      status: errors.isEmpty ? .success : .invalidShippingPostalAddress, errors: errors,
      shippingMethods: methods.map(pricer.offer), shippingMethod: methods.first?.identifier,
      summaryItems: quote.summaryItems, currencyCode: context.config.currency.code)
  }
}
