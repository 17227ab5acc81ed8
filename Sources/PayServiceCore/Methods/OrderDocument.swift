/// A recorded order as processOrder returns it, the store keeps it and getOrder reads it back.
public struct OrderDocument: Equatable, Sendable, WireObject {
  /// One line of the order, priced.
  public struct Line: Equatable, Sendable, WireObject {
    public var sku = ""
    public var name = ""
    public var quantity = 1
    public var unitPrice = ""
    public var amount = ""

    public static let shape = ObjectShape<Line>(
      blank: { Line() },
      [
        .member("sku", \.sku), .member("name", \.name, .required, .string(), read: ParamReader.anyString),
        .member("quantity", \.quantity, .required, .integer(minimum: 1)),
        .member("unitPrice", \.unitPrice, .required, Shapes.amount),
        .member("amount", \.amount, .required, Shapes.amount),
      ])
  }

  /// The card of an order paid with a real Apple Pay token: network, type and last four digits,
  /// and Apple's transaction id; nothing else of the card.
  public struct Payment: Equatable, Sendable, WireObject {
    public var network = ""
    public var type = ""
    public var lastFour = ""
    public var transactionId = ""

    public static let shape = ObjectShape<Payment>(
      """
      Present when paid with a real Apple Pay token: the card as network, type and last four digits, and \
      Apple's transaction id.
      """,
      blank: { Payment() },
      [
        .member("network", \.network), .member("type", \.type),
        .member("lastFour", \.lastFour, .required, .string(pattern: "^[0-9]{4}$")),
        .member("transactionId", \.transactionId, .required, .string(pattern: "^[0-9a-f]+$")),
      ])
  }

  public var orderId = ""
  public var createdAt = ""
  public var items: [Line] = []
  public var shippingMethod = ""
  /// The coupon that took effect, as configured; nil when none did.
  public var couponCode: String?
  public var summaryItems: [SummaryItem] = []
  public var shippingContact = Contact()
  public var billingContact: Contact?
  public var amount = ""
  public var currencyCode = ""
  public var chargeId = ""
  public var payment: Payment?

  public static let shape = ObjectShape<OrderDocument>(
    "A recorded order.", blank: { OrderDocument() },
    [
      .member("orderId", \.orderId),
      .member(
        "createdAt", \.createdAt, .required,
        .string("RFC 3339 UTC to the second.", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")),
      .member("items", \.items, .required, .array(Line.schema, minItems: 1)),
      .member("shippingMethod", \.shippingMethod),
      .member(
        "couponCode", \.couponCode, .optional, .string("The coupon that took effect, as configured."),
        read: ParamReader.anyString),
      .member("summaryItems", \.summaryItems, .required, Shapes.summaryItems),
      .member("shippingContact", \.shippingContact, .required, Contact.storedSchema),
      .member("billingContact", \.billingContact, .alwaysOrNull, Contact.storedSchema),
      .member("amount", \.amount, .required, Shapes.amount),
      .member("currencyCode", \.currencyCode, .required, Shapes.currencyCode),
      .member("chargeId", \.chargeId),
      .member("payment", \.payment, .optional),
      .constant("status", "paid"),
    ])
}

/// Values payservice wrote to the store as JSON text, read back into their types. A value that does
/// not read is a store failure (-32001), never a silent default.
enum StoredJSON {
  static func read<Value: WireValue>(_ text: String, as type: Value.Type, _ what: String) throws(StoreError) -> Value {
    let reader = ParamReader()
    guard let value = try? JSONParser.parse(text), let read = Value.read(value, at: { what }, reader: reader) else {
      let problem = reader.errors.first.map { "\($0.path): \($0.message)" } ?? "not JSON"
      throw StoreError.unavailable(reason: "the store holds a \(what) payservice cannot read (\(problem))")
    }
    return read
  }
}
