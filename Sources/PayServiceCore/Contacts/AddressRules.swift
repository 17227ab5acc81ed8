import Synchronization

/// How addresses are written in one country, read from Google's address metadata (`AddressData`,
/// the data of libaddressinput): which fields the country's addresses use and require, the postal
/// code's pattern and examples, and its first-level subdivisions (states, provinces, prefectures)
/// with their keys, names, Latin names, ISO 3166-2 codes and postal code prefixes.
///
/// A country's rules are read from the table the first time they are asked for, and kept.
public final class AddressRules: Sendable {
  /// A first-level subdivision of a country.
  public struct Subdivision: Sendable {
    /// The data's key: what an order stores (`CA`, `東京都`, `广东省`).
    public let key: String
    /// The ISO 3166-2 subdivision code, without the country (`CA`, `13`, `44`); nil when the data has none.
    public let isoCode: String?
    public let name: String
    public let latinName: String?
    /// A pattern the subdivision's postal codes start with; nil when the data gives none.
    let postalPrefix: PostalPattern?
    /// Real postal codes of the subdivision.
    public let postalExamples: [String]
  }

  /// ISO 3166-1 alpha-2.
  public let country: String
  /// The country's name as the data writes it (`UNITED KINGDOM`).
  public let name: String
  /// The fields the country's addresses use and require, by the data's letters: `A` street, `C`
  /// city, `S` administrative area, `Z` postal code, `D` dependent locality, `X` sorting code.
  let uses: Set<Character>
  let requires: Set<Character>
  let postalPattern: PostalPattern?
  /// Real postal codes of the country, from the data.
  public let postalExamples: [String]
  /// The country's and then its subdivisions' examples: the shapes codes are normalized to and the
  /// hidden parts that complete redacted ones.
  private let allPostalExamples: [String]
  /// The data's word for the postal code (`postal`, `zip`, `pin`, `eircode`) and for the area
  /// (`state`, `province`, `prefecture`, `county`, …).
  public let postalNameType: String
  public let areaNameType: String
  public let subdivisions: [Subdivision]
  /// Every accepted spelling of a subdivision (key, name, Latin name, other-language names, ISO
  /// code with and without the country), folded (`fold`), to its index in `subdivisions`.
  /// The index is an `Int32`, not an `Int`: the standard library ships `[String: Int]`'s code
  /// compiled in advance, and that code builds its storage's metadata from a mangled name, which
  /// makes the runtime check `String: Hashable` by reading every conformance record of the binary
  /// (about 700 KiB of pages, on the first address a process validates). This module's own
  /// specialization builds it directly (Package.swift, `leanCodegen`).
  private let subdivisionIndex: [String: Int32]
  /// Every accepted spelling of each subdivision, as given (in `subdivisions` order).
  private let subdivisionSpellings: [[String]]

  public var requiresStreet: Bool { requires.contains("A") }
  public var requiresCity: Bool { requires.contains("C") }
  /// Whether the country's addresses have postal codes at all.
  public var usesPostalCode: Bool { uses.contains("Z") }
  public var requiresPostalCode: Bool { requires.contains("Z") && uses.contains("Z") }
  public var usesArea: Bool { uses.contains("S") }
  public var requiresArea: Bool { requires.contains("S") && uses.contains("S") }
  /// Whether an area must be one of `subdivisions`: required, and the data lists them. Where the
  /// data lists subdivisions but does not require an area, any text is accepted.
  public var areaMustBeKnown: Bool { requiresArea && !subdivisions.isEmpty }

