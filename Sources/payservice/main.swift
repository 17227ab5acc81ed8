import ArgumentParser
import Foundation
import PayServiceAppStore
import PayServiceApplePay
import PayServiceCore
import PayServicePostgres
import PayServiceStripe

/// `payservice`: the merchant side of an Apple Pay checkout, as JSON-RPC 2.0 over stdio.
struct PayService: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "payservice",
    abstract: "Answer the merchant side of an Apple Pay checkout: line-delimited JSON-RPC 2.0 on stdin/stdout.",
    version: PayServiceVersion.current,
    subcommands: [
      Serve.self, CheckConfig.self, Call.self, StockCommand.self, StripeCommand.self, BillingCommand.self, Erase.self, Retention.self,
      Backup.self,
    ],
    defaultSubcommand: Serve.self
  )
}

/// The options every command that answers requests takes: config, store and clock.
struct ServiceOptions: ParsableArguments {
  @Option(help: "The store configuration file.")
  var config: String = ServeSettings.defaultConfig

  @Option(
    help: """
      The order store: a SQLite file (:memory: for a throwaway store), or a PostgreSQL server as \
      postgres://user:password@host:port/dbname (the password may come from PGPASSWORD instead).
      """)
  var database: String = ServeSettings.defaultDatabase

  @Option(help: "Pin the service clock to this RFC 3339 time (for tests and replays).")
  var now: String?

  @Flag(help: ArgumentHelp(ServeSettings.backOfficeHelp))
  var backOffice = false

  func validate() throws {
    if let problem = ServeSettings.problem(now: now) { throw ValidationError(problem) }
  }
}

/// `serve`: its options are declared once, in `ServeSettings.options`, and read by
/// `ServeSettings.read`, here and on the direct path that skips ArgumentParser at start.
struct Serve: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "serve", abstract: "Serve requests from stdin until EOF (the default command).",
    usage: "payservice [serve] [<options>]", discussion: ServeSettings.optionsHelp)

  @Argument(parsing: .allUnrecognized, help: ArgumentHelp(visibility: .private))
  var arguments: [String] = []

  func validate() throws {
    if case .failure(let problem) = ServeSettings.read(arguments) { throw ValidationError(problem.message) }
  }

  func run() throws {
    try ServeSettings.read(arguments).get().run()
  }
}

/// One option of `serve`: its name, the name of its value (nil for a flag), its help, and how it
/// sets the settings (false: the value does not convert).
struct ServeOption: Sendable {
  let name: String
  let value: String?
  let help: String
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

  static let backOfficeHelp = """
    Also serve the back-office methods (captureOrder, cancelOrder, refundOrder, listOrders), which \
    move money back. Without it they do not exist for this process: never give it to a shopper-facing one.
    """

