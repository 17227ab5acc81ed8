import Foundation

/// The stdio loop: reads LF-delimited lines from `input`, answers each through the handler, and
/// writes responses to `output` in request order.
///
/// Responses to the lines of one read are written together, and always before the loop blocks on
/// the next read, so an interactive client gets each answer without sending more. A line longer
/// than `maxLineBytes` is answered with one -32600 and skipped without being buffered.
public final class Server {
  public enum Exit: Equatable, Sendable {
    /// Input ended, or a stop was requested; everything read was answered.
    case finished
    /// The output was closed (EPIPE); what was in flight was committed.
    case outputClosed
  }

  let handler: RequestHandler
  let input: Int32
  let output: Int32
  let maxLineBytes: Int
  let stopSignal: Int32?
  let log: RequestLog

  /// Responses not yet written, one per line.
  private var pendingOutput = JSONWriter(capacity: 1 << 16)
  private var outputClosed = false

  /// - Parameter stopSignal: a descriptor that becomes readable when the process should stop
  ///   (the signal handler's self-pipe); the loop then finishes the request in flight and returns.
  public init(
    handler: RequestHandler, input: Int32, output: Int32, maxLineBytes: Int, stopSignal: Int32? = nil,
    log: RequestLog
  ) {
    self.handler = handler
    self.input = input
    self.output = output
    self.maxLineBytes = maxLineBytes
    self.stopSignal = stopSignal
    self.log = log
  }

  public func run() -> Exit {
    let chunkSize = 1 << 16
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 1)
    defer { chunk.deallocate() }
    var line: [UInt8] = []
    var skipping = false

    func answer(_ bytes: UnsafeRawBufferPointer) {
      var slice = bytes
      if let last = slice.last, last == UInt8(ascii: "\r") {
        slice = UnsafeRawBufferPointer(rebasing: slice.dropLast())
      }
      // Only JSON whitespace (spaces, tabs, CRs): a blank line, not a request.
      if slice.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
      if handler.handle(line: slice, into: &pendingOutput) {
        pendingOutput.newline()
      }
    }

    func tooLong() {
      log.request(id: nil, method: "", seconds: 0, outcome: "error(-32600)")
      RequestHandler.writeError(
        id: .null, .invalidRequest("line exceeds the limit of \(maxLineBytes) bytes (--max-line-bytes)"),
        into: &pendingOutput)
      pendingOutput.newline()
    }

    var stopped = false
    while !outputClosed {
      if !waitForInput() {
        stopped = true
        break
      }
      let count = read(input, chunk.baseAddress, chunkSize)
      if count < 0 {
        if errno == EINTR { continue }
        break
      }
      if count == 0 { break }
      var start = 0
      let bytes = UnsafeRawBufferPointer(rebasing: chunk[0..<count])
      while start < count {
        guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
          // No end of line in this chunk: keep the fragment, or skip it once the line is too long.
          if !skipping {
            if line.count + (count - start) > maxLineBytes {
              line.removeAll(keepingCapacity: false)
              skipping = true
              tooLong()
            } else {
              line.append(contentsOf: bytes[start..<count])
            }
          }
          break
        }
        if skipping {
          skipping = false
        } else if line.count + (newline - start) > maxLineBytes {
          line.removeAll(keepingCapacity: false)
          tooLong()
        } else if line.isEmpty {
          answer(UnsafeRawBufferPointer(rebasing: bytes[start..<newline]))
        } else {
          line.append(contentsOf: bytes[start..<newline])
          line.withUnsafeBytes { answer($0) }
          line.removeAll(keepingCapacity: line.count <= 1 << 16)
        }
        start = newline + 1
        if stopRequested() {
          flush()
          return outputClosed ? .outputClosed : .finished
        }
      }
      flush()
    }
    // At EOF a last line without LF is still a request; after a stop signal it is not run, since
    // the client may not have finished writing it.
    if !stopped && !outputClosed && !skipping && !line.isEmpty {
      line.withUnsafeBytes { answer($0) }
    }
    flush()
    return outputClosed ? .outputClosed : .finished
  }

  /// Blocks until input is readable; false when a stop was requested.
  private func waitForInput() -> Bool {
    guard let stopSignal else { return true }
    var fds = [pollfd(fd: input, events: Int16(POLLIN), revents: 0), pollfd(fd: stopSignal, events: Int16(POLLIN), revents: 0)]
    while true {
      let ready = poll(&fds, 2, -1)
      if ready < 0 {
        if errno == EINTR { continue }
        return true
      }
      if fds[1].revents != 0 { return false }
      return true
    }
  }

  private func stopRequested() -> Bool {
    stopSignal != nil && StopSignal.requested
  }

  private func flush() {
    defer { log.flush() }
    guard !pendingOutput.isEmpty, !outputClosed else {
      pendingOutput.reset()
      return
    }
    pendingOutput.withBytes { raw in
      var offset = 0
      while offset < raw.count {
        let written = write(output, raw.baseAddress! + offset, raw.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          outputClosed = true
          return
        }
        offset += written
      }
    }
    pendingOutput.reset(capacityLimit: 1 << 20)
  }
}
