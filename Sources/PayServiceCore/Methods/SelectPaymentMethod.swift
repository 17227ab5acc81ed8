/// The payment sheet's card changed: reprice with the card's adjustment (a surcharge or a discount),
/// or say the card cannot be used.
public enum SelectPaymentMethod: RPCMethod {
  public static let name = "selectPaymentMethod"

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
