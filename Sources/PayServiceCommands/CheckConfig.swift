import ArgumentParser
import Foundation
import PayServiceCore

struct CheckConfig: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "check-config",
    abstract: "Validate the configuration and print a summary; exit 2 when invalid or when serve would not start.")

  @Option(help: ArgumentHelp(ServeSettings.help("--config")))
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
    ServeSettings.merchantTokens(for: loaded)?.shutdown()
  }
}
