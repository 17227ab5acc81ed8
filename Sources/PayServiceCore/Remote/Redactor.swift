/// Takes a remote service's secrets out of what it sent before payservice reads it: each
/// configured secret wherever it appears, and anything shaped like one (a known prefix such as
/// Stripe's `sk_live_`, then letters, digits, `_`, or `*` where the service masks it), whatever
/// surrounds it: quotes, `=`, `:`, brackets, other letters. Each becomes `replacement`.
///
/// A service names a wrong key in its authentication errors, partly masked; an upstream proxy or
/// a changed error text could name the real one anywhere.
public struct Redactor: Sendable {
  public let replacement: String
  private let secrets: [[UInt8]]
  private let prefixes: [[UInt8]]

  /// - Parameters:
  ///   - secrets: the configured secrets (empty ones match nothing).
  ///   - prefixes: how the service's secrets begin.
  public init(secrets: [String], prefixes: [String], replacement: String) {
    self.secrets = secrets.map { Array($0.utf8) }.filter { !$0.isEmpty }
    self.prefixes = prefixes.map { Array($0.utf8) }.filter { !$0.isEmpty }
    self.replacement = replacement
  }

  /// `text` with every secret in it replaced.
  public func scrubbed(_ text: String) -> String {
    let bytes = Array(text.utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var changed = false
    var at = 0
    while at < bytes.count {
      if let end = secretEnd(bytes, at) {
        out += replacement.utf8
        at = end
        changed = true
      } else {
        out.append(bytes[at])
        at += 1
      }
    }
    return changed ? String(decoding: out, as: UTF8.self) : text
  }

  /// `value` with every string in it (object keys included) scrubbed.
  public func scrubbed(_ value: JSONValue) -> JSONValue {
    switch value {
    case .string(let text): return .string(scrubbed(text))
    case .array(let elements): return .array(elements.map(scrubbed))
    case .object(let object):
      return .object(JSONObject(object.members.map { (key: scrubbed($0.key), value: scrubbed($0.value)) }))
    case .null, .bool, .number: return value
    }
  }

  /// Where a secret that starts at `start` ends (the longest match); nil when none starts there.
  private func secretEnd(_ bytes: [UInt8], _ start: Int) -> Int? {
    let first = bytes[start]
    guard secrets.contains(where: { $0[0] == first }) || prefixes.contains(where: { $0[0] == first }) else { return nil }
    func matches(_ pattern: [UInt8]) -> Bool {
      bytes.count - start >= pattern.count && bytes[start..<(start + pattern.count)].elementsEqual(pattern)
    }
    var end: Int?
    for secret in secrets where matches(secret) { end = max(end ?? 0, start + secret.count) }
    for prefix in prefixes where matches(prefix) {
      var index = start + prefix.count
      while index < bytes.count, Self.isBody(bytes[index]) { index += 1 }
      end = max(end ?? 0, index)
    }
    return end
  }

  private static func isBody(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
      || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "*")
  }
}

/// Text a remote service's client puts in requests and messages.
public enum RemoteText {
  /// Percent-encoding of a path segment, a query value or a form field: the unreserved
  /// characters (RFC 3986, 2.3) kept, every other byte of the UTF-8 as %XX.
  public static func percentEncoded(_ text: String) -> String {
    let hex = Array("0123456789ABCDEF".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(text.utf8.count)
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "~"):
        out.append(byte)
      default:
        out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// `application/x-www-form-urlencoded`, each name and value percent-encoded.
  public static func formEncoded(_ form: [(String, String)]) -> String {
    form.map { percentEncoded($0.0) + "=" + percentEncoded($0.1) }.joined(separator: "&")
  }

  /// A peer's text made safe to quote in a message: control characters dropped, at most `limit`
  /// characters (then "…").
  public static func quoted(_ text: String, limit: Int) -> String {
    let cleaned = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
    return cleaned.count > limit ? String(cleaned.prefix(limit)) + "…" : cleaned
  }

  /// A number of seconds as a message says it: "5", "0.5".
  public static func seconds(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
  }
}
