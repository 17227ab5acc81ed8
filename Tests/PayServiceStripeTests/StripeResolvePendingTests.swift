import Foundation
import PayServiceCore
import PayServiceStripe
import PayServiceTestSupport
import Testing

/// The janitor through Stripe: work whose answer was lost is looked up at Stripe (its search, the
/// PaymentIntent, its refunds) once it is older than the threshold, and settled as Stripe shows it,
/// with nothing sent to Stripe again; paged by a cursor, each entry looked at once.
@Suite("Stripe: resolvePending", .serialized)
struct StripeResolvePendingTests {
  static let cart = StripeCheckoutTests.cart
  static let (contact, card) = (BackOfficeFixture.contacts[0], BackOfficeFixture.cards[0])

  /// One store, charging through the Stripe test server, asked at a given time.
  struct Shop {
    let server: StripeTestServer
    let fixture: StripeFixture
    let store: any Store
    let config: Config
    let calls: GatewayCalls

    init(backend: StoreBackend) throws {
      server = try StripeTestServer()
      // The test token stands for a card each order pays with.
      server.setSingleUseTokens(false)
      fixture = try StripeFixture(server: server, requestTimeoutSeconds: 1)
      let context = try fixture.context(backend: backend)
      (store, config, calls) = (try context.store, context.config, try #require(context.gatewayCalls))
    }

    /// A back-office handler whose clock reads `seconds` after the golden time.
    func at(_ seconds: Int64) -> RequestHandler {
      fixture.handler(
        ServiceContext(config: config, store: store, clock: ServiceClock(pinned: TestConfig.now + seconds), gateway: calls),
        backOffice: true)
    }

    /// Places an order at `seconds`; returns processOrder's answer.
    func order(at seconds: Int64) throws -> JSONValue {
      let handler = at(seconds)
      let authorized = handler.call(
        "authorizePayment",
        #"{"items":\#(cart),"shippingMethod":"free","payment":{"token":{"paymentData":"tok_visa","paymentMethod":\#(card),"transactionIdentifier":"T\#(seconds)"},"shippingContact":\#(contact),"billingContact":\#(contact)}}"#
      )
      let token = try #require(authorized["result"]?["chargeToken"]?.stringValue, "\(authorized.compact)")
      let amount = try #require(authorized["result"]?["amount"]?.stringValue)
      return handler.call(
        "processOrder",
        #"{"chargeToken":"\#(token)","items":\#(cart),"shippingMethod":"free","shippingContact":\#(contact),"amount":"\#(amount)","currencyCode":"USD"}"#
      )["result"] ?? .null
    }

    var posts: Int { server.requests.filter { $0.method == "POST" }.count }
  }

