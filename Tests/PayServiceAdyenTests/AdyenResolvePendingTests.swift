import Foundation
import PayServiceAdyen
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The janitor with Adyen, whose Checkout API reads nothing back: work older than the threshold is
/// listed for the merchant to check in the Customer Area, by the references Adyen shows, and nothing
/// is sent to Adyen; the notifications settle it, and the next run finds nothing.
@Suite("Adyen: resolvePending", .serialized)
struct AdyenResolvePendingTests {
  @Test("a payment Adyen received and a capture it accepted, never reported: to check, nothing sent; settled by their notifications", arguments: StoreBackend.available)
  func toCheck(backend: StoreBackend) throws {
    let shop = try AdyenNotificationTests.Shop(capture: .manual, backend: backend)
    defer { shop.fixture.server.shutdown() }
    let (_, placed) = try shop.placed()
    let orderId = try #require(placed["orderId"]?.stringValue, "\(placed.compact)")
    let paymentId = try #require(placed["order"]?["gatewayPaymentId"]?.stringValue)
    let capture = #"{"orderId":"\#(orderId)","captureId":"cap-1"}"#
    #expect(shop.handler.call("captureOrder", capture)["result"]?["failureCode"] == .string("outcome_pending"))
    let (_, received) = try shop.placed("4000000000000077")
    #expect(received["failureCode"] == .string("payment_processing"), "\(received.compact)")
    let pending = try shop.context.store.pendingOperations()
    #expect(pending.map(\.kind) == ["capture", "order"])
    let (receivedKey, receivedOrder) = (pending[1].key, try #require(pending[1].subject))
    let requests = shop.fixture.server.requests.count

    let config = shop.context.config
    let later = ServiceClock(pinned: TestConfig.now + 7200)
    let janitor = RequestHandler(
      context: ServiceContext(
        config: config, store: try shop.context.store, clock: later, gateway: shop.fixture.gateway(config, clock: later)),
      methods: .payservice(backOffice: true), log: RequestLog(level: .warnings))
    let answer = janitor.call("resolvePending", "{}")
    #expect(
      answer.compact
        == #"{"jsonrpc":"2.0","id":1,"result":{"createdBy":"2026-11-21T13:00:00Z","items":[{"kind":"capture","key":"cap-1","orderId":"\#(orderId)","createdAt":"2026-11-21T12:00:00Z","outcome":"to_check","message":"Adyen offers no lookup of the capture cap-1 of payment \#(paymentId): check it in Adyen's Customer Area; Adyen's report of it settles it here when it arrives"},{"kind":"order","key":"\#(receivedKey)","orderId":"\#(receivedOrder)","createdAt":"2026-11-21T12:00:00Z","outcome":"to_check","message":"Adyen offers no lookup of the payment of order \#(receivedOrder) (reference \#(receivedOrder)): check it in Adyen's Customer Area; Adyen's report of it settles it here when it arrives"}],"settled":0,"released":0,"pending":0,"toCheck":2,"cursor":null}}"#
    )
    #expect(shop.fixture.server.requests.count == requests)
    #expect(try shop.context.store.pendingOperations().count == 2)

    // Adyen's notifications settle both; nothing is left to check.
    #expect(shop.fixture.server.settle(paymentPspReference: try #require(shop.fixture.server.paymentReferences.last), authorised: true))
    let (_, delivered) = shop.deliver()
    #expect(
      AdyenNotificationTests.effects(delivered)
        == ["AUTHORISATION none", "CAPTURE capture_succeeded", "AUTHORISATION order_authorized"], "\(delivered.compact)")
    #expect(janitor.call("resolvePending", "{}")["result"]?["items"] == .array([]))
  }
}
