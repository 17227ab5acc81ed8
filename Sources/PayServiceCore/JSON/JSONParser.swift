/// A strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// Rejects everything the grammar rejects (trailing commas, leading zeros, control characters in
/// strings, invalid UTF-8, a byte-order mark). Lone UTF-16 surrogates in `\u` escapes, which a Swift
/// `String` cannot hold, become U+FFFD. Nesting is limited to `maxDepth` so hostile input cannot
/// exhaust the stack.
public struct JSONParser {
  public struct Failure: Error, Equatable, Sendable {
    public let message: String
    public let offset: Int
  }

  public static let maxDepth = 512

  /// Parses exactly one JSON value, allowing surrounding whitespace.
  public static func parse(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> JSONValue {
    var parser = JSONParser(bytes: bytes)
    parser.skipWhitespace()
    let value = try parser.parseValue(depth: 0)
    parser.skipWhitespace()
    if parser.index != parser.bytes.count {
      throw parser.failure("unexpected data after the JSON value")
    }
    return value
  }

  public static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
    do {
      return try bytes.withUnsafeBytes { buffer in try parse(buffer) }
    } catch let error as Failure {
      throw error
    } catch {
      throw Failure(message: "unexpected error", offset: 0)
    }
  }

  public static func parse(_ text: String) throws(Failure) -> JSONValue {
    try parse(Array(text.utf8))
  }

  private let bytes: UnsafeRawBufferPointer
  private var index = 0

  private init(bytes: UnsafeRawBufferPointer) {
    self.bytes = bytes
  }

  private func failure(_ message: String) -> Failure {
    Failure(message: message, offset: index)
  }

