#if canImport(Glibc)
import Glibc
#endif

/// A method whose common requests are answered straight from the request line's bytes, the way a
/// typed, borrowing deserializer (serde's) would: the params are scanned in place into plain
/// values, priced from the compiled config (`PricingTable`) and the result written as it is
/// computed, with no parse tree, no `String` and no allocation.
///
/// It is an answer the method's own `call` would give, for the requests it takes; it declines
/// (returns false, whatever it wrote is dropped) anything else: an unusual form (escapes, repeated
/// members, numbers not written plainly), what needs the clock or the store, and every request that
/// gets an error. The line is then parsed and answered by the general path, which decides.
protocol BorrowedMethod: RPCMethod {
  /// Writes the result for the params at `scanner` (just before their `{`); false to decline.
  static func answerBorrowed(_ scanner: inout JSONScanner, table: PricingTable, into writer: inout JSONWriter) -> Bool
}

extension RequestHandler {
  /// Answers `line` (without its LF) from its bytes when it is a request (with an id) of a
  /// borrowed method that the method takes: the response line is appended to `writer` and the
  /// request logged, exactly as `answer` would. False, with nothing appended, otherwise.
  func answerBorrowed(_ line: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> Bool {
    let mark = writer.mark
    guard answerBorrowed(line, writingInto: &writer) else {
      writer.rewind(to: mark)
      return false
    }
    return true
  }

  /// When the borrowed path answers `line`: its response line and the general path's (each with
  /// its LF; the general one nil if it gives none). Nil when the borrowed path declines. For tests
  /// and the fuzzer, which check that a borrowed answer is always the general one.
  public func answersByBothPaths(_ line: UnsafeRawBufferPointer) -> (borrowed: [UInt8], general: [UInt8]?)? {
    var borrowed = JSONWriter()
    guard answerBorrowed(line, into: &borrowed) else { return nil }
    var general = JSONWriter()
    let generalAnswered = answer(parse(line), into: &general)
    return (borrowed.bytes, generalAnswered ? general.bytes : nil)
  }

  /// `answerBorrowed(_:into:)`, which drops what this wrote when it returns false.
  private func answerBorrowed(_ line: UnsafeRawBufferPointer, writingInto writer: inout JSONWriter) -> Bool {
    guard let table = pricingTable, let names = methods.borrowedNames else { return false }
    var bytes = line
    if let last = bytes.last, last == UInt8(ascii: "\r") { bytes = UnsafeRawBufferPointer(rebasing: bytes.dropLast()) }
    var scanner = JSONScanner(bytes)
    guard scanner.take(UInt8(ascii: "{")) else { return false }

    var version = false
    var id: Range<Int>?
    var method = -1
    var params = -1
    // Each member once: a repeated one (the last would count) is the general path's.
    var seen = 0
    var started: UInt64 = 0
    var answered = false
    func start(id: Range<Int>) -> Bool {
      started = log.recordsRequests ? RequestLog.monotonicNanoseconds() : 0
      RequestHandler.openResponse(rawID: scanner.slice(id), into: &writer)
      return true
    }
    repeat {
      guard let key = scanner.string(), scanner.take(UInt8(ascii: ":")) else { return false }
      let bit =
        scanner.matches(key, "jsonrpc")
        ? 1 : scanner.matches(key, "id") ? 2 : scanner.matches(key, "method") ? 4 : scanner.matches(key, "params") ? 8 : 0
      guard seen & bit == 0 else { return false }
      seen |= bit
      switch bit {
      case 1:
        guard let value = scanner.string(), scanner.matches(value, "2.0") else { return false }
        version = true
      case 2:
        guard let first = scanner.peek() else { return false }
        let idStart = scanner.index
        switch first {
        case UInt8(ascii: "\""): guard scanner.string() != nil else { return false }
        case UInt8(ascii: "n"): guard scanner.null() else { return false }
        default: guard scanner.number() != nil else { return false }
        }
        id = idStart..<scanner.index
      case 4:
        guard let name = scanner.string(), let index = names.value(for: scanner.slice(name)) else { return false }
        method = index
      case 8:
        guard scanner.peek() == UInt8(ascii: "{") else { return false }
        params = scanner.index
        if let id, method >= 0, id.count <= 64 {
          // The usual order (id and method first): answered as the params are scanned.
          guard start(id: id), methods.borrowed[method].answerBorrowed(&scanner, table: table, into: &writer) else {
            return false
          }
          answered = true
        } else {
          guard scanner.skipValue() else { return false }
        }
      default:
        guard scanner.skipValue() else { return false }
      }
    } while scanner.take(UInt8(ascii: ","))
    guard scanner.take(UInt8(ascii: "}")) else { return false }
    scanner.skipSpace()
    // The log shows an id of up to 64 bytes as it is; longer ones are clipped by the general path.
    guard scanner.atEnd, version, let id, id.count <= 64, method >= 0, params >= 0
    else { return false }
    let borrowed = methods.borrowed[method]
    if !answered {
      var paramsScanner = JSONScanner(bytes, at: params)
      guard start(id: id), borrowed.answerBorrowed(&paramsScanner, table: table, into: &writer) else { return false }
    }
    writer.raw(UInt8(ascii: "}"))
    writer.newline()
    logBorrowed(rawID: scanner.slice(id), method: borrowed.name, started: started)
    return true
  }
}