  /// Every option of `serve`, in the order `serve --help` lists them.
  static let options: [ServeOption] = [
    ServeOption(name: "--config", value: "path", help: "The store configuration file (default: config.yaml).") {
      $0.config = $1
      return true
    },
    ServeOption(
      name: "--database", value: "store",
      help: """
        The order store: a SQLite file (:memory: for a throwaway store), or a PostgreSQL server as \
        postgres://user:password@host:port/dbname (the password may come from PGPASSWORD instead). \
        Default: payservice.sqlite.
        """
    ) {
      $0.database = $1
      return true
    },
    ServeOption(name: "--now", value: "time", help: "Pin the service clock to this RFC 3339 time (for tests and replays).") {
      $0.now = $1
      return true
    },
    ServeOption(name: "--max-line-bytes", value: "bytes", help: "Longest accepted request line in bytes (default: 1048576).") {
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
    ServeOption(name: "--back-office", value: nil, help: backOfficeHelp) { settings, _ in
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
      for word in option.help.split(separator: " ") {
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

  /// Serves until EOF. Returns (closing the store) when the store was used; exits at once otherwise.
  func run() {
    // From here on fd 1 is stderr: only the response writer holds the real stdout.
    let responses = StdoutGuard.install()
    signal(SIGPIPE, SIG_IGN)
    // First, so that a SIGHUP (a reload) or SIGTERM that comes while the store opens is kept for the
    // server loop rather than ending the process.
    let stopSignal = StopSignal.install()
    // An existing store (or a throwaway one, or a server) is opened while the config is read; a new
    // store file is only created once the config is known to be valid. A throwaway store is only
    // waited for when a request first needs it.
    let location = ServeSettings.location(database)
    let now = self.now
    let open = { @Sendable () throws(StoreError) -> any Store in try ServeSettings.open(location, now: now) }
    let opening: StoreOpening?
    switch location {
    case .postgres: opening = StoreOpening(open)
    // A throwaway store is opened only once the server first waits for input (or a request needs
    // it): a start that answers what is already on stdin and ends never pays for its migrations.
    case .sqlite(let path) where path == ":memory:": opening = StoreOpening(deferred: true, open)
    case .sqlite(let path): opening = access(path, F_OK) == 0 ? StoreOpening(open) : nil
    }
    let loaded: Config
    do {
      loaded = try ConfigLoader.load(path: config)
    } catch {
      ServeSettings.fail("invalid config:\n\(error)")
    }
    let storeSource: StoreSource
    if database == ":memory:", let opening {
      storeSource = StoreSource(opening: opening) { store in try store.seedStock(loaded.catalog) }
    } else {
      do {
        let store = try opening?.wait() ?? open()
        try store.seedStock(loaded.catalog)
        storeSource = StoreSource(store)
      } catch {
        ServeSettings.fail("\(error)")
      }
    }
    let clock = ServiceClock(pinned: now.flatMap(RFC3339.parse))
    let log = RequestLog(level: quiet ? .warnings : .requests, timestamps: logTimestamps)
    let checks = ServeSettings.startChecks(for: loaded, now: clock.now())
    if let problem = checks.problems.first { ServeSettings.fail(problem) }
    for warning in checks.warnings { log.warning(warning) }
    if !quiet { log.info("config \(config) (\(loaded.digest)) took effect") }
    log.flush()
    let gateway = ServeSettings.gateway(for: loaded)
    let sessions = ServeSettings.merchantSessions(for: loaded)
    let appStore = ServeSettings.appStoreServer(for: loaded)
    // SIGHUP and reloadConfig load the file again, with the checks this start made.
    let reloader = ConfigReloader(path: config) { config in
      ServeSettings.startChecks(for: config, now: clock.now()).problems
    }
    let context = ServiceContext(
      config: loaded, storeSource: storeSource, clock: clock, gateway: gateway, merchantSessions: sessions,
      appStoreServer: appStore, reloader: reloader, backOffice: backOffice)
    if gateway != nil {
      // Work a previous process left pending (its gateway's answer lost to a crash or a timeout)
      // is resolved before the first request: sent again under the same keys.
      do {
        let sweep = try OperationRunner.sweep(context: context)
        if sweep.resolved + sweep.pending > 0 {
          log.warning("pending operations at start: \(sweep.resolved) resolved, \(sweep.pending) still pending")
        }
      } catch {
        log.warning("pending operations at start could not be resolved: \(error)")
      }
      log.flush()
    }
    let handler = RequestHandler(context: context, methods: .payservice(backOffice: backOffice), log: log)
    let server = Server(
      handler: handler, input: STDIN_FILENO, output: responses, maxLineBytes: maxLineBytes,
      stopSignal: stopSignal, log: log,
      threads: threads ?? (Server.availableProcessors > 1 ? 2 : 1), groupCommits: groupCommit)
    _ = server.run()
    log.flush()
    gateway?.shutdown()
    sessions?.shutdown()
    appStore?.shutdown()
    if !storeSource.wasUsed {
      // The throwaway store was never needed and may still be opening on its thread: there is
      // nothing to close, so end here rather than tear down under that thread's feet.
      fflush(nil)
      _exit(0)
    }
  }

  /// What a start with `config` at `now`, in this environment, checks beyond the config itself:
  /// problems stop it (exit 2), warnings are logged. `check-config` reports the same, so that it
  /// says "valid" only when `serve` would start.
  static func startChecks(for config: Config, now: Int64) -> (problems: [String], warnings: [String]) {
    var problems: [String] = []
    var warnings: [String] = []
    if let stripe = config.gateway.stripe, case .failure(let problem) = stripe.secretKey(
      environment: ProcessInfo.processInfo.environment)
    {
      problems.append("\(problem)")
    }
    if let settings = config.merchantSession {
      let subject = "applePay.merchantIdentityCertificate"
      switch settings.identity.validity(at: now) {
      case .valid: break
      case .expiresSoon(let days):
        warnings.append(
          "\(subject) expires in \(days) days (\(RFC3339.format(settings.identity.notValidAfter))): renew it in the Apple developer account")
      case .expired(let since):
        problems.append("\(subject): expired at \(since); merchant sessions would fail. Renew it in the Apple developer account")
      case .notYetValid(let until):
        problems.append("\(subject): not valid before \(until); check the clock or use the current certificate")
      }
    }
    return (problems, warnings)
  }

  /// The remote gateway the config names (nil for the sandbox), with its secret key from the
  /// environment (`startChecks` made sure there is one that fits `gateway.mode`).
  static func gateway(for config: Config) -> GatewayCalls? {
    guard let stripe = config.gateway.stripe else { return nil }
    switch stripe.secretKey(environment: ProcessInfo.processInfo.environment) {
    case .failure(let problem): fail("\(problem)")
    case .success(let key):
      let webhookSecrets = StripeWebhookSignature.secrets(
        in: ProcessInfo.processInfo.environment[stripe.webhookSecretVariable] ?? "")
      return GatewayCalls(
        gateway: StripeGateway(settings: stripe, secretKey: key), maxConcurrent: stripe.maxConcurrentCalls,
        webhookSecrets: webhookSecrets)
    }
  }

  /// The merchant session client for the config's merchant identity (nil without one; its
  /// certificate's dates are `startChecks`').
  static func merchantSessions(for config: Config) -> MerchantSessionCalls? {
    guard let settings = config.merchantSession else { return nil }
    let subject = "applePay.merchantIdentityCertificate"
    do {
      let client = try AppleMerchantSessionClient(
        identity: settings.identity, trustRootsPEM: settings.trustRootsPEM,
        connectTimeoutSeconds: settings.connectTimeoutSeconds, requestTimeoutSeconds: settings.requestTimeoutSeconds)
      return MerchantSessionCalls(client: client)
    } catch {
      fail("\(subject): cannot be used for TLS with merchantIdentityKey: \(error)")
    }
  }

  /// The App Store Server API client for the config's in-app purchase key (nil without
  /// `appStore.api`). A client that cannot be made (trust roots that do not read, say; the key was
  /// checked with the config) stops the start (exit 2); the message never holds the key.
  static func appStoreServer(for config: Config) -> AppStoreServerCalls? {
    guard let settings = config.appStore?.api else { return nil }
    do {
      return AppStoreServerCalls(api: try AppStoreServerClient(settings: settings))
    } catch {
      fail("appStore.api: \(error)")
    }
  }

  /// Opens the store at `location`. A store this creates gets the identifier key
  /// `PAYSERVICE_ID_KEY` pins, else with the clock pinned (`--now`: transcripts and tests, never a
  /// shop) the published transcript key, so that a session on a new store repeats byte for byte,
  /// else a random one (the store's default, made only when it creates the store).
  static func open(_ location: StoreLocation, now: String?) throws(StoreError) -> any Store {
    let transcript = now != nil && (IdentifierKey.pinInEnvironment ?? "").isEmpty
    let key: IdentifierKey? = transcript ? .transcript : nil
    switch location {
    case .sqlite(let path): return try SQLiteStore(path: path, newIdentifierKey: key)
    case .postgres(let url): return try PostgresStore(url: url, newIdentifierKey: key)
    }
  }

  /// Where `--database` points; a malformed PostgreSQL URL stops the start (exit 2).
  static func location(_ database: String) -> StoreLocation {
    do {
      return try StoreLocation.parse(database)
    } catch {
      fail("invalid PostgreSQL URL for --database: \(error)")
    }
  }

  /// Opens the store `--database` names, or stops the start (exit 2) with the reason.
  static func openStore(_ database: String, now: String?) -> any Store {
    do throws(StoreError) {
      return try open(location(database), now: now)
    } catch {
      fail("\(error)")
    }
  }

  /// A start that cannot go on (invalid config, store that cannot be opened): exit 2 with the reason.
  static func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("payservice: \(message)\n".utf8))
    Foundation.exit(2)
  }
}

struct CheckConfig: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "check-config",
    abstract: "Validate the configuration and print a summary; exit 2 when invalid or when serve would not start.")

