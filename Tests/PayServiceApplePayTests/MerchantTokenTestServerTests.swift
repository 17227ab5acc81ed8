import Foundation
import PayServiceApplePay
import PayServiceCore
import PayServiceRemote
import PayServiceTestSupport
import Testing

/// The merchant token test server itself, spoken to without the client where the client would not
/// send such a request: mutual TLS, the routes, the required headers, its exact bodies, and the
/// `merchant-token-test-server` process.
@Suite("Merchant token test server", .serialized)
struct MerchantTokenTestServerTests {
  typealias Client = AppleMerchantTokenClientTests
  static let headers = [("Content-Type", "application/json"), ("x-request-id", "5C0A1A48-8A3B-4F55-9B0E-6B8E9E2D7C11")]

  /// One request over a transport of its own; `identity` nil: no client certificate.
  static func send(
    _ server: MerchantTokenTestServer, identity: MerchantIdentity?, _ method: RemoteRequest.Method, _ path: String,
    headers: [(String, String)] = headers, body: String? = nil
  ) async throws -> Result<RemoteResponse, RemoteFailure> {
    var connection = RemoteConnectionSettings(connectTimeoutSeconds: 5, requestTimeoutSeconds: 5)
    connection.trustRoots = .pem(server.trustRootsPEM)
    if let identity {
      connection.clientIdentity = RemoteClientIdentity(
        certificateChainPEM: identity.certificateChainPEM, keyPEM: identity.keyPEM)
    }
    let transport = try HTTPRemoteTransport(connection)
    defer { transport.shutdown() }
    return await transport.send(
      RemoteRequest(
        method: method, url: server.baseURL + path, headers: headers.map { (name: $0.0, value: $0.1) },
        body: body.map { Array($0.utf8) }))
  }

  /// The status and the body as text, or the failure in words.
  static func answer(_ result: Result<RemoteResponse, RemoteFailure>) -> String {
    switch result {
    case .success(let response): return "\(response.status) \(String(decoding: response.body, as: UTF8.self))"
    case .failure(let failure): return "failed: \(failure)"
    }
  }

  static func error(_ status: Int, _ subStatus: String, _ message: String) -> String {
    #"\#(status) {"statusCode":"\#(status)","subStatusCode":"\#(subStatus)","errorMessage":"\#(message)"}"#
  }