  init(
    country: String, name: String, format: String, require: String, postalPattern: PostalPattern?,
    postalExamples: [String], postalNameType: String, areaNameType: String, subdivisions: [Subdivision],
    otherNames: [[String]]
  ) {
    self.country = country
    self.name = name
    var uses: Set<Character> = []
    var previous: Character?
    for character in format {
      if previous == "%" { uses.insert(character) }
      previous = previous == "%" ? nil : character
    }
    self.uses = uses
    self.requires = Set(require)
    self.postalPattern = postalPattern
    self.postalExamples = postalExamples
    self.allPostalExamples = postalExamples + subdivisions.flatMap(\.postalExamples)
    self.postalNameType = postalNameType
    self.areaNameType = areaNameType
    self.subdivisions = subdivisions
    var index: [String: Int32] = [:]
    var allSpellings: [[String]] = []
    // A Latin name's last word that two or more of the country's Latin names end with is a kind
    // of area (`Guangdong Sheng`, `Xizang Zizhiqu`): the name is also accepted without it.
    let lastWords = subdivisions.compactMap { subdivision -> String? in
      guard let words = subdivision.latinName?.split(separator: " "), words.count > 1, let last = words.last else {
        return nil
      }
      return Self.fold(String(last))
    }
    let kinds = Set(lastWords.filter { word in lastWords.count(where: { $0 == word }) >= 2 })
    for (position, subdivision) in subdivisions.enumerated() {
      var spellings = [subdivision.key, subdivision.name] + otherNames[position]
      if let latin = subdivision.latinName {
        spellings.append(latin)
        let words = latin.split(separator: " ")
        if words.count > 1, let last = words.last, kinds.contains(Self.fold(String(last))) {
          spellings.append(words.dropLast().joined(separator: " "))
        }
      }
      if let iso = subdivision.isoCode {
        spellings += [iso, country + "-" + iso]
        // Numeric codes also without their leading zeros (Japan's `1` for Hokkaido, `01`).
        if let number = Int(iso), String(number) != iso { spellings.append(String(number)) }
      }
      for spelling in spellings where !spelling.isEmpty {
        let folded = Self.fold(spelling)
        if index[folded] == nil { index[folded] = Int32(position) }
      }
      allSpellings.append(spellings.filter { !$0.isEmpty })
    }
    subdivisionIndex = index
    subdivisionSpellings = allSpellings
  }

  // MARK: Postal codes

  /// `code` as the country writes it: trimmed and upper-cased, with its spaces and hyphens where the
  /// first of the country's examples of its length (without them) has them, when that is a code of
  /// the country (`1540023` → `154-0023`, `sw1a1aa` → `SW1A 1AA`, `77 038` → `77038`); else with
  /// runs of spaces made one. Unchanged but for that when nothing matches.
  public func normalizedPostalCode(_ code: String) -> String {
    let cleaned = Self.clean(code)
    guard let pattern = postalPattern else { return cleaned }
    let bare = cleaned.filter { $0 != " " && $0 != "-" }
    for example in allPostalExamples {
      guard example.count(where: { $0 != " " && $0 != "-" }) == bare.count else { continue }
      var shaped = ""
      var rest = bare[...]
      for character in example {
        if character == " " || character == "-" {
          shaped.append(character)
        } else if let next = rest.popFirst() {
          shaped.append(next)
        }
      }
      if pattern.matchesWhole(shaped) { return shaped }
    }
    return cleaned
  }

  /// Whether `code` (normalized) is a postal code of the country and, when `subdivision` is given,
  /// not one the data places in another subdivision (a New York ZIP for California). A code the
  /// data places in no subdivision is not refused for its area: the data is silent there. Any code
  /// passes where the data has no pattern.
  public func acceptsPostalCode(_ code: String, in subdivision: Subdivision?) -> Bool {
    if let pattern = postalPattern, !pattern.matchesWhole(code) { return false }
    guard let prefix = subdivision?.postalPrefix, !prefix.matchesPrefix(code) else { return true }
    return !subdivisions.contains { $0.postalPrefix?.matchesPrefix(code) == true }
  }

  /// What Apple Pay sends of a postal code before the payment is authorized, by country: the UK's
  /// outward code, Canada's first three characters, Japan's first three digits. Nil for a country
  /// whose codes it sends whole.
  static func redacted(_ code: String, country: String) -> String? {
    switch country {
    case "GB": return code.split(separator: " ", maxSplits: 1).first.map(String.init)
    case "CA", "JP": return String(code.prefix(3))
    default: return nil
    }
  }

  /// What an erasure of personal data keeps of a postal code: what Apple Pay shows of it before
  /// authorization where it redacts codes (the UK's outward code, Canada's and Japan's first three
  /// characters), elsewhere its first three characters (a US ZIP code's sectional center).
  public static func postalPrefix(_ code: String, country: String) -> String {
    redacted(code, country: country) ?? String(code.prefix(3))
  }

