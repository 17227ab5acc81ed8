import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOSSL
import PayServiceAppStore
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The test server's side of the bearer token, with tokens made by hand and sent by a plain
/// HTTPS client: each fault Apple answers 401 for, and the token of Apple's shape accepted.
@Suite("App Store Server API test server")
struct AppStoreServerTestServerTests {
  typealias Fixture = AppStoreFixture

  /// `GET /inApps/v2/history/{id}` on the sandbox listener with `authorization` (none when nil):
  /// the status and the body.
  static func get(_ server: AppStoreServerTestServer, _ id: String, authorization: String?) async throws -> (Int, String) {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(server.caPEM.utf8)))
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
    do {
      var request = HTTPClientRequest(url: server.sandboxURL + "/inApps/v2/history/" + id + "?sort=ASCENDING")
      if let authorization { request.headers.add(name: "Authorization", value: authorization) }
      let response = try await client.execute(request, timeout: .seconds(5))
      let body = try await response.body.collect(upTo: 1 << 20)
      try await client.shutdown()
      return (Int(response.status.code), String(buffer: body))
    } catch {
      try? await client.shutdown()
      throw error
    }
  }

  @Test("tokens Apple refuses are 401 with no body, each for its reason; Apple's shape is 200")
  func tokens() async throws {
    let server = try Fixture.server()
    defer { server.shutdown() }
    server.addTransactions([("2000000000001001", "2000000000001001", "jws-1001")], environment: .sandbox)
    let key = try Fixture.key()
    let now = Int64(Date().timeIntervalSince1970)
    func token(
      key other: P256.Signing.PrivateKey? = nil, keyId: String = Fixture.keyId, issuerId: String = Fixture.issuerId,
      bundleId: String = Fixture.bundleId, audience: String = "appstoreconnect-v1", issuedAt: Int64? = nil,
      lifetime: Int64 = 300, algorithm: String = "ES256"
    ) throws -> String {
      "Bearer "
        + (try AppStoreTestBearerToken.make(
          key: other ?? key, keyId: keyId, issuerId: issuerId, bundleId: bundleId, audience: audience,
          issuedAt: issuedAt ?? now, lifetime: lifetime, algorithm: algorithm))
    }
    let cases: [(String?, String)] = [
      (try token(key: P256.Signing.PrivateKey()), "the signature does not verify with the key"),
      (try token(bundleId: "com.example.other"), "bid is not the app's bundle id"),
      (try token(audience: "appstoreconnect-v2"), "aud is not appstoreconnect-v1"),
      (try token(keyId: "OTHERKEYID"), "kid is not the key's id"),
      (try token(issuerId: "00000000-0000-0000-0000-000000000000"), "iss is not the issuer id"),
      (try token(algorithm: "ES384"), "alg is not ES256"),
      (try token(issuedAt: now - 600), "the token expired"),
      (try token(lifetime: 3_601), "exp is more than an hour after iat"),
      ("Bearer not.a.token", "not a compact JWS of a JSON header and payload"),
      (nil, "no bearer token in the Authorization header"),
    ]
    for (authorization, _) in cases {
      let (status, body) = try await Self.get(server, "2000000000001001", authorization: authorization)
      #expect(status == 401)
      #expect(body == "")
    }
    let (status, body) = try await Self.get(server, "2000000000001001", authorization: try token(lifetime: 3_600))
    #expect(status == 200)
    guard case .object(let answer)? = try? JSONParser.parse(body) else {
      Issue.record("not a JSON object: \(body)")
      return
    }
    #expect(answer.keys == ["revision", "hasMore", "bundleId", "appAppleId", "environment", "signedTransactions"])
    #expect(answer["signedTransactions"] == .array([.string("jws-1001")]))
    #expect(answer["environment"] == .string("Sandbox"))
    #expect(answer["bundleId"] == .string("com.example"))
    #expect(answer["hasMore"] == .bool(false))

    let requests = server.requests
    #expect(requests.map(\.tokenProblem) == cases.map(\.1) + [nil])
    #expect(requests.map(\.tokenValid) == Array(repeating: false, count: cases.count) + [true])
  }

  @Test("an unknown transaction id: 404 with Apple's error object")
  func unknownTransaction() async throws {
    let server = try Fixture.server()
    defer { server.shutdown() }
    let authorization =
      "Bearer "
      + (try AppStoreTestBearerToken.make(
        key: try Fixture.key(), keyId: Fixture.keyId, issuerId: Fixture.issuerId, bundleId: Fixture.bundleId))
    let (status, body) = try await Self.get(server, "2000000000009999", authorization: authorization)
    #expect(status == 404)
    #expect(body == #"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#)
  }
}

