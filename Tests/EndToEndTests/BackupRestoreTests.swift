import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// README, "Running it", "Backups and restore": a store backed up while another payservice holds it
/// open (having just written to it), then restored, answers the README's sessions exactly as the
/// original store does: byte for byte, with the same stock. SQLite through `payservice backup`,
/// PostgreSQL through `pg_dump --format=custom` and `pg_restore --no-owner`.
@Suite("Backup and restore")
struct BackupRestoreTests {
  static let now = "2026-11-21T12:00:00Z"
  static let config = TestPaths.path("config.yaml")

  /// The README's sessions in the order they run on one store: the back office's first, since its
  /// processOrder carries the charge token a fresh store issues first; then the checkout's.
  static let sessions: [(name: String, requests: String, arguments: [String])] = [
    ("back-office", "examples/back-office.jsonl", ["--back-office"]),
    ("checkout", "examples/checkout.jsonl", []),
  ]

  /// The lines of each session that issue a new charge token when the session runs again
  /// (authorizePayment: "id":1 of back-office.jsonl, "id":"pay" of checkout.jsonl); every other
  /// answer of a second run is the first run's, byte for byte: processOrder and refundOrder are
  /// answered from the store, and nothing more is sold or restocked.
  static let newTokenLines = [[0], [7]]

