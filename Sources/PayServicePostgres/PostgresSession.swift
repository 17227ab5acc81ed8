import Foundation
import Synchronization
import Logging
import PayServiceCore
import PostgresNIO

/// A failed statement or connection, as the store sees it. `reason` is for the operator's log: the
/// server's SQLSTATE and message, or what happened to the connection; never bound values.
struct PostgresFailure: Error, CustomStringConvertible {
  var reason: String
  /// The connection is gone (closed, reset, timed out): whatever was open on it was rolled back.
  var connectionLost: Bool
  /// A deadlock or a lock wait past `lock_timeout`: the transaction may succeed when run again.
  var retryable: Bool
  /// An optimistic batch found that a row it decided on changed since it was read
  /// (`PostgresBatch.conflictState`): nothing of it was written.
  var conflict = false

  var description: String { reason }
}

/// One connection to the server, used synchronously from the store's thread: every statement is
/// sent and then waited for (the event loop runs on its own thread). A statement that takes longer
/// than `statementDeadline` closes the connection, so a server that stops answering cannot hang
/// the service.
final class PostgresSession {
  static let logger = Logger(label: "payservice.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
  static let statementDeadline: TimeInterval = 30

  let connection: PostgresConnection

  private init(connection: PostgresConnection) {
    self.connection = connection
  }

  /// Connects and authenticates. The session commits synchronously (`synchronous_commit = on`,
  /// whatever the server's default: a commit is on the server's disk before it is answered) and
  /// waits at most `lockTimeout` for another transaction's locks, like SQLite's busy timeout.
  static func connect(
    to url: PostgresURL, on eventLoop: any EventLoop, id: Int, lockTimeout: TimeInterval
  ) throws(PostgresFailure) -> PostgresSession {
    do {
      let tls: PostgresConnection.Configuration.TLS
      switch url.tls {
      case .disable: tls = .disable
      case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
      }
      var configuration = PostgresConnection.Configuration(
        host: url.host, port: url.port, username: url.user, password: url.password, database: url.database, tls: tls)
      configuration.options.connectTimeout = .seconds(5)
      configuration.options.additionalStartupParameters = [
        ("application_name", "payservice"),
        ("synchronous_commit", "on"),
        ("lock_timeout", "\(Int(lockTimeout * 1000))"),
        ("TimeZone", "UTC"),
      ]
      let connection = try PostgresConnection.connect(
        on: eventLoop, configuration: configuration, id: id, logger: logger
      ).wait()
      return PostgresSession(connection: connection)
    } catch {
      throw failure(error)
    }
  }

  var isClosed: Bool { connection.isClosed }

  func close() {
    try? connection.close().wait()
  }

  /// Runs one statement and returns its rows and row count. Waits at most `statementDeadline`:
  /// past it the connection is closed and the statement counts as lost with it.
  @discardableResult
  func run(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws(PostgresFailure) -> PostgresQueryResult {
    if connection.isClosed {
      throw PostgresFailure(reason: "the connection to the server was lost", connectionLost: true, retryable: false)
    }
    let done = DispatchSemaphore(value: 0)
    let outcome = OutcomeBox()
    connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: Self.logger).whenComplete { result in
      outcome.result = result
      outcome.ready.store(true, ordering: .releasing)
      done.signal()
    }
    if Self.spinning.mayPoll() { outcome.awaitBriefly() }
    guard done.wait(timeout: .now() + Self.statementDeadline) == .success, let result = outcome.result else {
      let _: EventLoopFuture<Void> = connection.close()
      throw PostgresFailure(
        reason: "no answer from the server within \(Int(Self.statementDeadline)) s", connectionLost: true,
        retryable: false)
    }
    switch result {
    case .success(let rows): return rows
    case .failure(let error): throw Self.failure(error)
    }
  }

  /// How long a statement's caller polls for the answer before it sleeps (`OutcomeBox.awaitBriefly`).
  static let pollNanoseconds: UInt64 = 2_000_000

  /// Whether statements poll: the process's sessions share it.
  static let spinning = PollingPolicy()

  /// Polling pays while the machine has a processor to spare: then it saves the wake-up, and costs
  /// nobody anything. When more threads are ready to run than there are processors (several
  /// billing runs at once beside the server, on a small machine), a polling thread takes the
  /// processor the server or another process needs, and every answer comes later. So every
  /// `checkEvery` statements the process reads how many threads are ready to run on the machine
  /// (`/proc/loadavg`'s fourth field, the reader included): more than the processors, it stops
  /// polling; at most half of them, it polls again. Where the count cannot be read it polls.
  final class PollingPolicy: Sendable {
    static let checkEvery = 64
    private let statements = Atomic<Int>(0)
    private let polling = Atomic<Bool>(true)
    private let processors = max(ProcessInfo.processInfo.activeProcessorCount, 1)

    func mayPoll() -> Bool {
      if statements.add(1, ordering: .relaxed).newValue % Self.checkEvery == 0, let ready = Self.readyThreads() {
        if ready > processors {
          polling.store(false, ordering: .relaxed)
        } else if ready * 2 <= processors {
          polling.store(true, ordering: .relaxed)
        }
      }
      return polling.load(ordering: .relaxed)
    }

    /// The threads ready to run on the machine now (`/proc/loadavg`: "0.42 0.30 0.25 3/140 5123").
    static func readyThreads() -> Int? {
      let fd = Foundation.open("/proc/loadavg", O_RDONLY)
      guard fd >= 0 else { return nil }
      defer { _ = Foundation.close(fd) }
      var buffer = [UInt8](repeating: 0, count: 128)
      let count = buffer.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
      guard count > 0 else { return nil }
      let fields = buffer[..<count].split(separator: UInt8(ascii: " "))
      guard fields.count >= 4, let slash = fields[3].firstIndex(of: UInt8(ascii: "/")) else { return nil }
      return Int(String(decoding: fields[3][..<slash], as: UTF8.self))
    }
  }

  /// Hands a query's result from the event loop to the waiting thread (the semaphore orders the
  /// write before the read).
  private final class OutcomeBox: @unchecked Sendable {
    let ready = Atomic<Bool>(false)
    var result: Result<PostgresQueryResult, any Error>?

    /// Polls for the answer for up to `pollNanoseconds`, yielding the CPU between looks. Most
    /// statements are answered within that on a local network, and waking a thread that slept
    /// costs more than a round trip to the server (measured here: 150 to 350 µs more per
    /// statement in a virtual machine); yielding lets the server and other processes run.
    func awaitBriefly() {
      let deadline = DispatchTime.now().uptimeNanoseconds + PostgresSession.pollNanoseconds
      while !ready.load(ordering: .acquiring) && DispatchTime.now().uptimeNanoseconds < deadline {
        sched_yield()
      }
    }
  }

  /// The number of rows a statement changed.
  func changes(_ sql: String, _ binds: PostgresBindings) throws(PostgresFailure) -> Int {
    try run(sql, binds).metadata.rows ?? 0
  }

  /// What went wrong, without the statement's bound values.
  static func failure(_ error: any Error) -> PostgresFailure {
    guard let error = error as? PSQLError else {
      return PostgresFailure(reason: "\(error)", connectionLost: true, retryable: false)
    }
    if let info = error.serverInfo {
      let state = info[.sqlState] ?? "?????"
      let message = info[.message] ?? "server error"
      // 40P01 deadlock, 55P03 lock timeout, 40001 serialization failure; 57P0x: the server is
      // shutting down or terminated this session, 08xxx: connection exceptions.
      let lost = state.hasPrefix("57P") || state.hasPrefix("08")
      return PostgresFailure(
        reason: "\(message) (SQLSTATE \(state))", connectionLost: lost || error.code == .serverClosedConnection,
        retryable: ["40P01", "55P03", "40001"].contains(state), conflict: state == PostgresBatch.conflictState)
    }
    var reason: String
    switch error.code {
    case .serverClosedConnection, .uncleanShutdown: reason = "the server closed the connection"
    case .clientClosedConnection: reason = "the connection was closed (no answer within the deadline, or shut down)"
    case .connectionError: reason = "cannot connect"
    case .sslUnsupported: reason = "the server does not support TLS (sslmode=require)"
    case .unsupportedAuthMechanism, .authMechanismRequiresPassword, .saslError:
      reason = "authentication failed (\(error.code)); give the password in the URL or PGPASSWORD"
    default: reason = "\(error.code)"
    }
    if let underlying = error.underlying { reason += ": \(Self.describe(underlying))" }
    return PostgresFailure(reason: reason, connectionLost: true, retryable: false)
  }

  /// An underlying NIO error in words (connection refused, host not found, timed out).
  private static func describe(_ error: any Error) -> String {
    if let error = error as? NIOConnectionError {
      if error.dnsAError != nil && error.dnsAAAAError != nil { return "the host name does not resolve" }
      if let first = error.connectionErrors.first {
        return "\(first.target.ipAddress ?? "?"): \(describe(first.error))"
      }
    }
    if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
    if error is ChannelError, case .connectTimeout = error as! ChannelError { return "timed out" }
    return "\(error)"
  }
}

extension PostgresRow {
  /// The row's columns as `types`. A mismatch names the column and the types, never the value (a
  /// cell may hold a contact or an order document, which must not reach the log).
  func columns<each Column: PostgresDecodable>(_ types: (repeat each Column).Type) throws(PostgresFailure)
    -> (repeat each Column)
  {
    do {
      return try decode(types)
    } catch let error as PostgresDecodingError {
      throw PostgresFailure(
        reason: "column \(error.columnName) (\(error.postgresType)) does not read as \(error.targetType): \(error.code)",
        connectionLost: false, retryable: false)
    } catch {
      throw PostgresFailure(reason: "a row does not read as expected", connectionLost: false, retryable: false)
    }
  }
}
