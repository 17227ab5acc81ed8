import Foundation
import PayServiceCore
import Testing

/// Secrets taken out of what a service sent, and the text helpers the clients share: nothing a
/// remote exchange describes holds a credential.
@Suite("Redactor and remote text")
struct RedactorTests {
  static let redactor = Redactor(
    secrets: ["adyen-key-7Hq.LyjW", "short"], prefixes: ["AQE", "whsec_"], replacement: "[redacted]")

  @Test("each secret whatever it is made of, and each key shape, wherever it stands; the longest match goes")
  func secrets() {
    let cases = [
      ("the key adyen-key-7Hq.LyjW was refused", "the key [redacted] was refused"),
      (#"{"x-api-key":"adyen-key-7Hq.LyjW"}"#, #"{"x-api-key":"[redacted]"}"#),
      ("prefixadyen-key-7Hq.LyjW.suffix", "prefix[redacted].suffix"),
      ("AQEyhmfxK4*****Wz, then whsec_abc", "[redacted], then [redacted]"),
      ("shortly", "[redacted]ly"),
      ("AQ and whsec alone are fine", "AQ and whsec alone are fine"),
      ("", ""),
    ]
    for (text, expected) in cases {
      #expect(Self.redactor.scrubbed(text) == expected, "\(text)")
    }
    let nothing = Redactor(secrets: ["", ""], prefixes: [""], replacement: "[redacted]")
    #expect(nothing.scrubbed("nothing to see") == "nothing to see")
  }

  @Test("every string of a JSON value is scrubbed, object keys included; numbers and the shape stay")
  func json() throws {
    let value = try JSONParser.parse(#"{"error":{"message":"bad key adyen-key-7Hq.LyjW","n":[1,"AQEz"]},"short":2}"#)
    let expected = try JSONParser.parse(#"{"error":{"message":"bad key [redacted]","n":[1,"[redacted]"]},"[redacted]":2}"#)
    #expect(Self.redactor.scrubbed(value) == expected)
  }

  @Test("percent-encoding keeps the unreserved characters only; a form is name=value pairs joined by &")
  func encoding() {
    #expect(RemoteText.percentEncoded("12/3 4?") == "12%2F3%204%3F")
    #expect(RemoteText.percentEncoded("aZ09-._~") == "aZ09-._~")
    #expect(RemoteText.percentEncoded("é&=+") == "%C3%A9%26%3D%2B")
    #expect(RemoteText.formEncoded([("expand[]", "latest charge"), ("amount", "100")]) == "expand%5B%5D=latest%20charge&amount=100")
    #expect(RemoteText.formEncoded([]) == "")
  }

  @Test("a peer's text is quoted without control characters and cut at the limit; seconds read as people write them")
  func text() {
    #expect(RemoteText.quoted("a\u{0}b\nc\u{7F}d", limit: 10) == "abcd")
    #expect(RemoteText.quoted(String(repeating: "x", count: 12), limit: 10) == String(repeating: "x", count: 10) + "…")
    #expect(RemoteText.quoted("exactly10!", limit: 10) == "exactly10!")
    #expect(RemoteText.seconds(5) == "5")
    #expect(RemoteText.seconds(0.5) == "0.5")
    #expect(RemoteText.seconds(1e300) == "1e+300")
  }

  @Test("a request, a client identity and the failures describe themselves without credentials, bodies or queries")
  func noSecretsInDescriptions() {
    let request = RemoteRequest(
      method: .POST, url: "https://api.example.com/v1/charges?token=tok_secret",
      headers: [("Authorization", "Bearer sk_test_secret")], body: Array("card=4242".utf8), idempotencyKey: "key-1")
    #expect("\(request)" == "POST https://api.example.com/v1/charges")
    #expect(request.allHeaders.map(\.name) == ["Authorization", "Idempotency-Key"])
    let identity = RemoteClientIdentity(
      certificateChainPEM: ["-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"],
      keyPEM: "-----BEGIN PRIVATE KEY-----\nMIGHAgEA\n-----END PRIVATE KEY-----\n")
    #expect("\(identity)" == "a client certificate chain of 1 and its key")
    var settings = RemoteConnectionSettings(connectTimeoutSeconds: 1, requestTimeoutSeconds: 2)
    settings.clientIdentity = identity
    #expect(!"\(settings)".contains("MIGHAgEA"))
    let failures: [RemoteFailure] = [
      .requestTimeout, .connectTimeout, .closedBeforeAnswer, .refused, .socket(errno: ECONNRESET), .connection("ioOnClosedChannel"),
      .tls(.alert("unknown_ca")), .tls(.serverNotVerified("certificate verify failed")), .tls(.other("WRONG_VERSION_NUMBER")),
      .shutDown, .other(type: "NIOTooManyBytesError"),
    ]
    #expect(
      failures.map(\.description) == [
        "no answer within the request timeout", "cannot connect within the connect timeout",
        "the connection was closed before the answer", "the connection failed", "the connection failed",
        "the connection failed", "TLS failed: TLS alert unknown_ca",
        "TLS failed: the server's certificate did not verify (certificate verify failed)", "TLS failed: WRONG_VERSION_NUMBER",
        "the client is shut down; nothing was sent", "the request failed (NIOTooManyBytesError)",
      ])
    #expect(failures.filter(\.lostConnection) == [.closedBeforeAnswer, .socket(errno: ECONNRESET)])
  }

  @Test("a response's headers are found whatever their case; Retry-After read through the one parser")
  func responseHeaders() {
    let response = RemoteResponse(status: 429, headers: [("RETRY-AFTER", "3"), ("Retry-After", "9"), ("x", "y")])
    #expect(response.header("retry-after") == "3")
    #expect(response.header("missing") == nil)
    #expect(response.retryAfter(now: 0) == 3)
    #expect(RemoteResponse(status: 503).retryAfter() == nil)
  }
}
