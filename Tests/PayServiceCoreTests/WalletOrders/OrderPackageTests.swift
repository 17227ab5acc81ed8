import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

@Suite("Wallet order packages")
struct OrderPackageTests {
  static func settings() throws -> (WalletOrders, WalletOrderPackageSettings) {
    let package = WalletOrderPackageSettings(
      merchantIdentifier: "merchant.com.example.coffee", displayName: "Example Coffee",
      merchantURL: "https://coffee.example.com", orderManagementURL: "https://coffee.example.com/orders/{orderId}",
      signer: try WalletOrderFixtures.signer())
    return (
      WalletOrders(
        orderTypeIdentifier: WalletOrderFixtures.orderTypeIdentifier,
        webServiceURL: "https://coffee.example.com/wallet-orders", package: package),
      package
    )
  }

  static func source(shipments: [ShipmentRow] = [], erased: Bool = false) -> OrderPackage.Source {
    var order = OrderDocument()
    order.orderId = "ord_1"
    order.createdAt = "2026-11-21T12:00:00Z"
    order.items = [
      OrderDocument.Line(sku: "grinder", name: "Burr Grinder", quantity: 1, unitPrice: "89.90", amount: "89.90"),
      OrderDocument.Line(sku: "beans", name: "House Beans", quantity: 2, unitPrice: "12.50", amount: "25.00"),
    ]
    order.summaryItems = [
      SummaryItem(label: "Subtotal", amount: "114.90", type: .final),
      SummaryItem(label: "Example Coffee", amount: "114.90", type: .final),
    ]
    var contact = Contact()
    (contact.givenName, contact.familyName, contact.emailAddress) = ("Ada", "Lovelace", "ada@example.com")
    (contact.addressLines, contact.locality, contact.administrativeArea) = (["1 Infinite Loop"], "Cupertino", "CA")
    (contact.postalCode, contact.countryCode) = ("95014", "US")
    if erased {
      contact = Contact()
      (contact.administrativeArea, contact.countryCode, contact.postalCode) = ("CA", "US", "950")
      order.personalDataErasedAt = "2026-11-23T08:00:00Z"
    }
    order.shippingContact = contact
    order.amount = "114.90"
    order.currencyCode = "USD"
    order.status = .partiallyRefunded
    var refund = RefundRecord()
    (refund.refundId, refund.createdAt, refund.amount, refund.tax) = ("re-1", "2026-11-22T10:00:00Z", "25.00", "0.00")
    order.refunds = [refund]
    return OrderPackage.Source(
      order: order,
      wallet: WalletOrderRow(
        orderId: "ord_1", createdAt: "2026-11-21T12:00:00Z", authenticationToken: "0123456789abcdef0123456789abcdef",
        updatedAt: 1_795_521_600),
      shipments: shipments)
  }

  static let shipment = ShipmentRow(
    orderId: "ord_1", shipmentId: "box-1", position: 1, carrier: "UPS", trackingNumber: "1Z999AA10123456784",
    trackingURL: "https://track.example.com/1Z999AA10123456784", status: "delivered", createdAt: "2026-11-22T09:00:00Z",
    updatedAt: "2026-11-24T15:00:00Z")

