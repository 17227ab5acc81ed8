import Testing

@testable import PayServiceCommands

/// `serve`'s options are declared once (`ServeSettings.options`) and read by `ServeSettings.read`,
/// on the direct path at start and through ArgumentParser alike.
@Suite("Command line")
struct CommandLineTests {
  static func settings(_ change: (inout ServeSettings) -> Void) -> ServeSettings {
    var settings = ServeSettings()
    change(&settings)
    return settings
  }

  static let plain: [([String], ServeSettings)] = [
    ([], ServeSettings()),
    (["--config", "store.yaml", "--database", ":memory:"], settings { $0.config = "store.yaml"; $0.database = ":memory:" }),
    (
      ["serve", "--database", "orders.sqlite", "--now", "2026-11-21T12:00:00Z", "--quiet", "--threads", "1"],
      settings {
        $0.database = "orders.sqlite"
        $0.now = "2026-11-21T12:00:00Z"
        $0.quiet = true
        $0.threads = 1
      }
    ),
    (
      ["--quiet", "--max-line-bytes", "4096", "--threads", "2", "--config=a.yaml"],
      settings {
        $0.quiet = true
        $0.maxLineBytes = 4096
        $0.threads = 2
        $0.config = "a.yaml"
      }
    ),
    (["--no-group-commit", "--database", "orders.sqlite"], settings { $0.groupCommit = false; $0.database = "orders.sqlite" }),
    (["serve", "--group-commit"], ServeSettings()),
    (["--group-commit", "--no-group-commit"], settings { $0.groupCommit = false }),
    (["--config", "a.yaml", "--now", "2026-11-21T12:00:00Z", "--config", "b.yaml"], settings {
      $0.config = "b.yaml"
      $0.now = "2026-11-21T12:00:00Z"
    }),
  ]

  @Test("serve invocations read into their settings, directly and through ArgumentParser", arguments: plain)
  func reads(_ arguments: [String], _ expected: ServeSettings) throws {
    #expect(ServeSettings.parse(arguments) == expected)
    let command = try #require(try PayService.parseAsRoot(arguments) as? Serve)
    #expect(try ServeSettings.read(command.arguments).get() == expected)
  }

  @Test(
    "a problem names the argument and what would be valid",
    arguments: [
      (["--threads", "3"], "--threads must be 1 or 2, got 3"),
      (["--now", "yesterday"], #"--now must be an RFC 3339 time like 2026-11-21T12:00:00Z, got "yesterday""#),
      (["--max-line-bytes", "10"], "--max-line-bytes must be at least 64"),
      (["--max-line-bytes", "many"], "--max-line-bytes takes <bytes>, got 'many'"),
      (["--bogus", "1"], "unknown argument '--bogus'; serve --help lists the options"),
      (["--config"], "--config needs a value <path>"),
      (["--quiet=yes"], "--quiet takes no value"),
      (["serve", "extra"], "unknown argument 'extra'; serve --help lists the options"),
    ])
  func problems(_ arguments: [String], _ message: String) {
    #expect(ServeSettings.read(arguments) == .failure(ServeSettings.Problem(message: message)))
    #expect(ServeSettings.parse(arguments) == nil)
  }

  @Test("an argument is quoted without a URL's user info")
  func userInfoNotQuoted() {
    #expect(
      ServeSettings.read(["serve", "postgres://app:se/cr3t@db/orders"])
        == .failure(ServeSettings.Problem(message: "unknown argument 'postgres://***@db/orders'; serve --help lists the options")))
    #expect(
      ServeSettings.read(["--threads", "https://u:p@ss@x"])
        == .failure(ServeSettings.Problem(message: "--threads takes <1|2>, got 'https://***@x'")))
  }

  @Test("help, version and the other commands are left to ArgumentParser")
  func leftToArgumentParser() {
    for arguments in [["--help"], ["-h"], ["--version"], ["check-config"], ["call", "listProducts"]] {
      #expect(ServeSettings.parse(arguments) == nil, "\(arguments)")
    }
  }

  @Test("serve --help, as ArgumentParser prints it, lists every option exactly once, with its help")
  func help() {
    for columns in [80, 1000] {
      let help = PayService.helpMessage(for: Serve.self, columns: columns)
      let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
      // Every row's label: a line that starts with "  -", up to the two spaces before its help.
      let labels = lines.filter { $0.hasPrefix("  -") }.map { line in
        String(line.dropFirst(2).components(separatedBy: "  ").first!)
      }
      let expected = ServeSettings.options.map { "\($0.name)\($0.value.map { " <\($0)>" } ?? "")" } + ["--version", "-h, --help"]
      #expect(labels.sorted() == expected.sorted(), "\(columns) columns:\n\(help)")
      #expect(lines.filter { $0 == "OPTIONS:" }.count == 1, "\(columns) columns:\n\(help)")
      #expect(lines.allSatisfy { $0.count <= max(columns, 79) }, "\(columns) columns")
      // Every help text whole, however it is wrapped.
      let words = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
      for option in ServeSettings.options {
        #expect(words.contains(option.help.split(separator: " ").joined(separator: " ")), "\(option.name)")
      }
      #expect(help.contains("USAGE: payservice [serve] [<options>]"))
    }
    #expect(ServeSettings.options.map(\.name) == [
      "--config", "--database", "--now", "--max-line-bytes", "--quiet", "--threads", "--group-commit", "--no-group-commit",
      "--back-office", "--log-timestamps",
    ])
  }
}
