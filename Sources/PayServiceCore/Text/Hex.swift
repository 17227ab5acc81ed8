/// Lower-case hexadecimal text of bytes, and back.
enum Hex {
  /// Written straight into the string's storage: identifiers are made from digests on every order.
  static func encode(_ bytes: some Collection<UInt8>) -> String {
    let digits: StaticString = "0123456789abcdef"
    return String(unsafeUninitializedCapacity: 2 * bytes.count) { buffer in
      var index = 0
      for byte in bytes {
        buffer[index] = digits.utf8Start[Int(byte >> 4)]
        buffer[index + 1] = digits.utf8Start[Int(byte & 0xF)]
        index += 2
      }
      return index
    }
  }

  /// Whether every byte is a lower-case hex digit (as `encode` writes them).
  static func isLowercase(_ utf8: some Collection<UInt8>) -> Bool {
    utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
  }

  /// nil unless `text` is an even number of hex digits (either case).
  static func decode(_ text: String) -> [UInt8]? {
    let utf8 = Array(text.utf8)
    guard utf8.count % 2 == 0 else { return nil }
    func nibble(_ c: UInt8) -> UInt8? {
      switch c {
      case 0x30...0x39: return c - 0x30
      case 0x41...0x46: return c - 0x41 + 10
      case 0x61...0x66: return c - 0x61 + 10
      default: return nil
      }
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(utf8.count / 2)
    var index = 0
    while index < utf8.count {
      guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
      bytes.append(high << 4 | low)
      index += 2
    }
    return bytes
  }
}
