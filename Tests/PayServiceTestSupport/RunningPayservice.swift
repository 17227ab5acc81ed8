import Foundation
import PayServiceCore

/// The binary started with pipes, for interactive and streaming tests.
public final class RunningPayservice: @unchecked Sendable {
  public let process = Process()
  public let stdin = Pipe()
  public let stdout = Pipe()
  public let stderr = Pipe()

  /// - Parameter environment: the process's environment; nil: this process's.
  /// - Parameter directory: the process's working directory; nil: this process's.
  public init(_ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil) throws {
    process.executableURL = URL(fileURLWithPath: TestPaths.payserviceBinary)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    var environment = environment ?? ProcessInfo.processInfo.environment
    if environment[IdentifierKey.pinVariable] == nil { environment[IdentifierKey.pinVariable] = TestConfig.identifierKey.hex }
    process.environment = environment
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
  }

  /// Writes a line with write(2), ignoring a closed pipe (the test process ignores SIGPIPE).
  public func send(_ line: String) {
    signal(SIGPIPE, SIG_IGN)
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(stdin.fileHandleForWriting.fileDescriptor, $0.baseAddress, $0.count) }
  }

  /// Waits until the process has read everything written to its stdin (the pipe holds no unread
  /// byte: FIONREAD on Linux counts them from either end); false after `timeout` seconds.
  public func waitUntilInputRead(timeout: TimeInterval = 10) -> Bool {
    let fd = stdin.fileHandleForWriting.fileDescriptor
    let deadline = Date().addingTimeInterval(timeout)
    var unread: Int32 = 0
    while ioctl(fd, UInt(FIONREAD), &unread) == 0 && unread > 0 {
      guard Date() < deadline else { return false }
      usleep(1000)
    }
    return unread == 0
  }

  /// Sends a line and reads its answer; throws when none comes within `timeout` seconds.
  public func ask(_ line: String, timeout: TimeInterval = 10) throws -> String {
    send(line)
    guard let answer = readLine(timeout: timeout) else { throw NoAnswer(line: line) }
    return answer
  }

  public struct NoAnswer: Error {
    public let line: String
  }

  /// Closes stdin and waits for the process to end.
  public func finish() {
    try? stdin.fileHandleForWriting.close()
    _ = waitForExit()
  }

  /// Reads one response line, failing after `timeout` seconds.
  public func readLine(timeout: TimeInterval = 10) -> String? {
    readLine(from: stdout, timeout: timeout)
  }

  /// Reads one log line from stderr, failing after `timeout` seconds.
  public func readLogLine(timeout: TimeInterval = 10) -> String? {
    readLine(from: stderr, timeout: timeout)
  }

  private func readLine(from pipe: Pipe, timeout: TimeInterval) -> String? {
    var buffer = Data()
    let fd = pipe.fileHandleForReading.fileDescriptor
    let deadline = Date().addingTimeInterval(timeout)
    var byte: UInt8 = 0
    while Date() < deadline {
      var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&pfd, 1, 100) > 0 else { continue }
      guard read(fd, &byte, 1) == 1 else { return nil }
      if byte == UInt8(ascii: "\n") { return String(decoding: buffer, as: UTF8.self) }
      buffer.append(byte)
    }
    return nil
  }

  public func waitForExit(timeout: TimeInterval = 10) -> Int32? {
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { usleep(10_000) }
    if process.isRunning {
      process.terminate()
      return nil
    }
    return process.terminationStatus
  }
}

