/// The payment sheet's shipping contact changed: validate the (redacted) address, offer the
/// shipping methods for its region and reprice.
public enum SelectShippingContact: RPCMethod {
  public static let name = "selectShippingContact"

  public static let documentation = MethodDescription(
    summary: "The sheet's shipping contact changed: validate the address, offer shipping methods, reprice.",
    description: """
      Answers PKPaymentRequestShippingContactUpdate. Validates the redacted address (country in shipsTo; \
      US and CA postal code and state or province), lists the shipping methods offered for its region \
      (the requested shippingMethod first when still offered) and prices the cart with the first one. \
      status is invalidShippingPostalAddress, with ApplePayErrors naming the field, when the address is \
      invalid or nothing ships there; coupon and card problems are listed in errors without changing \
      the status. Changes nothing.
      """,
    params: MethodDescription.sheetParams(required: [.shippingContact]),
    result: .object(
      [
        ("status", .string(values: Status.allCases.map(\.rawValue))), ("errors", Shapes.applePayErrors),
        ("shippingMethods", Shapes.shippingMethodOffers), ("shippingMethod", Shapes.pricedShippingMethod),
        ("summaryItems", Shapes.summaryItems), ("currencyCode", Shapes.currencyCode),
      ], required: ["status", "errors", "shippingMethods", "shippingMethod", "summaryItems", "currencyCode"]),
    errors: MethodDescription.paramErrors, readOnly: true, idempotent: true)

  public enum Status: String, Sendable, CaseIterable {
    case success, invalidShippingPostalAddress
  }

  public typealias Params = SheetState

  public struct Output: JSONRepresentable {
    public var status: Status
    public var errors: [ApplePayError]
    public var shippingMethods: [ShippingMethodOffer]
    public var shippingMethod: String?
    public var summaryItems: [SummaryItem]
    public var currencyCode: String

    public func write(to writer: inout JSONWriter) {
      writer.beginObject()
      writer.member("status", status.rawValue)
      writer.member("errors", errors)
      writer.member("shippingMethods", shippingMethods)
      writer.member("shippingMethod", orNull: shippingMethod)
      writer.member("summaryItems", summaryItems)
      writer.member("currencyCode", currencyCode)
      writer.endObject()
    }
  }

  public static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> Params? {
    SheetState.read(params, reader: reader, context: context, required: [.shippingContact])
  }

  public static func run(_ params: Params, context: ServiceContext) -> Output {
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
    return Output(
      status: status, errors: errors + merchandise.errors, shippingMethods: context.offers(methods, for: merchandise),
      shippingMethod: methods.first?.identifier, summaryItems: quote.summaryItems,
      currencyCode: context.config.currency.code)
  }
}
