/// The JSON Schemas of the shapes methods share (protocol.md §5), used by every method's description.
public enum Shapes {
  /// A decimal amount string in the merchant currency (protocol.md §4).
  public static let amount = JSONSchema.string(
    "A decimal string in the merchant currency, for example \"54.00\"; never a JSON number.",
    pattern: MoneyText.pattern)

  public static let currencyCode = JSONSchema.string(
    "The merchant's ISO 4217 currency code.", pattern: "^[A-Z]{3}$")

  public static let items = JSONSchema.array(
    .object(
      [
        ("sku", .string("A catalog sku (listProducts lists them), at most once per cart.", minLength: 1)),
        (
          "quantity",
          .integer("How many; default 1.", minimum: CartItem.quantityRange.lowerBound, maximum: CartItem.quantityRange.upperBound)
        ),
      ], required: ["sku"]),
    "The cart: one entry per sku.", minItems: 1, maxItems: CartItem.maxItems)

  /// A configured shipping method's identifier; `listShippingMethods` lists them.
  public static let shippingMethodIdentifier = JSONSchema.string(
    "A configured shipping method identifier (listShippingMethods lists them), for example \"standard\".",
    minLength: 1)

  /// What the sheet sends: every member optional, null meaning absent, unknown members ignored.
  public static let contact = contactSchema(
    "An ApplePayPaymentContact. Every member is optional; null counts as absent; unknown members are ignored.",
    input: true)

  /// A contact as payservice writes it: known members only, absent ones left out.
  public static let storedContact = contactSchema("An ApplePayPaymentContact as stored: known members only.", input: false)

  private static func contactSchema(_ description: String, input: Bool) -> JSONSchema {
    func text(_ schema: JSONSchema) -> JSONSchema { input ? schema.allowingNull() : schema }
    var properties: [(String, JSONSchema)] = []
    for key in ["givenName", "familyName", "emailAddress", "phoneNumber"] { properties.append((key, text(.string()))) }
    properties.append(("addressLines", text(.array(.string()))))
    for key in [
      "subLocality", "locality", "subAdministrativeArea", "administrativeArea", "postalCode", "country", "countryCode",
    ] {
      properties.append((key, text(.string())))
    }
    return .object(description, properties, closed: !input)
  }

  public static let couponCode = JSONSchema.string(
    "A coupon code as typed, matched trimmed and case-insensitively; \"\" means no coupon. At most 256 bytes.",
    maxLength: 256)

  /// An `ApplePayPaymentMethod`; `displayName` is required only inside an authorized token.
  public static func paymentMethod(displayNameRequired: Bool) -> JSONSchema {
    JSONSchema.object(
      "An ApplePayPaymentMethod: the card the buyer picked. Other members are ignored.",
      [
        ("displayName", .string("As the sheet shows it; never stored or logged.")),
        ("network", .string("The card network, for example \"visa\" (compared case-insensitively).", minLength: 1)),
        ("type", .string("The card type.", values: CardType.allCases.map(\.rawValue))),
      ], required: displayNameRequired ? ["displayName", "network", "type"] : ["network", "type"], closed: false)
  }

  public static let summaryItem = JSONSchema.object(
    "An ApplePayLineItem; the last one is the total.",
    [("label", .string()), ("amount", amount), ("type", .constant("final"))], required: ["label", "amount", "type"])

  public static let summaryItems = JSONSchema.array(summaryItem, "The sheet's line items, the total last.", minItems: 1)

  public static let applePayError = JSONSchema.object(
    "An ApplePayError for the sheet.",
    [
      ("code", .string(values: ApplePayError.Code.allCases.map(\.rawValue))),
      ("contactField", .string(values: ApplePayError.ContactField.allCases.map(\.rawValue))),
      ("message", .string("Short text for the buyer.")),
    ], required: ["code", "message"])

  public static let applePayErrors = JSONSchema.array(applePayError)

  private static let dateComponents = JSONSchema.object(
    [("years", .integer()), ("months", .integer(minimum: 1, maximum: 12)), ("days", .integer(minimum: 1, maximum: 31))],
    required: ["years", "months", "days"])

  public static let dateComponentsRange = JSONSchema.object(
    "The delivery window as UTC calendar dates.",
    [("startDateComponents", dateComponents), ("endDateComponents", dateComponents)],
    required: ["startDateComponents", "endDateComponents"])

  /// An `ApplePayShippingMethod` as offered for this cart.
  public static let shippingMethodOffers = JSONSchema.array(
    .object(
      "An ApplePayShippingMethod priced for this cart.",
      [
        ("identifier", .string()), ("label", .string()), ("detail", .string()), ("amount", amount),
        ("dateComponentsRange", dateComponentsRange),
      ], required: ["identifier", "label", "detail", "amount", "dateComponentsRange"]),
    "The methods offered for the contact's region, the selected one first.")

  /// The method the summary was priced with, or null when none is offered.
  public static let pricedShippingMethod = JSONSchema.string(
    "The shipping method priced in summaryItems; null when none is offered for the region."
  ).allowingNull()

  public static let order = JSONSchema.object(
    "A recorded order.",
    [
      ("orderId", .string()),
      ("createdAt", .string("RFC 3339 UTC to the second.", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")),
      (
        "items",
        .array(
          .object(
            [
              ("sku", .string()), ("name", .string()), ("quantity", .integer(minimum: 1)), ("unitPrice", amount),
              ("amount", amount),
            ], required: ["sku", "name", "quantity", "unitPrice", "amount"]), minItems: 1)
      ),
      ("shippingMethod", .string()),
      ("couponCode", .string("The coupon that took effect, as configured.")),
      ("summaryItems", summaryItems),
      ("shippingContact", storedContact),
      ("billingContact", storedContact.allowingNull()),
      ("amount", amount),
      ("currencyCode", currencyCode),
      ("chargeId", .string()),
      (
        "payment",
        .object(
          "Present when paid with a real Apple Pay token: the card as network, type and last four digits, and Apple's transaction id.",
          [
            ("network", .string()), ("type", .string()), ("lastFour", .string(pattern: "^[0-9]{4}$")),
            ("transactionId", .string(pattern: "^[0-9a-f]+$")),
          ], required: ["network", "type", "lastFour", "transactionId"])
      ),
      ("status", .constant("paid")),
    ],
    required: [
      "orderId", "createdAt", "items", "shippingMethod", "summaryItems", "shippingContact", "billingContact", "amount",
      "currencyCode", "chargeId", "status",
    ])
}
