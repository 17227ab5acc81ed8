import Foundation
import PayServiceApplePay
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// The merchant session client against the Apple test server, over real mutual TLS: a session for
/// a registered domain, and each failure named for what the merchant has to fix.
@Suite("Apple merchant session client", .serialized)
struct AppleMerchantSessionClientTests {
  static let merchant = "merchant.com.example.shop"
  static let domain = "shop.example.com"
  /// 2026-11-21T12:00:00Z, the test server's clock.
  static let now: Int64 = 1_795_262_400

  static func server() throws -> AppleSessionTestServer {
    try AppleSessionTestServer(registrations: [merchant: [domain, "www.example.com"]], now: { now })
  }

  static func identity(
    _ server: AppleSessionTestServer, merchant: String = merchant, key: TestMerchantIdentity.KeyKind = .p256
  ) throws -> MerchantIdentity {
    let issued = try server.issueIdentity(merchantIdentifier: merchant, key: key)
    return try MerchantIdentity.load(certificatePEM: issued.certificatePEM, keyPEM: issued.keyPEM, merchantIdentifier: merchant)
  }

  static func client(
    _ identity: MerchantIdentity, trust: String?, requestTimeout: Double = 5
  ) throws -> AppleMerchantSessionClient {
    try AppleMerchantSessionClient(identity: identity, trustRootsPEM: trust, connectTimeoutSeconds: 5, requestTimeoutSeconds: requestTimeout)
  }

  static func body(merchant: String = merchant, domain: String = domain, displayName: String = "Example Shop", initiative: String = "web") -> [UInt8] {
    Array(
      #"{"merchantIdentifier":"\#(merchant)","displayName":"\#(displayName)","initiative":"\#(initiative)","initiativeContext":"\#(domain)"}"#
        .utf8)
  }

  static func endpoint(_ server: AppleSessionTestServer) throws -> MerchantSessionEndpoint {
    try MerchantSessionURLPolicy(additionalHosts: [server.additionalHost]).check(server.validationURL).get()
  }

  static func failure(_ reply: MerchantSessionReply) -> MerchantSessionFailure? {
    if case .failed(let failure) = reply { return failure }
    return nil
  }

  /// SHA-256 of `merchant.com.example.shop`, upper-case hex, as Apple names the merchant.
  static let merchantHash = "7DFD3B4C6FE42301180177E6613735AE531012535854B928E2EED53521996300"

  @Test("a session for a registered domain: Apple's object back exactly, deterministic")
  func session() async throws {
    let server = try Self.server()
    defer { server.shutdown() }
    let client = try Self.client(try Self.identity(server, key: .rsa2048), trust: server.serverCAPEM)
    defer { client.shutdown() }
    let reply = await client.startSession(try Self.endpoint(server), body: Self.body())
    guard case .session(let session) = reply else {
      Issue.record("no session: \(reply)")
      return
    }
    // Derived as the server documents: SHA-256 of "merchant\ndomain\n1" and the pinned clock.
    #expect(
      JSONWriter.string(session)
        == """
        {"epochTimestamp":1795262400000,"expiresAt":1795266000000,\
        "merchantSessionIdentifier":"SSH8D31AA494BCA3CAAC3F34DD9AFDDB019_A37BDC187C3502B7FBB682E643547C37A63A41F123AA44668E94BB97CFD24ADD",\
        "nonce":"a37bdc18","merchantIdentifier":"\(Self.merchantHash)","domainName":"shop.example.com","displayName":"Example Shop",\
        "signature":"308006092a864886f70d010702a0803080020101310d300b0609608648016503040201308006092a864886f70d0107010000a080\
        0f04db967afde980177f592e798dd000df6bbbf4a064a481f16addb092a4dde28aa066673aaa058c0599f0076cea9eb8e8b6c4ba5213528bf9c8e2372a76c9b4",\
        "operationalAnalyticsIdentifier":"Example Shop:\(Self.merchantHash)","retries":0,"pspId":"\(Self.merchantHash)"}
        """)
    #expect(server.sessionCount == 1)
    #expect(server.connectionsAccepted == 1)
    let request = try #require(server.requests.first)
    #expect(request.method == "POST")
    #expect(request.path == "/paymentservices/startSession")
    #expect(request.contentType == "application/json")
    #expect(request.certificateMerchant == Self.merchant)
    #expect(request.body == String(decoding: Self.body(), as: UTF8.self))
    #expect(request.status == 200)

