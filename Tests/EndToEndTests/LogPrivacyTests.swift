import Foundation
import PayServiceTestSupport
import Testing

/// stderr of full sessions (every golden transcript, with logging on) holds only the per-request
/// line and fixed warnings: no contact, card, token or payment data.
@Suite("Log privacy")
struct LogPrivacyTests {
  /// Personal and payment data that appear in the golden requests.
  static let forbidden = [
    "@", "Lovelace", "Ada", "Infinite Loop", "Cupertino", "95014", "555-0100", "Visa 4242", "Visa 0492",
    "Amex 1005", "Acme Card", "tok_visa", "tok_chargeDeclined", "ctok_", "ch_", "ord_", "SAVE10", "txn-", "whsec_", "sk_test_", "evt_", "v1=",
  ]

  /// The id (the client's, cut to 64 bytes) and method are the only request text a log line holds.
  static let requestLine =
    #"^payservice: id=(-|.{1,64}) method=".{0,66}" us=[0-9]+ outcome=(ok|ignored|error\(-32[0-9]{3}\))(,notification)?$"#
  static let warningLine = #"^payservice: warning: a notification of [A-Za-z/]+ was not executed"#
  /// Which config a start took: its path (the operator's) and digest.
  static let configLine = #"^payservice: config [^ ]+ \(sha256:[0-9a-f]{64}\) took effect$"#

  @Test("every golden session logs one fixed-form line per request and nothing personal")
  func goldenSessions() throws {
    let root = GoldenTranscriptTests.goldenRoot
    var lines: [Substring] = []
    for name in GoldenTranscriptTests.cases {
      let folder = root.appendingPathComponent(name)
      let caseConfig = folder.appendingPathComponent("config.yaml").path
      let config = FileManager.default.fileExists(atPath: caseConfig) ? caseConfig : root.appendingPathComponent("config.yaml").path
      let result = try PayserviceProcess.run(
        ["--config", config, "--database", ":memory:", "--now", "2026-11-21T12:00:00Z"],
        stdin: try Data(contentsOf: folder.appendingPathComponent("requests.jsonl")),
        environment: ProcessInfo.processInfo.environment.merging(GoldenTranscriptTests.environment(of: name)) { $1 })
      lines += result.stderr.split(separator: "\n")
    }
    #expect(lines.count > 200)
    let requestLine = try Regex(Self.requestLine)
    let warningLine = try Regex(Self.warningLine)
    let configLine = try Regex(Self.configLine)
    for line in lines {
      let fixedForm =
        line.wholeMatch(of: requestLine) != nil || line.prefixMatch(of: warningLine) != nil
        || line.wholeMatch(of: configLine) != nil
      #expect(fixedForm, "unexpected log line: \(line.prefix(200))")
      for secret in Self.forbidden where line.contains(secret) {
        Issue.record("log line contains \"\(secret)\": \(line.prefix(200))")
      }
    }
  }
}
