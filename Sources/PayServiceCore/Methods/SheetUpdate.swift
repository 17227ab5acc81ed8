/// What the payment sheet's update events answer (selectShippingContact, selectShippingMethod,
/// selectPaymentMethod, changeCouponCode): a status where the event can refuse the address, the
/// problems found, the shipping methods where the event offers them again, and the cart priced.
/// One type for the four; each event says which of the optional parts it answers.
public struct SheetUpdate<Event: SheetEvent>: MethodResult, WireObject {
  public var status = ShippingAddressStatus.success
  public var errors: [ApplePayError] = []
  public var shippingMethods: [ShippingMethodOffer] = []
  public var shippingMethod: String?
  public var summaryItems: [SummaryItem] = []
  public var currencyCode = ""
  public var taxBreakdown: [TaxBreakdownItem]?

  public static var shape: ObjectShape<SheetUpdate> { Event.updateShape }

  /// The cart priced by `quote`, with the problems found.
  init(_ status: ShippingAddressStatus = .success, errors: [ApplePayError], quote: Pricer.Quote, config: Config) {
    self.status = status
    self.errors = errors
    summaryItems = quote.summaryItems
    currencyCode = config.currency.code
    taxBreakdown = quote.taxBreakdownItems(config)
  }

  init() {}

  /// Offers `methods` again (the first is the one priced), as an event with shipping methods does.
  mutating func offer(_ methods: [ShippingMethod], for merchandise: Merchandise, context: ServiceContext) {
    shippingMethods = context.offers(methods, for: merchandise)
    shippingMethod = methods.first?.identifier
  }

  /// The shape of an event's answer: `status` first where it has one, then `errors`, the offered
  /// shipping methods where it offers them, and the priced cart.
  static func shape(status: Bool, shippingMethods: Bool) -> ObjectShape<SheetUpdate> {
    var fields: [Field<SheetUpdate>] = status ? [.member("status", \.status)] : []
    fields.append(.member("errors", \.errors))
    if shippingMethods {
      fields += [
        .member("shippingMethods", \.shippingMethods, .required, Shapes.shippingMethodOffers),
        .member("shippingMethod", \.shippingMethod, .alwaysOrNull, Shapes.pricedShippingMethod),
      ]
    }
    fields += [
      .member("summaryItems", \.summaryItems, .required, Shapes.summaryItems),
      .member("currencyCode", \.currencyCode, .required, Shapes.currencyCode),
      .member("taxBreakdown", \.taxBreakdown, .optional, TaxBreakdownItem.listSchema),
    ]
    return ObjectShape(blank: { SheetUpdate() }, fields)
  }
}

/// An event of the payment sheet that reprices it: its params are the sheet, its answer a
/// `SheetUpdate` of the shape it declares.
public protocol SheetEvent: RPCMethod where Params == SheetState, Result == SheetUpdate<Self> {
  /// Made once: `SheetUpdate.shape(status:shippingMethods:)`.
  static var updateShape: ObjectShape<SheetUpdate<Self>> { get }
}

/// Whether the sheet's shipping address can be used.
public enum ShippingAddressStatus: String, Sendable, WireEnum {
  case success, invalidShippingPostalAddress
}
