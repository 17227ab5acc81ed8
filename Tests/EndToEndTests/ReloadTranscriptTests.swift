import Foundation
import PayServiceTestSupport
import Testing

/// A config reloaded while the process serves: Golden/reload/steps.jsonl is sent one line at a
/// time to one process, whose config file is replaced between lines (`#config FILE` copies the
/// case's FILE over it) and which is sent SIGHUP (`#hup`, after which the test waits for the log
/// line that says what the reload came to). The responses are compared byte for byte with
/// responses.jsonl, and the log (warnings and notices: `--quiet`) with log.txt: a reload with a
/// good config, one with errors (each with its place), both through reloadConfig and SIGHUP, on
/// each store backend.
///
/// Re-record with `PAYSERVICE_RECORD_GOLDEN=1 swift test --filter ReloadTranscript`.
@Suite("Config reload transcript")
struct ReloadTranscriptTests {
  static let folder = GoldenTranscriptTests.goldenRoot.appendingPathComponent("reload")

  @Test("reloads through reloadConfig and SIGHUP answer as recorded", arguments: StoreBackend.available)
  func reload(backend: StoreBackend) throws {
    let directory = TestPaths.temporaryDirectory()
    let live = directory.appendingPathComponent("config.yaml")
    func install(_ name: String) throws {
      let data = try Data(contentsOf: Self.folder.appendingPathComponent(name))
      // Written whole under another name and renamed over: the process never reads half a file.
      let staged = directory.appendingPathComponent(".staged.yaml")
      try data.write(to: staged)
      _ = rename(staged.path, live.path)
    }
    try install("config.yaml")
    let args = try String(contentsOf: Self.folder.appendingPathComponent("args"), encoding: .utf8)
      .split(separator: "\n").map(String.init)
    let process = try RunningPayservice(
      ["--config", "config.yaml", "--database", try backend.freshDatabase(), "--now", "2026-11-21T12:00:00Z"] + args,
      directory: directory)
    var responses = ""
    var log = ""
    let steps = try String(contentsOf: Self.folder.appendingPathComponent("steps.jsonl"), encoding: .utf8)
    for step in steps.split(separator: "\n").map(String.init) {
      if step.hasPrefix("#config ") {
        try install(String(step.dropFirst("#config ".count)))
      } else if step == "#hup" {
        kill(process.process.processIdentifier, SIGHUP)
        // The reload's first log line: it took effect, or was refused (its problems follow it).
        guard let line = process.readLogLine() else {
          Issue.record("\(backend): no log line after SIGHUP")
          break
        }
        log += line + "\n"
      } else {
        responses += try process.ask(step) + "\n"
      }
    }
    process.finish()
    log += String(decoding: process.stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(process.process.terminationStatus == 0)
    let responsesURL = Self.folder.appendingPathComponent("responses.jsonl")
    let logURL = Self.folder.appendingPathComponent("log.txt")
    if ProcessInfo.processInfo.environment["PAYSERVICE_RECORD_GOLDEN"] == "1" {
      if backend == .sqlite {
        try Data(responses.utf8).write(to: responsesURL)
        try Data(log.utf8).write(to: logURL)
      }
      return
    }
    let wantResponses = try String(contentsOf: responsesURL, encoding: .utf8)
    let got = responses.split(separator: "\n", omittingEmptySubsequences: false)
    let want = wantResponses.split(separator: "\n", omittingEmptySubsequences: false)
    if let index = zip(got, want).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset ?? (got.count == want.count ? nil : min(got.count, want.count)) {
      Issue.record(
        """
        reload on \(backend): differs from Golden/reload/responses.jsonl at line \(index + 1)
          got:  \(index < got.count ? String(got[index]) : "<end>")
          want: \(index < want.count ? String(want[index]) : "<end>")
        """)
    }
    #expect(log == (try String(contentsOf: logURL, encoding: .utf8)), "\(backend)")
  }
}
