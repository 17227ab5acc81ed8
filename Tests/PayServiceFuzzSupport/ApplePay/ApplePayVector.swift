import Foundation
import PayServiceCore

/// The real Apple Pay EC_v1 test vector (Fixtures/applepay-ec-v1, MIT, from spreedly/gala) and a
/// store configured to accept it.
public enum ApplePayVector {
  public static let directory = TestPaths.path("Tests/PayServiceCoreTests/Fixtures/applepay-ec-v1")
  /// A self-signed certificate with the same merchant identifier and another key (its README).
  public static let otherMerchantDirectory = TestPaths.path("Tests/PayServiceCoreTests/Fixtures/applepay-other-merchant")

  /// What Apple encrypted, as the issue and gala's tests give it. Tests look for these in outputs.
  public static let accountNumber = "4109370251004320"
  public static let cryptogram = "Af9x/QwAA/DjmU65oyc1MAABAAA="
  public static let expiration = "200731"
  public static let transactionId = "2686f5297f123ec7fd9d31074d43d201953ca75f098890375f13aed2737d92f2"
  /// The signed signing-time attribute: 2014-10-27T19:51:43Z.
  public static let signingTime: Int64 = RFC3339.parse("2014-10-27T19:51:43Z")!
  /// A minute after signing: the clock the tests pin.
  public static let now: Int64 = signingTime + 60

  /// token.json as text and as the object `payment.token.paymentData` carries.
  public static let tokenText: String = try! String(contentsOfFile: "\(directory)/token.json", encoding: .utf8)
  public static var tokenObject: JSONObject {
    guard case .object(let object) = try! JSONParser.parse(tokenText) else { fatalError("token.json is not an object") }
    return object
  }

  /// The token with `body` applied to its object.
  public static func token(_ body: (inout JSONObject) -> Void) -> JSONObject {
    var object = tokenObject
    body(&object)
    return object
  }

  /// A config for the vector's merchant, one 1.00 product with free shipping and no tax, so that one
  /// `ticket` totals the token's 1.00 USD. `applePay` is the section's body (indented by the caller).
  public static func configYAML(
    currency: String = "USD", price: String = "1.00",
    applePay: String = """
        merchantCertificate: merchant_certificate.pem
        merchantPrivateKey: merchant_private_key.pem
      """,
    identifier: String = "merchant.com.seatgeek.SeatGeek"
  ) -> String {
    """
    merchant:
      identifier: \(identifier)
      displayName: SeatGeek
      countryCode: US
      currencyCode: \(currency)
      supportedNetworks: [visa]
      merchantCapabilities: [supports3DS]
      requiredShippingContactFields: [email]
      requiredBillingContactFields: []
    catalog:
      - {sku: ticket, name: Ticket, description: Mobile entry ticket, price: "\(price)", quantityOnHand: 5}
    shipping:
      shipsTo: [US]
      methods:
        - {identifier: mobile, label: Mobile entry, detail: In the app, transitDays: 0, amount: "0"}
    tax:
      defaultRate: "0"
    gateway:
      kind: sandbox
    applePay:
    \(applePay)

    """
  }

  /// The config parsed as if it were a file in the vector's folder (its paths resolve there).
  public static func config(
    currency: String = "USD", price: String = "1.00",
    applePay: String = """
        merchantCertificate: merchant_certificate.pem
        merchantPrivateKey: merchant_private_key.pem
      """
  ) throws -> Config {
    try ConfigLoader.parse(
      yaml: configYAML(currency: currency, price: price, applePay: applePay), file: "\(directory)/config.yaml")
  }

  /// authorizePayment params for one ticket (or `quantity`) paid with `paymentData`.
  public static func authorizeParams(
    paymentData: JSONValue, quantity: Int = 1, extra: String = "",
    card: String = #"{"displayName":"Visa 4320","network":"Visa","type":"debit"}"#
  ) -> String {
    return """
      {"items":[{"sku":"ticket","quantity":\(quantity)}],"shippingMethod":"mobile",\
      "payment":{"token":{"paymentData":\(JSONWriter.string(paymentData)),"paymentMethod":\(card),\
      "transactionIdentifier":"\(transactionId.uppercased())"},"shippingContact":{"emailAddress":"fan@example.com"}}\(extra)}
      """
  }

  public static let processParams = """
    "items":[{"sku":"ticket"}],"shippingMethod":"mobile","shippingContact":{"emailAddress":"fan@example.com"},\
    "amount":"1.00","currencyCode":"USD"
    """
}
