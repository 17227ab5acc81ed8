#if canImport(Glibc)
import Glibc
#endif

/// Reads JSON in place, token by token, for the request path's borrowed decoding: strings come
/// back as ranges of the line, numbers as their digits, and nothing is allocated.
///
/// It accepts a subset of what `JSONParser` accepts, and never more: strings without escapes
/// (valid UTF-8, no control characters), numbers by the RFC 8259 grammar, nesting to
/// `maxDepth`. Whatever it does not take (an escape, deeper nesting, any grammar error) makes the
/// caller decline, and the line is parsed again by `JSONParser`, which either reads it or says
/// exactly what is wrong. A decline is never an answer.
struct JSONScanner {
  let bytes: UnsafeRawBufferPointer
  private(set) var index = 0

  /// Deeper values are declined (the full parser allows 512).
  static let maxDepth = 32

  init(_ bytes: UnsafeRawBufferPointer, at index: Int = 0) {
    self.bytes = bytes
    self.index = index
  }

  var atEnd: Bool { index >= bytes.count }

  @inline(__always)
  mutating func skipSpace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x09, 0x0A, 0x0D: index += 1
      default: return
      }
    }
  }

  /// Consumes `byte` after optional whitespace; false (nothing consumed but the space) otherwise.
  @inline(__always)
  mutating func take(_ byte: UInt8) -> Bool {
    skipSpace()
    guard index < bytes.count, bytes[index] == byte else { return false }
    index += 1
    return true
  }

  /// The next significant byte, not consumed; nil at the end.
  @inline(__always)
  mutating func peek() -> UInt8? {
    skipSpace()
    return index < bytes.count ? bytes[index] : nil
  }

  /// A string's contents (between the quotes), after optional whitespace; nil to decline.
  mutating func string() -> Range<Int>? {
    guard take(UInt8(ascii: "\"")) else { return nil }
    let start = index
    guard let base = bytes.baseAddress, start < bytes.count,
      let found = memchr(base + start, 0x22, bytes.count - start)
    else { return nil }
    let end = base.distance(to: UnsafeRawPointer(found))
    let text = UnsafeRawBufferPointer(start: base + start, count: end - start)
    switch Self.plainness(text) {
    case .ascii: break
    case .utf8: guard Self.isValidUTF8(text) else { return nil }
    case .escaped: return nil
    }
    index = end + 1
    return start..<end
  }

  enum Plainness { case ascii, utf8, escaped }

  /// Whether string contents are plain ASCII, other UTF-8, or hold a backslash or a control
  /// character (which this scanner declines). Eight bytes at a time.
  @inline(__always)
  static func plainness(_ text: UnsafeRawBufferPointer) -> Plainness {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    var offset = 0
    var high: UInt64 = 0
    while offset + 8 <= text.count {
      let word = text.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
      // Whether some byte is below 0x20, or is 0x5C ("\\"): the "has a byte less than n" and
      // "has a zero byte" tests, exact about whether there is one.
      let control = (word &- ones &* 0x20) & ~word & highs
      let flipped = word ^ (ones &* 0x5C)
      let backslash = (flipped &- ones) & ~flipped & highs
      if control | backslash != 0 { return .escaped }
      high |= word & highs
      offset += 8
    }
    while offset < text.count {
      let byte = text[offset]
      if byte < 0x20 || byte == 0x5C { return .escaped }
      high |= UInt64(byte & 0x80)
      offset += 1
    }
    return high == 0 ? .ascii : .utf8
  }

  /// A plain non-negative integer (digits only, no leading zero, at most 9 digits), after
  /// optional whitespace; nil to decline (a fraction, an exponent, a sign, anything else).
  mutating func smallInteger() -> Int? {
    skipSpace()
    let start = index
    var value = 0
    // Digits past the ninth are counted, not added: ten digits decline, so `value` stays below 10^9
    // however long the run is.
    while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
      if index - start < 9 { value = value * 10 + Int(bytes[index] - 0x30) }
      index += 1
    }
    let count = index - start
    guard count > 0, count <= 9, !(count > 1 && bytes[start] == 0x30) else { return nil }
    // A number goes on with a fraction or an exponent: not a plain integer.
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] | 0x20 == UInt8(ascii: "e") {
      return nil
    }
    return value
  }

  /// A number's text by the JSON grammar, after optional whitespace; nil to decline.
  mutating func number() -> Range<Int>? {
    skipSpace()
    let start = index
    func digits() -> Int {
      let first = index
      while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
      return index - first
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
    let integerStart = index
    let integerDigits = digits()
    guard integerDigits > 0, !(integerDigits > 1 && bytes[integerStart] == 0x30) else { return nil }
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      guard digits() > 0 else { return nil }
    }
    if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
      guard digits() > 0 else { return nil }
    }
    return start..<index
  }

  /// Whether the literal `null` comes next (consumed when it does).
  mutating func null() -> Bool {
    skipSpace()
    guard index + 4 <= bytes.count, bytes[index] == UInt8(ascii: "n"), bytes[index + 1] == UInt8(ascii: "u"),
      bytes[index + 2] == UInt8(ascii: "l"), bytes[index + 3] == UInt8(ascii: "l")
    else { return false }
    index += 4
    return true
  }

  /// Skips one value of any kind, checking it as the full parser would; false to decline.
  mutating func skipValue(depth: Int = 0) -> Bool {
    guard let first = peek() else { return false }
    switch first {
    case UInt8(ascii: "\""): return string() != nil
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number() != nil
    case UInt8(ascii: "n"): return null()
    case UInt8(ascii: "t"): return literal("true")
    case UInt8(ascii: "f"): return literal("false")
    case UInt8(ascii: "["):
      guard depth < Self.maxDepth else { return false }
      index += 1
      if take(UInt8(ascii: "]")) { return true }
      repeat {
        guard skipValue(depth: depth + 1) else { return false }
      } while take(UInt8(ascii: ","))
      return take(UInt8(ascii: "]"))
    case UInt8(ascii: "{"):
      guard depth < Self.maxDepth else { return false }
      index += 1
      if take(UInt8(ascii: "}")) { return true }
      repeat {
        guard string() != nil, take(UInt8(ascii: ":")), skipValue(depth: depth + 1) else { return false }
      } while take(UInt8(ascii: ","))
      return take(UInt8(ascii: "}"))
    default: return false
    }
  }

  private mutating func literal(_ text: StaticString) -> Bool {
    let count = text.utf8CodeUnitCount
    guard index + count <= bytes.count else { return false }
    for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return false }
    index += count
    return true
  }

  /// Whether `range` of the line equals `text`.
  @inline(__always)
  func matches(_ range: Range<Int>, _ text: StaticString) -> Bool {
    guard range.count == text.utf8CodeUnitCount else { return false }
    return memcmp(bytes.baseAddress! + range.lowerBound, text.utf8Start, range.count) == 0
  }

  /// The bytes of `range`.
  @inline(__always)
  func slice(_ range: Range<Int>) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(rebasing: bytes[range])
  }

  /// UTF-8 as RFC 3629 defines it (no overlong forms, no surrogates, at most U+10FFFF): what
  /// `String(validating:as:)` accepts.
  static func isValidUTF8(_ text: UnsafeRawBufferPointer) -> Bool {
    var index = 0
    let count = text.count
    while index < count {
      let lead = text[index]
      if lead < 0x80 {
        index += 1
        continue
      }
      func continuation(_ offset: Int) -> Bool {
        index + offset < count && text[index + offset] & 0xC0 == 0x80
      }
      switch lead {
      case 0xC2...0xDF:
        guard continuation(1) else { return false }
        index += 2
      case 0xE0...0xEF:
        guard continuation(1), continuation(2) else { return false }
        let second = text[index + 1]
        if lead == 0xE0 && second < 0xA0 { return false }  // overlong
        if lead == 0xED && second > 0x9F { return false }  // a surrogate
        index += 3
      case 0xF0...0xF4:
        guard continuation(1), continuation(2), continuation(3) else { return false }
        let second = text[index + 1]
        if lead == 0xF0 && second < 0x90 { return false }  // overlong
        if lead == 0xF4 && second > 0x8F { return false }  // beyond U+10FFFF
        index += 4
      default: return false
      }
    }
    return true
  }
}
