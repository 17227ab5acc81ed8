import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// A later payment stopped on the merchant's side: skipped, not charged, no attempt used.
@Suite("Agreement payments: merchant-side stops")
struct AgreementPaymentTests {
  @Test(
    "a renewal out of stock is skipped (nothing charged or taken, no attempt used) and charged by the run after a restock",
    arguments: StoreBackend.available)
  func outOfStock(backend: StoreBackend) throws {
    let yaml = ConfigLoaderTests.minimal.replacingOccurrences(
      of: "{sku: tea, name: Tea, description: Green tea, price: 1200, quantityOnHand: 5}",
      with: "{sku: tea, name: Tea, description: Green tea, price: 1200, quantityOnHand: 1, recurring: {interval: month}}"
    ) + "\napplePay:\n  managementURL: https://tiny.example.com/account\n"
    let config = try ConfigLoader.parse(yaml: yaml)
    // On PostgreSQL the renewal takes its stock just before its commit: short there, it runs again
    // and is answered out of stock.
    let context = try TestConfig.context(config: config, backend: backend)
    let handler = TestConfig.handler(context, backOffice: true)
    let authorized = handler.call(
      "authorizePayment",
      #"{"items":[{"sku":"tea"}],"shippingMethod":"post","payment":{"token":{"paymentData":"tok_visa","paymentMethod":{"displayName":"V","network":"visa","type":"credit"},"transactionIdentifier":"T1"},"shippingContact":{"countryCode":"JP"}}}"#
    )["result"]!
    let token = try #require(authorized["chargeToken"]?.stringValue, "\(authorized.compact)")
    let placed = handler.call(
      "processOrder",
      #"{"chargeToken":"\#(token)","items":[{"sku":"tea"}],"shippingMethod":"post","shippingContact":{"countryCode":"JP"},"amount":"\#(authorized["amount"]!.stringValue!)","currencyCode":"JPY"}"#
    )["result"]!
    let agreementId = try #require(placed["order"]?["agreement"]?["agreementId"]?.stringValue, "\(placed.compact)")
    #expect(try context.store.stock()["tea"] == 0)

    let monthLater = TestConfig.now + 31 * 86_400
    let later = TestConfig.handler(
      ServiceContext(config: config, store: try context.store, clock: ServiceClock(pinned: monthLater)), backOffice: true)
    let run = later.call("runBilling")["result"]!
    #expect(
      run["payments"]?[0]?.compact
        == #"{"agreementId":"\#(agreementId)","period":1,"attempt":1,"status":"skipped","failureCode":"out_of_stock","message":"tea is out of stock: the next run charges this payment once it is back.","agreementStatus":"active","nextPaymentAt":"2026-12-21T12:00:00Z"}"#)
    #expect(run["skipped"] == .number("1"))
    let stored = try #require(try context.store.agreement(id: agreementId))
    #expect(stored.row.attempt == 0 && stored.row.status == .active)
    #expect(stored.events.map(\.kind) == [.created])
    #expect(try context.store.stock()["tea"] == 0)

    let restocked = later.call("adjustStock", #"{"sku":"tea","adjustmentId":"restock-1","delta":1,"reason":"received"}"#)
    #expect(restocked["result"]?["status"] == .string("succeeded"), "\(restocked.compact)")
    let again = later.call("runBilling")["result"]!
    #expect(again["payments"]?[0]?["status"] == .string("succeeded"), "\(again.compact)")
    #expect(try context.store.stock()["tea"] == 0)
  }
}
