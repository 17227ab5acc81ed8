import Foundation

/// The files of a SQLite store: the database and its `-wal` and `-shm`. They hold contacts, so
/// they are this user's alone.
///
/// - A new database is created 0600: the umask is 077 while SQLite creates it. SQLite gives the
///   `-wal` and `-shm` it creates the database's own mode, so they are 0600 too.
/// - `check` looks at each file that exists without following links (`lstat`), before SQLite
///   reads anything and again once it has opened them. A symbolic link (which could lead the store
///   elsewhere), a file of another user, or one its group or others may write (whose content
///   someone else may have made, a `-wal` pre-created in a shared directory say) is refused; a file
///   of this user that others may only read (0644: stores of earlier releases) is made 0600.
enum SQLiteFiles {
  /// What every one of a store's files must be, as messages say it.
  static let rule =
    "each of a store's files (the database, its -wal and -shm) must be a regular file owned by the user running payservice and writable by it alone"

  /// The database at `path` and its -wal and -shm, those that exist: refused (`cannotOpen`,
  /// naming `path` as the store and the first file at fault) unless each is a regular file of this
  /// process's effective user that its group and others cannot write; one they can read is made
  /// 0600. A file that cannot be looked at is left to SQLite, which reports it when it opens.
  static func check(_ path: String) throws(StoreError) {
    for file in [path, path + "-wal", path + "-shm"] {
      var status = stat()
      guard lstat(file, &status) == 0 else { continue }
      func refuse(_ why: String) -> StoreError {
        .cannotOpen(location: path, reason: "\(file) \(why); \(rule)")
      }
      let type = status.st_mode & mode_t(S_IFMT)
      if type == mode_t(S_IFLNK) { throw refuse("is a symbolic link") }
      if type != mode_t(S_IFREG) { throw refuse("is not a regular file") }
      let user = geteuid()
      if status.st_uid != user { throw refuse("is owned by uid \(status.st_uid), not by uid \(user) running payservice") }
      let permissions = status.st_mode & 0o7777
      if permissions & 0o022 != 0 {
        throw refuse("is writable by its group or others (mode \(octal(permissions)))")
      }
      if permissions & 0o044 != 0 && chmod(file, 0o600) != 0 {
        let reason = String(cString: strerror(errno))
        throw .cannotOpen(location: path, reason: "\(file) is readable by its group or others and cannot be made 0600: \(reason)")
      }
    }
  }

  /// `mode` as four octal digits: 0644.
  static func octal(_ mode: mode_t) -> String {
    let digits = String(mode, radix: 8)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
  }

  /// Serializes changes of the umask, which is the process's: two stores opening at once on two
  /// threads would otherwise restore each other's.
  private static let umaskLock = NSLock()

  /// Runs `body`, which creates the store's files, with the umask 077: whatever it creates is 0600.
  static func creatingPrivately<T>(_ body: () throws -> T) rethrows -> T {
    umaskLock.lock()
    defer { umaskLock.unlock() }
    let previous = umask(0o077)
    defer { umask(previous) }
    return try body()
  }
}
