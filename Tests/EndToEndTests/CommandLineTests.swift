import Testing

@testable import payservice

/// The direct parser of plain serve invocations must read exactly what ArgumentParser reads, and
/// leave everything else to it.
@Suite("Command line")
struct CommandLineTests {
  static let plain: [[String]] = [
    [],
    ["--config", "store.yaml", "--database", ":memory:"],
    ["serve", "--database", "orders.sqlite", "--now", "2026-11-21T12:00:00Z", "--quiet", "--threads", "1"],
    ["--quiet", "--max-line-bytes", "4096", "--threads", "2", "--config", "a.yaml"],
    ["--no-group-commit", "--database", "orders.sqlite"],
    ["serve", "--group-commit"],
  ]

  @Test("plain serve invocations read the same as through ArgumentParser", arguments: plain)
  func same(_ arguments: [String]) throws {
    let direct = try #require(ServeSettings.parse(arguments))
    let parsed = try #require(try PayService.parseAsRoot(arguments) as? Serve)
    #expect(direct == parsed.settings)
  }

  @Test(
    "anything else is left to ArgumentParser",
    arguments: [
      ["--help"], ["-h"], ["--config=store.yaml"], ["check-config"], ["--threads", "3"], ["--now", "yesterday"],
      ["--config", "a.yaml", "--config", "b.yaml"], ["--quiet", "--quiet"], ["--max-line-bytes", "10"],
      ["--max-line-bytes", "many"], ["--bogus", "1"], ["--config"], ["--generate-completion-script", "bash"],
      ["serve", "extra"], ["--group-commit", "--no-group-commit"],
    ])
  func leftToArgumentParser(_ arguments: [String]) {
    #expect(ServeSettings.parse(arguments) == nil)
  }
}