  /// Whether `code` is what the sheet sends of some postal code of the country (of `subdivision`,
  /// when given) before authorization: a whole code, or (where Apple Pay redacts codes) a redacted
  /// one that a real code's hidden part completes into one. The hidden parts are the data's
  /// examples'. What this accepts, authorization accepts whole with the same area.
  public func acceptsRedactedPostalCode(_ code: String, in subdivision: Subdivision?) -> Bool {
    if acceptsPostalCode(code, in: subdivision) { return true }
    return allPostalExamples.contains { example in
      guard let shown = Self.redacted(example, country: country), shown.count < example.count else { return false }
      return acceptsPostalCode(code + example.dropFirst(shown.count), in: subdivision)
    }
  }

  // MARK: Subdivisions

  /// The subdivision `text` names, as key, name, Latin name, another language's name or ISO code,
  /// in any case and spacing; nil when none does.
  public func subdivision(named text: String) -> Subdivision? {
    subdivisionIndex[Self.fold(text)].map { subdivisions[Int($0)] }
  }

  /// Every spelling `subdivision(named:)` takes for the subdivision keyed `key` (in one case each).
  public func spellings(of key: String) -> [String] {
    subdivisions.firstIndex { $0.key == key }.map { subdivisionSpellings[$0] } ?? []
  }

  /// Text compared without case, surrounding whitespace or repeated inner spaces.
  static func fold(_ text: String) -> String {
    spaced(text, upper: false)
  }

  /// Trimmed, upper-cased, inner runs of whitespace made one space.
  static func clean(_ text: String) -> String {
    spaced(text, upper: true)
  }

  /// `text` trimmed, its inner runs of ASCII whitespace made one space, and its case changed: byte
  /// by byte for ASCII text (nearly all of it; Unicode's case tables are read only for the rest).
  private static func spaced(_ text: String, upper: Bool) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count)
    var ascii = true
    var pendingSpace = false
    for byte in text.utf8 {
      if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
        pendingSpace = !bytes.isEmpty
        continue
      }
      if pendingSpace {
        bytes.append(0x20)
        pendingSpace = false
      }
      if byte >= 0x80 { ascii = false }
      bytes.append(byte)
    }
    guard ascii else {
      let spaced = String(decoding: bytes, as: UTF8.self)
      return upper ? spaced.uppercased() : spaced.lowercased()
    }
    for index in bytes.indices {
      let byte = bytes[index]
      if upper, (0x61...0x7A).contains(byte) { bytes[index] = byte - 0x20 }
      if !upper, (0x41...0x5A).contains(byte) { bytes[index] = byte + 0x20 }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  // MARK: Contacts

  /// `contact` as an order records it: the country code upper-cased, the postal code normalized
  /// (`normalizedPostalCode`) and the area as its subdivision's key when the data names one;
  /// everything else as given. A contact of a country the data does not know is returned as it is.
  public static func canonical(_ contact: Contact) -> Contact {
    guard let country = contact.countryCode.flatMap(Region.normalize), let rules = forCountry(country) else {
      return contact
    }
    var canonical = contact
    canonical.countryCode = country
    if let postal = contact.postalCode, !postal.isBlank { canonical.postalCode = rules.normalizedPostalCode(postal) }
    if let area = contact.administrativeArea, let subdivision = rules.subdivision(named: area) {
      canonical.administrativeArea = subdivision.key
    }
    return canonical
  }

  // MARK: The table

  /// The rules of `country` (ISO 3166-1 alpha-2, upper-cased); nil for a code the data does not know.
  public static func forCountry(_ country: String) -> AddressRules? {
    if let known = cache.withLock({ $0[country] }) { return known }
    guard let rules = AddressData.parse(country: country) else { return nil }
    return cache.withLock { cache in
      if let known = cache[country] { return known }
      cache[country] = rules
      return rules
    }
  }

  private static let cache = Mutex<[String: AddressRules]>([:])

  /// Every country code in the data, in order.
  public static var countries: [String] { AddressData.countries }
}

/// A postal code pattern of the data (a regular expression), compiled at its first use.
final class PostalPattern: Sendable {
  private let source: String
  /// The whole and the prefix match, once compiled (nil inside: the data's pattern does not compile).
  private let compiled = Mutex<(whole: Regex<AnyRegexOutput>, prefix: Regex<AnyRegexOutput>)??>(nil)

  init?(_ source: String) {
    guard !source.isEmpty else { return nil }
    self.source = source
  }

  private func regexes() -> (whole: Regex<AnyRegexOutput>, prefix: Regex<AnyRegexOutput>)? {
    compiled.withLock { compiled in
      if let compiled { return compiled }
      let made = (try? Regex("^(?:\(source))$")).flatMap { whole in
        (try? Regex("^(?:\(source))")).map { (whole: whole, prefix: $0) }
      }
      compiled = .some(made)
      return made
    }
  }

