import Foundation
import PayServiceCore

/// One option of `serve`: its name, the name of its value (nil for a flag), its help, and how it
/// sets the settings (false: the value does not convert).
struct ServeOption: Sendable {
  let name: String
  let value: String?
  let help: String
  /// The value when the option is not given, as help shows it (ArgumentParser shows it the same way).
  var defaultValue: String? = nil
  let set: @Sendable (inout ServeSettings, String) -> Bool
}

/// What `serve` runs with, as a plain value.
struct ServeSettings: Equatable {
  static let defaultConfig = "config.yaml"
  static let defaultDatabase = "payservice.sqlite"
  static let defaultMaxLineBytes = 1_048_576

  var config = ServeSettings.defaultConfig
  var database = ServeSettings.defaultDatabase
  var now: String?
  var maxLineBytes = ServeSettings.defaultMaxLineBytes
  var quiet = false
  var threads: Int?
  var groupCommit = true
  var backOffice = false
  var logTimestamps = false

  /// The help of the option `name` (`ServiceOptions` of the one-shot commands shows it as `serve` does).
  static func help(_ name: String) -> String {
    guard let option = options.first(where: { $0.name == name }) else { preconditionFailure("no option \(name)") }
    return option.help
  }

  /// Every option of `serve`, in the order `serve --help` lists them.
  static let options: [ServeOption] = [
    ServeOption(name: "--config", value: "path", help: "The store configuration file.", defaultValue: defaultConfig) {
      $0.config = $1
      return true
    },
    ServeOption(
      name: "--database", value: "store",
      help: """
        The order store: a SQLite file (:memory: for a throwaway store), or a PostgreSQL server as \
        postgres://user:password@host:port/dbname (the password may come from PGPASSWORD instead).
        """, defaultValue: defaultDatabase
    ) {
      $0.database = $1
      return true
    },
    ServeOption(name: "--now", value: "time", help: "Pin the service clock to this RFC 3339 time (for tests and replays).") {
      $0.now = $1
      return true
    },
    ServeOption(
      name: "--max-line-bytes", value: "bytes", help: "Longest accepted request line in bytes.",
      defaultValue: "\(defaultMaxLineBytes)"
    ) {
      guard let bytes = Int($1) else { return false }
      $0.maxLineBytes = bytes
      return true
    },
    ServeOption(name: "--quiet", value: nil, help: "Log only warnings to stderr, not one line per request.") { settings, _ in
      settings.quiet = true
      return true
    },
    ServeOption(
      name: "--threads", value: "1|2",
      help: """
        Threads answering pipelined requests: 1, or 2 to price and answer sheet events on a second \
        thread too (store methods always run in order on one). Default: 2 when there are 2 or more CPUs.
        """
    ) {
      guard let threads = Int($1) else { return false }
      $0.threads = threads
      return true
    },
    ServeOption(
      name: "--group-commit", value: nil,
      help: """
        Commit pipelined processOrder requests of one read in one store transaction (one fsync), \
        answering each after the commit (the default).
        """
    ) { settings, _ in
      settings.groupCommit = true
      return true
    },
    ServeOption(name: "--no-group-commit", value: nil, help: "Give each processOrder its own transaction.") {
      settings, _ in
      settings.groupCommit = false
      return true
    },
    ServeOption(
      name: "--back-office", value: nil,
      help: """
        Also serve the back-office methods (captureOrder, cancelOrder, refundOrder, listOrders), which \
        move money back. Without it they do not exist for this process: never give it to a shopper-facing one.
        """
    ) { settings, _ in
      settings.backOffice = true
      return true
    },
    ServeOption(
      name: "--log-timestamps", value: nil,
      help: "Start each stderr line with its time, RFC 3339 UTC to the millisecond."
    ) { settings, _ in
      settings.logTimestamps = true
      return true
    },
  ]

