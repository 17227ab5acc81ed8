import Foundation
import GRDB
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// Pipelined processOrder requests committed as a group must be answered exactly as when each
/// has its own transaction, and a group whose commit fails must keep nothing.
@Suite("Group commit")
struct GroupCommitTests {
  static let contact =
    #"{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}"#

  /// A store with `count` authorized carts, and the processOrder lines that charge them, mixed
  /// with replays, unknown tokens, wrong amounts and declined cards. Clocks and notebooks run out
  /// of stock part of the way through. Tokens are the same for every store built this way.
  static func orders(
    count: Int, storePath: String = ":memory:", backend: StoreBackend? = nil, contact: String = contact
  ) throws -> (context: ServiceContext, lines: [String]) {
    let context = try backend.map { try TestConfig.context(backend: $0) } ?? TestConfig.context(storePath: storePath)
    let handler = TestConfig.handler(context)
    var random = SplitMix64(seed: 11)
    var lines: [String] = []
    for index in 0..<count {
      let sku = ["clock", "notebook", "mug", "lamp"][Int(random.next() % 4)]
      let items = #"[{"sku":"\#(sku)","quantity":\#(random.next() % 2 + 1)}]"#
      let card = index % 9 == 4 ? "tok_visa_chargeDeclined" : "tok_visa"
      let authorized = handler.call(
        "authorizePayment",
        #"{"items":\#(items),"shippingMethod":"free","payment":{"token":{"paymentData":"\#(card)","paymentMethod":{"displayName":"Visa","network":"visa","type":"credit"},"transactionIdentifier":"T\#(index)"},"shippingContact":\#(contact),"billingContact":\#(contact)}}"#
      )["result"]!
      let token = authorized["chargeToken"]!.stringValue!
      let amount = index % 13 == 6 ? "1.00" : authorized["amount"]!.stringValue!
      let order =
        #"{"chargeToken":"\#(token)","items":\#(items),"shippingMethod":"free","shippingContact":\#(contact),"amount":"\#(amount)","currencyCode":"USD"}"#
      lines.append(#"{"jsonrpc":"2.0","id":\#(index),"method":"processOrder","params":\#(order)}"#)
      if index % 7 == 3 {  // the same order again: a replay
        lines.append(#"{"jsonrpc":"2.0","id":"again-\#(index)","method":"processOrder","params":\#(order)}"#)
      }
      if index % 11 == 5 {
        lines.append(
          #"{"jsonrpc":"2.0","id":"unknown-\#(index)","method":"processOrder","params":\#(order.replacingOccurrences(of: token, with: "ctok_unknown"))}"#
        )
      }
    }
    return (context, lines)
  }

  /// Serves `lines` through a server reading a file (so reads bring many lines at once).
  static func serve(_ lines: [String], context: ServiceContext, threads: Int, groupCommits: Bool) throws
    -> (output: String, log: String, grouped: Int)
  {
    let directory = TestPaths.temporaryDirectory()
    let paths = ["in", "out", "log"].map { directory.appendingPathComponent($0).path }
    FileManager.default.createFile(atPath: paths[0], contents: Data((lines.joined(separator: "\n") + "\n").utf8))
    let inFD = open(paths[0], O_RDONLY)
    let outFD = open(paths[1], O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let logFD = open(paths[2], O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    defer { [inFD, outFD, logFD].forEach { close($0) } }
    let log = RequestLog(fd: logFD, level: .requests)
    let server = Server(
      handler: RequestHandler(context: context, methods: .payservice(), log: log), input: inFD, output: outFD, maxLineBytes: 1 << 20,
      log: log, threads: threads, groupCommits: groupCommits)
    #expect(server.run() == .finished)
    log.flush()
    let logText = try String(contentsOfFile: paths[2], encoding: .utf8).replacing(/us=[0-9]+/, with: "us=")
    return (try String(contentsOfFile: paths[1], encoding: .utf8), logText, server.ordersCommittedInGroups)
  }

  @Test(
    "grouped orders are answered and stored exactly as orders with a transaction each",
    arguments: [1, 2], StoreBackend.available)
  func sameAsAlone(threads: Int, backend: StoreBackend) throws {
    let alone = try Self.orders(count: 120, backend: backend)
    let grouped = try Self.orders(count: 120, backend: backend)
    let expected = try Self.serve(alone.lines, context: alone.context, threads: threads, groupCommits: false)
    let actual = try Self.serve(grouped.lines, context: grouped.context, threads: threads, groupCommits: true)
    #expect(actual.output == expected.output)
    #expect(actual.log == expected.log)
    #expect(expected.grouped == 0)
    #expect(actual.grouped > 100)
    // The outcomes are mixed, so the comparison covers every path.
    for outcome in [
      #""status":"succeeded""#, #""failureCode":"out_of_stock""#, #""failureCode":"card_declined""#,
      #""failureCode":"amount_mismatch""#, #""failureCode":"invalid_charge_token""#,
    ] {
      #expect(expected.output.contains(outcome), "no \(outcome) in the stream")
    }
    #expect(try grouped.context.store.stockLedger().mapValues { [$0.onHand, $0.sold] }
      == alone.context.store.stockLedger().mapValues { [$0.onHand, $0.sold] })
    let (a, b) = (try alone.context.store.orderTotals(), try grouped.context.store.orderTotals())
    #expect(a.charges == b.charges && a.orders == b.orders && a.unitsBySKU == b.unitsBySKU)
    #expect(b.orders > 20)
  }

  @Test("a group that cannot be committed keeps nothing, its writing orders are -32001, and they go through later")
  func failedCommit() throws {
    // Long address lines (8 of 256 bytes, the most a contact may have) make every order document
    // span overflow pages, so each order must grow the file.
    let street = "\"" + String(repeating: "Long Street ", count: 21) + "Xxxx\""
    let contact = Self.contact.replacingOccurrences(
      of: "\"1 Infinite Loop\"", with: Array(repeating: street, count: 8).joined(separator: ","))
    let path = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    let (context, lines) = try Self.orders(count: 30, storePath: path, contact: contact)
    let ledger = try context.store.stockLedger().mapValues { [$0.onHand, $0.sold] }
    try (context.store as! SQLiteStore).dbQueue.writeWithoutTransaction { db in
      let pages = try Int.fetchOne(db, sql: "PRAGMA page_count")!
      try db.execute(sql: "PRAGMA max_page_count = \(pages)")
    }
    let full = try Self.serve(lines, context: context, threads: 1, groupCommits: true)
    let answers = full.output.split(separator: "\n")
    #expect(answers.count == lines.count)
    // Orders that write are -32001; the others (unknown token, wrong amount, no stock) write nothing.
    for answer in answers where !answer.contains(#""error":{"code":-32001"#) {
      #expect(
        [#""invalid_charge_token""#, #""amount_mismatch""#, #""out_of_stock""#].contains { answer.contains($0) },
        "\(answer.prefix(160))")
    }
    #expect(answers.filter { $0.contains(#""error":{"code":-32001"#) }.count > 15)
    #expect(full.log.contains("the group commit of the"))
    #expect(try context.store.stockLedger().mapValues { [$0.onHand, $0.sold] } == ledger)
    #expect(try context.store.orderTotals().orders == 0)

    try (context.store as! SQLiteStore).dbQueue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA max_page_count = 1073741823")
    }
    let (aloneContext, _) = try Self.orders(count: 30, contact: contact)
    let expected = try Self.serve(lines, context: aloneContext, threads: 1, groupCommits: false)
    let later = try Self.serve(lines, context: context, threads: 1, groupCommits: true)
    #expect(later.output == expected.output)
    #expect(later.grouped > 20)
  }
}
