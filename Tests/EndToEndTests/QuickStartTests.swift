import Foundation
import PayServiceTestSupport
import Testing

/// The README's quick start (`payservice < examples/checkout.jsonl` with config.yaml) answers the
/// same in ten years as today: nothing in the example config or session expires.
@Suite("Quick start")
struct QuickStartTests {
  static func session(now: String) throws -> String {
    let result = try PayserviceProcess.run(
      ["--config", TestPaths.path("config.yaml"), "--database", ":memory:", "--now", now, "--quiet"],
      stdin: try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent("examples/checkout.jsonl")))
    #expect(result.status == 0)
    #expect(result.stderr == "")
    return result.stdoutText
  }

  /// What differs with the clock alone: the delivery dates' years and the charge token (made from
  /// the time it was issued, which it starts with).
  static func timeless(_ text: String, year: Int) -> String {
    var text = text
    for offset in 0...1 { text = text.replacingOccurrences(of: "\"years\":\(year + offset)", with: "\"years\":Y+\(offset)") }
    return text.replacingOccurrences(of: #""chargeToken":"ctok_[0-9a-f]{48}""#, with: #""chargeToken":"ctok""#, options: .regularExpression)
  }

  @Test("the example session ten years ahead answers as it does today")
  func tenYearsAhead() throws {
    let today = try Self.session(now: "2026-11-21T12:00:00Z")
    let later = try Self.session(now: "2036-11-21T12:00:00Z")
    #expect(today == (try String(contentsOf: GoldenTranscriptTests.goldenRoot.appendingPathComponent("example-session.responses.jsonl"), encoding: .utf8)))
    #expect(!later.contains("couponCodeExpired"))
    #expect(today.split(separator: "\n").count == later.split(separator: "\n").count)
    #expect(Self.timeless(later, year: 2036) == Self.timeless(today, year: 2026))
    // Only the token and the years differ: one token in the session.
    #expect(later != today)
  }
}
