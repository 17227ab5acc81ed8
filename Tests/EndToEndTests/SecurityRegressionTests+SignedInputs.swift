import Foundation
import PayServiceCore
import PayServiceTestSupport
import SwiftASN1
import Testing

/// The findings of the review of the App Store and Stripe surfaces (SECURITY.md, "Signed inputs"),
/// each through the built binary, with items signed by a test authority the config trusts.
extension SecurityRegressionTests {
  /// A config trusting a fresh test authority, written to a directory of its own.
  struct SignedShop {
    let shop: AppStoreShop
    let config: String

    init(environments: String = "[Production, Sandbox]") throws {
      shop = try AppStoreShop()
      let directory = TestPaths.temporaryDirectory()
      var serializer = DER.Serializer()
      try serializer.serialize(shop.authority.root)
      let root = directory.appendingPathComponent("root.der")
      try Data(serializer.serializedBytes).write(to: root)
      let text = try String(contentsOfFile: AppStoreGoldenTests.config, encoding: .utf8)
        .replacingOccurrences(of: "rootCertificates: [test-root.der]", with: "rootCertificates: [\(root.path)]")
        .replacingOccurrences(of: "environments: [Production, Sandbox]", with: "environments: \(environments)")
      let file = directory.appendingPathComponent("config.yaml")
      try text.write(to: file, atomically: true, encoding: .utf8)
      config = file.path
    }

    /// Each line's answer from one process on a fresh store.
    func answers(_ lines: [String], backOffice: Bool = false, database: String = ":memory:") throws -> [String] {
      let result = try PayserviceProcess.run(
        ["--config", config, "--database", database, "--now", "2026-12-01T10:00:00Z", "--quiet"]
          + (backOffice ? ["--back-office"] : []),
        stdin: Data(lines.map { $0 + "\n" }.joined().utf8))
      #expect(result.status == 0, "\(result.stderr)")
      return SecurityRegressionTests.answers(result)
    }
  }

  static func request(_ id: Int, _ method: String, _ params: String) -> String {
    #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#
  }

