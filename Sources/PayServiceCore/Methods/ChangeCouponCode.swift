/// The payment sheet's coupon code changed: apply it or say why not, and reprice. Shipping methods
/// are offered again because a discount can cross a method's freeOver threshold.
public enum ChangeCouponCode: SheetEvent {
  public static let name = "changeCouponCode"

  public static let documentation = MethodDocumentation(
    summary: "The buyer typed a coupon code: apply it (or report why not) and reprice.",
    description: """
      Answers PKPaymentRequestCouponCodeUpdate. Applies the coupon (matched trimmed and \
      case-insensitively; "" removes it) and reprices, offering the shipping methods again since a \
      coupon can cross a free-shipping threshold. An unknown, expired or below-minimum code gives \
      couponCodeInvalid or couponCodeExpired in errors and is left out of the totals. Changes nothing.
      """,
    readOnly: true, idempotent: true)
  public static let usesStore = false

  public static let params = SheetState.params(required: [.couponCode])
  public typealias Result = SheetUpdate<Self>

  public static let updateShape = Result.shape(status: false, shippingMethods: true)

  /// An unknown, expired or not-yet-reached coupon is reported and left out; the rest is priced as
  /// usual. An empty code removes the coupon without an error.
  public static func run(_ params: SheetState, context: ServiceContext) -> Result {
    let priced = context.price(params)
    var result = Result(errors: priced.merchandise.errors, quote: priced.quote, config: context.config)
    result.offer(priced.methods, for: priced.merchandise, context: context)
    return result
  }
}
