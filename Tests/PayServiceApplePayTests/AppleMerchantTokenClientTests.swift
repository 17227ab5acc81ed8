import Foundation
import PayServiceTestSupport
import Testing

@testable import PayServiceApplePay
@testable import PayServiceCore

/// The merchant token client against the merchant token test server, over real mutual TLS: an
/// event's details, unlinks, and each failure as the reply the core acts on.
@Suite("Apple merchant token client", .serialized)
struct AppleMerchantTokenClientTests {
  static let merchant = "merchant.com.example.shop"
  static let other = "merchant.com.example.other"
  static let eventId = "9f1c2a64-1d3e-4b6a-9c1e-5a7b8c9d0e1f"
  static let token = "8A2F5C1E9B7D4A3F6E0C2B8D1A9F7E5C3B1D0A2F4E6C8B9D"

  static let card = [
    "cardCountry": "US", "expirationDate": "12/29", "fpanSuffix": "4242", "longDescription": "Visa Signature ••••4242",
    "shortDescription": "Visa ••••4242",
  ]

  static func client(_ server: MerchantTokenTestServer, merchant: String = merchant) throws -> AppleMerchantTokenClient
  {
    try AppleMerchantTokenClient(settings: try server.settings(merchantIdentifier: merchant))
  }

  static func eventPath(_ eventId: String, merchant: String = merchant) -> String {
    "/paymentservices/v1/merchantId/\(merchant)/merchantToken/event/\(eventId)"
  }

  static func unlinkPath(merchant: String = merchant) -> String {
    "/paymentservices/v1/merchantId/\(merchant)/merchantToken/unlink"
  }

  @Test("an event's details and card, exactly; one GET with Apple's headers")
  func event() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    server.addEvent(
      eventId: Self.eventId, eventType: "UNLINK", merchantTokenIdentifier: Self.token, reason: "USER", card: Self.card,
      merchantId: Self.merchant)
    server.addEvent(
      eventId: "evt-2", eventType: "CARD_METADATA_UPDATED", merchantTokenIdentifier: Self.token, reason: "ISSUER",
      merchantId: Self.merchant)
    let client = try Self.client(server)
    defer { client.shutdown() }

