/// JSON as the Adyen test server reads and writes it: its own small parser (the server shares no
/// code with the client it tests) and a compact writer that keeps object members in the order
/// given, as Adyen's API answers one line of JSON.
///
/// Numbers keep their source text, so an amount `1999` and `1999.0` are told apart; two request
/// bodies are the same (`sameContent`) when they hold the same values, members in any order.
indirect enum AdyenJSON: Sendable, Equatable {
  case string(String)
  /// A number's text as it appeared (checked against the JSON grammar), or as written.
  case number(String)
  case bool(Bool)
  case null
  case array([AdyenJSON])
  case object([(String, AdyenJSON)])

  static func == (lhs: AdyenJSON, rhs: AdyenJSON) -> Bool { lhs.rendered == rhs.rendered }

  static func int(_ value: Int64) -> AdyenJSON { .number(String(value)) }

  /// The value of the last member named `key` of an object (as JavaScript's `JSON.parse` keeps it).
  subscript(key: String) -> AdyenJSON? {
    if case .object(let members) = self { return members.last { $0.0 == key }?.1 }
    return nil
  }

  var string: String? { if case .string(let text) = self { text } else { nil } }
  var bool: Bool? { if case .bool(let flag) = self { flag } else { nil } }
  var members: [(String, AdyenJSON)]? { if case .object(let members) = self { members } else { nil } }

  /// A whole number that fits in 64 bits, written without a fraction or exponent.
  var int64: Int64? {
    guard case .number(let text) = self else { return nil }
    return Int64(text)
  }

  /// Whether both hold the same values: objects compared by their members' names (the last of
  /// each), in any order; numbers by their text.
  func sameContent(as other: AdyenJSON) -> Bool {
    switch (self, other) {
    case (.object(let left), .object(let right)):
      let leftKeys = Set(left.map(\.0))
      guard leftKeys == Set(right.map(\.0)) else { return false }
      return leftKeys.allSatisfy { key in self[key]!.sameContent(as: other[key]!) }
    case (.array(let left), .array(let right)):
      return left.count == right.count && zip(left, right).allSatisfy { $0.sameContent(as: $1) }
    default:
      return self == other
    }
  }

  // MARK: - Writing

  /// Compact JSON: no whitespace, members in order, `/` unescaped, non-ASCII as is.
  var rendered: String {
    var output = ""
    write(into: &output)
    return output
  }

  private func write(into output: inout String) {
    switch self {
    case .string(let text): Self.writeString(text, into: &output)
    case .number(let text): output += text
    case .bool(let flag): output += flag ? "true" : "false"
    case .null: output += "null"
    case .array(let items):
      output += "["
      for (index, item) in items.enumerated() {
        if index > 0 { output += "," }
        item.write(into: &output)
      }
      output += "]"
    case .object(let members):
      output += "{"
      for (index, member) in members.enumerated() {
        if index > 0 { output += "," }
        Self.writeString(member.0, into: &output)
        output += ":"
        member.1.write(into: &output)
      }
      output += "}"
    }
  }

  private static func writeString(_ text: String, into output: inout String) {
    output += "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": output += "\\\""
      case "\\": output += "\\\\"
      case "\n": output += "\\n"
      case "\r": output += "\\r"
      case "\t": output += "\\t"
      default:
        if scalar.value < 0x20 {
          let hex = String(scalar.value, radix: 16)
          output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        } else {
          output.unicodeScalars.append(scalar)
        }
      }
    }
    output += "\""
  }

  // MARK: - Reading

  /// A parse failure: what was found where, for Adyen's `Unexpected input` message.
  struct ParseError: Error, Equatable {
    var found: String
  }

  /// Parses one JSON text (RFC 8259; surrounding whitespace allowed, nothing after it).
  static func parse(_ text: String) throws(ParseError) -> AdyenJSON {
    var parser = Parser(bytes: Array(text.utf8))
    let value = try parser.value(depth: 0)
    parser.skipWhitespace()
    guard parser.index == parser.bytes.count else { throw parser.unexpected() }
    return value
  }

  private struct Parser {
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    func unexpected() -> ParseError {
      guard index < bytes.count else { return ParseError(found: "end of input") }
      return ParseError(found: String(decoding: [bytes[index]], as: UTF8.self))
    }

    mutating func skipWhitespace() {
      while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    mutating func expect(_ literal: String) throws(ParseError) {
      for byte in literal.utf8 {
        guard index < bytes.count, bytes[index] == byte else { throw unexpected() }
        index += 1
      }
    }

    mutating func value(depth: Int) throws(ParseError) -> AdyenJSON {
      skipWhitespace()
      guard index < bytes.count, depth < 64 else { throw unexpected() }
      switch bytes[index] {
      case UInt8(ascii: "{"):
        index += 1
        var members: [(String, AdyenJSON)] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
          index += 1
          return .object(members)
        }
        while true {
          skipWhitespace()
          guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw unexpected() }
          let key = try string()
          skipWhitespace()
          try expect(":")
          members.append((key, try value(depth: depth + 1)))
          skipWhitespace()
          guard index < bytes.count else { throw unexpected() }
          if bytes[index] == UInt8(ascii: ",") {
            index += 1
          } else if bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
          } else {
            throw unexpected()
          }
        }
      case UInt8(ascii: "["):
        index += 1
        var items: [AdyenJSON] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
          index += 1
          return .array(items)
        }
        while true {
          items.append(try value(depth: depth + 1))
          skipWhitespace()
          guard index < bytes.count else { throw unexpected() }
          if bytes[index] == UInt8(ascii: ",") {
            index += 1
          } else if bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
          } else {
            throw unexpected()
          }
        }
      case UInt8(ascii: "\""): return .string(try string())
      case UInt8(ascii: "t"):
        try expect("true")
        return .bool(true)
      case UInt8(ascii: "f"):
        try expect("false")
        return .bool(false)
      case UInt8(ascii: "n"):
        try expect("null")
        return .null
      default: return .number(try number())
      }
    }

    mutating func number() throws(ParseError) -> String {
      let start = index
      func digits(_ parser: inout Parser) -> Int {
        let from = parser.index
        while parser.index < parser.bytes.count, (0x30...0x39).contains(parser.bytes[parser.index]) {
          parser.index += 1
        }
        return parser.index - from
      }
      if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
      guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else { throw unexpected() }
      if bytes[index] == UInt8(ascii: "0") { index += 1 } else { _ = digits(&self) }
      if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
        index += 1
        guard digits(&self) > 0 else { throw unexpected() }
      }
      if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
        index += 1
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard digits(&self) > 0 else { throw unexpected() }
      }
      return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    mutating func string() throws(ParseError) -> String {
      index += 1
      var scalars = String.UnicodeScalarView()
      var run: [UInt8] = []
      func flush(_ run: inout [UInt8], into scalars: inout String.UnicodeScalarView) {
        scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
        run.removeAll()
      }
      while index < bytes.count {
        let byte = bytes[index]
        switch byte {
        case UInt8(ascii: "\""):
          index += 1
          flush(&run, into: &scalars)
          return String(scalars)
        case UInt8(ascii: "\\"):
          flush(&run, into: &scalars)
          index += 1
          guard index < bytes.count else { throw unexpected() }
          let escape = bytes[index]
          index += 1
          switch escape {
          case UInt8(ascii: "\""): scalars.append("\"")
          case UInt8(ascii: "\\"): scalars.append("\\")
          case UInt8(ascii: "/"): scalars.append("/")
          case UInt8(ascii: "b"): scalars.append("\u{08}")
          case UInt8(ascii: "f"): scalars.append("\u{0C}")
          case UInt8(ascii: "n"): scalars.append("\n")
          case UInt8(ascii: "r"): scalars.append("\r")
          case UInt8(ascii: "t"): scalars.append("\t")
          case UInt8(ascii: "u"):
            var code = try hex4()
            if (0xD800...0xDBFF).contains(code), index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
              bytes[index + 1] == UInt8(ascii: "u")
            {
              index += 2
              let low = try hex4()
              guard (0xDC00...0xDFFF).contains(low) else { throw unexpected() }
              code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(code) else { throw unexpected() }
            scalars.append(scalar)
          default:
            index -= 1
            throw unexpected()
          }
        default:
          guard byte >= 0x20 else { throw unexpected() }
          run.append(byte)
          index += 1
        }
      }
      throw unexpected()
    }

    mutating func hex4() throws(ParseError) -> UInt32 {
      guard index + 4 <= bytes.count, bytes[index..<index + 4].allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
        let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
      else { throw unexpected() }
      index += 4
      return code
    }
  }
}
