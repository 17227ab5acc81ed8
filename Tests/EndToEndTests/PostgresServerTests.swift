import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// What only a server store can go through: the server stopping and starting again under a running
/// payservice, a session ended by the server mid-request, and a server that cannot be reached or
/// refuses the password at start. Skipped without `PAYSERVICE_TEST_POSTGRES_URL`; the restart test
/// starts a cluster of its own (scripts/postgres-cluster.sh, so PostgreSQL's server programs must
/// be installed), since stopping the shared one would fail the tests running beside it.
@Suite("PostgreSQL server faults", .serialized)
struct PostgresServerTests {
  static let config = CrashSafetyTests.config
  static let items = CrashSafetyTests.items(1, sku: "clock")

  static func start(_ database: String) throws -> RunningPayservice {
    try RunningPayservice(["--config", config, "--database", database, "--now", "2026-11-21T12:00:00Z"])
  }

  /// Authorizes one clock and returns the processOrder line for it.
  static func authorizedOrder(_ running: RunningPayservice, id: Int) throws -> String {
    running.send(CrashSafetyTests.authorizeLine(id: id, items: items))
    let answer = try JSONParser.parse(try #require(running.readLine(timeout: 30)))
    let token = try #require(answer["result"]?["chargeToken"]?.stringValue, "\(answer.compact)")
    let amount = try #require(answer["result"]?["amount"]?.stringValue)
    return CrashSafetyTests.orderLine(id: id, token: token, amount: amount, items: items)
  }

  static func code(_ line: String?) throws -> String? {
    guard case .number(let code)? = try JSONParser.parse(try #require(line))["error"]?["code"] else { return nil }
    return code
  }

  static func status(_ line: String?) throws -> String? {
    try JSONParser.parse(try #require(line))["result"]?["status"]?.stringValue
  }

  @Test(
    "the server stops mid-session: requests get -32001 while it is down, the next one after it is back reconnects, nothing is lost",
    .enabled(if: StoreBackend.serverURL != nil, "\(StoreBackend.skipMessage)"))
  func serverRestart() throws {
    let directory = TestPaths.temporaryDirectory().path
    let port = 54_400 + Int(getpid() % 500)
    try TestPostgres.cluster("start", directory: directory, port: port)
    defer { try? TestPostgres.cluster("destroy", directory: directory, port: port) }
    let database = try TestPostgres.clusterURL(directory: directory, port: port)
    let running = try Self.start(database)
    let first = try Self.authorizedOrder(running, id: 1)
    running.send(first)
    #expect(try Self.status(running.readLine(timeout: 30)) == "succeeded")
    let second = try Self.authorizedOrder(running, id: 2)

    try TestPostgres.cluster("stop", directory: directory, port: port)
    running.send(second)
    #expect(try Self.code(running.readLine(timeout: 30)) == "-32001")
    running.send(#"{"jsonrpc":"2.0","id":"stock","method":"listProducts"}"#)
    #expect(try Self.code(running.readLine(timeout: 30)) == "-32001")
    // Pricing needs no store: answered while the server is down.
    running.send(#"{"jsonrpc":"2.0","id":"price","method":"computeSummaryItems","params":{"items":[{"sku":"clock"}]}}"#)
    #expect(try Self.code(running.readLine(timeout: 30)) == nil)

    try TestPostgres.cluster("start", directory: directory, port: port)
    running.send(second)
    let charged = running.readLine(timeout: 30)
    #expect(try Self.status(charged) == "succeeded", "\(charged ?? "no answer")")
    running.send(second)
    #expect(running.readLine(timeout: 30) == charged)  // replayed from the store, byte for byte
    try? running.stdin.fileHandleForWriting.close()
    #expect(running.waitForExit(timeout: 30) == 0)

    let store = try StoreBackend.postgres.open(database)
    #expect(try store.stockLedger()["clock"]! == (onHand: 8, sold: 2))
    #expect(try store.orderTotals().orders == 2)
  }

  @Test("the server ends the session while an order waits on a lock: that order gets -32001 and nothing, the next reconnects and succeeds",
    .enabled(if: StoreBackend.serverURL != nil, "\(StoreBackend.skipMessage)"))
  func sessionEndedInFlight() throws {
    let database = try StoreBackend.postgres.freshDatabase()
    let name = try #require(database.split(separator: "/").last.map(String.init))
    let running = try Self.start(database)
    let order = try Self.authorizedOrder(running, id: 1)

    // Another session holds the clock's stock row, so the order blocks inside its transaction.
    let blocker = try TestPostgres.connect(database: name)
    defer { try? blocker.close().wait() }
    try TestPostgres.query("BEGIN", on: blocker)
    try TestPostgres.query("SELECT sku FROM stock WHERE sku = 'clock' FOR UPDATE", on: blocker)
    running.send(order)
    // Wait until payservice's session is waiting for the lock, then end it from the server side.
    var waiting: [String?] = []
    for _ in 0..<100 where waiting.isEmpty {
      waiting = try TestPostgres.query(
        "SELECT pid::text FROM pg_stat_activity WHERE datname = '\(name)' AND application_name = 'payservice' AND wait_event_type = 'Lock'",
        on: blocker)
      if waiting.isEmpty { usleep(50_000) }
    }
    let pid = try #require(waiting.first ?? nil, "payservice never waited for the lock")
    try TestPostgres.query("SELECT pg_terminate_backend(\(pid))", on: blocker)
    #expect(try Self.code(running.readLine(timeout: 30)) == "-32001")
    try TestPostgres.query("ROLLBACK", on: blocker)

    running.send(order)
    #expect(try Self.status(running.readLine(timeout: 30)) == "succeeded")
    try? running.stdin.fileHandleForWriting.close()
    #expect(running.waitForExit(timeout: 30) == 0)
    let stderr = String(decoding: running.stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(stderr.contains("outcome=error(-32001)"))
    let store = try StoreBackend.postgres.open(database)
    #expect(try store.stockLedger()["clock"]! == (onHand: 9, sold: 1))
  }

  @Test("a server that cannot be reached or refuses the password stops the start: exit 2, the host and the reason, never the password",
    .enabled(if: StoreBackend.serverURL != nil, "\(StoreBackend.skipMessage)"))
  func startFailures() throws {
    let url = try TestPostgres.url()
    let request = Data(#"{"jsonrpc":"2.0","id":1,"method":"listProducts"}"#.utf8 + [0x0A])
    let secret = "s3cret-Pa55word"
    let refused = try PayserviceProcess.run(
      ["--config", Self.config, "--database", "postgres://\(url.user):\(secret)@127.0.0.1:1/shop"], stdin: request)
    #expect(refused.status == 2)
    #expect(refused.stdout.isEmpty)
    #expect(refused.stderr.contains("cannot open the store postgres://\(url.user)@127.0.0.1:1/shop: cannot connect"))
    #expect(refused.stderr.contains("Connection refused"), "\(refused.stderr)")

    let wrongPassword = try PayserviceProcess.run(
      ["--config", Self.config, "--database", "postgres://\(url.user):\(secret)@\(url.host):\(url.port)/\(url.database)"],
      stdin: request)
    #expect(wrongPassword.status == 2)
    #expect(wrongPassword.stdout.isEmpty)
    #expect(wrongPassword.stderr.contains("password authentication failed"), "\(wrongPassword.stderr)")
    #expect(wrongPassword.stderr.contains("\(url.host):\(url.port)"))
    for result in [refused, wrongPassword] {
      #expect(!result.stderr.contains(secret))
    }
  }

  @Test("a database written by a newer payservice stops the start: exit 2, nothing on stdout", arguments: StoreBackend.available)
  func newerStore(backend: StoreBackend) throws {
    let database = try backend.freshDatabase()
    _ = try backend.open(database)
    try backend.addMigrationFromTheFuture(database)
    let result = try PayserviceProcess.run(
      ["--config", Self.config, "--database", database], stdin: Data(#"{"jsonrpc":"2.0","id":1,"method":"listProducts"}"#.utf8 + [0x0A]))
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("was written by a newer payservice"), "\(result.stderr)")
  }

  @Test("the password may come from PGPASSWORD instead of the URL", .enabled(if: StoreBackend.serverURL != nil, "\(StoreBackend.skipMessage)"))
  func passwordFromEnvironment() throws {
    // A database of its own, so that the URL's database (the server's admin one) is not migrated.
    guard case .postgres(let url) = try StoreLocation.parse(try StoreBackend.postgres.freshDatabase()) else {
      Issue.record("a fresh PostgreSQL database is not a postgres:// URL")
      return
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: TestPaths.payserviceBinary)
    process.arguments = [
      "call", "listProducts", "--config", Self.config, "--database",
      "postgres://\(url.user)@\(url.host):\(url.port)/\(url.database)",
    ]
    process.environment = ["PGPASSWORD": url.password ?? ""]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(text.contains(#""sku":"clock""#))
  }
}
