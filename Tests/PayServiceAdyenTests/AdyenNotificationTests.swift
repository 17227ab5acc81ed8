import Foundation
import PayServiceAdyen
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Adyen's notifications (as the test server signs and batches them) through
/// processAdyenNotification: what Adyen decided later goes on the order once, and an item that is
/// forged, or signed but not about what payservice sent, changes nothing.
@Suite("Adyen notifications", .serialized)
struct AdyenNotificationTests {
  typealias Checkout = AdyenCheckoutTests.Checkout

  struct Shop {
    let fixture: AdyenFixture
    let context: ServiceContext
    let handler: RequestHandler

    init(capture: Gateway.Capture = .automatic, backend: StoreBackend = .sqlite) throws {
      fixture = try AdyenFixture(capture: capture)
      context = try fixture.context(backend: backend)
      handler = RequestHandler(context: context, methods: .payservice(backOffice: true), log: RequestLog(level: .warnings))
    }

    /// processAdyenNotification with `payload`.
    func notify(_ payload: String) -> JSONValue {
      handler.call(
        "processAdyenNotification", JSONWriter.string(JSONValue.object(JSONObject([("payload", .string(payload))]))))
    }

    /// The notifications the server has queued, passed on as Adyen would POST them.
    func deliver() -> (payload: String, answer: JSONValue) {
      let payload = fixture.server.releaseNotifications()
      return (payload, notify(payload))
    }

    func placed(_ number: String = "4111111111111111") throws -> (Checkout, JSONValue) {
      let checkout = try AdyenCheckoutTests.authorize(handler, fixture, number: number)
      return (checkout, try AdyenCheckoutTests.result(handler, checkout.processLine))
    }

    func order(_ orderId: String) -> JSONValue? {
      handler.call("getOrder", #"{"orderId":"\#(orderId)"}"#)["result"]?["order"]
    }
  }

  static func effects(_ answer: JSONValue) -> [String] {
    var effects: [String] = []
    var index = 0
    while let item = answer["result"]?["items"]?[index] {
      effects.append("\(item["eventCode"]?.stringValue ?? "?") \(item["effect"]?.stringValue ?? "?")")
      index += 1
    }
    return effects
  }

  @Test(
    "a payment Adyen decides later: its AUTHORISATION pays the pending order once; processOrder then answers it",
    arguments: StoreBackend.available)
  func authorisedLater(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.fixture.server.shutdown() }
    let (checkout, pending) = try shop.placed("4000000000000077")
    #expect(pending["failureCode"] == .string("payment_processing"))
    #expect(shop.fixture.server.settle(paymentPspReference: "TEST000000000001", authorised: true))
    let (payload, answer) = shop.deliver()
    #expect(Self.effects(answer) == ["AUTHORISATION order_paid"], "\(answer.compact)")
    #expect(answer["result"]?["reply"] == .string("[accepted]"))
    let orderId = try #require(answer["result"]?["items"]?[0]?["orderId"]?.stringValue)
    #expect(shop.order(orderId)?["status"] == .string("paid"))
    #expect(try AdyenCheckoutTests.stock(shop.context) == 98)
    // processOrder again answers the order, without a call; Adyen's redelivery changes nothing.
    let requests = shop.fixture.server.requests.count
    let settled = try AdyenCheckoutTests.result(shop.handler, checkout.processLine)
    #expect(settled["status"] == .string("succeeded"))
    #expect(settled["order"]?["status"] == .string("paid"))
    #expect(shop.fixture.server.requests.count == requests)
    #expect(shop.notify(payload) == answer)
    #expect(shop.fixture.server.paymentCount == 1)
  }

