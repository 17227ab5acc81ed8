/// Checks contacts the way a payment sheet needs: each problem as an `ApplePayError` naming the field.
public struct ContactValidator: Sendable {
  public enum Role: Sendable { case shipping, billing }

  public let shipsTo: [String]

  public init(shipsTo: [String]) {
    self.shipsTo = shipsTo
  }

  static let usStates: Set<String> = [
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY",
    "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH",
    "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY",
    // Territories and military post offices.
    "AS", "GU", "MP", "PR", "VI", "UM", "AA", "AE", "AP",
  ]

  static let canadianProvinces: Set<String> = [
    "AB", "BC", "MB", "NB", "NL", "NS", "NT", "NU", "ON", "PE", "QC", "SK", "YT",
  ]

  /// 5 digits, or ZIP+4 (12345-6789).
  static func isUSPostalCode(_ code: String) -> Bool {
    let bytes = Array(code.utf8)
    func digits(_ range: Range<Int>) -> Bool { range.allSatisfy { (0x30...0x39).contains(bytes[$0]) } }
    if bytes.count == 5 { return digits(0..<5) }
    if bytes.count == 10 { return digits(0..<5) && bytes[5] == UInt8(ascii: "-") && digits(6..<10) }
    return false
  }

  /// `A1A` (the redacted form the sheet sends before authorization) or `A1A 1A1`; `redactedAllowed`
  /// false requires the full code.
  static func isCanadianPostalCode(_ code: String, redactedAllowed: Bool) -> Bool {
    let bytes = Array(code.utf8)
    func letter(_ i: Int) -> Bool { (0x41...0x5A).contains(bytes[i]) }
    func digit(_ i: Int) -> Bool { (0x30...0x39).contains(bytes[i]) }
    guard bytes.count >= 3, letter(0), digit(1), letter(2) else { return false }
    if bytes.count == 3 { return redactedAllowed }
    let rest = bytes.count == 7 && bytes[3] == 0x20 ? 4 : (bytes.count == 6 ? 3 : -1)
    guard rest > 0 else { return false }
    return digit(rest) && letter(rest + 1) && digit(rest + 2)
  }

  /// Checks a postal address. `complete` false accepts the redacted address the sheet sends with
  /// `onshippingcontactselected` (locality, administrativeArea, postalCode, countryCode).
  public func addressErrors(_ contact: Contact?, role: Role, complete: Bool) -> [ApplePayError] {
    let invalid: ApplePayError.Code = role == .shipping ? .shippingContactInvalid : .billingContactInvalid
    var errors: [ApplePayError] = []
    let contact = contact ?? Contact()
    let who = role == .shipping ? "shipping" : "billing"
    if complete {
      if !(contact.addressLines ?? []).contains(where: { !$0.isBlank }) {
        errors.append(ApplePayError(invalid, .addressLines, "Enter the \(who) street address."))
      }
      if contact.locality?.isBlank ?? true {
        errors.append(ApplePayError(invalid, .locality, "Enter the \(who) city."))
      }
    }
    let country = contact.countryCode.flatMap(Region.normalize) ?? ""
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
    let postal = contact.postalCode.flatMap(Region.normalize) ?? ""
    let area = contact.administrativeArea.flatMap(Region.normalize) ?? ""
    switch country {
    case "US":
      if !Self.isUSPostalCode(postal) {
        errors.append(ApplePayError(invalid, .postalCode, "Enter a 5-digit ZIP code or ZIP+4, like 95014 or 95014-2083."))
      }
      if !Self.usStates.contains(area) {
        errors.append(ApplePayError(invalid, .administrativeArea, "Enter a US state or territory code, like CA."))
      }
    case "CA":
      if !Self.isCanadianPostalCode(postal, redactedAllowed: !complete) {
        errors.append(ApplePayError(invalid, .postalCode, "Enter a postal code like K1A 0B1."))
      }
      if !Self.canadianProvinces.contains(area) {
        errors.append(
          ApplePayError(invalid, .administrativeArea, "Enter a Canadian province or territory code, like ON."))
      }
    default:
      if complete && postal.isEmpty {
        errors.append(ApplePayError(invalid, .postalCode, "Enter the \(who) postal code."))
      }
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
