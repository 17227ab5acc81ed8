import Foundation
import PayServiceCore
import PayServiceRemote
import PayServiceTestSupport
import Testing

/// The HTTPS transport against the local test servers over real TLS: mutual TLS with a client
/// identity, trust roots as PEM text and as a file, an idempotency key kept across a retry that
/// honours `Retry-After`, and each failure classified without quoting the request.
@Suite("HTTP remote transport", .serialized)
struct HTTPRemoteTransportTests {
  static let merchant = "merchant.com.example.shop"
  static let body = Array(
    #"{"merchantIdentifier":"merchant.com.example.shop","displayName":"Example Shop","initiative":"web","initiativeContext":"shop.example.com"}"#
      .utf8)

  static func sessionServer() throws -> AppleSessionTestServer {
    try AppleSessionTestServer(registrations: [merchant: ["shop.example.com"]], now: { 1_795_262_400 })
  }

  /// Settings that reach `server` with a merchant identity it accepts.
  static func settings(_ server: AppleSessionTestServer, requestTimeout: Double = 5) throws -> RemoteConnectionSettings {
    let issued = try server.issueIdentity(merchantIdentifier: merchant, key: .p256)
    var settings = RemoteConnectionSettings(connectTimeoutSeconds: 2, requestTimeoutSeconds: requestTimeout)
    settings.trustRoots = .pem(server.serverCAPEM)
    settings.clientIdentity = RemoteClientIdentity(certificateChainPEM: [issued.certificatePEM], keyPEM: issued.keyPEM)
    return settings
  }

  static func post(_ server: AppleSessionTestServer) -> RemoteRequest {
    RemoteRequest(
      method: .POST, url: server.validationURL, headers: [("Content-Type", "application/json")], body: body)
  }

  static func failure(_ result: Result<RemoteResponse, RemoteFailure>) -> RemoteFailure? {
    if case .failure(let failure) = result { return failure }
    return nil
  }

  @Test("mutual TLS: the client identity presented, the server trusted through PEM text or a file, the answer read whole")
  func mutualTLS() async throws {
    let server = try Self.sessionServer()
    defer { server.shutdown() }
    var settings = try Self.settings(server)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("payservice-remote-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = try server.writeServerCA(to: directory)
    for roots in [settings.trustRoots, .file(file)] {
      settings.trustRoots = roots
      let transport = try HTTPRemoteTransport(settings)
      defer { transport.shutdown() }
      let response = try await transport.send(Self.post(server)).get()
      #expect(response.status == 200)
      #expect(response.header("content-type") == "application/json")
      guard case .object(let session) = try JSONParser.parse(response.body) else {
        Issue.record("not a JSON object")
        continue
      }
      #expect(session["domainName"] == .string("shop.example.com"))
    }
    #expect(server.requests.map(\.certificateMerchant) == [Self.merchant, Self.merchant])
    #expect(server.requests.map(\.contentType) == ["application/json", "application/json"])
    #expect(server.requests.map(\.body) == Array(repeating: String(decoding: Self.body, as: UTF8.self), count: 2))
  }

  @Test("a request under an idempotency key: 429 with Retry-After 1, then the same key again after a second, answered")
  func idempotentRetry() async throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    var settings = RemoteConnectionSettings(connectTimeoutSeconds: 2, requestTimeoutSeconds: 5)
    settings.trustRoots = .pem(server.caCertificatePEM)
    let transport = try HTTPRemoteTransport(settings)
    defer { transport.shutdown() }
    server.inject(.rateLimited(retryAfterSeconds: 1), on: .createCustomer)
    let request = RemoteRequest(
      method: .POST, url: server.baseURL + "/v1/customers",
      headers: [
        ("Authorization", "Bearer " + server.secretKey), ("Content-Type", "application/x-www-form-urlencoded"),
      ],
      body: Array(RemoteText.formEncoded([("metadata[order_id]", "order-1")]).utf8), idempotencyKey: "customer-key-1")
    let policy = RetryPolicy(maxRetries: 2, backoffSeconds: 5...5, maxDelaySeconds: 3)
    var delays: [Double] = []
    let started = ContinuousClock.now
    let outcome = await policy.run({ () -> RemoteAttempt<Int, Int> in
      guard case .success(let response) = await transport.send(request) else { return .done(0) }
      return response.status == 429 ? .retry(429, after: response.retryAfter()) : .done(response.status)
    }) { _, delay in delays.append(delay) }
    let elapsed = ContinuousClock.now - started
    guard case .done(200) = outcome else {
      Issue.record("\(outcome)")
      return
    }
    #expect(delays == [1])
    #expect(elapsed >= .milliseconds(950))
    let requests = server.requests
    #expect(requests.map(\.status) == [429, 200])
    #expect(requests.map(\.idempotencyKey) == ["customer-key-1", "customer-key-1"])
    #expect(requests.map(\.path) == ["/v1/customers", "/v1/customers"])
  }

