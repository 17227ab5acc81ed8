/// What messages call a country's postal code and administrative area, and the example they name:
/// words, not rules (the rules are the data's, `AddressRules`). A country not listed is worded from
/// the data: its kind of code (`postal`, `zip`, `pin`, `eircode`) and first example, its kind of
/// area (`state`, `province`, …) and first subdivision.
enum AddressWording {
  /// The country's own word for its postal code and a real code, for "Enter a postcode like SW1A 1AA."
  static let postal: [String: (name: String, example: String)] = [
    "US": ("ZIP code", "95014"), "CA": ("postal code", "K1A 0B1"), "GB": ("postcode", "SW1A 1AA"),
    "AU": ("postcode", "2000"), "CN": ("postal code", "100000"), "JP": ("postal code", "100-0001"),
    "IT": ("CAP", "00184"), "IE": ("Eircode", "D02 X285"), "DE": ("Postleitzahl", "10117"),
    "FR": ("code postal", "75008"), "ES": ("código postal", "28013"), "PT": ("código postal", "1100-148"),
    "NL": ("postcode", "1012 JS"), "BE": ("postcode", "1000"), "LU": ("code postal", "1009"),
    "CH": ("postcode", "3003"), "AT": ("Postleitzahl", "1010"), "DK": ("postnummer", "1050"),
    "NO": ("postnummer", "0150"), "SE": ("postnummer", "111 52"), "FI": ("postinumero", "00100"),
    "IS": ("póstnúmer", "101"), "PL": ("kod pocztowy", "00-950"), "CZ": ("PSČ", "110 00"),
    "SK": ("PSČ", "811 01"), "HU": ("irányítószám", "1051"), "GR": ("postal code", "105 57"),
    "NZ": ("postcode", "6011"), "SG": ("postal code", "018956"), "KR": ("postal code", "03187"),
    "TW": ("postal code", "100"), "IN": ("PIN code", "110001"), "BR": ("CEP", "01310-100"),
    "MX": ("código postal", "06000"), "IL": ("postal code", "9103401"), "ZA": ("postal code", "8001"),
    "MY": ("postcode", "50450"), "TH": ("postal code", "10200"), "SA": ("postal code", "11564"),
  ]

  /// Messages that say more than the name and example.
  static let postalMessages: [String: String] = [
    "US": "Enter a 5-digit ZIP code or ZIP+4, like 95014 or 95014-2083."
  ]

  static let areaMessages: [String: String] = [
    "US": "Enter a US state or territory code, like CA.",
    "CA": "Enter a Canadian province or territory code, like ON.",
    "AU": "Enter an Australian state or territory, like NSW.",
    "CN": "Enter a province, municipality or autonomous region, like 广东省 or Guangdong.",
    "JP": "Enter a prefecture, like 東京都 or Tokyo.",
    "IT": "Enter a province code, like RM.",
  ]

  /// What the postal code is called in `rules`' country.
  static func postalName(_ rules: AddressRules) -> String {
    if let name = postal[rules.country]?.name { return name }
    switch rules.postalNameType {
    case "zip": return "ZIP code"
    case "pin": return "PIN code"
    case "eircode": return "Eircode"
    default: return "postal code"
    }
  }

  static func postalMessage(_ rules: AddressRules) -> String {
    if let message = postalMessages[rules.country] { return message }
    let name = postalName(rules)
    guard let example = postal[rules.country]?.example ?? rules.postalExamples.first else {
      return "Enter the \(name)."
    }
    return "Enter a \(name) like \(example)."
  }

  static func areaMessage(_ rules: AddressRules) -> String {
    if let message = areaMessages[rules.country] { return message }
    let kind = rules.areaNameType.replacingUnderscores
    guard let example = rules.subdivisions.first else { return "Enter the \(kind)." }
    let latin = example.latinName.map { $0 == example.name ? "" : " or \($0)" } ?? ""
    return "Enter a \(kind), like \(example.name)\(latin)."
  }
}

extension String {
  /// `do_si` as `do si`: the data's names of area kinds.
  fileprivate var replacingUnderscores: String { split(separator: "_").joined(separator: " ") }
}