    let reply = await client.event(Self.eventId)
    #expect(
      reply
        == .event(
          MerchantTokenEventDetails(
            eventType: "UNLINK", merchantTokenIdentifier: Self.token, reason: "USER",
            card: MerchantTokenCard(
              cardCountry: "US", expirationDate: "12/29", fpanSuffix: "4242",
              longDescription: "Visa Signature ••••4242",
              shortDescription: "Visa ••••4242"))))
    guard case .event(let details) = reply else { return }
    #expect(details.endsToken)

    let second = await client.event("evt-2")
    #expect(
      second
        == .event(
          MerchantTokenEventDetails(
            eventType: "CARD_METADATA_UPDATED", merchantTokenIdentifier: Self.token, reason: "ISSUER", card: nil)))

    #expect(server.eventRequests(eventId: Self.eventId) == 1)
    #expect(server.eventRequests(eventId: "evt-2") == 1)
    let requests = server.requests
    #expect(requests.map(\.method) == ["GET", "GET"])
    #expect(requests.map(\.path) == [Self.eventPath(Self.eventId), Self.eventPath("evt-2")])
    #expect(requests.map(\.status) == [200, 200])
    #expect(requests.map(\.contentType) == ["application/json", "application/json"])
    #expect(requests.map(\.certificateMerchant) == [Self.merchant, Self.merchant])
    #expect(requests.map(\.body) == ["", ""])
  }

  @Test("an event the server does not know: notFound 400 with Apple's message quoted")
  func unknownEvent() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    // Another merchant's event is not this merchant's.
    server.addEvent(
      eventId: "evt-other", eventType: "UNLINK", merchantTokenIdentifier: Self.token, reason: "USER",
      merchantId: Self.other)
    let client = try Self.client(server)
    defer { client.shutdown() }
    for eventId in ["evt-unknown", "evt-other"] {
      #expect(
        await client.event(eventId)
          == .notFound(
            status: 400,
            reason: #"localhost answered 400 for event \#(eventId) (Apple: 40004 "Merchant token event not found")"#))
    }
    #expect(server.requests.map(\.status) == [400, 400])
  }

  @Test("500, 429 and a reset: unavailable, nothing retried; the next request is answered")
  func eventFaults() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    server.addEvent(
      eventId: Self.eventId, eventType: "UNLINK", merchantTokenIdentifier: Self.token, reason: "USER",
      merchantId: Self.merchant)
    let client = try Self.client(server)
    defer { client.shutdown() }
    server.inject(.serverError, route: .event)
    server.inject(.rateLimited, route: .event)
    server.inject(.reset, route: .event)
    #expect(
      await client.event(Self.eventId)
        == .unavailable(
          reason: #"localhost answered 500 for event \#(Self.eventId) (Apple: 50000 "Internal server error")"#))
    #expect(
      await client.event(Self.eventId)
        == .unavailable(
          reason: #"localhost answered 429 for event \#(Self.eventId) (Apple: 42900 "Too many requests")"#))
    let reset = await client.event(Self.eventId)
    guard case .unavailable(let reason) = reset else {
      Issue.record("a reset: \(reset)")
      return
    }
    #expect(
      [
        "localhost reset the connection", "localhost closed the connection before answering",
        "localhost closed the connection",
      ]
      .contains(reason), "\(reason)")
    #expect(server.eventRequests(eventId: Self.eventId) == 3)
    #expect(server.requests.map(\.status) == [500, 429, 0])
    guard case .event = await client.event(Self.eventId) else {
      Issue.record("no event after the faults")
      return
    }
    #expect(server.eventRequests(eventId: Self.eventId) == 4)
  }

  @Test("a 200 that is not a merchant token event: unavailable, naming what is wrong and quoting nothing of it")
  func malformedEvent() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    server.addEvent(
      eventId: "evt-slash", eventType: "UNLINK", merchantTokenIdentifier: "a/b", reason: "USER",
      merchantId: Self.merchant)
    server.addEvent(
      eventId: "evt-long", eventType: String(repeating: "X", count: 129), merchantTokenIdentifier: Self.token,
      reason: "USER", merchantId: Self.merchant)
    server.addEvent(
      eventId: "evt-empty", eventType: "UNLINK", merchantTokenIdentifier: Self.token, reason: "",
      merchantId: Self.merchant)
    let client = try Self.client(server)
    defer { client.shutdown() }
    let prefix = "localhost answered 200 with something other than a merchant token event"
    #expect(
      await client.event("evt-slash")
        == .unavailable(reason: "\(prefix) (merchantTokenIdentifier is not 1 to 128 letters, digits, '-' and '_')"))
    #expect(
      await client.event("evt-long")
        == .unavailable(reason: "\(prefix) (eventType is not 1 to 128 printable characters)"))
    #expect(
      await client.event("evt-empty") == .unavailable(reason: "\(prefix) (reason is not 1 to 128 printable characters)")
    )
    // Bodies the server never sends, read directly.
    let bodies: [(String, String)] = [
      ("<html>busy</html>", "not a JSON object"), ("[]", "not a JSON object"),
      (#"{"merchantTokenIdentifier":"t","reason":"USER"}"#, "no eventType string"),
      (#"{"eventType":"UNLINK","merchantTokenIdentifier":7,"reason":"USER"}"#, "no merchantTokenIdentifier string"),
      (
        #"{"eventType":"UNLINK","merchantTokenIdentifier":"t","reason":"a\u0000b"}"#,
        "reason is not 1 to 128 printable characters"
      ),
    ]
    for (body, problem) in bodies {
      guard case .failure(let found) = AppleMerchantTokenClient.details(Array(body.utf8)) else {
        Issue.record("read as an event: \(body)")
        continue
      }
      #expect(found.text == problem, "\(body)")
    }
    // A card that is not an object is no card; the event stands.
    let cardless = AppleMerchantTokenClient.details(
      Array(#"{"eventType":"UNLINK","merchantTokenIdentifier":"t","reason":"USER","merchantTokenMetadata":"x"}"#.utf8))
    #expect(
      (try? cardless.get())
        == MerchantTokenEventDetails(eventType: "UNLINK", merchantTokenIdentifier: "t", reason: "USER"))
  }

  @Test("an expired identity certificate: unavailable, nothing sent")
  func expiredIdentity() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    let now = Date()
    let issued = try server.identityAuthority.issue(
      merchantIdentifier: Self.merchant, notValidBefore: now.addingTimeInterval(-10 * 86_400),
      notValidAfter: now.addingTimeInterval(-86_400), key: .p256)
    let identity = try MerchantIdentity.load(
      certificatePEM: issued.certificatePEM, keyPEM: issued.keyPEM, merchantIdentifier: Self.merchant)
    let client = try AppleMerchantTokenClient(
      settings: MerchantTokenSettings(identity: identity, apiBase: server.baseURL, trustRootsPEM: server.trustRootsPEM))
    defer { client.shutdown() }
    guard case .unavailable(let reason) = await client.event(Self.eventId) else {
      Issue.record("sent with an expired certificate")
      return
    }
    #expect(reason.hasPrefix("not sent: the merchant identity certificate for merchant.com.example.shop expired at "))
    #expect(!reason.contains("BEGIN"))
    guard case .unavailable = await client.unlink(Self.token) else {
      Issue.record("unlink sent with an expired certificate")
      return
    }
    #expect(server.requests.isEmpty)
    #expect(server.connectionsAccepted == 0)
  }

  @Test("an event id that is not a plain identifier: notFound with status 0, and no request at all")
  func invalidEventIds() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    let client = try Self.client(server)
    defer { client.shutdown() }
    for eventId in ["../x", "a/b", "%2e", "", String(repeating: "a", count: 129), "a b", "évt", "a?b", "a#b", ".."] {
      #expect(
        await client.event(eventId)
          == .notFound(
            status: 0,
            reason: "not sent: the event id is not 1 to 128 letters, digits, '-' and '_', so Apple has no such event"),
        "\(eventId)")
    }
    #expect(server.requests.isEmpty)
    #expect(server.connectionsAccepted == 0)
    // 128 characters is an id, sent (and unknown here).
    let longest = String(repeating: "a", count: 128)
    guard case .notFound(400, _) = await client.event(longest) else {
      Issue.record("128 characters not sent")
      return
    }
    #expect(server.requests.map(\.path) == [Self.eventPath(longest)])
  }

  @Test("a certificate from another CA: the handshake refuses it, unavailable, nothing reaches the API")
  func certificateFromAnotherCA() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    let stranger = try TestMerchantIdentityAuthority(name: "not Apple").issue(
      merchantIdentifier: Self.merchant, key: .p256)
    let identity = try MerchantIdentity.load(
      certificatePEM: stranger.certificatePEM, keyPEM: stranger.keyPEM, merchantIdentifier: Self.merchant)
    let client = try AppleMerchantTokenClient(
      settings: MerchantTokenSettings(identity: identity, apiBase: server.baseURL, trustRootsPEM: server.trustRootsPEM))
    defer { client.shutdown() }
    let refused = """
      localhost refused the merchant identity certificate (TLS alert unknown_ca): use the Merchant Identity \
      Certificate Apple issued for merchant.com.example.shop, with its own key
      """
    let reply = await client.event(Self.eventId)
    #expect(reply == .unavailable(reason: refused), "\(reply)")
    #expect(await client.unlink(Self.token) == .unavailable(reason: refused))
    #expect(server.requests.isEmpty)
    #expect(server.connectionsAccepted >= 1)
  }

  @Test("another merchant's certificate for this merchant's path: 400 from the API, notFound and refused")
  func anotherMerchantsCertificate() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    server.addEvent(
      eventId: Self.eventId, eventType: "UNLINK", merchantTokenIdentifier: Self.token, reason: "USER",
      merchantId: Self.merchant)
    server.addToken(Self.token, merchantId: Self.merchant)
    // A configuration naming this merchant with the other merchant's certificate.
    let otherIdentity = try server.merchantIdentity(Self.other)
    let crossed = MerchantIdentity(
      merchantIdentifier: Self.merchant, certificate: otherIdentity.certificate,
      certificateChainPEM: otherIdentity.certificateChainPEM, keyPEM: otherIdentity.keyPEM,
      notValidBefore: otherIdentity.notValidBefore, notValidAfter: otherIdentity.notValidAfter)
    let client = try AppleMerchantTokenClient(
      settings: MerchantTokenSettings(identity: crossed, apiBase: server.baseURL, trustRootsPEM: server.trustRootsPEM))
    defer { client.shutdown() }
    let message = #"(Apple: 40003 "Merchant identifier does not match the merchant identity certificate")"#
    #expect(
      await client.event(Self.eventId)
        == .notFound(status: 400, reason: "localhost answered 400 for event \(Self.eventId) \(message)"))
    #expect(
      await client.unlink(Self.token)
        == .refused(status: 400, reason: "localhost answered 400 to the unlink \(message)"))
    #expect(server.requests.map(\.certificateMerchant) == [Self.other, Self.other])
    #expect(server.unlinkCount(token: Self.token) == 0)

    // The other merchant with its own certificate: the event and the token are not its own.
    let otherClient = try Self.client(server, merchant: Self.other)
    defer { otherClient.shutdown() }
    guard case .notFound(400, _) = await otherClient.event(Self.eventId) else {
      Issue.record("another merchant saw the event")
      return
    }
    guard case .refused(400, _) = await otherClient.unlink(Self.token) else {
      Issue.record("another merchant unlinked the token")
      return
    }
    #expect(server.unlinkCount(token: Self.token) == 0)
    #expect(!server.isUnlinked(Self.token, merchantId: Self.merchant))
  }

  @Test("unlink: 204 is unlinked, sent twice it is counted once; the body is Apple's")
  func unlink() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    server.addToken(Self.token, merchantId: Self.merchant)
    let client = try Self.client(server)
    defer { client.shutdown() }
    #expect(await client.unlink(Self.token) == .unlinked)
    #expect(await client.unlink(Self.token) == .unlinked)
    #expect(server.unlinkCount(token: Self.token) == 1)
    #expect(server.isUnlinked(Self.token, merchantId: Self.merchant))
    let requests = server.requests
    #expect(requests.map(\.method) == ["POST", "POST"])
    #expect(requests.map(\.path) == [Self.unlinkPath(), Self.unlinkPath()])
    #expect(requests.map(\.status) == [204, 204])
    #expect(requests.map(\.contentType) == ["application/json", "application/json"])
    #expect(requests.map(\.body) == Array(repeating: #"{"merchantTokenIdentifier":"\#(Self.token)"}"#, count: 2))
  }

  @Test("unlink of a token the merchant does not have: refused 400 with Apple's message")
  func unlinkUnknown() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    server.addToken("tok-of-other", merchantId: Self.other)
    let client = try Self.client(server)
    defer { client.shutdown() }
    for token in ["tok-unknown", "tok-of-other"] {
      #expect(
        await client.unlink(token)
          == .refused(
            status: 400,
            reason: #"localhost answered 400 to the unlink (Apple: 40005 "Merchant token not found for this merchant")"#
          ))
    }
    #expect(server.unlinkCount(token: "tok-of-other") == 0)
  }

  @Test("unlink of a token that is not a plain identifier: refused with status 0, no request")
  func unlinkInvalid() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    let client = try Self.client(server)
    defer { client.shutdown() }
    for token in ["", "a\"b", "a b", String(repeating: "F", count: 129), "x/y"] {
      #expect(
        await client.unlink(token)
          == .refused(
            status: 0, reason: "not sent: the merchant token identifier is not 1 to 128 letters, digits, '-' and '_'"))
    }
    #expect(server.requests.isEmpty)
    #expect(server.connectionsAccepted == 0)
  }

  @Test("unlink faults: 500, 429 and a reset are unavailable; a lost answer is unavailable though Apple unlinked")
  func unlinkFaults() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    server.addToken(Self.token, merchantId: Self.merchant)
    var settings = try server.settings(merchantIdentifier: Self.merchant)
    settings.requestTimeoutSeconds = 1
    let client = try AppleMerchantTokenClient(settings: settings)
    defer { client.shutdown() }
    server.inject(.serverError, route: .unlink)
    server.inject(.rateLimited, route: .unlink)
    server.inject(.reset, route: .unlink)
    #expect(
      await client.unlink(Self.token)
        == .unavailable(reason: #"localhost answered 500 to the unlink (Apple: 50000 "Internal server error")"#))
    #expect(
      await client.unlink(Self.token)
        == .unavailable(reason: #"localhost answered 429 to the unlink (Apple: 42900 "Too many requests")"#))
    guard case .unavailable = await client.unlink(Self.token) else {
      Issue.record("a reset was not unavailable")
      return
    }
    #expect(server.unlinkCount(token: Self.token) == 0)

    // The answer is held past the client's timeout: the unlink happened, the client cannot know.
    let gate = MerchantTokenTestServer.Gate()
    server.inject(.holdBeforeAnswer(gate), route: .unlink)
    #expect(await client.unlink(Self.token) == .unavailable(reason: "localhost did not answer within 1 s"))
    #expect(gate.reached)
    #expect(server.unlinkCount(token: Self.token) == 1)
    gate.release()
    // Sent again (the journal's resend): unlinked, still counted once.
    #expect(await client.unlink(Self.token) == .unlinked)
    #expect(server.unlinkCount(token: Self.token) == 1)
    #expect(server.requests.map(\.status) == [500, 429, 0, 204, 204])
  }

  @Test("a held event answer comes when the gate opens")
  func heldEvent() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    server.addEvent(
      eventId: Self.eventId, eventType: "UNLINK", merchantTokenIdentifier: Self.token, reason: "USER",
      merchantId: Self.merchant)
    let client = try Self.client(server)
    defer { client.shutdown() }
    let gate = MerchantTokenTestServer.Gate()
    server.inject(.holdBeforeAnswer(gate), route: .event)
    async let reply = client.event(Self.eventId)
    #expect(await gate.waitUntilReachedAsync(timeout: 5))
    gate.release()
    guard case .event(let details) = await reply else {
      Issue.record("no event after the gate")
      return
    }
    #expect(details.merchantTokenIdentifier == Self.token)
  }

  @Test("x-request-id: present on every request, a distinct UUID each")
  func requestIds() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    server.addEvent(
      eventId: Self.eventId, eventType: "UNLINK", merchantTokenIdentifier: Self.token, reason: "USER",
      merchantId: Self.merchant)
    server.addToken(Self.token, merchantId: Self.merchant)
    let client = try Self.client(server)
    defer { client.shutdown() }
    _ = await client.event(Self.eventId)
    _ = await client.event(Self.eventId)
    _ = await client.event("evt-unknown")
    _ = await client.unlink(Self.token)
    _ = await client.unlink(Self.token)
    let ids = server.requests.compactMap(\.requestId)
    #expect(ids.count == 5)
    #expect(Set(ids).count == 5)
    #expect(ids.allSatisfy { UUID(uuidString: $0) != nil }, "\(ids)")
  }

  @Test("after shutdown nothing is sent: unavailable")
  func shutdown() async throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    let client = try Self.client(server)
    client.shutdown()
    client.shutdown()
    #expect(
      await client.event(Self.eventId) == .unavailable(reason: "not sent: the merchant token client is shut down"))
    #expect(await client.unlink(Self.token) == .unavailable(reason: "not sent: the merchant token client is shut down"))
    #expect(server.requests.isEmpty)
  }

  @Test("an apiBase that is not an https URL of a host alone is refused at setup")
  func apiBase() throws {
    let server = try MerchantTokenTestServer()
    defer { server.shutdown() }
    let identity = try server.merchantIdentity(Self.merchant)
    for base in ["http://localhost:1", "https://", "https://host/path", "https://host?x=1", "ftp://host", "localhost"] {
      #expect(throws: MerchantTokenAPIBaseError(apiBase: base), "\(base)") {
        try AppleMerchantTokenClient(settings: MerchantTokenSettings(identity: identity, apiBase: base))
      }
    }
    let client = try AppleMerchantTokenClient(
      settings: MerchantTokenSettings(identity: identity, apiBase: server.baseURL + "/"))
    client.shutdown()
  }
}
