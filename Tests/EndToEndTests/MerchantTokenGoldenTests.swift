import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Apple Pay merchant tokens through the built binary, byte for byte: four subscriptions paid with
/// EC_v1 tokens that carry merchant tokens; Apple unlinks the first (its notification from three
/// processes at once, then twice more); a forged event id, one that is no identifier, and an event
/// while Apple's API answers 500; the fourth token unlinked before its agreement was made; the
/// merchant cancels the second (exactly one unlink reaches Apple); and the next billing run
/// charges the third alone, ending the fourth uncharged.
///
/// Three steps, each a process at its own `--now` (`stepped` in the folder); `responses.jsonl`
/// holds their answers in order. Re-record with
/// `PAYSERVICE_RECORD_GOLDEN=1 swift test --filter MerchantTokenGoldenTests`.
@Suite("Merchant token golden transcript")
struct MerchantTokenGoldenTests {
  static let folder = GoldenTranscriptTests.goldenRoot.appendingPathComponent("merchant-tokens")
  static let merchant = "merchant.com.example.coffee"
  static let checkoutAt = "2026-12-01T10:00:00Z"
  static let notifiedAt = "2026-12-01T10:10:00Z"
  static let billedAt = "2027-01-02T00:00:00Z"

  /// The card Apple describes for token A in the decrypted payment data (`merchantTokenMetadata`).
  static let cardAMetadata = """
    {"cardArt":"https://example.com/art.png","cardMetadata":{"cardCountry":"US","expirationDate":"12/29",\
    "fpanSuffix":"4242","longDescription":"Visa Signature ending in 4242","shortDescription":"Visa 4242"}}
    """

  /// The test server with the events Apple would keep: A's and D's unlinks, C's new card.
  static func server() throws -> MerchantTokenTestServer {
    let server = try MerchantTokenTestServer()
    server.addEvent(
      eventId: "evt-unlink-a", eventType: "UNLINK", merchantTokenIdentifier: "MTOKEN-A-0001", reason: "user",
      merchantId: merchant)
    server.addEvent(
      eventId: "evt-update-c", eventType: "METADATA_UPDATE", merchantTokenIdentifier: "MTOKEN-C-0003", reason: "issuer",
      card: ["cardCountry": "US", "expirationDate": "09/31", "fpanSuffix": "8888", "shortDescription": "Visa 8888"],
      merchantId: merchant)
    server.addEvent(
      eventId: "evt-unlink-d", eventType: "UNLINK", merchantTokenIdentifier: "MTOKEN-D-0004", reason: "issuer",
      merchantId: merchant)
    for token in ["MTOKEN-A-0001", "MTOKEN-B-0002", "MTOKEN-C-0003", "MTOKEN-D-0004"] {
      server.addToken(token, merchantId: merchant)
    }
    return server
  }

  /// The config (processing certificate of `factory`, a merchant identity the server accepts,
  /// the server as Apple's API) and the values the request templates take.
  static func setUp(_ server: MerchantTokenTestServer, factory: TestTokenFactory, in directory: URL) throws
    -> (config: URL, values: [String: String])
  {
    let identity = try server.identityAuthority.issue(
      merchantIdentifier: merchant, now: Date(timeIntervalSince1970: TimeInterval(RFC3339.parse(checkoutAt)!)), days: 3650)
    let files = try identity.write(to: directory)
    let config = directory.appendingPathComponent("config.yaml")
    try WebCheckoutGoldenTests.fill(
      try String(contentsOf: folder.appendingPathComponent("config.template.yaml"), encoding: .utf8),
      [
        "PROCESSING": try factory.writeCredentials(to: directory), "IDENTITY_CERTIFICATE": files.certificate,
        "IDENTITY_KEY": files.key, "API_BASE": server.baseURL, "API_ROOTS": try server.writeTrustRoots(to: directory),
      ]
    ).write(to: config, atomically: true, encoding: .utf8)
    let signed = RFC3339.parse(checkoutAt)! - 30
    var values: [String: String] = [:]
    for (index, name) in ["A", "B", "C", "D"].enumerated() {
      var payment = TestTokenFactory.Payment()
      payment.transactionAmount = 1080
      payment.expiration = "301231"
      payment.merchantTokenIdentifier = "MTOKEN-\(name)-000\(index + 1)"
      if name == "A" {
        payment.merchantTokenMetadata = cardAMetadata
      }
      let token = try factory.token(payment, signingTime: signed, transactionId: Array(repeating: UInt8(index + 1), count: 32))
      values["TOKEN_\(name)"] = JSONWriter.string(token)
    }
    return (config, values)
  }

