/// The payment sheet's coupon code changed: apply it or say why not, and reprice. Shipping methods
/// are offered again because a discount can cross a method's freeOver threshold.
public enum ChangeCouponCode: RPCMethod {
  public static let name = "changeCouponCode"

  public typealias Params = SheetState

  public struct Output: JSONRepresentable {
    public var errors: [ApplePayError]
    public var shippingMethods: [ShippingMethodOffer]
    public var shippingMethod: String?
    public var summaryItems: [SummaryItem]
    public var currencyCode: String

    public func write(to writer: inout JSONWriter) {
      writer.beginObject()
      writer.member("errors", errors)
      writer.member("shippingMethods", shippingMethods)
      writer.member("shippingMethod", orNull: shippingMethod)
      writer.member("summaryItems", summaryItems)
      writer.member("currencyCode", currencyCode)
      writer.endObject()
    }
  }

  public static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> Params? {
    SheetState.read(params, reader: reader, context: context, required: [.couponCode])
  }

  /// An unknown, expired or not-yet-reached coupon is reported and left out; the rest is priced as
  /// usual. An empty code removes the coupon without an error.
  public static func run(_ params: Params, context: ServiceContext) -> Output {
    let priced = context.price(params)
    return Output(
      errors: priced.merchandise.errors, shippingMethods: context.offers(priced.methods, for: priced.merchandise),
      shippingMethod: priced.methods.first?.identifier, summaryItems: priced.quote.summaryItems,
      currencyCode: context.config.currency.code)
  }
}
