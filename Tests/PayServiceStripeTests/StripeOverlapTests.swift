import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Pipelined orders through a gateway 100 ms away: their round trips overlap, their answers keep
/// request order. (The benchmark measures the release build at 50 ms; in a debug build the CPU
/// time of 100 orders, about 0.3 s here, would blur a 50 ms round trip.)
@Suite("Stripe pipelining", .serialized)
struct StripeOverlapTests {
  /// Authorizes `count` orders and returns their processOrder lines (ids 0…).
  static func orders(_ count: Int, handler: RequestHandler, paymentData: String = "pm_card_visa") throws -> [String] {
    try (0..<count).map { index in
      let line = try StripeCheckoutTests.authorize(handler, paymentData: paymentData, cart: #"[{"sku":"mug","quantity":1}]"#)
        .processLine
      return line.replacingOccurrences(of: #""id":7,"#, with: #""id":\#(index),"#)
    }
  }

  /// Serves `lines` through a server reading a file (so one read brings many lines); the output and
  /// the seconds it took.
  static func serve(_ lines: [String], context: ServiceContext) throws -> (output: [String], seconds: Double) {
    let directory = TestPaths.temporaryDirectory()
    let (inPath, outPath) = (directory.appendingPathComponent("in").path, directory.appendingPathComponent("out").path)
    _ = FileManager.default.createFile(atPath: inPath, contents: Data((lines.joined(separator: "\n") + "\n").utf8))
    let inFD = open(inPath, O_RDONLY)
    let outFD = open(outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    defer { [inFD, outFD].forEach { close($0) } }
    let log = RequestLog(level: .quiet)
    let server = Server(
      handler: RequestHandler(context: context, methods: .payservice(), log: log), input: inFD, output: outFD,
      maxLineBytes: 1 << 20, log: log, threads: 1)
    let started = Date()
    #expect(server.run() == .finished)
    let seconds = Date().timeIntervalSince(started)
    return (try String(contentsOfFile: outPath, encoding: .utf8).split(separator: "\n").map(String.init), seconds)
  }

  @Test(
    "100 pipelined orders with 100 ms to Stripe overlap their round trips (up to 50 at once), answered in order")
  func overlap() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let context = try StripeFixture(server: server, maxConcurrentCalls: 50).context(backend: .sqlite)
    let handler = TestConfig.handler(context)
    // A long-lived process has its connections to Stripe open: 50 declined orders open them (and
    // put their stock back) before the measured ones.
    let warmUp = try Self.orders(50, handler: handler, paymentData: "pm_card_chargeDeclined")
    let lines = try Self.orders(100, handler: handler)
    server.setLatency(milliseconds: 100)
    #expect(try Self.serve(warmUp, context: context).output.allSatisfy { $0.contains(#""failureCode":"card_declined""#) })
    let (output, seconds) = try Self.serve(lines, context: context)
    #expect(output.count == 100)
    for (index, line) in output.enumerated() {
      let answer = try JSONParser.parse(line)
      #expect(answer["id"] == .number(String(index)), "\(line)")
      #expect(answer["result"]?["status"] == .string("succeeded"), "\(line)")
    }
    #expect(server.paymentIntentCount == 150)
    // Overlapped, counted where Stripe's answers wait: many calls at once, at most the bound. (How
    // much faster that is, the benchmark measures on the release build.) One at a time would take
    // 100 × 100 ms at least.
    #expect((10...50).contains(server.peakDelayedAnswers), "\(server.peakDelayedAnswers) calls at once")
    #expect(seconds < 100 * 0.100, "took \(seconds) s")
  }

  @Test("a bound of 1 call in flight sends them one at a time, with the same answers")
  func oneAtATime() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let context = try StripeFixture(server: server, maxConcurrentCalls: 1).context(backend: .sqlite)
    let lines = try Self.orders(8, handler: TestConfig.handler(context))
    server.setLatency(milliseconds: 50)
    let (output, seconds) = try Self.serve(lines, context: context)
    #expect(output.count == 8)
    #expect(output.allSatisfy { $0.contains(#""status":"succeeded""#) })
    #expect(seconds >= 8 * 0.050, "took \(seconds) s")
    #expect(server.peakDelayedAnswers == 1)
    #expect(server.paymentIntentCount == 8)
  }
}
