import Foundation

/// A type that crosses the wire as JSON: read from a request (every problem reported with its field
/// path), written to a response, and described by a JSON Schema for `rpc.discover` and MCP. The three
/// live together in the type, so they cannot drift apart.
public protocol WireValue: JSONRepresentable, SendableMetatype {
  /// The schema of every value of this type; a field may give a narrower one.
  static var schema: JSONSchema { get }
  /// Reads a value that is present (whether a member may be absent or null is its field's concern).
  /// Returns nil after reporting each problem to `reader`.
  static func read(_ value: JSONValue, at path: () -> String, reader: ParamReader) -> Self?
}

/// A string enumeration on the wire: written as its raw value, read strictly, described as an enum.
public protocol WireEnum: WireValue, RawRepresentable<String>, CaseIterable {}

extension WireEnum {
  public static var schema: JSONSchema { .string(values: allCases.map(\.rawValue)) }

  public static func read(_ value: JSONValue, at path: () -> String, reader: ParamReader) -> Self? {
    guard let text = String.read(value, at: path, reader: reader) else { return nil }
    guard let known = Self(rawValue: text) else {
      reader.fail(path(), "must be one of \(allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text)\"")
      return nil
    }
    return known
  }

  public func write(to writer: inout JSONWriter) {
    writer.write(rawValue)
  }
}

extension String: WireValue {
  public static var schema: JSONSchema { .string() }

  /// A non-empty string (the default for identifiers and codes; members that may be empty, such as
  /// a contact's or a coupon code, read with `ParamReader.string(_:_:nonEmpty:)`).
  public static func read(_ value: JSONValue, at path: () -> String, reader: ParamReader) -> String? {
    reader.string(value, path())
  }

  public func write(to writer: inout JSONWriter) {
    writer.write(self)
  }
}

extension Int: WireValue {
  public static var schema: JSONSchema { .integer() }

  public static func read(_ value: JSONValue, at path: () -> String, reader: ParamReader) -> Int? {
    reader.integer(value, path(), range: Int.min...Int.max)
  }

  public func write(to writer: inout JSONWriter) {
    writer.write(self)
  }
}

extension Bool: WireValue {
  public static var schema: JSONSchema { .boolean() }

  public static func read(_ value: JSONValue, at path: () -> String, reader: ParamReader) -> Bool? {
    guard case .bool(let flag) = value else {
      reader.fail(path(), "must be a boolean, got \(value.kindName)")
      return nil
    }
    return flag
  }

  public func write(to writer: inout JSONWriter) {
    writer.write(self)
  }
}

extension Array: WireValue where Element: WireValue {
  public static var schema: JSONSchema { .array(Element.schema) }

  public static func read(_ value: JSONValue, at path: () -> String, reader: ParamReader) -> [Element]? {
    guard case .array(let elements) = value else {
      reader.fail(path(), "must be an array, got \(value.kindName)")
      return nil
    }
    let before = reader.errors.count
    var result: [Element] = []
    result.reserveCapacity(elements.count)
    for (index, element) in elements.enumerated() {
      if let read = Element.read(element, at: { "\(path())[\(index)]" }, reader: reader) { result.append(read) }
    }
    return reader.errors.count == before ? result : nil
  }
}

extension JSONValue: WireValue {
  /// Any JSON value.
  public static var schema: JSONSchema { JSONSchema(json: .object(JSONObject())) }

  public static func read(_ value: JSONValue, at path: () -> String, reader: ParamReader) -> JSONValue? {
    value
  }
}

/// Bytes sent as base64 text.
public struct Base64Data: Equatable, Sendable, WireValue {
  public var bytes: [UInt8]

  public init(_ bytes: [UInt8]) {
    self.bytes = bytes
  }

  public static var schema: JSONSchema { .string(pattern: "^[A-Za-z0-9+/]*={0,2}$") }

  public static func read(_ value: JSONValue, at path: () -> String, reader: ParamReader) -> Base64Data? {
    guard case .string(let text) = value, let data = Data(base64Encoded: text) else {
      reader.fail(path(), "must be base64 text (the payment request's applicationData), got \(value.kindName)")
      return nil
    }
    return Base64Data(Array(data))
  }

  public func write(to writer: inout JSONWriter) {
    writer.write(Data(bytes).base64EncodedString())
  }
}

/// A value stored as the JSON text of itself inside a JSON string (how charge-token fingerprints
/// embed the binding, contact and card they were made from).
enum EmbeddedJSON {
  static func read<Value: WireValue>(_ value: JSONValue, _ path: () -> String, _ reader: ParamReader) -> Value? {
    guard case .string(let text) = value, let embedded = try? JSONParser.parse(text) else {
      reader.fail(path(), "must be the JSON text of a value, got \(value.kindName)")
      return nil
    }
    return Value.read(embedded, at: path, reader: reader)
  }

  static func write<Value: WireValue>(_ value: Value, _ writer: inout JSONWriter) {
    writer.write(JSONWriter.string(value))
  }
}

/// An amount of the merchant currency in minor units, sent as a decimal string ("54.00"), never a
/// JSON number.
public struct Amount: Equatable, Sendable, WireValue {
  public var minor: Int64
  /// The currency's minor digits, for writing.
  public var digits: Int

  public init(minor: Int64, digits: Int = 2) {
    self.minor = minor
    self.digits = digits
  }

  public static var schema: JSONSchema { Shapes.amount }

  /// Read in the configured currency (two digits when there is no config).
  public static func read(_ value: JSONValue, at path: () -> String, reader: ParamReader) -> Amount? {
    let digits = reader.context?.config.currency.minorDigits ?? 2
    return reader.amount(value, path(), digits: digits).map { Amount(minor: $0, digits: digits) }
  }

  public func write(to writer: inout JSONWriter) {
    writer.write(MoneyText.format(minor, digits: digits))
  }
}