  @Test("a payment Adyen refuses later: the pending order fails and its stock comes back")
  func refusedLater() throws {
    let shop = try Shop()
    defer { shop.fixture.server.shutdown() }
    let (checkout, _) = try shop.placed("4000000000000077")
    #expect(try AdyenCheckoutTests.stock(shop.context) == 98)
    shop.fixture.server.settle(paymentPspReference: "TEST000000000001", authorised: false)
    let (_, answer) = shop.deliver()
    #expect(Self.effects(answer) == ["AUTHORISATION order_declined"], "\(answer.compact)")
    #expect(try AdyenCheckoutTests.stock(shop.context) == 100)
    let failed = try AdyenCheckoutTests.result(shop.handler, checkout.processLine)
    #expect(failed["status"] == .string("failed"))
    #expect(failed["failureCode"] == .string("card_declined"), "\(failed.compact)")
  }

  @Test("manual capture: Adyen's CAPTURE pays the authorized order; captureOrder then answers the capture")
  func captureLater() throws {
    let shop = try Shop(capture: .manual)
    defer { shop.fixture.server.shutdown() }
    let (_, placed) = try shop.placed()
    let orderId = try #require(placed["orderId"]?.stringValue)
    let capture = #"{"orderId":"\#(orderId)","captureId":"cap-1"}"#
    #expect(shop.handler.call("captureOrder", capture)["result"]?["failureCode"] == .string("outcome_pending"))
    let (payload, answer) = shop.deliver()
    #expect(Self.effects(answer) == ["AUTHORISATION none", "CAPTURE capture_succeeded"], "\(answer.compact)")
    #expect(shop.order(orderId)?["status"] == .string("paid"))
    let captured = shop.handler.call("captureOrder", capture)["result"]
    #expect(captured?["status"] == .string("succeeded"), "\(String(describing: captured))")
    #expect(captured?["captureId"] == .string("cap-1"))
    #expect(shop.fixture.server.captureCount == 1)
    #expect(shop.notify(payload) == answer)
  }

