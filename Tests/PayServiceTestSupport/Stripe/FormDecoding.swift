import Foundation

/// A decoded `application/x-www-form-urlencoded` body, as Stripe's API takes it: ordered
/// `name=value` pairs whose names use bracket notation for hashes and arrays
/// (`metadata[order_id]=…`, `payment_method_data[card][token]=tok_visa`,
/// `payment_method_types[]=card` or `payment_method_types[0]=card`).
struct StripeForm: Sendable, Equatable {
  /// The pairs in the order they were sent, names and values percent-decoded (`+` is a space).
  let pairs: [(name: String, value: String)]

  init(pairs: [(name: String, value: String)]) { self.pairs = pairs }

  static func == (lhs: StripeForm, rhs: StripeForm) -> Bool { lhs.canonical == rhs.canonical }

  /// Decodes `body`; malformed percent escapes are kept literally, as a lenient server would.
  init(decoding body: String) {
    var pairs: [(name: String, value: String)] = []
    for part in body.split(separator: "&", omittingEmptySubsequences: true) {
      if let equals = part.firstIndex(of: "=") {
        pairs.append((Self.decode(part[..<equals]), Self.decode(part[part.index(after: equals)...])))
      } else {
        pairs.append((Self.decode(part), ""))
      }
    }
    self.pairs = pairs
  }

  static func decode(_ text: Substring) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count)
    var iterator = Array(text.utf8)[...]
    while let byte = iterator.popFirst() {
      switch byte {
      case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
      case UInt8(ascii: "%"):
        if iterator.count >= 2, let high = hexValue(iterator[iterator.startIndex]),
          let low = hexValue(iterator[iterator.startIndex + 1])
        {
          bytes.append(high << 4 | low)
          iterator = iterator.dropFirst(2)
        } else {
          bytes.append(byte)
        }
      default: bytes.append(byte)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  /// The parameters in a form independent of the order of distinct names (the order of
  /// repeated names, e.g. `payment_method_types[]`, is kept): what Stripe's idempotency layer
  /// compares when a key is reused.
  var canonical: [String] {
    let indexed = pairs.enumerated().map { ($0.offset, $0.element) }
    return
      indexed
      .sorted { $0.1.name == $1.1.name ? $0.0 < $1.0 : $0.1.name < $1.1.name }
      .map { "\($0.1.name)=\($0.1.value)" }
  }

  /// The last value sent for `name`.
  subscript(name: String) -> String? { pairs.last { $0.name == name }?.value }

  func contains(_ name: String) -> Bool { pairs.contains { $0.name == name } }

  /// The top-level parameter names (`metadata[x]` counts as `metadata`).
  var topLevelNames: [String] {
    var seen = Set<String>()
    var names: [String] = []
    for pair in pairs {
      let top = pair.name.firstIndex(of: "[").map { String(pair.name[..<$0]) } ?? pair.name
      if seen.insert(top).inserted { names.append(top) }
    }
    return names
  }

  /// The entries of the hash `name` (`name[key]=value`), sorted by key; an empty `name=` (Stripe's
  /// way of unsetting a hash) gives no entries.
  func hash(_ name: String) -> [(key: String, value: String)] {
    var result: [String: String] = [:]
    let prefix = name + "["
    for pair in pairs where pair.name.hasPrefix(prefix) && pair.name.hasSuffix("]") {
      let key = String(pair.name.dropFirst(prefix.count).dropLast())
      if key.contains("[") || key.contains("]") { continue }
      result[key] = pair.value
    }
    return result.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
  }

  /// The entries of the array `name`, sent as `name[]=a&name[]=b` or `name[0]=a&name[1]=b`
  /// (indexed entries ordered by index).
  func array(_ name: String) -> [String] {
    var appended: [String] = []
    var indexed: [(Int, String)] = []
    for pair in pairs {
      if pair.name == name + "[]" {
        appended.append(pair.value)
      } else if pair.name.hasPrefix(name + "["), pair.name.hasSuffix("]"),
        let index = Int(pair.name.dropFirst(name.count + 1).dropLast())
      {
        indexed.append((index, pair.value))
      }
    }
    return indexed.sorted { $0.0 < $1.0 }.map(\.1) + appended
  }
}

/// JSON as Stripe writes it: objects keep their key order, output pretty-printed with two spaces.
indirect enum StripeJSON: Sendable, Equatable {
  case string(String)
  case int(Int64)
  case bool(Bool)
  case null
  case array([StripeJSON])
  case object([(String, StripeJSON)])

  static func == (lhs: StripeJSON, rhs: StripeJSON) -> Bool { lhs.rendered == rhs.rendered }

  static func optional(_ value: String?) -> StripeJSON { value.map(StripeJSON.string) ?? .null }
  static func optional(_ value: Int64?) -> StripeJSON { value.map(StripeJSON.int) ?? .null }

  /// The value with `key` of an object.
  subscript(key: String) -> StripeJSON? {
    if case .object(let members) = self { return members.last { $0.0 == key }?.1 }
    return nil
  }

  var rendered: String {
    var output = ""
    write(into: &output, indent: 0)
    return output
  }

  private func write(into output: inout String, indent: Int) {
    switch self {
    case .string(let text): Self.writeString(text, into: &output)
    case .int(let number): output += String(number)
    case .bool(let flag): output += flag ? "true" : "false"
    case .null: output += "null"
    case .array(let items):
      if items.isEmpty {
        output += "[]"
        return
      }
      output += "[\n"
      for (index, item) in items.enumerated() {
        output += String(repeating: "  ", count: indent + 1)
        item.write(into: &output, indent: indent + 1)
        output += index == items.count - 1 ? "\n" : ",\n"
      }
      output += String(repeating: "  ", count: indent) + "]"
    case .object(let members):
      if members.isEmpty {
        output += "{}"
        return
      }
      output += "{\n"
      for (index, member) in members.enumerated() {
        output += String(repeating: "  ", count: indent + 1)
        Self.writeString(member.0, into: &output)
        output += ": "
        member.1.write(into: &output, indent: indent + 1)
        output += index == members.count - 1 ? "\n" : ",\n"
      }
      output += String(repeating: "  ", count: indent) + "}"
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
          output += String(format: "\\u%04x", scalar.value)
        } else {
          output.unicodeScalars.append(scalar)
        }
      }
    }
    output += "\""
  }
}