  /// Recent answers by text: a sheet sends the same code with every event and again at
  /// authorization, and a regular expression's match costs microseconds. Emptied when full.
  private let recent = Mutex<[String: (whole: Bool?, prefix: Bool?)]>([:])
  private static let recentLimit = 1024

  private func remembered(_ text: String, whole: Bool, _ match: () -> Bool) -> Bool {
    if let known = recent.withLock({ whole ? $0[text]?.whole : $0[text]?.prefix }) { return known }
    let matched = match()
    recent.withLock { recent in
      if recent.count >= Self.recentLimit { recent.removeAll(keepingCapacity: true) }
      if whole { recent[text, default: (nil, nil)].whole = matched } else { recent[text, default: (nil, nil)].prefix = matched }
    }
    return matched
  }

  /// Whether the whole of `text` matches (a pattern that does not compile matches everything).
  func matchesWhole(_ text: String) -> Bool {
    remembered(text, whole: true) {
      guard let regex = regexes()?.whole else { return true }
      return (try? regex.wholeMatch(in: text)) != nil
    }
  }

  func matchesPrefix(_ text: String) -> Bool {
    remembered(text, whole: false) {
      guard let regex = regexes()?.prefix else { return true }
      return (try? regex.prefixMatch(in: text)) != nil
    }
  }
}

extension AddressData {
  /// Every country code, in the table's order.
  static let countries: [String] = records.split(separator: "\n").compactMap { line in
    line.hasPrefix("C\t") ? String(line.dropFirst(2).prefix { $0 != "\t" }) : nil
  }

  /// The `C` line of `country` and its `S` lines, parsed; nil when the table has no such country.
  /// Only that country's lines are read (the table is searched as bytes: a start that prices one
  /// cart reads one country).
  static func parse(country: String) -> AddressRules? {
    guard country.utf8.count == 2, country.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) else { return nil }
    let block: [Substring]? = records.utf8.withContiguousStorageIfAvailable { bytes in
      // The line that starts `C\tCC\t`: from line start to line start.
      let head = Array("C\t\(country)\t".utf8)
      var at = 0
      var start: Int?
      while at + head.count <= bytes.count {
        if bytes[at] == head[0] && bytes[at + 2] == head[2] && bytes[at + 3] == head[3] && bytes[at + 1] == 0x09
          && bytes[at + 4] == 0x09
        {
          start = at
          break
        }
        guard let newline = bytes[at...].firstIndex(of: 0x0A) else { break }
        at = newline + 1
      }
      guard let start else { return nil }
      var end = start
      var lines: [Range<Int>] = []
      while end < bytes.count {
        let lineEnd = bytes[end...].firstIndex(of: 0x0A) ?? bytes.count
        if !lines.isEmpty && !(bytes[end] == UInt8(ascii: "S") && bytes[end + 1] == 0x09) { break }
        lines.append(end..<lineEnd)
        end = lineEnd + 1
      }
      return lines.map { Substring(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
    } ?? nil
    guard var lines = block?[...], let countryLine = lines.popFirst() else { return nil }
    let c = countryLine.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
    guard c.count == 13 else { return nil }
    var subdivisions: [AddressRules.Subdivision] = []
    var otherNames: [[String]] = []
    for line in lines {
      let s = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
      guard s.count == 9, s[1] == country else { break }
      subdivisions.append(
        AddressRules.Subdivision(
          key: s[2], isoCode: s[3].isEmpty ? nil : s[3], name: s[6].isEmpty ? s[2] : s[6],
          latinName: s[7].isEmpty ? nil : s[7], postalPrefix: PostalPattern(s[4]),
          postalExamples: s[5].isEmpty ? [] : s[5].split(separator: ",").map(String.init)))
      otherNames.append(s[8].isEmpty ? [] : s[8].split(separator: "~").map(String.init))
    }
    return AddressRules(
      country: c[1], name: c[2], format: c[3], require: c[4], postalPattern: PostalPattern(c[6]),
      postalExamples: c[7].isEmpty ? [] : c[7].split(separator: ",").map(String.init), postalNameType: c[8],
      areaNameType: c[9], subdivisions: subdivisions, otherNames: otherNames)
  }
}