  @Option(help: "The store configuration file.")
  var config: String = ServeSettings.defaultConfig

  @Option(
    help: """
      Also show this store's stock beside the config's seed counts (a SQLite file that exists, or a \
      postgres:// URL). The store is opened as serve opens it (its migrations applied).
      """)
  var database: String?

  func run() throws {
    let loaded: Config
    do {
      loaded = try ConfigLoader.load(path: config)
    } catch {
      ServeSettings.fail("invalid config:\n\(error)")
    }
    print(ConfigSummary.text(loaded, path: config), terminator: "")
    if let database {
      if case .sqlite(let path) = ServeSettings.location(database), path == ":memory:" || access(path, F_OK) != 0 {
        fflush(nil)
        ServeSettings.fail("no store at \(path): give --database the store serve uses")
      }
      let store = ServeSettings.openStore(database, now: nil)
      do {
        print(ConfigSummary.stockText(loaded, levels: try store.stockLevels(), store: URLText.withoutUserInfo(database)), terminator: "")
      } catch {
        fflush(nil)
        ServeSettings.fail("\(error)")
      }
    }
    // What serve checks at start, in this environment and at this time.
    let checks = ServeSettings.startChecks(for: loaded, now: Int64(Date().timeIntervalSince1970))
    for warning in checks.warnings { FileHandle.standardError.write(Data("payservice: warning: \(warning)\n".utf8)) }
    guard checks.problems.isEmpty else {
      fflush(nil)
      ServeSettings.fail("serve would not start:\n" + checks.problems.map { "  \($0)" }.joined(separator: "\n"))
    }
    // The merchant identity made into a TLS client, as serve makes it (a key that does not fit stops it).
    fflush(nil)
    ServeSettings.merchantSessions(for: loaded)?.shutdown()
  }
}

