/// An Apple Pay JS `ApplePayPaymentContact` (PassKit's `PKContact` flattened).
///
/// Members payservice does not know (Apple adds some over time) are ignored rather than rejected.
public struct Contact: Equatable, Sendable, WireObject {
  public var givenName: String?
  public var familyName: String?
  public var emailAddress: String?
  public var phoneNumber: String?
  public var addressLines: [String]?
  public var subLocality: String?
  public var locality: String?
  public var subAdministrativeArea: String?
  public var administrativeArea: String?
  public var postalCode: String?
  public var country: String?
  public var countryCode: String?

  public init() {}

  /// The most UTF-8 bytes of any text member (a name, an address line, an email address): the
  /// longest a payment sheet's field holds by far (email addresses stop at 254, RFC 5321), and a
  /// bound on what one request can make the store keep.
  public static let maxFieldBytes = 256
  /// The most `addressLines`.
  public static let maxAddressLines = 8

  /// What the sheet sends: every member optional, null meaning absent, unknown members ignored.
  /// payservice writes known members only, absent ones left out (`storedSchema`).
  public static let shape = ObjectShape<Contact>(
    "An ApplePayPaymentContact. Every member is optional; null counts as absent; unknown members are ignored.",
    closed: false, blank: { Contact() },
    [
      text("givenName", \.givenName), text("familyName", \.familyName), text("emailAddress", \.emailAddress),
      text("phoneNumber", \.phoneNumber),
      .member(
        "addressLines", \.addressLines, .optionalOrNull,
        read: { value, path, reader in
          guard case .array(let lines) = value else {
            reader.fail(path(), "must be an array of strings, got \(value.kindName)")
            return nil
          }
          guard lines.count <= maxAddressLines else {
            reader.fail(path(), "must have at most \(maxAddressLines) lines, got \(lines.count)")
            return nil
          }
          var result: [String] = []
          for (index, line) in lines.enumerated() {
            if let text = readText(line, { "\(path())[\(index)]" }, reader) { result.append(text) }
          }
          return result.count == lines.count ? result : nil
        }),
      text("subLocality", \.subLocality), text("locality", \.locality),
      text("subAdministrativeArea", \.subAdministrativeArea), text("administrativeArea", \.administrativeArea),
      text("postalCode", \.postalCode), text("country", \.country), text("countryCode", \.countryCode),
    ])

  /// A contact as payservice writes it.
  public static var storedSchema: JSONSchema {
    shape.schema(
      description: "An ApplePayPaymentContact as stored: known members only.", closed: true, allowingNull: false)
  }

  private static func text(_ name: StaticString, _ keyPath: WritableKeyPath<Contact, String?> & Sendable) -> Field<Contact> {
    .member(name, keyPath, .optionalOrNull, read: { value, path, reader in readText(value, path, reader) })
  }

  /// A string member of at most `maxFieldBytes` (the empty one included).
  private static func readText(_ value: JSONValue, _ path: () -> String, _ reader: ParamReader) -> String? {
    guard let text = reader.string(value, path(), nonEmpty: false) else { return nil }
    guard text.utf8.count <= maxFieldBytes else {
      reader.fail(path(), "must be at most \(maxFieldBytes) bytes of UTF-8, got \(text.utf8.count)")
      return nil
    }
    return text
  }
}

extension Contact {
  /// What an erasure of personal data keeps: the country, the region (administrative area) and the
  /// postal code's prefix (`AddressRules.postalPrefix`), what tax and the books need. Names, street
  /// lines, localities, email address and phone number go.
  public var erased: Contact {
    var kept = Contact()
    kept.country = country
    kept.countryCode = countryCode
    kept.administrativeArea = administrativeArea
    kept.postalCode = postalCode.map { AddressRules.postalPrefix($0, country: countryCode?.uppercased() ?? "") }
    return kept
  }
}

/// Where an order ships, as pricing sees it: `US`, or `US-CA` with a postal code.
public struct Region: Equatable, Sendable {
  public let countryCode: String
  public let administrativeArea: String?
  public let postalCode: String?
  /// "US-CA" when the state is known, else "US" (computed once: rule lookups key on it).
  public let code: String

  /// The contact's region; the merchant's country when the contact has no country code. The area
  /// is as given, normalized; rules find it under any spelling of it (`RuleIndex`).
  public init(contact: Contact?, defaultCountry: String) {
    let country = contact?.countryCode.flatMap(Region.normalize) ?? defaultCountry
    let area = contact?.administrativeArea.flatMap(Region.normalize)
    countryCode = country
    administrativeArea = area
    postalCode = contact?.postalCode.flatMap(Region.normalize)
    code = area.map { country + "-" + $0 } ?? country
  }

  /// Trimmed of ASCII whitespace and uppercased; nil when nothing is left.
  static func normalize(_ text: String) -> String? {
    // Nearly every code arrives clean ("CA", "US", "90210"): return it without copying.
    if !text.isEmpty, text.utf8.allSatisfy({ !($0 >= 0x61 && $0 <= 0x7A) && !Region.isSpace($0) && $0 < 0x80 }) {
      return text
    }
    let trimmed = text.trimmingASCIIWhitespace().uppercased()
    return trimmed.isEmpty ? nil : trimmed
  }

  static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

  /// True when `list` names this country or this country-and-state.
  public func isIn(_ list: [String]) -> Bool {
    list.contains { $0 == countryCode || $0 == code }
  }
}
