import Foundation
import PayServiceCore

/// Where a crash test kills a payservice process (SIGKILL) during a gateway call: (a) after the
/// pending commit, before the call reaches the gateway; (b) after the gateway acted, before its
/// answer reached payservice; (c) after the last commit, before the answer reached the client.
public enum CrashPoint: String, CaseIterable, CustomStringConvertible, Sendable {
  case beforeCall, afterGatewayActed, afterCommit
  public var description: String { rawValue }
}

/// The processes of one shop in a crash test: the same arguments and environment each time, and
/// everything they wrote to stdout and stderr, searched for the secrets at the end.
public struct CrashHarness {
  public let arguments: [String]
  public let environment: [String: String]
  public let backend: StoreBackend
  public let database: String
  public var transcripts: [String] = []

  public init(arguments: [String], environment: [String: String], backend: StoreBackend, database: String) {
    self.arguments = arguments
    self.environment = environment
    self.backend = backend
    self.database = database
  }

  /// Runs one process to its end on `lines`: its exit status, stderr, and answers parsed.
  public mutating func run(_ lines: [String]) throws -> (status: Int32, stderr: String, answers: [JSONValue]) {
    let result = try PayserviceProcess.run(
      arguments, stdin: Data((lines.joined(separator: "\n") + "\n").utf8), environment: environment)
    transcripts += [result.stdoutText, result.stderr]
    return (result.status, result.stderr, try result.stdoutText.split(separator: "\n").map { try JSONParser.parse(String($0)) })
  }

  /// What came of a crash: whether the point was reached, and the killed process's exit status.
  public struct Crash {
    public var reached: Bool
    public var status: Int32?
  }

  /// Starts a process, sends `line` so that it stops at `point`, and kills it there (SIGKILL).
  /// For (a) and (b) the caller has injected a hold on `gate` at the gateway test server; the
  /// process is killed once a request waits there, and a request held after executing is then
  /// released (it has run; the server finishes with it). For (c) `done` tells from the store when
  /// the last commit happened: answers bigger than the pipe come first and nobody reads them, so
  /// the process records the work, then blocks writing, its answer still unsent.
  public mutating func crash(
    at point: CrashPoint, gate: StripeTestServer.Gate, line: String, done: (any Store) throws -> Bool
  ) throws -> Crash {
    let running = try RunningPayservice(arguments, environment: environment)
    var reached: Bool
    switch point {
    case .beforeCall, .afterGatewayActed:
      running.send(line)
      reached = gate.waitUntilReached(timeout: 60)
    case .afterCommit:
      let discover = #"{"jsonrpc":"2.0","id":"d","method":"rpc.discover"}"#
      running.send((Array(repeating: discover, count: 12) + [line]).joined(separator: "\n"))
      let store = try backend.open(database)
      let deadline = Date().addingTimeInterval(20)
      while try !done(store), Date() < deadline { usleep(20_000) }
      reached = try done(store)
    }
    kill(running.process.processIdentifier, SIGKILL)
    let status = running.waitForExit()
    // A request held before executing is dropped when its connection closes: it must never run.
    if point == .afterGatewayActed { gate.release() }
    transcripts.append(String(decoding: running.stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    return Crash(reached: reached, status: status)
  }

  /// Whether any output, or the store, holds one of `secrets`; nil when the store does not
  /// mention `held` (something it does hold: the search must find it, so its misses mean something).
  public func leaks(_ secrets: [String], held: String) throws -> [String]? {
    let store = try backend.open(database)
    guard try store.mentions(held) else { return nil }
    return try secrets.filter { secret in try transcripts.contains { $0.contains(secret) } || store.mentions(secret) }
  }
}
