import Foundation

/// Reads typed fields out of a composed YAML node tree, recording each problem with the node's
/// line and column and the field path. Scalars are read from their source text, so an unquoted
/// `price: 50.00` is the decimal 50.00 and never a binary float.
///
/// Field paths are autoclosures: they are put together only for a report, not for each field
/// read at every start.
final class YAMLFieldReader {
  let file: String
  private(set) var problems: [ConfigError.Problem] = []

  init(file: String) {
    self.file = file
  }

  func report(_ node: YAMLNode?, _ path: String, _ message: String) {
    let mark = node?.mark
    problems.append(.init(file: file, line: mark?.line, column: mark?.column, path: path, message: message))
  }

  /// A mapping's values by key. Unknown keys and non-string keys are reported.
  func mapping(_ node: YAMLNode, _ path: @autoclosure () -> String, allowed: [String]) -> YAMLFields? {
    guard case .mapping(let mapping) = node else {
      report(node, path(), "must be a mapping with keys \(allowed.joined(separator: ", "))")
      return nil
    }
    var values = YAMLFields()
    values.pairs.reserveCapacity(mapping.count)
    for (keyNode, value) in mapping {
      guard case .scalar(let key) = keyNode else {
        report(keyNode, path(), "keys must be plain names")
        continue
      }
      guard allowed.contains(key.string) else {
        report(keyNode, FieldPath.join(path(), key.string), "unknown key; valid keys here: \(allowed.joined(separator: ", "))")
        continue
      }
      values.pairs.append((key.string, value))
    }
    return values
  }

  private func isNull(_ scalar: YAMLNode.Scalar) -> Bool {
    scalar.style == .plain && ["", "~", "null", "Null", "NULL"].contains(scalar.string)
  }

  /// `expected` is built only for the report: these readers run for every field at every start.
  func scalar(_ node: YAMLNode, _ path: @autoclosure () -> String, expected: @autoclosure () -> String) -> YAMLNode.Scalar? {
    guard case .scalar(let scalar) = node, !isNull(scalar) else {
      report(node, path(), "must be \(expected())")
      return nil
    }
    return scalar
  }

  func string(_ node: YAMLNode, _ path: @autoclosure () -> String, nonEmpty: Bool = true) -> String? {
    guard let scalar = scalar(node, path(), expected: "a string") else { return nil }
    if nonEmpty && scalar.string.isWhitespaceOnly {
      report(node, path(), "must not be empty")
      return nil
    }
    return scalar.string
  }

  func int(_ node: YAMLNode, _ path: @autoclosure () -> String, range: ClosedRange<Int>) -> Int? {
    func expected() -> String { "a whole number from \(range.lowerBound) to \(range.upperBound)" }
    guard let scalar = scalar(node, path(), expected: expected()) else { return nil }
    let text = scalar.string
    guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
      let value = Int(text),
      range.contains(value)
    else {
      report(node, path(), "must be \(expected()), got \"\(text)\"")
      return nil
    }
    return value
  }

  func bool(_ node: YAMLNode, _ path: @autoclosure () -> String) -> Bool? {
    guard let scalar = scalar(node, path(), expected: "true or false") else { return nil }
    switch scalar.string.lowercased() {
    case "true": return true
    case "false": return false
    default:
      report(node, path(), "must be true or false, got \"\(scalar.string)\"")
      return nil
    }
  }

  func sequence(_ node: YAMLNode, _ path: @autoclosure () -> String) -> [YAMLNode]? {
    guard case .sequence(let sequence) = node else {
      report(node, path(), "must be a list")
      return nil
    }
    return Array(sequence)
  }

  /// A list of strings, each checked by `validate` (which returns a problem message or nil).
  func stringList(
    _ node: YAMLNode, _ path: @autoclosure () -> String, allowEmpty: Bool = false, unique: Bool = true,
    validate: (String) -> String? = { _ in nil }
  ) -> [String]? {
    guard let nodes = sequence(node, path()) else { return nil }
    if nodes.isEmpty && !allowEmpty {
      report(node, path(), "must list at least one entry")
      return nil
    }
    var values: [String] = []
    var seen = NameSet()
    var ok = true
    for (index, element) in nodes.enumerated() {
      func elementPath() -> String { "\(path())[\(index)]" }
      guard let text = string(element, elementPath()) else {
        ok = false
        continue
      }
      if let problem = validate(text) {
        report(element, elementPath(), problem)
        ok = false
      } else if unique && !seen.insert(text) {
        report(element, elementPath(), "\"\(text)\" is listed twice")
        ok = false
      } else {
        values.append(text)
      }
    }
    return ok ? values : nil
  }

