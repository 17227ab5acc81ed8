import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The APNs test server itself, through a plain HTTP/2 client that can send what the APNs client
/// never would: each check answered with Apple's status and reason, the body and headers exact,
/// HTTP/1.1 refused, and every request recorded.
@Suite("APNs test server")
struct APNsTestServerTests {
  typealias Fixture = APNsFixture

  /// A server of the fixture's team, on a pinned clock, with an HTTP/2 client that trusts it.
  struct Harness {
    let key = P256.Signing.PrivateKey()
    let clock = Fixture.Clock()
    let server: APNsTestServer
    let client: HTTPClient
    /// The provider token of `.valid`: one for the whole test, as APNs wants (a new token every
    /// request would be answered TooManyProviderTokenUpdates).
    let validToken: String

    init(httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic) throws {
      server = try Fixture.server(key: key, clock: clock)
      var tls = TLSConfiguration.makeClientConfiguration()
      tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(server.caPEM.utf8)))
      var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
      configuration.httpVersion = httpVersion
      client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
      validToken = try ES256JWT(key: key).sign(
        header: JSONObject([("alg", .string("ES256")), ("kid", .string(Fixture.keyId))]),
        payload: JSONObject([("iss", .string(Fixture.teamId)), ("iat", .number(String(clock.now)))]))
    }

    func close() async {
      try? await client.shutdown()
      server.shutdown()
    }

    /// A provider token, each field replaceable.
    func token(
      keyId: String = Fixture.keyId, teamId: String = Fixture.teamId, issuedAt: Int64? = nil, algorithm: String = "ES256",
      signer: P256.Signing.PrivateKey? = nil
    ) throws -> String {
      try ES256JWT(key: signer ?? key).sign(
        header: JSONObject([("alg", .string(algorithm)), ("kid", .string(keyId))]),
        payload: JSONObject([("iss", .string(teamId)), ("iat", .number(String(issuedAt ?? clock.now)))]))
    }

    struct Answer: Equatable {
      var status: Int
      var body: String
      var apnsId: String?
      var retryAfter: String?
      var version: String
    }

    /// The `authorization` header of a request.
    enum Authorization {
      /// `bearer` and the test's good provider token.
      case valid
      case none
      case header(String)
    }

    /// One request, its headers in the order given (a nil value leaves the header out).
    func send(
      method: HTTPMethod = .POST, path: String = "/3/device/" + Fixture.device(1), authorization: Authorization = .valid,
      topic: String? = Fixture.topic, pushType: String? = "background", priority: String? = "5",
      extra: [(String, String)] = [], body: String = "{}"
    ) async throws -> Answer {
      var request = HTTPClientRequest(url: server.baseURL + path)
      request.method = method
      switch authorization {
      case .valid: request.headers.add(name: "authorization", value: "bearer " + validToken)
      case .none: break
      case .header(let value): request.headers.add(name: "authorization", value: value)
      }
      if let topic { request.headers.add(name: "apns-topic", value: topic) }
      if let pushType { request.headers.add(name: "apns-push-type", value: pushType) }
      if let priority { request.headers.add(name: "apns-priority", value: priority) }
      for (name, value) in extra { request.headers.add(name: name, value: value) }
      if !body.isEmpty { request.body = .bytes(ByteBuffer(string: body)) }
      let response = try await client.execute(request, timeout: .seconds(10))
      let bytes = try await response.body.collect(upTo: 1 << 20)
      return Answer(
        status: Int(response.status.code), body: String(buffer: bytes), apnsId: response.headers.first(name: "apns-id"),
        retryAfter: response.headers.first(name: "retry-after"),
        version: "HTTP/\(response.version.major).\(response.version.minor)")
    }
  }

  static func reason(_ name: String) -> String { #"{"reason":"\#(name)"}"# }

  @Test("a push as the APNs client sends it: 200 over HTTP/2, an empty body, the next apns-id; one given is echoed")
  func accepted() async throws {
    let harness = try Harness()
    let answer = try await harness.send()
    #expect(answer == Harness.Answer(status: 200, body: "", apnsId: Fixture.apnsId(1), retryAfter: nil, version: "HTTP/2.0"))
    let mine = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
    let echoed = try await harness.send(extra: [("apns-id", mine)])
    #expect(echoed == Harness.Answer(status: 200, body: "", apnsId: mine, retryAfter: nil, version: "HTTP/2.0"))
    #expect(try await harness.send().apnsId == Fixture.apnsId(2))
    let pushes = harness.server.pushes
    #expect(pushes.count == 3)
    #expect(pushes.allSatisfy { $0.accepted && $0.httpVersion == "HTTP/2.0" && $0.payload == "{}" })
    #expect(harness.server.delivered(to: Fixture.device(1)) == 3)
    await harness.close()
  }

  @Test("method and path: 405 MethodNotAllowed, 404 BadPath, 400 MissingDeviceToken")
  func methodAndPath() async throws {
    let harness = try Harness()
    let device = Fixture.device(1)
    let cases: [(HTTPMethod, String, Int, String)] = [
      (HTTPMethod.GET, "/3/device/\(device)", 405, "MethodNotAllowed"),
      (HTTPMethod.PUT, "/3/device/\(device)", 405, "MethodNotAllowed"),
      (HTTPMethod.POST, "/3/devices/\(device)", 404, "BadPath"),
      (HTTPMethod.POST, "/2/device/\(device)", 404, "BadPath"),
      (HTTPMethod.POST, "/3/device/\(device)/x", 404, "BadPath"),
      (HTTPMethod.POST, "/", 404, "BadPath"),
      (HTTPMethod.POST, "/3/device/", 400, "MissingDeviceToken"),
    ]
    for (method, path, status, reason) in cases {
      let answer = try await harness.send(method: method, path: path, body: method == .GET ? "" : "{}")
      #expect(answer.status == status, "\(method) \(path)")
      #expect(answer.body == Self.reason(reason), "\(method) \(path)")
      #expect(answer.apnsId != nil)
    }
    let statuses = cases.map { $0.2 }
    let reasons: [String?] = cases.map { $0.3 }
    #expect(harness.server.pushes.map(\.status) == statuses)
    #expect(harness.server.pushes.map(\.reason) == reasons)
    await harness.close()
  }

  @Test("the provider token: missing, forged, another key id or team, not ES256, expired, too soon renewed")
  func providerToken() async throws {
    let harness = try Harness()
    let now = harness.clock.now
    let forged =
      try harness.token(teamId: "TEAM654321").split(separator: ".")[0...1].joined(separator: ".") + "."
      + String(harness.token().split(separator: ".")[2])
    let otherKey = try harness.token(signer: P256.Signing.PrivateKey())
    let otherKeyId = try harness.token(keyId: "KEY7654321")
    let otherTeam = try harness.token(teamId: "TEAM654321")
    let es384 = try harness.token(algorithm: "ES384")
    let future = try harness.token(issuedAt: now + 3_600)
    let expired = try harness.token(issuedAt: now - 3_601)
    let cases: [(Harness.Authorization, String)] = [
      (.none, "MissingProviderToken"),
      (.header("basic dXNlcjpwYXNz"), "MissingProviderToken"),
      (.header("bearer "), "InvalidProviderToken"),
      (.header("bearer not.a.jwt"), "InvalidProviderToken"),
      (.header("bearer " + otherKey), "InvalidProviderToken"),
      (.header("bearer " + otherKeyId), "InvalidProviderToken"),
      (.header("bearer " + otherTeam), "InvalidProviderToken"),
      (.header("bearer " + es384), "InvalidProviderToken"),
      (.header("bearer " + forged), "InvalidProviderToken"),
      (.header("bearer " + future), "InvalidProviderToken"),
      (.header("bearer " + expired), "ExpiredProviderToken"),
    ]
    for (index, (authorization, reason)) in cases.enumerated() {
      let answer = try await harness.send(authorization: authorization)
      #expect(answer.status == 403, "case \(index)")
      #expect(answer.body == Self.reason(reason), "case \(index)")
    }
    // An hour old to the second is still good; it becomes the team's token.
    let hourOld = try harness.token(issuedAt: now - 3_600)
    #expect(try await harness.send(authorization: .header("bearer " + hourOld)).status == 200)
    // A new token 19 minutes 59 seconds after it is too soon; 20 minutes after is not; the old one
    // stays good meanwhile, and "Bearer" is taken in any case.
    let tooSoon = try harness.token(issuedAt: now - 3_600 + 1_199)
    #expect(
      try await harness.send(authorization: .header("bearer " + tooSoon)).body == Self.reason("TooManyProviderTokenUpdates"))
    #expect(try await harness.send(authorization: .header("Bearer " + hourOld)).status == 200)
    let later = try harness.token(issuedAt: now - 3_600 + 1_200)
    #expect(try await harness.send(authorization: .header("bearer " + later)).status == 200)
    #expect(harness.server.pushes.suffix(4).map(\.status) == [200, 429, 200, 200])
    await harness.close()
  }

  @Test("the topic: 400 MissingTopic, BadTopic, TopicDisallowed; a topic added later is allowed")
  func topic() async throws {
    let harness = try Harness()
    #expect(try await harness.send(topic: nil).body == Self.reason("MissingTopic"))
    #expect(try await harness.send(topic: "order com").body == Self.reason("BadTopic"))
    #expect(try await harness.send(topic: "").body == Self.reason("BadTopic"))
    #expect(try await harness.send(topic: "order.com.example.new").body == Self.reason("TopicDisallowed"))
    harness.server.addTopic("order.com.example.new")
    harness.server.registerDevice(Fixture.device(5), topic: "order.com.example.new")
    let answer = try await harness.send(path: "/3/device/" + Fixture.device(5), topic: "order.com.example.new")
    #expect(answer.status == 200)
    #expect(harness.server.pushes.map(\.status) == [400, 400, 400, 400, 200])
    await harness.close()
  }

  @Test("the device token: 400 BadDeviceToken, DeviceTokenNotForTopic, 410 Unregistered with its timestamp")
  func deviceToken() async throws {
    let harness = try Harness()
    harness.server.registerDevice(Fixture.device(6), topic: Fixture.otherTopic)
    harness.server.unregister(Fixture.device(2), at: 1_700_000_000_123)
    let cases: [(String, Int, String)] = [
      (Fixture.device(9), 400, #"{"reason":"BadDeviceToken"}"#),
      (String(Fixture.device(1).dropLast()), 400, #"{"reason":"BadDeviceToken"}"#),
      (String(Fixture.device(1).dropLast()) + "g", 400, #"{"reason":"BadDeviceToken"}"#),
      ("abcd", 400, #"{"reason":"BadDeviceToken"}"#),
      (Fixture.device(6), 400, #"{"reason":"DeviceTokenNotForTopic"}"#),
      (Fixture.device(2), 410, #"{"reason":"Unregistered","timestamp":1700000000123}"#),
      (Fixture.device(2).uppercased(), 410, #"{"reason":"Unregistered","timestamp":1700000000123}"#),
      (Fixture.device(1).uppercased(), 200, ""),
    ]
    for (token, status, body) in cases {
      let answer = try await harness.send(path: "/3/device/" + token)
      #expect(answer.status == status, "\(token)")
      #expect(answer.body == body, "\(token)")
    }
    // Registered again, a token is good again.
    harness.server.registerDevice(Fixture.device(2), topic: Fixture.topic)
    #expect(try await harness.send(path: "/3/device/" + Fixture.device(2)).status == 200)
    #expect(harness.server.delivered(to: Fixture.device(2)) == 1)
    #expect(harness.server.pushes(to: Fixture.device(2)).count == 3)
    #expect(harness.server.delivered(to: Fixture.device(1)) == 1)
    await harness.close()
  }

  @Test("push type, priority, apns-id, expiration, collapse id, a header twice, and the payload: APNs' reasons; 4 KiB passes")
  func headersAndPayload() async throws {
    let harness = try Harness()
    let cases: [(pushType: String?, priority: String?, extra: [(String, String)], body: String, status: Int, reason: String?)] = [
      ("silent", "5", [], "{}", 400, "InvalidPushType"),
      ("background", "10", [], "{}", 400, "BadPriority"),
      ("background", "7", [], "{}", 400, "BadPriority"),
      ("alert", "10", [], "{}", 200, nil),
      (nil, nil, [], "{}", 200, nil),
      ("background", "5", [("apns-id", "not-a-uuid")], "{}", 400, "BadMessageId"),
      ("background", "5", [("apns-expiration", "tomorrow")], "{}", 400, "BadExpirationDate"),
      ("background", "5", [("apns-expiration", "0")], "{}", 200, nil),
      ("background", "5", [("apns-collapse-id", String(repeating: "c", count: 65))], "{}", 400, "BadCollapseId"),
      ("background", "5", [("apns-topic", Fixture.topic)], "{}", 400, "DuplicateHeaders"),
      ("background", "5", [], "", 400, "PayloadEmpty"),
      ("background", "5", [], #"{"x":""# + String(repeating: "y", count: 4_088) + #""}"#, 200, nil),
      ("background", "5", [], #"{"x":""# + String(repeating: "y", count: 4_089) + #""}"#, 413, "PayloadTooLarge"),
      ("background", "5", [], String(repeating: "z", count: 100_000), 413, "PayloadTooLarge"),
    ]
    for item in cases {
      let answer = try await harness.send(
        pushType: item.pushType, priority: item.priority, extra: item.extra, body: item.body)
      #expect(answer.status == item.status, "\(item.pushType ?? "-") \(item.priority ?? "-") \(item.extra) \(item.body.count)")
      #expect(answer.body == (item.reason.map(Self.reason) ?? ""))
    }
    let statuses = cases.map { $0.status }
    #expect(harness.server.pushes.map(\.status) == statuses)
    #expect(harness.server.pushes[11].payload.utf8.count == 4_096)
    await harness.close()
  }

  @Test("faults: 429 and 503 with Retry-After, 500, for one device only when asked; a hold answers after its gate")
  func faults() async throws {
    let harness = try Harness()
    harness.server.inject(.tooManyRequests(retryAfter: 7))
    harness.server.inject(.internalServerError, deviceToken: Fixture.device(2))
    harness.server.inject(.serviceUnavailable(retryAfter: 60), times: 2)
    // Faults come before any check: a push with no token at all meets the first.
    let first = try await harness.send(authorization: .none)
    #expect(
      first
        == Harness.Answer(
          status: 429, body: Self.reason("TooManyRequests"), apnsId: Fixture.apnsId(1), retryAfter: "7", version: "HTTP/2.0"))
    #expect(try await harness.send().body == Self.reason("ServiceUnavailable"))
    #expect(try await harness.send(path: "/3/device/" + Fixture.device(2)).body == Self.reason("InternalServerError"))
    let last = try await harness.send()
    #expect(last.status == 503)
    #expect(last.retryAfter == "60")
    #expect(try await harness.send().status == 200)
    #expect(harness.server.pushes.map(\.status) == [429, 503, 500, 503, 200])

    let gate = APNsTestServer.Gate()
    harness.server.inject(.hold(gate))
    let held = Task { try await harness.send(path: "/3/device/" + Fixture.device(3)) }
    #expect(await gate.waitUntilReachedAsync(timeout: 60))
    // Checked and recorded on arrival; answered on release.
    #expect(harness.server.pushes.last?.status == 200)
    gate.release()
    #expect(try await held.value.status == 200)
    #expect(harness.server.delivered(to: Fixture.device(3)) == 1)
    await harness.close()
  }

  @Test("a connection reset: the request fails, it is recorded with status 0, the next connection works")
  func reset() async throws {
    let harness = try Harness()
    harness.server.inject(.reset)
    await #expect(throws: (any Error).self) { _ = try await harness.send() }
    // A request given to the reset connection before the client's pool saw it close fails unsent;
    // one of three reaches a new connection.
    var status: Int?
    for _ in 0..<3 where status == nil {
      status = try? await harness.send().status
    }
    #expect(status == 200)
    #expect(harness.server.pushes.map(\.status) == [0, 200])
    #expect(harness.server.connectionsAccepted == 2)
    await harness.close()
  }

  @Test("HTTP/2 only: a client that speaks HTTP/1.1 gets its connection closed and sends no push")
  func http1Refused() async throws {
    let harness = try Harness(httpVersion: .http1Only)
    await #expect(throws: (any Error).self) { _ = try await harness.send() }
    #expect(harness.server.pushes.isEmpty)
    #expect(harness.server.connectionsAccepted >= 1)
    await harness.close()
  }
}
