import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Refunds on bad days, through the real binary on each store backend: several processes refunding
/// one order at once, and SIGKILL in the middle of a stream of refunds.
@Suite("Back office under concurrency and crashes", .serialized)
struct BackOfficeFaultTests {
  static let config = CrashSafetyTests.config

  static func arguments(_ store: String, now: String = "2026-11-21T12:10:00Z") -> [String] {
    ["--config", config, "--database", store, "--now", now, "--quiet", "--back-office"]
  }

  /// Places one order of `items` on `store`; returns its id and amount.
  static func placeOrder(_ store: String, items: String) throws -> (orderId: String, amount: String) {
    let authorized = try CrashSafetyTests.authorize(1, store: store) { _ in items }[0]
    let line = CrashSafetyTests.orderLine(id: 1, token: authorized.token, amount: authorized.amount, items: items)
    let result = try PayserviceProcess.run(arguments(store, now: "2026-11-21T12:01:00Z"), stdin: Data((line + "\n").utf8))
    let answer = try JSONParser.parse(result.stdoutText)
    let orderId = try #require(answer["result"]?["orderId"]?.stringValue, "\(result.stdoutText)")
    return (orderId, authorized.amount)
  }

  static func refundLine(id: String, orderId: String, refundId: String, body: String) -> String {
    #"{"jsonrpc":"2.0","id":"\#(id)","method":"refundOrder","params":{"orderId":"\#(orderId)","refundId":"\#(refundId)",\#(body)}}"#
  }

  static func minor(_ text: String) -> Int64 { try! MoneyText.minorUnits(text, digits: 2).get() }

