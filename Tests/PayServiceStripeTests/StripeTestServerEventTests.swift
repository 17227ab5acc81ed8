import AsyncHTTPClient
import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The Stripe test server's event feed, balance transactions, disputes and lists, with a fixed clock.
@Suite("Stripe test server events", .serialized)
struct StripeTestServerEventTests {
  typealias Base = StripeTestServerTests

  static let start: Int64 = 1_800_000_000

  static func json(_ text: String) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
  }

  static func ids(_ answer: StripeTestServerTests.Answer) -> [String] {
    (answer.json["data"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
  }

  static func refundIDs(_ numbers: ClosedRange<Int>) -> [String] {
    numbers.reversed().map { "re_test" + String(format: "%06d", $0) }
  }

  /// What `failRefund` makes of a Dashboard refund of 500 made at start + 60, failed at start + 120.
  static let refundUpdated = """
    {
      "id": "evt_test000006",
      "object": "event",
      "api_version": "2024-06-20",
      "created": 1800000120,
      "data": {
        "object": {
          "id": "re_test000001",
          "object": "refund",
          "amount": 500,
          "balance_transaction": "txn_test000002",
          "charge": "ch_test000001",
          "created": 1800000060,
          "currency": "usd",
          "failure_balance_transaction": "txn_test000003",
          "failure_reason": "expired_or_canceled_card",
          "metadata": {},
          "payment_intent": "pi_test000001",
          "reason": null,
          "receipt_number": null,
          "source_transfer_reversal": null,
          "status": "failed",
          "transfer_reversal": null
        },
        "previous_attributes": {
          "status": "succeeded"
        }
      },
      "livemode": false,
      "pending_webhooks": 1,
      "request": {
        "id": null,
        "idempotency_key": null
      },
      "type": "refund.updated"
    }
    """

  /// A charge, a Dashboard refund that fails, a dispute lost: the events, in order, byte for byte.
  static func lostDisputeScenario(_ server: StripeTestServer, _ client: HTTPClient) async throws {
    server.setClock(start)
    let charge = try await Base.send(
      client, server, "/v1/payment_intents", form: Base.charge("pm_card_visa", extra: [("metadata[order_id]", "ord_1")]),
      idempotencyKey: "key-feed")
    #expect(charge.status == 200 && charge.json["id"] as? String == "pi_test000001")
    server.advanceClock(seconds: 60)
    #expect(server.refundFromDashboard(paymentIntent: "pi_test000001", amount: 500) == "re_test000001")
    server.advanceClock(seconds: 60)
    #expect(server.failRefund("re_test000001"))
    #expect(server.failRefund("re_test000001") == false)
    server.advanceClock(seconds: 60)
    #expect(server.openDispute(paymentIntent: "pi_test000001") == "dp_test000001")
    #expect(server.openDispute(paymentIntent: "pi_test000001") == nil)
    #expect(server.updateDispute("dp_test000001", status: "warning_under_review") == false)
    #expect(server.updateDispute("dp_test000001", status: "under_review"))
    server.advanceClock(seconds: 86_400)
    #expect(server.closeDispute("dp_test000001", won: false))
    #expect(server.closeDispute("dp_test000001", won: true) == false)
  }

  @Test("A charge, a Dashboard refund failed later, a dispute lost: Stripe's events in order, signed as Stripe signs them")
  func eventFeed() async throws {
    try await Base.withServer { server, client in
      try await Self.lostDisputeScenario(server, client)
      let events = server.events()
      #expect(
        events.map(\.type) == [
          "charge.succeeded", "payment_intent.succeeded", "refund.created", "charge.refunded", "refund.failed",
          "refund.updated", "charge.refund.updated", "charge.dispute.created", "charge.dispute.funds_withdrawn",
          "charge.dispute.updated", "charge.dispute.closed",
        ])
      #expect(events.map(\.id) == (1...11).map { "evt_test" + String(format: "%06d", $0) })
      let offsets: [Int64] = [0, 0, 60, 60, 120, 120, 120, 180, 180, 180, 86_580]
      #expect(events.map(\.created) == offsets.map { Self.start + $0 })
      #expect(events[5].payload == Self.refundUpdated)

      // The API request that caused an event is named; a control-API change names none.
      let succeeded = Self.json(events[1].payload)
      #expect(succeeded["request"] as? [String: String] == ["id": "req_test000001", "idempotency_key": "key-feed"])
      let object = try #require((succeeded["data"] as? [String: Any])?["object"] as? [String: Any])
      #expect(object["id"] as? String == "pi_test000001" && object["status"] as? String == "succeeded")
      #expect(object["metadata"] as? [String: String] == ["order_id": "ord_1"])
      #expect((succeeded["data"] as? [String: Any])?["previous_attributes"] == nil)
      let refunded = try #require((Self.json(events[3].payload)["data"] as? [String: Any])?["object"] as? [String: Any])
      #expect(refunded["object"] as? String == "charge" && refunded["amount_refunded"] as? Int == 500)
      #expect(refunded["refunds"] == nil && refunded["balance_transaction"] as? String == "txn_test000001")
      let chargeRefundUpdated = Self.json(events[6].payload)
      #expect(((chargeRefundUpdated["data"] as? [String: Any])?["previous_attributes"] as? [String: String]) == ["status": "succeeded"])
      let disputeUpdated = try #require(Self.json(events[9].payload)["data"] as? [String: Any])
      #expect(disputeUpdated["previous_attributes"] as? [String: String] == ["status": "needs_response"])
      let closed = try #require((Self.json(events[10].payload)["data"] as? [String: Any])?["object"] as? [String: Any])
      #expect(closed["status"] as? String == "lost" && closed["amount"] as? Int == 1999)
      #expect(closed["payment_intent"] as? String == "pi_test000001" && closed["is_charge_refundable"] as? Bool == false)
      #expect((closed["balance_transactions"] as? [[String: Any]])?.map { $0["id"] as? String } == ["txn_test000004"])
      let details = closed["evidence_details"] as? [String: Any]
      // The end of the day (UTC) 7 days after the dispute was opened at start + 180.
      #expect(details?["due_by"] as? Int == 1_800_662_399 && details?["submission_count"] as? Int == 0)

      // GET shows each event as delivered, and the dispute as it is now.
      let fetched = try await Base.send(client, server, "/v1/events/evt_test000006", method: "GET")
      #expect(fetched.status == 200 && fetched.body == Self.refundUpdated)
      let missing = try await Base.send(client, server, "/v1/events/evt_test999999", method: "GET")
      #expect(missing.status == 404 && missing.error["code"] as? String == "resource_missing")
      let dispute = try await Base.send(client, server, "/v1/disputes/dp_test000001", method: "GET")
      #expect(dispute.json["status"] as? String == "lost")
      let chargeNow = try await Base.send(client, server, "/v1/charges/ch_test000001", method: "GET")
      #expect(chargeNow.json["disputed"] as? Bool == true && chargeNow.json["amount_refunded"] as? Int == 0)

      // A delivery verifies with payservice's own check, under the secret it was signed with only.
      let delivery = try #require(server.delivery(of: "evt_test000002", secret: "whsec_feed", at: Self.start + 5))
      #expect(delivery.payload == events[1].payload)
      #expect(
        StripeWebhookSignature.verify(
          payload: delivery.payload, header: delivery.signature, secrets: ["whsec_feed"], now: Self.start + 10) == nil)
      #expect(
        StripeWebhookSignature.verify(
          payload: delivery.payload, header: delivery.signature, secrets: ["whsec_other"], now: Self.start + 10)
          == .noMatchingSignature)
      #expect(server.delivery(of: "evt_test999999", secret: "whsec_feed", at: Self.start) == nil)
    }
  }

  @Test("The same requests with the same clock give the same events, byte for byte")
  func deterministic() async throws {
    var runs: [[StripeTestServer.Event]] = []
    for _ in 0..<2 {
      try await Base.withServer { server, client in
        try await Self.lostDisputeScenario(server, client)
        runs.append(server.events())
      }
    }
    #expect(runs[0] == runs[1])
  }

  @Test("Balance transactions: captured − refunded + refund_failure − disputed + reinstated")
  func balanceTransactions() async throws {
    try await Base.withServer { server, client in
      try await Self.lostDisputeScenario(server, client)
      let transactions = server.balanceTransactions()
      #expect(transactions.map(\.id) == (1...4).map { "txn_test" + String(format: "%06d", $0) })
      #expect(transactions.map(\.type) == ["charge", "refund", "refund_failure", "adjustment"])
      #expect(transactions.map(\.reportingCategory) == ["charge", "refund", "refund_failure", "dispute"])
      #expect(transactions.map(\.amount) == [1999, -500, 500, -1999])
      #expect(transactions.map(\.source) == ["ch_test000001", "re_test000001", "re_test000001", "dp_test000001"])
      let offsets: [Int64] = [0, 60, 120, 180]
      #expect(transactions.map(\.created) == offsets.map { Self.start + $0 })
      let (captured, refunded, refundFailure, disputed, reinstated): (Int64, Int64, Int64, Int64, Int64) = (1999, 500, 500, 1999, 0)
      let sum = transactions.reduce(Int64(0)) { $0 + $1.amount }
      #expect(sum == captured - refunded + refundFailure - disputed + reinstated)

      let listed = try await Base.send(client, server, "/v1/balance_transactions?type=adjustment", method: "GET")
      #expect(Self.ids(listed) == ["txn_test000004"])
      let first = try #require((listed.json["data"] as? [[String: Any]])?.first)
      #expect(first["fee"] as? Int == 0 && first["net"] as? Int == -1999 && first["status"] as? String == "available")
      #expect(first["reporting_category"] as? String == "dispute" && first["available_on"] as? Int == Int(Self.start + 180))
      let all = try await Base.send(client, server, "/v1/balance_transactions?limit=3", method: "GET")
      #expect(Self.ids(all) == ["txn_test000004", "txn_test000003", "txn_test000002"] && all.json["has_more"] as? Bool == true)
      #expect(all.json["url"] as? String == "/v1/balance_transactions")
      let one = try await Base.send(client, server, "/v1/balance_transactions/txn_test000001", method: "GET")
      #expect(one.json["type"] as? String == "charge" && one.json["source"] as? String == "ch_test000001")
    }
  }

  @Test("A won dispute reinstates its funds; the charge cannot be refunded meanwhile")
  func wonDispute() async throws {
    try await Base.withServer { server, client in
      server.setClock(Self.start)
      _ = try await Base.send(client, server, "/v1/payment_intents", form: Base.charge("pm_card_visa", amount: 3000))
      _ = try await Base.send(client, server, "/v1/refunds", form: [("payment_intent", "pi_test000001"), ("amount", "1000")])
      #expect(server.openDispute(paymentIntent: "pi_test000001", reason: "nonsense") == nil)
      #expect(server.openDispute(paymentIntent: "pi_test000001", amount: 2001) == nil)
      #expect(server.openDispute(paymentIntent: "pi_test000001", reason: "product_not_received") == "dp_test000001")
      let refused = try await Base.send(client, server, "/v1/refunds", form: [("payment_intent", "pi_test000001")])
      #expect(refused.status == 400 && refused.error["code"] as? String == "charge_disputed")
      #expect(server.refundFromDashboard(paymentIntent: "pi_test000001") == nil)
      #expect(server.closeDispute("dp_test000001", won: true))
      #expect(
        server.events().map(\.type).suffix(4) == [
          "charge.dispute.created", "charge.dispute.funds_withdrawn", "charge.dispute.closed",
          "charge.dispute.funds_reinstated",
        ])
      let transactions = server.balanceTransactions()
      #expect(transactions.map(\.reportingCategory) == ["charge", "refund", "dispute", "dispute_reversal"])
      #expect(transactions.map(\.amount) == [3000, -1000, -2000, 2000])
      let sum = transactions.reduce(Int64(0)) { $0 + $1.amount }
      #expect(sum == Int64(3000 - 1000 - 2000 + 2000))
      let dispute = try await Base.send(client, server, "/v1/disputes/dp_test000001", method: "GET")
      #expect(dispute.json["status"] as? String == "won" && dispute.json["amount"] as? Int == 2000)
      #expect(dispute.json["reason"] as? String == "product_not_received")
      #expect((dispute.json["balance_transactions"] as? [[String: Any]])?.map { $0["amount"] as? Int } == [-2000, 2000])
      let listed = try await Base.send(client, server, "/v1/disputes?payment_intent=pi_test000001", method: "GET")
      #expect(Self.ids(listed) == ["dp_test000001"])
    }
  }

  @Test("An inquiry withdraws nothing and closes as warning_closed")
  func inquiry() async throws {
    try await Base.withServer { server, client in
      server.setClock(Self.start)
      _ = try await Base.send(client, server, "/v1/payment_intents", form: Base.charge("pm_card_visa"))
      #expect(server.openDispute(paymentIntent: "pi_test000001", reason: "general", inquiry: true) == "dp_test000001")
      #expect(server.updateDispute("dp_test000001", status: "under_review") == false)
      #expect(server.updateDispute("dp_test000001", status: "warning_under_review"))
      #expect(server.closeDispute("dp_test000001", won: true))
      #expect(
        server.events().map(\.type) == [
          "charge.succeeded", "payment_intent.succeeded", "charge.dispute.created", "charge.dispute.updated",
          "charge.dispute.closed",
        ])
      #expect(server.balanceTransactions().map(\.type) == ["charge"])
      let dispute = try await Base.send(client, server, "/v1/disputes/dp_test000001", method: "GET")
      #expect(dispute.json["status"] as? String == "warning_closed" && dispute.json["is_charge_refundable"] as? Bool == true)
      #expect((dispute.json["balance_transactions"] as? [Any])?.isEmpty == true)
      // An inquiry's charge can still be refunded.
      let refund = try await Base.send(client, server, "/v1/refunds", form: [("payment_intent", "pi_test000001")])
      #expect(refund.status == 200)
    }
  }

  @Test("25 refunds listed 10 at a time, filtered by created, with Stripe's errors")
  func paging() async throws {
    try await Base.withServer { server, client in
      server.setClock(Self.start)
      _ = try await Base.send(client, server, "/v1/payment_intents", form: Base.charge("pm_card_visa", amount: 10_000))
      for number in 1...25 {
        server.advanceClock(seconds: 1)
        let refund = try await Base.send(
          client, server, "/v1/refunds",
          form: [
            ("payment_intent", "pi_test000001"), ("amount", "100"), ("metadata[order_id]", "ord_1"),
            ("metadata[refund_id]", "rf_\(number)"),
          ])
        #expect(refund.status == 200)
      }
      let first = try await Base.send(client, server, "/v1/refunds?limit=10", method: "GET")
      #expect(first.status == 200 && first.json["object"] as? String == "list" && first.json["url"] as? String == "/v1/refunds")
      #expect(Self.ids(first) == Self.refundIDs(16...25) && first.json["has_more"] as? Bool == true)
      let newest = try #require((first.json["data"] as? [[String: Any]])?.first)
      #expect(newest["metadata"] as? [String: String] == ["order_id": "ord_1", "refund_id": "rf_25"])
      let second = try await Base.send(client, server, "/v1/refunds?limit=10&starting_after=re_test000016", method: "GET")
      #expect(Self.ids(second) == Self.refundIDs(6...15) && second.json["has_more"] as? Bool == true)
      let third = try await Base.send(client, server, "/v1/refunds?limit=10&starting_after=re_test000006", method: "GET")
      #expect(Self.ids(third) == Self.refundIDs(1...5) && third.json["has_more"] as? Bool == false)
      let back = try await Base.send(client, server, "/v1/refunds?limit=3&ending_before=re_test000010", method: "GET")
      #expect(Self.ids(back) == Self.refundIDs(11...13) && back.json["has_more"] as? Bool == true)

      // Refund N was made at start + N.
      let recent = try await Base.send(
        client, server, "/v1/refunds?created%5Bgte%5D=\(Self.start + 20)&payment_intent=pi_test000001", method: "GET")
      #expect(Self.ids(recent) == Self.refundIDs(20...25) && recent.json["has_more"] as? Bool == false)
      let window = try await Base.send(
        client, server, "/v1/refunds?created%5Bgt%5D=\(Self.start + 3)&created%5Blt%5D=\(Self.start + 6)", method: "GET")
      #expect(Self.ids(window) == Self.refundIDs(4...5))
      let exact = try await Base.send(client, server, "/v1/refunds?created=\(Self.start + 7)", method: "GET")
      #expect(Self.ids(exact) == ["re_test000007"])
      let otherCharge = try await Base.send(client, server, "/v1/refunds?charge=ch_test000002", method: "GET")
      #expect(Self.ids(otherCharge).isEmpty && otherCharge.json["has_more"] as? Bool == false)

      for limit in ["0", "101", "ten"] {
        let bad = try await Base.send(client, server, "/v1/refunds?limit=\(limit)", method: "GET")
        #expect(bad.status == 400 && bad.error["type"] as? String == "invalid_request_error")
        #expect(bad.error["param"] as? String == "limit")
      }
      let unknownCursor = try await Base.send(
        client, server, "/v1/refunds?starting_after=re_test000099", method: "GET")
      #expect(unknownCursor.status == 400 && unknownCursor.error["code"] as? String == "resource_missing")
      #expect(unknownCursor.error["param"] as? String == "starting_after")
      #expect(unknownCursor.error["message"] as? String == "No such refund: 're_test000099'")
      let unknownParameter = try await Base.send(client, server, "/v1/refunds?status=failed", method: "GET")
      #expect(unknownParameter.status == 400 && unknownParameter.error["code"] as? String == "parameter_unknown")
      #expect(unknownParameter.error["param"] as? String == "status")

      // PaymentIntents and events list the same way.
      let intents = try await Base.send(
        client, server, "/v1/payment_intents?expand%5B%5D=data.latest_charge", method: "GET")
      let intent = try #require((intents.json["data"] as? [[String: Any]])?.first)
      #expect((intent["latest_charge"] as? [String: Any])?["amount_refunded"] as? Int == 2500)
      let created = try await Base.send(client, server, "/v1/events?type=refund.created&limit=2", method: "GET")
      #expect((created.json["data"] as? [[String: Any]])?.map { $0["type"] as? String } == ["refund.created", "refund.created"])
      #expect(created.json["has_more"] as? Bool == true && created.json["url"] as? String == "/v1/events")
      let request = try #require((created.json["data"] as? [[String: Any]])?.first?["request"] as? [String: Any])
      #expect(request["id"] as? String == "req_test000026")
      let charges = try await Base.send(client, server, "/v1/events?type=charge.*", method: "GET")
      #expect(
        (charges.json["data"] as? [[String: Any]])?.prefix(2).map { $0["type"] as? String } == [
          "charge.refunded", "charge.refunded",
        ])
    }
  }

  @Test("The refund test cards' later changes are events with a null request; declines and processing too")
  func laterChanges() async throws {
    try await Base.withServer { server, client in
      server.setClock(Self.start)
      _ = try await Base.send(client, server, "/v1/payment_intents", form: Base.charge("pm_card_refundFail"))
      _ = try await Base.send(client, server, "/v1/refunds", form: [("payment_intent", "pi_test000001")], idempotencyKey: "rk")
      var events = server.events()
      #expect(
        events.map(\.type) == [
          "charge.succeeded", "payment_intent.succeeded", "refund.created", "charge.refunded", "refund.failed",
          "refund.updated", "charge.refund.updated",
        ])
      #expect(Self.json(events[2].payload)["request"] as? [String: String] == ["id": "req_test000002", "idempotency_key": "rk"])
      #expect(Self.json(events[4].payload)["request"] as? [String: NSNull] == ["id": NSNull(), "idempotency_key": NSNull()])
      let refund = try await Base.send(client, server, "/v1/refunds/re_test000001", method: "GET")
      #expect(refund.json["failure_balance_transaction"] as? String == "txn_test000003")

      _ = try await Base.send(client, server, "/v1/payment_intents", form: Base.charge("pm_card_chargeDeclined"))
      _ = try await Base.send(client, server, "/v1/payment_intents", form: Base.charge("pm_card_processing"))
      #expect(server.settleProcessing(paymentIntent: "pi_test000003", succeeded: true))
      _ = try await Base.send(client, server, "/v1/payment_intents", form: Base.charge("pm_card_visa", capture: "manual"))
      _ = try await Base.send(client, server, "/v1/payment_intents/pi_test000004/capture", form: [])
      events = server.events()
      #expect(
        events.dropFirst(7).map(\.type) == [
          "charge.failed", "payment_intent.payment_failed", "payment_intent.processing", "charge.succeeded",
          "payment_intent.succeeded", "charge.succeeded", "payment_intent.amount_capturable_updated",
          "charge.captured", "payment_intent.succeeded",
        ])
    }
  }
}
