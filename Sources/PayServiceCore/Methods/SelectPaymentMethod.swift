/// The payment sheet's card changed: reprice with the card's adjustment (a surcharge or a discount),
/// or say the card cannot be used.
public enum SelectPaymentMethod: RPCMethod {
  public static let name = "selectPaymentMethod"

  public static let documentation = MethodDescription(
    summary: "The sheet's card changed: apply its surcharge or discount and reprice.",
    description: """
      Answers PKPaymentRequestPaymentMethodUpdate. Reprices the cart with the card's configured \
      adjustment (a surcharge or a discount line). A network the merchant does not accept, or a card \
      type its capabilities refuse, gives an ApplePayError with code unknown and no adjustment; coupon \
      problems come first in errors. Changes nothing.
      """,
    params: MethodDescription.sheetParams(required: [.paymentMethod]),
    result: .object(
      [("errors", Shapes.applePayErrors), ("summaryItems", Shapes.summaryItems), ("currencyCode", Shapes.currencyCode)],
      required: ["errors", "summaryItems", "currencyCode"]),
    errors: MethodDescription.paramErrors, readOnly: true, idempotent: true)

  public typealias Params = SheetState

  public struct Output: JSONRepresentable {
    public var errors: [ApplePayError]
    public var summaryItems: [SummaryItem]
    public var currencyCode: String

    public func write(to writer: inout JSONWriter) {
      writer.beginObject()
      writer.member("errors", errors)
      writer.member("summaryItems", summaryItems)
      writer.member("currencyCode", currencyCode)
      writer.endObject()
    }
  }

  public static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> Params? {
    SheetState.read(params, reader: reader, context: context, required: [.paymentMethod])
  }

  /// A card the merchant does not take gives an `unknown` error and summary items without an
  /// adjustment. Shipping is priced like computeSummaryItems.
  public static func run(_ params: Params, context: ServiceContext) -> Output {
    let priced = context.price(params)
    return Output(
      errors: priced.merchandise.errors, summaryItems: priced.quote.summaryItems,
      currencyCode: context.config.currency.code)
  }
}
