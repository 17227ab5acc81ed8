import ArgumentParser
import Foundation
import PayServiceCore

/// `payservice`: the merchant side of an Apple Pay checkout, as JSON-RPC 2.0 over stdio.
struct PayService: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "payservice",
    abstract: "Answer the merchant side of an Apple Pay checkout: line-delimited JSON-RPC 2.0 on stdin/stdout.",
    subcommands: [Serve.self, CheckConfig.self],
    defaultSubcommand: Serve.self
  )
}

struct Serve: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "serve", abstract: "Serve requests from stdin until EOF (the default command).")

  /// Defaults, shared with `parseDirectly`.
  static let defaultConfig = "config.yaml"
  static let defaultDatabase = "payservice.sqlite"
  static let defaultMaxLineBytes = 1_048_576

  @Option(help: "The store configuration file.")
  var config: String = Serve.defaultConfig

  @Option(help: "The SQLite order store; :memory: for a throwaway store.")
  var database: String = Serve.defaultDatabase

  @Option(help: "Pin the service clock to this RFC 3339 time (for tests and replays).")
  var now: String?

  @Option(help: "Longest accepted request line in bytes.")
  var maxLineBytes: Int = Serve.defaultMaxLineBytes

  @Flag(help: "Log only warnings to stderr, not one line per request.")
  var quiet = false

  @Option(
    help: """
      Threads answering pipelined requests: 1, or 2 to price and answer sheet events on a second \
      thread too (store methods always run in order on one). Default: 2 when there are 2 or more CPUs.
      """)
  var threads: Int?

  @Flag(
    inversion: .prefixedNo,
    help: """
      Commit pipelined processOrder requests of one read in one store transaction (one fsync), \
      answering each after the commit. --no-group-commit gives each its own transaction.
      """)
  var groupCommit = true

  func validate() throws {
    if let now, RFC3339.parse(now) == nil {
      throw ValidationError("--now must be an RFC 3339 time like 2026-11-21T12:00:00Z, got \"\(now)\"")
    }
    if maxLineBytes < 64 { throw ValidationError("--max-line-bytes must be at least 64") }
    if let threads, !(1...2).contains(threads) { throw ValidationError("--threads must be 1 or 2, got \(threads)") }
  }

  func run() throws {
    // From here on fd 1 is stderr: only the response writer holds the real stdout.
    let responses = StdoutGuard.install()
    signal(SIGPIPE, SIG_IGN)
    // An existing store (or a throwaway one) is opened while the config is read; a new store file
    // is only created once the config is known to be valid.
    let opening = database == ":memory:" || FileManager.default.fileExists(atPath: database)
      ? StoreOpening(path: database) : nil
    let loaded: Config
    do {
      loaded = try ConfigLoader.load(path: config)
    } catch {
      fail("invalid config:\n\(error)")
    }
    let store: Store
    do {
      store = try opening?.wait() ?? Store(path: database)
      try store.seedStock(loaded.catalog)
    } catch {
      fail("\(error)")
    }
    let clock = ServiceClock(pinned: now.flatMap(RFC3339.parse))
    let log = RequestLog(level: quiet ? .warnings : .requests)
    let handler = RequestHandler(context: ServiceContext(config: loaded, store: store, clock: clock), log: log)
    let server = Server(
      handler: handler, input: STDIN_FILENO, output: responses, maxLineBytes: maxLineBytes,
      stopSignal: StopSignal.install(), log: log,
      threads: threads ?? (ProcessInfo.processInfo.activeProcessorCount > 1 ? 2 : 1), groupCommits: groupCommit)
    _ = server.run()
    log.flush()
  }

  func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("payservice: \(message)\n".utf8))
    Foundation.exit(2)
  }
}

extension Serve {
  /// Reads the plain form of a serve invocation: an optional leading `serve`, then `--name value`
  /// pairs of this command's options and its flags, each at most once. Returns nil for anything
  /// else (help, `--name=value`, another subcommand, a repeated or unknown option, a value that
  /// does not convert or validate), so that ArgumentParser parses it and reports what is wrong.
  static func parseDirectly(_ arguments: [String]) -> Serve? {
    var rest = arguments[...]
    if rest.first == "serve" { rest = rest.dropFirst() }
    var values: [String: String] = [:]
    var flags: Set<String> = []
    while let name = rest.popFirst() {
      if ["--quiet", "--group-commit", "--no-group-commit"].contains(name) {
        if !flags.insert(name).inserted { return nil }
        continue
      }
      guard ["--config", "--database", "--now", "--max-line-bytes", "--threads"].contains(name),
        values[name] == nil, let value = rest.popFirst(), !value.hasPrefix("-")
      else { return nil }
      values[name] = value
    }
    var serve = Serve()
    serve.config = values["--config"] ?? Serve.defaultConfig
    serve.database = values["--database"] ?? Serve.defaultDatabase
    serve.now = values["--now"]
    serve.quiet = flags.contains("--quiet")
    // ArgumentParser takes the last of --group-commit and --no-group-commit; leave both to it.
    if flags.contains("--group-commit") && flags.contains("--no-group-commit") { return nil }
    serve.groupCommit = !flags.contains("--no-group-commit")
    serve.maxLineBytes = Serve.defaultMaxLineBytes
    if let text = values["--max-line-bytes"] {
      guard let number = Int(text) else { return nil }
      serve.maxLineBytes = number
    }
    serve.threads = nil
    if let text = values["--threads"] {
      guard let number = Int(text) else { return nil }
      serve.threads = number
    }
    guard (try? serve.validate()) != nil else { return nil }
    return serve
  }
}

struct CheckConfig: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "check-config", abstract: "Validate the configuration and print a summary; exit 2 when invalid.")

  @Option(help: "The store configuration file.")
  var config: String = "config.yaml"

  func run() throws {
    do {
      let loaded = try ConfigLoader.load(path: config)
      print(ConfigSummary.text(loaded, path: config), terminator: "")
    } catch {
      FileHandle.standardError.write(Data("payservice: invalid config:\n\(error)\n".utf8))
      Foundation.exit(2)
    }
  }
}

// The common start (`payservice --config … --database …`) skips ArgumentParser's reflection, which
// is a seventh of a cold start; anything else, and any invalid value, goes through ArgumentParser.
if let serve = Serve.parseDirectly(Array(CommandLine.arguments.dropFirst())) {
  do {
    try serve.run()
  } catch {
    Serve.exit(withError: error)
  }
} else {
  PayService.main()
}
