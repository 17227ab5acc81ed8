import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The real Apple Pay token through the built binary: card data never reaches stdout, stderr or the
/// store's files, and credentials that cannot work stop the start.
@Suite("Apple Pay end to end")
struct ApplePayEndToEndTests {
  static let config = TestPaths.path("Tests/EndToEndTests/Golden/applepay/config.yaml")

  /// Every form the card's secrets could take in an output.
  static let secrets = [
    ApplePayVector.accountNumber, ApplePayVector.cryptogram, ApplePayVector.expiration,
    // The cryptogram's bytes as hex, in case anything were to encode it.
    Data(base64Encoded: ApplePayVector.cryptogram)!.map { String(format: "%02x", $0) }.joined(),
  ]

  @Test("authorize, order, look up, replay: no PAN, cryptogram or expiry in stdout, stderr or the database files")
  func noCardDataAnywhere() throws {
    let directory = TestPaths.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let database = directory.appendingPathComponent("store.sqlite").path
    let requests = try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent("Tests/EndToEndTests/Golden/applepay/requests.jsonl"))
    // Checkpointing is left to SQLite: the WAL file may hold the latest pages, so all three files are read.
    let result = try PayserviceProcess.run(
      ["--config", Self.config, "--database", database, "--now", "2014-10-27T19:52:00Z"], stdin: requests)
    #expect(result.status == 0, "stderr: \(result.stderr)")
    let stdout = result.stdoutText
    #expect(stdout.contains(#""payment":{"network":"Visa","type":"debit","lastFour":"4320","transactionId":"\#(ApplePayVector.transactionId)"}"#))
    #expect(result.stderr.contains(#"method="authorizePayment""#))

    var stored = Data()
    for suffix in ["", "-wal", "-shm"] {
      stored += (try? Data(contentsOf: URL(fileURLWithPath: database + suffix))) ?? Data()
    }
    let storedText = String(decoding: stored, as: UTF8.self)
    // The store does hold the order and the hold (the search looks in the right place).
    #expect(storedText.contains(ApplePayVector.transactionId))
    #expect(storedText.contains(#""lastFour":"4320""#))
    for secret in Self.secrets {
      #expect(!stdout.contains(secret), "stdout holds \(secret.prefix(4))…")
      #expect(!result.stderr.contains(secret), "stderr holds \(secret.prefix(4))…")
      #expect(stored.range(of: Data(secret.utf8)) == nil, "the database files hold \(secret.prefix(4))…")
    }
  }

  @Test("a certificate for another merchant identifier, or a key that does not match, exits 2 before serving")
  func startUpChecks() throws {
    let directory = TestPaths.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let vector = ApplePayVector.directory
    func start(_ yaml: String) throws -> ProcessResult {
      let path = directory.appendingPathComponent("config.yaml")
      try yaml.write(to: path, atomically: true, encoding: .utf8)
      return try PayserviceProcess.run(
        ["--config", path.path, "--database", ":memory:"],
        stdin: Data(#"{"jsonrpc":"2.0","id":1,"method":"listProducts"}"#.utf8 + [0x0A]))
    }
    let otherIdentifier = try start(
      ApplePayVector.configYAML(
        applePay: """
            merchantCertificate: \(vector)/merchant_certificate.pem
            merchantPrivateKey: \(vector)/merchant_private_key.pem
          """, identifier: "merchant.com.example.acme"))
    #expect(otherIdentifier.status == 2)
    #expect(otherIdentifier.stdout.isEmpty)
    #expect(
      otherIdentifier.stderr.contains(
        "config.yaml:21:24: applePay.merchantCertificate: belongs to merchant identifier merchant.com.seatgeek.SeatGeek"))
    let wrongKey = try start(
      ApplePayVector.configYAML(
        applePay: """
            merchantCertificate: \(vector)/merchant_certificate.pem
            merchantPrivateKey: \(ApplePayVector.otherMerchantDirectory)/merchant_private_key.pem
          """))
    #expect(wrongKey.status == 2)
    #expect(wrongKey.stdout.isEmpty)
    #expect(
      wrongKey.stderr
        == """
        payservice: invalid config:
        \(directory.path)/config.yaml:22:23: applePay.merchantPrivateKey: does not match merchantCertificate: it is the private key of another public key

        """)
  }
}
