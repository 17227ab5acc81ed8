import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Wallet order tracking: authorizePayment's orderDetails, and the token kept with the charge token.
@Suite("Wallet order details")
struct WalletOrderTests {
  static let config = try! ConfigLoader.parse(
    yaml: try! String(contentsOfFile: TestPaths.path("examples/web/shop.yaml"), encoding: .utf8)
      + "\nwalletOrders:\n  orderTypeIdentifier: order.com.example.coffee\n  webServiceURL: https://coffee.example.com/wallet\n",
    file: TestPaths.path("examples/web/shop.yaml"))

  static let contact = #"{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}"#

  static func authorize(_ handler: RequestHandler, _ id: Int) -> JSONValue {
    handler.call(
      "authorizePayment",
      #"{"items":[{"sku":"grinder"}],"shippingMethod":"standard","payment":{"token":{"paymentData":"tok_visa","paymentMethod":{"network":"visa","type":"credit","displayName":"Visa 1"},"transactionIdentifier":"T\#(id)"},"shippingContact":\#(contact),"billingContact":\#(contact)}}"#,
      id: id)
  }

  @Test("with the real clock each authorization gets 32 random bytes, kept with its charge token, naming its order",
    arguments: StoreBackend.available)
  func randomTokens(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    let handler = TestConfig.handler(ServiceContext(config: Self.config, store: store, clock: ServiceClock()))
    var kept: [String: String] = [:]
    for id in 1...3 {
      let result = try #require(Self.authorize(handler, id)["result"])
      let details = try #require(result["orderDetails"])
      let chargeToken = try #require(result["chargeToken"]?.stringValue)
      let token = try #require(details["authenticationToken"]?.stringValue)
      #expect(token.count == 64 && token.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
      #expect(details["orderIdentifier"]?.stringValue == store.identifiers.orderId(token: chargeToken))
      #expect(details["orderTypeIdentifier"]?.stringValue == "order.com.example.coffee")
      #expect(details["webServiceURL"]?.stringValue == "https://coffee.example.com/wallet")
      kept[chargeToken] = token
    }
    #expect(Set(kept.values).count == 3)
    #expect(try store.walletOrderTokens() == kept)
  }

  @Test("with a pinned clock the token is derived, so transcripts repeat; without walletOrders there is none")
  func pinnedAndAbsent() throws {
    let first = Self.authorize(TestConfig.handler(try TestConfig.context(config: Self.config)), 1)
    let second = Self.authorize(TestConfig.handler(try TestConfig.context(config: Self.config)), 1)
    #expect(first["result"]?["orderDetails"] != nil)
    #expect(first == second)
    let plain = try ConfigLoader.load(path: TestPaths.path("examples/web/shop.yaml"))
    let context = try TestConfig.context(config: plain)
    let result = Self.authorize(TestConfig.handler(context), 1)["result"]
    #expect(result?["status"]?.stringValue == "success")
    #expect(result?["orderDetails"] == nil)
    #expect(try context.store.walletOrderTokens().isEmpty)
  }
}
