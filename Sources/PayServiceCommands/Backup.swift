import ArgumentParser
import Foundation
import PayServiceCore

/// `backup`: a consistent copy of a SQLite store while other processes use it (`SQLiteBackup`).
struct Backup: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "backup",
    abstract: "Copy a SQLite store into a new file while other payservice processes use it.",
    discussion: """
      The copy is the store as one commit left it (SQLite's online backup API); processes writing the \
      store meanwhile are not stopped. The store is opened read-only and never migrated. --to must \
      not exist: it is created readable and writable by this user alone (0600), as one self-contained \
      file. Exit 0 with a one-line summary on stderr; exit 2 with the reason. A PostgreSQL store is \
      backed up with pg_dump.
      """)

  @Option(help: "The SQLite store to copy.")
  var database: String = ServeSettings.defaultDatabase

  @Option(help: "The backup file to create; it must not exist.")
  var to: String

  func run() throws {
    // The URL is never quoted: it may hold a password.
    if PostgresURL.isPostgres(database) {
      ServeSettings.fail(
        "backup copies a SQLite store; back up a PostgreSQL store with pg_dump --format=custom and restore it with pg_restore")
    }
    if database == ":memory:" { ServeSettings.fail("--database :memory: is a throwaway store: there is nothing to back up") }
    do throws(SQLiteBackup.Problem) {
      let copy = try SQLiteBackup.copy(store: database, to: to)
      FileHandle.standardError.write(
        Data("payservice: backed up \(database) to \(to) (\(copy.bytes) bytes, schema \"\(copy.lastMigration)\")\n".utf8))
    } catch {
      ServeSettings.fail("\(error)")
    }
  }
}
