/// A position in keyset paging (the last object a page or a run handled) that a client sends back
/// to go on from there: opaque to clients, written as the method's prefix and the hex of its fields
/// joined by U+001F, and read back strictly (a cursor of another method, or edited, is refused).
public protocol KeysetCursor: Equatable, Sendable, WireValue {
  /// `xx1_`: which method's cursor, and its version.
  static var prefix: String { get }
  /// The method whose answers carry it, and the member they carry it in (default `nextCursor`),
  /// for the schema and the error.
  static var method: String { get }
  static var answerMember: String { get }
  /// The longest cursor text read (default 2048 characters).
  static var maxLength: Int { get }
  /// The fields, none containing U+001F.
  var fields: [String] { get }
  /// The cursor of `fields` (as many as `fields` writes), or nil when they are not one.
  init?(fields: [Substring])
}

extension KeysetCursor {
  public static var answerMember: String { "nextCursor" }
  public static var maxLength: Int { 2048 }

  public static var schema: JSONSchema {
    .string("A \(answerMember) from \(method).", pattern: "^\(prefix)[0-9a-f]+$")
  }

  public static func read(_ value: JSONValue, at path: () -> String, reader: ParamReader) -> Self? {
    guard case .string(let text) = value, text.hasPrefix(prefix), text.utf8.count <= maxLength,
      let bytes = Hex.decode(String(text.dropFirst(prefix.count))),
      let decoded = String(validating: bytes, as: UTF8.self),
      let cursor = Self(fields: decoded.split(separator: "\u{1F}", omittingEmptySubsequences: false))
    else {
      reader.fail(path(), "must be a \(answerMember) \(method) returned")
      return nil
    }
    return cursor
  }

  public func write(to writer: inout JSONWriter) {
    writer.write(Self.prefix + Hex.encode(Array(fields.joined(separator: "\u{1F}").utf8)))
  }
}
