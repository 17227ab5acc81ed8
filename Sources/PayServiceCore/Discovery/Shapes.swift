/// The JSON Schemas of the shapes methods share (protocol.md §5). Types that cross the wire carry
/// their own schema; these name the shared ones and the narrower schemas of plain strings.
public enum Shapes {
  /// A decimal amount string in the merchant currency (protocol.md §4).
  public static let amount = JSONSchema.string(
    "A decimal string in the merchant currency, for example \"54.00\"; never a JSON number.",
    pattern: MoneyText.pattern)

  /// A time as payservice writes it: RFC 3339, UTC, to the second.
  public static let timestamp = JSONSchema.string(
    "RFC 3339 UTC to the second.", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")

  public static let currencyCode = JSONSchema.string(
    "The merchant's ISO 4217 currency code.", pattern: "^[A-Z]{3}$")

  /// A configured shipping method's identifier; `listShippingMethods` lists them.
  public static let shippingMethodIdentifier = JSONSchema.string(
    "A configured shipping method identifier (listShippingMethods lists them), for example \"standard\".",
    minLength: 1)

  public static let couponCode = JSONSchema.string(
    "A coupon code as typed, matched trimmed and case-insensitively; \"\" means no coupon. At most 256 bytes.",
    maxLength: 256)

  public static var summaryItems: JSONSchema {
    .array(SummaryItem.schema, "The sheet's line items, the total last.", minItems: 1)
  }

  /// The methods offered for the contact's region, as `ApplePayShippingMethod`s priced for the cart.
  public static var shippingMethodOffers: JSONSchema {
    .array(ShippingMethodOffer.schema, "The methods offered for the contact's region, the selected one first.")
  }

  /// The method the summary was priced with (null when none is offered: the member allows null).
  public static let pricedShippingMethod = JSONSchema.string(
    "The shipping method priced in summaryItems; null when none is offered for the region.")
}
