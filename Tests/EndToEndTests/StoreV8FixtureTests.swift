import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// A store written by an older release, opened by the built binary: every stored answer (orders,
/// declines, refunds, captures, cancels, a pending order) must come back byte for byte as that
/// release answered it. Fixtures/store-v8 holds a store written by the release at ae734a2 (schema
/// v8), as a SQLite file and as a pg_dump of the same store in PostgreSQL, with its replay recorded
/// from that release; its README says what it holds and what each request checks, its make.py how
/// it was made. Never re-record it with a later release.
@Suite("Store upgrade from the v8 fixture (ae734a2)")
struct StoreV8FixtureTests {
  static let fixture = TestPaths.packageRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/store-v8")
  /// The replay's clock: after every token the store holds expired (stored answers hold past expiry).
  static let now = "2026-11-21T15:00:00Z"
  /// Stock on hand in the fixture, as the release that wrote it reports it (order P's pending
  /// attempt holds two mugs).
  static let stock = ["clock": 8, "lamp": 21, "mug": 95, "pen": 1000, "notebook": 2]

  /// Stock on hand by sku, from a listProducts response line.
  static func stockListed(_ line: Substring) throws -> [String: Int] {
    let response = try JSONParser.parse(String(line))
    let products = try #require(response["result"]?["products"]?.arrayValue, "\(line)")
    var stock: [String: Int] = [:]
    for product in products {
      let sku = try #require(product["sku"]?.stringValue)
      guard case .number(let quantity)? = product["quantityOnHand"], let count = Int(quantity) else {
        Issue.record("no whole quantityOnHand in \(product.compact)")
        continue
      }
      stock[sku] = count
    }
    return stock
  }

  /// Runs the replay on `database` twice (the first run upgrades the store, the second opens the
  /// upgraded one): each must answer responses.jsonl byte for byte, write nothing to stderr, and
  /// list the fixture's stock before and after.
  static func replayTwice(on database: String, backend: StoreBackend) throws {
    let requests = try Data(contentsOf: fixture.appendingPathComponent("requests.jsonl"))
    let golden = try Data(contentsOf: fixture.appendingPathComponent("responses.jsonl"))
    let arguments = [
      "--config", fixture.appendingPathComponent("config.yaml").path, "--database", database, "--now", now,
      "--back-office", "--quiet",
    ]
    for run in 1...2 {
      let result = try PayserviceProcess.run(arguments, stdin: requests)
      #expect(result.status == 0, "\(backend) run \(run): \(result.stderr)")
      #expect(result.stderr == "", "\(backend) run \(run)")
      if result.stdout != golden {
        let got = result.stdoutText.split(separator: "\n", omittingEmptySubsequences: false)
        let want = String(decoding: golden, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let index =
          zip(got, want).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(got.count, want.count)
        Issue.record(
          """
          \(backend) run \(run): output differs from Fixtures/store-v8/responses.jsonl at line \(index + 1)
            got:  \(index < got.count ? String(got[index]) : "<end>")
            want: \(index < want.count ? String(want[index]) : "<end>")
          """)
      }
      let listed = result.stdoutText.split(separator: "\n").filter { $0.contains(#""result":{"products":"#) }
      #expect(listed.count == 2, "\(backend) run \(run)")
      for line in listed { #expect(try stockListed(line) == stock, "\(backend) run \(run)") }
    }
    #expect(try backend.open(database).stock() == stock)
  }

  @Test("a v8 SQLite store answers the replay exactly as the release that wrote it did, opened once and again")
  func sqlite() throws {
    let original = Self.fixture.appendingPathComponent("store.sqlite").path
    // One self-contained file: its WAL was checkpointed before it was committed.
    #expect(!FileManager.default.fileExists(atPath: original + "-wal"))
    #expect(!FileManager.default.fileExists(atPath: original + "-shm"))
    // A copy, 0600 (git checks the fixture out 0644).
    let database = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    try FileManager.default.copyItem(atPath: original, toPath: database)
    #expect(chmod(database, 0o600) == 0)
    try Self.replayTwice(on: database, backend: .sqlite)
  }

  @Test(
    "a v8 PostgreSQL store (the fixture's pg_dump, loaded with psql) answers the same replay, opened once and again",
    .enabled(if: StoreBackend.serverURL != nil, "\(StoreBackend.skipMessage)"))
  func postgres() throws {
    let database = try StoreBackend.postgres.freshDatabase()
    let url = try PostgresURL(database, environment: ProcessInfo.processInfo.environment)
    // psql from PATH, the password in its environment (never on a command line).
    let psql = Process()
    psql.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    psql.arguments = [
      "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-1", "-f", Self.fixture.appendingPathComponent("store.pg.sql").path,
    ]
    var environment = ProcessInfo.processInfo.environment
    environment["PGHOST"] = url.host
    environment["PGPORT"] = String(url.port)
    environment["PGUSER"] = url.user
    environment["PGDATABASE"] = url.database
    environment["PGPASSWORD"] = url.password ?? environment["PGPASSWORD"]
    psql.environment = environment
    let errors = TestPaths.temporaryDirectory().appendingPathComponent("psql.stderr")
    _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
    psql.standardInput = FileHandle.nullDevice
    psql.standardOutput = FileHandle.nullDevice
    psql.standardError = try FileHandle(forWritingTo: errors)
    try psql.run()
    psql.waitUntilExit()
    #expect(
      psql.terminationStatus == 0,
      "psql could not load store.pg.sql: \(String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self))")
    try #require(psql.terminationStatus == 0)
    try Self.replayTwice(on: database, backend: .postgres)
  }
}
