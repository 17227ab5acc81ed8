import Foundation
import PayServiceTestSupport
import Testing

@testable import PayServiceCore

/// A store file holds contacts: the database and its -wal and -shm are created 0600, an existing
/// database readable by others is made 0600, and files that someone else could have written (or
/// that lead elsewhere) are refused at open, before SQLite reads or adopts them.
@Suite("SQLite store files")
struct SQLiteFileTests {
  static let rule =
    "each of a store's files (the database, its -wal and -shm) must be a regular file owned by the user running payservice and writable by it alone"

  /// The permission bits of `path` itself (a symbolic link is not followed); nil when absent.
  static func mode(_ path: String) -> mode_t? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    return status.st_mode & 0o7777
  }

  /// A store at `path`, created, used and closed (its -wal and -shm are gone again).
  static func makeStore(_ path: String) throws {
    let store = try SQLiteStore(path: path)
    try store.seedStock(TestConfig.load().catalog)
  }

  /// Why opening `path` fails: the store error's text; nil when it opens.
  static func refusal(_ path: String) -> String? {
    do {
      _ = try SQLiteStore(path: path)
      return nil
    } catch {
      return "\(error)"
    }
  }

  static func touch(_ path: String, mode: mode_t) {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    precondition(fd >= 0, "cannot create \(path)")
    fchmod(fd, mode)
    close(fd)
  }

  @Test("a new store, its -wal and -shm are created 0600, whatever the umask")
  func newFilesArePrivate() throws {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("new.sqlite").path
    let store = try SQLiteStore(path: path)
    try store.seedStock(TestConfig.load().catalog)
    #expect(Self.mode(path) == 0o600)
    #expect(Self.mode(path + "-wal") == 0o600)
    #expect(Self.mode(path + "-shm") == 0o600)
  }

  @Test("a store file's connection: synchronous FULL, a checkpoint every 10,000 pages, a 64 MiB page cache")
  func connectionSettings() throws {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("settings.sqlite").path
    let store = try SQLiteStore(path: path)
    let settings = try store.dbQueue.read { db in
      try ["synchronous", "wal_autocheckpoint", "cache_size", "journal_mode"].map { name in
        try String.fetchOne(db, sql: "PRAGMA \(name)") ?? "none"
      }
    }
    #expect(settings == ["2", "10000", "-65536", "wal"])
  }

  @Test("an existing database, -wal or -shm of this user that others may read is made 0600 at open")
  func readableFilesAreTightened() throws {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("old.sqlite").path
    try Self.makeStore(path)
    #expect(chmod(path, 0o644) == 0)
    // A -wal and -shm left by a crash of an older release (empty ones are valid).
    Self.touch(path + "-wal", mode: 0o644)
    Self.touch(path + "-shm", mode: 0o604)
    let store = try SQLiteStore(path: path)
    #expect(try store.stock()["clock"] == 10)
    #expect(Self.mode(path) == 0o600)
    #expect(Self.mode(path + "-wal") == 0o600)
    #expect(Self.mode(path + "-shm") == 0o600)
  }

  @Test("a symbolic link at the database path, or at its -wal or -shm, is refused and left alone")
  func symbolicLinks() throws {
    let directory = TestPaths.temporaryDirectory().path
    let real = directory + "/real.sqlite"
    try Self.makeStore(real)
    let link = directory + "/link.sqlite"
    #expect(symlink(real, link) == 0)
    #expect(Self.refusal(link) == "cannot open the store \(link): \(link) is a symbolic link; \(Self.rule)")
    // A link to nothing yet: SQLite would create the file it names.
    let dangling = directory + "/dangling.sqlite"
    #expect(symlink(directory + "/elsewhere.sqlite", dangling) == 0)
    #expect(Self.refusal(dangling) == "cannot open the store \(dangling): \(dangling) is a symbolic link; \(Self.rule)")
    #expect(Self.mode(directory + "/elsewhere.sqlite") == nil)
    for suffix in ["-wal", "-shm"] {
      #expect(symlink(directory + "/elsewhere" + suffix, real + suffix) == 0)
      #expect(Self.refusal(real) == "cannot open the store \(real): \(real)\(suffix) is a symbolic link; \(Self.rule)")
      #expect(Self.mode(directory + "/elsewhere" + suffix) == nil)
      #expect(unlink(real + suffix) == 0)
    }
    #expect(Self.refusal(real) == nil)
  }

  @Test("a database, -wal or -shm writable by its group or others is refused, its mode unchanged")
  func writableByOthers() throws {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("shared.sqlite").path
    try Self.makeStore(path)
    Self.touch(path + "-wal", mode: 0o666)
    #expect(
      Self.refusal(path)
        == "cannot open the store \(path): \(path)-wal is writable by its group or others (mode 0666); \(Self.rule)")
    #expect(Self.mode(path + "-wal") == 0o666)
    #expect(unlink(path + "-wal") == 0)
    Self.touch(path + "-shm", mode: 0o620)
    #expect(
      Self.refusal(path)
        == "cannot open the store \(path): \(path)-shm is writable by its group or others (mode 0620); \(Self.rule)")
    #expect(unlink(path + "-shm") == 0)
    #expect(chmod(path, 0o664) == 0)
    #expect(
      Self.refusal(path) == "cannot open the store \(path): \(path) is writable by its group or others (mode 0664); \(Self.rule)")
    #expect(Self.mode(path) == 0o664)
  }

  @Test("a database, -wal or -shm owned by another user is refused", .enabled(if: geteuid() == 0, "needs root to give a file away"))
  func ownedByAnother() throws {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("theirs.sqlite").path
    try Self.makeStore(path)
    for suffix in ["-wal", "-shm"] {
      Self.touch(path + suffix, mode: 0o600)
      #expect(chown(path + suffix, 65534, 65534) == 0)
      #expect(
        Self.refusal(path)
          == "cannot open the store \(path): \(path)\(suffix) is owned by uid 65534, not by uid 0 running payservice; \(Self.rule)")
      #expect(unlink(path + suffix) == 0)
    }
    #expect(chown(path, 65534, 65534) == 0)
    #expect(
      Self.refusal(path)
        == "cannot open the store \(path): \(path) is owned by uid 65534, not by uid 0 running payservice; \(Self.rule)")
  }
}
