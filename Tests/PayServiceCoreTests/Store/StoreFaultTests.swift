import Foundation
import GRDB
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

@Suite("Store faults")
struct StoreFaultTests {
  @Test("a full disk during processOrder is -32001, nothing is half-written, and reads keep working")
  func diskFull() throws {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    let context = try TestConfig.context(storePath: path)
    let handler = TestConfig.handler(context, backOffice: true)
    // Long address lines (8 of 256 bytes, the most a contact may have) make the order document span
    // overflow pages, so the insert must grow the file.
    let street = String(repeating: "Long Street ", count: 21) + "Xxxx"
    let lines = Array(repeating: "\"\(street)\"", count: 8).joined(separator: ",")
    let contact =
      #"{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":[\#(lines)],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}"#
    let authorized = handler.call(
      "authorizePayment",
      #"{"items":[{"sku":"clock"}],"shippingMethod":"free","payment":{"token":{"paymentData":"tok_visa","paymentMethod":{"displayName":"Visa","network":"visa","type":"credit"},"transactionIdentifier":"T"},"shippingContact":\#(contact),"billingContact":\#(contact)}}"#
    )["result"]!
    let order =
      #"{"chargeToken":"\#(authorized["chargeToken"]!.stringValue!)","items":[{"sku":"clock"}],"shippingMethod":"free","shippingContact":\#(contact),"amount":"\#(authorized["amount"]!.stringValue!)","currencyCode":"USD"}"#

    // The disk is full: SQLite may not add a page (SQLITE_FULL, as on ENOSPC). VACUUM first: the
    // pages of the tables migrations dropped would otherwise be free for the order.
    try (context.store as! SQLiteStore).dbQueue.writeWithoutTransaction { db in
      try db.execute(sql: "VACUUM")
      #expect(try Int.fetchOne(db, sql: "PRAGMA freelist_count") == 0)
      let pages = try Int.fetchOne(db, sql: "PRAGMA page_count")!
      try db.execute(sql: "PRAGMA max_page_count = \(pages)")
    }
    let failed = handler.call("processOrder", order)
    #expect(failed["error"]?["code"] == .number("-32001"))
    #expect(try context.store.stockLedger()["clock"]! == (10, 0))
    let totals = try context.store.orderTotals()
    #expect(totals.charges == 0 && totals.orders == 0)
    // Reads still work while the disk is full.
    #expect(handler.call("listProducts")["result"] != nil)
    #expect(handler.call("computeSummaryItems", #"{"items":[{"sku":"clock"}]}"#)["result"] != nil)
    #expect(handler.call("getOrder", #"{"orderId":"ord_x"}"#)["error"]?["code"] == .number("-32003"))

    // Space again: the same request goes through, once.
    try (context.store as! SQLiteStore).dbQueue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA max_page_count = 1073741823")
    }
    let charged = handler.call("processOrder", order)
    #expect(charged["result"]?["status"] == .string("succeeded"))
    #expect(handler.call("processOrder", order)["result"] == charged["result"])
    #expect(try context.store.stockLedger()["clock"]! == (9, 1))
  }

  @Test("a store file commits durably: WAL with synchronous = FULL (GRDB's WAL setup would make it NORMAL)")
  func durableSettings() throws {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    let store = try SQLiteStore(path: path)
    let (journal, synchronous) = try store.dbQueue.read { db in
      (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
    }
    #expect(journal == "wal")
    #expect(synchronous == 2)  // FULL
  }
}
