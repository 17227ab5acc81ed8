/// Writes JSON compactly, straight into bytes: no insignificant whitespace, members in the order
/// they are written, non-ASCII text as raw UTF-8, and only `"`, `\` and control characters escaped.
///
/// Results are streamed (`beginObject`, `member`, `endObject`) rather than built as `JSONValue`
/// trees first: answering a request then allocates nothing but the output buffer. Commas are
/// placed by the writer: every value, member or container written after a sibling gets one.
///
/// The writer owns its `ByteBuffer`, so it cannot be copied.
public struct JSONWriter: ~Copyable {
  private var buffer: ByteBuffer
  /// Whether the next value or member follows a sibling and so needs a comma first.
  private var needsComma = false

  public init(capacity: Int = 512) {
    buffer = ByteBuffer(capacity: capacity)
  }

  /// The number of bytes written.
  public var count: Int { buffer.count }

  /// A copy of the bytes written.
  public var bytes: [UInt8] { buffer.bytes }

  /// The bytes written, for the duration of `body`.
  public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
    try buffer.withBytes(body)
  }

  public var isEmpty: Bool { buffer.isEmpty }

  /// A position to `rewind(to:)` when a started value is abandoned.
  public struct Mark {
    /// The number of bytes written when the mark was taken.
    public let count: Int
    fileprivate let needsComma: Bool
  }

  public var mark: Mark { Mark(count: count, needsComma: needsComma) }

  /// Drops everything written since `mark`.
  public mutating func rewind(to mark: Mark) {
    buffer.truncate(to: mark.count)
    needsComma = mark.needsComma
  }

  /// Empties the buffer, shrinking its storage back to `capacityLimit` when it grew beyond.
  public mutating func reset(capacityLimit: Int = .max) {
    buffer.reset(capacityLimit: capacityLimit)
    needsComma = false
  }

  /// Appends complete response lines written by another writer.
  mutating func appendLines(_ lines: UnsafeRawBufferPointer) {
    buffer.append(lines)
    needsComma = false
  }

  /// Appends a line feed (between responses; not part of any value).
  public mutating func newline() {
    append(UInt8(ascii: "\n"))
    needsComma = false
  }

  // MARK: Containers

  public mutating func beginObject() {
    separate()
    append(UInt8(ascii: "{"))
  }

  public mutating func endObject() {
    append(UInt8(ascii: "}"))
    needsComma = true
  }

  public mutating func beginArray() {
    separate()
    append(UInt8(ascii: "["))
  }

  public mutating func endArray() {
    append(UInt8(ascii: "]"))
    needsComma = true
  }

  /// Writes a member's key; its value is written next. Keys are plain ASCII names.
  public mutating func key(_ name: StaticString) {
    separate()
    append(UInt8(ascii: "\""))
    append(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    append(UInt8(ascii: "\""))
    append(UInt8(ascii: ":"))
  }

  /// Writes a key that is data (an object read off the wire), escaped as any string.
  public mutating func key(_ name: String) {
    separate()
    appendString(name)
    append(UInt8(ascii: ":"))
  }

  // MARK: Values

  public mutating func write(_ text: String) {
    separate()
    appendString(text)
    needsComma = true
  }

  public mutating func write(_ number: Int) {
    separate()
    appendInteger(Int64(number))
    needsComma = true
  }

  public mutating func write(_ flag: Bool) {
    separate()
    appendRaw(flag ? "true" : "false")
    needsComma = true
  }

  public mutating func writeNull() {
    separate()
    appendRaw("null")
    needsComma = true
  }

  public mutating func write(_ value: JSONValue) {
    switch value {
    case .null: writeNull()
    case .bool(let flag): write(flag)
    case .number(let text):
      separate()
      buffer.append(text)
      needsComma = true
    case .string(let text): write(text)
    case .array(let elements):
      beginArray()
      for element in elements { write(element) }
      endArray()
    case .object(let object):
      beginObject()
      for (name, member) in object.members {
        key(name)
        write(member)
      }
      endObject()
    }
  }

  public mutating func write<Value: JSONRepresentable>(_ value: Value) {
    value.write(to: &self)
  }

  /// Writes JSON text a writer wrote earlier, verbatim.
  public mutating func write(serialized json: SerializedJSON) {
    separate()
    buffer.append(json.text)
    needsComma = true
  }

  // MARK: Members

  public mutating func member(_ name: StaticString, _ value: String) {
    key(name)
    write(value)
  }

  /// Left out when nil.
  public mutating func member(_ name: StaticString, _ value: String?) {
    guard let value else { return }
    member(name, value)
  }

  /// `null` when nil (a member the contract always has).
  public mutating func member(_ name: StaticString, orNull value: String?) {
    key(name)
    if let value { write(value) } else { writeNull() }
  }

  public mutating func member(_ name: StaticString, _ value: Int) {
    key(name)
    write(value)
  }

  /// Left out when nil.
  public mutating func member(_ name: StaticString, _ value: Int?) {
    guard let value else { return }
    member(name, value)
  }

  public mutating func member(_ name: StaticString, _ value: Bool) {
    key(name)
    write(value)
  }

  public mutating func member<Value: JSONRepresentable>(_ name: StaticString, _ value: Value) {
    key(name)
    value.write(to: &self)
  }

  /// Left out when nil.
  public mutating func member<Value: JSONRepresentable>(_ name: StaticString, _ value: Value?) {
    guard let value else { return }
    member(name, value)
  }

  /// `null` when nil (a member the contract always has).
  public mutating func member<Value: JSONRepresentable>(_ name: StaticString, orNull value: Value?) {
    key(name)
    if let value { value.write(to: &self) } else { writeNull() }
  }

  // MARK: Raw output

  /// Appends bytes that are JSON text already (a scanned id, a pre-escaped name), as they are.
  /// Commas are the caller's: the borrowed request path writes whole response lines this way.
  mutating func raw(_ bytes: UnsafeRawBufferPointer) {
    buffer.append(bytes)
  }

  mutating func raw(_ text: StaticString) {
    buffer.append(text)
  }

  mutating func raw(_ byte: UInt8) {
    buffer.append(byte)
  }

  mutating func raw(decimal value: Int64) {
    buffer.append(decimal: value)
  }

  mutating func raw(money minor: Int64, digits: Int) {
    buffer.append(money: minor, digits: digits)
  }

  // MARK: Bytes

  @inline(__always)
  private mutating func append(_ byte: UInt8) {
    buffer.append(byte)
  }

  @inline(__always)
  private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
    buffer.append(bytes)
  }

  @inline(__always)
  private mutating func separate() {
    if needsComma { append(UInt8(ascii: ",")) }
    needsComma = false
  }

  @inline(__always)
  private mutating func appendRaw(_ text: StaticString) {
    buffer.append(text)
  }

  private mutating func appendInteger(_ value: Int64) {
    buffer.append(decimal: value)
  }

  private mutating func appendString(_ text: String) {
    var text = text
    text.withUTF8 { appendString(utf8: $0) }
  }

  /// UTF-8 text as a JSON string: runs that need no escape are copied in one piece.
  private mutating func appendString(utf8 text: UnsafeBufferPointer<UInt8>) {
    append(UInt8(ascii: "\""))
    var runStart = 0
    for index in 0..<text.count {
      let byte = text[index]
      guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
      if runStart < index { append(UnsafeBufferPointer(rebasing: text[runStart..<index])) }
      runStart = index + 1
      switch byte {
      case 0x22: append(0x5C); append(0x22)
      case 0x5C: append(0x5C); append(0x5C)
      case 0x0A: append(0x5C); append(UInt8(ascii: "n"))
      case 0x0D: append(0x5C); append(UInt8(ascii: "r"))
      case 0x09: append(0x5C); append(UInt8(ascii: "t"))
      case 0x08: append(0x5C); append(UInt8(ascii: "b"))
      case 0x0C: append(0x5C); append(UInt8(ascii: "f"))
      default:
        let hex: StaticString = "0123456789abcdef"
        appendRaw("\\u00")
        append(hex.utf8Start[Int(byte >> 4)])
        append(hex.utf8Start[Int(byte & 0xF)])
      }
    }
    if runStart < text.count { append(UnsafeBufferPointer(rebasing: text[runStart...])) }
    append(UInt8(ascii: "\""))
  }

  /// The bytes written, as a string.
  public var string: String {
    withBytes { String(decoding: $0, as: UTF8.self) }
  }

  /// The compact serialisation of `value` as a string.
  public static func string<Value: JSONRepresentable>(_ value: Value) -> String {
    var writer = JSONWriter()
    value.write(to: &writer)
    return writer.string
  }
}
