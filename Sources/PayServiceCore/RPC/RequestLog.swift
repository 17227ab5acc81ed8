import Foundation

/// Operator log on stderr: one line per request with id, method, duration and outcome. Never params,
/// contacts or payment data. Lines are buffered and flushed with each batch of responses.
///
/// Not Sendable: each log belongs to the one thread or task that answers with it (the server
/// thread's writes to stderr; the second thread's collects lines that the server thread appends in
/// order).
public final class RequestLog {
  public enum Level: Int, Sendable { case quiet = 0, warnings = 1, requests = 2 }

  private let fd: Int32
  private let level: Level
  private var buffer = ByteBuffer(capacity: 1 << 16)
  /// Reused to render ids and method names as JSON.
  private var scratch = JSONWriter(capacity: 128)

  /// Whether each line starts with its RFC 3339 UTC time (`--log-timestamps`).
  let timestamps: Bool

  public init(fd: Int32 = STDERR_FILENO, level: Level = .requests, timestamps: Bool = false) {
    self.fd = fd
    self.level = level
    self.timestamps = timestamps
  }

  /// A log that only collects lines (for the second thread): `withCollected` hands them to the server's.
  init(collecting level: Level, timestamps: Bool) {
    self.fd = -1
    self.level = level
    self.timestamps = timestamps
  }

  var logLevel: Level { level }

  /// Whether `request` records anything (the caller can skip timing a request when it does not).
  var recordsRequests: Bool { level.rawValue >= Level.requests.rawValue }

  /// Bytes collected so far.
  var count: Int { buffer.count }

  /// The collected bytes.
  var collected: [UInt8] { buffer.bytes }

  /// Appends lines another log collected.
  func append(collected lines: UnsafeRawBufferPointer) {
    guard !lines.isEmpty else { return }
    if lines.count >= 1 << 14 && fd >= 0 {
      // A helper's half of a read: written after what is buffered rather than copied.
      flush()
      _ = writeAll(lines, to: fd)
      return
    }
    buffer.append(lines)
    flushIfFull()
  }

  /// The collected bytes, for the duration of `body`.
  func withCollected(_ body: (UnsafeRawBufferPointer) -> Void) {
    buffer.withBytes(body)
  }

  /// Drops the collected bytes.
  func reset() {
    buffer.reset(capacityLimit: 1 << 20)
  }

  public func request(id: JSONValue?, method: String, seconds: Double, outcome: String) {
    guard level.rawValue >= Level.requests.rawValue else { return }
    stamp()
    buffer.append("payservice: id=")
    if let id {
      scratch.reset()
      scratch.write(id)
      scratch.withBytes { appendClipped($0) }
    } else {
      buffer.append("-" as StaticString)
    }
    buffer.append(" method=")
    scratch.reset()
    scratch.write(method.utf8.count > 64 ? String(method.prefix(61)) + "..." : method)
    scratch.withBytes { buffer.append($0) }
    buffer.append(" us=")
    buffer.append(decimal: Int64((seconds * 1_000_000).rounded()))
    buffer.append(" outcome=")
    buffer.append(outcome)
    buffer.append(UInt8(ascii: "\n"))
    flushIfFull()
  }

  /// What `request` logs for a request answered on the borrowed path: the id as its JSON text
  /// (at most 64 bytes), a method name that needs no escaping, and outcome ok. No formatting
  /// beyond the duration's digits.
  func request(rawID: UnsafeRawBufferPointer, method: String, nanoseconds: UInt64) {
    guard level.rawValue >= Level.requests.rawValue else { return }
    stamp()
    buffer.append("payservice: id=")
    buffer.append(rawID)
    buffer.append(" method=\"")
    buffer.append(method)
    buffer.append("\" us=")
    buffer.append(decimal: Int64((nanoseconds + 500) / 1000))
    buffer.append(" outcome=ok\n")
    flushIfFull()
  }

  /// The monotonic clock in nanoseconds (a vDSO call; no Foundation or Dispatch).
  static func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }

  /// JSON text of at most 64 bytes as is; longer text cut to its first 61 characters and "...".
  private func appendClipped(_ text: UnsafeRawBufferPointer) {
    if text.count <= 64 {
      buffer.append(text)
    } else {
      buffer.append(String(String(decoding: text, as: UTF8.self).prefix(61)) + "...")
    }
  }

  /// The wire error for a method's failure. Internal and store failures are also logged as a
  /// warning with their reason, which holds no request data (a store error's text or a type name).
  func wireError(for error: any Error, method: String) -> RPCError {
    let rpcError = RPCError(mapping: error)
    if rpcError.code == .internalError || rpcError.code == .storeUnavailable {
      warning("\(method) failed: \(error is StoreError ? "\(error)" : String(describing: type(of: error)))")
    }
    return rpcError
  }

  public func warning(_ message: String) {
    guard level.rawValue >= Level.warnings.rawValue else { return }
    stamp()
    buffer.append("payservice: warning: \(message)\n")
    flushIfFull()
  }

  /// A line about the process (not a request), logged with the requests: which config a start took.
  public func info(_ message: String) {
    guard level.rawValue >= Level.requests.rawValue else { return }
    stamp()
    buffer.append("payservice: \(message)\n")
    flushIfFull()
  }

  /// What the operator should see even with `--quiet`, and is no problem: which config took effect.
  public func notice(_ message: String) {
    guard level.rawValue >= Level.warnings.rawValue else { return }
    stamp()
    buffer.append("payservice: \(message)\n")
    flushIfFull()
  }

  /// With `timestamps`, a line's RFC 3339 UTC time to the millisecond and a space.
  private func stamp() {
    guard timestamps else { return }
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    let milliseconds = Int(now.tv_nsec / 1_000_000)
    buffer.append(String(RFC3339.format(Int64(now.tv_sec)).dropLast()))
    buffer.append(milliseconds < 10 ? ".00" : milliseconds < 100 ? ".0" : ".")
    buffer.append(decimal: Int64(milliseconds))
    buffer.append("Z ")
  }

  private func flushIfFull() {
    if buffer.count > 1 << 16 && fd >= 0 { flush() }
  }

  public func flush() {
    guard !buffer.isEmpty, fd >= 0 else { return }
    buffer.withBytes { writeAll($0, to: fd) }
    buffer.reset(capacityLimit: 1 << 20)
  }
}
