import Foundation
import GRDB
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The process contract: exit statuses, stdout discipline, signals, closed pipes, interactivity.
@Suite("Process")
struct ProcessTests {
  static let config = TestConfig.yamlPath
  static let clockLine = #"{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{"items":[{"sku":"clock"}]}}"#
  static let clockAnswer =
    #"{"jsonrpc":"2.0","id":1,"result":{"currencyCode":"USD","shippingMethod":"free","summaryItems":[{"label":"Clock","amount":"50.00","type":"final"},{"label":"Shipping","amount":"0.00","type":"final"},{"label":"Tax","amount":"4.00","type":"final"},{"label":"Acme","amount":"54.00","type":"final"}]}}"#

  @Test("an invalid config exits 2 before reading input, naming file, line, column and field")
  func invalidConfig() throws {
    let directory = TestPaths.temporaryDirectory()
    let broken = directory.appendingPathComponent("broken.yaml")
    let yaml = TestConfig.yaml().replacingOccurrences(of: #"price: "19.99""#, with: #"price: "19.999""#)
      .replacingOccurrences(of: "transitDays: 2", with: "transitDay: 2")
    try yaml.write(to: broken, atomically: true, encoding: .utf8)
    let result = try PayserviceProcess.run(
      ["--config", broken.path, "--database", ":memory:"], stdin: Data((Self.clockLine + "\n").utf8))
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("\(broken.path):23:12: catalog[1].price: \"19.999\" has more than the currency's 2 decimal digits"))
    #expect(result.stderr.contains("\(broken.path):49:7: shipping.methods[1].transitDay: unknown key"))
    #expect(result.stderr.contains("shipping.methods[1].transitDays: is required"))
  }

  @Test("check-config prints a summary and exits 0, or lists problems and exits 2")
  func checkConfig() throws {
    let valid = try PayserviceProcess.run(["check-config", "--config", Self.config])
    #expect(valid.status == 0)
    #expect(valid.stdoutText.hasPrefix("\(Self.config): valid\nmerchant   Acme (merchant.com.example.acme), US, USD\n"))
    let missing = try PayserviceProcess.run(["check-config", "--config", "/nonexistent/config.yaml"])
    #expect(missing.status == 2)
    #expect(missing.stderr.contains("/nonexistent/config.yaml: cannot read the file"))
  }

