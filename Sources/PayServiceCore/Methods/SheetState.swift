/// What the payment sheet currently shows, as the pricing methods receive it: the cart, the chosen
/// shipping method, the (redacted) shipping contact, the coupon code and the card.
public struct SheetState: Sendable {
  public var items: [CartItem]
  public var shippingMethod: String?
  public var shippingContact: Contact?
  /// As typed; nil when absent. Empty means no coupon.
  public var couponCode: String?
  public var paymentMethod: PaymentMethod?

  /// Members a method can require; the others are optional.
  public enum Field: Hashable, Sendable {
    case shippingMethod, shippingContact, couponCode, paymentMethod
  }

  static let members = ["items", "shippingMethod", "shippingContact", "couponCode", "paymentMethod"]

  /// Reads the sheet members of a params object (unknown members are rejected).
  static func read(_ params: JSONObject, reader: ParamReader, context: ServiceContext, required: Set<Field> = [])
    -> SheetState?
  {
    reader.rejectUnknown(params, "", allowed: members)
    let before = reader.errors.count
    let items = CartItem.read(params["items"], "items", reader: reader, config: context.config)
    let method = context.readShippingMethod(
      params["shippingMethod"], "shippingMethod", reader: reader, required: required.contains(.shippingMethod))
    let contact = Contact.read(
      params["shippingContact"], "shippingContact", reader: reader, required: required.contains(.shippingContact))
    let couponCode = context.readCouponCode(params["couponCode"], "couponCode", reader: reader, required: required.contains(.couponCode))
    let paymentMethod = PaymentMethod.read(
      params["paymentMethod"], "paymentMethod", reader: reader, required: required.contains(.paymentMethod))
    guard let items, let method, reader.errors.count == before else { return nil }
    return SheetState(
      items: items, shippingMethod: method, shippingContact: contact, couponCode: couponCode,
      paymentMethod: paymentMethod)
  }

  /// True when the request uses a version 2 pricing input (coupon or card).
  var usesDiscounts: Bool { couponCode != nil || paymentMethod != nil }
}

extension ServiceContext {
  /// Reads an optional `couponCode`: any string (empty means none); JSON null is absent.
  func readCouponCode(_ value: JSONValue?, _ path: String, reader: ParamReader, required: Bool) -> String? {
    if case .null? = value, !required { return nil }
    guard let code = reader.string(value, path, required: required, nonEmpty: false) else { return nil }
    if code.utf8.count > 256 {
      reader.fail(path, "must be at most 256 bytes, got \(code.utf8.count)")
      return nil
    }
    return code
  }

  /// Prices the sheet's merchandise with the service clock.
  func merchandise(_ state: SheetState) -> Merchandise {
    pricer.merchandise(
      items: state.items, couponCode: state.couponCode, paymentMethod: state.paymentMethod, now: clock.now())
  }

  /// The sheet priced with the methods offered for its region, the requested one first when offered
  /// (the first is the one priced; none when nothing is offered).
  func price(_ state: SheetState) -> (methods: [ShippingMethod], merchandise: Merchandise, quote: Pricer.Quote) {
    let region = pricer.region(of: state.shippingContact)
    let methods = pricer.orderedMethods(for: region, preferred: state.shippingMethod)
    let merchandise = merchandise(state)
    return (methods, merchandise, pricer.quote(merchandise, method: methods.first, region: region))
  }

  /// `methods` as offered to the sheet for this merchandise, with delivery windows from the clock.
  func offers(_ methods: [ShippingMethod], for merchandise: Merchandise) -> [ShippingMethodOffer] {
    let now = clock.now()
    return methods.map { pricer.offer($0, for: merchandise, now: now) }
  }
}
