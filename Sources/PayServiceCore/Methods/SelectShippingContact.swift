/// The payment sheet's shipping contact changed: validate the (redacted) address, offer the
/// shipping methods for its region and reprice.
public enum SelectShippingContact: SheetEvent {
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
  public typealias Result = SheetUpdate<Self>

  public static let updateShape = Result.shape(status: true, shippingMethods: true)

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
    let merchandise = context.merchandise(params)
    var result = Result(
      errors.isEmpty ? .success : .invalidShippingPostalAddress, errors: errors + merchandise.errors,
      quote: pricer.quote(merchandise, method: methods.first, region: region), config: context.config)
    result.offer(methods, for: merchandise, context: context)
    return result
  }
}
