import Foundation
import PayServiceCore
import PayServiceStripe
import PayServiceTestSupport
import Testing

/// Back-office calls through Stripe as operations of the journal: a call whose answer is lost stays
/// pending under its key, and the sweep or the identical request completes it once; a pending
/// refund counts as refunded for the order's other refunds; a pending capture or cancel refuses
/// another; a key reused with other params while pending is -32004.
@Suite("Stripe back office: the operation journal", .serialized)
struct StripeBackOfficeJournalTests {
  static let cart = StripeCheckoutTests.cart

  /// A paid (or, with manual capture, authorized) order placed through Stripe.
  struct Shop {
    let server: StripeTestServer
    let fixture: StripeFixture
    let context: ServiceContext
    let handler: RequestHandler
    let orderId: String
    let paymentId: String
    let amount: String

    init(backend: StoreBackend, capture: Gateway.Capture = .automatic, shippingMethod: String = "free") throws {
      server = try StripeTestServer()
      fixture = try StripeFixture(server: server, capture: capture, requestTimeoutSeconds: 1)
      context = try fixture.context(backend: backend)
      handler = fixture.handler(context, backOffice: true)
      let (cart, contact, card) = (StripeBackOfficeJournalTests.cart, BackOfficeFixture.contacts[0], BackOfficeFixture.cards[0])
      let authorized = handler.call(
        "authorizePayment",
        #"{"items":\#(cart),"shippingMethod":"\#(shippingMethod)","payment":{"token":{"paymentData":"tok_visa","paymentMethod":\#(card),"transactionIdentifier":"T"},"shippingContact":\#(contact),"billingContact":\#(contact)}}"#
      )
      #expect(authorized["result"]?["status"] == .string("success"), "\(authorized.compact)")
      let token = try #require(authorized["result"]?["chargeToken"]?.stringValue)
      amount = try #require(authorized["result"]?["amount"]?.stringValue)
      let placed = handler.call(
        "processOrder",
        #"{"chargeToken":"\#(token)","items":\#(cart),"shippingMethod":"\#(shippingMethod)","shippingContact":\#(contact),"amount":"\#(amount)","currencyCode":"USD"}"#
      )
      #expect(placed["result"]?["status"] == .string("succeeded"), "\(placed.compact)")
      #expect(
        placed["result"]?["order"]?["status"] == .string(capture == .manual ? "authorized" : "paid"), "\(placed.compact)")
      orderId = try #require(placed["result"]?["orderId"]?.stringValue)
      paymentId = try #require(placed["result"]?["order"]?["gatewayPaymentId"]?.stringValue)
    }

    /// Refunds one mug as `rf-a` with Stripe's answer lost: the refund is pending; returns the
    /// request and the amount Stripe refunded.
    func loseRefundOfOneMug(sourceLocation: SourceLocation = #_sourceLocation) throws -> (request: String, amount: Int64) {
      server.inject(.resetAfterExecuting, on: .refund)
      let first = #"{"orderId":"\#(orderId)","refundId":"rf-a","lines":[{"sku":"mug","quantity":1,"restock":"return"}]}"#
      StripeBackOfficeJournalTests.expectLost(handler.call("refundOrder", first), sourceLocation: sourceLocation)
      #expect(try pending() == [["refund", "rf-a", orderId]], sourceLocation: sourceLocation)
      return (first, try #require(server.refunds(paymentIntent: paymentId).first?.amount, sourceLocation: sourceLocation))
    }

    func stock() throws -> Int { try StripeCheckoutTests.stock(context) }

    func status() throws -> OrderStatus? { try context.store.order(id: orderId)?.status }

    /// The journal's pending entries as (kind, key, subject).
    func pending() throws -> [[String]] {
      try context.store.pendingOperations().map { [$0.kind, $0.key, $0.subject ?? ""] }
    }

    /// The journal's entry of `kind` under `key`.
    func entry(_ kind: String, _ key: String) throws -> OperationRow? {
      try context.store.write { try $0.operation(kind: kind, key: key) }
    }

    /// Requests that reached the test server on `path`.
    func requests(_ path: String) -> [StripeTestServer.RecordedRequest] {
      server.requests.filter { $0.path == path }
    }

    func minor(_ text: String) -> Int64 { Int64(text.replacingOccurrences(of: ".", with: ""))! }
  }

