/// A growable run of bytes in raw memory that it owns (grown by doubling, freed on deinit).
///
/// Noncopyable, so appending is a capacity check and a copy: no copy-on-write uniqueness checks,
/// which showed up in profiles of `[UInt8]` appends on the response path.
public struct ByteBuffer: ~Copyable {
  private var start: UnsafeMutablePointer<UInt8>
  private var capacity: Int
  /// The number of bytes held.
  public private(set) var count = 0

  public init(capacity: Int = 512) {
    self.capacity = max(capacity, 16)
    start = .allocate(capacity: self.capacity)
  }

  deinit {
    start.deallocate()
  }

  public var isEmpty: Bool { count == 0 }

  /// A copy of the bytes.
  public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: start, count: count)) }

  /// The bytes, for the duration of `body`.
  public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
    try body(UnsafeRawBufferPointer(start: start, count: count))
  }

  /// Drops the bytes after the first `count`.
  public mutating func truncate(to count: Int) {
    precondition(count <= self.count)
    self.count = count
  }

  /// Empties the buffer, shrinking its storage back to `capacityLimit` when it grew beyond.
  public mutating func reset(capacityLimit: Int = .max) {
    count = 0
    if capacity > capacityLimit {
      start.deallocate()
      capacity = max(capacityLimit, 16)
      start = .allocate(capacity: capacity)
    }
  }

  /// Room for `extra` more bytes: a comparison inline, the growing out of line.
  @inline(__always)
  private mutating func reserve(_ extra: Int) {
    if count + extra > capacity { grow(extra) }
  }

  @inline(never)
  private mutating func grow(_ extra: Int) {
    var newCapacity = capacity * 2
    while count + extra > newCapacity { newCapacity *= 2 }
    let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
    grown.update(from: start, count: count)
    start.deallocate()
    start = grown
    capacity = newCapacity
  }

  @inline(__always)
  public mutating func append(_ byte: UInt8) {
    reserve(1)
    start[count] = byte
    count += 1
  }

  @inline(__always)
  public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
    reserve(bytes.count)
    (start + count).update(from: base, count: bytes.count)
    count += bytes.count
  }

  public mutating func append(_ bytes: UnsafeRawBufferPointer) {
    append(bytes.assumingMemoryBound(to: UInt8.self))
  }

  public mutating func append(_ text: StaticString) {
    append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
  }

  /// The UTF-8 bytes of `text`.
  public mutating func append(_ text: String) {
    var text = text
    text.withUTF8 { append($0) }
  }

  /// `value` in decimal digits.
  public mutating func append(decimal value: Int64) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
      var magnitude = value.magnitude
      var position = digits.count
      repeat {
        position -= 1
        digits[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
        magnitude /= 10
      } while magnitude > 0
      if value < 0 { append(UInt8(ascii: "-")) }
      append(UnsafeBufferPointer(rebasing: digits[position...]))
    }
  }

  /// An amount in minor units as `MoneyText.format` writes it ("54.00" for 5400 with 2 digits).
  public mutating func append(money minor: Int64, digits: Int) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { text in
      let start = MoneyText.write(minor, digits: digits, endingIn: text)
      append(UnsafeBufferPointer(rebasing: text[start...]))
    }
  }
}
