import Foundation
import GRDB
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// A store written before the back office (schema v3) opened by this release: its orders are paid
/// in full with their history, and are refunded by amount (their per-line amounts were never kept).
@Suite("Store upgrade to v4")
struct StoreUpgradeTests {
  @Test("an order recorded under v3 reads as paid with placed and captured events, and refunds by amount only")
  func v3Order() throws {
    let directory = TestPaths.temporaryDirectory()
    let path = directory.appendingPathComponent("store.sqlite").path
    let charged = try #require(MethodExample.all.first { $0.name == "charged" })
    let result = try JSONParser.parse(charged.result)
    let document = try #require(result["order"])
    // A v3 store's order has the unkeyed ids of its time: the example's (keyed) ids are swapped for them.
    let newIds = (try #require(document["orderId"]?.stringValue), try #require(result["chargeId"]?.stringValue))
    let documentText = JSONWriter.string(document).replacingOccurrences(of: newIds.0, with: "ord_00cfebbc9f3385cd7a6e")
      .replacingOccurrences(of: newIds.1, with: "ch_b8cf7a9fbb75a51b9c7e2404")
    do {
      let queue = try DatabaseQueue(path: path)
      try SQLiteStore.migrator(newIdentifierKey: { .random() }).migrate(queue, upTo: StoreSchema.migrations[2])
      try queue.write { db in
        try db.execute(
          sql: """
            INSERT INTO stock (sku, quantityOnHand, sold) VALUES ('clock', 9, 1);
            INSERT INTO chargeToken (token, sequence, binding, amountMinor, currencyCode, sandboxOutcome, issuedAt, expiresAt)
              VALUES ('ctok_old', 1, '{}', 6613, 'USD', 'approved', '2026-11-21T12:00:00Z', 1795000000);
            INSERT INTO charge (chargeId, token, status, amountMinor, currencyCode, createdAt)
              VALUES ('ch_b8cf7a9fbb75a51b9c7e2404', 'ctok_old', 'succeeded', 6613, 'USD', '2026-11-21T12:00:00Z');
            """)
        try db.execute(
          sql: """
            INSERT INTO "order" (orderId, chargeId, createdAt, amountMinor, currencyCode, document)
            VALUES ('ord_00cfebbc9f3385cd7a6e', 'ch_b8cf7a9fbb75a51b9c7e2404', '2026-11-21T12:00:00Z', 6613, 'USD', ?)
            """, arguments: [documentText])
        try db.execute(
          sql: """
            INSERT INTO orderItem (orderId, sku, quantity, unitPriceMinor, amountMinor)
            VALUES ('ord_00cfebbc9f3385cd7a6e', 'clock', 1, 5000, 5000)
            """)
      }
    }
    let store = try SQLiteStore(path: path)
    let config = TestConfig.load()
    let handler = TestConfig.handler(
      ServiceContext(config: config, store: store, clock: ServiceClock(pinned: TestConfig.now + 60)), backOffice: true)
    let order = handler.call("getOrder", #"{"orderId":"ord_00cfebbc9f3385cd7a6e"}"#)["result"]!["order"]!
    #expect(order["status"]?.stringValue == "paid" && order["amountCaptured"]?.stringValue == "66.13")
    #expect(
      order["events"]?.compact
        == #"[{"type":"placed","at":"2026-11-21T12:00:00Z","amount":"66.13","id":"ord_00cfebbc9f3385cd7a6e"},{"type":"captured","at":"2026-11-21T12:00:00Z","amount":"66.13","id":"ch_b8cf7a9fbb75a51b9c7e2404"}]"#)
    let byLine = handler.call(
      "refundOrder",
      #"{"orderId":"ord_00cfebbc9f3385cd7a6e","refundId":"r-1","lines":[{"sku":"clock","quantity":1,"restock":"return"}]}"#)
    #expect(byLine["result"]?["failureCode"]?.stringValue == "order_not_refundable")
    #expect(byLine["result"]?["message"]?.stringValue == RefundOrder.legacyMessage)
    let byAmount = handler.call("refundOrder", #"{"orderId":"ord_00cfebbc9f3385cd7a6e","refundId":"r-1","amount":"66.13"}"#)
    #expect(byAmount["result"]?["orderStatus"]?.stringValue == "refunded")
    #expect(try store.stock()["clock"] == 9)
    let listed = handler.call("listOrders", "{}")["result"]!
    #expect(
      listed.compact
        == #"{"orders":[{"orderId":"ord_00cfebbc9f3385cd7a6e","createdAt":"2026-11-21T12:00:00Z","status":"refunded","amount":"66.13","amountRefunded":"66.13","currencyCode":"USD","itemCount":1}],"nextCursor":null}"#)
  }
}

/// A store written before v18 keeps the call of each settled journal entry (a charge's holds the
/// payment data): v18 clears those, and leaves a pending entry's call, which is still to be sent.
@Suite("Store upgrade to v18")
struct StoreUpgradeV18Tests {
  @Test("settled entries lose their call; a pending entry keeps its own")
  func settledCallsCleared() throws {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    do {
      let queue = try DatabaseQueue(path: path)
      try SQLiteStore.migrator(newIdentifierKey: { .random() }).migrate(queue, upTo: StoreSchema.migrations[16])
      try queue.write { db in
        try db.execute(
          sql: """
            INSERT INTO operation (kind, key, fingerprint, state, subject, request, result, created, settled) VALUES
              ('order', 'ctok_paid', 'f', 'settled', 'ord_1', '{"paymentData":"adyen-applepay:eyJkYXRhIjoi"}', '{}',
               '2026-11-21T12:00:00Z', '2026-11-21T12:00:01Z'),
              ('order', 'ctok_pending', 'f', 'pending', 'ord_2', '{"paymentData":"adyen-applepay:eyJ2ZXJzaW9uIjoi"}', NULL,
               '2026-11-21T12:00:00Z', NULL)
            """)
      }
    }
    _ = try SQLiteStore(path: path)
    let queue = try DatabaseQueue(path: path)
    let rows = try queue.read { db in
      try Row.fetchAll(db, sql: "SELECT key, request FROM operation ORDER BY key").map { row -> [String?] in
        [row["key"], row["request"]]
      }
    }
    #expect(rows == [["ctok_paid", nil], ["ctok_pending", #"{"paymentData":"adyen-applepay:eyJ2ZXJzaW9uIjoi"}"#]])
  }
}
