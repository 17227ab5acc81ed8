import Foundation
import PayServiceTestSupport
import Testing

/// Whole transcripts through the built binary: `requests.jsonl` in, `responses.jsonl` out, compared
/// byte for byte. Each case folder under Golden/ may hold a `config.yaml` (default: Golden/config.yaml),
/// an `args` file with extra arguments, one per line, and an `env` file of `NAME=VALUE` lines added to
/// the process's environment (test secrets only). Every case runs on a fresh store with the
/// clock pinned to 2026-11-21T12:00:00Z, once on each store backend (`StoreBackend.available`): the
/// same bytes from SQLite and from PostgreSQL.
///
/// Re-record after an intended change with `PAYSERVICE_RECORD_GOLDEN=1 swift test --filter Golden`,
/// then review the diff of Golden/*/responses.jsonl before committing. CI never records.
@Suite("Golden transcripts")
struct GoldenTranscriptTests {
  static let goldenRoot = TestPaths.packageRoot.appendingPathComponent("Tests/EndToEndTests/Golden")

  static var cases: [String] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: goldenRoot.path)) ?? []
    // A stepped case (a `stepped` file says which test runs it) is not a plain replay.
    return entries.filter { name in
      FileManager.default.fileExists(atPath: goldenRoot.appendingPathComponent("\(name)/requests.jsonl").path)
        && !FileManager.default.fileExists(atPath: goldenRoot.appendingPathComponent("\(name)/stepped").path)
    }.sorted()
  }

  static func transcript(
    requests: URL, config: String, backend: StoreBackend, extraArguments: [String] = [],
    environment: [String: String] = [:]
  ) throws -> (ProcessResult, Data) {
    let input = try Data(contentsOf: requests)
    let result = try PayserviceProcess.run(
      ["--config", config, "--database", try backend.freshDatabase(), "--now", "2026-11-21T12:00:00Z"]
        + extraArguments,
      stdin: input,
      environment: ProcessInfo.processInfo.environment.merging(environment) { _, added in added })
    return (result, result.stdout)
  }

  /// The `NAME=VALUE` lines of a case's `env` file (none without one).
  static func environment(of name: String) -> [String: String] {
    var environment: [String: String] = [:]
    let file = goldenRoot.appendingPathComponent(name).appendingPathComponent("env")
    if let text = try? String(contentsOf: file, encoding: .utf8) {
      for line in text.split(separator: "\n") {
        let pair = line.split(separator: "=", maxSplits: 1)
        if pair.count == 2 { environment[String(pair[0])] = String(pair[1]) }
      }
    }
    return environment
  }

  @Test("all 25 golden cases have a transcript")
  func casesExist() {
    #expect(
      Self.cases == [
        "adyen-notifications", "applepay", "authorize", "back-office", "back-office-discovery", "back-office-gate", "back-office-manual",
        "currency-jpy", "currency-kwd-half-even", "delivery-month-end", "delivery-year-end",
        "discounts", "discovery", "erasure", "events", "jsonrpc", "line-limit", "mcp", "orders", "payment-request",
        "pricing", "read-only", "shipping-contact", "stock", "stripe-events",
      ])
  }

  @Test("transcript matches its golden responses", arguments: cases, StoreBackend.available)
  func transcript(name: String, backend: StoreBackend) throws {
    let folder = Self.goldenRoot.appendingPathComponent(name)
    let caseConfig = folder.appendingPathComponent("config.yaml").path
    let config =
      FileManager.default.fileExists(atPath: caseConfig)
      ? caseConfig : Self.goldenRoot.appendingPathComponent("config.yaml").path
    var extra: [String] = []
    if let args = try? String(contentsOf: folder.appendingPathComponent("args"), encoding: .utf8) {
      extra = args.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }
    let (result, output) = try Self.transcript(
      requests: folder.appendingPathComponent("requests.jsonl"), config: config, backend: backend,
      extraArguments: extra, environment: Self.environment(of: name))
    #expect(result.status == 0, "stderr: \(result.stderr)")
    let goldenURL = folder.appendingPathComponent("responses.jsonl")
    // Recorded from SQLite; PostgreSQL is compared against the same file.
    if ProcessInfo.processInfo.environment["PAYSERVICE_RECORD_GOLDEN"] == "1" {
      if backend == .sqlite { try output.write(to: goldenURL) }
      return
    }
    let golden = try Data(contentsOf: goldenURL)
    if output != golden {
      let got = String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
      let want = String(decoding: golden, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
      let index = zip(got, want).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(got.count, want.count)
      Issue.record(
        """
        \(name) on \(backend): output differs from Golden/\(name)/responses.jsonl at line \(index + 1)
          got:  \(index < got.count ? String(got[index]) : "<end>")
          want: \(index < want.count ? String(want[index]) : "<end>")
        """)
    }
  }

  @Test(
    "the README's example sessions are answered exactly as recorded",
    arguments: [
      ("checkout", "example-session", [String](), "config.yaml"),
      ("back-office", "back-office-example", ["--back-office"], "config.yaml"),
      ("uk-vat", "uk-vat-example", [], "examples/uk-vat.yaml"),
      ("jp-shop", "jp-shop-example", [], "examples/jp-shop.yaml"),
      ("cn-shop", "cn-shop-example", [], "examples/cn-shop.yaml"),
    ],
    StoreBackend.available)
  func exampleSession(
    example: (requests: String, golden: String, arguments: [String], config: String), backend: StoreBackend
  ) throws {
    let (result, output) = try Self.transcript(
      requests: TestPaths.packageRoot.appendingPathComponent("examples/\(example.requests).jsonl"),
      config: TestPaths.path(example.config), backend: backend, extraArguments: example.arguments)
    #expect(result.status == 0)
    let goldenURL = Self.goldenRoot.appendingPathComponent("\(example.golden).responses.jsonl")
    if ProcessInfo.processInfo.environment["PAYSERVICE_RECORD_GOLDEN"] == "1" {
      if backend == .sqlite { try output.write(to: goldenURL) }
      return
    }
    #expect(String(decoding: output, as: UTF8.self) == (try String(contentsOf: goldenURL, encoding: .utf8)))
  }
}

extension GoldenTranscriptTests {
  /// A stepped case's transcript (its folder has a `stepped` file): written by the run that made it
  /// with `PAYSERVICE_RECORD_GOLDEN=1` (from SQLite), else its requests and responses are compared
  /// byte for byte, the first differing line named.
  static func checkStepped(_ name: String, requests: [String], responses: [String], backend: StoreBackend) throws {
    let folder = goldenRoot.appendingPathComponent(name)
    let (requestBytes, responseBytes) = (
      Data((requests.joined(separator: "\n") + "\n").utf8), Data((responses.joined(separator: "\n") + "\n").utf8)
    )
    if ProcessInfo.processInfo.environment["PAYSERVICE_RECORD_GOLDEN"] == "1" {
      if backend == .sqlite {
        try requestBytes.write(to: folder.appendingPathComponent("requests.jsonl"))
        try responseBytes.write(to: folder.appendingPathComponent("responses.jsonl"))
      }
      return
    }
    #expect(requestBytes == (try Data(contentsOf: folder.appendingPathComponent("requests.jsonl"))), "requests.jsonl")
    let golden = try String(contentsOf: folder.appendingPathComponent("responses.jsonl"), encoding: .utf8)
    for (index, (got, want)) in zip(responses, golden.split(separator: "\n")).enumerated() where got != want {
      Issue.record("\(name) on \(backend): line \(index + 1)\n  got:  \(got)\n  want: \(want)")
      break
    }
    #expect(responseBytes == Data(golden.utf8))
  }
}
