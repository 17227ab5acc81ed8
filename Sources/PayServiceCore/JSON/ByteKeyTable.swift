#if canImport(Glibc)
import Glibc
#endif

/// An immutable map from byte strings to small integers, looked up with a borrowed slice of the
/// request line: no `String` is made and no reference is counted, so the request path can find a
/// sku or a region code straight from the bytes it scanned. Open addressing with FNV-1a hashes,
/// at most half full.
///
/// A value type over memory that `ByteKeyTable.Storage` owns: copying it copies three words.
struct ByteKeyTable: @unchecked Sendable {
  /// One slot: the key's place in the key bytes and its value; `length < 0` marks an empty slot.
  fileprivate struct Slot {
    var hash: UInt32
    var length: Int32
    var offset: Int32
    var value: Int32
  }

  private let slots: UnsafePointer<Slot>
  private let mask: Int
  private let keys: UnsafePointer<UInt8>

  /// The memory a table reads: keep it for as long as the table is used.
  final class Storage: @unchecked Sendable {
    fileprivate let slots: UnsafeMutableBufferPointer<Slot>
    fileprivate let keys: UnsafeMutableBufferPointer<UInt8>

    fileprivate init(slots: UnsafeMutableBufferPointer<Slot>, keys: UnsafeMutableBufferPointer<UInt8>) {
      self.slots = slots
      self.keys = keys
    }

    deinit {
      slots.deallocate()
      keys.deallocate()
    }
  }

  /// The table of `entries` (the first of equal keys wins) and the storage it reads.
  static func make(_ entries: [(key: String, value: Int)]) -> (ByteKeyTable, Storage) {
    var capacity = 8
    while capacity < entries.count * 2 { capacity *= 2 }
    let slots = UnsafeMutableBufferPointer<Slot>.allocate(capacity: capacity)
    slots.initialize(repeating: Slot(hash: 0, length: -1, offset: 0, value: 0))
    let totalBytes = entries.reduce(0) { $0 + $1.key.utf8.count }
    let keys = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(totalBytes, 1))
    var used = 0
    let table = ByteKeyTable(slots: UnsafePointer(slots.baseAddress!), mask: capacity - 1, keys: UnsafePointer(keys.baseAddress!))
    for (key, value) in entries {
      let bytes = Array(key.utf8)
      let found = bytes.withUnsafeBytes { table.value(for: $0) }
      guard found == nil else { continue }
      let hash = Self.hash(bytes.withUnsafeBytes { $0 })
      var index = Int(hash) & table.mask
      while slots[index].length >= 0 { index = (index + 1) & table.mask }
      for (offset, byte) in bytes.enumerated() { keys[used + offset] = byte }
      slots[index] = Slot(hash: hash, length: Int32(bytes.count), offset: Int32(used), value: Int32(value))
      used += bytes.count
    }
    return (table, Storage(slots: slots, keys: keys))
  }

  private init(slots: UnsafePointer<Slot>, mask: Int, keys: UnsafePointer<UInt8>) {
    self.slots = slots
    self.mask = mask
    self.keys = keys
  }

  @inline(__always)
  static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    var hash: UInt32 = 2_166_136_261
    for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
    return hash
  }

  /// The value of `key`, or nil.
  @inline(__always)
  func value(for key: UnsafeRawBufferPointer) -> Int? {
    let hash = Self.hash(key)
    var index = Int(hash) & mask
    while true {
      let slot = slots[index]
      if slot.length < 0 { return nil }
      if slot.hash == hash, Int(slot.length) == key.count,
        key.count == 0 || memcmp(keys + Int(slot.offset), key.baseAddress!, key.count) == 0
      {
        return Int(slot.value)
      }
      index = (index + 1) & mask
    }
  }
}
