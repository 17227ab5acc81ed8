import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

extension StoreContractTests {
  @Test(
    "Wallet orders: a package's time, shipments and device registrations, and the orders changed since a time",
    arguments: StoreBackend.available)
  func walletOrderBooks(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    try store.write { transaction in
      try Self.insertOrder(transaction, "ord_1")
      try Self.insertOrder(transaction, "ord_2", createdAt: "2026-11-21T12:00:05Z")
    }
    // An order's Wallet row: its time is its creation until a change sets it.
    let first = try #require(try store.write { try $0.walletOrder("ord_1") })
    #expect(first == WalletOrderRow(orderId: "ord_1", createdAt: "2026-11-21T12:00:00Z", authenticationToken: nil, updatedAt: nil))
    #expect(first.lastModified == RFC3339.parse("2026-11-21T12:00:00Z")!)
    #expect(try store.write { try $0.walletOrder("ord_9") } == nil)
    try store.write { try $0.setWalletUpdatedAt("ord_1", to: 1_800_000_000) }
    #expect(try store.write { try $0.walletOrder("ord_1") }?.updatedAt == 1_800_000_000)

    // Shipments: recorded in order, moved forward in place.
    let shipment = ShipmentRow(
      orderId: "ord_1", shipmentId: "box-1", position: 1, carrier: "UPS", trackingNumber: "1Z999", trackingURL: nil,
      status: "shipped", createdAt: "2026-11-22T09:00:00Z", updatedAt: "2026-11-22T09:00:00Z")
    var second = shipment
    (second.shipmentId, second.position, second.trackingURL) = ("box-2", 2, "https://track.example.com/2")
    try store.write { transaction in
      try transaction.save(second, isNew: true)
      try transaction.save(shipment, isNew: true)
    }
    var delivered = shipment
    (delivered.status, delivered.updatedAt) = ("delivered", "2026-11-24T15:00:00Z")
    try store.write { try $0.save(delivered, isNew: false) }
    #expect(try store.write { try $0.shipments(orderId: "ord_1") } == [delivered, second])
    #expect(try store.write { try $0.shipments(orderId: "ord_2") } == [])

    // Registrations: one per device, order type and order; a second is not recorded.
    func registration(_ device: String, _ order: String, token: String = "aa11") -> WalletRegistrationRow {
      WalletRegistrationRow(
        deviceLibraryIdentifier: device, orderTypeIdentifier: "order.com.example.coffee", orderId: order,
        pushToken: token, registeredAt: "2026-11-21T12:01:00Z")
    }
    let inserted = try store.write { transaction in
      try [
        registration("phone", "ord_1"), registration("watch", "ord_1", token: "bb22"),
        registration("phone", "ord_1", token: "cc33"), registration("phone", "ord_2"),
      ].map { try transaction.insert($0) }
    }
    #expect(inserted == [true, true, false, true])
    #expect(
      try store.write { try $0.walletRegistrations(orderId: "ord_1") }
        == [registration("phone", "ord_1"), registration("watch", "ord_1", token: "bb22")])

    // What changed for a device: its orders with a package time at or after `since`, oldest first.
    try store.write { try $0.setWalletUpdatedAt("ord_2", to: 1_700_000_000) }
    func changed(_ device: String, since: Int64?, limit: Int = 10) throws -> [String] {
      try store.write {
        try $0.changedWalletOrders(
          deviceLibraryIdentifier: device, orderTypeIdentifier: "order.com.example.coffee", since: since, limit: limit)
      }.map { "\($0.orderId)@\($0.updatedAt)" }
    }
    #expect(try changed("phone", since: nil) == ["ord_2@1700000000", "ord_1@1800000000"])
    #expect(try changed("phone", since: nil, limit: 1) == ["ord_2@1700000000"])
    #expect(try changed("phone", since: 1_800_000_000) == ["ord_1@1800000000"])
    #expect(try changed("phone", since: 1_800_000_001) == [])
    #expect(try changed("watch", since: nil) == ["ord_1@1800000000"])
    #expect(try changed("tablet", since: nil) == [])

    // Unregistering removes one device's registration, once.
    let deleted = try store.write { transaction in
      try (0..<2).map { _ in
        try transaction.deleteWalletRegistration(
          deviceLibraryIdentifier: "phone", orderTypeIdentifier: "order.com.example.coffee", orderId: "ord_1")
      }
    }
    #expect(deleted == [true, false])
    #expect(try changed("phone", since: nil) == ["ord_2@1700000000"])
  }
}