struct Call: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "call",
    abstract: "Send one request and print its result (exit 0), or its error object (exit 1).",
    discussion: """
      The result JSON goes to stdout. A JSON-RPC error prints its message on stderr and the error \
      object on stdout, and exits 1; an invalid config or store exits 2.
      """)

  @Argument(help: "The method, e.g. computeSummaryItems (--list prints them all).")
  var method: String?

  @Argument(help: "The params as JSON text, or - to read them from stdin. None: the request has no params.")
  var params: String?

  @OptionGroup var service: ServiceOptions

  @Flag(help: "Indent the JSON printed.")
  var pretty = false

  @Flag(help: "Print the method names, one per line, and exit.")
  var list = false

  func validate() throws {
    if !list && method == nil { throw ValidationError("give a METHOD (or --list to see them)") }
  }

  func run() throws {
    let responses = StdoutGuard.install()
    let code = answer(to: responses)
    Foundation.exit(code)
  }

  /// Answers and returns the exit status; the store is closed when this returns (a config or store
  /// that fails exits 2 before anything is open).
  private func answer(to responses: Int32) -> Int32 {
    if list {
      Call.write(
        MethodRegistry.methods(backOffice: service.backOffice).map { $0.name + "\n" }.joined(), to: responses)
      return 0
    }
    var paramsText = params
    if params == "-" {
      paramsText = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    }
    return OneShotSession(service, backOffice: service.backOffice).answer(
      method: method ?? "", paramsText: paramsText, pretty: pretty, to: responses)
  }

  static func write(_ text: String, to fd: Int32) {
    var text = text
    text.withUTF8 { writeAll(UnsafeRawBufferPointer($0), to: fd) }
  }
}

extension PayService {
  /// `main()`, except that an error message quotes every argument that holds a URL's user info
  /// without it: an argument ArgumentParser did not expect may be a --database URL with its
  /// password. Help, version and completion scripts print as they are.
  static func mainQuotingNoUserInfo(_ arguments: [String]) -> Never {
    do {
      var command = try parseAsRoot(arguments)
      try command.run()
      Foundation.exit(0)
    } catch {
      let code = exitCode(for: error)
      guard code != .success else { exit(withError: error) }
      var message = fullMessage(for: error)
      for argument in arguments where argument.contains("@") {
        message = message.replacingOccurrences(of: argument, with: URLText.withoutUserInfo(argument))
      }
      FileHandle.standardError.write(Data((message + "\n").utf8))
      Foundation.exit(code.rawValue)
    }
  }
}

// The common start (`payservice --config … --database …`) is read without ArgumentParser;
// anything else, and any invalid value, goes through ArgumentParser.
let arguments = Array(CommandLine.arguments.dropFirst())
if let settings = ServeSettings.parse(arguments) {
  settings.run()
} else {
  PayService.mainQuotingNoUserInfo(arguments)
}
