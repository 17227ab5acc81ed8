import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// What Stripe reports after the sale, through processStripeEvent: refunds made outside payservice
/// (the Dashboard) and disputes, on the order and in the books, whatever order the events come in.
@Suite("Stripe's reports after the sale", .serialized)
struct StripeGatewayReportTests {
  typealias Shop = StripeDocumentedTests.Shop

  static let t0 = TestConfig.now - 600

  static func deliver(_ shop: Shop, _ event: Event) throws -> JSONValue {
    try #require(
      shop.handler.call(
        "processStripeEvent",
        StripeFixture.webhook(id: event.id, type: event.type, object: event.object, created: event.created))["result"])
  }

  struct Event {
    var id: String
    var type: String
    var object: String
    var created: Int64
  }

  static func refund(_ id: String, amount: Int, status: String, paymentIntent: String, metadata: String = "{}") -> String {
    #"{"id":"\#(id)","object":"refund","amount":\#(amount),"charge":"ch_test000001","created":\#(t0),"currency":"usd","metadata":\#(metadata),"payment_intent":"\#(paymentIntent)","status":"\#(status)"}"#
  }

  static func dispute(_ id: String, amount: Int, status: String, paymentIntent: String) -> String {
    #"{"id":"\#(id)","object":"dispute","amount":\#(amount),"charge":"ch_test000001","created":\#(t0),"currency":"usd","evidence_details":{"due_by":\#(t0 + 7 * 86_400),"has_evidence":false,"past_due":false,"submission_count":0},"metadata":{},"payment_intent":"\#(paymentIntent)","reason":"fraudulent","status":"\#(status)"}"#
  }

  static func effect(_ answer: JSONValue) -> String? { answer["effect"]?.stringValue }

  @Test(
    "a refund made in the Dashboard appears on the order once (amount only); when it fails later it comes off with a refund_failed event; older events change nothing",
    arguments: StoreBackend.available)
  func dashboardRefund(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let (orderId, paymentId) = try shop.place("tok_visa")
    let succeeded = Self.refund("re_dash1", amount: 1000, status: "succeeded", paymentIntent: paymentId)
    let created = Event(id: "evt_r1", type: "refund.created", object: succeeded, created: Self.t0 + 1)
    let first = try Self.deliver(shop, created)
    #expect(first["effect"] == .string("refund_recorded"))
    #expect(first["orderId"] == .string(orderId))
    #expect(try Self.deliver(shop, created) == first)
    var order = try #require(shop.order(orderId))
    #expect(order["status"] == .string("partially_refunded"))
    #expect(order["amountRefunded"] == .string("10.00"))
    #expect(order["amountRefundedOutside"] == .string("10.00"))
    #expect(order["amountNet"] == .string("7.66"))
    #expect(
      order["refunds"]?.compact
        == #"[{"refundId":"re_dash1","createdAt":"2026-11-21T11:50:00Z","amount":"10.00","tax":"0.00","lines":[],"gatewayRefundId":"re_dash1","origin":"gateway"}]"#)
    #expect(order["events"]?[2]?.compact == #"{"type":"refunded","at":"2026-11-21T12:00:00Z","amount":"10.00","id":"re_dash1"}"#)
    // The same refund in another event: nothing more.
    let updated = Event(id: "evt_r2", type: "refund.updated", object: succeeded, created: Self.t0 + 2)
    #expect(Self.effect(try Self.deliver(shop, updated)) == "none")
    // The bank returns it.
    let failed = Self.refund("re_dash1", amount: 1000, status: "failed", paymentIntent: paymentId)
    #expect(Self.effect(try Self.deliver(shop, Event(id: "evt_r3", type: "refund.failed", object: failed, created: Self.t0 + 3))) == "refund_failed")
    order = try #require(shop.order(orderId))
    #expect(order["status"] == .string("paid"))
    #expect(order["amountRefunded"] == .string("0.00"))
    #expect(order["amountRefundedOutside"] == nil)
    #expect(order["refunds"]?[0]?["status"] == .string("failed"))
    #expect(order["events"]?[3]?.compact == #"{"type":"refund_failed","at":"2026-11-21T12:00:00Z","amount":"10.00","id":"re_dash1"}"#)
    // Stripe's refund.created heard late (another delivery of an older state): nothing moves back.
    #expect(Self.effect(try Self.deliver(shop, Event(id: "evt_r0", type: "refund.created", object: succeeded, created: Self.t0))) == "none")
    #expect(try #require(shop.order(orderId)) == order)
    // The whole amount may be refunded by payservice again.
    let refund = shop.handler.call("refundOrder", #"{"orderId":"\#(orderId)","refundId":"rf-all","amount":"17.66"}"#)["result"]
    #expect(refund?["status"] == .string("succeeded"), "\(refund?.compact ?? "")")
  }

  @Test(
    "a dispute opened, reviewed and lost: the order shows it and is disputed, its funds out; no refund meanwhile; an older update changes nothing; the books count it",
    arguments: StoreBackend.available)
  func disputeLost(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let (orderId, paymentId) = try shop.place("tok_visa")
    let events = [
      Event(id: "evt_d1", type: "charge.dispute.created", object: Self.dispute("dp_1", amount: 1766, status: "needs_response", paymentIntent: paymentId), created: Self.t0 + 1),
      Event(id: "evt_d2", type: "charge.dispute.updated", object: Self.dispute("dp_1", amount: 1766, status: "under_review", paymentIntent: paymentId), created: Self.t0 + 2),
      Event(id: "evt_d3", type: "charge.dispute.closed", object: Self.dispute("dp_1", amount: 1766, status: "lost", paymentIntent: paymentId), created: Self.t0 + 3),
    ]
    #expect(Self.effect(try Self.deliver(shop, events[0])) == "dispute_opened")
    var order = try #require(shop.order(orderId))
    #expect(order["status"] == .string("disputed"))
    #expect(order["amountDisputed"] == .string("17.66"))
    #expect(order["amountNet"] == .string("0.00"))
    #expect(
      order["disputes"]?.compact
        == #"[{"disputeId":"dp_1","createdAt":"2026-11-21T11:50:00Z","amount":"17.66","reason":"fraudulent","status":"needs_response","evidenceDueBy":"2026-11-28T11:50:00Z","fundsWithdrawn":"17.66","fundsReinstated":"0.00"}]"#)
    let refund = try #require(
      shop.handler.call("refundOrder", #"{"orderId":"\#(orderId)","refundId":"rf-1","amount":"1.00"}"#)["result"])
    #expect(refund["failureCode"] == .string("order_not_refundable"))
    #expect(Self.effect(try Self.deliver(shop, events[1])) == "dispute_updated")
    #expect(Self.effect(try Self.deliver(shop, events[2])) == "dispute_lost")
    #expect(Self.effect(try Self.deliver(shop, Event(id: "evt_d2b", type: "charge.dispute.updated", object: Self.dispute("dp_1", amount: 1766, status: "under_review", paymentIntent: paymentId), created: Self.t0 + 2))) == "none")
    order = try #require(shop.order(orderId))
    #expect(order["status"] == .string("disputed"))
    #expect(order["disputes"]?[0]?["status"] == .string("lost"))
    #expect(
      order["events"]?.arrayValue?.dropFirst(2).map(\.compact) == [
        #"{"type":"dispute_opened","at":"2026-11-21T12:00:00Z","amount":"17.66","id":"dp_1","reason":"fraudulent"}"#,
        #"{"type":"dispute_funds_withdrawn","at":"2026-11-21T12:00:00Z","amount":"17.66","id":"dp_1"}"#,
        #"{"type":"dispute_closed","at":"2026-11-21T12:00:00Z","amount":"17.66","id":"dp_1","reason":"lost"}"#,
      ])
    let listed = shop.handler.call("listOrders", #"{"status":"disputed"}"#)["result"]?["orders"]
    #expect(listed?.arrayValue?.map { $0["orderId"] } == [.string(orderId)])
    #expect(shop.handler.call("listOrders", #"{"status":"paid"}"#)["result"]?["orders"]?.arrayValue?.count == 0)
    let report = shop.handler.call("payoutReport", #"{"from":"2026-11-21","to":"2026-11-21"}"#)["result"]
    #expect(
      report?.compact
        == #"{"from":"2026-11-21","to":"2026-11-21","days":[{"day":"2026-11-21","currencyCode":"USD","charged":"17.66","refunded":"0.00","disputed":"17.66","net":"0.00"}],"totals":[{"currencyCode":"USD","charged":"17.66","refunded":"0.00","disputed":"17.66","net":"0.00"}]}"#)
  }

  @Test("a dispute won gives its funds back; an inquiry moves no funds and closes", arguments: StoreBackend.available)
  func disputeWonAndInquiry(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let (orderId, paymentId) = try shop.place("tok_visa")
    // Only the closing event arrives: it says everything.
    let won = Self.dispute("dp_w", amount: 1766, status: "won", paymentIntent: paymentId)
    #expect(Self.effect(try Self.deliver(shop, Event(id: "evt_w", type: "charge.dispute.closed", object: won, created: Self.t0 + 5))) == "dispute_won")
    var order = try #require(shop.order(orderId))
    #expect(order["status"] == .string("paid"))
    #expect(order["amountDisputed"] == .string("0.00"))
    #expect(order["amountNet"] == .string("17.66"))
    #expect(
      order["events"]?.arrayValue?.dropFirst(2).map { $0["type"]?.stringValue ?? "" } == [
        "dispute_opened", "dispute_funds_withdrawn", "dispute_funds_reinstated", "dispute_closed",
      ])
    let inquiry = Self.dispute("dp_i", amount: 1766, status: "warning_needs_response", paymentIntent: paymentId)
    #expect(Self.effect(try Self.deliver(shop, Event(id: "evt_i1", type: "charge.dispute.created", object: inquiry, created: Self.t0 + 6))) == "dispute_opened")
    order = try #require(shop.order(orderId))
    #expect(order["status"] == .string("disputed"))
    #expect(order["amountDisputed"] == .string("0.00"))
    // An inquiry does not stop a refund (a chargeback does: see disputeLost).
    let refund = shop.handler.call("refundOrder", #"{"orderId":"\#(orderId)","refundId":"rf-i","amount":"1.00"}"#)["result"]
    #expect(refund?["status"] == .string("succeeded"), "\(refund?.compact ?? "")")
    let closed = Self.dispute("dp_i", amount: 1766, status: "warning_closed", paymentIntent: paymentId)
    #expect(Self.effect(try Self.deliver(shop, Event(id: "evt_i2", type: "charge.dispute.closed", object: closed, created: Self.t0 + 7))) == "dispute_closed")
    #expect(shop.order(orderId)?["status"] == .string("partially_refunded"))
  }

  @Test(
    "an event about a refund payservice is still recording is not recorded (retry_later); once the refund is recorded, Stripe's next delivery is, once",
    arguments: StoreBackend.available)
  func refundStillRecording(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let (orderId, paymentId) = try shop.place("tok_visa")
    shop.server.inject(.resetAfterExecuting, on: .refund)
    let refund = #"{"orderId":"\#(orderId)","refundId":"rf-1","amount":"1.00"}"#
    #expect(shop.handler.call("refundOrder", refund)["result"]?["failureCode"] == .string("gateway_unavailable"))
    #expect(try shop.pending() == [["refund", "rf-1", orderId]])
    let metadata = #"{"order_id":"\#(orderId)","refund_id":"rf-1"}"#
    let event = Event(
      id: "evt_rf1", type: "refund.created",
      object: Self.refund("re_test000001", amount: 100, status: "succeeded", paymentIntent: paymentId, metadata: metadata),
      created: Self.t0)
    let early = try Self.deliver(shop, event)
    #expect(
      early.compact
        == #"{"status":"failed","failureCode":"retry_later","message":"the event is about refund rf-1, which payservice is still recording (its refundOrder waits for Stripe's answer): nothing was recorded; answer the webhook with a 503 and Stripe sends it again"}"#)
    #expect(shop.order(orderId)?["amountRefunded"] == .string("0.00"))
    #expect(shop.handler.call("refundOrder", refund)["result"]?["status"] == .string("succeeded"))
    let later = try Self.deliver(shop, event)
    #expect(later["status"] == .string("succeeded"))
    #expect(later["effect"] == .string("none"))
    #expect(later["orderId"] == .string(orderId))
    let order = try #require(shop.order(orderId))
    #expect(order["amountRefunded"] == .string("1.00"))
    #expect(order["refunds"]?.arrayValue?.count == 1)
    #expect(shop.server.refundCount == 1)
  }

  @Test(
    "reports that do not fit the order are recorded as refused: more than is left to refund, another amount than payservice's own refund, a dispute past what was captured",
    arguments: StoreBackend.available)
  func misfits(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let (orderId, paymentId) = try shop.place("tok_visa")
    let refund = #"{"orderId":"\#(orderId)","refundId":"rf-1","amount":"10.00"}"#
    #expect(shop.handler.call("refundOrder", refund)["result"]?["status"] == .string("succeeded"))
    let before = try #require(shop.order(orderId))
    // payservice's own refund, reported with another amount.
    let own = Self.refund(
      "re_test000001", amount: 999, status: "succeeded", paymentIntent: paymentId,
      metadata: #"{"order_id":"\#(orderId)","refund_id":"rf-1"}"#)
    let ownAnswer = try Self.deliver(shop, Event(id: "evt_m1", type: "refund.updated", object: own, created: Self.t0 + 1))
    #expect(ownAnswer["effect"] == .string("refused"))
    #expect(ownAnswer["orderId"] == .string(orderId))
    #expect(ownAnswer["message"] == .string("the refund's amount 999 is not the 1000 recorded"))
    // A Dashboard refund of more than the 7.66 left.
    let more = Self.refund("re_dash9", amount: 767, status: "succeeded", paymentIntent: paymentId)
    let moreAnswer = try Self.deliver(shop, Event(id: "evt_m2", type: "refund.created", object: more, created: Self.t0 + 2))
    #expect(moreAnswer["message"] == .string("the refund's amount 767 is more than the 766 minor units the order has left for it"))
    // A dispute of more than the 17.66 captured.
    let dispute = Self.dispute("dp_m3", amount: 1767, status: "needs_response", paymentIntent: paymentId)
    let disputeAnswer = try Self.deliver(
      shop, Event(id: "evt_m3", type: "charge.dispute.created", object: dispute, created: Self.t0 + 3))
    #expect(disputeAnswer["message"] == .string("the dispute's amount 1767 is more than the 1766 minor units the order has left for it"))
    #expect(try #require(shop.order(orderId)) == before)
    // Exactly what is left is taken in.
    let left = Self.refund("re_dash10", amount: 766, status: "succeeded", paymentIntent: paymentId)
    #expect(
      Self.effect(try Self.deliver(shop, Event(id: "evt_m4", type: "refund.created", object: left, created: Self.t0 + 4)))
        == "refund_recorded")
    #expect(shop.order(orderId)?["status"] == .string("refunded"))
  }

  /// The order and the books, with the history as a multiset: events heard in another order get
  /// other positions, not other contents.
  static func finalState(_ shop: Shop, _ orderId: String) throws -> String {
    var order = try #require(shop.order(orderId))
    let events = order["events"]?.arrayValue?.map(\.compact).sorted() ?? []
    order = try JSONParser.parse(order.compact.replacingOccurrences(of: order["events"]?.compact ?? "", with: "[]"))
    let report = shop.handler.call("payoutReport", #"{"from":"2026-11-21","to":"2026-11-21"}"#)["result"]?.compact ?? ""
    return ([order.compact, report] + events).joined(separator: "\n")
  }

  @Test(
    "events delivered twice, shuffled and late give the same order and books as in order (20 seeded sequences)",
    arguments: StoreBackend.available)
  func shuffledDelivery(backend: StoreBackend) throws {
    func run(_ order: (inout [Event]) -> Void) throws -> String {
      let shop = try Shop(backend: backend)
      defer { shop.server.shutdown() }
      let (orderId, paymentId) = try shop.place("tok_visa")
      _ = shop.handler.call("refundOrder", #"{"orderId":"\#(orderId)","refundId":"rf-1","amount":"1.00"}"#)
      let own = #"{"order_id":"\#(orderId)","refund_id":"rf-1"}"#
      var events = [
        Event(id: "evt_1", type: "refund.created", object: Self.refund("re_dash", amount: 500, status: "succeeded", paymentIntent: paymentId), created: Self.t0 + 1),
        Event(id: "evt_2", type: "charge.refunded", object: #"{"id":"ch_test000001","object":"charge","amount":5400,"amount_refunded":600,"payment_intent":"\#(paymentId)"}"#, created: Self.t0 + 1),
        Event(id: "evt_3", type: "refund.failed", object: Self.refund("re_dash", amount: 500, status: "failed", paymentIntent: paymentId), created: Self.t0 + 2),
        Event(id: "evt_4", type: "refund.updated", object: Self.refund("re_test000001", amount: 100, status: "failed", paymentIntent: paymentId, metadata: own), created: Self.t0 + 3),
        Event(id: "evt_5", type: "charge.dispute.created", object: Self.dispute("dp_1", amount: 1000, status: "needs_response", paymentIntent: paymentId), created: Self.t0 + 4),
        Event(id: "evt_6", type: "charge.dispute.updated", object: Self.dispute("dp_1", amount: 1000, status: "under_review", paymentIntent: paymentId), created: Self.t0 + 5),
        Event(id: "evt_7", type: "charge.dispute.closed", object: Self.dispute("dp_1", amount: 1000, status: "won", paymentIntent: paymentId), created: Self.t0 + 6),
        Event(id: "evt_8", type: "charge.dispute.created", object: Self.dispute("dp_2", amount: 300, status: "needs_response", paymentIntent: paymentId), created: Self.t0 + 7),
        Event(id: "evt_9", type: "charge.dispute.closed", object: Self.dispute("dp_2", amount: 300, status: "lost", paymentIntent: paymentId), created: Self.t0 + 8),
      ]
      order(&events)
      for event in events { _ = try Self.deliver(shop, event) }
      return try Self.finalState(shop, orderId)
    }
    let inOrder = try run { _ in }
    #expect(inOrder.contains(#""amountDisputed":"3.00""#), "\(inOrder)")
    for seed in UInt64(1)...20 {
      var random = SplitMix64(seed: seed)
      let shuffled = try run { events in
        // Some delivered twice, all in a random order.
        events += events.filter { _ in random.next() % 3 == 0 }
        events.shuffle(using: &random)
      }
      #expect(shuffled == inOrder, "seed \(seed)")
    }
  }

  @Test(
    "the Stripe test server's own events, delivered twice, shuffled and late, give the same orders and books as in order (12 seeded sequences)")
  func shuffledFeed() throws {
    /// The same activity at Stripe on a fresh shop; then its events, in the order `arrange` gives.
    func run(_ arrange: (inout [StripeTestServer.Event]) -> Void) throws -> String {
      let shop = try Shop(backend: .sqlite)
      defer { shop.server.shutdown() }
      shop.server.setClock(Self.t0)
      shop.server.setSingleUseTokens(false)
      let a = try shop.place("tok_visa")
      let b = try shop.place("tok_refundFail")
      let c = try shop.place("tok_visa")
      // A refund payservice made that the bank returns, a Dashboard refund that fails too, disputes.
      _ = shop.handler.call("refundOrder", #"{"orderId":"\#(b.orderId)","refundId":"rf-b","amount":"3.00"}"#)
      let dashboard = try #require(shop.server.refundFromDashboard(paymentIntent: a.paymentId, amount: 500))
      shop.server.advanceClock(seconds: 60)
      #expect(shop.server.refundFromDashboard(paymentIntent: a.paymentId, amount: 200) != nil)
      #expect(shop.server.failRefund(dashboard))
      let won = try #require(shop.server.openDispute(paymentIntent: a.paymentId))
      shop.server.advanceClock(seconds: 60)
      #expect(shop.server.updateDispute(won, status: "under_review"))
      shop.server.advanceClock(seconds: 60)
      #expect(shop.server.closeDispute(won, won: true))
      let lost = try #require(shop.server.openDispute(paymentIntent: c.paymentId, reason: "product_not_received"))
      shop.server.advanceClock(seconds: 60)
      #expect(shop.server.closeDispute(lost, won: false))
      let inquiry = try #require(shop.server.openDispute(paymentIntent: b.paymentId, inquiry: true))
      shop.server.advanceClock(seconds: 60)
      #expect(shop.server.closeDispute(inquiry, won: true))
      var events = shop.server.events()
      arrange(&events)
      for event in events {
        let delivery = try #require(shop.server.delivery(of: event.id, secret: StripeFixture.webhookSecret, at: TestConfig.now))
        let params = JSONWriter.string(
          JSONValue.object(JSONObject([("payload", .string(delivery.payload)), ("signature", .string(delivery.signature))])))
        let answer = try #require(shop.handler.call("processStripeEvent", params)["result"])
        #expect(answer["status"] == .string("succeeded"), "\(answer.compact)")
      }
      return try [a.orderId, b.orderId, c.orderId].map { try Self.finalState(shop, $0) }.joined(separator: "\n\n")
    }
    let inOrder = try run { _ in }
    #expect(inOrder.contains(#""status":"disputed""#) && inOrder.contains(#""status":"failed""#), "\(inOrder)")
    for seed in UInt64(1)...12 {
      var random = SplitMix64(seed: seed)
      let shuffled = try run { events in
        events += events.filter { _ in random.next() % 3 == 0 }
        events.shuffle(using: &random)
      }
      #expect(shuffled == inOrder, "seed \(seed)")
    }
  }
}
