/// The payment sheet's shipping method changed: reprice with it, or say it does not serve the address.
public enum SelectShippingMethod: SheetEvent {
  public static let name = "selectShippingMethod"

  public static let documentation = MethodDocumentation(
    summary: "The sheet's shipping method changed: reprice with it.",
    description: """
      Answers PKPaymentRequestShippingMethodUpdate. Prices the cart with the chosen shipping method. \
      When that method is not offered for the contact's region (the merchant's country without a \
      contact), status is invalidShippingPostalAddress with an addressUnserviceable error and the cart is \
      priced with the first offered method instead. The address itself is not validated again. Changes \
      nothing.
      """,
    readOnly: true, idempotent: true)
  public static let usesStore = false

  public static let params = SheetState.params(required: [.shippingMethod])
  public typealias Result = SheetUpdate<Self>

  public static let updateShape = Result.shape(status: true, shippingMethods: false)

  /// A method not offered for the contact's region (the merchant's country without a contact) is
  /// status invalidShippingPostalAddress with addressUnserviceable, priced with the first offered method.
  public static func run(_ params: SheetState, context: ServiceContext) -> Result {
    let pricer = context.pricer
    let config = context.config
    let region = pricer.region(of: params.shippingContact)
    let offered = pricer.offeredMethods(for: region)
    var errors: [ApplePayError] = []
    var method = offered.first { $0.identifier == params.shippingMethod }
    if method == nil, let identifier = params.shippingMethod {
      let label = config.shippingMethodsByIdentifier[identifier]?.label ?? identifier
      errors.append(ApplePayError(.addressUnserviceable, .postalAddress, "\(label) isn't available for this address."))
      method = offered.first
    }
    let merchandise = context.merchandise(params)
    return Result(
      errors.isEmpty ? .success : .invalidShippingPostalAddress, errors: errors + merchandise.errors,
      quote: pricer.quote(merchandise, method: method, region: region), config: config)
  }
}
