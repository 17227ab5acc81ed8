/// The payment sheet's card changed: reprice with the card's adjustment (a surcharge or a discount),
/// or say the card cannot be used.
public enum SelectPaymentMethod: SheetEvent {
  public static let name = "selectPaymentMethod"

  public static let documentation = MethodDocumentation(
    summary: "The sheet's card changed: apply its surcharge or discount and reprice.",
    description: """
      Answers PKPaymentRequestPaymentMethodUpdate. Reprices the cart with the card's configured \
      adjustment (a surcharge or a discount line). A network the merchant does not accept, or a card \
      type its capabilities refuse, gives an ApplePayError with code unknown and no adjustment; coupon \
      problems come first in errors. Changes nothing.
      """,
    readOnly: true, idempotent: true)
  public static let usesStore = false

  public static let params = SheetState.params(required: [.paymentMethod])
  public typealias Result = SheetUpdate<Self>

  public static let updateShape = Result.shape(status: false, shippingMethods: false)

  /// A card the merchant does not take gives an `unknown` error and summary items without an
  /// adjustment. Shipping is priced like computeSummaryItems.
  public static func run(_ params: SheetState, context: ServiceContext) -> Result {
    let priced = context.price(params)
    return Result(errors: priced.merchandise.errors, quote: priced.quote, config: context.config)
  }
}
