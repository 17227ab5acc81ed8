import Crypto
import Foundation
import PayServiceCore
import Testing

/// The ES256 compact JWS signer Apple's tokens share (the App Store Server API's bearer token,
/// APNs' provider token): its parts exact, its signature raw r||s that verifies, its key read only
/// from a P-256 PKCS#8 PEM block, never described.
@Suite("ES256 JWS signer")
struct ES256JWTTests {
  @Test("header and payload as written, base64url without padding, a 64-byte signature that verifies")
  func signs() throws {
    let key = P256.Signing.PrivateKey()
    let signer = try ES256JWT(pkcs8PEM: key.pemRepresentation)
    let jws = try signer.sign(
      header: JSONObject([("alg", .string("ES256")), ("kid", .string("KEY1234567"))]),
      payload: JSONObject([("iss", .string("TEAM123456")), ("iat", .number("1700000000"))]))
    let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    #expect(parts.count == 3)
    #expect(parts[0] == ES256JWT.base64URL(Array(#"{"alg":"ES256","kid":"KEY1234567"}"#.utf8)))
    #expect(parts[1] == ES256JWT.base64URL(Array(#"{"iss":"TEAM123456","iat":1700000000}"#.utf8)))
    #expect(parts[0] == "eyJhbGciOiJFUzI1NiIsImtpZCI6IktFWTEyMzQ1NjcifQ")
    var padded = parts[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while padded.count % 4 != 0 { padded += "=" }
    let raw = try #require(Data(base64Encoded: padded))
    #expect(raw.count == 64)
    let signature = try P256.Signing.ECDSASignature(rawRepresentation: raw)
    #expect(key.publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))
    #expect(signer.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
    #expect(ES256JWT(key: key).publicKey.rawRepresentation == key.publicKey.rawRepresentation)
  }

  @Test("base64url: '-' and '_' for '+' and '/', no '='")
  func base64URL() {
    #expect(ES256JWT.base64URL([]) == "")
    #expect(ES256JWT.base64URL([0x66]) == "Zg")
    #expect(ES256JWT.base64URL([0xFB, 0xFF]) == "-_8")
    #expect(ES256JWT.base64URL([0xFF, 0xFE, 0xFD]) == "__79")
  }

  @Test("only a P-256 PKCS#8 PEM key; the errors and the description quote none of it")
  func keys() throws {
    let sec1 =
      "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIEpT+eRC3V7MI/SUWQD0cLU30uAjUaqSirPtvKzR4jwKoAoGCCqGSM49\n-----END EC PRIVATE KEY-----\n"
    let garbage = "-----BEGIN PRIVATE KEY-----\nTUlHSEFnRUFNQk1HQnlxR1NNNDlBZ0VHQ0NxR1NNNDlBd0VI\n-----END PRIVATE KEY-----\n"
    let cases: [(String, ES256JWT.KeyError)] = [
      ("", .notPKCS8), ("KEY1234567", .notPKCS8), (sec1, .notPKCS8), (garbage, .notP256),
      (P384.Signing.PrivateKey().pemRepresentation, .notP256),
    ]
    for (pem, expected) in cases {
      #expect(throws: expected) { _ = try ES256JWT(pkcs8PEM: pem) }
    }
    #expect("\(ES256JWT.KeyError.notPKCS8)" == #"the key is not a PEM PKCS#8 private key ("-----BEGIN PRIVATE KEY-----")"#)
    #expect("\(ES256JWT.KeyError.notP256)" == "the key is not a P-256 (ES256) private key")
    let key = P256.Signing.PrivateKey()
    let signer = try ES256JWT(pkcs8PEM: "\n  " + key.pemRepresentation + "\n\n")
    #expect("\(signer)" == "an ES256 signing key")
    var dumped = ""
    dump(signer, to: &dumped)
    for line in key.pemRepresentation.split(separator: "\n") where !line.hasPrefix("-----") {
      #expect(!dumped.contains(line))
      #expect(!String(reflecting: signer).contains(line))
    }
  }
}