  /// An amount in minor units: a decimal string or unquoted number read from its text. `cap`, when
  /// given, is the most it may be (`Config.maxPriceMinor`).
  func amount(
    _ node: YAMLNode, _ path: @autoclosure () -> String, digits: Int, allowZero: Bool, allowNegative: Bool = false,
    cap: Int64? = nil
  ) -> Int64? {
    func expected() -> String { "a decimal amount like \"\(MoneyText.format(5000, digits: digits))\"" }
    guard let scalar = scalar(node, path(), expected: expected()) else { return nil }
    func overCap(_ cap: Int64) -> Int64? {
      report(
        node, path(),
        "must be at most \(MoneyText.format(cap, digits: digits)) (so that the largest cart, 100 lines of 9999 units "
          + "with a card surcharge, shipping and tax, stays within 10^15 minor units), got \"\(scalar.string)\"")
      return nil
    }
    switch MoneyText.minorUnits(scalar.string, digits: digits) {
    case .failure(.notADecimal):
      report(node, path(), "must be \(expected()), got \"\(scalar.string)\"")
      return nil
    case .failure(.tooManyDecimals(let allowed)):
      report(node, path(), "\"\(scalar.string)\" has more than the currency's \(allowed) decimal digits")
      return nil
    case .failure(.tooLarge):
      if let cap { return overCap(cap) }
      report(node, path(), "\"\(scalar.string)\" is too large")
      return nil
    case .success(let minor):
      if minor < 0 && !allowNegative {
        report(node, path(), "must not be negative, got \"\(scalar.string)\"")
        return nil
      }
      if minor == 0 && !allowZero {
        report(node, path(), "must be greater than zero")
        return nil
      }
      if let cap, minor > cap { return overCap(cap) }
      return minor
    }
  }

  func rate(_ node: YAMLNode, _ path: @autoclosure () -> String) -> Rate? {
    let expected = "a decimal rate from 0 to 1 like \"0.0725\""
    guard let scalar = scalar(node, path(), expected: expected) else { return nil }
    guard let rate = Rate(scalar.string), rate.isAtMostOne else {
      report(node, path(), "must be \(expected) (at most 12 decimals), got \"\(scalar.string)\"")
      return nil
    }
    return rate
  }

  /// A percentage within `range` (whole percent), as the fraction it stands for: "10" -> 0.10.
  /// `zero` says whether exactly 0 is allowed.
  func percent(_ node: YAMLNode, _ path: @autoclosure () -> String, range: ClosedRange<Int64>, zero: Bool) -> Rate? {
    func expected() -> String {
      let bounds = "from \(range.lowerBound) to \(range.upperBound)\(zero ? "" : ", not 0")"
      return "a percentage \(bounds) like \"\(range.lowerBound < 0 ? "-5" : "10")\" (at most 10 decimals)"
    }
    guard let scalar = scalar(node, path(), expected: expected()) else { return nil }
    guard let rate = Rate(percent: scalar.string, allowNegative: range.lowerBound < 0),
      rate.compare(range.lowerBound, over: 100) >= 0, rate.compare(range.upperBound, over: 100) <= 0,
      zero || rate.numerator != 0
    else {
      report(node, path(), "must be \(expected()), got \"\(scalar.string)\"")
      return nil
    }
    return rate
  }

  /// An RFC 3339 timestamp such as 2026-12-31T23:59:59Z, as seconds since the epoch.
  func timestamp(_ node: YAMLNode, _ path: @autoclosure () -> String) -> Int64? {
    let expected = "an RFC 3339 timestamp like 2026-12-31T23:59:59Z"
    guard let scalar = scalar(node, path(), expected: expected) else { return nil }
    guard let seconds = RFC3339.parse(scalar.string) else {
      report(node, path(), "must be \(expected), got \"\(scalar.string)\"")
      return nil
    }
    return seconds
  }

  /// Reports a missing required key at its parent mapping.
  func require(_ values: YAMLFields, _ key: String, in parent: YAMLNode, _ path: @autoclosure () -> String) -> YAMLNode? {
    guard let node = values[key] else {
      report(parent, FieldPath.join(path(), key), "is required")
      return nil
    }
    return node
  }
}

/// A mapping's values by their keys, in source order. Config mappings have a handful of keys and
/// the composer has already refused repeated ones, so a lookup compares keys in turn instead of
/// hashing them.
struct YAMLFields {
  fileprivate(set) var pairs: [(key: String, value: YAMLNode)] = []

  subscript(key: String) -> YAMLNode? {
    for pair in pairs where pair.key == key { return pair.value }
    return nil
  }
}

/// The names a config list or mapping has used so far (skus, shipping method identifiers, coupon
/// codes, list entries, keys), to report a repeated one in constant time: a config may hold tens of
/// thousands of entries, which compared pairwise would take seconds.
///
/// Its element is its own type, not `String`, so that the set's code is this module's own
/// specialization (built with direct metadata access, Package.swift's `leanCodegen`), not a
/// `Set<String>` copy from another module, whose first use makes the runtime scan every
/// conformance record in the binary to check `String: Hashable`.
struct NameSet {
  private struct Name: Hashable {
    var text: String
  }

  private var names: Set<Name> = []

  /// Adds `text`; false when it was already there.
  mutating func insert(_ text: String) -> Bool {
    names.insert(Name(text: text)).inserted
  }

  func contains(_ text: String) -> Bool {
    names.contains(Name(text: text))
  }

  /// Forgets every name, keeping the storage for the next use.
  mutating func removeAll() {
    names.removeAll(keepingCapacity: true)
  }
}