/// The in-app purchase key: Apple's test `.p8` loads; a key of another curve, another kind or
/// garbage is refused with a message that names the setting and quotes none of the text.
@Suite("App Store Server API key")
struct AppStoreKeyTests {
  typealias Fixture = AppStoreFixture

  @Test("Apple's test key (Fixtures/testSigningKey.p8) loads and signs")
  func fixtureKeyLoads() throws {
    let pem = try Fixture.keyPEM()
    #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
    let settings = AppStoreAPISettings(keyPEM: pem, keyId: Fixture.keyId, issuerId: Fixture.issuerId, bundleId: Fixture.bundleId)
    let client = try AppStoreServerClient(settings: settings)
    client.shutdown()
  }

  @Test("a P-384 key, an RSA-shaped block, garbage and no PEM at all: the init error, the text not echoed")
  func badKeys() throws {
    let p384 = P384.Signing.PrivateKey().pemRepresentation
    let garbage = "-----BEGIN PRIVATE KEY-----\nTUlHSEFnRUFNQk1HQnlxR1NNNDlBZ0VHQ0NxR1NNNDlBd0VI\n-----END PRIVATE KEY-----\n"
    let sec1 = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIEpT+eRC3V7MI/SUWQD0cLU30uAjUaqSirPtvKzR4jwKoAoGCCqGSM49\n-----END EC PRIVATE KEY-----\n"
    let cases: [(String, AppStoreClientSetupError.Reason)] = [
      (p384, .keyNotP256),
      (garbage, .keyNotP256),
      (sec1, .keyNotPKCS8),
      ("2X9R4HXF34", .keyNotPKCS8),
      ("", .keyNotPKCS8),
    ]
    for (pem, reason) in cases {
      let settings = AppStoreAPISettings(keyPEM: pem, keyId: Fixture.keyId, issuerId: Fixture.issuerId, bundleId: Fixture.bundleId)
      do {
        let client = try AppStoreServerClient(settings: settings)
        client.shutdown()
        Issue.record("a client from a bad key")
      } catch let error as AppStoreClientSetupError {
        #expect(error.reason == reason)
        let described = "\(error)"
        for line in pem.split(separator: "\n") where !line.hasPrefix("-----") {
          #expect(!described.contains(line))
        }
        #expect(!described.contains("MHcCAQEE") && !described.contains("MIG"))
      }
    }
    #expect(
      "\(AppStoreClientSetupError(.keyNotP256))"
        == """
        the App Store Server API key is not a P-256 (ES256) private key: use the .p8 file of an in-app purchase key \
        from App Store Connect (Users and Access, Integrations, In-App Purchase)
        """)
    let noKeyId = AppStoreAPISettings(keyPEM: try Fixture.keyPEM(), keyId: "", issuerId: Fixture.issuerId, bundleId: Fixture.bundleId)
    #expect(throws: AppStoreClientSetupError(.missingIdentifier("keyId"))) { _ = try AppStoreServerClient(settings: noKeyId) }
    var badRoots = AppStoreAPISettings(
      keyPEM: try Fixture.keyPEM(), keyId: Fixture.keyId, issuerId: Fixture.issuerId, bundleId: Fixture.bundleId)
    badRoots.trustRootsPEM = "not a certificate"
    let badRootsSettings = badRoots
    #expect(throws: AppStoreClientSetupError(.invalidTrustRoots)) { _ = try AppStoreServerClient(settings: badRootsSettings) }
  }
}
