import Foundation
import Logging
import PayServiceCore
import PayServicePostgres
import PostgresNIO

/// The store backends the store and end-to-end suites run against: SQLite always, PostgreSQL when
/// `PAYSERVICE_TEST_POSTGRES_URL` names a server (`.ci/run` starts one with
/// scripts/postgres-cluster.sh). Each test gets a fresh database of its own: a new file, or a new
/// database `payservice_test_…` created on the server (the URL's user needs CREATEDB).
public enum StoreBackend: String, Sendable, CaseIterable, CustomStringConvertible {
  case sqlite
  case postgres

  public static let serverURLVariable = "PAYSERVICE_TEST_POSTGRES_URL"

  /// The message of tests that are skipped without a server.
  public static let skipMessage =
    "PostgreSQL tests skipped: set \(serverURLVariable)=postgres://user:password@host:port/dbname (a user with CREATEDB) to run them; scripts/postgres-cluster.sh start DIR starts a throwaway server and prints its URL"

  public static var serverURL: String? {
    ProcessInfo.processInfo.environment[serverURLVariable].flatMap { $0.isEmpty ? nil : $0 }
  }

  /// The backends to run on here: SQLite, and PostgreSQL when a server is given.
  public static var available: [StoreBackend] { serverURL == nil ? [.sqlite] : [.sqlite, .postgres] }

  public var description: String { rawValue }

  /// A `--database` argument naming a new, empty store.
  public func freshDatabase() throws -> String {
    switch self {
    case .sqlite:
      return TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    case .postgres:
      let name = "payservice_test_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
      try TestPostgres.execute(#"CREATE DATABASE "\#(name)""#)
      var url = try TestPostgres.url()
      url.database = name
      return TestPostgres.text(of: url)
    }
  }

  /// Opens the store `database` (from `freshDatabase()`) in this process.
  public func open(_ database: String) throws -> any Store {
    switch try StoreLocation.parse(database) {
    case .sqlite(let path): return try SQLiteStore(path: path, newIdentifierKey: TestConfig.identifierKey)
    case .postgres(let url): return try PostgresStore(url: url, newIdentifierKey: TestConfig.identifierKey)
    }
  }

  /// A fresh store, open, with the catalog's stock.
  public func freshStore(config: Config) throws -> (store: any Store, database: String) {
    let database = try freshDatabase()
    let store = try open(database)
    try store.seedStock(config.catalog)
    return (store, database)
  }

  /// Records a migration from the future in `database`, as a newer payservice would have.
  public func addMigrationFromTheFuture(_ database: String) throws {
    let store = try open(database)
    switch self {
    case .sqlite:
      try (store as! SQLiteStore).dbQueue.write { db in
        try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')")
      }
    case .postgres:
      try TestPostgres.execute(
        "INSERT INTO payservice_migrations (identifier) VALUES ('v99: from the future')",
        database: (store as! PostgresStore).url.database)
    }
  }
}

/// Statements run on the test server outside payservice (creating databases, holding locks,
/// ending sessions), each on a connection of its own.
public enum TestPostgres {
  static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
  static let logger = Logger(label: "payservice.tests", factory: { _ in SwiftLogNoOpLogHandler() })

  public struct NoServer: Error, CustomStringConvertible {
    public var description: String { StoreBackend.skipMessage }
  }

  public static func url() throws -> PostgresURL {
    guard let text = StoreBackend.serverURL else { throw NoServer() }
    return try PostgresURL(text, environment: ProcessInfo.processInfo.environment)
  }

  /// The URL as `--database` text, password included.
  public static func text(of url: PostgresURL) -> String {
    let password = url.password.map { ":" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? ""
    return "postgres://\(url.user)\(password)@\(url.host):\(url.port)/\(url.database)"
  }

  /// A connection to the test server (its own database, or `database`).
  public static func connect(database: String? = nil) throws -> PostgresConnection {
    let url = try url()
    let configuration = PostgresConnection.Configuration(
      host: url.host, port: url.port, username: url.user, password: url.password, database: database ?? url.database,
      tls: .disable)
    return try PostgresConnection.connect(on: group.next(), configuration: configuration, id: 0, logger: logger).wait()
  }

  /// Runs `sql` and returns the first column of each row as text.
  @discardableResult
  public static func execute(_ sql: String, database: String? = nil) throws -> [String?] {
    let connection = try connect(database: database)
    defer { try? connection.close().wait() }
    return try query(sql, on: connection)
  }

  @discardableResult
  public static func query(_ sql: String, on connection: PostgresConnection) throws -> [String?] {
    let result = try connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).wait()
    return try result.rows.map { row in try row.first.flatMap { cell in try cell.decode(String?.self) } ?? nil }
  }

  /// Runs scripts/postgres-cluster.sh `command` (start, stop, destroy) on the cluster in `directory`:
  /// a server of the test's own, which it may stop and start without disturbing other tests.
  public static func cluster(_ command: String, directory: String, port: Int) throws {
    // posix_spawn and waitpid rather than Foundation's Process, whose waitUntilExit can miss the
    // exit of a script that leaves a daemon behind (the server pg_ctl starts). The script gets no
    // descriptor but 0-2: a server inheriting the write end of a payservice's stdin pipe would
    // keep that payservice from ever seeing EOF.
    let script = """
      for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
      exec '\(TestPaths.path("scripts/postgres-cluster.sh"))' \(command) '\(directory)' \(port) >/dev/null 2>&1 </dev/null
      """
    var pid: pid_t = 0
    let words: [String] = ["/bin/bash", "-c", script]
    let arguments: [UnsafeMutablePointer<CChar>?] = words.map { word in strdup(word) } + [nil]
    defer { arguments.forEach { free($0) } }
    guard posix_spawn(&pid, "/bin/bash", nil, nil, arguments, environ) == 0 else {
      throw StoreError.unavailable(reason: "cannot run postgres-cluster.sh")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    guard status == 0 else {
      throw StoreError.unavailable(reason: "postgres-cluster.sh \(command) failed (wait status \(status))")
    }
  }

  /// The URL of the cluster `cluster("start", directory:port:)` started.
  public static func clusterURL(directory: String, port: Int) throws -> String {
    let password = try String(contentsOfFile: directory + "/password", encoding: .utf8)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    return "postgres://payservice:\(password)@127.0.0.1:\(port)/postgres"
  }
}

extension TestConfig {
  /// A context on a fresh store of `backend`, seeded with the config's catalog.
  public static func context(config: Config = load(), backend: StoreBackend, now: Int64 = now, backOffice: Bool = false)
    throws -> ServiceContext
  {
    let (store, _) = try backend.freshStore(config: config)
    return ServiceContext(config: config, store: store, clock: ServiceClock(pinned: now), backOffice: backOffice)
  }
}