  private mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x09, 0x0A, 0x0D: index += 1
      default: return
      }
    }
  }

  private mutating func parseValue(depth: Int) throws(Failure) -> JSONValue {
    guard index < bytes.count else { throw failure("unexpected end of input") }
    switch bytes[index] {
    case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
    case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
    case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
    case UInt8(ascii: "n"): try expectLiteral("null"); return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
    default: throw failure("unexpected character")
    }
  }

  private mutating func expectLiteral(_ literal: StaticString) throws(Failure) {
    let count = literal.utf8CodeUnitCount
    guard index + count <= bytes.count else { throw failure("unexpected end of input") }
    let start = literal.utf8Start
    for offset in 0..<count where bytes[index + offset] != start[offset] {
      throw failure("invalid literal")
    }
    index += count
  }

  private mutating func parseObject(depth: Int) throws(Failure) -> JSONValue {
    guard depth <= JSONParser.maxDepth else { throw failure("nesting deeper than \(JSONParser.maxDepth)") }
    index += 1
    var object = JSONObject()
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
      index += 1
      return .object(object)
    }
    // Most objects on the wire have a handful of members: one allocation instead of growing 1, 2, 4.
    object.members.reserveCapacity(4)
    while true {
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
        throw failure("expected a string key")
      }
      let key = try parseString()
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
      index += 1
      skipWhitespace()
      let value = try parseValue(depth: depth)
      object.members.append((key, value))
      skipWhitespace()
      guard index < bytes.count else { throw failure("unexpected end of input") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
      } else if bytes[index] == UInt8(ascii: "}") {
        index += 1
        return .object(object)
      } else {
        throw failure("expected ',' or '}'")
      }
    }
  }

  private mutating func parseArray(depth: Int) throws(Failure) -> JSONValue {
    guard depth <= JSONParser.maxDepth else { throw failure("nesting deeper than \(JSONParser.maxDepth)") }
    index += 1
    var elements: [JSONValue] = []
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
      index += 1
      return .array(elements)
    }
    elements.reserveCapacity(4)
    while true {
      skipWhitespace()
      elements.append(try parseValue(depth: depth))
      skipWhitespace()
      guard index < bytes.count else { throw failure("unexpected end of input") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
      } else if bytes[index] == UInt8(ascii: "]") {
        index += 1
        return .array(elements)
      } else {
        throw failure("expected ',' or ']'")
      }
    }
  }

  private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

  private mutating func parseNumber() throws(Failure) -> String {
    let start = index
    if bytes[index] == UInt8(ascii: "-") { index += 1 }
    guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid number") }
    if bytes[index] == UInt8(ascii: "0") {
      index += 1
      if index < bytes.count, isDigit(bytes[index]) { throw failure("leading zero in number") }
    } else {
      while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid number") }
      while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
        index += 1
      }
      guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid number") }
      while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }
    return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
  }

  private mutating func parseString() throws(Failure) -> String {
    index += 1
    let start = index
    var asciiOnly = true
    // Fast path: no escapes.
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
        index += 1
        if asciiOnly { return String(decoding: slice, as: UTF8.self) }
        guard let text = String(validating: slice.bindMemory(to: UInt8.self), as: UTF8.self) else {
          throw Failure(message: "invalid UTF-8 in string", offset: start)
        }
        return text
      }
      if byte == UInt8(ascii: "\\") { break }
      if byte < 0x20 { throw failure("control character in string") }
      if byte >= 0x80 { asciiOnly = false }
      index += 1
    }
    guard index < bytes.count else { throw failure("unterminated string") }
    // Slow path: escapes present.
    var buffer = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        index += 1
        guard let text = String(validating: buffer, as: UTF8.self) else {
          throw Failure(message: "invalid UTF-8 in string", offset: start)
        }
        return text
      }
      if byte < 0x20 { throw failure("control character in string") }
      if byte != UInt8(ascii: "\\") {
        buffer.append(byte)
        index += 1
        continue
      }
      index += 1
      guard index < bytes.count else { throw failure("unterminated string") }
      let escape = bytes[index]
      index += 1
      switch escape {
      case UInt8(ascii: "\""): buffer.append(0x22)
      case UInt8(ascii: "\\"): buffer.append(0x5C)
      case UInt8(ascii: "/"): buffer.append(0x2F)
      case UInt8(ascii: "b"): buffer.append(0x08)
      case UInt8(ascii: "f"): buffer.append(0x0C)
      case UInt8(ascii: "n"): buffer.append(0x0A)
      case UInt8(ascii: "r"): buffer.append(0x0D)
      case UInt8(ascii: "t"): buffer.append(0x09)
      case UInt8(ascii: "u"):
        var scalar = try parseHex4()
        if (0xD800...0xDBFF).contains(scalar) {
          // A high surrogate needs a following low surrogate escape.
          if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
            let save = index
            index += 2
            let low = try parseHex4()
            if (0xDC00...0xDFFF).contains(low) {
              scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else {
              index = save
              scalar = 0xFFFD
            }
          } else {
            scalar = 0xFFFD
          }
        } else if (0xDC00...0xDFFF).contains(scalar) {
          scalar = 0xFFFD
        }
        appendUTF8(scalar, to: &buffer)
      default:
        throw failure("invalid escape")
      }
    }
    throw failure("unterminated string")
  }

  private mutating func parseHex4() throws(Failure) -> UInt32 {
    guard index + 4 <= bytes.count else { throw failure("invalid \\u escape") }
    var value: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[index]
      let digit: UInt32
      switch byte {
      case 0x30...0x39: digit = UInt32(byte - 0x30)
      case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
      case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
      default: throw failure("invalid \\u escape")
      }
      value = value << 4 | digit
      index += 1
    }
    return value
  }

  private func appendUTF8(_ scalar: UInt32, to buffer: inout [UInt8]) {
    switch scalar {
    case 0..<0x80:
      buffer.append(UInt8(scalar))
    case 0x80..<0x800:
      buffer.append(UInt8(0xC0 | (scalar >> 6)))
      buffer.append(UInt8(0x80 | (scalar & 0x3F)))
    case 0x800..<0x10000:
      buffer.append(UInt8(0xE0 | (scalar >> 12)))
      buffer.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
      buffer.append(UInt8(0x80 | (scalar & 0x3F)))
    default:
      buffer.append(UInt8(0xF0 | (scalar >> 18)))
      buffer.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
      buffer.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
      buffer.append(UInt8(0x80 | (scalar & 0x3F)))
    }
  }
}
