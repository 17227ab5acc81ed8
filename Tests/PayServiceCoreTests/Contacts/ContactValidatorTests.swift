import PayServiceCore
import Testing

@Suite("Contact validation")
struct ContactValidatorTests {
  let validator = ContactValidator(shipsTo: ["US", "CA"])

  func contact(_ fields: [String: String], lines: [String]? = nil) -> Contact {
    var contact = Contact()
    contact.countryCode = fields["countryCode"]
    contact.administrativeArea = fields["administrativeArea"]
    contact.postalCode = fields["postalCode"]
    contact.locality = fields["locality"]
    contact.givenName = fields["givenName"]
    contact.familyName = fields["familyName"]
    contact.emailAddress = fields["emailAddress"]
    contact.phoneNumber = fields["phoneNumber"]
    contact.addressLines = lines
    return contact
  }

  func fields(_ errors: [ApplePayError]) -> [String] {
    errors.map { "\($0.code.rawValue):\($0.contactField?.rawValue ?? "-")" }
  }

  @Test("US and Canadian postal codes, redacted and full")
  func postalCodes() {
    // The sheet's contact has the city (Apple Pay sends it redacted with the postal code).
    let us = ["95014", "95014-2083", "95014 2083"]
    let notUS = ["9501", "950142", "ABCDE", "95014-208", "10001"]
    for code in us { #expect(validator.addressErrors(contact(["countryCode": "US", "administrativeArea": "CA", "postalCode": code, "locality": "Cupertino"]), role: .shipping, complete: false).isEmpty, "\(code)") }
    for code in notUS { #expect(fields(validator.addressErrors(contact(["countryCode": "US", "administrativeArea": "CA", "postalCode": code, "locality": "Cupertino"]), role: .shipping, complete: false)) == ["shippingContactInvalid:postalCode"], "\(code)") }
    let ca = ["M5V", "M5V 3L9", "m5v 3l9", "M5V3L9"]
    for code in ca { #expect(validator.addressErrors(contact(["countryCode": "CA", "administrativeArea": "ON", "postalCode": code, "locality": "Toronto"]), role: .shipping, complete: false).isEmpty, "\(code)") }
    #expect(fields(validator.addressErrors(contact(["countryCode": "CA", "administrativeArea": "ON", "postalCode": "M5V"], lines: ["1 Front St"]).with(locality: "Toronto"), role: .shipping, complete: true)) == ["shippingContactInvalid:postalCode"])
    #expect(fields(validator.addressErrors(contact(["countryCode": "CA", "administrativeArea": "ON", "postalCode": "5MV", "locality": "Toronto"]), role: .shipping, complete: false)) == ["shippingContactInvalid:postalCode"])
    // Without the city the sheet says so at once: authorization would ask for it.
    #expect(fields(validator.addressErrors(contact(["countryCode": "CA", "administrativeArea": "ON", "postalCode": "M5V"]), role: .shipping, complete: false)) == ["shippingContactInvalid:locality"])
  }

  @Test("country: missing or not shipped to is addressUnserviceable for shipping, invalid for billing")
  func country() {
    #expect(fields(validator.addressErrors(contact([:]), role: .shipping, complete: false)) == ["addressUnserviceable:countryCode"])
    #expect(fields(validator.addressErrors(contact(["countryCode": "FR"]), role: .shipping, complete: false)) == ["addressUnserviceable:countryCode"])
    #expect(fields(validator.addressErrors(contact([:]), role: .billing, complete: false)) == ["billingContactInvalid:countryCode"])
    #expect(validator.addressErrors(contact(["countryCode": "FR", "postalCode": "75001", "locality": "Paris"], lines: ["1 rue"]), role: .billing, complete: true).isEmpty)
  }

  @Test("a complete address needs street, city, postal code and state")
  func complete() {
    #expect(fields(validator.addressErrors(contact(["countryCode": "US"], lines: ["  "]), role: .shipping, complete: true)) == [
      "shippingContactInvalid:addressLines", "shippingContactInvalid:locality", "shippingContactInvalid:postalCode",
      "shippingContactInvalid:administrativeArea",
    ])
  }

  @Test("email, phone and name rules", arguments: [
    ("ada@example.com", true), ("a.b+c@sub.example.co.uk", true), ("ada@", false), ("@example.com", false),
    ("ada@example", false), ("ada @example.com", false), ("ada@@example.com", false), ("ada@-x.com", false),
  ])
  func email(address: String, valid: Bool) {
    let errors = validator.personErrors(contact(["emailAddress": address]), role: .shipping, required: [.email])
    #expect(errors.isEmpty == valid)
  }

  @Test("phone numbers need 7 to 15 digits", arguments: [
    ("+1 (408) 555-0100", true), ("5550100", true), ("555010", false), ("1234567890123456", false),
    ("555-0100 ext 2", false), ("", false),
  ])
  func phone(number: String, valid: Bool) {
    let errors = validator.personErrors(contact(["phoneNumber": number]), role: .billing, required: [.phone])
    #expect(errors.isEmpty == valid)
    if !valid { #expect(fields(errors) == ["billingContactInvalid:phoneNumber"]) }
  }

  @Test("a name is either given or family name; only required fields are checked")
  func name() {
    #expect(validator.personErrors(contact(["familyName": "Lovelace"]), role: .shipping, required: [.name]).isEmpty)
    #expect(fields(validator.personErrors(contact(["givenName": " "]), role: .shipping, required: [.name])) == ["shippingContactInvalid:name"])
    #expect(validator.personErrors(contact(["emailAddress": "bad"]), role: .shipping, required: [.name, .phone]).count == 2)
  }
}

extension Contact {
  fileprivate func with(locality: String) -> Contact {
    var copy = self
    copy.locality = locality
    return copy
  }
}