  @Test(
    "8 processes refunding one order at once: never more than captured nor more units than sold; stock adds up",
    arguments: StoreBackend.available)
  func concurrentRefunds(backend: StoreBackend) throws {
    let store = try backend.freshDatabase()
    let (orderId, amount) = try Self.placeOrder(store, items: #"[{"sku":"pen","quantity":30},{"sku":"mug","quantity":6}]"#)
    let processes = 8
    let perProcess = 6
    let runners = try (0..<processes).map { _ in try RunningPayservice(Self.arguments(store)) }
    // Each process asks for a different mix: units of each line (restocked or not) and goodwill
    // amounts. Together they ask for far more than the order has.
    let answers = Locked<[(request: String, answer: String)]>([])
    DispatchQueue.concurrentPerform(iterations: processes) { process in
      let runner = runners[process]
      var lines: [String] = []
      for index in 0..<perProcess {
        let body: String
        switch (process + index) % 4 {
        case 0: body = #""lines":[{"sku":"pen","quantity":\#(index + 2),"restock":"return"}]"#
        case 1: body = #""lines":[{"sku":"mug","quantity":1,"restock":"cancel"},{"sku":"pen","quantity":1,"restock":"none"}]"#
        case 2: body = #""amount":"\#(index + 1).00""#
        default: body = #""lines":[{"sku":"mug","quantity":2,"restock":"none"}],"shipping":true"#
        }
        lines.append(Self.refundLine(id: "\(process)-\(index)", orderId: orderId, refundId: "r-\(process)-\(index)", body: body))
      }
      for line in lines { runner.send(line) }
      var mine: [(String, String)] = []
      for line in lines { mine.append((line, runner.readLine(timeout: 60) ?? "<no answer>")) }
      answers.update { $0 += mine }
      try? runner.stdin.fileHandleForWriting.close()
      _ = runner.waitForExit()
    }
    var refunded: Int64 = 0
    var units: [String: Int] = [:]
    var restocked: [String: Int] = [:]
    var outcomes: [String: Int] = [:]
    for (_, text) in answers.value {
      let answer = try JSONParser.parse(text)
      let result = try #require(answer["result"], "an error instead of a result: \(text)")
      outcomes[result["failureCode"]?.stringValue ?? result["status"]!.stringValue!, default: 0] += 1
      guard result["status"]?.stringValue == "succeeded" else { continue }
      refunded += Self.minor(result["refund"]!["amount"]!.stringValue!)
      for line in result["refund"]!["lines"]!.arrayValue! {
        let sku = line["sku"]!.stringValue!
        let quantity = Int(line["quantity"]!.compactNumber)!
        units[sku, default: 0] += quantity
        if line["restock"]?.stringValue != "none" { restocked[sku, default: 0] += quantity }
      }
    }
    #expect(answers.value.count == processes * perProcess)
    #expect(outcomes["succeeded", default: 0] >= 5, "\(outcomes)")
    #expect(
      Set(outcomes.keys).isSubset(of: [
        "succeeded", "quantity_exceeds_remaining", "refund_exceeds_remaining", "shipping_already_refunded",
        "order_not_refundable",
      ]), "\(outcomes)")
    #expect(refunded <= Self.minor(amount))
    #expect(units["pen", default: 0] <= 30 && units["mug", default: 0] <= 6)

    // The store agrees with the answers: what was answered is what was recorded, nothing more.
    let check = try PayserviceProcess.run(
      Self.arguments(store),
      stdin: Data((#"{"jsonrpc":"2.0","id":1,"method":"getOrder","params":{"orderId":"\#(orderId)"}}"# + "\n").utf8))
    let order = try JSONParser.parse(check.stdoutText)["result"]!["order"]!
    #expect(Self.minor(order["amountRefunded"]!.stringValue!) == refunded)
    #expect(order["refunds"]!.arrayValue!.count == outcomes["succeeded"])
    let ledger = try backend.open(store).stockLedger()
    #expect(ledger["pen"]!.onHand == 1000 - 30 + restocked["pen", default: 0])
    #expect(ledger["mug"]!.onHand == 100 - 6 + restocked["mug", default: 0])
    #expect(ledger["pen"]!.onHand + ledger["pen"]!.sold == 1000 && ledger["mug"]!.onHand + ledger["mug"]!.sold == 100)
  }

  @Test(
    "SIGKILL mid-stream of refunds: every answered refund survives, replays return it byte for byte, none twice",
    arguments: StoreBackend.available)
  func sigkill(backend: StoreBackend) throws {
    let store = try backend.freshDatabase()
    let (orderId, _) = try Self.placeOrder(store, items: #"[{"sku":"pen","quantity":300}]"#)
    let count = 250
    let lines = (0..<count).map { index in
      Self.refundLine(
        id: "\(index)", orderId: orderId, refundId: "r-\(index)",
        body: #""lines":[{"sku":"pen","quantity":1,"restock":"return"}]"#)
    }
    let running = try RunningPayservice(Self.arguments(store))
    let writer = Thread { for line in lines { running.send(line) } }
    writer.start()
    var answers: [String] = []
    while answers.count < 80, let line = running.readLine() { answers.append(line) }
    kill(running.process.processIdentifier, SIGKILL)
    #expect(running.waitForExit() != 0)
    #expect(answers.count == 80)

    // Restart and send every refund again: the answered ones replay their stored answers byte for
    // byte; the rest (committed unanswered, or never run) refund a unit each, once.
    let restarted = try PayserviceProcess.run(
      Self.arguments(store, now: "2026-11-21T13:00:00Z"), stdin: Data((lines.joined(separator: "\n") + "\n").utf8))
    #expect(restarted.status == 0)
    let replies = restarted.stdoutText.split(separator: "\n").map(String.init)
    #expect(replies.count == count)
    for answer in answers {
      let id = try JSONParser.parse(answer)["id"]!.stringValue!
      #expect(replies[Int(id)!] == answer)
      #expect(try JSONParser.parse(answer)["result"]?["status"]?.stringValue == "succeeded", "\(answer)")
    }
    #expect(try replies.allSatisfy { try JSONParser.parse($0)["result"]?["status"]?.stringValue == "succeeded" })
    let check = try PayserviceProcess.run(
      Self.arguments(store),
      stdin: Data((#"{"jsonrpc":"2.0","id":1,"method":"getOrder","params":{"orderId":"\#(orderId)"}}"# + "\n").utf8))
    let order = try JSONParser.parse(check.stdoutText)["result"]!["order"]!
    // Each refundId refunded exactly one unit, exactly once.
    let refunds = order["refunds"]!.arrayValue!
    #expect(refunds.count == count)
    #expect(Set(refunds.map { $0["refundId"]!.stringValue! }).count == count)
    let total = refunds.reduce(Int64(0)) { $0 + Self.minor($1["amount"]!.stringValue!) }
    #expect(Self.minor(order["amountRefunded"]!.stringValue!) == total)
    let ledger = try backend.open(store).stockLedger()
    #expect(ledger["pen"]!.onHand == 1000 - 300 + count && ledger["pen"]!.sold == 300 - count)
  }
}