  /// Runs the sessions on `database`: each exits 0 and writes nothing on stderr. Their stdout.
  static func runSessions(on database: String, _ label: String) throws -> [String] {
    try sessions.map { session in
      let result = try PayserviceProcess.run(
        ["--config", config, "--database", database, "--now", now, "--quiet"] + session.arguments,
        stdin: try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent(session.requests)))
      #expect(result.status == 0, "\(label), \(session.name): \(result.stderr)")
      #expect(result.stderr == "", "\(label), \(session.name)")
      return result.stdoutText
    }
  }

  /// Stock on hand by sku, from the listProducts answer of back-office.jsonl ("id":4).
  static func listedStock(_ output: String) throws -> [String: Int] {
    let line = try #require(output.split(separator: "\n").first { $0.hasPrefix(#"{"jsonrpc":"2.0","id":4,"#) })
    return try StoreV8FixtureTests.stockListed(line)
  }

  /// The whole check on one backend. The README's sessions run on `original`; a payservice then
  /// authorizes a payment on it (a write, in the WAL on SQLite) and stays open while `backUp`
  /// copies the store; `restore` makes the restored store and returns its `--database`. The
  /// sessions then run again on the restored store and on the original: the same bytes from both.
  static func check(
    _ backend: StoreBackend, original: String, backUp: () throws -> Void, restore: () throws -> String
  ) throws {
    let first = try runSessions(on: original, "\(backend) first run")
    let golden = try String(
      contentsOf: TestPaths.packageRoot.appendingPathComponent(
        "Tests/EndToEndTests/Golden/back-office-example.responses.jsonl"), encoding: .utf8)
    #expect(first[0] == golden, "\(backend): the back office's session on a fresh store is the README's")

    let holder = try RunningPayservice(["--config", config, "--database", original, "--now", now, "--quiet"])
    let pay = try #require(
      try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("examples/checkout.jsonl"), encoding: .utf8)
        .split(separator: "\n").first { $0.contains(#""method":"authorizePayment""#) })
    let answer = try holder.ask(String(pay))
    #expect(answer.contains(#""result":{"status":"success""#), "\(answer)")
    if backend == .sqlite {
      // What the holder wrote is still in the WAL, not in the database file: `cp` of the file
      // alone would copy a store without it.
      #expect(((try? FileManager.default.attributesOfItem(atPath: original + "-wal")[.size] as? Int) ?? 0) > 0)
    }
    try backUp()
    holder.finish()
    #expect(holder.process.terminationStatus == 0)

    let restored = try restore()
    let fromRestored = try runSessions(on: restored, "\(backend) restored")
    let fromOriginal = try runSessions(on: original, "\(backend) original, again")
    for (index, session) in sessions.enumerated() {
      #expect(fromRestored[index] == fromOriginal[index], "\(backend), \(session.name): restored and original differ")
      let before = first[index].split(separator: "\n", omittingEmptySubsequences: false)
      let after = fromRestored[index].split(separator: "\n", omittingEmptySubsequences: false)
      #expect(before.count == after.count, "\(backend), \(session.name)")
      let changed = zip(before, after).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
      #expect(changed == newTokenLines[index], "\(backend), \(session.name): lines that differ from the first run")
      for line in changed { #expect(after[line].contains(#""result":{"status":"success""#), "\(after[line])") }
    }
    let stock = try listedStock(first[0])
    #expect(stock == ["clock": 9, "lamp": 25, "mug": 99, "notebook": 3])
    #expect(try listedStock(fromRestored[0]) == stock)
    #expect(try backend.open(restored).stock() == stock)
    #expect(try backend.open(original).stock() == stock)
  }

  @Test("a SQLite store backed up with payservice backup while another process holds it open, restored, answers as the original")
  func sqlite() throws {
    let directory = TestPaths.temporaryDirectory()
    let original = directory.appendingPathComponent("store.sqlite").path
    let backup = directory.appendingPathComponent("backup.sqlite").path
    let live = directory.appendingPathComponent("live")
    try FileManager.default.createDirectory(at: live, withIntermediateDirectories: false)
    let restored = live.appendingPathComponent("store.sqlite").path
    try Self.check(
      .sqlite, original: original,
      backUp: {
        let result = try PayserviceProcess.run(["backup", "--database", original, "--to", backup])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        let attributes = try FileManager.default.attributesOfItem(atPath: backup)
        let bytes = try #require(attributes[.size] as? Int)
        #expect(
          result.stderr
            == "payservice: backed up \(original) to \(backup) (\(bytes) bytes, schema \"\(StoreSchema.migrations.last!)\")\n"
        )
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // One self-contained file.
        for suffix in ["-wal", "-shm", "-journal"] {
          #expect(!FileManager.default.fileExists(atPath: backup + suffix), "\(suffix)")
        }
      },
      restore: {
        // README: every process stopped, no -wal or -shm left beside the store's name, the backup
        // copied into place and made 0600.
        for suffix in ["-wal", "-shm"] { #expect(!FileManager.default.fileExists(atPath: restored + suffix)) }
        try FileManager.default.copyItem(atPath: backup, toPath: restored)
        #expect(chmod(restored, 0o600) == 0)
        return restored
      })
  }

  @Test("payservice backup refuses what it cannot copy, with the reason and exit 2")
  func refusals() throws {
    let directory = TestPaths.temporaryDirectory()
    let store = directory.appendingPathComponent("store.sqlite").path
    let made = try PayserviceProcess.run(["--config", Self.config, "--database", store, "--now", Self.now, "--quiet"])
    #expect(made.status == 0)
    let existing = directory.appendingPathComponent("existing.sqlite").path
    #expect(FileManager.default.createFile(atPath: existing, contents: Data("keep".utf8)))
    let plain = directory.appendingPathComponent("plain").path
    #expect(FileManager.default.createFile(atPath: plain, contents: Data("not a database".utf8)))
    #expect(chmod(plain, 0o600) == 0)
    let fresh = directory.appendingPathComponent("fresh.sqlite").path
    let cases: [(arguments: [String], stderr: String)] = [
      (
        ["--database", store, "--to", existing],
        "payservice: the backup \(existing) already exists; payservice backup never overwrites a file: give a new name\n"
      ),
      (
        ["--database", "postgres://payservice:s3cret@db.internal/shop", "--to", fresh],
        "payservice: backup copies a SQLite store; back up a PostgreSQL store with pg_dump --format=custom and restore it with pg_restore\n"
      ),
      (
        ["--database", directory.appendingPathComponent("missing.sqlite").path, "--to", fresh],
        "payservice: cannot open the store \(directory.appendingPathComponent("missing.sqlite").path): No such file or directory\n"
      ),
      (["--database", plain, "--to", fresh], "payservice: cannot open the store \(plain): file is not a database\n"),
      (
        ["--database", ":memory:", "--to", fresh],
        "payservice: --database :memory: is a throwaway store: there is nothing to back up\n"
      ),
      (
        ["--database", store, "--to", directory.appendingPathComponent("no/such/dir.sqlite").path],
        "payservice: cannot create the backup \(directory.appendingPathComponent("no/such/dir.sqlite").path): No such file or directory\n"
      ),
    ]
    for (arguments, stderr) in cases {
      let result = try PayserviceProcess.run(["backup"] + arguments)
      #expect(result.status == 2, "\(arguments)")
      #expect(result.stdout.isEmpty, "\(arguments)")
      #expect(result.stderr == stderr)
      #expect(!FileManager.default.fileExists(atPath: fresh), "\(arguments)")
    }
    #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep")
  }

  @Test("payservice backup copies an older store as it is: opened read-only, never migrated")
  func olderStore() throws {
    let directory = TestPaths.temporaryDirectory()
    let store = directory.appendingPathComponent("store.sqlite").path
    try FileManager.default.copyItem(
      atPath: StoreV8FixtureTests.fixture.appendingPathComponent("store.sqlite").path, toPath: store)
    #expect(chmod(store, 0o600) == 0)
    let before = try Data(contentsOf: URL(fileURLWithPath: store))
    let backup = directory.appendingPathComponent("backup.sqlite").path
    let result = try PayserviceProcess.run(["backup", "--database", store, "--to", backup])
    #expect(result.status == 0, "\(result.stderr)")
    let bytes = try #require(try FileManager.default.attributesOfItem(atPath: backup)[.size] as? Int)
    #expect(
      result.stderr == "payservice: backed up \(store) to \(backup) (\(bytes) bytes, schema \"\(StoreSchema.migrations[7])\")\n")
    #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
  }

  @Test(
    "a PostgreSQL store dumped with pg_dump --format=custom while another process holds it open, restored with pg_restore, answers as the original",
    .enabled(if: StoreBackend.serverURL != nil, "\(StoreBackend.skipMessage)"))
  func postgres() throws {
    let original = try StoreBackend.postgres.freshDatabase()
    let dump = TestPaths.temporaryDirectory().appendingPathComponent("store.dump").path
    try Self.check(
      .postgres, original: original,
      backUp: { try Self.postgresTool(["pg_dump", "--format=custom", "--file=\(dump)"], database: original) },
      restore: {
        let restored = try StoreBackend.postgres.freshDatabase()
        try Self.postgresTool(["pg_restore", "--no-owner", "--exit-on-error"], database: restored, arguments: [dump])
        return restored
      })
  }

  /// Runs a PostgreSQL client tool from PATH on `database` (a `--database` URL): the connection in
  /// its environment (the password never on a command line). It must exit 0 and write nothing on
  /// stderr.
  static func postgresTool(_ command: [String], database: String, arguments: [String] = []) throws {
    let url = try PostgresURL(database, environment: ProcessInfo.processInfo.environment)
    let tool = Process()
    tool.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    tool.arguments = command + ["--dbname=\(url.database)"] + arguments
    var environment = ProcessInfo.processInfo.environment
    environment["PGHOST"] = url.host
    environment["PGPORT"] = String(url.port)
    environment["PGUSER"] = url.user
    environment["PGPASSWORD"] = url.password ?? environment["PGPASSWORD"]
    tool.environment = environment
    let errors = TestPaths.temporaryDirectory().appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
    tool.standardInput = FileHandle.nullDevice
    tool.standardOutput = FileHandle.nullDevice
    tool.standardError = try FileHandle(forWritingTo: errors)
    try tool.run()
    tool.waitUntilExit()
    let stderr = String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self)
    #expect(tool.terminationStatus == 0, "\(command[0]): \(stderr)")
    #expect(stderr == "", "\(command[0])")
    try #require(tool.terminationStatus == 0)
  }
}
