import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The findings of the security review (issue 30), each through the built binary: what crashed it,
/// what leaked a customer, what let a claim set a price. SECURITY.md lists them with these tests.
@Suite("Security regressions")
struct SecurityRegressionTests {
  static let config = TestConfig.yamlPath
  static let now = "2026-11-21T12:00:00Z"

  static func serve(_ lines: [String], _ extra: [String] = [], environment: [String: String]? = nil) throws
    -> ProcessResult
  {
    try PayserviceProcess.run(
      ["--config", config, "--database", ":memory:", "--now", now, "--quiet"] + extra,
      stdin: Data(lines.map { $0 + "\n" }.joined().utf8), environment: environment)
  }

  static func answers(_ result: ProcessResult) -> [String] {
    result.stdoutText.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
  }

  static let twentyDigits = "99999999999999999999"
  static let minExponent = "1e-9223372036854775808"

  static func quantityError(_ id: Int, _ path: String, _ got: String, range: String = "1 to 9999") -> String {
    #"{"jsonrpc":"2.0","id":\#(id),"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"\#(path)","message":"must be an integer from \#(range), got \#(got)"}]}}}"#
  }

  @Test("integers with more digits than Int64 or an exponent of Int64.min are -32602, and the lines after are answered")
  func integersThatTrapped() throws {
    let lines = [
      // The borrowed path (a plain computeSummaryItems) and the general one (an escape declines it).
      #"{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{"items":[{"sku":"clock","quantity":\#(Self.twentyDigits)}]}}"#,
      #"{"jsonrpc":"2.0","id":2,"method":"computeSummaryItems","params":{"items":[{"sku":"cl\u006fck","quantity":\#(Self.twentyDigits)}]}}"#,
      #"{"jsonrpc":"2.0","id":3,"method":"computeSummaryItems","params":{"items":[{"sku":"clock","quantity":\#(Self.minExponent)}]}}"#,
      #"{"jsonrpc":"2.0","id":4,"method":"selectShippingMethod","params":{"items":[{"sku":"clock","quantity":1E-9223372036854775808}],"shippingMethod":"free"}}"#,
      #"{"jsonrpc":"2.0","id":5,"method":"listOrders","params":{"limit":\#(Self.minExponent)}}"#,
      #"{"jsonrpc":"2.0","id":6,"method":"refundOrder","params":{"orderId":"ord_x","refundId":"r","lines":[{"sku":"clock","quantity":\#(Self.minExponent)}]}}"#,
      #"{"jsonrpc":"2.0","id":7,"method":"computeSummaryItems","params":{"items":[{"sku":"clock","quantity":-0.0e-9223372036854775808}]}}"#,
      #"{"jsonrpc":"2.0","id":8,"method":"computeSummaryItems","params":{"items":[{"sku":"clock","quantity":2}]}}"#,
    ]
    let result = try Self.serve(lines, ["--back-office"])
    #expect(result.status == 0, "\(result.stderr)")
    let answers = Self.answers(result)
    #expect(answers.count == 8)
    guard answers.count == 8 else { return }
    #expect(answers[0] == Self.quantityError(1, "items[0].quantity", Self.twentyDigits))
    #expect(answers[1] == Self.quantityError(2, "items[0].quantity", Self.twentyDigits))
    #expect(answers[2] == Self.quantityError(3, "items[0].quantity", Self.minExponent))
    #expect(answers[3] == Self.quantityError(4, "items[0].quantity", "1E-9223372036854775808"))
    #expect(answers[4] == Self.quantityError(5, "limit", Self.minExponent, range: "1 to 100"))
    #expect(answers[5].hasPrefix(#"{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"#))
    #expect(answers[5].contains(#"{"path":"lines[0].quantity","message":"must be an integer from 1 to 9999, got 1e-9223372036854775808"}"#))
    #expect(answers[6] == Self.quantityError(7, "items[0].quantity", "-0.0e-9223372036854775808"))
    #expect(answers[7].hasPrefix(#"{"jsonrpc":"2.0","id":8,"result":{"#))
  }

