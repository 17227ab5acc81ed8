import Crypto
import Foundation
import PayServiceCore

/// Bearer tokens of the App Store Server API made and read in tests: a token with any header and
/// payload fields (a wrong audience, another bundle id, an expired one, another key), and the
/// decoding of a token a client sent, to check its fields.
public enum AppStoreTestBearerToken {
  /// A compact JWS of `header` and `payload` (JSON objects, members in the order given), ES256
  /// with `key`.
  public static func sign(header: JSONObject, payload: JSONObject, key: P256.Signing.PrivateKey) throws -> String {
    try ES256JWT(key: key).sign(header: header, payload: payload)
  }

  /// A token shaped as Apple asks, each field replaceable.
  public static func make(
    key: P256.Signing.PrivateKey, keyId: String, issuerId: String, bundleId: String,
    audience: String = "appstoreconnect-v1", issuedAt: Int64 = Int64(Date().timeIntervalSince1970), lifetime: Int64 = 300,
    algorithm: String = "ES256"
  ) throws -> String {
    try sign(
      header: JSONObject([("alg", .string(algorithm)), ("kid", .string(keyId)), ("typ", .string("JWT"))]),
      payload: JSONObject([
        ("iss", .string(issuerId)), ("iat", .number(String(issuedAt))), ("exp", .number(String(issuedAt + lifetime))),
        ("aud", .string(audience)), ("bid", .string(bundleId)),
      ]),
      key: key)
  }

  /// A token's three parts: the header and payload objects and the signature's bytes; nil when
  /// it is not a compact JWS of two JSON objects.
  public static func decode(_ token: String) -> (header: JSONObject, payload: JSONObject, signature: [UInt8])? {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let headerBytes = base64URLDecoded(parts[0]), let payloadBytes = base64URLDecoded(parts[1]),
      let signature = base64URLDecoded(parts[2]),
      case .object(let header)? = try? JSONParser.parse(headerBytes),
      case .object(let payload)? = try? JSONParser.parse(payloadBytes)
    else { return nil }
    return (header, payload, signature)
  }

  /// Base64url without padding (and only that: `+`, `/` and `=` are refused).
  public static func base64URLDecoded(_ text: some StringProtocol) -> [UInt8]? {
    guard !text.contains(where: { $0 == "+" || $0 == "/" || $0 == "=" }) else { return nil }
    var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while standard.utf8.count % 4 != 0 { standard += "=" }
    return Data(base64Encoded: standard).map { Array($0) }
  }
}
