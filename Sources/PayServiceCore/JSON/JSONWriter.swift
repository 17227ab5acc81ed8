/// Serialises `JSONValue`s compactly: no insignificant whitespace, members in their stored order,
/// non-ASCII text as raw UTF-8, and only `"`, `\` and control characters escaped.
public struct JSONWriter {
  public private(set) var bytes: [UInt8] = []

  public init(capacity: Int = 512) {
    bytes.reserveCapacity(capacity)
  }

  public mutating func write(_ value: JSONValue) {
    switch value {
    case .null: writeRaw("null")
    case .bool(let flag): writeRaw(flag ? "true" : "false")
    case .number(let text): writeRaw(text)
    case .string(let text): writeString(text)
    case .array(let elements):
      bytes.append(UInt8(ascii: "["))
      for (offset, element) in elements.enumerated() {
        if offset > 0 { bytes.append(UInt8(ascii: ",")) }
        write(element)
      }
      bytes.append(UInt8(ascii: "]"))
    case .object(let object):
      bytes.append(UInt8(ascii: "{"))
      for (offset, member) in object.members.enumerated() {
        if offset > 0 { bytes.append(UInt8(ascii: ",")) }
        writeString(member.key)
        bytes.append(UInt8(ascii: ":"))
        write(member.value)
      }
      bytes.append(UInt8(ascii: "}"))
    }
  }

  public mutating func writeRaw(_ text: String) {
    var text = text
    text.withUTF8 { bytes.append(contentsOf: $0) }
  }

  public mutating func writeString(_ text: String) {
    var text = text
    text.withUTF8 { writeString(utf8: $0) }
  }

  /// Writes UTF-8 text as a JSON string: runs that need no escape are copied in one piece.
  public mutating func writeString(utf8 text: UnsafeBufferPointer<UInt8>) {
    bytes.append(UInt8(ascii: "\""))
    var runStart = 0
    for index in 0..<text.count {
      let byte = text[index]
      guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
      if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<index])) }
      runStart = index + 1
      switch byte {
      case 0x22: bytes.append(0x5C); bytes.append(0x22)
      case 0x5C: bytes.append(0x5C); bytes.append(0x5C)
      case 0x0A: bytes.append(0x5C); bytes.append(UInt8(ascii: "n"))
      case 0x0D: bytes.append(0x5C); bytes.append(UInt8(ascii: "r"))
      case 0x09: bytes.append(0x5C); bytes.append(UInt8(ascii: "t"))
      case 0x08: bytes.append(0x5C); bytes.append(UInt8(ascii: "b"))
      case 0x0C: bytes.append(0x5C); bytes.append(UInt8(ascii: "f"))
      default:
        let hex: StaticString = "0123456789abcdef"
        bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30])
        bytes.append(hex.utf8Start[Int(byte >> 4)])
        bytes.append(hex.utf8Start[Int(byte & 0xF)])
      }
    }
    if runStart < text.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart...])) }
    bytes.append(UInt8(ascii: "\""))
  }

  /// The compact serialisation of `value` as a string.
  public static func string(_ value: JSONValue) -> String {
    var writer = JSONWriter()
    writer.write(value)
    return String(decoding: writer.bytes, as: UTF8.self)
  }
}
