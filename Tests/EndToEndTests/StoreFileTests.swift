import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Store files through the binary: created 0600, and a store whose files someone else could have
/// written, or that are symbolic links, stops the start (exit 2) with the file and the rule.
@Suite("Store files")
struct StoreFileTests {
  static let config = TestConfig.yamlPath
  static let rule =
    "each of a store's files (the database, its -wal and -shm) must be a regular file owned by the user running payservice and writable by it alone"
  static let listProducts = #"{"jsonrpc":"2.0","id":1,"method":"listProducts"}"#

  static func mode(_ path: String) -> mode_t? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    return status.st_mode & 0o7777
  }

  @Test("a store the binary creates is 0600, and so are its -wal and -shm while it serves")
  func created() throws {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("shop.sqlite").path
    let running = try RunningPayservice(["--config", Self.config, "--database", path, "--quiet"])
    running.send(Self.listProducts)
    #expect(running.readLine()?.hasPrefix(#"{"jsonrpc":"2.0","id":1,"result":{"products":"#) == true)
    #expect(Self.mode(path) == 0o600)
    #expect(Self.mode(path + "-wal") == 0o600)
    #expect(Self.mode(path + "-shm") == 0o600)
    try running.stdin.fileHandleForWriting.close()
    #expect(running.waitForExit() == 0)
    #expect(Self.mode(path) == 0o600)
  }

  @Test("a -wal writable by others, or a symbolic link as the store, exits 2 naming the file and the rule")
  func refused() throws {
    let directory = TestPaths.temporaryDirectory().path
    let path = directory + "/shop.sqlite"
    _ = try SQLiteStore(path: path)
    let fd = open(path + "-wal", O_WRONLY | O_CREAT | O_EXCL, 0o600)
    #expect(fd >= 0)
    fchmod(fd, 0o666)
    close(fd)
    let input = Data((Self.listProducts + "\n").utf8)
    let wal = try PayserviceProcess.run(["--config", Self.config, "--database", path], stdin: input)
    #expect(wal.status == 2)
    #expect(wal.stdout.isEmpty)
    #expect(
      wal.stderr
        == "payservice: cannot open the store \(path): \(path)-wal is writable by its group or others (mode 0666); \(Self.rule)\n")
    let link = directory + "/link.sqlite"
    #expect(symlink(path, link) == 0)
    let linked = try PayserviceProcess.run(["--config", Self.config, "--database", link], stdin: input)
    #expect(linked.status == 2)
    #expect(linked.stdout.isEmpty)
    #expect(linked.stderr == "payservice: cannot open the store \(link): \(link) is a symbolic link; \(Self.rule)\n")
    // call opens the store the same way.
    let called = try PayserviceProcess.run(["call", "listProducts", "--config", Self.config, "--database", link])
    #expect(called.status == 2)
    #expect(called.stderr == "payservice: cannot open the store \(link): \(link) is a symbolic link; \(Self.rule)\n")
  }

  @Test("a store and a config named by one character, in the working directory, open (no trap on the path)")
  func oneCharacterNames() throws {
    let directory = TestPaths.temporaryDirectory()
    try Data(contentsOf: URL(fileURLWithPath: Self.config)).write(to: directory.appendingPathComponent("c"))
    let served = try PayserviceProcess.run(
      ["--config", "c", "--database", "s", "--quiet"], stdin: Data(#"{"jsonrpc":"2.0","id":1,"method":"health"}"#.utf8 + [0x0A]),
      currentDirectory: directory)
    #expect(served.status == 0)
    #expect(served.stdoutText.hasPrefix(#"{"jsonrpc":"2.0","id":1,"result":{"status":"ok","config":"sha256:"#))
    #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("s").path))
    let backup = try PayserviceProcess.run(["backup", "--database", "s", "--to", "b"], currentDirectory: directory)
    #expect(backup.status == 0, "\(backup.stderr)")
  }
}

