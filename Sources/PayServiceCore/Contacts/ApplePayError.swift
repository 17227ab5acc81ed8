/// An Apple Pay JS `ApplePayError`, ready to hand to the payment sheet.
public struct ApplePayError: Equatable, Sendable, JSONRepresentable {
  public enum Code: String, Sendable, CaseIterable {
    case shippingContactInvalid, billingContactInvalid, addressUnserviceable, couponCodeInvalid
    case couponCodeExpired, unknown
  }

  /// `ApplePayErrorContactField` values.
  public enum ContactField: String, Sendable, CaseIterable {
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

  public func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.member("code", code.rawValue)
    writer.member("contactField", contactField?.rawValue)
    writer.member("message", message)
    writer.endObject()
  }
}
