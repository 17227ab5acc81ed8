import Crypto
import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Wallet orders through the built binary, byte for byte: a purchase with order details, two
/// devices registered (one of them gone at APNs), the package served and not modified, two
/// shipments moved forward, one filter refunded, the changed orders listed, a device's log, and
/// the bad requests. Each package is checked as Wallet reads it (`scripts/wallet-order-check.py`:
/// the manifest's hashes, the CMS signature with openssl against the test root, `order.json`
/// against Apple's documented keys), and the pushes the APNs test server took are counted.
///
/// The config and requests are templates (the fixtures' paths, the test server's port and CA);
/// `responses.jsonl` holds nothing that varies. Re-record with
/// `PAYSERVICE_RECORD_GOLDEN=1 swift test --filter WalletOrdersGoldenTests`.
@Suite("Wallet orders golden transcript")
struct WalletOrdersGoldenTests {
  static let folder = GoldenTranscriptTests.goldenRoot.appendingPathComponent("wallet-orders")
  static let now = "2026-11-21T12:00:00Z"
  static let phone = String(repeating: "a", count: 64)
  static let watch = String(repeating: "b", count: 64)

  /// The APNs test server for the fixtures' key, the order type a topic, the phone registered at
  /// it and the watch gone since.
  static func apns() throws -> APNsTestServer {
    let key = try P256.Signing.PrivateKey(pemRepresentation: WalletOrderFixtures.text("apns_key.p8"))
    let server = try APNsTestServer(
      teamId: "TEAM123456", keyId: "ABC123DEFG", publicKey: key.publicKey,
      topics: [WalletOrderFixtures.orderTypeIdentifier], tokenUpdateIntervalSeconds: 0)
    server.registerDevice(phone, topic: WalletOrderFixtures.orderTypeIdentifier)
    server.registerDevice(watch, topic: WalletOrderFixtures.orderTypeIdentifier)
    server.unregister(watch, at: 1_763_726_400_000)
    return server
  }

  /// The config for `server`, written to `directory`.
  static func config(_ server: APNsTestServer, in directory: URL) throws -> URL {
    let values = [
      "CERTIFICATE": WalletOrderFixtures.path("order_type_certificate.pem"),
      "PRIVATE_KEY": WalletOrderFixtures.path("order_type_key.pem"),
      "INTERMEDIATE": WalletOrderFixtures.path("wwdr_certificate.pem"),
      "APNS_KEY": WalletOrderFixtures.path("apns_key.p8"), "APNS_BASE": server.baseURL,
      "APNS_CA": try server.writeCACertificate(to: directory),
    ]
    let config = directory.appendingPathComponent("config.yaml")
    try WebCheckoutGoldenTests.fill(
      try String(contentsOf: folder.appendingPathComponent("config.template.yaml"), encoding: .utf8), values
    ).write(to: config, atomically: true, encoding: .utf8)
    return config
  }

  @Test(
    "purchase, register, ship in two shipments, refund one line: each package valid, each push counted",
    arguments: StoreBackend.available)
  func transcript(backend: StoreBackend) throws {
    let server = try Self.apns()
    defer { server.shutdown() }
    let directory = TestPaths.temporaryDirectory()
    let config = try Self.config(server, in: directory)
    let requests = try Data(contentsOf: Self.folder.appendingPathComponent("requests.jsonl"))
    let result = try PayserviceProcess.run(
      ["--config", config.path, "--database", try backend.freshDatabase(), "--now", Self.now, "--back-office"],
      stdin: requests)
    #expect(result.status == 0, "stderr: \(result.stderr)")

    // Four changes (two shipments, a delivery, a refund) pushed to the phone; the watch's first
    // push was its 410, which unregistered it: no more pushes to it. Each push as Wallet's are:
    // the order type as topic, an empty payload, over HTTP/2.
    #expect(server.delivered(to: Self.phone) == 4)
    #expect(server.pushes(to: Self.watch).map(\.status) == [410])
    #expect(server.pushes.count == 5)
    #expect(server.pushes.allSatisfy { $0.topic == WalletOrderFixtures.orderTypeIdentifier && $0.payload == "{}" })
    #expect(server.pushes.allSatisfy { $0.httpVersion == "HTTP/2.0" && $0.method == "POST" })
    // The device's log line, without what may be personal.
    #expect(
      result.stderr.contains(
        "payservice: warning: a Wallet device reports: [2026-11-21 12:00:05 +0000] Get pass task (order ord_1, … encountered error: 401 for …\n"
      ))
    #expect(!result.stderr.contains("ada@example.com") && !result.stderr.contains("5551234567"))

    // Every package served is one Wallet takes.
    let answers = try String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map {
      try JSONParser.parse(Array($0.utf8))
    }
    var checked = 0
    for answer in answers {
      guard case .object(let object) = answer, case .object(let result)? = object["result"],
        case .string(let package)? = result["package"], let bytes = Data(base64Encoded: package)
      else { continue }
      let check = try WalletOrderFixtures.check(Array(bytes))
      #expect(check.status == 0, "\(check.output)")
      checked += 1
    }
    #expect(checked == 3)

    let goldenURL = Self.folder.appendingPathComponent("responses.jsonl")
    if ProcessInfo.processInfo.environment["PAYSERVICE_RECORD_GOLDEN"] == "1" {
      if backend == .sqlite { try result.stdout.write(to: goldenURL) }
      return
    }
    let golden = try String(contentsOf: goldenURL, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
    let output = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    #expect(output.count == golden.count)
    for (index, (got, want)) in zip(output, golden).enumerated() where got != want {
      Issue.record("wallet-orders on \(backend): line \(index + 1) differs\n  got:  \(got.prefix(300))\n  want: \(want.prefix(300))")
      break
    }
  }
}
