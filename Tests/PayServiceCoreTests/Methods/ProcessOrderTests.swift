import Foundation
import GRDB
import PayServiceCore
import PayServiceTestSupport
import Testing

@Suite("processOrder against the store")
struct ProcessOrderTests {
  static let shipping =
    #"{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}"#
  static let billing =
    #"{"addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}"#

  static func authorize(_ handler: RequestHandler, items: String = #"[{"sku":"clock"}]"#) -> (token: String, amount: String) {
    let response = handler.call(
      "authorizePayment",
      #"{"items":\#(items),"shippingMethod":"free","payment":{"token":{"paymentData":"tok_visa","paymentMethod":{"displayName":"Visa","network":"visa","type":"credit"},"transactionIdentifier":"T"},"shippingContact":\#(shipping),"billingContact":\#(billing)}}"#)
    return (response["result"]!["chargeToken"]!.stringValue!, response["result"]!["amount"]!.stringValue!)
  }

  static func orderParams(_ token: String, _ amount: String, items: String = #"[{"sku":"clock"}]"#) -> String {
    #"{"chargeToken":"\#(token)","items":\#(items),"shippingMethod":"free","shippingContact":\#(shipping),"amount":"\#(amount)","currencyCode":"USD"}"#
  }

  @Test("a token expires after chargeTokenTTLSeconds; replay of a used token works after expiry")
  func expiry() throws {
    let directory = TestPaths.temporaryDirectory()
    let path = directory.appendingPathComponent("store.sqlite").path
    let early = TestConfig.handler(try TestConfig.context(storePath: path))
    let (expiring, amount) = Self.authorize(early)
    let (used, _) = Self.authorize(early)
    let first = early.call("processOrder", Self.orderParams(used, amount))
    #expect(first["result"]?["status"] == .string("succeeded"))

    // One hour later (the test config's TTL is 3600 s), in another process on the same store.
    let late = TestConfig.handler(try TestConfig.context(storePath: path, now: TestConfig.now + 3600))
    let expired = late.call("processOrder", Self.orderParams(expiring, amount))
    #expect(expired["result"]?["failureCode"] == .string("invalid_charge_token"))
    #expect(expired["result"]?["message"] == .string("The charge token has expired. Authorize the payment again."))
    let replay = late.call("processOrder", Self.orderParams(used, amount))
    #expect(replay["result"] == first["result"])
    // Just inside the window the token still works.
    let inside = TestConfig.handler(try TestConfig.context(storePath: path, now: TestConfig.now + 3599))
    #expect(inside.call("processOrder", Self.orderParams(expiring, amount))["result"]?["status"] == .string("succeeded"))
  }

  @Test(
    "a succeeded order's answer is journaled without its document, which its replay reads back from the order byte for byte; an answer kept whole replays as kept; after an erasure both replay erased",
    arguments: StoreBackend.available)
  func journaledWithoutTheDocument(backend: StoreBackend) throws {
    let context = try TestConfig.context(backend: backend, backOffice: true)
    let handler = TestConfig.handler(context, backOffice: true)
    func order(_ token: String, _ amount: String, id: Int) -> String {
      handler.respond(#"{"jsonrpc":"2.0","id":\#(id),"method":"processOrder","params":\#(Self.orderParams(token, amount))}"#)!
    }
    let (token, amount) = Self.authorize(handler)
    let first = order(token, amount, id: 1)
    let result = try #require(try JSONParser.parse(first)["result"])
    let orderId = try #require(result["orderId"]?.stringValue)
    let document = try #require(try context.store.write { try $0.orderDocument(orderId) })
    let journaled = try #require(try context.store.write { try $0.operation(kind: "order", key: token) }?.result)
    #expect(
      journaled
        == #"{"status":"succeeded","orderId":"\#(orderId)","chargeId":"\#(result["chargeId"]!.stringValue!)","amount":"\#(amount)","currencyCode":"USD"}"#)
    #expect(!journaled.contains(document) && document.count > 500)
    #expect(order(token, amount, id: 1) == first)

    // An answer kept whole, as earlier releases kept them, replays as kept.
    let (other, otherAmount) = Self.authorize(handler)
    let second = order(other, otherAmount, id: 2)
    let secondResult = try #require(try JSONParser.parse(second)["result"])
    let whole = JSONWriter.string(secondResult)
    let entry = try #require(try context.store.write { try $0.operation(kind: "order", key: other) })
    try context.store.write { try $0.rewriteOperation(kind: "order", key: other, fingerprint: entry.fingerprint, result: whole) }
    #expect(order(other, otherAmount, id: 2) == second)

    // Erased: each replay shows the erased order, the short entry from the order row.
    for (key, amount, orderId) in [(token, amount, orderId), (other, otherAmount, secondResult["orderId"]!.stringValue!)] {
      let erased = handler.call("erasePersonalData", #"{"erasureId":"e-\#(orderId)","orderId":"\#(orderId)"}"#)
      #expect(erased["result"]?["orders"] == .array([.string(orderId)]))
      let erasedDocument = try #require(try context.store.write { try $0.orderDocument(orderId) })
      let entry = try #require(try context.store.write { try $0.operation(kind: "order", key: key) })
      #expect(!erasedDocument.contains("Lovelace") && !(entry.result ?? "").contains("Lovelace"))
      let replayed = try JSONParser.parse(order(key, amount, id: 3))
      #expect(replayed["result"]?["order"] == (try JSONParser.parse(erasedDocument)))
    }
    #expect(journaled.count < whole.count - 500)
  }

  @Test("stock and sold always add up to the initial stock; never negative")
  func stockAccounting() throws {
    let context = try TestConfig.context()
    let handler = TestConfig.handler(context)
    let initial = try #require(try context.store.stockLedger()["notebook"])
    #expect(initial.onHand == 3 && initial.sold == 0)
    var succeeded = 0
    for attempt in 0..<5 {
      let (token, amount) = Self.authorize(handler, items: #"[{"sku":"notebook"}]"#)
      let result = handler.call("processOrder", Self.orderParams(token, amount, items: #"[{"sku":"notebook"}]"#))
      if result["result"]?["status"] == .string("succeeded") { succeeded += 1 }
      let level = try #require(try context.store.stockLedger()["notebook"])
      #expect(level.sold == min(attempt + 1, 3) && level.onHand == 3 - level.sold, "after order \(attempt + 1)")
    }
    #expect(succeeded == 3)
  }

  @Test("a store locked past the busy timeout answers -32001 and changes nothing")
  func lockedStore() throws {
    let directory = TestPaths.temporaryDirectory()
    let path = directory.appendingPathComponent("store.sqlite").path
    let context = try TestConfig.context(storePath: path, busyTimeout: 0.2)
    let store = try context.store
    let handler = TestConfig.handler(context)
    let (token, amount) = Self.authorize(handler)

    // Another process holds the write lock.
    let blocker = try SQLiteStore(path: path)
    let locked = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let thread = Thread {
      try? blocker.write { _ in
        locked.signal()
        release.wait()
      }
    }
    thread.start()
    locked.wait()
    let response = handler.call("processOrder", Self.orderParams(token, amount))
    release.signal()
    #expect(response["error"]?["code"] == .number("-32001"))
    #expect(
      response["error"]?["message"]
        == .string("Store unavailable: the order store could not be read or written; nothing was changed"))
    while !thread.isFinished { usleep(1000) }
    #expect(try store.stock()["clock"] == 10)
    // Once the lock is gone the same request goes through.
    #expect(handler.call("processOrder", Self.orderParams(token, amount))["result"]?["status"] == .string("succeeded"))
  }

  @Test("the store's stock count wins over the config after the first start")
  func seedKeepsCounts() throws {
    let directory = TestPaths.temporaryDirectory()
    let path = directory.appendingPathComponent("store.sqlite").path
    let handler = TestConfig.handler(try TestConfig.context(storePath: path))
    let (token, amount) = Self.authorize(handler)
    _ = handler.call("processOrder", Self.orderParams(token, amount))
    let reopened = try TestConfig.context(storePath: path)
    #expect(try reopened.store.stock()["clock"] == 9)
  }

  @Test("a store written by a newer payservice is refused")
  func newerSchema() throws {
    let directory = TestPaths.temporaryDirectory()
    let path = directory.appendingPathComponent("store.sqlite").path
    let store = try SQLiteStore(path: path)
    try store.dbQueue.write { db in
      try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')")
    }
    #expect {
      _ = try SQLiteStore(path: path)
    } throws: { error in
      "\(error)".contains("was written by a newer payservice")
    }
  }

  @Test("unmapped errors become -32603 without internals")
  func internalError() {
    struct Secret: Error { let path = "/etc/secret" }
    let error = RPCError(mapping: Secret())
    #expect(error == .internalError)
    #expect(JSONWriter.string(error) == #"{"code":-32603,"message":"Internal error"}"#)
  }
}