  @Test("no client certificate: the TLS handshake is refused and no request is read")
  func noClientCertificate() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    server.addEvent(
      eventId: Client.eventId, eventType: "UNLINK", merchantTokenIdentifier: Client.token, reason: "USER",
      merchantId: Client.merchant)
    let result = try await Self.send(server, identity: nil, .GET, Client.eventPath(Client.eventId))
    guard case .failure(let failure) = result else {
      Issue.record("answered without a client certificate: \(Self.answer(result))")
      return
    }
    #expect(
      failure == .tls(.alert("certificate_required")) || failure == .tls(.alert("handshake_failure")), "\(failure)")
    #expect(server.requests.isEmpty)
    #expect(server.eventRequests(eventId: Client.eventId) == 0)
    #expect(server.connectionsAccepted == 1)
  }

  @Test("the event's body exactly as Apple shapes it; 204 with no body for an unlink")
  func bodies() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    server.addEvent(
      eventId: Client.eventId, eventType: "UNLINK", merchantTokenIdentifier: Client.token, reason: "USER",
      card: ["fpanSuffix": "4242", "cardCountry": "US"], merchantId: Client.merchant)
    server.addToken(Client.token, merchantId: Client.merchant)
    let identity = try server.merchantIdentity(Client.merchant)
    let event = try await Self.send(server, identity: identity, .GET, Client.eventPath(Client.eventId))
    #expect(
      Self.answer(event)
        == #"200 {"eventType":"UNLINK","merchantTokenIdentifier":"\#(Client.token)","reason":"USER","merchantTokenMetadata":{"cardMetadata":{"cardCountry":"US","fpanSuffix":"4242"}}}"#
    )
    #expect((try? event.get())?.header("Content-Type") == "application/json")
    let unlink = try await Self.send(
      server, identity: identity, .POST, Client.unlinkPath(), body: #"{"merchantTokenIdentifier":"\#(Client.token)"}"#)
    #expect(Self.answer(unlink) == "204 ")
    #expect(server.unlinkCount(token: Client.token) == 1)
    // The merchant in the path percent-encoded is the same merchant.
    let encoded = try await Self.send(
      server, identity: identity, .GET, Client.eventPath(Client.eventId, merchant: "merchant%2Ecom.example.shop"))
    #expect((try? encoded.get())?.status == 200)
  }

  @Test("x-request-id and Content-Type: application/json are required on both routes")
  func requiredHeaders() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    server.addEvent(
      eventId: Client.eventId, eventType: "UNLINK", merchantTokenIdentifier: Client.token, reason: "USER",
      merchantId: Client.merchant)
    server.addToken(Client.token, merchantId: Client.merchant)
    let identity = try server.merchantIdentity(Client.merchant)
    let noId = Self.error(400, "40001", "Missing required header x-request-id")
    let badType = Self.error(400, "40002", "Content-Type must be application/json")
    let id = ("x-request-id", "5C0A1A48-8A3B-4F55-9B0E-6B8E9E2D7C11")
    let body = #"{"merchantTokenIdentifier":"\#(Client.token)"}"#
    let cases: [([(String, String)], String)] = [
      ([("Content-Type", "application/json")], noId),
      ([("Content-Type", "application/json"), ("x-request-id", " ")], noId),
      ([id], badType), ([id, ("Content-Type", "text/plain")], badType),
    ]
    for (headers, expected) in cases {
      let event = try await Self.send(
        server, identity: identity, .GET, Client.eventPath(Client.eventId), headers: headers)
      #expect(Self.answer(event) == expected, "\(headers)")
      let unlink = try await Self.send(
        server, identity: identity, .POST, Client.unlinkPath(), headers: headers, body: body)
      #expect(Self.answer(unlink) == expected, "\(headers)")
    }
    #expect(server.unlinkCount(token: Client.token) == 0)
    let charset = try await Self.send(
      server, identity: identity, .GET, Client.eventPath(Client.eventId),
      headers: [id, ("Content-Type", "application/json; charset=utf-8")])
    #expect((try? charset.get())?.status == 200)
    // A blank id may reach the server trimmed; either way it is no id.
    #expect(
      server.requests.map { $0.requestId?.trimmingCharacters(in: .whitespaces) }
        == [nil, nil, "", ""] + Array(repeating: id.1, count: 5))
  }

  @Test("only the two routes: other paths and methods are 404")
  func routes() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    let identity = try server.merchantIdentity(Client.merchant)
    let notFound = Self.error(404, "40400", "Resource not found")
    let base = "/paymentservices/v1/merchantId/\(Client.merchant)/merchantToken"
    let cases: [(RemoteRequest.Method, String)] = [
      (.GET, base + "/unlink"), (.POST, base + "/event/\(Client.eventId)"), (.GET, base + "/event"),
      (.GET, base + "/event/"), (.GET, base + "/event/a/b"), (.POST, "/paymentservices/startSession"),
      (.GET, "/paymentservices/v2/merchantId/\(Client.merchant)/merchantToken/event/e1"), (.DELETE, base + "/unlink"),
    ]
    for (method, path) in cases {
      let result = try await Self.send(server, identity: identity, method, path, body: method == .POST ? "{}" : nil)
      #expect(Self.answer(result) == notFound, "\(method) \(path)")
    }
    #expect(server.requests.count == cases.count)
  }

  @Test("the path's merchant must be the certificate's; the unlink body must name a token")
  func merchantAndBody() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    server.addToken(Client.token, merchantId: Client.merchant)
    let other = try server.merchantIdentity(Client.other)
    let mismatch = Self.error(400, "40003", "Merchant identifier does not match the merchant identity certificate")
    let event = try await Self.send(server, identity: other, .GET, Client.eventPath(Client.eventId))
    #expect(Self.answer(event) == mismatch)
    let unlink = try await Self.send(
      server, identity: other, .POST, Client.unlinkPath(), body: #"{"merchantTokenIdentifier":"\#(Client.token)"}"#)
    #expect(Self.answer(unlink) == mismatch)
    #expect(server.unlinkCount(token: Client.token) == 0)

    let own = try server.merchantIdentity(Client.merchant)
    let malformed = Self.error(400, "40006", "Invalid request body: merchantTokenIdentifier is required")
    for body in ["{}", "not json", #"{"merchantTokenIdentifier":5}"#, #"{"merchantTokenIdentifier":""}"#, "[]"] {
      let result = try await Self.send(server, identity: own, .POST, Client.unlinkPath(), body: body)
      #expect(Self.answer(result) == malformed, "\(body)")
    }
    #expect(server.unlinkCount(token: Client.token) == 0)
  }

  static var executable: String? {
    var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    while directory.path != "/" {
      let candidate = directory.appendingPathComponent("merchant-token-test-server").path
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
      directory = directory.deletingLastPathComponent()
    }
    return nil
  }

  @Test("the process: one JSON line with the files, seeded events and tokens, commands on stdin, gone at EOF")
  func process() async throws {
    let binary = try #require(Self.executable, "merchant-token-test-server is not built next to the tests")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("merchant-token-seed-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let seed = directory.appendingPathComponent("seed.json")
    try #"""
    {"tokens":["tok-seeded"],"events":[{"eventId":"evt-card","eventType":"CARD_METADATA_UPDATED",
    "merchantTokenIdentifier":"tok-seeded","reason":"ISSUER","card":{"fpanSuffix":"1881","cardCountry":"DE"}}]}
    """#.write(to: seed, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = [
      "--merchant", Client.merchant, "--token", Client.token, "--event", "evt-1,UNLINK,\(Client.token),USER, by hand",
      "--seed", seed.path,
    ]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    defer { if process.isRunning { process.terminate() } }
    let read = output.fileHandleForReading
    let announcement = try JSONParser.parse(AppleSessionTestServerTests.line(read))
    guard case .object(let fields) = announcement, case .string(let baseURL)? = fields["baseURL"],
      case .string(let trustRoots)? = fields["trustRoots"],
      case .string(let certificate)? = fields["identityCertificate"],
      case .string(let key)? = fields["identityKey"]
    else {
      Issue.record("announcement: \(announcement)")
      return
    }
    #expect(fields.keys == ["baseURL", "merchantIdentifier", "trustRoots", "identityCertificate", "identityKey"])
    #expect(fields["merchantIdentifier"] == .string(Client.merchant))
    let identity = try MerchantIdentity.load(
      certificatePEM: try String(contentsOfFile: certificate, encoding: .utf8),
      keyPEM: try String(contentsOfFile: key, encoding: .utf8), merchantIdentifier: Client.merchant)
    let client = try AppleMerchantTokenClient(
      settings: MerchantTokenSettings(
        identity: identity, apiBase: baseURL, trustRootsPEM: try String(contentsOfFile: trustRoots, encoding: .utf8)))
    defer { client.shutdown() }

    #expect(
      await client.event("evt-1")
        == .event(
          MerchantTokenEventDetails(eventType: "UNLINK", merchantTokenIdentifier: Client.token, reason: "USER, by hand")
        ))
    #expect(
      await client.event("evt-card")
        == .event(
          MerchantTokenEventDetails(
            eventType: "CARD_METADATA_UPDATED", merchantTokenIdentifier: "tok-seeded", reason: "ISSUER",
            card: MerchantTokenCard(cardCountry: "DE", fpanSuffix: "1881"))))
    #expect(await client.unlink("tok-seeded") == .unlinked)
    #expect(await client.unlink(Client.token) == .unlinked)

    let write = input.fileHandleForWriting
    write.write(Data("fault event 500\n".utf8))
    #expect(AppleSessionTestServerTests.line(read) == #"{"ok":true}"#)
    write.write(Data("fault event 418\n".utf8))
    #expect(AppleSessionTestServerTests.line(read) == #"{"error":"expected fault event|unlink 500|429|reset"}"#)
    guard case .unavailable = await client.event("evt-1") else {
      Issue.record("the injected 500 was not unavailable")
      return
    }
    write.write(Data("events evt-1\n".utf8))
    #expect(AppleSessionTestServerTests.line(read) == #"{"requests":2}"#)
    write.write(Data("unlinks tok-seeded\n".utf8))
    #expect(AppleSessionTestServerTests.line(read) == #"{"unlinks":1}"#)
    write.write(Data("requests\n".utf8))
    var lines: [String] = []
    while true {
      let line = AppleSessionTestServerTests.line(read)
      if line == #"{"end":true}"# || line.isEmpty { break }
      lines.append(line)
    }
    #expect(lines.count == 5)
    #expect(lines.first?.hasPrefix(#"{"method":"GET","path":"\#(Client.eventPath("evt-1"))","requestId":""#) == true)
    #expect(lines.last?.hasSuffix(#","status":500}"#) == true)

    try write.close()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(!FileManager.default.fileExists(atPath: certificate))
  }
}