  @Test("a capture that fails after its CAPTURE was recorded: the order authorized again, the books without it, a capture may be asked again")
  func captureFailedLater() throws {
    let shop = try Shop(capture: .manual)
    defer { shop.fixture.server.shutdown() }
    let (_, placed) = try shop.placed()
    let orderId = try #require(placed["orderId"]?.stringValue)
    let amount = try #require(placed["amount"]?.stringValue)
    let capture = #"{"orderId":"\#(orderId)","captureId":"cap-1"}"#
    _ = shop.handler.call("captureOrder", capture)
    #expect(Self.effects(shop.deliver().answer) == ["AUTHORISATION none", "CAPTURE capture_succeeded"])
    #expect(shop.order(orderId)?["status"] == .string("paid"))
    // The payment is TEST000000000001, its capture TEST000000000002.
    #expect(shop.fixture.server.failModification(pspReference: "TEST000000000002"))
    let (payload, answer) = shop.deliver()
    #expect(Self.effects(answer) == ["CAPTURE_FAILED capture_failed"], "\(answer.compact)")
    let order = try #require(shop.order(orderId))
    #expect(order["status"] == .string("authorized"), "\(order.compact)")
    #expect(order["amountCaptured"] == nil || order["amountCaptured"] == .string("0.00"), "\(order.compact)")
    let events = order["events"]?.arrayValue?.map { "\($0["type"]?.stringValue ?? "?") \($0["amount"]?.stringValue ?? "-")" }
    #expect(events == ["placed \(amount)", "authorized \(amount)", "captured \(amount)", "capture_failed \(amount)"])
    // The books: nothing charged that day.
    let report = shop.handler.call("payoutReport", #"{"from":"2026-11-21","to":"2026-11-21"}"#)["result"]
    #expect(report?["totals"]?.compact == #"[{"currencyCode":"USD","charged":"0.00","refunded":"0.00","disputed":"0.00","net":"0.00"}]"#)
    // The capture's answer is now the failure; heard again, the item changes nothing more.
    let again = shop.handler.call("captureOrder", capture)["result"]
    #expect(again?.compact == #"{"status":"failed","failureCode":"gateway_error","message":"Adyen reports that the capture failed: Capture Failed"}"#)
    #expect(shop.notify(payload) == answer)
    #expect(shop.order(orderId) == order)
    // The order is authorized: another capture is sent to Adyen (what Adyen makes of it is its own).
    let second = shop.handler.call("captureOrder", #"{"orderId":"\#(orderId)","captureId":"cap-2"}"#)["result"]
    #expect(second?["failureCode"] == .string("outcome_pending"), "\(String(describing: second))")
    #expect(shop.fixture.server.requests.filter { $0.path.hasSuffix("/captures") }.count == 2)
  }

  @Test("a CAPTURE_FAILED after its CAPTURE on an order refunded since: refused, the order as it was")
  func captureFailedAfterRefund() throws {
    let shop = try Shop(capture: .manual)
    defer { shop.fixture.server.shutdown() }
    let (_, placed) = try shop.placed()
    let orderId = try #require(placed["orderId"]?.stringValue)
    _ = shop.handler.call("captureOrder", #"{"orderId":"\#(orderId)","captureId":"cap-1"}"#)
    _ = shop.deliver()
    _ = shop.handler.call("refundOrder", #"{"orderId":"\#(orderId)","refundId":"rf-1","amount":"1.00"}"#)
    _ = shop.deliver()
    let before = try #require(shop.order(orderId))
    #expect(before["status"] == .string("partially_refunded"), "\(before.compact)")
    #expect(shop.fixture.server.failModification(pspReference: "TEST000000000002"))
    let answer = shop.deliver().answer
    #expect(Self.effects(answer) == ["CAPTURE_FAILED refused"], "\(answer.compact)")
    #expect(
      answer["result"]?["items"]?[0]?["message"]
        == .string(
          "the capture cap-1 failed after it was recorded, and the order has moved on since (refunded, disputed, or another amount): check payment TEST000000000001 in the Customer Area"
        ))
    #expect(shop.order(orderId) == before)
  }

  @Test("signed amounts at the bounds: 10^15 + 1 is refused as an item; 10^16 and 2^63 - 1 are not a notification; nothing recorded")
  func hostileAmounts() throws {
    let shop = try Shop()
    defer { shop.fixture.server.shutdown() }
    func body(_ value: Int64) throws -> String {
      try AdyenNotificationFixture.body(
        key: shop.fixture.server.hmacKey,
        item: AdyenNotificationFixture.item(
          psp: "HOSTILE\(value)", original: nil, reference: "ord-x", value: value, eventCode: "AUTHORISATION", success: "true"))
    }
    let past = shop.notify(try body(1_000_000_000_000_001))
    #expect(
      past["result"]?.compact
        == #"{"status":"succeeded","reply":"[accepted]","items":[],"refused":[{"index":0,"pspReference":"HOSTILE1000000000000001","eventCode":"AUTHORISATION","failureCode":"invalid_amount","message":"1000000000000001 of USD is not an amount payservice can record"}]}"#,
      "\(past.compact)")
    for value: Int64 in [10_000_000_000_000_000, Int64.max] {
      let answer = shop.notify(try body(value))
      #expect(
        answer["result"]?.compact
          == #"{"status":"failed","failureCode":"not_a_notification","message":"notificationItems[0].NotificationRequestItem.amount.value must be a whole number of minor units, 0 to 9999999999999999"}"#,
        "\(answer.compact)")
    }
    #expect(try shop.context.store.write { try $0.operation(kind: "adyenNotification", key: "AUTHORISATION:true:HOSTILE1000000000000001") } == nil)
  }

  @Test("a capture that fails leaves the order authorized, and another capture may be sent")
  func captureFailed() throws {
    let shop = try Shop(capture: .manual)
    defer { shop.fixture.server.shutdown() }
    let (_, placed) = try shop.placed()
    let orderId = try #require(placed["orderId"]?.stringValue)
    let capture = #"{"orderId":"\#(orderId)","captureId":"cap-1"}"#
    _ = shop.handler.call("captureOrder", capture)
    _ = shop.fixture.server.releaseNotifications()
    // A CAPTURE_FAILED for the pending capture, signed with the webhook's key.
    let amount = try #require(placed["amount"]?.stringValue).replacingOccurrences(of: ".", with: "")
    let failed = try AdyenNotificationFixture.body(
      key: shop.fixture.server.hmacKey,
      item: AdyenNotificationFixture.item(
        psp: "TEST000000000002", original: "TEST000000000001", reference: "cap-1", value: try #require(Int64(amount)),
        eventCode: "CAPTURE_FAILED", success: "true"))
    let answer = shop.notify(failed)
    #expect(Self.effects(answer) == ["CAPTURE_FAILED capture_failed"], "\(answer.compact)")
    #expect(shop.order(orderId)?["status"] == .string("authorized"))
    // The capture's answer is the failure, kept under its captureId.
    let again = shop.handler.call("captureOrder", capture)["result"]
    #expect(again?["failureCode"] == .string("gateway_error"), "\(String(describing: again))")
    #expect(again?["message"] == .string("Adyen reports that the capture failed."))
    #expect(shop.fixture.server.captureCount == 1)
  }

  @Test("a cancel Adyen confirms cancels the order and restocks it")
  func cancelLater() throws {
    let shop = try Shop(capture: .manual)
    defer { shop.fixture.server.shutdown() }
    let (_, placed) = try shop.placed()
    let orderId = try #require(placed["orderId"]?.stringValue)
    let cancel = #"{"orderId":"\#(orderId)","cancelId":"can-1"}"#
    #expect(shop.handler.call("cancelOrder", cancel)["result"]?["failureCode"] == .string("outcome_pending"))
    let (_, answer) = shop.deliver()
    #expect(Self.effects(answer) == ["AUTHORISATION none", "CANCELLATION cancel_succeeded"], "\(answer.compact)")
    #expect(shop.order(orderId)?["status"] == .string("canceled"))
    #expect(try AdyenCheckoutTests.stock(shop.context) == 100)
    #expect(shop.handler.call("cancelOrder", cancel)["result"]?["status"] == .string("succeeded"))
    #expect(shop.fixture.server.cancelCount == 1)
  }

  @Test("a refund settles at REFUND, and a REFUND_FAILED after it takes its amount off the order again")
  func refundLater() throws {
    let shop = try Shop()
    defer { shop.fixture.server.shutdown() }
    let (_, placed) = try shop.placed()
    let orderId = try #require(placed["orderId"]?.stringValue)
    _ = shop.fixture.server.releaseNotifications()
    let refund = shop.handler.call("refundOrder", #"{"orderId":"\#(orderId)","refundId":"r-1","amount":"1.00"}"#)
    #expect(refund["result"]?["status"] == .string("succeeded"), "\(refund.compact)")
    #expect(shop.order(orderId)?["amountRefunded"] == .string("1.00"))
    let (_, settled) = shop.deliver()
    #expect(Self.effects(settled) == ["REFUND refund_succeeded"], "\(settled.compact)")
    #expect(shop.fixture.server.failModification(pspReference: "TEST000000000002"))
    let (_, failed) = shop.deliver()
    #expect(Self.effects(failed) == ["REFUND_FAILED refund_failed"], "\(failed.compact)")
    #expect(shop.order(orderId)?["amountRefunded"] == .string("0.00"))
    #expect(shop.order(orderId)?["status"] == .string("paid"))
  }

  @Test("a chargeback shows as a dispute: its notice moves nothing, the chargeback withdraws, the reversal gives back")
  func chargeback() throws {
    let shop = try Shop()
    defer { shop.fixture.server.shutdown() }
    let (_, placed) = try shop.placed()
    let orderId = try #require(placed["orderId"]?.stringValue)
    let total = try #require(placed["amount"]?.stringValue)
    let value = try #require(Int64(total.replacingOccurrences(of: ".", with: "")))
    _ = shop.fixture.server.releaseNotifications()
    let dispute = try #require(shop.fixture.server.openDispute(paymentPspReference: "TEST000000000001", value: value))
    let (noticed, noticeAnswer) = shop.deliver()
    #expect(Self.effects(noticeAnswer) == ["NOTIFICATION_OF_CHARGEBACK dispute_opened"], "\(noticeAnswer.compact)")
    #expect(shop.order(orderId)?["disputes"]?[0]?["fundsWithdrawn"] == .string("0.00"))
    #expect(shop.fixture.server.advanceDispute(dispute, to: .chargeback))
    let (_, charged) = shop.deliver()
    #expect(Self.effects(charged) == ["CHARGEBACK dispute_updated"], "\(charged.compact)")
    let disputed = shop.order(orderId)
    #expect(disputed?["status"] == .string("disputed"))
    #expect(disputed?["disputes"]?[0]?["fundsWithdrawn"] == .string(total))
    #expect(disputed?["disputes"]?[0]?["disputeId"] == .string(dispute))
    // The notice heard again after the chargeback moves nothing back.
    #expect(Self.effects(shop.notify(noticed)) == ["NOTIFICATION_OF_CHARGEBACK dispute_opened"])
    #expect(shop.order(orderId)?["disputes"]?[0]?["fundsWithdrawn"] == .string(total))
    #expect(shop.fixture.server.advanceDispute(dispute, to: .chargebackReversed))
    let (_, reversed) = shop.deliver()
    #expect(Self.effects(reversed) == ["CHARGEBACK_REVERSED dispute_won"], "\(reversed.compact)")
    let won = shop.order(orderId)
    #expect(won?["status"] == .string("paid"))
    #expect(won?["disputes"]?[0]?["fundsReinstated"] == .string(total))
  }

  @Test("a forged item, an item for another account, and a signed item about other money change nothing")
  func hostileItems() throws {
    let shop = try Shop()
    defer { shop.fixture.server.shutdown() }
    let (_, pending) = try shop.placed("4000000000000077")
    #expect(pending["failureCode"] == .string("payment_processing"))
    shop.fixture.server.settle(paymentPspReference: "TEST000000000001", authorised: true)
    let genuine = shop.fixture.server.releaseNotifications()
    // The same item with its amount changed after Adyen signed it.
    let forged = genuine.replacingOccurrences(of: #""value":"#, with: #""value":1"#)
    let refused = shop.notify(forged)
    #expect(Self.effects(refused) == [], "\(refused.compact)")
    #expect(refused["result"]?["refused"]?[0]?["failureCode"] == .string("invalid_signature"))
    // Signed with the webhook's key, but for another merchant account.
    let item = try #require(try JSONParser.parse(genuine)["notificationItems"]?[0]?["NotificationRequestItem"])
    let reference = try #require(item["merchantReference"]?.stringValue)
    guard case .number(let valueText)? = item["amount"]?["value"], let value = Int64(valueText) else {
      Issue.record("no amount in \(genuine)")
      return
    }
    let other = try AdyenNotificationFixture.body(
      key: shop.fixture.server.hmacKey,
      item: AdyenNotificationFixture.item(
        psp: "TEST000000000001", original: nil, reference: reference, value: value, eventCode: "AUTHORISATION",
        success: "true", account: "SomeoneElseECOM"))
    #expect(shop.notify(other)["result"]?["refused"]?[0]?["failureCode"] == .string("wrong_merchant_account"))
    // Signed, for this account, about the pending order, but for one cent.
    let cheap = try AdyenNotificationFixture.body(
      key: shop.fixture.server.hmacKey,
      item: AdyenNotificationFixture.item(
        psp: "TEST000000000099", original: nil, reference: reference, value: 1, eventCode: "AUTHORISATION",
        success: "true"))
    let answer = shop.notify(cheap)
    #expect(Self.effects(answer) == ["AUTHORISATION refused"], "\(answer.compact)")
    #expect(
      answer["result"]?["items"]?[0]?["message"]
        == .string("the item's 1 minor units of USD are not the \(value) of USD charged"))
    #expect(shop.handler.call("listOrders", "{}")["result"]?["orders"]?[0]?["status"] == .string("pending"))
    // The genuine item still pays the order.
    #expect(Self.effects(shop.notify(genuine)) == ["AUTHORISATION order_paid"])
    // The same eventCode, success and pspReference with other money is not the item recorded.
    let contradicting = try AdyenNotificationFixture.body(
      key: shop.fixture.server.hmacKey,
      item: AdyenNotificationFixture.item(
        psp: "TEST000000000001", original: nil, reference: reference, value: value + 1, eventCode: "AUTHORISATION",
        success: "true"))
    let conflict = shop.notify(contradicting)["result"]
    #expect(conflict?["refused"]?[0]?["failureCode"] == .string("conflict"), "\(String(describing: conflict))")
    #expect(conflict?["items"] == .array([]))
  }

  @Test("a body that is not a notification, a test notification at a live payservice, no key: failed, nothing recorded")
  func rejectedDeliveries() throws {
    let shop = try Shop()
    defer { shop.fixture.server.shutdown() }
    let notJSON = shop.notify("not json")["result"]
    #expect(notJSON?["failureCode"] == .string("not_a_notification"))
    #expect(notJSON?["message"] == .string("the body is not a JSON object"))
    let empty = shop.notify(#"{"live":"false","notificationItems":[]}"#)["result"]
    #expect(empty?["message"] == .string("notificationItems must be a non-empty array"))
    let (_, placed) = try shop.placed()
    #expect(placed["status"] == .string("succeeded"))
    let genuine = shop.fixture.server.releaseNotifications()
    let live = shop.notify(genuine.replacingOccurrences(of: #""live":"false""#, with: #""live":"true""#))["result"]
    #expect(live?["failureCode"] == .string("wrong_mode"))
    #expect(
      live?["message"]
        == .string("the notification is live and this payservice is in test mode (gateway.mode): nothing was recorded"))
    let config = try shop.fixture.config()
    let (store, _) = try StoreBackend.sqlite.freshStore(config: config)
    let unkeyed = ServiceContext(
      config: config, store: store, clock: ServiceClock(pinned: TestConfig.now),
      gateway: GatewayCalls(gateway: shop.context.gatewayCalls!.gateway, maxConcurrent: 4))
    let handler = RequestHandler(context: unkeyed, methods: .payservice(), log: RequestLog(level: .warnings))
    let answer = handler.call(
      "processAdyenNotification", #"{"payload":"{\"live\":\"false\",\"notificationItems\":[]}"}"#)["result"]
    #expect(answer?["failureCode"] == .string("not_configured"))
    #expect(answer?["message"] == .string("the environment variable ADYEN_HMAC_KEY (gateway.hmacKeyVariable) is not set"))
  }
}

/// Notification items signed with a webhook's key, for items Adyen would not send by itself.
enum AdyenNotificationFixture {
  static func item(
    psp: String, original: String?, reference: String, value: Int64, eventCode: String, success: String,
    account: String = AdyenTestServer.defaultMerchantAccount
  ) -> AdyenNotification.Item {
    AdyenNotification.Item(
      pspReference: psp, originalReference: original, merchantAccountCode: account, merchantReference: reference,
      value: String(value), currency: "USD", eventCode: eventCode, success: success, eventDate: nil, reason: nil,
      hmacSignature: nil, additionalData: [:])
  }

  /// A notification body holding `item`, signed with `key` (hex).
  static func body(key: String, item: AdyenNotification.Item) throws -> String {
    let keyBytes = try AdyenNotificationSignature.keys(in: key, variable: "key").get()[0]
    let signature = AdyenNotificationSignature.signature(item, key: keyBytes)
    var members: [(key: String, value: JSONValue)] = [
      ("additionalData", .object(JSONObject([("hmacSignature", .string(signature))]))),
      ("amount", .object(JSONObject([("currency", .string(item.currency)), ("value", .number(item.value))]))),
      ("eventCode", .string(item.eventCode)), ("merchantAccountCode", .string(item.merchantAccountCode)),
      ("merchantReference", .string(item.merchantReference)),
    ]
    if let original = item.originalReference { members.append(("originalReference", .string(original))) }
    members += [("pspReference", .string(item.pspReference)), ("success", .string(item.success))]
    let wrapped = JSONValue.object(JSONObject([("NotificationRequestItem", .object(JSONObject(members)))]))
    return JSONWriter.string(
      JSONValue.object(JSONObject([("live", .string("false")), ("notificationItems", .array([wrapped]))])))
  }
}
