/// Prices a cart: cart lines, coupon, card adjustment, Shipping, Tax and the grand total.
public enum ComputeSummaryItems: RPCMethod {
  public static let name = "computeSummaryItems"

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
