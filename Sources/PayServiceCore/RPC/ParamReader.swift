/// Reads typed params out of a JSON tree, collecting every problem with its field path
/// (`items[2].quantity`) instead of stopping at the first.
public final class ParamReader {
  public private(set) var errors: [FieldError] = []
  /// The service whose config request values are checked against (known skus, shipping methods);
  /// nil when reading what payservice itself stored. Held as the context (a reference), so that a
  /// check reads one member of the config without copying all of it; unretained, since a reader
  /// lives within one request of that service (a retain of the context, which every thread
  /// shares, would cost each request a contended atomic).
  public unowned(unsafe) let context: ServiceContext?

  public init(context: ServiceContext? = nil) {
    self.context = context
  }

  /// Reads any string, the empty one included (names, labels, contact members).
  public static let anyString: MemberReader<String> = { value, path, reader in
    reader.string(value, path(), nonEmpty: false)
  }

  /// Reads a non-empty string of at most `maxBytes` UTF-8 bytes (a webhook's body as received).
  public static func string(maxBytes: Int) -> MemberReader<String> {
    { value, path, reader in
      guard let text = reader.string(value, path()) else { return nil }
      guard text.utf8.count <= maxBytes else {
        reader.fail(path(), "must be at most \(maxBytes) bytes, got \(text.utf8.count)")
        return nil
      }
      return text
    }
  }

  public func fail(_ path: String, _ message: String) {
    errors.append(FieldError(path: path, message: message))
  }

  /// The params object. Absent params read as `{}`; by-position (array) params are rejected.
  public func params(_ value: JSONValue?) -> JSONObject? {
    switch value {
    case nil: return JSONObject()
    case .object(let object): return object
    case .array:
      fail("params", "must be an object of named params; by-position params are not supported")
      return nil
    case let other?:
      fail("params", "must be an object, got \(other.kindName)")
      return nil
    }
  }

  /// Reports members not in `allowed`.
  public func rejectUnknown(_ object: JSONObject, _ path: @autoclosure () -> String, allowed: [String]) {
    for (key, _) in object.members where !allowed.contains(key) {
      if allowed.isEmpty {
        fail(FieldPath.join(path(), key), "unknown field; this method takes no params")
      } else {
        fail(FieldPath.join(path(), key), "unknown field; expected one of \(allowed.sorted().joined(separator: ", "))")
      }
    }
  }

  public func object(_ value: JSONValue?, _ path: @autoclosure () -> String, required: Bool = true) -> JSONObject? {
    switch value {
    case nil:
      if required { fail(path(), "is required") }
      return nil
    case .object(let object): return object
    case let other?:
      fail(path(), "must be an object, got \(other.kindName)")
      return nil
    }
  }

  public func string(_ value: JSONValue?, _ path: @autoclosure () -> String, required: Bool = true, nonEmpty: Bool = true) -> String? {
    switch value {
    case nil:
      if required { fail(path(), "is required") }
      return nil
    case .string(let text):
      if nonEmpty && text.isEmpty {
        fail(path(), "must not be empty")
        return nil
      }
      return text
    case let other?:
      fail(path(), "must be a string, got \(other.kindName)")
      return nil
    }
  }

  public func array(_ value: JSONValue?, _ path: @autoclosure () -> String, required: Bool = true) -> [JSONValue]? {
    switch value {
    case nil:
      if required { fail(path(), "is required") }
      return nil
    case .array(let elements): return elements
    case let other?:
      fail(path(), "must be an array, got \(other.kindName)")
      return nil
    }
  }

  /// An integer within `range`; JSON numbers whose exact value is whole (2, 2.0, 2e0) are accepted.
  public func integer(_ value: JSONValue?, _ path: @autoclosure () -> String, range: ClosedRange<Int>) -> Int? {
    var expected: String { "must be an integer from \(range.lowerBound) to \(range.upperBound)" }
    guard case .number(let text)? = value else {
      fail(path(), value.map { "\(expected), got \($0.kindName)" } ?? "is required")
      return nil
    }
    guard let number = Self.exactInteger(text), range.contains(number) else {
      fail(path(), "\(expected), got \(text)")
      return nil
    }
    return number
  }

  /// An amount: a decimal string in the merchant currency. JSON numbers are rejected.
  public func amount(_ value: JSONValue?, _ path: @autoclosure () -> String, digits: Int) -> Int64? {
    var expected: String { "must be a decimal string like \"\(MoneyText.format(5000, digits: digits))\"" }
    guard case .string(let text)? = value else {
      fail(path(), value.map { "\(expected), got \($0.kindName)" } ?? "is required")
      return nil
    }
    switch MoneyText.minorUnits(text, digits: digits) {
    case .success(let minor): return minor
    case .failure(.tooManyDecimals(let allowed)):
      fail(path(), "\"\(text)\" has more than the currency's \(allowed) decimal digits")
    case .failure(.tooLarge):
      fail(path(), "\"\(text)\" is too large")
    case .failure(.notADecimal):
      fail(path(), "\(expected), got \"\(text)\"")
    }
    return nil
  }

  /// The exact integer value of a JSON number's text, or nil when it is not whole or out of Int range.
  static func exactInteger(_ text: String) -> Int? {
    // Fast path: plain digits, as nearly every quantity is.
    if text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return Int(text) }
    var mantissa = Substring(text)
    var exponent = 0
    if let e = mantissa.firstIndex(where: { $0 == "e" || $0 == "E" }) {
      guard let value = Int(mantissa[mantissa.index(after: e)...].replacingOccurrences(of: "+", with: "")),
        value > -40, value < 40  // not abs(value): abs(Int.min) traps
      else { return nil }
      exponent = value
      mantissa = mantissa[..<e]
    }
    let negative = mantissa.hasPrefix("-")
    if negative { mantissa = mantissa.dropFirst() }
    var digits = mantissa
    if let dot = mantissa.firstIndex(of: ".") {
      let fraction = mantissa[mantissa.index(after: dot)...]
      digits = mantissa[..<dot] + fraction
      exponent -= fraction.count
    }
    var string = String(digits.drop { $0 == "0" })
    if string.isEmpty { return 0 }
    while exponent < 0 {
      guard string.last == "0" else { return nil }
      string.removeLast()
      exponent += 1
    }
    guard string.count + exponent <= 18 else { return nil }
    string += String(repeating: "0", count: exponent)
    guard let magnitude = Int(string) else { return nil }
    return negative ? -magnitude : magnitude
  }
}

extension Substring {
  fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
    String(self).split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
  }
}
