import PayServiceCore

/// Takes Stripe keys out of what Stripe sent before payservice reads it: the configured key
/// wherever it appears, and anything shaped like a key (`sk_live_…`, `sk_test_…`, `rk_live_…`,
/// `rk_test_…`, `pk_live_…`, `pk_test_…`, `whsec_…`, masked ones like `sk_test_****1234` included)
/// whatever surrounds it: quotes, `=`, `:`, brackets, other letters. Each becomes `[a key]`.
///
/// Stripe names a wrong key in its authentication errors, partly masked; an upstream proxy or a
/// changed error text could name the real one anywhere.
struct KeyScrubber: Sendable {
  static let replacement = "[a key]"
  /// The prefixes of Stripe's secret, restricted, publishable and webhook signing keys.
  static let prefixes: [[UInt8]] = ["sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_", "pk_test_", "whsec_"]
    .map { Array($0.utf8) }

  private let key: [UInt8]

  /// - Parameter key: the configured secret key (may be empty: then only the shapes are scrubbed).
  init(key: String) {
    self.key = Array(key.utf8)
  }

  /// `text` with every key in it replaced.
  func scrubbed(_ text: String) -> String {
    let bytes = Array(text.utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var changed = false
    var at = 0
    while at < bytes.count {
      if let end = keyEnd(bytes, at) {
        out += Self.replacement.utf8
        at = end
        changed = true
      } else {
        out.append(bytes[at])
        at += 1
      }
    }
    return changed ? String(decoding: out, as: UTF8.self) : text
  }

  /// Where a key that starts at `start` ends; nil when none starts there.
  private func keyEnd(_ bytes: [UInt8], _ start: Int) -> Int? {
    let first = bytes[start]
    guard first == key.first || Self.prefixes.contains(where: { $0[0] == first }) else { return nil }
    func matches(_ pattern: [UInt8]) -> Bool {
      !pattern.isEmpty && bytes.count - start >= pattern.count
        && bytes[start..<(start + pattern.count)].elementsEqual(pattern)
    }
    var end: Int?
    if matches(key) { end = start + key.count }
    for prefix in Self.prefixes where matches(prefix) {
      // A key's body: letters, digits and `_`, or `*` where Stripe masks it.
      var index = start + prefix.count
      while index < bytes.count, Self.isBody(bytes[index]) { index += 1 }
      end = max(end ?? index, index)
    }
    return end
  }

  private static func isBody(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
      || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "*")
  }

  /// `value` with every string in it (object keys included) scrubbed.
  func scrubbed(_ value: JSONValue) -> JSONValue {
    switch value {
    case .string(let text): return .string(scrubbed(text))
    case .array(let elements): return .array(elements.map(scrubbed))
    case .object(let object):
      return .object(JSONObject(object.members.map { (key: scrubbed($0.key), value: scrubbed($0.value)) }))
    case .null, .bool, .number: return value
    }
  }
}
