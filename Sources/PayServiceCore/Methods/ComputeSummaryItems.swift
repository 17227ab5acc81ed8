/// Prices a cart: cart lines, coupon, card adjustment, Shipping, Tax and the grand total.
public enum ComputeSummaryItems: RPCMethod {
  public static let name = "computeSummaryItems"

  public static let documentation = MethodDocumentation(
    summary: "Price a cart: line items, discounts, shipping, tax and the total.",
    description: """
      Prices a cart for the payment sheet from the configured catalog, shipping and tax rules. Give the \
      items, and optionally the selected shipping method, the (redacted) shipping contact, a coupon code \
      and the card. The shipping method priced is the requested one when it is offered for the contact's \
      region, else the first offered one (null and no Shipping line when none is). Does not validate the \
      address or check stock and changes nothing. errors (coupon and card problems) is present exactly \
      when couponCode or paymentMethod was given.
      """,
    readOnly: true, idempotent: true)
  public static let usesStore = false

  public static let params = SheetState.params(required: [])

  public struct Result: MethodResult, WireObject {
    public var currencyCode = ""
    public var shippingMethod: String?
    public var summaryItems: [SummaryItem] = []
    /// Coupon and card problems; nil (member left out) for a request without couponCode and
    /// paymentMethod, so version 1 requests get version 1 bytes.
    public var errors: [ApplePayError]?
    public var taxBreakdown: [TaxBreakdownItem]?

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member("currencyCode", \.currencyCode, .required, Shapes.currencyCode),
        .member("shippingMethod", \.shippingMethod, .alwaysOrNull, Shapes.pricedShippingMethod),
        .member("summaryItems", \.summaryItems, .required, Shapes.summaryItems),
        .member("errors", \.errors, .optional),
        .member("taxBreakdown", \.taxBreakdown, .optional, TaxBreakdownItem.listSchema),
      ])
  }

  /// The priced method is the requested one when it is offered for the contact's region, else the
  /// first offered one; with no contact the merchant's country is the region.
  public static func run(_ params: SheetState, context: ServiceContext) -> Result {
    let priced = context.price(params)
    return Result(
      currencyCode: context.config.currency.code, shippingMethod: priced.methods.first?.identifier,
      summaryItems: priced.quote.summaryItems, errors: params.usesDiscounts ? priced.merchandise.errors : nil,
      taxBreakdown: priced.quote.taxBreakdownItems(context.config))
  }
}

extension ComputeSummaryItems: BorrowedMethod {
  /// A cart without coupon or card, priced from the compiled config and written as `run`'s result
  /// is written.
  static func answerBorrowed(_ scanner: inout JSONScanner, table: PricingTable, into writer: inout JSONWriter) -> Bool {
    withUnsafeTemporaryAllocation(of: PricingTable.Line.self, capacity: CartItem.maxItems) { lines in
      guard let sheet = SheetState.scanBorrowed(&scanner, table: table, lines: lines) else { return false }
      let (method, rule) = table.route(sheet.place, preferredMethod: sheet.preferredMethod)
      table.writeSummary(
        UnsafeBufferPointer(rebasing: lines[0..<sheet.lineCount]), method: method, rule: rule, into: &writer)
      return true
    }
  }
}
