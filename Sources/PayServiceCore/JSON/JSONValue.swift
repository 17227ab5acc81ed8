/// A JSON value as read off the wire.
///
/// Numbers keep their exact source text, so a request `id` such as `9007199254740993` is echoed
/// digit for digit and an amount sent as a JSON number can be told apart from an amount string.
/// Objects keep their members in source order; lookups return the last member with a given key,
/// as JavaScript's `JSON.parse` does.
public enum JSONValue: Equatable, Sendable {
  case null
  case bool(Bool)
  /// The number's text exactly as it appeared (already checked against the JSON grammar).
  case number(String)
  case string(String)
  case array([JSONValue])
  case object(JSONObject)

  /// The kind of value, for error messages ("expected a string, got a number").
  public var kindName: String {
    switch self {
    case .null: return "null"
    case .bool: return "a boolean"
    case .number: return "a number"
    case .string: return "a string"
    case .array: return "an array"
    case .object: return "an object"
    }
  }
}

/// An ordered JSON object.
public struct JSONObject: Equatable, Sendable {
  public var members: [(key: String, value: JSONValue)]

  public init(_ members: [(key: String, value: JSONValue)] = []) {
    self.members = members
  }

  /// The value of the last member named `key`, or nil when there is none.
  public subscript(key: String) -> JSONValue? {
    for member in members.reversed() where member.key == key {
      return member.value
    }
    return nil
  }

  public func contains(_ key: String) -> Bool {
    members.contains { $0.key == key }
  }

  public var keys: [String] { members.map(\.key) }

  public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
    guard lhs.members.count == rhs.members.count else { return false }
    for (a, b) in zip(lhs.members, rhs.members) where a.key != b.key || a.value != b.value {
      return false
    }
    return true
  }
}

/// Builds an output object with keys in the order they are appended; nil values are left out.
public struct JSONObjectBuilder {
  public private(set) var object = JSONObject()

  /// Room for `capacity` members is reserved up front: output objects are built once and small.
  public init(capacity: Int = 8) {
    object.members.reserveCapacity(capacity)
  }

  public mutating func set(_ key: String, _ value: JSONValue) {
    object.members.append((key, value))
  }

  public mutating func set(_ key: String, _ value: JSONValue?) {
    if let value { object.members.append((key, value)) }
  }

  public mutating func set(_ key: String, _ value: String) {
    object.members.append((key, .string(value)))
  }

  public mutating func set(_ key: String, _ value: String?) {
    if let value { object.members.append((key, .string(value))) }
  }

  public mutating func set(_ key: String, _ value: Int) {
    object.members.append((key, .number(String(value))))
  }

  public mutating func set(_ key: String, _ value: Bool) {
    object.members.append((key, .bool(value)))
  }

  public var value: JSONValue { .object(object) }
}

/// A type that writes itself as JSON with a fixed member order.
public protocol JSONRepresentable {
  func write(to writer: inout JSONWriter)
}

extension JSONValue: JSONRepresentable {
  public func write(to writer: inout JSONWriter) {
    writer.write(self)
  }
}

extension Array: JSONRepresentable where Element: JSONRepresentable {
  public func write(to writer: inout JSONWriter) {
    writer.beginArray()
    for element in self { element.write(to: &writer) }
    writer.endArray()
  }
}
