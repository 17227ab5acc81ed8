/// Checks contacts the way a payment sheet needs: each problem as an `ApplePayError` naming the field.
public struct ContactValidator: Sendable {
  public enum Role: Sendable { case shipping, billing }

  public let shipsTo: [String]

  public init(shipsTo: [String]) {
    self.shipsTo = shipsTo
  }

  /// Checks a postal address against its country's rules (`AddressRules`, Google's address
  /// metadata). `complete` false is the redacted address the sheet sends with
  /// `onshippingcontactselected` (no street; the postal code may be cut, see
  /// `AddressRules.redacted`): it is refused for everything the complete address with the same
  /// fields would be refused for, so that the sheet never promises what authorization refuses.
  public func addressErrors(_ contact: Contact?, role: Role, complete: Bool) -> [ApplePayError] {
    let invalid: ApplePayError.Code = role == .shipping ? .shippingContactInvalid : .billingContactInvalid
    var errors: [ApplePayError] = []
    let contact = contact ?? Contact()
    let who = role == .shipping ? "shipping" : "billing"
    let country = contact.countryCode.flatMap(Region.normalize) ?? ""
    // A country the data does not know gets the generic rules: a street, a city and a postal code.
    let rules = country.isEmpty ? nil : AddressRules.forCountry(country)
    // At authorization the street and city come first; on the sheet (no street) the city comes
    // after the country, which may make it moot.
    if complete {
      errors += streetAndCity(
        contact, invalid: invalid, who: who, street: rules?.requiresStreet ?? true, city: rules?.requiresCity ?? true)
    }
    if country.isEmpty {
      let code: ApplePayError.Code = role == .shipping ? .addressUnserviceable : invalid
      errors.append(ApplePayError(code, .countryCode, "Enter the \(who) country."))
      return errors
    }
    if role == .shipping && !shipsTo.contains(country) {
      errors.append(
        ApplePayError(
          .addressUnserviceable, .countryCode,
          "We don't ship to \(country). We ship to \(shipsTo.joined(separator: ", "))."))
      return errors
    }
    guard let rules else {
      if complete && (contact.postalCode.flatMap(Region.normalize) ?? "").isEmpty {
        errors.append(ApplePayError(invalid, .postalCode, "Enter the \(who) postal code."))
      }
      return errors
    }
    if !complete { errors += streetAndCity(contact, invalid: invalid, who: who, street: false, city: rules.requiresCity) }
    let area = contact.administrativeArea.map(AddressRules.clean) ?? ""
    let subdivision = area.isEmpty ? nil : rules.subdivision(named: area)
    if rules.usesPostalCode {
      let postal = contact.postalCode.map(rules.normalizedPostalCode) ?? ""
      let refused =
        postal.isEmpty
        ? rules.requiresPostalCode
        : complete
          ? !rules.acceptsPostalCode(postal, in: subdivision)
          : !rules.acceptsRedactedPostalCode(postal, in: subdivision)
      if refused { errors.append(ApplePayError(invalid, .postalCode, AddressWording.postalMessage(rules))) }
    }
    if rules.usesArea, area.isEmpty ? rules.requiresArea : rules.areaMustBeKnown && subdivision == nil {
      errors.append(ApplePayError(invalid, .administrativeArea, AddressWording.areaMessage(rules)))
    }
    return errors
  }

  /// The street and city, when asked for and missing.
  private func streetAndCity(_ contact: Contact, invalid: ApplePayError.Code, who: String, street: Bool, city: Bool)
    -> [ApplePayError]
  {
    var errors: [ApplePayError] = []
    if street && !(contact.addressLines ?? []).contains(where: { !$0.isBlank }) {
      errors.append(ApplePayError(invalid, .addressLines, "Enter the \(who) street address."))
    }
    if city && contact.locality?.isBlank ?? true {
      errors.append(ApplePayError(invalid, .locality, "Enter the \(who) city."))
    }
    return errors
  }

  /// Checks the name, email and phone fields that are required.
  public func personErrors(_ contact: Contact?, role: Role, required: [ContactField]) -> [ApplePayError] {
    let invalid: ApplePayError.Code = role == .shipping ? .shippingContactInvalid : .billingContactInvalid
    let contact = contact ?? Contact()
    var errors: [ApplePayError] = []
    if required.contains(.name), (contact.givenName?.isBlank ?? true) && (contact.familyName?.isBlank ?? true) {
      errors.append(ApplePayError(invalid, .name, "Enter a name."))
    }
    if required.contains(.email), !Self.isEmailAddress(contact.emailAddress ?? "") {
      errors.append(ApplePayError(invalid, .emailAddress, "Enter a valid email address, like name@example.com."))
    }
    if required.contains(.phone), !Self.isPhoneNumber(contact.phoneNumber ?? "") {
      errors.append(ApplePayError(invalid, .phoneNumber, "Enter a phone number with 7 to 15 digits."))
    }
    return errors
  }

  /// local@domain.tld: one "@", no spaces, a non-empty local part, a domain of dot-separated labels.
  static func isEmailAddress(_ text: String) -> Bool {
    let parts = text.split(separator: "@", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64, text.utf8.count <= 254 else {
      return false
    }
    guard !text.contains(where: { $0 == " " || $0.isNewline || $0 == "\t" }) else { return false }
    let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
    guard labels.count >= 2 else { return false }
    return labels.allSatisfy { label in
      !label.isEmpty && !label.hasPrefix("-") && !label.hasSuffix("-")
        && label.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
    }
  }

  /// 7 to 15 digits, with only spaces, "+", "-", ".", "(" and ")" between them.
  static func isPhoneNumber(_ text: String) -> Bool {
    var digits = 0
    for character in text {
      if character.isASCIIDigit {
        digits += 1
      } else if !" +-.()".contains(character) {
        return false
      }
    }
    return (7...15).contains(digits)
  }
}
