/// Prices a cart: cart lines, coupon, card adjustment, Shipping, Tax and the grand total.
public enum ComputeSummaryItems: RPCMethod {
  public static let name = "computeSummaryItems"

  public static let documentation = MethodDescription(
    summary: "Price a cart: line items, discounts, shipping, tax and the total.",
    description: """
      Prices a cart for the payment sheet from the configured catalog, shipping and tax rules. Give the \
      items, and optionally the selected shipping method, the (redacted) shipping contact, a coupon code \
      and the card. The shipping method priced is the requested one when it is offered for the contact's \
      region, else the first offered one (null and no Shipping line when none is). Does not validate the \
      address or check stock and changes nothing. errors (coupon and card problems) is present exactly \
      when couponCode or paymentMethod was given.
      """,
    params: MethodDescription.sheetParams(required: []),
    result: .object(
      [
        ("currencyCode", Shapes.currencyCode), ("shippingMethod", Shapes.pricedShippingMethod),
        ("summaryItems", Shapes.summaryItems), ("errors", Shapes.applePayErrors),
      ], required: ["currencyCode", "shippingMethod", "summaryItems"]),
    errors: MethodDescription.paramErrors, readOnly: true, idempotent: true)

  public typealias Params = SheetState

  public struct Output: JSONRepresentable {
    public var currencyCode: String
    public var shippingMethod: String?
    public var summaryItems: [SummaryItem]
    /// Coupon and card problems; nil (member left out) for a request without couponCode and
    /// paymentMethod, so version 1 requests get version 1 bytes.
    public var errors: [ApplePayError]?

    public func write(to writer: inout JSONWriter) {
      writer.beginObject()
      writer.member("currencyCode", currencyCode)
      writer.member("shippingMethod", orNull: shippingMethod)
      writer.member("summaryItems", summaryItems)
      writer.member("errors", errors)
      writer.endObject()
    }
  }

  public static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> Params? {
    SheetState.read(params, reader: reader, context: context)
  }

  /// The priced method is the requested one when it is offered for the contact's region, else the
  /// first offered one; with no contact the merchant's country is the region.
  public static func run(_ params: Params, context: ServiceContext) -> Output {
    let priced = context.price(params)
    return Output(
      currencyCode: context.config.currency.code, shippingMethod: priced.methods.first?.identifier,
      summaryItems: priced.quote.summaryItems, errors: params.usesDiscounts ? priced.merchandise.errors : nil)
  }
}