  static func run(_ step: String, config: URL, database: String, now: String, values: [String: String]) throws
    -> ProcessResult
  {
    let template = try String(contentsOf: folder.appendingPathComponent(step), encoding: .utf8)
    return try PayserviceProcess.run(
      ["--config", config.path, "--database", database, "--now", now, "--back-office"],
      stdin: Data(WebCheckoutGoldenTests.fill(template, values).utf8))
  }

  @Test("subscribe with merchant tokens; Apple unlinks one (from three processes at once, then twice); the merchant cancels another; billing charges the rest", arguments: StoreBackend.available)
  func transcript(backend: StoreBackend) throws {
    let server = try Self.server()
    defer { server.shutdown() }
    let directory = TestPaths.temporaryDirectory()
    let factory = try TestTokenFactory(merchantIdentifier: Self.merchant)
    let (config, values) = try Self.setUp(server, factory: factory, in: directory)
    let database = try backend.freshDatabase()
    var output = Data()

    let checkout = try Self.run("1-checkout.jsonl", config: config, database: database, now: Self.checkoutAt, values: values)
    #expect(checkout.status == 0, "stderr: \(checkout.stderr)")
    output += checkout.stdout

    // Apple's notification of A's unlink, from three processes at once: each answers the same
    // bytes, and the agreement is changed once.
    let line = #"{"jsonrpc":"2.0","id":"unlink-a","method":"processMerchantTokenNotification","params":{"eventId":"evt-unlink-a"}}"#
    let arguments = ["--config", config.path, "--database", database, "--now", Self.notifiedAt, "--back-office"]
    let processes = try (0..<3).map { _ in try RunningPayservice(arguments) }
    for process in processes { process.send(line) }
    let answers = try processes.map { try #require($0.readLine(timeout: 60)) }
    for process in processes {
      process.finish()
      #expect(process.waitForExit(timeout: 60) == 0)
    }
    #expect(Set(answers).count == 1, "\(answers)")
    output += Data((answers[0] + "\n").utf8)
    #expect((1...3).contains(server.eventRequests(eventId: "evt-unlink-a")))

    // Apple's API answers 500 to the first fetch of C's event.
    server.inject(.serverError, route: .event)
    let notified = try Self.run(
      "2-notifications.jsonl", config: config, database: database, now: Self.notifiedAt, values: values)
    #expect(notified.status == 0, "stderr: \(notified.stderr)")
    output += notified.stdout

    let billed = try Self.run("3-billing.jsonl", config: config, database: database, now: Self.billedAt, values: values)
    #expect(billed.status == 0, "stderr: \(billed.stderr)")
    output += billed.stdout

    // Exactly one unlink reached Apple: B's, when the merchant cancelled it. A and D were unlinked
    // by Apple, C still charges. No event id that is not an identifier reached the server.
    let unlinks = server.requests.filter { $0.path.hasSuffix("/merchantToken/unlink") }
    #expect(unlinks.count == 1)
    #expect(unlinks.first?.body == #"{"merchantTokenIdentifier":"MTOKEN-B-0002"}"#)
    #expect(server.unlinkCount(token: "MTOKEN-B-0002") == 1)
    #expect(server.requests.allSatisfy { !$0.path.contains("..") && !$0.path.contains("%") })
    #expect(server.eventRequests(eventId: "evt-forged-0001") == 1)
    #expect(server.eventRequests(eventId: "evt-update-c") == 2)
    #expect(server.requests.allSatisfy { $0.certificateMerchant == Self.merchant })

    let goldenURL = Self.folder.appendingPathComponent("responses.jsonl")
    if ProcessInfo.processInfo.environment["PAYSERVICE_RECORD_GOLDEN"] == "1" {
      if backend == .sqlite { try output.write(to: goldenURL) }
      return
    }
    let golden = try String(contentsOf: goldenURL, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
    let got = String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    #expect(got.count == golden.count)
    for (index, (line, want)) in zip(got, golden).enumerated() where line != want {
      Issue.record("merchant-tokens on \(backend): line \(index + 1) differs\n  got:  \(line.prefix(400))\n  want: \(want.prefix(400))")
      break
    }
  }
}
