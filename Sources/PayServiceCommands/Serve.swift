import ArgumentParser
import Foundation
import PayServiceCore

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

extension ServeSettings {
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
    let clients = RemoteClients(for: loaded, clock: clock)
    // SIGHUP and reloadConfig load the file again, with the checks this start made.
    let reloader = ConfigReloader(path: config) { config in
      ServeSettings.startChecks(for: config, now: clock.now()).problems
    }
    let context = clients.context(
      config: loaded, storeSource: storeSource, clock: clock, reloader: reloader, backOffice: backOffice)
    if clients.mayHavePendingWork {
      // Work a previous process left pending (its gateway's answer lost to a crash or a timeout,
      // a Wallet order push or a merchant token's unlink not sent) is resolved before the first
      // request: sent again under the same keys.
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
    clients.shutdown()
    if !storeSource.wasUsed {
      // The throwaway store was never needed and may still be opening on its thread: there is
      // nothing to close, so end here rather than tear down under that thread's feet.
      fflush(nil)
      _exit(0)
    }
  }
}