  @Test("the same through MCP tools/call and the call command")
  func integersThatTrappedElsewhere() throws {
    let mcp = try Self.serve([
      #"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"computeSummaryItems","arguments":{"items":[{"sku":"clock","quantity":\#(Self.minExponent)}]}}}"#,
      #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"computeSummaryItems","arguments":{"items":[{"sku":"clock","quantity":\#(Self.twentyDigits)}]}}}"#,
    ])
    #expect(mcp.status == 0, "\(mcp.stderr)")
    let answers = Self.answers(mcp)
    #expect(answers.count == 2)
    #expect(answers.allSatisfy { $0.contains(#""isError":true"#) && $0.contains("must be an integer from 1 to 9999") })
    let call = try PayserviceProcess.run([
      "call", "computeSummaryItems", #"{"items":[{"sku":"clock","quantity":\#(Self.minExponent)}]}"#, "--config",
      Self.config, "--database", ":memory:",
    ])
    #expect(call.status == 1)
    #expect(call.stdoutText == #"{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"items[0].quantity","message":"must be an integer from 1 to 9999, got 1e-9223372036854775808"}]}}"# + "\n")
  }

  /// One line: a batch of `count` copies of `request`.
  static func batch(_ request: String, _ count: Int) -> String {
    "[" + Array(repeating: request, count: count).joined(separator: ",") + "]"
  }

  static let discover = #"{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}"#

  @Test("a batch holds at most 100 requests; a longer one is one -32600 and none of it runs")
  func batchCap() throws {
    let result = try Self.serve([Self.batch(Self.discover, 15_000)])
    #expect(result.status == 0)
    #expect(
      result.stdoutText
        == #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a batch holds at most 100 requests, this one 15000; none was run"}}"#
        + "\n")
    let hundred = try Self.serve([Self.batch(#"{"jsonrpc":"2.0","id":1,"method":"listShippingMethods"}"#, 100)])
    #expect(hundred.stdoutText.hasPrefix(#"[{"jsonrpc":"2.0","id":1,"result":"#))
    #expect(hundred.stdoutText.components(separatedBy: #"{"jsonrpc":"2.0","id":1,"result":"#).count - 1 == 100)
  }

  @Test("a response line over 8 MiB is replaced by a -32603 that names the limit")
  func responseCap() throws {
    let result = try Self.serve([Self.batch(Self.discover, 100)])
    #expect(result.status == 0)
    #expect(
      result.stdoutText
        == #"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error: the response exceeds the limit of 8 MiB per line; ask for less at a time"}}"#
        + "\n")
  }

  @Test("contact fields are capped at 256 bytes and 8 address lines")
  func contactCaps() throws {
    let long = String(repeating: "a", count: 257)
    let result = try Self.serve([
      #"{"jsonrpc":"2.0","id":1,"method":"selectShippingContact","params":{"items":[{"sku":"clock"}],"shippingContact":{"countryCode":"US","locality":"\#(long)"}}}"#,
      #"{"jsonrpc":"2.0","id":2,"method":"computeSummaryItems","params":{"items":[{"sku":"clock"}],"shippingContact":{"countryCode":"US","addressLines":["1","2","3","4","5","6","7","8","9"]}}}"#,
      #"{"jsonrpc":"2.0","id":3,"method":"computeSummaryItems","params":{"items":[{"sku":"clock"}],"shippingContact":{"postalCode":"\#(long)"}}}"#,
    ])
    #expect(
      Self.answers(result) == [
        #"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"shippingContact.locality","message":"must be at most 256 bytes of UTF-8, got 257"}]}}}"#,
        #"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"shippingContact.addressLines","message":"must have at most 8 lines, got 9"}]}}}"#,
        #"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"shippingContact.postalCode","message":"must be at most 256 bytes of UTF-8, got 257"}]}}}"#,
      ])
  }

  static let contact =
    #"{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","phoneNumber":"+1 (408) 555-0100","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}"#
  static let billing =
    #"{"givenName":"Grace","familyName":"Hopper","phoneNumber":"+1 (212) 555-0199","addressLines":["2 Broadway"],"locality":"New York","administrativeArea":"NY","postalCode":"10004","countryCode":"US"}"#

  static func authorize(_ id: Int, card: String = "tok_visa", network: String = "visa", type: String = "credit") -> String {
    #"{"jsonrpc":"2.0","id":\#(id),"method":"authorizePayment","params":{"items":[{"sku":"clock"}],"shippingMethod":"free","payment":{"token":{"paymentData":"\#(card)","paymentMethod":{"displayName":"Card","network":"\#(network)","type":"\#(type)"},"transactionIdentifier":"T\#(id)"},"shippingContact":\#(contact),"billingContact":\#(billing)}}}"#
  }

