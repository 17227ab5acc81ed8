/// The payment sheet's shipping method changed: reprice with it, or say it does not serve the address.
public enum SelectShippingMethod: RPCMethod {
  public static let name = "selectShippingMethod"

  public static let documentation = MethodDescription(
    summary: "The sheet's shipping method changed: reprice with it.",
    description: """
      Answers PKPaymentRequestShippingMethodUpdate. Prices the cart with the chosen shipping method. \
      When that method is not offered for the contact's region (the merchant's country without a \
      contact), status is invalidShippingPostalAddress with an addressUnserviceable error and the cart is \
      priced with the first offered method instead. The address itself is not validated again. Changes \
      nothing.
      """,
    params: MethodDescription.sheetParams(required: [.shippingMethod]),
    result: .object(
      [
        ("status", .string(values: Status.allCases.map(\.rawValue))), ("errors", Shapes.applePayErrors),
        ("summaryItems", Shapes.summaryItems), ("currencyCode", Shapes.currencyCode),
      ], required: ["status", "errors", "summaryItems", "currencyCode"]),
    errors: MethodDescription.paramErrors, readOnly: true, idempotent: true)

  public enum Status: String, Sendable, CaseIterable {
    case success, invalidShippingPostalAddress
  }

  public typealias Params = SheetState

  public struct Output: JSONRepresentable {
    public var status: Status
    public var errors: [ApplePayError]
    public var summaryItems: [SummaryItem]
    public var currencyCode: String

    public func write(to writer: inout JSONWriter) {
      writer.beginObject()
      writer.member("status", status.rawValue)
      writer.member("errors", errors)
      writer.member("summaryItems", summaryItems)
      writer.member("currencyCode", currencyCode)
      writer.endObject()
    }
  }

  public static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> Params? {
    SheetState.read(params, reader: reader, context: context, required: [.shippingMethod])
  }

  /// A method not offered for the contact's region (the merchant's country without a contact) is
  /// status invalidShippingPostalAddress with addressUnserviceable, priced with the first offered method.
  public static func run(_ params: Params, context: ServiceContext) -> Output {
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
    let quote = pricer.quote(merchandise, method: method, region: region)
    return Output(
      status: errors.isEmpty ? .success : .invalidShippingPostalAddress, errors: errors + merchandise.errors,
      summaryItems: quote.summaryItems, currencyCode: config.currency.code)
  }
}
