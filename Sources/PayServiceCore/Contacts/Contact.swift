/// An Apple Pay JS `ApplePayPaymentContact` (PassKit's `PKContact` flattened).
///
/// Members payservice does not know (Apple adds some over time) are ignored rather than rejected.
public struct Contact: Equatable, Sendable, JSONRepresentable {
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

  /// The string members, in the order their problems are reported.
  static let stringKeys = [
    "givenName", "familyName", "emailAddress", "phoneNumber", "subLocality", "locality",
    "subAdministrativeArea", "administrativeArea", "postalCode", "country", "countryCode",
  ]
  /// A known member's position: the string members in `stringKeys` order, then `addressLines` (11).
  static func memberIndex(_ key: String) -> Int? {
    switch key.utf8.count {
    case 7: return key == "country" ? 9 : nil
    case 8: return key == "locality" ? 5 : nil
    case 9: return key == "givenName" ? 0 : nil
    case 10: return key == "familyName" ? 1 : key == "postalCode" ? 8 : nil
    case 11: return key == "phoneNumber" ? 3 : key == "subLocality" ? 4 : key == "countryCode" ? 10 : nil
    case 12: return key == "emailAddress" ? 2 : key == "addressLines" ? 11 : nil
    case 18: return key == "administrativeArea" ? 7 : nil
    case 21: return key == "subAdministrativeArea" ? 6 : nil
    default: return nil
    }
  }

  private mutating func setString(at index: Int, _ text: String?) {
    switch index {
    case 0: givenName = text
    case 1: familyName = text
    case 2: emailAddress = text
    case 3: phoneNumber = text
    case 4: subLocality = text
    case 5: locality = text
    case 6: subAdministrativeArea = text
    case 7: administrativeArea = text
    case 8: postalCode = text
    case 9: country = text
    default: countryCode = text
    }
  }

  /// Reads a contact; string members may be null (treated as absent).
  public static func read(_ value: JSONValue?, _ path: String, reader: ParamReader, required: Bool) -> Contact? {
    guard let object = reader.object(value, path, required: required) else { return nil }
    var contact = Contact()
    let before = reader.errors.count
    let members = object.members
    // Where the last member with each known key is (as JSON.parse keeps the last), found in one
    // pass from the end into a stack buffer; -1 when absent.
    withUnsafeTemporaryAllocation(of: Int.self, capacity: 12) { position in
      position.initialize(repeating: -1)
      for index in members.indices.reversed() {
        if let field = memberIndex(members[index].key), position[field] < 0 { position[field] = index }
      }
      for (field, key) in stringKeys.enumerated() where position[field] >= 0 {
        contact.setString(at: field, reader.optionalString(members[position[field]].value, "\(path).\(key)"))
      }
      guard position[11] >= 0 else { return }
      switch members[position[11]].value {
      case .null: break
      case .array(let lines):
        var result: [String] = []
        for (index, line) in lines.enumerated() {
          if let text = reader.string(line, "\(path).addressLines[\(index)]", nonEmpty: false) { result.append(text) }
        }
        contact.addressLines = result
      case let other:
        reader.fail("\(path).addressLines", "must be an array of strings, got \(other.kindName)")
      }
    }
    return reader.errors.count == before ? contact : nil
  }

  /// Members in the documented order, absent ones left out.
  public func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.member("givenName", givenName)
    writer.member("familyName", familyName)
    writer.member("emailAddress", emailAddress)
    writer.member("phoneNumber", phoneNumber)
    if let addressLines {
      writer.key("addressLines")
      writer.beginArray()
      for line in addressLines { writer.write(line) }
      writer.endArray()
    }
    writer.member("subLocality", subLocality)
    writer.member("locality", locality)
    writer.member("subAdministrativeArea", subAdministrativeArea)
    writer.member("administrativeArea", administrativeArea)
    writer.member("postalCode", postalCode)
    writer.member("country", country)
    writer.member("countryCode", countryCode)
    writer.endObject()
  }
}

/// Where an order ships, as pricing sees it: `US`, or `US-CA` with a postal code.
public struct Region: Equatable, Sendable {
  public let countryCode: String
  public let administrativeArea: String?
  public let postalCode: String?
  /// "US-CA" when the state is known, else "US" (computed once: rule lookups key on it).
  public let code: String

  /// The contact's region; the merchant's country when the contact has no country code.
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
