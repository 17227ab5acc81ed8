import Foundation
import PayServiceCore

/// What must hold for any bytes on stdin: the server answers each non-blank line with at most one
/// line, every answer is valid JSON-RPC 2.0 (a response object, or a non-empty array of them), and
/// nothing crashes. The fuzzer (`Fuzz/`) and the regression tests over its corpus both use it.
public final class FuzzOracle {
  let config: Config
  let inputPath: String
  let outputPath: String
  /// The line limit the server runs with; small, so the fuzzer reaches the overlong-line path.
  public let maxLineBytes: Int

  public init(config: Config = TestConfig.load(), directory: URL = TestPaths.temporaryDirectory(), maxLineBytes: Int = 2048) {
    self.config = config
    self.inputPath = directory.appendingPathComponent("stdin").path
    self.outputPath = directory.appendingPathComponent("stdout").path
    self.maxLineBytes = maxLineBytes
  }

  /// Serves `input` on a fresh in-memory store; returns a description of the first violation, or nil.
  public func check(_ input: [UInt8]) -> String? {
    // Written in place, not atomically: FileManager's atomic write syncs the file to disk, which
    // costs more than serving most inputs.
    let inFD = open(inputPath, O_RDWR | O_CREAT | O_TRUNC, 0o600)
    let outFD = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    defer {
      close(inFD)
      close(outFD)
    }
    let written = input.withUnsafeBytes { bytes in
      var offset = 0
      while offset < bytes.count {
        let count = write(inFD, bytes.baseAddress! + offset, bytes.count - offset)
        guard count > 0 else { return false }
        offset += count
      }
      return true
    }
    guard inFD >= 0, outFD >= 0, written, lseek(inFD, 0, SEEK_SET) == 0 else { return "cannot write stdin" }
    let context: ServiceContext
    do {
      let store = try SQLiteStore(path: ":memory:")
      try store.seedStock(config.catalog)
      context = ServiceContext(config: config, store: store, clock: ServiceClock(pinned: TestConfig.now), backOffice: true)
    } catch {
      return "cannot open the store: \(error)"
    }
    // Every method, the back office's too: hostile input must not get further there either.
    let handler = RequestHandler(context: context, methods: .payservice(backOffice: true), log: RequestLog(level: .quiet))
    let server = Server(
      handler: handler, input: inFD, output: outFD, maxLineBytes: maxLineBytes, log: RequestLog(level: .quiet))
    guard server.run() == .finished else { return "the server did not finish" }
    guard let output = FileManager.default.contents(atPath: outputPath) else { return "cannot read stdout" }
    if let problem = Self.verify(input: input, output: Array(output), maxLineBytes: maxLineBytes) { return problem }
    return Self.borrowedAgrees(input: input, handler: handler)
  }

  /// Nil when every line of `input` that the borrowed request path answers gets exactly the
  /// general path's answer from `handler`.
  public static func borrowedAgrees(input: [UInt8], handler: RequestHandler) -> String? {
    for (index, line) in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
      guard let answers = Array(line).withUnsafeBytes({ handler.answersByBothPaths($0) }) else { continue }
      if answers.borrowed != answers.general {
        return "line \(index + 1): the borrowed path answered differently from the general one"
      }
    }
    return nil
  }

  /// Checks `output` against the `input` it answers. A line of JSON whitespace gets no answer unless
  /// it is over the line limit (the server does not buffer such a line to look inside).
  public static func verify(input: [UInt8], output: [UInt8], maxLineBytes: Int = .max) -> String? {
    if !output.isEmpty && output.last != UInt8(ascii: "\n") { return "output does not end with a newline" }
    let answers = output.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast()
    let lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).filter { line in
      line.count > maxLineBytes || !line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }
    if answers.count > lines.count { return "\(answers.count) answers for \(lines.count) lines" }
    for (index, answer) in answers.enumerated() {
      let value: JSONValue
      do {
        value = try JSONParser.parse(Array(answer))
      } catch {
        return "answer \(index + 1) is not JSON: \(error.message)"
      }
      switch value {
      case .object:
        if let problem = response(value) { return "answer \(index + 1): \(problem)" }
      case .array(let elements) where !elements.isEmpty:
        for element in elements {
          if let problem = response(element) { return "answer \(index + 1), batch element: \(problem)" }
        }
      default:
        return "answer \(index + 1) is neither a response nor a non-empty batch"
      }
    }
    return nil
  }

  /// Nil when `value` is a JSON-RPC 2.0 response object.
  static func response(_ value: JSONValue) -> String? {
    guard case .object(let object) = value else { return "not an object" }
    guard object["jsonrpc"] == .string("2.0") else { return "jsonrpc is not \"2.0\"" }
    guard let id = object["id"] else { return "no id" }
    switch id {
    case .string, .number, .null: break
    default: return "id is \(id.kindName)"
    }
    switch (object["result"], object["error"]) {
    case (_?, nil):
      return object.keys.count == 3 ? nil : "unexpected members \(object.keys)"
    case (nil, .object(let error)?):
      guard case .number(let code)? = error["code"], Int(code) != nil else { return "error.code is not an integer" }
      guard case .string? = error["message"] else { return "error.message is not a string" }
      return object.keys.count == 3 ? nil : "unexpected members \(object.keys)"
    default:
      return "needs exactly one of result and error"
    }
  }
}

/// The in-process oracle: no file, no `Server` and no fresh store per input. Each line of an input
/// is answered by `RequestHandler.handle(line:)` on each config's handler (every method, the back
/// office's too), whose in-memory stores are opened once and then shared by every input checked:
/// orders, charge tokens and stock carry over from one input to the next, and what must hold does
/// not depend on them. What must hold: no crash; every answer is one valid JSON-RPC 2.0 response
/// line (`FuzzOracle.verify`); a line the borrowed request path answers gets exactly the general
/// path's answer.
public final class RequestFuzzOracle {
  public let handlers: [RequestHandler]

  /// The configs answered with: the golden transcripts' store (tax rules by postal code) and the
  /// discounts one (coupons, card adjustments, free shipping over an amount).
  public static func configs() -> [Config] { [TestConfig.load(), TestConfig.servingWalletOrders(TestConfig.discounts())] }

  public init(configs: [Config] = configs()) throws {
    handlers = try configs.map { config in
      TestConfig.handler(try TestConfig.context(config: config, backOffice: true), backOffice: true)
    }
  }

  /// Answers every line of `input`; returns a description of the first violation, or nil.
  public func check(_ input: [UInt8]) -> String? {
    let lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    for (index, line) in lines.enumerated() {
      for (position, handler) in handlers.enumerated() {
        if let problem = Array(line).withUnsafeBytes({ Self.check(line: $0, handler: handler) }) {
          return "line \(index + 1), config \(position + 1): \(problem)"
        }
      }
    }
    return nil
  }

  static func check(line: UnsafeRawBufferPointer, handler: RequestHandler) -> String? {
    let answer: [UInt8]?
    // Only store-free requests are answered by the borrowed path, so running both paths changes nothing.
    if let both = handler.answersByBothPaths(line) {
      guard both.borrowed == both.general else { return "the borrowed path answered differently from the general one" }
      answer = Array(both.borrowed.dropLast())
    } else {
      answer = handler.handle(line: line)
    }
    let output = answer.map { $0 + [UInt8(ascii: "\n")] } ?? []
    return FuzzOracle.verify(input: Array(line) + [UInt8(ascii: "\n")], output: output)
  }
}