  static func process(_ id: Int, token: String, billing: Bool) -> String {
    let billingMember = billing ? #","billingContact":\#(Self.billing)"# : ""
    return #"{"jsonrpc":"2.0","id":\#(id),"method":"processOrder","params":{"chargeToken":"\#(token)","items":[{"sku":"clock"}],"shippingMethod":"free","shippingContact":\#(contact)\#(billingMember),"amount":"53.63","currencyCode":"USD"}}"#
  }

  /// Authorizes and places one order in a running process; returns its charge token and order id.
  static func placeOrder(_ shop: RunningPayservice) throws -> (token: String, orderId: String) {
    let authorized = try JSONParser.parse(try shop.ask(Self.authorize(1)))
    let token = try #require(authorized["result"]?["chargeToken"]?.stringValue)
    let placed = try JSONParser.parse(try shop.ask(Self.process(2, token: token, billing: true)))
    return (token, try #require(placed["result"]?["orderId"]?.stringValue))
  }

  @Test("identifiers carry 128 bits and more of keyed MAC output: two new stores fed the same requests never share one")
  func unguessableIdentifiers() throws {
    var environment = ProcessInfo.processInfo.environment
    environment[IdentifierKey.pinVariable] = ""  // each store draws its own key (the real clock: no --now)
    var seen: [(token: String, orderId: String)] = []
    for _ in 0..<2 {
      let shop = try RunningPayservice(
        ["--config", Self.config, "--database", ":memory:", "--quiet"], environment: environment)
      defer { shop.finish() }
      seen.append(try Self.placeOrder(shop))
    }
    // `ctok_`, 8 hex digits of the second it was issued, 40 of MAC; `ord_`, the same second, 32.
    for ids in seen {
      #expect(ids.token.utf8.count == 53 && ids.token.hasPrefix("ctok_"))
      #expect(ids.orderId.utf8.count == 44 && ids.orderId.hasPrefix("ord_"))
      #expect(ids.orderId.dropFirst(4).prefix(8) == ids.token.dropFirst(5).prefix(8))
    }
    // The MAC parts differ, not only the whole: the second they share says nothing about them.
    #expect(seen[0].token.dropFirst(13) != seen[1].token.dropFirst(13))
    #expect(seen[0].orderId.dropFirst(12) != seen[1].orderId.dropFirst(12))
    #expect(seen[0].token != seen[1].token)
    #expect(seen[0].orderId != seen[1].orderId)
  }

  @Test("getOrder is the back office's: elsewhere -32601; 100 guessed ids near a real one find nothing")
  func ordersAreNotReadableByGuess() throws {
    let database = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    let shop = try RunningPayservice(["--config", Self.config, "--database", database, "--now", Self.now, "--quiet"])
    let (_, orderId) = try Self.placeOrder(shop)
    #expect(
      try shop.ask(#"{"jsonrpc":"2.0","id":3,"method":"getOrder","params":{"orderId":"\#(orderId)"}}"#)
        == #"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: getOrder"}}"#)
    shop.finish()
    // Guesses: the real id with one or two hex digits changed, as an attacker near it would try.
    var generator = SplitMix64(seed: 30)
    let digits = Array("0123456789abcdef")
    var guesses: Set<String> = []
    while guesses.count < 100 {
      var characters = Array(orderId)
      for _ in 0...Int.random(in: 0...1, using: &generator) {
        let position = Int.random(in: 4..<characters.count, using: &generator)
        characters[position] = digits.filter { $0 != characters[position] }.randomElement(using: &generator)!
      }
      guesses.insert(String(characters))
    }
    let lines = guesses.sorted().enumerated().map { index, guess in
      #"{"jsonrpc":"2.0","id":\#(index),"method":"getOrder","params":{"orderId":"\#(guess)"}}"#
    }
    let office = try PayserviceProcess.run(
      ["--config", Self.config, "--database", database, "--back-office", "--quiet"],
      stdin: Data((lines + [#"{"jsonrpc":"2.0","id":"real","method":"getOrder","params":{"orderId":"\#(orderId)"}}"#]).map { $0 + "\n" }.joined().utf8))
    let answers = Self.answers(office)
    #expect(answers.count == 101)
    #expect(answers.dropLast().allSatisfy { $0.contains(#""error":{"code":-32003,"#) })
    #expect(answers.last?.hasPrefix(#"{"jsonrpc":"2.0","id":"real","result":{"order":"#) == true)
  }

  @Test("a processOrder replay must be the whole request: one without the billing contact sent is -32002")
  func replayMatchesTheWholeRequest() throws {
    let shop = try RunningPayservice(["--config", Self.config, "--database", ":memory:", "--now", Self.now, "--quiet"])
    defer { shop.finish() }
    let (token, _) = try Self.placeOrder(shop)
    let conflict = #"{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"Charge token conflict: the charge token was already used for a different order"}}"#
    #expect(try shop.ask(Self.process(3, token: token, billing: false)) == conflict)
    let replay = try JSONParser.parse(try shop.ask(Self.process(4, token: token, billing: true)))
    #expect(replay["result"]?["status"]?.stringValue == "succeeded")
    #expect(replay["result"]?["order"]?["billingContact"]?["givenName"]?.stringValue == "Grace")
  }

  @Test("the sandbox test card decides the card's price: a claim that disagrees is refused naming both")
  func sandboxCardClaims() throws {
    let result = try Self.serve([
      Self.authorize(1, card: "tok_amex", network: "privateLabel", type: "store"),
      Self.authorize(2, card: "tok_visa", network: "masterCard", type: "credit"),
      Self.authorize(3, card: "tok_visa", network: "visa", type: "debit"),
      Self.authorize(4, card: "tok_VISA", network: "Visa", type: "credit"),
      Self.authorize(5, card: "tok_anything", network: "visa", type: "credit"),
    ])
    let answers = Self.answers(result)
    #expect(answers.count == 5)
    guard answers.count == 5 else { return }
    #expect(answers[0].contains(#""status":"failure","errors":[{"code":"unknown","message":"the card's network and type are amex credit (by the sandbox test card tok_amex), but payment.token.paymentMethod says privateLabel store"}]"#))
    #expect(answers[1].contains(#""message":"the card's network and type are visa credit (by the sandbox test card tok_visa), but payment.token.paymentMethod says masterCard credit""#))
    #expect(answers[2].contains(#""message":"the card's network and type are visa credit (by the sandbox test card tok_visa), but payment.token.paymentMethod says visa debit""#))
    #expect(answers[3].contains(#""status":"success""#))
    #expect(answers[4].contains(#"{"path":"payment.token.paymentData","message":"is not a sandbox test card: use one such as tok_visa, tok_visa_debit, tok_mastercard, tok_amex, tok_privateLabel_store (tok_NETWORK or tok_NETWORK_TYPE), or a real Apple Pay token (an object)"}"#))
  }

  @Test("answers of committed work are written before a later line traps the process")
  func committedAnswersSurviveATrap() throws {
    let directory = TestPaths.temporaryDirectory()
    let database = directory.appendingPathComponent("store.sqlite").path
    // Two tokens first, in a process of their own.
    let shop = try RunningPayservice(["--config", Self.config, "--database", database, "--quiet"])
    let first = try JSONParser.parse(try shop.ask(Self.authorize(1)))["result"]?["chargeToken"]?.stringValue
    let second = try JSONParser.parse(try shop.ask(Self.authorize(2)))["result"]?["chargeToken"]?.stringValue
    shop.finish()
    let tokens = [try #require(first), try #require(second)]
    // Both orders and the trap arrive in one read.
    let input = [
      Self.process(3, token: tokens[0], billing: true), Self.process(4, token: tokens[1], billing: true),
      #"{"jsonrpc":"2.0","id":5,"method":"test.trap"}"#,
    ].map { $0 + "\n" }.joined()
    let server = Process()
    server.executableURL = URL(fileURLWithPath: TestPaths.executable("payservice-fault-server"))
    server.arguments = [Self.config, database]
    let stdin = Pipe()
    let stdout = Pipe()
    server.standardInput = stdin
    server.standardOutput = stdout
    server.standardError = FileHandle.nullDevice
    try server.run()
    stdin.fileHandleForWriting.write(Data(input.utf8))
    try stdin.fileHandleForWriting.close()
    let output = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    server.waitUntilExit()
    #expect(server.terminationReason == .uncaughtSignal)
    let lines = output.split(separator: "\n").map(String.init)
    #expect(lines.count == 2)
    #expect(lines.allSatisfy { $0.contains(#""status":"succeeded""#) })
    let store = try SQLiteStore(path: database)
    #expect(try store.orders(OrderQuery(limit: 10)).count == 2)
  }
}