  static let unanswered =
    "The request is pending: send the same request again to complete it; it is never done twice."

  /// Checks `answer` is the gateway_unavailable failure of a call whose answer was lost.
  static func expectLost(_ answer: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(answer["result"]?["status"] == .string("failed"), "\(answer.compact)", sourceLocation: sourceLocation)
    #expect(answer["result"]?["failureCode"] == .string("gateway_unavailable"), "\(answer.compact)", sourceLocation: sourceLocation)
    let message = answer["result"]?["message"]?.stringValue ?? ""
    #expect(
      message.hasPrefix("Stripe did not answer (") && message.hasSuffix("). " + unanswered), "\(message)",
      sourceLocation: sourceLocation)
  }

  @Test(
    "a refund whose answer is lost stays pending; the sweep records it once (one refund at Stripe, one restock), the identical refundOrder replays the stored answer byte for byte, and a second sweep finds nothing",
    arguments: StoreBackend.available)
  func refundSwept(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    #expect(try shop.stock() == 98)
    shop.server.inject(.resetAfterExecuting, on: .refund)
    let refund = #"{"orderId":"\#(shop.orderId)","refundId":"rf-lost","lines":[{"sku":"mug","quantity":1,"restock":"return"}]}"#
    Self.expectLost(shop.handler.call("refundOrder", refund))
    // Stripe refunded; the store has not recorded it, and the refund is pending under its key.
    #expect(shop.server.refundCount == 1)
    #expect(try shop.stock() == 98)
    #expect(try shop.status() == .paid)
    #expect(try shop.pending() == [["refund", "rf-lost", shop.orderId]])
    #expect(try shop.entry("refund", "rf-lost")?.state == .pending)
    let listed = shop.handler.call("getOrder", #"{"orderId":"\#(shop.orderId)"}"#)["result"]?["order"]
    #expect(listed?["status"] == .string("paid"))
    #expect(listed?["refunds"]?.arrayValue?.isEmpty ?? true)

    #expect(try OperationRunner.sweep(context: shop.context) == OperationRunner.Sweep(resolved: 1, pending: 0))
    #expect(shop.server.refundCount == 1)
    let refunds = shop.server.refunds(paymentIntent: shop.paymentId)
    #expect(refunds.count == 1)
    // The sweep sent the same call under the same key, and Stripe replayed its refund.
    let sent = shop.requests("/v1/refunds")
    #expect(sent.count == 2)
    #expect(sent.map(\.idempotencyKey) == [sent[0].idempotencyKey, sent[0].idempotencyKey])
    #expect(sent.map(\.replayed) == [false, true])
    #expect(sent.map(\.body) == [sent[0].body, sent[0].body])
    #expect(try shop.stock() == 99)
    #expect(try shop.status() == .partiallyRefunded)
    #expect(try shop.pending().isEmpty)
    let stored = try #require(try shop.entry("refund", "rf-lost"))
    #expect(stored.state == .settled)
    let storedResult = try #require(stored.result)

    // The identical request: the stored answer, byte for byte, and nothing sent.
    let requestsBefore = shop.server.requests.count
    let line = #"{"jsonrpc":"2.0","id":9,"method":"refundOrder","params":\#(refund)}"#
    let replay = try #require(shop.handler.respond(line))
    #expect(replay == #"{"jsonrpc":"2.0","id":9,"result":\#(storedResult)}"#)
    #expect(shop.handler.respond(line) == replay)
    let result = try JSONParser.parse(replay)["result"]
    #expect(result?["status"] == .string("succeeded"), "\(replay)")
    #expect(result?["orderStatus"] == .string("partially_refunded"))
    #expect(result?["refund"]?["refundId"] == .string("rf-lost"))
    #expect(result?["refund"]?["gatewayRefundId"] == .string(refunds[0].id))
    #expect(result?["refund"]?["lines"]?[0]?["quantity"] == .number("1"))
    #expect(shop.minor(try #require(result?["refund"]?["amount"]?.stringValue)) == refunds[0].amount)
    #expect(shop.server.requests.count == requestsBefore)
    #expect(try shop.stock() == 99)
    let order = try #require(try shop.context.store.order(id: shop.orderId))
    #expect(order.refunds.count == 1)
    #expect(order.refundedMinor == refunds[0].amount)
    #expect(order.events.filter { $0.kind == .refunded }.count == 1)

    #expect(try OperationRunner.sweep(context: shop.context) == OperationRunner.Sweep(resolved: 0, pending: 0))
    #expect(shop.server.refundCount == 1)
    #expect(try !shop.fixture.secretLeaked(shop.context))
  }

  @Test(
    "a pending refund counts as refunded: another refund of more than remains after it is refund_exceeds_remaining naming what remains as if it were done, units it took are quantity_exceeds_remaining, exactly the rest passes",
    arguments: StoreBackend.available)
  func pendingRefundReserves(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let format = shop.context.config.format
    let captured = shop.minor(shop.amount)
    let (first, reserved) = try shop.loseRefundOfOneMug()
    #expect(reserved > 0 && reserved < captured)
    let remaining = captured - reserved

    // More than remains after the pending refund: refused, naming what remains as if it were done.
    let tooMuch = #"{"orderId":"\#(shop.orderId)","refundId":"rf-b","amount":"\#(format(remaining + 1))"}"#
    let refused = shop.handler.call("refundOrder", tooMuch)
    #expect(refused["result"]?["status"] == .string("failed"), "\(refused.compact)")
    #expect(refused["result"]?["failureCode"] == .string("refund_exceeds_remaining"), "\(refused.compact)")
    let exceedsMessage =
      "This refund is \(format(remaining + 1)) USD, but only \(format(remaining)) of the \(format(captured)) captured remains to refund."
    #expect(refused["result"]?["message"] == .string(exceedsMessage), "\(refused.compact)")
    // The whole order, by amount: the same.
    let whole = shop.handler.call("refundOrder", #"{"orderId":"\#(shop.orderId)","refundId":"rf-b","amount":"\#(shop.amount)"}"#)
    #expect(
      whole["result"]?["message"]
        == .string(
          "This refund is \(shop.amount) USD, but only \(format(remaining)) of the \(shop.amount) captured remains to refund."),
      "\(whole.compact)")

    // Units the pending refund took: refused.
    let units = #"{"orderId":"\#(shop.orderId)","refundId":"rf-c","lines":[{"sku":"mug","quantity":2,"restock":"return"}]}"#
    let unitsRefused = shop.handler.call("refundOrder", units)
    #expect(unitsRefused["result"]?["failureCode"] == .string("quantity_exceeds_remaining"), "\(unitsRefused.compact)")
    #expect(unitsRefused["result"]?["message"] == .string("Some lines ask for more units than remain to refund."))
    #expect(
      unitsRefused["result"]?["errors"]?.compact
        == #"[{"path":"lines[0].quantity","message":"1 of 2 units of mug were already refunded; at most 1 more"}]"#,
      "\(unitsRefused.compact)")
    // Refused requests sent nothing and left their keys unused; the pending refund is still the only entry.
    #expect(shop.server.refundCount == 1)
    #expect(shop.requests("/v1/refunds").count == 1)
    #expect(try shop.pending() == [["refund", "rf-a", shop.orderId]])
    #expect(try shop.entry("refund", "rf-b") == nil)
    #expect(try shop.entry("refund", "rf-c") == nil)
    #expect(try shop.stock() == 98)
    #expect(try shop.status() == .paid)

    // Once the sweep records the pending refund, the same requests are refused with the same words.
    #expect(try OperationRunner.sweep(context: shop.context) == OperationRunner.Sweep(resolved: 1, pending: 0))
    #expect(try shop.status() == .partiallyRefunded)
    #expect(try shop.stock() == 99)
    #expect(try shop.context.store.order(id: shop.orderId)?.refundedMinor == reserved)
    #expect(shop.handler.call("refundOrder", tooMuch).compact == refused.compact)
    #expect(shop.handler.call("refundOrder", units).compact == unitsRefused.compact)

    // Exactly what remains passes (rf-b was left unused, so it may carry other params): the order is refunded.
    let rest = shop.handler.call("refundOrder", #"{"orderId":"\#(shop.orderId)","refundId":"rf-b","amount":"\#(format(remaining))"}"#)
    #expect(rest["result"]?["status"] == .string("succeeded"), "\(rest.compact)")
    #expect(rest["result"]?["orderStatus"] == .string("refunded"), "\(rest.compact)")
    #expect(rest["result"]?["amountRemaining"] == .string(format(0)), "\(rest.compact)")
    #expect(shop.server.refunds(paymentIntent: shop.paymentId).map(\.amount) == [reserved, remaining])
    #expect(try shop.status() == .refunded)
    #expect(try !shop.fixture.secretLeaked(shop.context))
  }

  @Test(
    "a pending refund's shipping counts as refunded: another refund with shipping is shipping_already_refunded, before and after the sweep records the first",
    arguments: StoreBackend.available)
  func pendingShippingReserved(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend, shippingMethod: "express")
    defer { shop.server.shutdown() }
    shop.server.inject(.resetAfterExecuting, on: .refund)
    let first = #"{"orderId":"\#(shop.orderId)","refundId":"rf-ship","shipping":true}"#
    Self.expectLost(shop.handler.call("refundOrder", first))
    #expect(try shop.pending() == [["refund", "rf-ship", shop.orderId]])
    let reserved = try #require(shop.server.refunds(paymentIntent: shop.paymentId).first?.amount)
    // Express shipping, 12.50, and its tax (if any).
    #expect(reserved >= 1250)

    let again = #"{"orderId":"\#(shop.orderId)","refundId":"rf-ship-2","shipping":true,"lines":[{"sku":"mug","quantity":1,"restock":"none"}]}"#
    let refused = shop.handler.call("refundOrder", again)
    #expect(
      refused["result"]?.compact
        == #"{"status":"failed","failureCode":"shipping_already_refunded","message":"The shipping of this order was already refunded; leave shipping out."}"#,
      "\(refused.compact)")
    #expect(shop.server.refundCount == 1)
    #expect(try shop.entry("refund", "rf-ship-2") == nil)

    #expect(try OperationRunner.sweep(context: shop.context) == OperationRunner.Sweep(resolved: 1, pending: 0))
    #expect(try shop.status() == .partiallyRefunded)
    #expect(try shop.context.store.order(id: shop.orderId)?.refundedMinor == reserved)
    #expect(shop.handler.call("refundOrder", again).compact == refused.compact)
    let replay = shop.handler.call("refundOrder", first)
    #expect(replay["result"]?["status"] == .string("succeeded"), "\(replay.compact)")
    #expect(replay["result"]?["refund"]?["shipping"] != nil, "\(replay.compact)")
    #expect(shop.minor(try #require(replay["result"]?["refund"]?["amount"]?.stringValue)) == reserved)
    #expect(shop.server.refundCount == 1)
    #expect(try shop.stock() == 98)
  }

  @Test(
    "while the first refund is pending, exactly what remains after it is refunded at once; the sweep then records the first and the order is refunded",
    arguments: StoreBackend.available)
  func restWhilePending(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    let format = shop.context.config.format
    let captured = shop.minor(shop.amount)
    let (first, reserved) = try shop.loseRefundOfOneMug()
    let remaining = captured - reserved

    // The other unit, while the first is pending: its share is what remains.
    let second = shop.handler.call(
      "refundOrder", #"{"orderId":"\#(shop.orderId)","refundId":"rf-b","lines":[{"sku":"mug","quantity":1,"restock":"return"}]}"#)
    #expect(second["result"]?["status"] == .string("succeeded"), "\(second.compact)")
    #expect(second["result"]?["refund"]?["amount"] == .string(format(remaining)), "\(second.compact)")
    #expect(try shop.stock() == 99)
    // Nothing more can be refunded: the pending refund holds the rest.
    let more = shop.handler.call("refundOrder", #"{"orderId":"\#(shop.orderId)","refundId":"rf-c","amount":"0.01"}"#)
    #expect(more["result"]?["failureCode"] == .string("refund_exceeds_remaining"), "\(more.compact)")
    #expect(
      more["result"]?["message"]
        == .string("This refund is 0.01 USD, but only \(format(0)) of the \(format(captured)) captured remains to refund."),
      "\(more.compact)")

    #expect(try OperationRunner.sweep(context: shop.context) == OperationRunner.Sweep(resolved: 1, pending: 0))
    #expect(shop.server.refunds(paymentIntent: shop.paymentId).map(\.amount) == [reserved, remaining])
    #expect(try shop.status() == .refunded)
    #expect(try shop.stock() == 100)
    let order = try #require(try shop.context.store.order(id: shop.orderId))
    #expect(order.refundedMinor == captured)
    #expect(order.refunds.count == 2)
    let replay = shop.handler.call("refundOrder", first)
    #expect(replay["result"]?["status"] == .string("succeeded"), "\(replay.compact)")
    #expect(replay["result"]?["orderStatus"] == .string("refunded"), "\(replay.compact)")
    #expect(shop.server.refundCount == 2)
  }

  @Test(
    "a capture pending for more than 23 hours is never sent again: its replay, another capture or cancel and the sweep all say so, and nothing reaches Stripe",
    arguments: StoreBackend.available)
  func captureTooOld(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend, capture: .manual)
    defer { shop.server.shutdown() }
    shop.server.inject(.resetAfterExecuting, on: .capture)
    let capture = #"{"orderId":"\#(shop.orderId)","captureId":"cap-old"}"#
    Self.expectLost(shop.handler.call("captureOrder", capture))
    let sent = shop.requests("/v1/payment_intents/\(shop.paymentId)/capture").count

    // A day later, on the same store: past Stripe's 24-hour idempotency window (less an hour).
    let later = ServiceContext(
      config: shop.context.config, store: try shop.context.store, clock: ServiceClock(pinned: TestConfig.now + 24 * 3600),
      gateway: shop.context.gatewayCalls)
    let handler = shop.fixture.handler(later, backOffice: true)
    let replay = handler.call("captureOrder", capture)
    #expect(
      replay["result"]?.compact
        == #"{"status":"failed","failureCode":"gateway_error","message":"This request has been pending for more than 23 hours: its gateway may have forgotten the idempotency key, so payservice will not send it again (that could do it twice). Look order \#(shop.orderId)'s payment up at the gateway."}"#,
      "\(replay.compact)")
    let stale =
      "A capture of this order (captureId cap-old) has waited for its gateway's answer for more than 23 hours, and payservice will not send it again; look the order's payment up at the gateway."
    for (method, params) in [
      ("cancelOrder", #"{"orderId":"\#(shop.orderId)","cancelId":"cx-old"}"#),
      ("captureOrder", #"{"orderId":"\#(shop.orderId)","captureId":"cap-new"}"#),
    ] {
      let refused = handler.call(method, params)
      #expect(refused["result"]?.compact == #"{"status":"failed","failureCode":"not_authorized","message":"\#(stale)"}"#, "\(refused.compact)")
    }
    #expect(try OperationRunner.sweep(context: later) == OperationRunner.Sweep(resolved: 0, pending: 1))
    #expect(shop.requests("/v1/payment_intents/\(shop.paymentId)/capture").count == sent)
    #expect(shop.requests("/v1/payment_intents/\(shop.paymentId)/cancel").isEmpty)
    #expect(try shop.pending() == [["capture", "cap-old", shop.orderId]])
    #expect(try shop.status() == .authorized)
  }

  @Test(
    "a capture whose answer is lost stays pending: another cancel or capture of the order is not_authorized naming its captureId, and the identical captureOrder completes it with one capture at Stripe",
    arguments: StoreBackend.available)
  func captureLost(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend, capture: .manual)
    defer { shop.server.shutdown() }
    #expect(shop.server.paymentIntent(shop.paymentId)?["status"] == "requires_capture")
    shop.server.inject(.resetAfterExecuting, on: .capture)
    let capture = #"{"orderId":"\#(shop.orderId)","captureId":"cap-lost"}"#
    Self.expectLost(shop.handler.call("captureOrder", capture))
    // Stripe captured; the store has not recorded it.
    #expect(shop.server.paymentIntent(shop.paymentId)?["status"] == "succeeded")
    #expect(try shop.status() == .authorized)
    #expect(try shop.pending() == [["capture", "cap-lost", shop.orderId]])

    let waiting =
      "A capture of this order (captureId cap-lost) is waiting for its gateway's answer; send it again to complete it."
    let cancel = #"{"orderId":"\#(shop.orderId)","cancelId":"cx-1"}"#
    let canceled = shop.handler.call("cancelOrder", cancel)
    #expect(canceled["result"]?.compact == #"{"status":"failed","failureCode":"not_authorized","message":"\#(waiting)"}"#, "\(canceled.compact)")
    let other = shop.handler.call("captureOrder", #"{"orderId":"\#(shop.orderId)","captureId":"cap-2","amount":"1.00"}"#)
    #expect(other["result"]?.compact == #"{"status":"failed","failureCode":"not_authorized","message":"\#(waiting)"}"#, "\(other.compact)")
    // Nothing sent for them, their keys unused, the stock untouched.
    #expect(shop.requests("/v1/payment_intents/\(shop.paymentId)/cancel").isEmpty)
    #expect(shop.requests("/v1/payment_intents/\(shop.paymentId)/capture").count == 1)
    #expect(try shop.entry("cancel", "cx-1") == nil)
    #expect(try shop.entry("capture", "cap-2") == nil)
    #expect(try shop.pending() == [["capture", "cap-lost", shop.orderId]])
    #expect(try shop.stock() == 98)

    // The identical captureOrder: the same call, replayed by Stripe, recorded once.
    let captured = shop.handler.call("captureOrder", capture)
    #expect(captured["result"]?["status"] == .string("succeeded"), "\(captured.compact)")
    #expect(captured["result"]?["captureId"] == .string("cap-lost"))
    #expect(captured["result"]?["amountCaptured"] == .string(shop.amount), "\(captured.compact)")
    #expect(captured["result"]?["amountReleased"] == .string("0.00"), "\(captured.compact)")
    #expect(captured["result"]?["orderStatus"] == .string("paid"))
    let sent = shop.requests("/v1/payment_intents/\(shop.paymentId)/capture")
    #expect(sent.count == 2)
    #expect(sent.map(\.idempotencyKey) == [sent[0].idempotencyKey, sent[0].idempotencyKey])
    #expect(sent.map(\.replayed) == [false, true])
    #expect(shop.server.paymentIntent(shop.paymentId)?["amount_received"] == String(shop.minor(shop.amount)))
    #expect(try shop.status() == .paid)
    #expect(try shop.pending().isEmpty)
    #expect(shop.handler.call("captureOrder", capture).compact == captured.compact)
    #expect(shop.requests("/v1/payment_intents/\(shop.paymentId)/capture").count == 2)
    // Now the cancel is refused because the order is captured.
    let late = shop.handler.call("cancelOrder", cancel)
    #expect(late["result"]?["failureCode"] == .string("not_authorized"))
    #expect(
      late["result"]?["message"]
        == .string("The order was already captured (status paid); it cannot be canceled. Refund it with refundOrder."))
    #expect(shop.requests("/v1/payment_intents/\(shop.paymentId)/cancel").isEmpty)
    #expect(try OperationRunner.sweep(context: shop.context) == OperationRunner.Sweep(resolved: 0, pending: 0))
    #expect(try !shop.fixture.secretLeaked(shop.context))
  }

  @Test(
    "a cancel whose answer is lost stays pending: a capture is not_authorized naming its cancelId; the sweep completes the cancel once and restocks",
    arguments: StoreBackend.available)
  func cancelLost(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend, capture: .manual)
    defer { shop.server.shutdown() }
    shop.server.inject(.resetAfterExecuting, on: .cancel)
    let cancel = #"{"orderId":"\#(shop.orderId)","cancelId":"cx-lost","reason":"buyer asked"}"#
    Self.expectLost(shop.handler.call("cancelOrder", cancel))
    #expect(shop.server.paymentIntent(shop.paymentId)?["status"] == "canceled")
    #expect(try shop.status() == .authorized)
    #expect(try shop.stock() == 98)
    #expect(try shop.pending() == [["cancel", "cx-lost", shop.orderId]])

    let capture = shop.handler.call("captureOrder", #"{"orderId":"\#(shop.orderId)","captureId":"cap-1"}"#)
    #expect(
      capture["result"]?.compact
        == #"{"status":"failed","failureCode":"not_authorized","message":"A cancel of this order (cancelId cx-lost) is waiting for its gateway's answer; send it again to complete it."}"#,
      "\(capture.compact)")
    #expect(shop.requests("/v1/payment_intents/\(shop.paymentId)/capture").isEmpty)

    #expect(try OperationRunner.sweep(context: shop.context) == OperationRunner.Sweep(resolved: 1, pending: 0))
    #expect(try shop.status() == .canceled)
    #expect(try shop.stock() == 100)
    let replay = shop.handler.call("cancelOrder", cancel)
    #expect(replay["result"]?["status"] == .string("succeeded"), "\(replay.compact)")
    #expect(replay["result"]?["restocked"]?.compact == #"[{"sku":"mug","quantity":2}]"#)
    #expect(try shop.stock() == 100)
    let sent = shop.requests("/v1/payment_intents/\(shop.paymentId)/cancel")
    #expect(sent.map(\.replayed) == [false, true])
    #expect(try OperationRunner.sweep(context: shop.context) == OperationRunner.Sweep(resolved: 0, pending: 0))
  }

  @Test(
    "a refundId reused with other params while its first request is pending is -32004; the identical request still completes it once",
    arguments: StoreBackend.available)
  func keyReusedWhilePending(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    shop.server.inject(.resetAfterExecuting, on: .refund)
    let refund = #"{"orderId":"\#(shop.orderId)","refundId":"rf-1","amount":"4.00"}"#
    Self.expectLost(shop.handler.call("refundOrder", refund))
    #expect(try shop.pending() == [["refund", "rf-1", shop.orderId]])

    for other in [
      #"{"orderId":"\#(shop.orderId)","refundId":"rf-1","amount":"5.00"}"#,
      #"{"orderId":"\#(shop.orderId)","refundId":"rf-1","amount":"4.00","reason":"damaged"}"#,
      #"{"orderId":"\#(shop.orderId)","refundId":"rf-1","lines":[{"sku":"mug","quantity":1,"restock":"none"}]}"#,
    ] {
      let reused = shop.handler.call("refundOrder", other)
      #expect(reused["error"]?["code"] == .number("-32004"), "\(reused.compact)")
      #expect(
        reused["error"]?["message"]
          == .string("Idempotency key conflict: this refundId was already used with different params; use a new refundId"),
        "\(reused.compact)")
    }
    // Nothing sent, the entry still pending with its first call.
    #expect(shop.requests("/v1/refunds").count == 1)
    #expect(try shop.pending() == [["refund", "rf-1", shop.orderId]])
    #expect(try shop.status() == .paid)

    let done = shop.handler.call("refundOrder", refund)
    #expect(done["result"]?["status"] == .string("succeeded"), "\(done.compact)")
    #expect(done["result"]?["refund"]?["amount"] == .string("4.00"))
    #expect(shop.server.refunds(paymentIntent: shop.paymentId).map(\.amount) == [400])
    #expect(shop.server.refundCount == 1)
    #expect(try shop.status() == .partiallyRefunded)
    // Settled, the key is still bound to its params.
    let reused = shop.handler.call("refundOrder", #"{"orderId":"\#(shop.orderId)","refundId":"rf-1","amount":"5.00"}"#)
    #expect(reused["error"]?["code"] == .number("-32004"), "\(reused.compact)")
    #expect(shop.handler.call("refundOrder", refund).compact == done.compact)
    #expect(shop.server.refundCount == 1)
  }
}