  static func verify(_ id: Int, _ jws: String, _ extra: String = "") -> String {
    request(id, "verifyAppStoreTransaction", #"{"signedTransaction":\#(JSONWriter.string(jws))\#(extra)}"#)
  }

  static let purchased = AppStoreShop.ms("2026-11-30T09:00:00Z")
  static let account = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
  static let other = "0b7c1a52-5e5f-4f51-9c1a-3f0f2e6a7d10"

  @Test("a real Production transaction (no appAppleId, as Apple signs it) is granted; a Production notification for another appAppleId is refused")
  func productionAccepted() throws {
    let setup = try SignedShop(environments: "[Production]")
    let transaction = try setup.shop.transaction(
      id: "5000000000000001", product: "com.example.beans.darkmode", purchase: Self.purchased, signed: Self.purchased,
      appAccountToken: Self.account, environment: "Production")
    let data = #"{"appAppleId":999,"bundleId":"com.example.beans","environment":"Production","signedTransactionInfo":\#(JSONWriter.string(transaction))}"#
    let notification = try setup.shop.authority.sign(
      #"{"notificationType":"ONE_TIME_CHARGE","notificationUUID":"1c4b0ab9-0d76-4cf5-9b7c-6e8d2f1a0001","data":\#(data),"version":"2.0","signedDate":\#(Self.purchased)}"#)
    let answers = try setup.answers([
      Self.verify(1, transaction),
      Self.request(2, "processAppStoreNotification", #"{"signedPayload":\#(JSONWriter.string(notification))}"#),
    ])
    #expect(answers.count == 2)
    guard answers.count == 2 else { return }
    #expect(answers.first?.contains(#""status":"succeeded""#) == true, "\(answers)")
    #expect(answers.first?.contains(#""effect":"granted""#) == true, "\(answers)")
    #expect(
      answers.last
        == #"{"jsonrpc":"2.0","id":2,"result":{"status":"failed","failureCode":"wrong_bundle","message":"signedPayload: signed for another appAppleId than 1234567890"}}"#)
  }

  @Test("a signedDate past year 9999 or before 1970 is refused after the signature, and the lines after are answered, also through MCP")
  func signedDateOutOfRange() throws {
    let setup = try SignedShop()
    func item(_ signed: String) throws -> String {
      try setup.shop.authority.sign(
        #"{"transactionId":"5000000000000002","originalTransactionId":"5000000000000002","bundleId":"com.example.beans","productId":"com.example.beans.darkmode","purchaseDate":\#(Self.purchased),"type":"Non-Consumable","signedDate":\#(signed),"environment":"Sandbox"}"#)
    }
    let late = try item("253402300800000")
    let early = try item("-62135596800001")
    let note = try setup.shop.authority.sign(
      #"{"notificationType":"TEST","notificationUUID":"1c4b0ab9-0d76-4cf5-9b7c-6e8d2f1a0002","data":{"bundleId":"com.example.beans","environment":"Sandbox"},"version":"2.0","signedDate":253402300800000}"#)
    let answers = try setup.answers([
      Self.verify(1, late),
      Self.verify(2, early),
      Self.request(3, "processAppStoreNotification", #"{"signedPayload":\#(JSONWriter.string(note))}"#),
      Self.request(
        4, "tools/call", #"{"name":"verifyAppStoreTransaction","arguments":{"signedTransaction":\#(JSONWriter.string(late))}}"#),
      Self.verify(5, try item("253402300799999")),
    ])
    #expect(answers.count == 5)
    guard answers.count == 5 else { return }
    let refusal = { (id: Int, what: String, value: String) in
      #"{"jsonrpc":"2.0","id":\#(id),"result":{"status":"failed","failureCode":"invalid_format","message":"\#(what): signedDate \#(value) is outside 1970 to 9999 (0 to 253402300799999 milliseconds): no certificate is valid then"}}"#
    }
    #expect(answers[0] == refusal(1, "signedTransaction", "253402300800000"))
    #expect(answers[1] == refusal(2, "signedTransaction", "-62135596800001"))
    #expect(answers[2] == refusal(3, "signedPayload", "253402300800000"))
    #expect(answers[3].contains(#""isError":true"#) && answers[3].contains("outside 1970 to 9999"), "\(answers[3])")
    // The last moment of 9999 is checked: the test chain was not valid then.
    #expect(answers[4].contains(#""failureCode":"invalid_certificate""#), "\(answers[4])")
  }

  @Test("an unsigned item whose levels name Xcode and Production is refused; a signed item without bundleId is refused")
  func appleParity() throws {
    let setup = try SignedShop(environments: "[Production, Sandbox, Xcode]")
    func base64URL(_ text: String) -> String { AppStoreTestAuthority.base64URL(Array(text.utf8)) }
    let mixed =
      base64URL(#"{"alg":"ES256"}"#) + "."
      + base64URL(
        #"{"transactionId":"5000000000000003","originalTransactionId":"5000000000000003","bundleId":"com.example.beans","productId":"com.example.beans.darkmode","purchaseDate":\#(Self.purchased),"type":"Non-Consumable","signedDate":\#(Self.purchased),"environment":"Production","data":{"environment":"Xcode"}}"#)
      + ".AAAA"
    let noBundle = try setup.shop.authority.sign(
      #"{"transactionId":"5000000000000004","originalTransactionId":"5000000000000004","productId":"com.example.beans.darkmode","purchaseDate":\#(Self.purchased),"type":"Non-Consumable","signedDate":\#(Self.purchased),"environment":"Sandbox"}"#)
    let answers = try setup.answers([Self.verify(1, mixed), Self.verify(2, noBundle)])
    #expect(
      answers == [
        #"{"jsonrpc":"2.0","id":1,"result":{"status":"failed","failureCode":"wrong_environment","message":"signedTransaction: the item names two environments, Production and Xcode (data.environment): refused"}}"#,
        #"{"jsonrpc":"2.0","id":2,"result":{"status":"failed","failureCode":"wrong_bundle","message":"signedTransaction: the item names no bundleId; expected com.example.beans"}}"#,
      ])
  }

  @Test("a shopper-facing process names accounts by appAccountToken only: transaction ids are -32602 in getEntitlements and consumeUnits")
  func accountsByToken() throws {
    let setup = try SignedShop()
    let answers = try setup.answers([
      Self.request(1, "getEntitlements", #"{"originalTransactionId":"5000000000000005"}"#),
      Self.request(2, "consumeUnits", #"{"account":"5000000000000005","entitlement":"coins","units":1,"consumptionId":"c1"}"#),
      Self.request(3, "getEntitlements", #"{"appAccountToken":"\#(Self.account)"}"#),
    ])
    let message = "names an account by a transaction id, which only the back office (--back-office) may do; name it by its appAccountToken (a UUID)"
    #expect(answers.count == 3)
    guard answers.count == 3 else { return }
    #expect(
      answers[0]
        == #"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"originalTransactionId","message":"\#(message)"}]}}}"#)
    #expect(
      answers[1]
        == #"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"account","message":"\#(message)"}]}}}"#)
    #expect(answers[2].hasPrefix(#"{"jsonrpc":"2.0","id":3,"result":{"account":"\#(Self.account)""#), "\(answers[2])")
  }

  @Test(
    "a caller's appAccountToken never moves a purchase outside the back office; a purchase that moves takes what was spent along",
    arguments: StoreBackend.available)
  func ownership(backend: StoreBackend) throws {
    let setup = try SignedShop()
    let database = try backend.freshDatabase()
    // Coins bought without an account: under the purchase's own id.
    let anonymous = try setup.shop.transaction(
      id: "5000000000000006", product: "com.example.beans.coins100", purchase: Self.purchased, signed: Self.purchased)
    let shopper = try setup.answers(
      [
        Self.verify(1, anonymous, #","appAccountToken":"\#(Self.other)""#),
        Self.verify(2, anonymous),
        Self.request(3, "getEntitlements", #"{"appAccountToken":"\#(Self.other)"}"#),
      ], database: database)
    #expect(shopper.count == 3)
    guard shopper.count == 3 else { return }
    #expect(
      shopper.first
        == #"{"jsonrpc":"2.0","id":1,"result":{"status":"failed","failureCode":"wrong_account","message":"purchase 5000000000000006 is not signed for account \#(Self.other), and only the back office assigns accounts: nothing was recorded"}}"#)
    #expect(shopper[1].contains(#""account":"5000000000000006""#) && shopper[1].contains(#""effect":"credited""#), "\(shopper[1])")
    #expect(shopper[2].contains(#""balances":[]"#), "\(shopper[2])")
    // The back office spends 100 from the purchase's account; then Apple signs the purchase for an account.
    let spend = Self.request(
      1, "consumeUnits", #"{"account":"5000000000000006","entitlement":"coins","units":100,"consumptionId":"spent-1"}"#)
    let signedLater = try setup.shop.transaction(
      id: "5000000000000006", product: "com.example.beans.coins100", purchase: Self.purchased, signed: Self.purchased + 1000,
      appAccountToken: Self.account)
    let office = try setup.answers(
      [
        spend,
        Self.verify(2, signedLater),
        Self.request(3, "consumeUnits", #"{"account":"\#(Self.account)","entitlement":"coins","units":100,"consumptionId":"spent-2"}"#),
        Self.request(4, "getEntitlements", #"{"originalTransactionId":"5000000000000006"}"#),
      ], backOffice: true, database: database)
    #expect(office.count == 4)
    guard office.count == 4 else { return }
    #expect(office[0].contains(#""status":"succeeded""#), "\(office[0])")
    #expect(office[1].contains(#""account":"\#(Self.account)""#), "\(office[1])")
    // What was spent moved with the purchase: nothing left to spend twice.
    #expect(office[2].contains(#""failureCode":"insufficient_units""#), "\(office[2])")
    #expect(
      office[3].contains(#""balances":[{"entitlement":"coins","units":0,"purchased":100,"refunded":0,"consumed":100}]"#),
      "\(office[3])")
  }
}

/// The Stripe findings of the same review, through the binary and the Stripe test server: signed
/// events whose amounts, currency, PaymentIntent or mode do not fit the order.
@Suite("Security regressions: Stripe events", .serialized)
struct StripeSecurityRegressionTests {
  @Test("unbounded, foreign-currency and over-refunding amounts are recorded as refused; another's PaymentIntent names no order; another mode is wrong_mode")
  func misfits() throws {
    var shop = try StripeCrashTests.Shop(backend: .sqlite)
    defer { shop.server.shutdown() }
    let placed = try shop.run([try shop.authorize()])[0]
    let orderId = try #require(placed["result"]?["order"]?["orderId"]?.stringValue, "\(placed.compact)")
    let intent = try #require(placed["result"]?["order"]?["gatewayPaymentId"]?.stringValue, "\(placed.compact)")
    let now = StripeWebhookOrderTests.now
    func event(_ id: String, _ type: String, _ object: String) -> String {
      #"{"jsonrpc":"2.0","id":"\#(id)","method":"processStripeEvent","params":\#(StripeFixture.webhook(id: id, type: type, object: object, now: now))}"#
    }
    func refund(_ id: String, amount: String, currency: String = "usd", paymentIntent: String = intent, metadata: String = "{}") -> String {
      #"{"id":"\#(id)","object":"refund","amount":\#(amount),"currency":"\#(currency)","created":\#(now - 10),"metadata":\#(metadata),"payment_intent":"\#(paymentIntent)","status":"succeeded"}"#
    }
    let huge = event("evt_sec1", "refund.created", refund("re_sec1", amount: "999999999999999999"))
    let yen = event("evt_sec2", "refund.created", refund("re_sec2", amount: "5000", currency: "jpy"))
    let more = event("evt_sec3", "refund.created", refund("re_sec3", amount: "100000"))
    let foreign = event(
      "evt_sec4", "refund.created",
      refund("re_sec4", amount: "100", paymentIntent: "pi_someone_else", metadata: #"{"order_id":"\#(orderId)"}"#))
    let dispute = event(
      "evt_sec5", "charge.dispute.created",
      #"{"id":"dp_sec5","object":"dispute","amount":999999999999999999,"currency":"usd","created":\#(now - 10),"payment_intent":"\#(intent)","reason":"fraudulent","status":"needs_response"}"#)
    let livePayload =
      #"{"id":"evt_sec6","object":"event","api_version":"2024-06-20","created":\#(now - 5),"data":{"object":{"id":"cus_1","object":"customer"}},"livemode":true,"type":"customer.created"}"#
    let live = #"{"jsonrpc":"2.0","id":"evt_sec6","method":"processStripeEvent","params":{"payload":\#(JSONWriter.string(livePayload)),"signature":"\#(StripeWebhookSignature.header(payload: livePayload, secret: StripeFixture.webhookSecret, timestamp: now))"}}"#
    let answers = try shop.run([
      huge, yen, more, foreign, dispute, live, huge,
      #"{"jsonrpc":"2.0","id":"o","method":"getOrder","params":{"orderId":"\#(orderId)"}}"#,
      #"{"jsonrpc":"2.0","id":"p","method":"payoutReport","params":{"from":"2026-11-01","to":"2026-11-30"}}"#,
    ])
    #expect(answers.count == 9)
    guard answers.count == 9 else { return }
    func result(_ index: Int) -> JSONValue? { answers[index]["result"] }
    #expect(result(0)?["effect"] == .string("refused"), "\(answers[0].compact)")
    #expect(result(0)?["message"] == .string("the refund's amount 999999999999999999 is past the 10^15 minor units any amount may have"))
    #expect(result(1)?["effect"] == .string("refused"))
    #expect(result(1)?["message"] == .string("the refund is in jpy, the order in USD"))
    #expect(result(2)?["effect"] == .string("refused"))
    #expect(result(2)?["message"]?.stringValue?.hasPrefix("the refund's amount 100000 is more than the") == true, "\(answers[2].compact)")
    #expect(result(3)?["effect"] == .string("none") && result(3)?["orderId"] == nil, "\(answers[3].compact)")
    #expect(result(4)?["effect"] == .string("refused"), "\(answers[4].compact)")
    #expect(result(5)?["failureCode"] == .string("wrong_mode"), "\(answers[5].compact)")
    // Redelivered: the same answer, and still nothing applied.
    #expect(answers[6] == answers[0])
    let order = result(7)?["order"]
    #expect(order?["status"] == .string("paid"), "\(answers[7].compact)")
    #expect(order?["amountRefunded"] == .string("0.00"), "\(answers[7].compact)")
    #expect(order?["disputes"]?.arrayValue?.isEmpty ?? true, "\(answers[7].compact)")
    // The books add up: no sum overflowed.
    #expect(result(8) != nil && answers[8]["error"] == nil, "\(answers[8].compact)")
  }
}

extension SecurityRegressionTests {
  @Test(
    "erasure replaces the refund and cancel reasons staff wrote, in getOrder, the replay and the store file",
    arguments: StoreBackend.available)
  func erasureCoversReasons(backend: StoreBackend) throws {
    let database = try backend.freshDatabase()
    let shop = try RunningPayservice(
      ["--config", Self.config, "--database", database, "--now", Self.now, "--quiet", "--back-office"])
    defer { shop.finish() }
    let (_, orderId) = try Self.placeOrder(shop)
    let reason = "Ada Lovelace called from +1 408 555 0100, clock arrived broken"
    let refund = #"{"jsonrpc":"2.0","id":3,"method":"refundOrder","params":{"orderId":"\#(orderId)","refundId":"rf-ada","amount":"1.00","reason":"\#(reason)"}}"#
    let refunded = try shop.ask(refund)
    #expect(refunded.contains(reason), "\(refunded)")
    let erased = try shop.ask(
      #"{"jsonrpc":"2.0","id":4,"method":"erasePersonalData","params":{"erasureId":"erase-ada","orderId":"\#(orderId)"}}"#)
    #expect(erased.contains(#""status":"succeeded""#), "\(erased)")
    let order = try shop.ask(#"{"jsonrpc":"2.0","id":5,"method":"getOrder","params":{"orderId":"\#(orderId)"}}"#)
    #expect(!order.contains("Lovelace") && order.contains(#""reason":"[erased]""#), "\(order)")
    // The same refundOrder again, with its original reason, is still the same call: its answer, erased.
    let replay = try shop.ask(refund)
    #expect(replay == refunded.replacingOccurrences(of: reason, with: "[erased]"), "\(replay)")
    shop.finish()
    guard backend == .sqlite else { return }
    var bytes = try Data(contentsOf: URL(fileURLWithPath: database))
    for suffix in ["-wal", "-shm"] {
      bytes += (try? Data(contentsOf: URL(fileURLWithPath: database + suffix))) ?? Data()
    }
    #expect(bytes.range(of: Data("Lovelace called".utf8)) == nil)
  }

  /// A config trusting `setup`'s authority with an `api` section reaching `server`.
  static func apiConfig(_ setup: SignedShop, _ server: AppStoreServerTestServer) throws -> String {
    try AppStoreServerAPIGoldenTests.config(
      server, in: TestPaths.temporaryDirectory(), base: try String(contentsOfFile: setup.config, encoding: .utf8))
  }

  /// `count` purchases of coins in one history (one originalTransactionId, `original`, and its next
  /// numbers), a history page each when the server's pages hold one.
  static func chain(_ setup: SignedShop, _ original: String, count: Int, account: String) throws
    -> [(String, String, String)]
  {
    try (0..<count).map { index in
      let id = String(Int64(original)! + Int64(index))
      return (
        id, original,
        try setup.shop.transaction(
          id: id, original: original, product: "com.example.beans.coins100", purchase: Self.purchased + index,
          signed: Self.purchased + index, appAccountToken: account)
      )
    }
  }

  static func receipt(_ transactionId: String, original: String) -> String {
    AppReceiptBuilder.receipt(
      bundleId: AppStoreShop.bundleId,
      purchases: [
        AppReceipt.InAppPurchase(
          transactionId: transactionId, originalTransactionId: original, productId: "com.example.beans.coins100",
          quantity: 1)
      ])
  }

  @Test("a receipt naming a victim's transaction takes nothing; lookups are bounded in pages and rate-limited per process")
  func receipts() throws {
    let setup = try SignedShop()
    let server = try AppStoreServerAPIGoldenTests.server(historyPageSize: 1)
    defer { server.shutdown() }
    // The victim bought coins under their account; another customer has a long history.
    let victim = try setup.shop.transaction(
      id: "6000000000000001", product: "com.example.beans.coins100", purchase: Self.purchased, signed: Self.purchased,
      appAccountToken: Self.account)
    server.addTransactions([("6000000000000001", "6000000000000001", victim)], environment: .sandbox)
    server.addTransactions(try Self.chain(setup, "7000000000000000", count: 12, account: Self.other), environment: .sandbox)
    let config = try Self.apiConfig(setup, server)
    func lookup(_ id: Int, _ transactionId: String, _ account: String?) -> String {
      let named = account.map { #","appAccountToken":"\#($0)""# } ?? ""
      return Self.request(
        id, "verifyAppStoreTransaction", #"{"appReceipt":"\#(Self.receipt(transactionId, original: transactionId))"\#(named)}"#)
    }
    var lines = [
      lookup(1, "6000000000000001", Self.other),
      Self.request(2, "getEntitlements", #"{"appAccountToken":"\#(Self.other)"}"#),
      lookup(3, "6000000000000001", nil),
      lookup(4, "7000000000000011", Self.other),
    ]
    for id in 5...24 { lines.append(lookup(id, "6000000000000001", Self.account)) }
    let result = try PayserviceProcess.run(
      ["--config", config, "--database", ":memory:", "--now", "2026-12-01T10:00:00Z", "--quiet"],
      stdin: Data(lines.map { $0 + "\n" }.joined().utf8))
    let answers = Self.answers(result)
    #expect(answers.count == 24, "\(result.stderr)")
    guard answers.count == 24 else { return }
    #expect(
      answers[0]
        == #"{"jsonrpc":"2.0","id":1,"result":{"status":"failed","failureCode":"wrong_account","message":"purchase 6000000000000001 is not signed for account \#(Self.other), and only the back office assigns accounts: nothing was recorded"}}"#)
    #expect(answers[1].contains(#""balances":[]"#), "\(answers[1])")
    #expect(
      answers[2]
        == #"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"appAccountToken","message":"is required with appReceipt outside the back office: a receipt is not signed data, so it is answered only for a purchase Apple signed for the account named"}]}}}"#)
    // The 12th transaction of a history of 12 pages: past the 10 pages one lookup fetches.
    #expect(
      answers[3]
        == #"{"jsonrpc":"2.0","id":4,"result":{"status":"failed","failureCode":"not_found","message":"appReceipt: transaction 7000000000000011 is not in the history Apple answered (its first 10 pages, the most one lookup fetches)"}}"#)
    // The victim's own lookups: answered until the process's 20 a minute are spent (two went above).
    #expect(answers[4].contains(#""status":"succeeded""#) && answers[4].contains(Self.account), "\(answers[4])")
    #expect(answers[4...21].allSatisfy { $0.contains(#""status":"succeeded""#) })
    #expect(
      answers[22]
        == #"{"jsonrpc":"2.0","id":23,"result":{"status":"failed","failureCode":"rate_limited","message":"appReceipt: this process looked up 20 receipts in the last minute, its limit; try again in 3 s"}}"#)
    #expect(answers[23].contains(#""failureCode":"rate_limited""#))
    // Production (404) then Sandbox for each lookup; the long history's ten pages; nothing once limited.
    #expect(server.requests.count == 2 + (1 + 10) + 18 * 2, "\(server.requests.count)")
  }

  @Test("the back office's history sync stops at 50 pages and answers where to go on")
  func syncBound() throws {
    let setup = try SignedShop()
    let server = try AppStoreServerAPIGoldenTests.server(historyPageSize: 1)
    defer { server.shutdown() }
    server.addTransactions(try Self.chain(setup, "8000000000000000", count: 55, account: Self.account), environment: .production)
    let config = try Self.apiConfig(setup, server)
    let first = try PayserviceProcess.run(
      ["--config", config, "--database", ":memory:", "--now", "2026-12-01T10:00:00Z", "--quiet", "--back-office"],
      stdin: Data((Self.request(1, "syncAppStoreHistory", #"{"transactionId":"8000000000000000"}"#) + "\n").utf8))
    let answer = try JSONParser.parse(try #require(Self.answers(first).first))
    #expect(answer["result"]?["pages"] == .number("50"), "\(answer.compact)")
    let revision = try #require(answer["result"]?["revision"]?.stringValue, "\(answer.compact)")
    #expect(answer["result"]?["applied"]?.arrayValue?.count == 50)
    #expect(server.requests.count == 50)
    let rest = try PayserviceProcess.run(
      ["--config", config, "--database", ":memory:", "--now", "2026-12-01T10:00:00Z", "--quiet", "--back-office"],
      stdin: Data(
        (Self.request(
          2, "syncAppStoreHistory",
          #"{"transactionId":"8000000000000000","environment":"Production","revision":\#(JSONWriter.string(revision))}"#)
          + "\n").utf8))
    let last = try JSONParser.parse(try #require(Self.answers(rest).first))
    #expect(last["result"]?["pages"] == .number("5"), "\(last.compact)")
    #expect(last["result"]?["revision"] == nil)
    #expect(last["result"]?["applied"]?.arrayValue?.first?["transactionId"] == .string("8000000000000050"))
  }
}

extension SecurityRegressionTests {
  @Test("the back office may not move a purchase whose units were spent away from the account that spent them")
  func spentStays() throws {
    let setup = try SignedShop()
    let coins = try setup.shop.transaction(
      id: "5000000000000009", product: "com.example.beans.coins100", purchase: Self.purchased, signed: Self.purchased)
    let answers = try setup.answers(
      [
        Self.verify(1, coins, #","appAccountToken":"\#(Self.account)""#),
        Self.request(2, "consumeUnits", #"{"account":"\#(Self.account)","entitlement":"coins","units":60,"consumptionId":"c-1"}"#),
        Self.verify(3, try setup.shop.transaction(
          id: "5000000000000009", product: "com.example.beans.coins100", purchase: Self.purchased,
          signed: Self.purchased + 1000), #","appAccountToken":"\#(Self.other)""#),
        Self.request(4, "getEntitlements", #"{"appAccountToken":"\#(Self.account)"}"#),
      ], backOffice: true)
    #expect(answers.count == 4)
    guard answers.count == 4 else { return }
    #expect(answers[0].contains(#""account":"\#(Self.account)""#), "\(answers[0])")
    #expect(answers[1].contains(#""status":"succeeded""#), "\(answers[1])")
    #expect(
      answers[2]
        == #"{"jsonrpc":"2.0","id":3,"result":{"status":"failed","failureCode":"units_spent","message":"purchase 5000000000000009 cannot move: the account it belongs to has spent 60 coins, more than it would have left: nothing was recorded"}}"#)
    #expect(
      answers[3].contains(#""balances":[{"entitlement":"coins","units":40,"purchased":100,"refunded":0,"consumed":60}]"#),
      "\(answers[3])")
  }
}
