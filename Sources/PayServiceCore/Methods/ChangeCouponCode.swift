/// The payment sheet's coupon code changed: apply it or say why not, and reprice. Shipping methods
/// are offered again because a discount can cross a method's freeOver threshold.
public enum ChangeCouponCode: RPCMethod {
  public static let name = "changeCouponCode"

  public static let documentation = MethodDescription(
    summary: "The buyer typed a coupon code: apply it (or report why not) and reprice.",
    description: """
      Answers PKPaymentRequestCouponCodeUpdate. Applies the coupon (matched trimmed and \
      case-insensitively; "" removes it) and reprices, offering the shipping methods again since a \
      coupon can cross a free-shipping threshold. An unknown, expired or below-minimum code gives \
      couponCodeInvalid or couponCodeExpired in errors and is left out of the totals. Changes nothing.
      """,
    params: MethodDescription.sheetParams(required: [.couponCode]),
    result: .object(
      [
        ("errors", Shapes.applePayErrors), ("shippingMethods", Shapes.shippingMethodOffers),
        ("shippingMethod", Shapes.pricedShippingMethod), ("summaryItems", Shapes.summaryItems),
        ("currencyCode", Shapes.currencyCode),
      ], required: ["errors", "shippingMethods", "shippingMethod", "summaryItems", "currencyCode"]),
    errors: MethodDescription.paramErrors, readOnly: true, idempotent: true)

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