  @Test("a store that cannot be opened exits 2 with the reason")
  func unopenableStore() throws {
    let directory = TestPaths.temporaryDirectory()
    let notADatabase = directory.appendingPathComponent("junk.sqlite")
    try Data(repeating: 0x41, count: 4096).write(to: notADatabase)
    let result = try PayserviceProcess.run(
      ["--config", Self.config, "--database", notADatabase.path], stdin: Data((Self.clockLine + "\n").utf8))
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("cannot open the store \(notADatabase.path)"))
    let noDirectory = try PayserviceProcess.run(["--config", Self.config, "--database", "/nonexistent/dir/store.sqlite"])
    #expect(noDirectory.status == 2)
    #expect(noDirectory.stdout.isEmpty)
    // A directory where the file should be: unreadable as a database (permission bits cannot be
    // tested here: the tests may run as root, which reads any file).
    let isDirectory = try PayserviceProcess.run(["--config", Self.config, "--database", directory.path])
    #expect(isDirectory.status == 2)
    #expect(isDirectory.stderr.contains("cannot open the store \(directory.path)"))
    // A store from a newer release: refused before any input is read.
    let newer = directory.appendingPathComponent("newer.sqlite").path
    try SQLiteStore(path: newer).dbQueue.write { db in
      try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')")
    }
    let refused = try PayserviceProcess.run(
      ["--config", Self.config, "--database", newer], stdin: Data((Self.clockLine + "\n").utf8))
    #expect(refused.status == 2)
    #expect(refused.stdout.isEmpty)
    #expect(refused.stderr.contains("was written by a newer payservice"))
  }

  @Test("a PostgreSQL URL is never quoted with its password: not when malformed, not when misplaced")
  func postgresPasswordNotQuoted() throws {
    let unencoded =
      "the part before the last '@' (user name and password) holds a '/', '?' or '#': percent-encode them there "
      + "(%2F, %3F, %23), and any '@' after the host (%40); expected postgres://user:password@host:port/dbname"
    for password in ["se/cr3t", "se?cr3t", "se#cr3t"] {
      let result = try PayserviceProcess.run(
        ["--config", Self.config, "--database", "postgres://app:\(password)@127.0.0.1:1/shop"],
        stdin: Data((Self.clockLine + "\n").utf8))
      #expect(result.status == 2)
      #expect(result.stdout.isEmpty)
      #expect(result.stderr == "payservice: invalid PostgreSQL URL for --database: \(unencoded)\n", "\(password)")
    }
    // The URL given where an option was expected: quoted without its user info.
    let misplaced = try PayserviceProcess.run(["--config", Self.config, "postgres://app:se/cr3t@127.0.0.1/shop"])
    #expect(misplaced.status != 0)
    #expect(misplaced.stderr.contains("unknown argument 'postgres://***@127.0.0.1/shop'"), "\(misplaced.stderr)")
    #expect(!misplaced.stderr.contains("cr3t"))
    for command in [["call", "listProducts", "{}"], ["check-config"]] {
      let extra = try PayserviceProcess.run(command + ["postgres://app:se/cr3t@127.0.0.1/shop", "--config", Self.config])
      #expect(extra.status == 64)
      #expect(extra.stderr.hasPrefix("Error: Unexpected argument 'postgres://***@127.0.0.1/shop'\n"), "\(extra.stderr)")
      #expect(!extra.stderr.contains("cr3t"))
    }
  }

  @Test("a throwaway store is opened and seeded at the first request that needs it")
  func throwawayStore() throws {
    let input = Self.clockLine + "\n" + #"{"jsonrpc":"2.0","id":2,"method":"listProducts"}"# + "\n"
    let throwaway = try PayserviceProcess.run(["--config", Self.config, "--database", ":memory:"], stdin: Data(input.utf8))
    let file = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    let stored = try PayserviceProcess.run(["--config", Self.config, "--database", file], stdin: Data(input.utf8))
    #expect(throwaway.status == 0 && stored.status == 0)
    #expect(throwaway.stdoutText == stored.stdoutText)
    let lines = throwaway.stdoutText.split(separator: "\n")
    #expect(lines.count == 2)
    #expect(String(lines[0]) == Self.clockAnswer)
    #expect(lines[1].hasPrefix(#"{"jsonrpc":"2.0","id":2,"result":{"products":[{"sku":"clock","name":"Clock","description":"Wooden wall clock","price":"50.00","quantityOnHand":10,"#))
    // A session that never needs the store ends without waiting for it, with everything answered.
    let pricingOnly = try PayserviceProcess.run(
      ["--config", Self.config, "--database", ":memory:"], stdin: Data((Self.clockLine + "\n").utf8))
    #expect(pricingOnly.status == 0)
    #expect(pricingOnly.stdoutText == Self.clockAnswer + "\n")
    #expect(pricingOnly.stderr.contains(#"id=1 method="computeSummaryItems""#))
  }

  @Test("stdout holds only responses; logs go to stderr without request data")
  func stdoutDiscipline() throws {
    let input = Self.clockLine + "\n" + #"{"jsonrpc":"2.0","id":2,"method":"selectShippingContact","params":{"items":[{"sku":"clock"}],"shippingContact":{"locality":"Secretville","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}}}"# + "\n"
    let result = try PayserviceProcess.run(["--config", Self.config, "--database", ":memory:"], stdin: Data(input.utf8))
    #expect(result.status == 0)
    let lines = result.stdoutText.split(separator: "\n")
    #expect(lines.count == 2)
    #expect(String(lines[0]) == Self.clockAnswer)
    #expect(result.stderr.contains(#"id=1 method="computeSummaryItems""#))
    #expect(result.stderr.contains(#"id=2 method="selectShippingContact""#))
    #expect(!result.stderr.contains("Secretville"))
    #expect(!result.stderr.contains("95014"))
  }

  @Test("an interactive client gets each answer without closing stdin")
  func interactive() throws {
    let running = try RunningPayservice(["--config", Self.config, "--database", ":memory:", "--back-office"])
    running.send(Self.clockLine)
    #expect(running.readLine() == Self.clockAnswer)
    running.send(#"{"jsonrpc":"2.0","id":2,"method":"getOrder","params":{"orderId":"ord_x"}}"#)
    #expect(running.readLine() == #"{"jsonrpc":"2.0","id":2,"error":{"code":-32003,"message":"Order not found: ord_x"}}"#)
    try running.stdin.fileHandleForWriting.close()
    #expect(running.waitForExit() == 0)
  }

  @Test("SIGTERM and SIGINT stop the process with status 0 after answering what was read", arguments: [SIGTERM, SIGINT])
  func stopSignals(signal: Int32) throws {
    let running = try RunningPayservice(["--config", Self.config, "--database", ":memory:"])
    running.send(Self.clockLine)
    #expect(running.readLine() == Self.clockAnswer)
    // A line the client has not finished (no LF yet) is not run when the stop arrives.
    let partial = Array(Self.clockLine.utf8)
    _ = partial.withUnsafeBytes { write(running.stdin.fileHandleForWriting.fileDescriptor, $0.baseAddress, $0.count) }
    // Signalled once the server has read the partial line (the pipe holds nothing unread).
    #expect(running.waitUntilInputRead())
    kill(running.process.processIdentifier, signal)
    #expect(running.waitForExit() == 0)
    #expect(running.stdout.fileHandleForReading.readDataToEndOfFile().isEmpty)
  }

  @Test("a closed stdout ends the process quietly with status 0")
  func closedStdout() throws {
    let running = try RunningPayservice(["--config", Self.config, "--database", ":memory:"])
    try running.stdout.fileHandleForReading.close()
    for _ in 0..<200 { running.send(Self.clockLine) }
    try running.stdin.fileHandleForWriting.close()
    #expect(running.waitForExit() == 0)
  }

  @Test("bad command-line values exit 64 (EX_USAGE) with a usage message")
  func badArguments() throws {
    let result = try PayserviceProcess.run(["--now", "yesterday", "--config", Self.config])
    #expect(result.status == 64)
    #expect(result.stderr.contains("--now must be an RFC 3339 time"))
  }
}
