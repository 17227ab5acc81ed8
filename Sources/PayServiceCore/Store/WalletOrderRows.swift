/// A shipment of an order (`shipOrder`): what Wallet shows as one of the order's shipping
/// fulfillments. It holds no personal data: the address it goes to is the order's.
public struct ShipmentRow: Sendable, Equatable {
  public var orderId: String
  /// The merchant's id of the shipment, unique within the order.
  public var shipmentId: String
  /// 1 for the order's first shipment, and so on.
  public var position: Int
  public var carrier: String
  public var trackingNumber: String
  public var trackingURL: String?
  /// Apple's fulfillment status (`ShipmentStatus`), which only moves forward.
  public var status: String
  /// RFC 3339: when it was recorded, and when its status last changed.
  public var createdAt: String
  public var updatedAt: String
}

/// A device Wallet registered for an order's updates (`registerWalletDevice`): Apple's device
/// library identifier and push token, nothing about the person.
public struct WalletRegistrationRow: Sendable, Equatable {
  public var deviceLibraryIdentifier: String
  public var orderTypeIdentifier: String
  public var orderId: String
  public var pushToken: String
  public var registeredAt: String
}

/// What Wallet's web service needs of an order besides the order itself: the token Wallet
/// authenticates with and when its package last changed.
public struct WalletOrderRow: Sendable, Equatable {
  public var orderId: String
  /// RFC 3339.
  public var createdAt: String
  /// The Wallet order's authentication token; nil: the order was placed without Wallet orders.
  public var authenticationToken: String?
  /// Unix seconds of the package's last change; nil: unchanged since the order was placed.
  public var updatedAt: Int64?

  /// When the package last changed: its last change, or the order's placing.
  public var lastModified: Int64 { updatedAt ?? RFC3339.parse(createdAt) ?? 0 }
}

/// Wallet orders (`WalletOrders`): shipments, the devices registered for each order, and when
/// each order's package changed. Written once for both backends (`StatementRunner`).
public protocol WalletOrderBook {
  /// The order's Wallet token and package time; nil when the order is unknown.
  func walletOrder(_ orderId: String) throws -> WalletOrderRow?
  /// Sets when the order's package last changed (lock the order first).
  func setWalletUpdatedAt(_ orderId: String, to time: Int64) throws
  /// The order's shipments, in the order they were recorded.
  func shipments(orderId: String) throws -> [ShipmentRow]
  /// Records a shipment (`isNew`) or its new status and tracking.
  func save(_ shipment: ShipmentRow, isNew: Bool) throws
  /// The devices registered for the order, by device library identifier.
  func walletRegistrations(orderId: String) throws -> [WalletRegistrationRow]
  /// Records a registration; false when the device was registered for the order already (nothing written).
  func insert(_ registration: WalletRegistrationRow) throws -> Bool
  /// Removes a device's registration for an order; false when there was none.
  func deleteWalletRegistration(deviceLibraryIdentifier: String, orderTypeIdentifier: String, orderId: String) throws
    -> Bool
  /// The orders the device is registered for (of the type) whose package changed at or after
  /// `since` (unix seconds; all when nil), the oldest change first, at most `limit`.
  func changedWalletOrders(deviceLibraryIdentifier: String, orderTypeIdentifier: String, since: Int64?, limit: Int)
    throws -> [(orderId: String, updatedAt: Int64)]
}

extension StoreSchema {
  /// Migration v20, the same on both backends.
  public static let walletOrderTables = [
    #"ALTER TABLE "order" ADD COLUMN walletUpdatedAt BIGINT"#,
    """
    CREATE TABLE shipment (
      orderId TEXT NOT NULL REFERENCES "order"(orderId), shipmentId TEXT NOT NULL,
      position BIGINT NOT NULL CHECK (position > 0), carrier TEXT NOT NULL, trackingNumber TEXT NOT NULL,
      trackingURL TEXT, status TEXT NOT NULL, createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL,
      PRIMARY KEY (orderId, shipmentId)
    )
    """,
    """
    CREATE TABLE walletRegistration (
      deviceLibraryIdentifier TEXT NOT NULL, orderTypeIdentifier TEXT NOT NULL,
      orderId TEXT NOT NULL REFERENCES "order"(orderId), pushToken TEXT NOT NULL, registeredAt TEXT NOT NULL,
      PRIMARY KEY (deviceLibraryIdentifier, orderTypeIdentifier, orderId)
    )
    """,
    "CREATE INDEX walletRegistrationByOrder ON walletRegistration (orderId)",
  ]
}