  @Test("a package Wallet reads: its entries, manifest, signature by the Order Type ID certificate and order.json, the same bytes each time")
  func package() throws {
    let (orders, package) = try Self.settings()
    let bytes = try OrderPackage.build(Self.source(shipments: [Self.shipment]), orders: orders, package: package)
    #expect(try OrderPackage.build(Self.source(shipments: [Self.shipment]), orders: orders, package: package) == bytes)
    let check = try WalletOrderFixtures.check(bytes)
    #expect(check.status == 0, "\(check.output)")
    #expect(
      check.output
        == "OK order.order: 3 entries, manifest covers 1 file(s), signature verifies, signed Nov 24 12:00:00 2026 GMT, order order.com.example.coffee/ord_1 status completed\n"
    )
    // Amounts are JSON numbers written exactly as the order's decimals (89.90, not 89.9).
    #expect(
      try WalletOrderFixtures.entry("order.json", of: bytes)
        == #"{"schemaVersion":1,"orderType":"ecommerce","orderTypeIdentifier":"order.com.example.coffee","orderIdentifier":"ord_1","orderNumber":"ord_1","webServiceURL":"https://coffee.example.com/wallet-orders","authenticationToken":"0123456789abcdef0123456789abcdef","merchant":{"merchantIdentifier":"merchant.com.example.coffee","displayName":"Example Coffee","url":"https://coffee.example.com"},"orderManagementURL":"https://coffee.example.com/orders/ord_1","createdAt":"2026-11-21T12:00:00Z","updatedAt":"2026-11-24T12:00:00Z","status":"completed","customer":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com"},"lineItems":[{"title":"Burr Grinder","quantity":1,"price":{"amount":89.90,"currency":"USD"},"sku":"grinder"},{"title":"House Beans","quantity":2,"price":{"amount":12.50,"currency":"USD"},"sku":"beans"}],"fulfillments":[{"fulfillmentType":"shipping","fulfillmentIdentifier":"box-1","status":"delivered","carrier":"UPS","trackingNumber":"1Z999AA10123456784","trackingURL":"https://track.example.com/1Z999AA10123456784","shippedAt":"2026-11-22T09:00:00Z","deliveredAt":"2026-11-24T15:00:00Z","recipient":{"givenName":"Ada","familyName":"Lovelace","address":{"addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}}}],"payment":{"total":{"amount":114.90,"currency":"USD"},"status":"paid","summaryItems":[{"label":"Subtotal","value":{"amount":114.90,"currency":"USD"}},{"label":"Example Coffee","value":{"amount":114.90,"currency":"USD"}}],"transactions":[{"transactionType":"refund","amount":{"amount":25.00,"currency":"USD"},"createdAt":"2026-11-22T10:00:00Z","status":"completed","paymentMethod":{"displayName":"Apple Pay"}}]}}"#)
  }

  @Test("after an erasure the package holds no contact data: no customer, no recipient")
  func erased() throws {
    let (orders, package) = try Self.settings()
    let bytes = try OrderPackage.build(Self.source(shipments: [Self.shipment], erased: true), orders: orders, package: package)
    #expect(try WalletOrderFixtures.check(bytes).status == 0)
    let json = try WalletOrderFixtures.entry("order.json", of: bytes)
    for personal in ["Ada", "Lovelace", "ada@example.com", "Infinite", "Cupertino", "customer", "recipient"] {
      #expect(!json.contains(personal), "\(personal) in \(json)")
    }
  }

  @Test("Wallet's status: open, completed once every live shipment is delivered, cancelled when canceled or refunded before delivery")
  func status() {
    var order = OrderDocument()
    var delivered = Self.shipment
    var cancelled = Self.shipment
    cancelled.status = "cancelled"
    var onTheWay = Self.shipment
    onTheWay.status = "onTheWay"
    order.status = .paid
    #expect(OrderPackage.status(order, []) == "open")
    #expect(OrderPackage.status(order, [delivered, onTheWay]) == "open")
    #expect(OrderPackage.status(order, [delivered, cancelled]) == "completed")
    #expect(OrderPackage.status(order, [cancelled]) == "open")
    order.status = .refunded
    #expect(OrderPackage.status(order, [onTheWay]) == "cancelled")
    #expect(OrderPackage.status(order, [delivered]) == "completed")
    order.status = .canceled
    delivered.status = "delivered"
    #expect(OrderPackage.status(order, [delivered]) == "cancelled")
  }

  @Test("a shipment's status moves forward only; issue and cancelled before delivered; after issue, from shipped on")
  func shipmentStatus() {
    let all = ShipmentStatus.allCases
    let allowed = all.map { from in all.filter { from.mayMove(to: $0) }.map(\.rawValue) }
    #expect(
      allowed == [
        ["open", "processing", "shipped", "onTheWay", "outForDelivery", "delivered", "issue", "cancelled"],
        ["processing", "shipped", "onTheWay", "outForDelivery", "delivered", "issue", "cancelled"],
        ["shipped", "onTheWay", "outForDelivery", "delivered", "issue", "cancelled"],
        ["onTheWay", "outForDelivery", "delivered", "issue", "cancelled"],
        ["outForDelivery", "delivered", "issue", "cancelled"],
        ["delivered"],
        ["shipped", "onTheWay", "outForDelivery", "delivered", "issue", "cancelled"],
        ["cancelled"],
      ])
  }
}
