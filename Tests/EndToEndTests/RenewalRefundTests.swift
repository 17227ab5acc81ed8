import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// A renewal is an order like any other: refunded by line with its units restocked, listed by
/// listOrders with the agreement it pays, read by getOrder. Through the built binary, sandbox.
@Suite("Renewal orders: refunded by line, listed with their agreement")
struct RenewalRefundTests {
  @Test(
    "a renewal of 2 units refunded one line unit at a time (each 10.80, the unit back on hand), listOrders naming its agreement, getOrder its period",
    arguments: StoreBackend.available)
  func refundByLine(backend: StoreBackend) throws {
    let shop = try BillingShop(backend: backend)
    let placed = try shop.checkout(at: "2026-12-01T10:00:00Z", [.init("tea-club", quantity: 2), .init("mug")])
    #expect(placed.map { $0["amount"]?.stringValue } == ["21.60", "8.64"])
    let agreementId = try BillingShop.agreementId(placed[0])
    let checkout = try #require(placed[0]["orderId"]?.stringValue)
    let mugOrder = try #require(placed[1]["orderId"]?.stringValue)
    #expect(placed[1]["order"]?["agreement"] == nil)

    let (status, result) = try shop.billingRun(at: "2027-01-01T12:00:00Z")
    #expect(status == 0, "\(result.compact)")
    #expect(result["succeeded"] == .number("1"))
    let renewal = try #require(result["payments"]?[0]?["orderId"]?.stringValue, "\(result.compact)")
    #expect(result["payments"]?[0]?["amount"] == .string("21.60"))
    let store = try backend.open(shop.database)
    #expect(try store.stock()["tea-club"] == 1000 - 2 - 2)

    let line = #"{"sku":"tea-club","quantity":1,"restock":"return"}"#
    let answers = try shop.session(
      at: "2027-01-03T09:00:00Z",
      [
        ("getOrder", #"{"orderId":"\#(renewal)"}"#),
        ("refundOrder", #"{"orderId":"\#(renewal)","refundId":"rf-1","lines":[\#(line)]}"#),
        ("listOrders", "{}"),
        ("refundOrder", #"{"orderId":"\#(renewal)","refundId":"rf-2","lines":[\#(line)]}"#),
        ("refundOrder", #"{"orderId":"\#(renewal)","refundId":"rf-1","lines":[\#(line)]}"#),
        ("listOrders", #"{"status":"refunded"}"#),
        ("getAgreement", #"{"agreementId":"\#(agreementId)"}"#),
      ])
    let order = try #require(answers[0]["result"]?["order"], "\(answers[0].compact)")
    #expect(order["status"] == .string("paid"))
    #expect(order["amount"] == .string("21.60"))
    #expect(order["agreement"]?.compact == #"{"agreementId":"\#(agreementId)","payment":"scheduled","period":1}"#)
    #expect(order["items"]?.compact == #"[{"sku":"tea-club","name":"Tea Club","quantity":2,"unitPrice":"10.00","amount":"20.00"}]"#)

    let first = try #require(answers[1]["result"], "\(answers[1].compact)")
    #expect(first["status"] == .string("succeeded"), "\(first.compact)")
    #expect(first["orderStatus"] == .string("partially_refunded"))
    #expect(first["amountRefunded"] == .string("10.80"))
    #expect(first["amountRemaining"] == .string("10.80"))

    // listOrders: the renewal names its agreement and shows the refund; the checkouts name none.
    let listed = try #require(answers[2]["result"]?["orders"]?.arrayValue, "\(answers[2].compact)")
    func summary(_ order: JSONValue) -> String {
      let fields: [String] = ["orderId", "status", "amount", "amountRefunded"].map { order[$0]?.stringValue ?? "?" }
      return (fields + [order["agreementId"]?.stringValue ?? "-"]).joined(separator: " ")
    }
    // The two checkouts were placed in the same second: by orderId, descending.
    let checkouts: [String] = [checkout, mugOrder].sorted(by: >).map { id in
      id == checkout ? "\(checkout) paid 21.60 0.00 -" : "\(mugOrder) paid 8.64 0.00 -"
    }
    #expect(listed.map(summary) == ["\(renewal) partially_refunded 21.60 10.80 \(agreementId)"] + checkouts)

    let second = try #require(answers[3]["result"], "\(answers[3].compact)")
    #expect(second["status"] == .string("succeeded"), "\(second.compact)")
    #expect(second["orderStatus"] == .string("refunded"))
    #expect(second["amountRefunded"] == .string("21.60"))
    #expect(second["amountRemaining"] == .string("0.00"))
    // rf-1 again: its stored answer, nothing refunded twice.
    #expect(answers[4]["result"] == answers[1]["result"])
    let refunded = try #require(answers[5]["result"]?["orders"]?.arrayValue)
    #expect(refunded.map { $0["orderId"]?.stringValue } == [renewal])
    #expect(refunded.first?["agreementId"] == .string(agreementId))
    // Refunding the renewal changes nothing about the agreement: still active, next month due.
    let agreement = try #require(answers[6]["result"]?["agreement"], "\(answers[6].compact)")
    #expect(agreement["status"] == .string("active"))
    #expect(agreement["period"] == .number("2"))
    #expect(agreement["nextPaymentAt"] == .string("2027-02-01T10:00:00Z"))
    // Both units back on hand.
    #expect(try store.stock()["tea-club"] == 1000 - 2)
    #expect(try store.order(id: renewal)?.status == .refunded)
    #expect(try store.order(id: renewal)?.refundedMinor == 2160)
  }
}
