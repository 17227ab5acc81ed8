import Foundation
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

  /// Starts the binary with pipes for interactive tests.
  final class Running {
    let process = Process()
    let stdin = Pipe()
    let stdout = Pipe()
    let stderr = Pipe()

    init(_ arguments: [String]) throws {
      process.executableURL = URL(fileURLWithPath: TestPaths.payserviceBinary)
      process.arguments = arguments
      process.standardInput = stdin
      process.standardOutput = stdout
      process.standardError = stderr
      try process.run()
    }

    /// Writes a line with write(2), ignoring a closed pipe (the test process ignores SIGPIPE).
    func send(_ line: String) {
      signal(SIGPIPE, SIG_IGN)
      let bytes = Array((line + "\n").utf8)
      _ = bytes.withUnsafeBytes { write(stdin.fileHandleForWriting.fileDescriptor, $0.baseAddress, $0.count) }
    }

    /// Reads one response line, failing after `timeout` seconds.
    func readLine(timeout: TimeInterval = 10) -> String? {
      var buffer = Data()
      let fd = stdout.fileHandleForReading.fileDescriptor
      let deadline = Date().addingTimeInterval(timeout)
      var byte: UInt8 = 0
      while Date() < deadline {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, 100) > 0 else { continue }
        guard read(fd, &byte, 1) == 1 else { return nil }
        if byte == UInt8(ascii: "\n") { return String(decoding: buffer, as: UTF8.self) }
        buffer.append(byte)
      }
      return nil
    }

    func waitForExit(timeout: TimeInterval = 10) -> Int32? {
      let deadline = Date().addingTimeInterval(timeout)
      while process.isRunning && Date() < deadline { usleep(10_000) }
      if process.isRunning {
        process.terminate()
        return nil
      }
      return process.terminationStatus
    }
  }

  @Test("an interactive client gets each answer without closing stdin")
  func interactive() throws {
    let running = try Running(["--config", Self.config, "--database", ":memory:"])
    running.send(Self.clockLine)
    #expect(running.readLine() == Self.clockAnswer)
    running.send(#"{"jsonrpc":"2.0","id":2,"method":"getOrder","params":{"orderId":"ord_x"}}"#)
    #expect(running.readLine() == #"{"jsonrpc":"2.0","id":2,"error":{"code":-32003,"message":"Order not found: ord_x"}}"#)
    try running.stdin.fileHandleForWriting.close()
    #expect(running.waitForExit() == 0)
  }

  @Test("SIGTERM and SIGINT stop the process with status 0 after answering what was read", arguments: [SIGTERM, SIGINT])
  func stopSignals(signal: Int32) throws {
    let running = try Running(["--config", Self.config, "--database", ":memory:"])
    running.send(Self.clockLine)
    #expect(running.readLine() == Self.clockAnswer)
    // A line the client has not finished (no LF yet) is not run when the stop arrives.
    let partial = Array(Self.clockLine.utf8)
    _ = partial.withUnsafeBytes { write(running.stdin.fileHandleForWriting.fileDescriptor, $0.baseAddress, $0.count) }
    usleep(200_000)
    kill(running.process.processIdentifier, signal)
    #expect(running.waitForExit() == 0)
    #expect(running.stdout.fileHandleForReading.readDataToEndOfFile().isEmpty)
  }

  @Test("a closed stdout ends the process quietly with status 0")
  func closedStdout() throws {
    let running = try Running(["--config", Self.config, "--database", ":memory:"])
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