  @Test(
    "a charge Stripe made and one it never made, a refund it made and one it never made: settled, failed, settled, released; paged, and nothing sent again",
    arguments: StoreBackend.available)
  func resolves(backend: StoreBackend) throws {
    let shop = try Shop(backend: backend)
    defer { shop.server.shutdown() }
    // A paid order to refund, at 0 s.
    let paid = try shop.order(at: 0)
    let paidId = try #require(paid["orderId"]?.stringValue, "\(paid.compact)")
    // At 1 s, a charge Stripe makes and whose answer is lost; at 2 s, one Stripe fails before making it.
    shop.server.inject(.resetAfterExecuting, on: .createPaymentIntent)
    let made = try shop.order(at: 1)
    #expect(made["failureCode"] == .string("gateway_unavailable"), "\(made.compact)")
    shop.server.inject(.serverErrorBeforeExecuting, on: .createPaymentIntent)
    let never = try shop.order(at: 2)
    #expect(never["failureCode"] == .string("gateway_unavailable"), "\(never.compact)")
    // At 3 s, a refund Stripe makes, its answer lost; at 4 s, one Stripe fails before making it.
    shop.server.inject(.resetAfterExecuting, on: .refund)
    let refund = { (id: String) in
      #"{"orderId":"\#(paidId)","refundId":"\#(id)","lines":[{"sku":"mug","quantity":1,"restock":"return"}]}"#
    }
    #expect(shop.at(3).call("refundOrder", refund("rf-made"))["result"]?["failureCode"] == .string("gateway_unavailable"))
    shop.server.inject(.serverErrorBeforeExecuting, on: .refund)
    #expect(shop.at(4).call("refundOrder", refund("rf-never"))["result"]?["failureCode"] == .string("gateway_unavailable"))
    let pending = try shop.store.pendingOperations()
    #expect(pending.map(\.kind) == ["order", "order", "refund", "refund"])
    let (madeKey, neverKey) = (pending[0].key, pending[1].key)
    let (madeOrder, neverOrder) = (try #require(pending[0].subject), try #require(pending[1].subject))
    #expect(try shop.store.stock()["mug"] == 94)
    let posts = shop.posts

    // Half an hour later, nothing is an hour old.
    let early = shop.at(1800).call("resolvePending", "{}")
    #expect(
      early["result"]?.compact
        == #"{"createdBy":"2026-11-21T11:30:00Z","items":[],"settled":0,"released":0,"pending":0,"toCheck":0,"cursor":null}"#)

    // Two hours later, two entries a call.
    let first = shop.at(7200).call("resolvePending", #"{"limit":2}"#)
    let cursor = try #require(first["result"]?["cursor"]?.stringValue, "\(first.compact)")
    #expect(
      first["result"]?["items"]?.compact
        == #"[{"kind":"order","key":"\#(madeKey)","orderId":"\#(madeOrder)","createdAt":"2026-11-21T12:00:01Z","outcome":"settled","answer":"succeeded"},{"kind":"order","key":"\#(neverKey)","orderId":"\#(neverOrder)","createdAt":"2026-11-21T12:00:02Z","outcome":"settled","answer":"gateway_failed"}]"#
    )
    #expect(first["result"]?["createdBy"] == .string("2026-11-21T13:00:00Z"))
    // The threshold is the cursor's, whatever the clock reads now.
    let second = shop.at(7300).call("resolvePending", #"{"limit":2,"cursor":"\#(cursor)"}"#)
    #expect(
      second["result"]?.compact
        == #"{"createdBy":"2026-11-21T13:00:00Z","items":[{"kind":"refund","key":"rf-made","orderId":"\#(paidId)","createdAt":"2026-11-21T12:00:03Z","outcome":"settled","answer":"succeeded"},{"kind":"refund","key":"rf-never","orderId":"\#(paidId)","createdAt":"2026-11-21T12:00:04Z","outcome":"released","message":"Stripe holds no refund rf-never of \#(try #require(paid["order"]?["gatewayPaymentId"]?.stringValue)): it was never made"}],"settled":1,"released":1,"pending":0,"toCheck":0,"cursor":null}"#
    )
    // Looked up, never sent again.
    #expect(shop.posts == posts)
    #expect(try shop.store.pendingOperations().isEmpty)
    // The orders as Stripe shows them: the one made paid, the one never made failed with its
    // stock back, one mug refunded and restocked.
    #expect(try shop.store.order(id: madeOrder)?.status == .paid)
    #expect(try shop.store.order(id: neverOrder) == nil)
    #expect(try shop.store.order(id: paidId)?.status == .partiallyRefunded)
    #expect(try shop.store.stock()["mug"] == 97)
    // The client's own requests now get the recorded answers; the refund never made may be asked again.
    #expect(shop.at(7400).call("refundOrder", refund("rf-made"))["result"]?["status"] == .string("succeeded"))
    let again = shop.at(7400).call("refundOrder", refund("rf-never"))
    #expect(again["result"]?["status"] == .string("succeeded"), "\(again.compact)")
    #expect(shop.server.refunds(paymentIntent: try #require(paid["order"]?["gatewayPaymentId"]?.stringValue)).count == 2)
    // Nothing is left: a later run looks at nothing.
    #expect(shop.at(7500).call("resolvePending", #"{"olderThanMinutes":5}"#)["result"]?["items"] == .array([]))
  }

  @Test("olderThanMinutes, limit and cursor out of bounds are -32602 naming the place and what is valid")
  func bounds() throws {
    let shop = try Shop(backend: .sqlite)
    defer { shop.server.shutdown() }
    // One past each end, another method's cursor, a cursor of too few fields, one whose time is not a time.
    let fields = { (text: String) in "rp1_" + text.utf8.map { String(format: "%02x", $0) }.joined() }
    for (params, path, message) in [
      (#"{"olderThanMinutes":43201}"#, "olderThanMinutes", "must be an integer from 5 to 43200, got 43201"),
      (#"{"olderThanMinutes":-9223372036854775808}"#, "olderThanMinutes", "must be an integer from 5 to 43200, got -9223372036854775808"),
      (#"{"limit":0}"#, "limit", "must be an integer from 1 to 500, got 0"),
      (#"{"cursor":"bc1_00"}"#, "cursor", "must be a cursor resolvePending returned"),
      (#"{"cursor":"\#(fields("2026-11-21T12:00:00Z"))"}"#, "cursor", "must be a cursor resolvePending returned"),
      (#"{"cursor":"\#(fields("yesterday\u{1F}a\u{1F}b\u{1F}c"))"}"#, "cursor", "must be a cursor resolvePending returned"),
    ] {
      let answer = shop.at(0).call("resolvePending", params)
      #expect(
        answer["error"]?["data"]?["errors"]?.compact == #"[{"path":"\#(path)","message":"\#(message)"}]"#,
        "\(params): \(answer.compact)")
    }
    let answer = shop.at(0).call("resolvePending", #"{"olderThanMinutes":4,"limit":501,"cursor":"rp1_zz"}"#)
    #expect(
      answer["error"]?.compact
        == #"{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"olderThanMinutes","message":"must be an integer from 5 to 43200, got 4"},{"path":"limit","message":"must be an integer from 1 to 500, got 501"},{"path":"cursor","message":"must be a cursor resolvePending returned"}]}}"#
    )
  }
}
