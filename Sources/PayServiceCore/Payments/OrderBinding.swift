/// What a charge token is bound to: the cart, the shipping method, the shipping contact and the
/// coupon code. Its JSON (`canonical`) is stored with the token and derives the token's value.
public struct OrderBinding: Equatable, Sendable, WireObject {
  public var items: [CartItem]
  public var shippingMethod: String
  public var shippingContact: Contact?
  /// Normalized (trimmed, upper-cased); nil for none or an empty code.
  public var couponCode: String?

  public init(items: [CartItem], shippingMethod: String, shippingContact: Contact?, couponCode: String?) {
    self.items = items
    self.shippingMethod = shippingMethod
    self.shippingContact = shippingContact
    let normalized = couponCode.map(Coupon.normalize)
    self.couponCode = normalized?.isEmpty == false ? normalized : nil
  }

  /// The coupon member is present only with a code, so orders without one bind exactly as in version 1.
  public static let shape = ObjectShape<OrderBinding>(
    blank: { OrderBinding(items: [], shippingMethod: "", shippingContact: nil, couponCode: nil) },
    [
      .member("items", \.items), .member("shippingMethod", \.shippingMethod),
      .member("shippingContact", \.shippingContact, .alwaysOrNull),
      .member("couponCode", \.couponCode, .optional, read: ParamReader.anyString),
    ])

  public var canonical: String { JSONWriter.string(self) }
}