extension StoreSQL {
  static let walletOrder = StoreStatement(
    """
    SELECT o.orderId, o.createdAt, t.walletOrderToken, o.walletUpdatedAt
    FROM "order" o JOIN charge c ON c.chargeId = o.chargeId LEFT JOIN chargeToken t ON t.token = c.token
    WHERE o.orderId = ?
    """)
  static let setWalletUpdatedAt = StoreStatement(#"UPDATE "order" SET walletUpdatedAt = ? WHERE orderId = ?"#)
  static let shipmentColumns =
    "orderId, shipmentId, position, carrier, trackingNumber, trackingURL, status, createdAt, updatedAt"
  static let shipments = StoreStatement("SELECT \(shipmentColumns) FROM shipment WHERE orderId = ? ORDER BY position")
  static let insertShipment = StoreStatement(
    "INSERT INTO shipment (\(shipmentColumns)) VALUES (\(StoreStatement.placeholders(9)))")
  static let updateShipment = StoreStatement(
    """
    UPDATE shipment SET carrier = ?, trackingNumber = ?, trackingURL = ?, status = ?, updatedAt = ?
    WHERE orderId = ? AND shipmentId = ?
    """)
  static let registrationColumns = "deviceLibraryIdentifier, orderTypeIdentifier, orderId, pushToken, registeredAt"
  static let registrationsOfOrder = StoreStatement { dialect in
    """
    SELECT \(registrationColumns) FROM walletRegistration WHERE orderId = ?
    ORDER BY deviceLibraryIdentifier\(dialect.collate), orderTypeIdentifier\(dialect.collate)
    """
  }
  static let insertRegistration = StoreStatement(
    """
    INSERT INTO walletRegistration (\(registrationColumns)) VALUES (\(StoreStatement.placeholders(5)))
    ON CONFLICT DO NOTHING
    """)
  static let deleteRegistration = StoreStatement(
    "DELETE FROM walletRegistration WHERE deviceLibraryIdentifier = ? AND orderTypeIdentifier = ? AND orderId = ?")
  static let changedWalletOrders = StoreStatement { dialect in
    """
    SELECT r.orderId, o.walletUpdatedAt FROM walletRegistration r JOIN "order" o ON o.orderId = r.orderId
    WHERE r.deviceLibraryIdentifier = ? AND r.orderTypeIdentifier = ? AND o.walletUpdatedAt >= ?
    ORDER BY o.walletUpdatedAt, r.orderId\(dialect.collate) LIMIT ?
    """
  }
}

extension WalletOrderBook where Self: StatementRunner {
  public func walletOrder(_ orderId: String) throws -> WalletOrderRow? {
    try select(StoreSQL.walletOrder, [.text(orderId)]).first.map { row in
      WalletOrderRow(
        orderId: try row.text(0), createdAt: try row.text(1), authenticationToken: row.optionalText(2),
        updatedAt: row.optionalInteger(3))
    }
  }

  public func setWalletUpdatedAt(_ orderId: String, to time: Int64) throws {
    try executeOne(StoreSQL.setWalletUpdatedAt, [.integer(time), .text(orderId)], orFail: "order \(orderId) vanished")
  }

  public func shipments(orderId: String) throws -> [ShipmentRow] {
    try select(StoreSQL.shipments, [.text(orderId)]).map { row in
      ShipmentRow(
        orderId: try row.text(0), shipmentId: try row.text(1), position: Int(try row.integer(2)),
        carrier: try row.text(3), trackingNumber: try row.text(4), trackingURL: row.optionalText(5),
        status: try row.text(6), createdAt: try row.text(7), updatedAt: try row.text(8))
    }
  }

  public func save(_ shipment: ShipmentRow, isNew: Bool) throws {
    if isNew {
      try execute(
        StoreSQL.insertShipment,
        [
          .text(shipment.orderId), .text(shipment.shipmentId), .int(shipment.position), .text(shipment.carrier),
          .text(shipment.trackingNumber), .text(shipment.trackingURL), .text(shipment.status),
          .text(shipment.createdAt), .text(shipment.updatedAt),
        ])
    } else {
      try executeOne(
        StoreSQL.updateShipment,
        [
          .text(shipment.carrier), .text(shipment.trackingNumber), .text(shipment.trackingURL), .text(shipment.status),
          .text(shipment.updatedAt), .text(shipment.orderId), .text(shipment.shipmentId),
        ], orFail: "shipment \(shipment.shipmentId) of order \(shipment.orderId) vanished")
    }
  }

  public func walletRegistrations(orderId: String) throws -> [WalletRegistrationRow] {
    try select(StoreSQL.registrationsOfOrder, [.text(orderId)]).map { row in
      WalletRegistrationRow(
        deviceLibraryIdentifier: try row.text(0), orderTypeIdentifier: try row.text(1), orderId: try row.text(2),
        pushToken: try row.text(3), registeredAt: try row.text(4))
    }
  }

  public func insert(_ registration: WalletRegistrationRow) throws -> Bool {
    try execute(
      StoreSQL.insertRegistration,
      [
        .text(registration.deviceLibraryIdentifier), .text(registration.orderTypeIdentifier),
        .text(registration.orderId), .text(registration.pushToken), .text(registration.registeredAt),
      ]) == 1
  }

  public func deleteWalletRegistration(deviceLibraryIdentifier: String, orderTypeIdentifier: String, orderId: String)
    throws -> Bool
  {
    try execute(
      StoreSQL.deleteRegistration, [.text(deviceLibraryIdentifier), .text(orderTypeIdentifier), .text(orderId)]) == 1
  }

  public func changedWalletOrders(
    deviceLibraryIdentifier: String, orderTypeIdentifier: String, since: Int64?, limit: Int
  ) throws -> [(orderId: String, updatedAt: Int64)] {
    try select(
      StoreSQL.changedWalletOrders,
      [.text(deviceLibraryIdentifier), .text(orderTypeIdentifier), .integer(since ?? 0), .int(limit)]
    ).map { row in (try row.text(0), try row.integer(1)) }
  }
}
