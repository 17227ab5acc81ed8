import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The stdio loop, run in-process on pipes.
@Suite("Server loop")
struct ServerTests {
  /// Feeds `input` (from a file descriptor) through a server and returns everything it wrote.
  func serve(
    _ input: [UInt8], maxLineBytes: Int = 1 << 20, threads: Int = 1, logPath: String? = nil,
    context: ServiceContext? = nil, helperAnswered: (Int) -> Void = { _ in }, lineBytesKept: (Int) -> Void = { _ in }
  ) throws -> String {
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
    let logFD = logPath.map { open($0, O_WRONLY | O_CREAT | O_TRUNC, 0o600) }
    defer { logFD.map { _ = close($0) } }
    let log = logFD.map { RequestLog(fd: $0, level: .requests) } ?? RequestLog(level: .quiet)
    let handler = RequestHandler(
      context: try context ?? TestConfig.context(), methods: .payservice(backOffice: true), log: log)
    let server = Server(
      handler: handler, input: inFD, output: outFD, maxLineBytes: maxLineBytes, log: log, threads: threads)
    #expect(server.run() == .finished)
    log.flush()
    helperAnswered(server.linesAnsweredByHelper)
    lineBytesKept(server.mostLineBytesKept)
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

  @Test("an overlong line is one -32600, and no more than the limit of it is ever kept")
  func overlong() throws {
    var input = Array(request.utf8) + [0x0A]
    input += [UInt8](repeating: UInt8(ascii: "x"), count: 3_000_000) + [0x0A]
    input += Array(request.utf8) + [0x0A]
    var kept = -1
    let output = try serve(input, maxLineBytes: 1000, lineBytesKept: { kept = $0 })
    // The 3 MB line arrives in 64 KB reads; the first already passes the limit, so none of it is kept.
    #expect(kept == 0)
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

  /// A mixed pipelined stream: pricing and sheet events (which the helper thread may answer) between
  /// store methods, batches, notifications, errors, blank and over-long lines (which it must leave
  /// to the server thread, in order).
  static func mixedStream(lines count: Int) -> (input: [UInt8], answers: Int) {
    let payment = #"{"token":{"paymentData":"tok_visa","paymentMethod":{"displayName":"Visa 0492","network":"visa","type":"credit"},"transactionIdentifier":"T1"},"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","phoneNumber":"+1 (408) 555-0100","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"},"billingContact":{"addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}}"#
    let contact = #"{"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}"#
    var random = SplitMix64(seed: 5)
    var input = ""
    var answers = 0
    for id in 0..<count {
      let sku = ["clock", "mug", "pen"][Int(random.next() % 3)]
      let quantity = Int(random.next() % 4) + 1
      let items = #"[{"sku":"\#(sku)","quantity":\#(quantity)}]"#
      let kind = random.next() % 20
      if kind != 3 && kind != 7 { answers += 1 }  // a notification and a blank line get no answer
      switch kind {
      case 0: input += #"{"jsonrpc":"2.0","id":\#(id),"method":"authorizePayment","params":{"items":\#(items),"shippingMethod":"free","payment":\#(payment)}}"#
      case 1: input += #"{"jsonrpc":"2.0","id":\#(id),"method":"listProducts"}"#
      case 2: input += #"[{"jsonrpc":"2.0","id":"b\#(id)","method":"computeSummaryItems","params":{"items":\#(items)}},{"jsonrpc":"2.0","method":"listShippingMethods"}]"#
      case 3: input += #"{"jsonrpc":"2.0","method":"computeSummaryItems","params":{"items":\#(items)}}"#
      case 4: input += #"{"jsonrpc":"2.0","id":\#(id),"method":"computeSummaryItems","params":{"items":[{"sku":"nope"}]}}"#
      case 5: input += #"{"jsonrpc":"2.0","id":\#(id),"method":"#
      case 6: input += #"{"jsonrpc":"2.0","id":\#(id),"method":"getOrder","params":{"orderId":"o\#(id)"}}"#
      case 7: input += "  \r"
      case 8: input += #"{"jsonrpc":"2.0","id":\#(id),"method":"noSuchMethod"}"#
      case 9: input += String(repeating: "x", count: 1100)
      case 10: input += #"{"jsonrpc":"2.0","id":\#(id),"method":"selectShippingContact","params":{"items":\#(items),"shippingContact":\#(contact)}}"#
      default: input += #"{"jsonrpc":"2.0","id":\#(id),"method":"computeSummaryItems","params":{"items":\#(items),"shippingContact":\#(contact),"shippingMethod":"express"}}\r"#
      }
      input += "\n"
    }
    return (Array(input.utf8), answers)
  }

  @Test("two threads answer a mixed pipelined stream byte for byte as one does, and log the same lines")
  func twoThreadsAsOne() throws {
    let (input, answers) = Self.mixedStream(lines: 6000)
    let directory = TestPaths.temporaryDirectory()
    let oneLog = directory.appendingPathComponent("one.log").path
    let twoLog = directory.appendingPathComponent("two.log").path
    let one = try serve(input, maxLineBytes: 1024, threads: 1, logPath: oneLog)
    var helperAnswered = 0
    let two = try serve(input, maxLineBytes: 1024, threads: 2, logPath: twoLog) { helperAnswered = $0 }
    #expect(one.split(separator: "\n").count == answers)
    #expect(two == one)
    // Authorizations issued tokens from the store's sequence: their order shows in the bytes.
    #expect(one.components(separatedBy: #""chargeToken":"ctok_"#).count > 200)
    // The helper did answer a share of the stream (so the comparison above means something).
    #expect(helperAnswered > 1000)
    // Durations differ from run to run; everything else in the log is the same.
    func withoutDurations(_ path: String) throws -> String {
      try String(contentsOfFile: path, encoding: .utf8).replacing(/us=[0-9]+/, with: "us=")
    }
    #expect(try withoutDurations(twoLog) == withoutDurations(oneLog))
    #expect(try withoutDurations(oneLog).split(separator: "\n").count > 5000)
  }

  @Test(
    "a reloadConfig in a pipelined stream: every line after it is answered with the new config, on two threads as on one",
    arguments: [1, 2])
  func reloadInPipelinedStream(threads: Int) throws {
    let directory = TestPaths.temporaryDirectory()
    let path = directory.appendingPathComponent("config.yaml").path
    let original = TestConfig.yaml()
    try Data(original.utf8).write(to: URL(fileURLWithPath: path))
    let config = try ConfigLoader.load(path: path)
    let store = try SQLiteStore(path: ":memory:", newIdentifierKey: TestConfig.identifierKey)
    try store.seedStock(config.catalog)
    let context = ServiceContext(
      config: config, store: store, clock: ServiceClock(pinned: TestConfig.now), reloader: ConfigReloader(path: path))
    // The file changes before the stream is read: the clock costs 55.00 once reloadConfig has run.
    let changed = original.replacingOccurrences(of: #"price: "50.00""#, with: #"price: "55.00""#)
    #expect(changed != original)
    try Data(changed.utf8).write(to: URL(fileURLWithPath: path))
    // Three reads of 128 KiB: the reload comes in the first part of the first, which the server
    // thread answers while the second thread answers the rest of it under the old config.
    var input = ""
    for id in 0..<3000 {
      input +=
        id == 20
        ? #"{"jsonrpc":"2.0","id":20,"method":"reloadConfig"}"#
        : #"{"jsonrpc":"2.0","id":\#(id),"method":"computeSummaryItems","params":{"items":[{"sku":"clock"}]}}"#
      input += "\n"
    }
    var helperAnswered = 0
    let output = try serve(Array(input.utf8), threads: threads, context: context) { helperAnswered = $0 }
    let lines = output.split(separator: "\n")
    #expect(lines.count == 3000)
    let prices = lines.map { line -> String in
      guard let range = line.firstRange(of: #""label":"Clock","amount":""#) else { return "-" }
      return String(line[range.upperBound...].prefix(5))
    }
    #expect(prices[..<20].allSatisfy { $0 == "50.00" })
    #expect(prices[20] == "-")
    #expect(lines[20].hasPrefix(#"{"jsonrpc":"2.0","id":20,"result":{"status":"succeeded","config":"sha256:"#))
    #expect(prices[21...].allSatisfy { $0 == "55.00" }, "\(prices.enumerated().filter { $0.offset > 20 && $0.element != "55.00" }.prefix(3))")
    // With two threads, the later reads were split: a new second thread answered them.
    if threads == 2 { #expect(helperAnswered > 500) }
  }
}

