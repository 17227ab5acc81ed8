/// The payment sheet's shipping contact changed: validate the (redacted) address, offer the
/// shipping methods for its region and reprice.
public enum SelectShippingContact: RPCMethod {
  public static let name = "selectShippingContact"

  public static let documentation = MethodDocumentation(
    summary: "The sheet's shipping contact changed: validate the address, offer shipping methods, reprice.",
    description: """
      Answers PKPaymentRequestShippingContactUpdate. Validates the redacted address (country in shipsTo; \
      US and CA postal code and state or province), lists the shipping methods offered for its region \
      (the requested shippingMethod first when still offered) and prices the cart with the first one. \
      status is invalidShippingPostalAddress, with ApplePayErrors naming the field, when the address is \
      invalid or nothing ships there; coupon and card problems are listed in errors without changing \
      the status. Changes nothing.
      """,
    readOnly: true, idempotent: true)
  public static let usesStore = false

  public static let params = SheetState.params(required: [.shippingContact])

  public enum Status: String, Sendable, WireEnum {
    case success, invalidShippingPostalAddress
  }

  public struct Result: MethodResult, WireObject {
    public var status = Status.success
    public var errors: [ApplePayError] = []
    public var shippingMethods: [ShippingMethodOffer] = []
    public var shippingMethod: String?
    public var summaryItems: [SummaryItem] = []
    public var currencyCode = ""
    public var taxBreakdown: [TaxBreakdownItem]?

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member("status", \.status), .member("errors", \.errors),
        .member("shippingMethods", \.shippingMethods, .required, Shapes.shippingMethodOffers),
        .member("shippingMethod", \.shippingMethod, .alwaysOrNull, Shapes.pricedShippingMethod),
        .member("summaryItems", \.summaryItems, .required, Shapes.summaryItems),
        .member("currencyCode", \.currencyCode, .required, Shapes.currencyCode),
        .member("taxBreakdown", \.taxBreakdown, .optional, TaxBreakdownItem.listSchema),
      ])
  }

  public static func run(_ params: SheetState, context: ServiceContext) -> Result {
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
    let status: Status = errors.isEmpty ? .success : .invalidShippingPostalAddress
    let merchandise = context.merchandise(params)
    let quote = pricer.quote(merchandise, method: methods.first, region: region)
    return Result(
      status: status, errors: errors + merchandise.errors, shippingMethods: context.offers(methods, for: merchandise),
      shippingMethod: methods.first?.identifier, summaryItems: quote.summaryItems,
      currencyCode: context.config.currency.code, taxBreakdown: quote.taxBreakdownItems(context.config))
  }
}