    // Another server with the same registrations and clock issues the same first session.
    let twin = try Self.server()
    defer { twin.shutdown() }
    let twinClient = try Self.client(try Self.identity(twin), trust: twin.serverCAPEM)
    defer { twinClient.shutdown() }
    #expect(await twinClient.startSession(try Self.endpoint(twin), body: Self.body()) == reply)
    // The next session of the same server has other ids.
    let second = await client.startSession(try Self.endpoint(server), body: Self.body())
    guard case .session(let next) = second, case .object(let first) = session, case .object(let again) = next else {
      Issue.record("no second session: \(second)")
      return
    }
    #expect(again["merchantSessionIdentifier"] != first["merchantSessionIdentifier"])
    #expect(again["epochTimestamp"] == first["epochTimestamp"])
    #expect(server.sessionCount == 2)
  }

  @Test("an unregistered domain: domainNotRegistered with Apple's 400")
  func unregisteredDomain() async throws {
    let server = try Self.server()
    defer { server.shutdown() }
    let client = try Self.client(try Self.identity(server), trust: server.serverCAPEM)
    defer { client.shutdown() }
    let reply = await client.startSession(try Self.endpoint(server), body: Self.body(domain: "evil.example.net"))
    #expect(
      Self.failure(reply)
        == MerchantSessionFailure(
          code: .domainNotRegistered,
          message: """
            Apple answered 400: domain evil.example.net is not registered for merchant.com.example.shop (Apple: \
            "Payment Services Exception merchantId=\(Self.merchantHash) not registered for domain=evil.example.net"); \
            add and verify it under the merchant identifier's Merchant Domains in the Apple Developer account
            """,
          httpStatus: 400))
    #expect(server.sessionCount == 0)
  }

  @Test("an unknown merchant: merchantUnknown with Apple's 400")
  func unknownMerchant() async throws {
    let server = try Self.server()
    defer { server.shutdown() }
    let unknown = "merchant.com.example.unknown"
    let client = try Self.client(try Self.identity(server, merchant: unknown), trust: server.serverCAPEM)
    defer { client.shutdown() }
    let reply = await client.startSession(try Self.endpoint(server), body: Self.body(merchant: unknown))
    let failure = try #require(Self.failure(reply))
    #expect(failure.code == .merchantUnknown)
    #expect(failure.httpStatus == 400)
    #expect(
      failure.message.hasPrefix(
        "Apple answered 400: it does not know merchant.com.example.unknown as a merchant for this certificate (Apple: \"Payment Services Exception merchantId="
      ))
    #expect(
      failure.message.hasSuffix(
        "is not a registered merchant in WWDR and isn't properly authorized via Mass Enablement, either.\"\"); check merchantIdentifier and use the Merchant Identity Certificate Apple issued for it"
      ))
    #expect(server.sessionCount == 0)
  }

  @Test("a body that names another merchant than the certificate: merchantUnknown")
  func bodyForAnotherMerchant() async throws {
    let server = try AppleSessionTestServer(
      registrations: [Self.merchant: [Self.domain], "merchant.com.example.other": [Self.domain]], now: { Self.now })
    defer { server.shutdown() }
    let client = try Self.client(try Self.identity(server), trust: server.serverCAPEM)
    defer { client.shutdown() }
    let reply = await client.startSession(try Self.endpoint(server), body: Self.body(merchant: "merchant.com.example.other"))
    #expect(Self.failure(reply)?.code == .merchantUnknown)
  }

  @Test("a certificate from another CA: identityCertificateRejected by the TLS handshake")
  func certificateFromAnotherCA() async throws {
    let server = try Self.server()
    defer { server.shutdown() }
    let stranger = try TestMerchantIdentityAuthority(name: "not Apple")
    let issued = try stranger.issue(merchantIdentifier: Self.merchant, key: .p256)
    let identity = try MerchantIdentity.load(certificatePEM: issued.certificatePEM, keyPEM: issued.keyPEM, merchantIdentifier: Self.merchant)
    let client = try Self.client(identity, trust: server.serverCAPEM)
    defer { client.shutdown() }
    let reply = await client.startSession(try Self.endpoint(server), body: Self.body())
    let failure = try #require(Self.failure(reply), "\(reply)")
    #expect(failure.code == .identityCertificateRejected)
    #expect(failure.httpStatus == nil)
    #expect(
      failure.message
        == "localhost rejected the merchant identity certificate (TLS alert unknown_ca): use the Merchant Identity Certificate Apple issued for merchant.com.example.shop, with its own key"
    )
    #expect(!failure.message.contains("BEGIN"))
    #expect(server.sessionCount == 0)
    #expect(server.requests.isEmpty)
  }

  @Test("the server's CA not trusted (system roots, or another CA): serverNotTrusted")
  func serverNotTrusted() async throws {
    let server = try Self.server()
    defer { server.shutdown() }
    let identity = try Self.identity(server)
    let otherCA = try TestMerchantIdentityAuthority(name: "unrelated roots").caPEM
    for trust in [nil, otherCA] {
      let client = try Self.client(identity, trust: trust)
      defer { client.shutdown() }
      let reply = await client.startSession(try Self.endpoint(server), body: Self.body())
      #expect(
        Self.failure(reply)
          == MerchantSessionFailure(
            code: .serverNotTrusted,
            message: """
              the certificate of localhost did not verify (certificate verify failed): Apple's gateways chain to \
              public roots; check the trust roots configured and any TLS-intercepting proxy
              """), "\(reply)")
    }
    #expect(server.sessionCount == 0)
    #expect(server.requests.isEmpty)
  }

  @Test("a hang: timeout within the request timeout")
  func hang() async throws {
    let server = try Self.server()
    defer { server.shutdown() }
    let client = try Self.client(try Self.identity(server), trust: server.serverCAPEM, requestTimeout: 1)
    defer { client.shutdown() }
    server.inject(.hang)
    let started = ContinuousClock.now
    let reply = await client.startSession(try Self.endpoint(server), body: Self.body())
    let elapsed = ContinuousClock.now - started
    #expect(Self.failure(reply) == MerchantSessionFailure(code: .timeout, message: "localhost did not answer within 1 s"))
    // The server would hang until shut down, and the default request timeout is 10 s: ending before
    // 6 s shows the configured 1 s ended it, with room for a loaded CI machine's scheduling.
    #expect(elapsed >= .milliseconds(900))
    #expect(elapsed < .seconds(6))
    #expect(server.requests.map(\.status) == [0])
    #expect(server.sessionCount == 0)
    // The client gives the connection up (it is never reused for another session).
    let deadline = ContinuousClock.now + .seconds(2)
    while server.openConnections > 0, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(server.openConnections == 0)
  }

  @Test("a reset: unreachable, and nothing retried")
  func reset() async throws {
    let server = try Self.server()
    defer { server.shutdown() }
    let client = try Self.client(try Self.identity(server), trust: server.serverCAPEM)
    defer { client.shutdown() }
    server.inject(.reset)
    let reply = await client.startSession(try Self.endpoint(server), body: Self.body())
    let failure = try #require(Self.failure(reply))
    #expect(failure.code == .unreachable, "\(failure)")
    #expect(failure.httpStatus == nil)
    #expect(server.requests.count == 1)
    #expect(server.connectionsAccepted == 1)
    #expect(server.sessionCount == 0)
  }

  @Test("500 and 503: httpStatus, the status kept")
  func serverErrors() async throws {
    let server = try Self.server()
    defer { server.shutdown() }
    let client = try Self.client(try Self.identity(server), trust: server.serverCAPEM)
    defer { client.shutdown() }
    server.inject(.internalServerError)
    server.inject(.serviceUnavailable)
    let first = await client.startSession(try Self.endpoint(server), body: Self.body())
    #expect(
      Self.failure(first)
        == MerchantSessionFailure(
          code: .httpStatus,
          message: """
            localhost answered 500 (Apple: "Payment Services Exception Internal Server Error"); Apple's gateway \
            failed, the page may ask for a new session
            """, httpStatus: 500))
    let second = await client.startSession(try Self.endpoint(server), body: Self.body())
    #expect(Self.failure(second)?.code == .httpStatus)
    #expect(Self.failure(second)?.httpStatus == 503)
    #expect(server.requests.count == 2)
    #expect(server.sessionCount == 0)
  }

  @Test("a bad request and an unknown path: httpStatus with Apple's message")
  func badRequests() async throws {
    let server = try Self.server()
    defer { server.shutdown() }
    let client = try Self.client(try Self.identity(server), trust: server.serverCAPEM)
    defer { client.shutdown() }
    let endpoint = try Self.endpoint(server)
    let long = String(repeating: "x", count: 65)
    let cases: [([UInt8], String)] = [
      (Array("not json".utf8), "Invalid session request -- malformed JSON"),
      (Array(#"{"displayName":"Shop"}"#.utf8), "Invalid session request -- missing merchant identifier"),
      (Self.body(displayName: long), "Invalid session request -- display name longer than 64 characters"),
      (Self.body(displayName: ""), "Invalid session request -- missing display name"),
      (Self.body(initiative: "messaging"), "Invalid session request -- unsupported initiative messaging"),
    ]
    for (body, message) in cases {
      let reply = await client.startSession(endpoint, body: body)
      #expect(
        Self.failure(reply)
          == MerchantSessionFailure(code: .httpStatus, message: "localhost answered 400 (Apple: \"Payment Services Exception \(message)\")", httpStatus: 400))
    }
    let wrongPath = MerchantSessionEndpoint(host: endpoint.host, port: endpoint.port, path: "/paymentservices/other")
    #expect(
      Self.failure(await client.startSession(wrongPath, body: Self.body()))
        == MerchantSessionFailure(
          code: .httpStatus, message: "localhost answered 404; the validation URL's path is not a payment session endpoint",
          httpStatus: 404))
    let paymentSession = try MerchantSessionURLPolicy(additionalHosts: [server.additionalHost]).check(server.paymentSessionURL).get()
    if case .session = await client.startSession(paymentSession, body: Self.body(domain: "www.example.com")) {
    } else {
      Issue.record("no session from /paymentservices/paymentSession")
    }
    #expect(server.sessionCount == 1)
  }

  @Test("a 200 that is not a JSON object: invalidResponse")
  func invalidResponse() async throws {
    let server = try Self.server()
    defer { server.shutdown() }
    let client = try Self.client(try Self.identity(server), trust: server.serverCAPEM)
    defer { client.shutdown() }
    server.inject(.notJSON)
    let reply = await client.startSession(try Self.endpoint(server), body: Self.body())
    #expect(
      Self.failure(reply)
        == MerchantSessionFailure(
          code: .invalidResponse, message: "localhost answered 200 with something other than a JSON object; no merchant session",
          httpStatus: 200))
  }

  @Test("an expired identity: identityCertificateExpired without a connection")
  func expiredIdentity() async throws {
    let server = try Self.server()
    defer { server.shutdown() }
    let nowDate = Date()
    let issued = try server.identityAuthority.issue(
      merchantIdentifier: Self.merchant, notValidBefore: nowDate.addingTimeInterval(-400 * 86_400),
      notValidAfter: Date(timeIntervalSince1970: 1_767_225_600), key: .p256)
    let identity = try MerchantIdentity.load(certificatePEM: issued.certificatePEM, keyPEM: issued.keyPEM, merchantIdentifier: Self.merchant)
    let client = try Self.client(identity, trust: server.serverCAPEM)
    defer { client.shutdown() }
    let reply = await client.startSession(try Self.endpoint(server), body: Self.body())
    #expect(
      Self.failure(reply)
        == MerchantSessionFailure(
          code: .identityCertificateExpired,
          message: """
            the merchant identity certificate for merchant.com.example.shop expired at 2026-01-01T00:00:00Z; create a \
            new Merchant Identity Certificate for merchant.com.example.shop in the Apple Developer account and \
            configure it with its key
            """))
    #expect(server.connectionsAccepted == 0)
  }

  @Test("a refused validation URL makes no connection; the same server as an additional host does")
  func refusedURLNoConnection() async throws {
    let server = try Self.server()
    defer { server.shutdown() }
    let client = try Self.client(try Self.identity(server), trust: server.serverCAPEM)
    defer { client.shutdown() }
    /// What the caller does: check, and only then call.
    func validate(_ policy: MerchantSessionURLPolicy, _ url: String) async -> MerchantSessionReply? {
      guard case .success(let endpoint) = policy.check(url) else { return nil }
      return await client.startSession(endpoint, body: Self.body())
    }
    for url in [
      server.validationURL, "https://127.0.0.1:\(server.port)/paymentservices/startSession",
      "https://localhost:\(server.port)@apple-pay-gateway.apple.com/paymentservices/startSession",
      "https://localhost.:\(server.port)/paymentservices/startSession", "http://localhost:\(server.port)/paymentservices/startSession",
    ] {
      #expect(await validate(MerchantSessionURLPolicy(additionalHosts: []), url) == nil, "\(url)")
      #expect(await validate(MerchantSessionURLPolicy(additionalHosts: ["localhost"]), url) == nil, "\(url)")
    }
    #expect(server.connectionsAccepted == 0)
    let reply = await validate(MerchantSessionURLPolicy(additionalHosts: [server.additionalHost]), server.validationURL)
    if case .session? = reply {} else { Issue.record("no session: \(String(describing: reply))") }
    #expect(server.connectionsAccepted == 1)
  }

  @Test("a closed port: unreachable")
  func closedPort() async throws {
    let server = try Self.server()
    let identity = try Self.identity(server)
    let endpoint = try Self.endpoint(server)
    let trust = server.serverCAPEM
    server.shutdown()
    let client = try Self.client(identity, trust: trust)
    defer { client.shutdown() }
    let reply = await client.startSession(endpoint, body: Self.body())
    #expect(Self.failure(reply)?.code == .unreachable, "\(reply)")
  }
}