  /// The options for `serve --help`, each once. ArgumentParser knows none of them (they reach it
  /// as one private argument) and adds its own OPTIONS block below the usage with `--version` and
  /// `--help` only, so these go under a title of their own, in its layout: the help beside the
  /// name from column 26, wrapped to 79 columns, so that the overview's wrapping leaves each row whole.
  static var optionsHelp: String {
    let column = 26
    let indent = String(repeating: " ", count: column)
    let rows = options.map { option in
      let label = "  \(option.name)\(option.value.map { " <\($0)>" } ?? "")"
      var lines: [String] = []
      var line = ""
      let help = option.help + (option.defaultValue.map { " (default: \($0))" } ?? "")
      for word in help.split(separator: " ") {
        if !line.isEmpty && line.count + 1 + word.count > 79 - column {
          lines.append(line)
          line = ""
        }
        line += line.isEmpty ? String(word) : " \(word)"
      }
      lines.append(line)
      let body = lines.map { indent + $0 }
      guard label.count < column else { return ([label] + body).joined(separator: "\n") }
      return ([label + body[0].dropFirst(label.count)] + body.dropFirst()).joined(separator: "\n")
    }
    return "SERVE OPTIONS:\n" + rows.joined(separator: "\n")
  }

  struct Problem: Error, Equatable {
    let message: String
  }

  /// Reads a serve invocation: an optional leading `serve`, then options (`--name value` or
  /// `--name=value`, flags alone); an option given again replaces its earlier value (a script may
  /// add to a command line). Any other argument, or a value that does not convert or validate, is
  /// a problem.
  static func read(_ arguments: [String]) -> Result<ServeSettings, Problem> {
    var settings = ServeSettings()
    var index = arguments.first == "serve" ? 1 : 0
    while index < arguments.count {
      var name = arguments[index]
      var inlineValue: String?
      if let equals = name.firstIndex(of: "="), name.hasPrefix("--") {
        inlineValue = String(name[name.index(after: equals)...])
        name = String(name[..<equals])
      }
      index += 1
      // Arguments are quoted without a URL's user info: a misplaced --database URL keeps its password.
      guard let option = options.first(where: { $0.name == name }) else {
        let argument = URLText.withoutUserInfo(arguments[index - 1])
        return .failure(Problem(message: "unknown argument '\(argument)'; serve --help lists the options"))
      }
      var value = ""
      if option.value != nil {
        if let inlineValue {
          value = inlineValue
        } else {
          guard index < arguments.count, !arguments[index].hasPrefix("--") else {
            return .failure(Problem(message: "\(name) needs a value <\(option.value!)>"))
          }
          value = arguments[index]
          index += 1
        }
      } else if inlineValue != nil {
        return .failure(Problem(message: "\(name) takes no value"))
      }
      guard option.set(&settings, value) else {
        return .failure(Problem(message: "\(name) takes <\(option.value!)>, got '\(URLText.withoutUserInfo(value))'"))
      }
    }
    if let problem = settings.problem { return .failure(Problem(message: problem)) }
    return .success(settings)
  }

  /// The common start, read without ArgumentParser (which discovers its options by reflection at a
  /// noticeable cost to every start); nil leaves the arguments to ArgumentParser (help, another
  /// command, or a problem it reports).
  static func parse(_ arguments: [String]) -> ServeSettings? {
    try? read(arguments).get()
  }

  /// What is wrong with these values; nil when they are valid.
  var problem: String? {
    if let problem = ServeSettings.problem(now: now) { return problem }
    if maxLineBytes < 64 { return "--max-line-bytes must be at least 64" }
    if let threads, !(1...2).contains(threads) { return "--threads must be 1 or 2, got \(threads)" }
    return nil
  }

  /// What is wrong with a `--now` value; nil when it is valid (or absent).
  static func problem(now: String?) -> String? {
    guard let now, RFC3339.parse(now) == nil else { return nil }
    return "--now must be an RFC 3339 time like 2026-11-21T12:00:00Z, got \"\(now)\""
  }
}
