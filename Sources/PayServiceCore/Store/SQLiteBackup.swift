import Foundation
import GRDB

/// A consistent copy of a SQLite store made while other processes read and write it
/// (`payservice backup`), with SQLite's online backup API.
///
/// - The store is opened read-only and never migrated: its files are checked as every store's are
///   (`SQLiteFiles.check`), and it must hold payservice's migrations table.
/// - Every page is copied in one step, inside one read transaction: the copy is the store as one
///   commit left it. In WAL mode readers do not block writers, so other processes keep selling
///   meanwhile (their later commits are not in the copy).
/// - The copy is a new file, created 0600 (refused if it, or a `-wal`, `-shm` or `-journal` beside
///   it, exists), checked with `PRAGMA quick_check`, switched to a rollback journal so that it is
///   one self-contained file, and fsync'ed with its directory. A copy that fails is removed.
public enum SQLiteBackup {
  /// What was copied.
  public struct Copy: Sendable, Equatable {
    /// The backup file's size.
    public var bytes: Int64
    /// The last migration the store had applied, by name (`StoreSchema.migrations`): the schema the
    /// copy holds.
    public var lastMigration: String
  }

  /// Why no backup was made; the message names the file at fault.
  public struct Problem: Error, CustomStringConvertible, Sendable, Equatable {
    public var description: String
  }

  /// Copies the store at `source` into the new file `destination`.
  public static func copy(
    store source: String, to destination: String, busyTimeout: TimeInterval = SQLiteStore.busyTimeout
  ) throws(Problem) -> Copy {
    var status = stat()
    guard lstat(source, &status) == 0 else {
      throw Problem(description: "cannot open the store \(source): \(String(cString: strerror(errno)))")
    }
    do {
      try SQLiteFiles.check(source)
    } catch {
      throw Problem(description: "\(error)")
    }
    for file in [destination, destination + "-wal", destination + "-shm", destination + "-journal"]
    where lstat(file, &status) == 0 {
      throw Problem(
        description: file == destination
          ? "the backup \(destination) already exists; payservice backup never overwrites a file: give a new name"
          : "\(file) exists (left by another SQLite database); remove it or give the backup another name")
    }
    // The name is claimed first (O_EXCL), 0600, so that nothing else is written in its place.
    let fd = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      throw Problem(description: "cannot create the backup \(destination): \(String(cString: strerror(errno)))")
    }
    close(fd)
    do {
      let copy = try copyPages(from: source, to: destination, busyTimeout: busyTimeout)
      try sync(destination)
      return copy
    } catch {
      for file in [destination, destination + "-journal", destination + "-wal", destination + "-shm"] { unlink(file) }
      throw error
    }
  }

  /// Opens both databases, copies every page, checks and closes the copy.
  private static func copyPages(from source: String, to destination: String, busyTimeout: TimeInterval) throws(Problem)
    -> Copy
  {
    var sourceConfiguration = Configuration()
    sourceConfiguration.readonly = true
    sourceConfiguration.busyMode = .timeout(busyTimeout)
    sourceConfiguration.label = "payservice.backup.source"
    let sourceQueue: DatabaseQueue
    do {
      // A read-only connection to a WAL store may still create its -shm: 0600 like the store's own.
      sourceQueue = try SQLiteFiles.creatingPrivately {
        try DatabaseQueue(path: source, configuration: sourceConfiguration)
      }
      let isStore = try sourceQueue.read { db in try db.tableExists("grdb_migrations") }
      guard isStore else {
        throw Problem(description: "cannot open the store \(source): it is not a payservice store (no grdb_migrations table)")
      }
    } catch let problem as Problem {
      throw problem
    } catch {
      throw Problem(description: "cannot open the store \(source): \(reason(error))")
    }
    var destinationConfiguration = Configuration()
    destinationConfiguration.busyMode = .timeout(busyTimeout)
    destinationConfiguration.label = "payservice.backup.destination"
    do {
      let destinationQueue = try SQLiteFiles.creatingPrivately {
        try DatabaseQueue(path: destination, configuration: destinationConfiguration)
      }
      do {
        try SQLiteFiles.creatingPrivately { try sourceQueue.backup(to: destinationQueue) }
      } catch {
        throw Problem(description: "cannot back up the store \(source) to \(destination): \(reason(error))")
      }
      try? sourceQueue.close()
      let lastMigration = try SQLiteFiles.creatingPrivately {
        try destinationQueue.writeWithoutTransaction { db -> String in
          let check = try String.fetchAll(db, sql: "PRAGMA quick_check")
          guard check == ["ok"] else {
            throw Problem(description: "the backup \(destination) failed its check: \(check.prefix(3).joined(separator: "; "))")
          }
          // The copy keeps the store's WAL mode in its header; as a rollback-journal database it is
          // one self-contained file (payservice switches a store to WAL when it opens it).
          _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE")
          return try String.fetchOne(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid DESC LIMIT 1") ?? ""
        }
      }
      try destinationQueue.close()
      var status = stat()
      guard stat(destination, &status) == 0 else {
        throw Problem(description: "the backup \(destination) is gone: \(String(cString: strerror(errno)))")
      }
      return Copy(bytes: Int64(status.st_size), lastMigration: lastMigration)
    } catch let problem as Problem {
      throw problem
    } catch {
      throw Problem(description: "cannot write the backup \(destination): \(reason(error))")
    }
  }

  /// fsyncs the file and the directory that holds its name.
  private static func sync(_ path: String) throws(Problem) {
    let parent = PathText.directory(of: path)
    let directory = parent.isEmpty ? "." : parent
    for (name, flags) in [(path, O_RDONLY), (directory, O_RDONLY | O_DIRECTORY)] {
      let fd = open(name, flags | O_CLOEXEC)
      guard fd >= 0, fsync(fd) == 0 else {
        let reason = String(cString: strerror(errno))
        if fd >= 0 { close(fd) }
        throw Problem(description: "cannot sync the backup \(path): \(reason)")
      }
      close(fd)
    }
  }

  /// SQLite's message for an error, or the error itself.
  private static func reason(_ error: any Error) -> String {
    if let error = error as? DatabaseError { return error.message ?? "SQLite error \(error.resultCode)" }
    return "\(error)"
  }
}