  @Test("TLS failures: the server's CA not trusted, no client certificate where one is required")
  func tlsFailures() async throws {
    let server = try Self.sessionServer()
    defer { server.shutdown() }
    var untrusted = try Self.settings(server)
    untrusted.trustRoots = .system
    let system = try HTTPRemoteTransport(untrusted)
    defer { system.shutdown() }
    #expect(Self.failure(await system.send(Self.post(server))) == .tls(.serverNotVerified("certificate verify failed")))
    var anonymous = try Self.settings(server)
    anonymous.clientIdentity = nil
    let noIdentity = try HTTPRemoteTransport(anonymous)
    defer { noIdentity.shutdown() }
    let refused = Self.failure(await noIdentity.send(Self.post(server)))
    guard case .tls(.alert)? = refused else {
      Issue.record("not a TLS alert: \(String(describing: refused))")
      return
    }
    #expect(server.requests.isEmpty)
  }

  @Test("a hang is a request timeout, a reset a lost connection, a closed port a refusal, a shut-down transport sends nothing")
  func transportFailures() async throws {
    let server = try Self.sessionServer()
    defer { server.shutdown() }
    let transport = try HTTPRemoteTransport(try Self.settings(server, requestTimeout: 0.5))
    server.inject(.hang)
    #expect(Self.failure(await transport.send(Self.post(server))) == .requestTimeout)
    server.inject(.reset)
    let reset = try #require(Self.failure(await transport.send(Self.post(server))))
    #expect(reset.lostConnection, "\(reset)")
    transport.shutdown()
    transport.shutdown()
    #expect(Self.failure(await transport.send(Self.post(server))) == .shutDown)
    #expect(server.requests.count == 2)

    let settings = try Self.settings(server)
    let url = server.validationURL
    server.shutdown()
    let closed = try HTTPRemoteTransport(settings)
    defer { closed.shutdown() }
    let request = RemoteRequest(method: .POST, url: url, body: Self.body)
    #expect(Self.failure(await closed.send(request)) == .refused)
  }

  @Test("an answer larger than maximumAnswerBytes is a failure, not a partial answer")
  func answerTooLarge() async throws {
    let server = try Self.sessionServer()
    defer { server.shutdown() }
    var settings = try Self.settings(server)
    settings.maximumAnswerBytes = 64
    let transport = try HTTPRemoteTransport(settings)
    defer { transport.shutdown() }
    #expect(Self.failure(await transport.send(Self.post(server))) == .other(type: "NIOTooManyBytesError"))
  }

  @Test("settings that do not load: the setup error names the part, and quotes no PEM text")
  func setupErrors() async throws {
    var roots = RemoteConnectionSettings(connectTimeoutSeconds: 1, requestTimeoutSeconds: 1)
    roots.trustRoots = .pem("not a certificate")
    #expect(throws: RemoteSetupError.self) { _ = try HTTPRemoteTransport(roots) }
    do {
      _ = try HTTPRemoteTransport(roots)
    } catch {
      guard case .trustRoots = error else {
        Issue.record("\(error)")
        return
      }
    }
    let server = try Self.sessionServer()
    defer { server.shutdown() }
    let issued = try server.issueIdentity(merchantIdentifier: Self.merchant, key: .p256)
    let secretLine = "MHcCAQEEIEpT+eRC3V7MI/SUWQD0cLU30uAjUaqSirPtvKzR4jwKoAoGCCqGSM49"
    var identity = RemoteConnectionSettings(connectTimeoutSeconds: 1, requestTimeoutSeconds: 1)
    identity.clientIdentity = RemoteClientIdentity(
      certificateChainPEM: [issued.certificatePEM],
      keyPEM: "-----BEGIN EC PRIVATE KEY-----\n\(secretLine)\n-----END EC PRIVATE KEY-----\n")
    do {
      _ = try HTTPRemoteTransport(identity)
      Issue.record("a transport from a key cut short")
    } catch {
      guard case .clientIdentity = error else {
        Issue.record("\(error)")
        return
      }
      #expect(!"\(error)".contains(secretLine))
      #expect(!"\(error)".contains("BEGIN"))
    }
  }
}
