import ArgumentParser
import Foundation
import PayServiceCore

/// `payservice`: the merchant side of an Apple Pay checkout, as JSON-RPC 2.0 over stdio.
struct PayService: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "payservice",
    abstract: "Answer the merchant side of an Apple Pay checkout: line-delimited JSON-RPC 2.0 on stdin/stdout.",
    version: PayServiceVersion.current,
    subcommands: [
      Serve.self, CheckConfig.self, Call.self, StockCommand.self, StripeCommand.self, BillingCommand.self, PendingCommand.self, Erase.self, Retention.self,
      Backup.self,
    ],
    defaultSubcommand: Serve.self
  )
}

/// The options every command that answers requests takes: config, store and clock.
struct ServiceOptions: ParsableArguments {
  @Option(help: ArgumentHelp(ServeSettings.help("--config")))
  var config: String = ServeSettings.defaultConfig

  @Option(help: ArgumentHelp(ServeSettings.help("--database")))
  var database: String = ServeSettings.defaultDatabase

  @Option(help: ArgumentHelp(ServeSettings.help("--now")))
  var now: String?

  @Flag(help: ArgumentHelp(ServeSettings.help("--back-office")))
  var backOffice = false

  func validate() throws {
    if let problem = ServeSettings.problem(now: now) { throw ValidationError(problem) }
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

/// The `payservice` command line. The common start (`payservice [serve] --config … --database …`)
/// is read from `ServeSettings.options` without ArgumentParser, which discovers its options by
/// reflection at a cost that would more than double a one-request start (docs/performance.md);
/// anything else, and any invalid value, goes through ArgumentParser, whose `serve` reads the same
/// table.
public enum PayServiceCommandLine {
  public static func main(_ arguments: [String]) {
    if let settings = ServeSettings.parse(arguments) {
      settings.run()
    } else {
      PayService.mainQuotingNoUserInfo(arguments)
    }
  }
}
