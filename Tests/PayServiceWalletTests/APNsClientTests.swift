import Crypto
import Foundation
import PayServiceCore
import PayServiceTestSupport
import PayServiceWallet
import Testing

/// The APNs client against the APNs test server over real TLS and HTTP/2: each answer mapped as
/// Apple documents it, the provider token's fields, reuse and renewal, the retry of an expired
/// token, faults, and nothing secret in what it says.
@Suite("APNs client")
struct APNsClientTests {
  typealias Fixture = APNsFixture

  @Test("a push is delivered with its apns-id: POST /3/device/{token}, the documented headers, body {}, HTTP/2")
  func delivered() async throws {
    let key = P256.Signing.PrivateKey()
    let clock = Fixture.Clock()
    let server = try Fixture.server(key: key, clock: clock)
    defer { server.shutdown() }
    let client = try APNsClient(settings: server.settings(keyPEM: key.pemRepresentation), now: { clock.now })
    defer { client.shutdown() }

    let outcome = await client.push(pushToken: Fixture.device(1), topic: Fixture.topic)
    #expect(outcome == .delivered(apnsId: Fixture.apnsId(1)))

    let pushes = server.pushes
    #expect(pushes.count == 1)
    let push = try #require(pushes.first)
    #expect(push.method == "POST")
    #expect(push.path == "/3/device/" + Fixture.device(1))
    #expect(push.deviceToken == Fixture.device(1))
    #expect(push.httpVersion == "HTTP/2.0")
    #expect(push.topic == Fixture.topic)
    #expect(push.pushType == "background")
    #expect(push.priority == "5")
    #expect(push.payload == "{}")
    #expect(push.status == 200)
    #expect(push.reason == nil)
    #expect(push.apnsId == Fixture.apnsId(1))
    #expect(push.accepted)
    #expect(server.delivered(to: Fixture.device(1)) == 1)
    #expect(server.delivered(to: Fixture.device(2)) == 0)

    let jwt = try #require(push.providerToken)
    let decoded = try #require(AppStoreTestBearerToken.decode(jwt))
    #expect(decoded.header == JSONObject([("alg", .string("ES256")), ("kid", .string(Fixture.keyId))]))
    #expect(
      decoded.payload == JSONObject([("iss", .string(Fixture.teamId)), ("iat", .number(String(Fixture.start)))]))
    #expect(decoded.signature.count == 64)
    let signature = try P256.Signing.ECDSASignature(rawRepresentation: decoded.signature)
    let signingInput = String(jwt[..<jwt.lastIndex(of: ".")!])
    #expect(key.publicKey.isValidSignature(signature, for: Array(signingInput.utf8)))
    #expect(!jwt.contains("=") && !jwt.contains("+") && !jwt.contains("/"))
  }

  @Test("410 Unregistered is .gone, and the server recorded it as not delivered")
  func unregistered() async throws {
    let key = P256.Signing.PrivateKey()
    let server = try Fixture.server(key: key)
    defer { server.shutdown() }
    server.unregister(Fixture.device(2), at: 1_700_000_000_123)
    let client = try APNsClient(settings: server.settings(keyPEM: key.pemRepresentation))
    defer { client.shutdown() }

    #expect(await client.push(pushToken: Fixture.device(2), topic: Fixture.topic) == .gone(reason: "Unregistered"))
    let pushes = server.pushes(to: Fixture.device(2))
    #expect(pushes.count == 1)
    #expect(pushes.first?.status == 410)
    #expect(pushes.first?.reason == "Unregistered")
    #expect(pushes.first?.accepted == false)
    #expect(server.delivered(to: Fixture.device(2)) == 0)
  }

  @Test("400 BadDeviceToken (unknown token) and DeviceTokenNotForTopic are .gone; BadTopic-like refusals are .refused")
  func badDeviceToken() async throws {
    let key = P256.Signing.PrivateKey()
    let server = try Fixture.server(key: key)
    defer { server.shutdown() }
    server.registerDevice(Fixture.device(9), topic: Fixture.otherTopic)
    let client = try APNsClient(settings: server.settings(keyPEM: key.pemRepresentation))
    defer { client.shutdown() }

    #expect(await client.push(pushToken: Fixture.device(8), topic: Fixture.topic) == .gone(reason: "BadDeviceToken"))
    #expect(
      await client.push(pushToken: Fixture.device(9), topic: Fixture.topic) == .gone(reason: "DeviceTokenNotForTopic"))
    #expect(
      await client.push(pushToken: Fixture.device(1), topic: "order.com.example.unknown")
        == .refused(status: 400, reason: "TopicDisallowed"))
    #expect(server.pushes.map(\.status) == [400, 400, 400])
    #expect(server.pushes.map(\.reason) == ["BadDeviceToken", "DeviceTokenNotForTopic", "TopicDisallowed"])
    #expect(server.pushes.allSatisfy { !$0.accepted })
  }

  @Test("a key the team did not register: 403 InvalidProviderToken, .refused, sent once")
  func wrongKey() async throws {
    let key = P256.Signing.PrivateKey()
    let server = try Fixture.server(key: key)
    defer { server.shutdown() }
    let other = P256.Signing.PrivateKey()
    let client = try APNsClient(settings: server.settings(keyPEM: other.pemRepresentation))
    defer { client.shutdown() }

    #expect(
      await client.push(pushToken: Fixture.device(1), topic: Fixture.topic)
        == .refused(status: 403, reason: "InvalidProviderToken"))
    #expect(server.pushes.count == 1)
    #expect(server.pushes.first?.reason == "InvalidProviderToken")
    #expect(server.delivered(to: Fixture.device(1)) == 0)
  }

  @Test("403 ExpiredProviderToken: a new token and the push once more; a token just made is not made again")
  func expiredTokenRetriedOnce() async throws {
    let key = P256.Signing.PrivateKey()
    let clientClock = Fixture.Clock()
    let serverClock = Fixture.Clock()
    let server = try Fixture.server(key: key, clock: serverClock)
    defer { server.shutdown() }
    let client = try APNsClient(settings: server.settings(keyPEM: key.pemRepresentation), now: { clientClock.now })
    defer { client.shutdown() }

    #expect(await client.push(pushToken: Fixture.device(1), topic: Fixture.topic) == .delivered(apnsId: Fixture.apnsId(1)))
    // Our clock says the token is 1,300 s old and still good; APNs' says 3,700 s.
    clientClock.set(Fixture.start + 1_300)
    serverClock.set(Fixture.start + 3_700)
    #expect(await client.push(pushToken: Fixture.device(1), topic: Fixture.topic) == .delivered(apnsId: Fixture.apnsId(3)))

    let pushes = server.pushes
    #expect(pushes.map(\.status) == [200, 403, 200])
    #expect(pushes.map(\.reason) == [nil, "ExpiredProviderToken", nil])
    #expect(pushes[0].providerToken == pushes[1].providerToken)
    #expect(pushes[1].providerToken != pushes[2].providerToken)
    let renewed = try #require(pushes[2].providerToken.flatMap(AppStoreTestBearerToken.decode))
    #expect(renewed.payload["iat"] == .number(String(Fixture.start + 1_300)))
    #expect(server.delivered(to: Fixture.device(1)) == 2)

    // The renewed token is used from now on.
    #expect(await client.push(pushToken: Fixture.device(2), topic: Fixture.topic) == .delivered(apnsId: Fixture.apnsId(4)))
    #expect(server.pushes.last?.providerToken == pushes[2].providerToken)

    // APNs' clock two hours ahead: a token made this instant is expired to it too; no second try.
    let late = Fixture.Clock(Fixture.start + 7_200)
    let aheadServer = try Fixture.server(key: key, clock: late)
    defer { aheadServer.shutdown() }
    let fresh = try APNsClient(settings: aheadServer.settings(keyPEM: key.pemRepresentation), now: { Fixture.start })
    defer { fresh.shutdown() }
    #expect(
      await fresh.push(pushToken: Fixture.device(1), topic: Fixture.topic)
        == .refused(status: 403, reason: "ExpiredProviderToken"))
    #expect(aheadServer.pushes.count == 1)
  }

  @Test("one provider token for every push until it is 50 minutes old, then a new one; APNs takes each")
  func providerTokenReusedThenRenewed() async throws {
    let key = P256.Signing.PrivateKey()
    let clock = Fixture.Clock()
    let server = try Fixture.server(key: key, clock: clock)
    defer { server.shutdown() }
    let client = try APNsClient(settings: server.settings(keyPEM: key.pemRepresentation), now: { clock.now })
    defer { client.shutdown() }

    for n in 1...3 {
      #expect(await client.push(pushToken: Fixture.device(n), topic: Fixture.topic) == .delivered(apnsId: Fixture.apnsId(n)))
    }
    clock.set(Fixture.start + 2_999)
    #expect(await client.push(pushToken: Fixture.device(4), topic: Fixture.topic) == .delivered(apnsId: Fixture.apnsId(4)))
    clock.set(Fixture.start + 3_000)
    #expect(await client.push(pushToken: Fixture.device(1), topic: Fixture.topic) == .delivered(apnsId: Fixture.apnsId(5)))
    clock.set(Fixture.start + 3_500)
    #expect(await client.push(pushToken: Fixture.device(2), topic: Fixture.topic) == .delivered(apnsId: Fixture.apnsId(6)))

    let tokens = server.pushes.map(\.providerToken)
    #expect(tokens.count == 6)
    #expect(Set(tokens[0...3]).count == 1)
    #expect(tokens[4] != tokens[3])
    #expect(tokens[5] == tokens[4])
    let iats = tokens.compactMap { $0.flatMap(AppStoreTestBearerToken.decode)?.payload["iat"] }
    #expect(
      iats == Array(repeating: JSONValue.number("1700000000"), count: 4) + Array(repeating: .number("1700003000"), count: 2))
    #expect(server.pushes.allSatisfy { $0.accepted })
    #expect([1, 2, 3, 4].map { server.delivered(to: Fixture.device($0)) } == [2, 2, 1, 1])
  }

  @Test("429 and 503 are .unavailable with Retry-After; 500 without; the next push goes through")
  func unavailable() async throws {
    let key = P256.Signing.PrivateKey()
    let server = try Fixture.server(key: key)
    defer { server.shutdown() }
    let client = try APNsClient(settings: server.settings(keyPEM: key.pemRepresentation))
    defer { client.shutdown() }

    server.inject(.tooManyRequests(retryAfter: 30))
    #expect(
      await client.push(pushToken: Fixture.device(1), topic: Fixture.topic)
        == .unavailable(reason: "APNs answered 429 TooManyRequests", retryAfterSeconds: 30))
    server.inject(.serviceUnavailable(retryAfter: 120))
    #expect(
      await client.push(pushToken: Fixture.device(1), topic: Fixture.topic)
        == .unavailable(reason: "APNs answered 503 ServiceUnavailable", retryAfterSeconds: 120))
    server.inject(.internalServerError)
    #expect(
      await client.push(pushToken: Fixture.device(1), topic: Fixture.topic)
        == .unavailable(reason: "APNs answered 500 InternalServerError", retryAfterSeconds: nil))
    server.inject(.serviceUnavailable(retryAfter: nil))
    #expect(
      await client.push(pushToken: Fixture.device(1), topic: Fixture.topic)
        == .unavailable(reason: "APNs answered 503 ServiceUnavailable", retryAfterSeconds: nil))
    #expect(await client.push(pushToken: Fixture.device(1), topic: Fixture.topic) == .delivered(apnsId: Fixture.apnsId(5)))

    #expect(server.pushes.map(\.status) == [429, 503, 500, 503, 200])
    #expect(server.delivered(to: Fixture.device(1)) == 1)
  }

  @Test("a fault for one device: only its push fails, and each device's count is exact")
  func faultForOneDevice() async throws {
    let key = P256.Signing.PrivateKey()
    let server = try Fixture.server(key: key)
    defer { server.shutdown() }
    let client = try APNsClient(settings: server.settings(keyPEM: key.pemRepresentation))
    defer { client.shutdown() }

    server.inject(.tooManyRequests(retryAfter: nil), deviceToken: Fixture.device(3))
    var outcomes: [WalletPushOutcome] = []
    for n in 1...4 { outcomes.append(await client.push(pushToken: Fixture.device(n), topic: Fixture.topic)) }
    #expect(
      outcomes == [
        .delivered(apnsId: Fixture.apnsId(1)), .delivered(apnsId: Fixture.apnsId(2)),
        .unavailable(reason: "APNs answered 429 TooManyRequests", retryAfterSeconds: nil),
        .delivered(apnsId: Fixture.apnsId(4)),
      ])
    #expect([1, 2, 3, 4].map { server.delivered(to: Fixture.device($0)) } == [1, 1, 0, 1])
    #expect([1, 2, 3, 4].map { server.pushes(to: Fixture.device($0)).count } == [1, 1, 1, 1])
  }

  @Test("a connection reset under a push is .unavailable; the next push opens a new connection")
  func connectionReset() async throws {
    let key = P256.Signing.PrivateKey()
    let server = try Fixture.server(key: key)
    defer { server.shutdown() }
    let client = try APNsClient(settings: server.settings(keyPEM: key.pemRepresentation))
    defer { client.shutdown() }

    #expect(await client.push(pushToken: Fixture.device(1), topic: Fixture.topic) == .delivered(apnsId: Fixture.apnsId(1)))
    server.inject(.reset)
    let outcome = await client.push(pushToken: Fixture.device(2), topic: Fixture.topic)
    guard case .unavailable(let reason, let retryAfter) = outcome else {
      Issue.record("a reset connection gave \(outcome)")
      return
    }
    // The reset arrives as the connection closed, or reset, under the push.
    #expect(
      [
        "no answer from APNs: the connection was closed before the answer",
        "no answer from APNs: the connection failed",
      ].contains(reason))
    #expect(retryAfter == nil)
    let after = await client.push(pushToken: Fixture.device(2), topic: Fixture.topic)
    #expect(after == .delivered(apnsId: Fixture.apnsId(2)), "\(after)")
    #expect(server.pushes.map(\.status) == [200, 0, 200])
    #expect(server.connectionsAccepted == 2)
    #expect(server.delivered(to: Fixture.device(2)) == 1)
  }

  @Test("HTTP/2: a held push does not hold another on the same connection; one connection carries both")
  func multiplexedWhileHeld() async throws {
    let key = P256.Signing.PrivateKey()
    let server = try Fixture.server(key: key)
    defer { server.shutdown() }
    // The held push waits while the other one is made: its deadline bounds a hang, whatever the load.
    let client = try APNsClient(settings: server.settings(keyPEM: key.pemRepresentation, requestTimeoutSeconds: 600))
    defer { client.shutdown() }

    #expect(await client.push(pushToken: Fixture.device(1), topic: Fixture.topic) == .delivered(apnsId: Fixture.apnsId(1)))
    let gate = APNsTestServer.Gate()
    server.inject(.hold(gate), deviceToken: Fixture.device(2))
    let held = Task { await client.push(pushToken: Fixture.device(2), topic: Fixture.topic) }
    #expect(await gate.waitUntilReachedAsync(timeout: 60))
    #expect(await client.push(pushToken: Fixture.device(3), topic: Fixture.topic) == .delivered(apnsId: Fixture.apnsId(3)))
    gate.release()
    let heldOutcome = await held.value
    #expect(heldOutcome == .delivered(apnsId: Fixture.apnsId(2)), "\(heldOutcome)")

    #expect(server.pushes.map(\.deviceToken) == [1, 2, 3].map(Fixture.device))
    #expect(server.pushes.allSatisfy { $0.httpVersion == "HTTP/2.0" })
    #expect(server.connectionsAccepted == 1)
  }

  @Test("a server that answers over HTTP/1.1 is no APNs: .unavailable, whatever it answered")
  func http1ServerRefused() async throws {
    let key = P256.Signing.PrivateKey()
    // The App Store Server API test server speaks HTTP/1.1 only.
    let http1 = try AppStoreServerTestServer(
      publicKey: key.publicKey, keyId: Fixture.keyId, issuerId: Fixture.teamId, bundleId: "com.example")
    defer { http1.shutdown() }
    let settings = APNsSettings(
      keyPEM: key.pemRepresentation, keyId: Fixture.keyId, teamId: Fixture.teamId, apiBase: http1.productionURL,
      trustRoots: .pem(http1.caPEM))
    let client = try APNsClient(settings: settings)
    defer { client.shutdown() }

    #expect(
      await client.push(pushToken: Fixture.device(1), topic: Fixture.topic)
        == .unavailable(
          reason: "no answer from APNs: the connection failed (the server answered over HTTP/1.1, not HTTP/2)",
          retryAfterSeconds: nil))
    #expect(http1.requests.count == 1)
  }

  @Test("a push token or topic that is not one is refused with status 0 and nothing is sent")
  func invalidTokenOrTopicNotSent() async throws {
    let key = P256.Signing.PrivateKey()
    let server = try Fixture.server(key: key)
    defer { server.shutdown() }
    let client = try APNsClient(settings: server.settings(keyPEM: key.pemRepresentation))
    defer { client.shutdown() }

    let notHex = "not sent: the push token is not hex digits"
    let badTokens: [(String, String)] = [
      ("", "not sent: the push token has 0 hex digits, not an even count from 16 to 200"),
      ("0123456789abcde", "not sent: the push token has 15 hex digits, not an even count from 16 to 200"),
      (String(repeating: "a", count: 63), "not sent: the push token has 63 hex digits, not an even count from 16 to 200"),
      (String(repeating: "a", count: 202), "not sent: the push token has 202 hex digits, not an even count from 16 to 200"),
      (Fixture.device(1) + "/../x", notHex),
      ("../../3/device/" + Fixture.device(1), notHex),
      (String(Fixture.device(1).dropLast(2)) + "zz", notHex),
      (String(Fixture.device(1).dropLast(2)) + "é", notHex),
      (Fixture.device(1) + "?x=1", notHex),
    ]
    for (token, reason) in badTokens {
      #expect(await client.push(pushToken: token, topic: Fixture.topic) == .refused(status: 0, reason: reason))
    }
    let notIdentifier = "not sent: the topic is not an identifier (letters, digits, '.', '-' and '_')"
    let badTopics: [(String, String)] = [
      ("", "not sent: the topic is empty"),
      ("order.com.example shop", notIdentifier),
      ("order.com.example\r\nx-injected: 1", notIdentifier),
      ("order.com.exämple", notIdentifier),
      (String(repeating: "a", count: 256), "not sent: the topic is longer than 255 bytes"),
    ]
    for (topic, reason) in badTopics {
      #expect(await client.push(pushToken: Fixture.device(1), topic: topic) == .refused(status: 0, reason: reason))
    }
    #expect(server.pushes.isEmpty)
    #expect(server.connectionsAccepted == 0)
    // Upper-case hex and the shortest and longest lengths are sent.
    server.registerDevice(String(repeating: "AB", count: 8), topic: Fixture.topic)
    server.registerDevice(String(repeating: "cd", count: 100), topic: Fixture.topic)
    #expect(
      await client.push(pushToken: String(repeating: "AB", count: 8), topic: Fixture.topic)
        == .delivered(apnsId: Fixture.apnsId(1)))
    #expect(
      await client.push(pushToken: String(repeating: "cd", count: 100), topic: Fixture.topic)
        == .delivered(apnsId: Fixture.apnsId(2)))
  }

  @Test("shut down: later pushes are .unavailable and nothing is sent; shutdown is idempotent")
  func shutdown() async throws {
    let key = P256.Signing.PrivateKey()
    let server = try Fixture.server(key: key)
    defer { server.shutdown() }
    let client = try APNsClient(settings: server.settings(keyPEM: key.pemRepresentation))
    client.shutdown()
    client.shutdown()
    #expect(
      await client.push(pushToken: Fixture.device(1), topic: Fixture.topic)
        == .unavailable(reason: "no answer from APNs: the client is shut down; nothing was sent", retryAfterSeconds: nil))
    #expect(server.pushes.isEmpty)
  }

  @Test("nothing the client says holds the key, a provider token or a device token")
  func nothingSecretDescribed() async throws {
    let key = P256.Signing.PrivateKey()
    let pem = key.pemRepresentation
    let server = try Fixture.server(key: key)
    defer { server.shutdown() }
    server.unregister(Fixture.device(2))
    let settings = server.settings(keyPEM: pem)
    let client = try APNsClient(settings: settings)
    defer { client.shutdown() }
    let wrongKeyClient = try APNsClient(settings: server.settings(keyPEM: P256.Signing.PrivateKey().pemRepresentation))
    defer { wrongKeyClient.shutdown() }

    var outcomes: [WalletPushOutcome] = []
    outcomes.append(await client.push(pushToken: Fixture.device(1), topic: Fixture.topic))
    outcomes.append(await client.push(pushToken: Fixture.device(2), topic: Fixture.topic))
    outcomes.append(await client.push(pushToken: Fixture.device(7), topic: Fixture.topic))
    outcomes.append(await wrongKeyClient.push(pushToken: Fixture.device(1), topic: Fixture.topic))
    server.inject(.serviceUnavailable(retryAfter: 1))
    outcomes.append(await client.push(pushToken: Fixture.device(1), topic: Fixture.topic))
    server.inject(.reset)
    outcomes.append(await client.push(pushToken: Fixture.device(3), topic: Fixture.topic))
    outcomes.append(await client.push(pushToken: Fixture.device(1) + "zz", topic: Fixture.topic))
    #expect(server.pushes.count == 6)

    var dumped = ""
    dump(settings, to: &dumped)
    var texts = outcomes.map { "\($0)" } + outcomes.map { String(reflecting: $0) }
    texts += ["\(client)", String(reflecting: client), "\(settings)", String(reflecting: settings), dumped]
    texts += [APNsSetupError.keyNotP256, .keyNotPKCS8, .invalidAPIBase, .invalidTrustRoots, .invalidIdentifier("keyId")]
      .map { "\($0)" }
    let secrets =
      pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
      + server.pushes.compactMap(\.providerToken)
      + server.pushes.compactMap(\.providerToken).flatMap { $0.split(separator: ".").map(String.init) }
      + [1, 2, 3, 7].map(Fixture.device)
    for text in texts {
      for secret in secrets where text.contains(secret) {
        Issue.record("\"\(text)\" holds a secret")
      }
    }
    #expect("\(settings)" == "APNs at \(server.baseURL), key id \(Fixture.keyId), team id \(Fixture.teamId)")
    #expect("\(client)" == "APNs client (APNs at \(server.baseURL), key id \(Fixture.keyId), team id \(Fixture.teamId))")
  }

  @Test("settings that cannot make a client: the key, the ids, the server URL, the trust roots")
  func setupErrors() throws {
    let pem = P256.Signing.PrivateKey().pemRepresentation
    func settings(
      keyPEM: String = pem, keyId: String = Fixture.keyId, teamId: String = Fixture.teamId,
      apiBase: String = APNsSettings.developmentBase, trustRoots: RemoteConnectionSettings.TrustRoots = .system
    ) -> APNsSettings {
      APNsSettings(keyPEM: keyPEM, keyId: keyId, teamId: teamId, apiBase: apiBase, trustRoots: trustRoots)
    }
    let sec1 =
      "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIEpT+eRC3V7MI/SUWQD0cLU30uAjUaqSirPtvKzR4jwKoAoGCCqGSM49\n-----END EC PRIVATE KEY-----\n"
    let cases: [(APNsSettings, APNsSetupError)] = [
      (settings(keyPEM: ""), .keyNotPKCS8),
      (settings(keyPEM: sec1), .keyNotPKCS8),
      (settings(keyPEM: P384.Signing.PrivateKey().pemRepresentation), .keyNotP256),
      (settings(keyId: ""), .invalidIdentifier("keyId")),
      (settings(teamId: "TEAM 12345"), .invalidIdentifier("teamId")),
      (settings(apiBase: "http://api.push.apple.com"), .invalidAPIBase),
      (settings(apiBase: "https://api.push.apple.com/3/device"), .invalidAPIBase),
      (settings(apiBase: "https://api.push.apple.com?x=1"), .invalidAPIBase),
      (settings(apiBase: "api.push.apple.com"), .invalidAPIBase),
      (settings(trustRoots: .pem("not a certificate")), .invalidTrustRoots),
    ]
    for (settings, expected) in cases {
      #expect(throws: expected) { _ = try APNsClient(settings: settings) }
    }
    for base in [APNsSettings.productionBase, APNsSettings.developmentBase, APNsSettings.productionBase + "/"] {
      let client = try APNsClient(settings: settings(apiBase: base))
      client.shutdown()
    }
    #expect(APNsSettings.productionBase == "https://api.push.apple.com")
    #expect(APNsSettings.developmentBase == "https://api.sandbox.push.apple.com")
    #expect(
      "\(APNsSetupError.keyNotP256)"
        == "the APNs key is not a P-256 (ES256) private key: use the .p8 file of an APNs authentication key")
  }
}
