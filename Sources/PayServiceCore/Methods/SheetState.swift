/// What the payment sheet currently shows, as the pricing methods receive it: the cart, the chosen
/// shipping method, the (redacted) shipping contact, the coupon code and the card.
public struct SheetState: Sendable {
  public var items: [CartItem] = []
  public var shippingMethod: String?
  public var shippingContact: Contact?
  /// As typed; nil when absent. Empty means no coupon.
  public var couponCode: String?
  public var paymentMethod: PaymentMethod?

  /// Members a method can require; the others are optional.
  public enum Field: Hashable, Sendable {
    case shippingMethod, shippingContact, couponCode, paymentMethod
  }

  /// The params of a pricing method: the sheet's members, those in `required` required.
  static func params(required: Set<Field>) -> ObjectShape<SheetState> {
    func presence(_ field: Field, optional: Presence) -> Presence {
      required.contains(field) ? .required : optional
    }
    return ObjectShape(
      blank: { SheetState() },
      [
        .member("items", \.items, .required, CartItem.cartSchema, read: CartItem.readCart),
        .member(
          "shippingMethod", \.shippingMethod, presence(.shippingMethod, optional: .optional),
          required.contains(.shippingMethod)
            ? Shapes.shippingMethodIdentifier
            : .string(
              "The selected shipping method's identifier; priced when offered for the region, else the first offered one.",
              minLength: 1),
          read: ShippingMethod.readIdentifier),
        .member("shippingContact", \.shippingContact, presence(.shippingContact, optional: .optional)),
        .member(
          "couponCode", \.couponCode, presence(.couponCode, optional: .optionalOrNull), Shapes.couponCode,
          read: Coupon.readCode),
        .member("paymentMethod", \.paymentMethod, presence(.paymentMethod, optional: .optionalOrNull)),
      ])
  }

  /// True when the request uses a version 2 pricing input (coupon or card).
  var usesDiscounts: Bool { couponCode != nil || paymentMethod != nil }
}

extension ShippingMethod {
  /// Reads a shipping method identifier, which must name a configured method.
  static let readIdentifier: MemberReader<String> = { value, path, reader in
    guard let identifier = reader.string(value, path()) else { return nil }
    if let context = reader.context, context.config.shippingMethodsByIdentifier[identifier] == nil {
      let known = context.config.shipping.methods.map(\.identifier).joined(separator: ", ")
      reader.fail(path(), "unknown shipping method \"\(identifier)\"; configured: \(known)")
      return nil
    }
    return identifier
  }
}

extension Coupon {
  /// Reads a coupon code as typed: any string of at most 256 bytes (empty means none).
  static let readCode: MemberReader<String> = { value, path, reader in
    guard let code = reader.string(value, path(), nonEmpty: false) else { return nil }
    if code.utf8.count > 256 {
      reader.fail(path(), "must be at most 256 bytes, got \(code.utf8.count)")
      return nil
    }
    return code
  }
}

extension ServiceContext {
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
