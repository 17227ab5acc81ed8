import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The web checkout through the built binary, byte for byte: for a one-off cart, a subscription
/// with a trial, an automatic reload and a pre-order, createPaymentRequest, startMerchantSession
/// against the Apple session test server (mutual TLS with a test merchant identity), the sheet's
/// events, authorizePayment (with Wallet order details) and processOrder.
///
/// The test server listens on an ephemeral port and its certificates are made per run, so the
/// case keeps templates: `config.template.yaml` and `requests.template.jsonl` have placeholders
/// for the port and the certificate files; `responses.jsonl` holds nothing that varies. Re-record
/// with `PAYSERVICE_RECORD_GOLDEN=1 swift test --filter WebCheckoutGoldenTests`.
@Suite("Web checkout golden transcript")
struct WebCheckoutGoldenTests {
  static let folder = GoldenTranscriptTests.goldenRoot.appendingPathComponent("web-checkout")
  static let merchant = "merchant.com.example.coffee"
  static let now = "2026-11-21T12:00:00Z"

  /// Fills the templates' placeholders.
  static func fill(_ template: String, _ values: [String: String]) -> String {
    values.reduce(template) { text, entry in text.replacingOccurrences(of: "{{\(entry.key)}}", with: entry.value) }
  }

  @Test(
    "a one-off cart, a subscription with a trial, an automatic reload and a pre-order, from payment request to order",
    arguments: StoreBackend.available)
  func transcript(backend: StoreBackend) throws {
    let pinned = RFC3339.parse(Self.now)!
    let server = try AppleSessionTestServer(registrations: [Self.merchant: ["coffee.example.com"]], now: { pinned })
    defer { server.shutdown() }
    let directory = TestPaths.temporaryDirectory()
    let identity = try server.identityAuthority.issue(
      merchantIdentifier: Self.merchant, now: Date(timeIntervalSince1970: TimeInterval(pinned)))
    let files = try identity.write(to: directory)
    let values = [
      "IDENTITY_CERTIFICATE": files.certificate, "IDENTITY_KEY": files.key,
      "TRUST_ROOTS": try server.writeServerCA(to: directory), "ADDITIONAL_HOST": server.additionalHost,
      "VALIDATION_URL": server.validationURL,
    ]
    let config = directory.appendingPathComponent("config.yaml")
    try Self.fill(
      try String(contentsOf: Self.folder.appendingPathComponent("config.template.yaml"), encoding: .utf8), values
    ).write(to: config, atomically: true, encoding: .utf8)
    let requests = Self.fill(
      try String(contentsOf: Self.folder.appendingPathComponent("requests.template.jsonl"), encoding: .utf8), values)

    let result = try PayserviceProcess.run(
      ["--config", config.path, "--database", try backend.freshDatabase(), "--now", Self.now],
      stdin: Data(requests.utf8))
    #expect(result.status == 0, "stderr: \(result.stderr)")
    // One session per checkout, each over mutual TLS with the merchant's certificate and Apple's body.
    #expect(server.sessionCount == 4)
    #expect(
      server.requests.map(\.body) == Array(
        repeating:
          #"{"merchantIdentifier":"merchant.com.example.coffee","displayName":"Example Coffee","initiative":"web","initiativeContext":"coffee.example.com"}"#,
        count: 4))
    #expect(server.requests.allSatisfy { $0.certificateMerchant == Self.merchant })

    let goldenURL = Self.folder.appendingPathComponent("responses.jsonl")
    if ProcessInfo.processInfo.environment["PAYSERVICE_RECORD_GOLDEN"] == "1" {
      if backend == .sqlite { try result.stdout.write(to: goldenURL) }
      return
    }
    let golden = try String(contentsOf: goldenURL, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
    let output = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    #expect(output.count == golden.count)
    for (index, (got, want)) in zip(output, golden).enumerated() where got != want {
      Issue.record("web-checkout on \(backend): line \(index + 1) differs\n  got:  \(got)\n  want: \(want)")
      break
    }
  }
}
