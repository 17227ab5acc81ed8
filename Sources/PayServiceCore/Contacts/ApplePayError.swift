/// An Apple Pay JS `ApplePayError`, ready to hand to the payment sheet.
public struct ApplePayError: Equatable, Sendable, WireObject {
  public enum Code: String, Sendable, WireEnum {
    case shippingContactInvalid, billingContactInvalid, addressUnserviceable, couponCodeInvalid
    case couponCodeExpired, unknown
  }

  /// `ApplePayErrorContactField` values.
  public enum ContactField: String, Sendable, WireEnum {
    case phoneNumber, emailAddress, name, postalAddress, addressLines, locality, postalCode
    case administrativeArea, country, countryCode
  }

  public var code: Code
  public var contactField: ContactField?
  public var message: String

  public init(_ code: Code, _ contactField: ContactField?, _ message: String) {
    self.code = code
    self.contactField = contactField
    self.message = message
  }

  public static let shape = ObjectShape<ApplePayError>(
    "An ApplePayError for the sheet.", blank: { ApplePayError(.unknown, nil, "") },
    [
      .member("code", \.code),
      .member("contactField", \.contactField, .optional),
      .member("message", \.message, .required, .string("Short text for the buyer."), read: ParamReader.anyString),
    ])
}
