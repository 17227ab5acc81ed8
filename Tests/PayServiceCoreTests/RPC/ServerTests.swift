import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The stdio loop, run in-process on pipes.
@Suite("Server loop")
struct ServerTests {
  /// Feeds `input` (from a file descriptor) through a server and returns everything it wrote.
  func serve(_ input: [UInt8], maxLineBytes: Int = 1 << 20) throws -> String {
    let directory = TestPaths.temporaryDirectory()
    let inPath = directory.appendingPathComponent("in").path
    let outPath = directory.appendingPathComponent("out").path
    FileManager.default.createFile(atPath: inPath, contents: Data(input))
    let inFD = open(inPath, O_RDONLY)
    let outFD = open(outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    defer {
      close(inFD)
      close(outFD)
    }
    let handler = TestConfig.handler(try TestConfig.context())
    let server = Server(
      handler: handler, input: inFD, output: outFD, maxLineBytes: maxLineBytes, log: RequestLog(level: .quiet))
    #expect(server.run() == .finished)
    return try String(contentsOfFile: outPath, encoding: .utf8)
  }

  let request = #"{"jsonrpc":"2.0","id":1,"method":"listShippingMethods"}"#

  @Test("lines of spaces, tabs and CRs are blank and get no answer")
  func whitespaceLines() throws {
    let output = try serve(Array("\r\r\n \r \t\n\(request)\r\n\t\r\n".utf8))
    #expect(output.split(separator: "\n").count == 1)
    #expect(output.hasPrefix(#"{"jsonrpc":"2.0","id":1,"result":{"shippingMethods""#))
  }

  @Test("CRLF, blank lines and a last line without LF")
  func framing() throws {
    let output = try serve(Array("\r\n\n  \n\(request)\r\n\(request)".utf8))
    let lines = output.split(separator: "\n")
    #expect(lines.count == 2)
    #expect(lines[0] == lines[1])
    #expect(lines[0].hasPrefix(#"{"jsonrpc":"2.0","id":1,"result":{"shippingMethods":[{"identifier":"free""#))
  }

  @Test("an overlong line is one -32600 and memory does not grow with it")
  func overlong() throws {
    var input = Array(request.utf8) + [0x0A]
    input += [UInt8](repeating: UInt8(ascii: "x"), count: 3_000_000) + [0x0A]
    input += Array(request.utf8) + [0x0A]
    let output = try serve(input, maxLineBytes: 1000)
    let lines = output.split(separator: "\n").map(String.init)
    #expect(lines.count == 3)
    #expect(lines[1] == #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: line exceeds the limit of 1000 bytes (--max-line-bytes)"}}"#)
    #expect(lines[0] == lines[2])
  }

  @Test("a line split across many reads is reassembled")
  func splitLine() throws {
    // 200 KB line: crosses several 64 KB reads.
    let padding = String(repeating: " ", count: 200_000)
    let output = try serve(Array(#"{"jsonrpc":"2.0","id":7,\#(padding)"method":"getOrder","params":{"orderId":"x"}}"#.utf8) + [0x0A])
    #expect(output == #"{"jsonrpc":"2.0","id":7,"error":{"code":-32003,"message":"Order not found: x"}}"# + "\n")
  }

  @Test("responses come in request order, one line each, for 2,000 pipelined requests")
  func pipelined() throws {
    var input: [UInt8] = []
    for id in 0..<2000 {
      input += Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"computeSummaryItems","params":{"items":[{"sku":"mug","quantity":\#(id % 9 + 1)}]}}"#.utf8) + [0x0A]
    }
    let lines = try serve(input).split(separator: "\n")
    #expect(lines.count == 2000)
    for (id, line) in lines.enumerated() where !line.hasPrefix(#"{"jsonrpc":"2.0","id":\#(id),"result""#) {
      Issue.record("line \(id): \(line.prefix(80))")
      break
    }
  }
}
