import PayServiceCore

/// Orders placed through the service itself (authorizePayment, then processOrder), for tests of
/// what happens after the sale.
public enum BackOfficeFixture {
  /// Full addresses authorizePayment accepts, with the tax they bring in the test configs.
  public static let contacts = [
    #"{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}"#,
    #"{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["350 5th Ave"],"locality":"New York","administrativeArea":"NY","postalCode":"10001","countryCode":"US"}"#,
    #"{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}"#,
    #"{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["290 Bremner Blvd"],"locality":"Toronto","administrativeArea":"ON","postalCode":"M5V 3L9","countryCode":"CA"}"#,
  ]

  /// Cards as `paymentMethod` JSON: each brings a different adjustment in the discounts configs.
  public static let cards = [
    #"{"displayName":"Visa 0492","network":"visa","type":"credit"}"#,
    #"{"displayName":"Acme Card 0042","network":"privateLabel","type":"store"}"#,
    #"{"displayName":"Amex 1001","network":"amex","type":"credit"}"#,
    #"{"displayName":"Visa 7000","network":"visa","type":"debit"}"#,
  ]

  /// The sandbox's test card for each of `cards` (the test card decides the card's price).
  public static let sandboxCards = [
    cards[0]: "tok_visa", cards[1]: "tok_privateLabel", cards[2]: "tok_amex", cards[3]: "tok_visa_debit",
  ]

  /// A placed order: its id, amount and the tax it charged (the summary's Tax line).
  public struct Placed: Sendable {
    public var orderId: String
    public var amount: String
    public var tax: String
  }

  /// Authorizes and processes an order; nil when the service refuses it (a method not offered for
  /// the contact's region, a card the config does not take, short stock).
  public static func place(
    _ handler: RequestHandler, items cart: String, shippingMethod: String, contact: String = contacts[0],
    card: String = cards[0], couponCode: String? = nil, paymentData: String? = nil
  ) -> Placed? {
    let paymentData = paymentData ?? sandboxCards[card] ?? "tok_visa"
    let coupon = couponCode.map { #","couponCode":"\#($0)""# } ?? ""
    let authorized = handler.call(
      "authorizePayment",
      #"{"items":\#(cart),"shippingMethod":"\#(shippingMethod)"\#(coupon),"payment":{"token":{"paymentData":"\#(paymentData)","paymentMethod":\#(card),"transactionIdentifier":"T"},"shippingContact":\#(contact),"billingContact":\#(contact)}}"#
    )
    guard authorized["result"]?["status"]?.stringValue == "success",
      let token = authorized["result"]?["chargeToken"]?.stringValue,
      let amount = authorized["result"]?["amount"]?.stringValue,
      let summary = authorized["result"]?["summaryItems"]?.arrayValue
    else { return nil }
    let tax = summary.first { $0["label"]?.stringValue == "Tax" }?["amount"]?.stringValue ?? "0.00"
    let processed = handler.call(
      "processOrder",
      #"{"chargeToken":"\#(token)","items":\#(cart),"shippingMethod":"\#(shippingMethod)","shippingContact":\#(contact)\#(coupon),"amount":"\#(amount)","currencyCode":"USD"}"#
    )
    guard processed["result"]?["status"]?.stringValue == "succeeded",
      let orderId = processed["result"]?["orderId"]?.stringValue
    else { return nil }
    return Placed(orderId: orderId, amount: amount, tax: tax)
  }
}
