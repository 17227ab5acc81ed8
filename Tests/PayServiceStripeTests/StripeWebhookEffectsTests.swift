import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// What Stripe's refund events do to a refund payservice made, through processStripeEvent: signed
/// with the fixture's webhook secret, recorded once, settling the refund on the order once.
@Suite("Stripe webhook effects", .serialized)
struct StripeWebhookEffectsTests {
  typealias Shop = StripeDocumentedTests.Shop

  /// A Stripe refund object as its events carry it.
  static func refund(_ id: String, status: String, refundId: String = "rf-1") -> String {
    #"{"id":"\#(id)","object":"refund","amount":100,"created":1795262000,"currency":"usd","metadata":{"refund_id":"\#(refundId)"},"payment_intent":"pi_test000001","status":"\#(status)"}"#
  }

  static func deliver(_ shop: Shop, id: String, type: String, object: String) throws -> String {
    try #require(shop.handler.call("processStripeEvent", StripeFixture.webhook(id: id, type: type, object: object))["result"])
      .compact
  }

  static func recorded(_ id: String, _ type: String, orderId: String? = nil, effect: String) -> String {
    let order = orderId.map { #""orderId":"\#($0)","# } ?? ""
    return #"{"status":"succeeded","eventId":"\#(id)","type":"\#(type)","livemode":false,"created":"2026-11-21T11:59:55Z",\#(order)"effect":"\#(effect)","recordedAt":"2026-11-21T12:00:00Z"}"#
  }

  @Test(
    "a refund that succeeded and fails later comes off the order once; the same event again and an older success change nothing",
    arguments: StoreBackend.available)
  func refundFailsLater(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let (orderId, _) = try shop.place("tok_visa")
    let refunded = try #require(
      shop.handler.call("refundOrder", #"{"orderId":"\#(orderId)","refundId":"rf-1","amount":"1.00"}"#)["result"])
    #expect(refunded["status"] == .string("succeeded"), "\(refunded.compact)")
    #expect(shop.order(orderId)?["amountRefunded"] == .string("1.00"))

    let failed = Self.refund("re_test000001", status: "failed")
    #expect(try Self.deliver(shop, id: "evt_f1", type: "refund.failed", object: failed) == Self.recorded("evt_f1", "refund.failed", orderId: orderId, effect: "refund_failed"))
    let order = try #require(shop.order(orderId))
    #expect(order["status"] == .string("paid"))
    #expect(order["amountRefunded"] == .string("0.00"))
    #expect(order["refunds"]?[0]?["status"] == .string("failed"))
    // Stripe delivers at least once: the same event is answered the same and changes nothing more.
    #expect(try Self.deliver(shop, id: "evt_f1", type: "refund.failed", object: failed) == Self.recorded("evt_f1", "refund.failed", orderId: orderId, effect: "refund_failed"))
    // An older update saying it succeeded, heard after the failure: a failed refund stays failed.
    let older = Self.refund("re_test000001", status: "succeeded")
    #expect(try Self.deliver(shop, id: "evt_u0", type: "refund.updated", object: older) == Self.recorded("evt_u0", "refund.updated", orderId: orderId, effect: "none"))
    #expect(try #require(shop.order(orderId)) == order)
    #expect(shop.server.refundCount == 1)
  }

  @Test("a pending refund is settled by Stripe's refund.updated: succeeded drops its marker", arguments: StoreBackend.available)
  func pendingRefundSucceeds(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let (orderId, _) = try shop.place("tok_pendingRefund")
    _ = shop.handler.call("refundOrder", #"{"orderId":"\#(orderId)","refundId":"rf-1","amount":"1.00"}"#)
    #expect(shop.order(orderId)?["amountRefundPending"] == .string("1.00"))
    // Still pending: nothing to settle.
    let pending = Self.refund("re_test000001", status: "pending")
    #expect(try Self.deliver(shop, id: "evt_p1", type: "refund.updated", object: pending) == Self.recorded("evt_p1", "refund.updated", orderId: orderId, effect: "none"))
    let succeeded = Self.refund("re_test000001", status: "succeeded")
    #expect(try Self.deliver(shop, id: "evt_p2", type: "refund.updated", object: succeeded) == Self.recorded("evt_p2", "refund.updated", orderId: orderId, effect: "refund_succeeded"))
    let order = try #require(shop.order(orderId))
    #expect(order["amountRefundPending"] == nil)
    #expect(order["amountRefunded"] == .string("1.00"))
    #expect(order["refunds"]?[0]?["status"] == nil)
  }

  @Test(
    "payment_intent.succeeded about an order a lost answer left pending resumes its charge as recovery would: the order is paid, once; the event again charges nothing",
    arguments: StoreBackend.available)
  func pendingOrderResumed(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let checkout = try shop.authorize("tok_visa")
    let orderId = try shop.context.identifiers.orderId(token: checkout.token)
    shop.server.inject(.resetAfterExecuting, on: .createPaymentIntent)
    #expect(try shop.process(checkout)["failureCode"] == .string("gateway_unavailable"))
    #expect(shop.order(orderId)?["status"] == .string("pending"))
    let intent = #"{"id":"pi_test000001","object":"payment_intent","amount":5400,"currency":"usd","status":"succeeded","metadata":{"order_id":"\#(orderId)"}}"#
    let type = "payment_intent.succeeded"
    #expect(try Self.deliver(shop, id: "evt_pi1", type: type, object: intent) == Self.recorded("evt_pi1", type, orderId: orderId, effect: "order_resumed"))
    let order = try #require(shop.order(orderId))
    #expect(order["status"] == .string("paid"))
    #expect(order["gatewayPaymentId"] == .string("pi_test000001"))
    #expect(try shop.pending().isEmpty)
    // Stripe's redelivery: the same answer; nothing is pending, so nothing is sent.
    let requests = shop.server.requests.count
    #expect(try Self.deliver(shop, id: "evt_pi1", type: type, object: intent) == Self.recorded("evt_pi1", type, orderId: orderId, effect: "order_resumed"))
    #expect(shop.server.requests.count == requests)
    #expect(shop.server.paymentIntentCount == 1)
    // The processOrder sent again answers the order the event settled.
    #expect(try shop.process(checkout)["status"] == .string("succeeded"))
    // An event about an order with nothing pending changes nothing.
    #expect(try Self.deliver(shop, id: "evt_pi2", type: type, object: intent) == Self.recorded("evt_pi2", type, orderId: orderId, effect: "none"))
  }

  @Test(
    "a refund is known by Stripe's id: its metadata naming another refundId does not hide it; a refund of no order of this store changes nothing")
  func refundsByStripeId() throws {
    let shop = try Shop(backend: .sqlite)
    defer { shop.server.shutdown() }
    let (orderId, _) = try shop.place("tok_visa")
    _ = shop.handler.call("refundOrder", #"{"orderId":"\#(orderId)","refundId":"rf-1","amount":"1.00"}"#)
    let before = try #require(shop.order(orderId))
    let elsewhere = [
      ("evt_x2", #"{"id":"re_someone_else","object":"refund","amount":100,"created":1795262000,"status":"failed","metadata":{"refund_id":"rf-1"}}"#),
      ("evt_x3", #"{"id":"re_dashboard","object":"refund","amount":100,"created":1795262000,"status":"succeeded","metadata":{},"payment_intent":"pi_other"}"#),
    ]
    for (id, object) in elsewhere {
      #expect(try Self.deliver(shop, id: id, type: "refund.failed", object: object) == Self.recorded(id, "refund.failed", effect: "none"))
    }
    #expect(try #require(shop.order(orderId)) == before)
    let renamed = Self.refund("re_test000001", status: "failed", refundId: "rf-nobody")
    #expect(
      try Self.deliver(shop, id: "evt_x1", type: "refund.failed", object: renamed)
        == Self.recorded("evt_x1", "refund.failed", orderId: orderId, effect: "refund_failed"))
    #expect(shop.order(orderId)?["amountRefunded"] == .string("0.00"))
  }
}
