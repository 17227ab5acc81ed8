/// A shipment of an order: recorded with its carrier and tracking, or moved forward in Apple's
/// fulfillment statuses. Back office only (`--back-office`). With Wallet orders, each change
/// updates the order's package and tells the devices that follow it.
public enum ShipOrder: RPCMethod {
  public static let name = "shipOrder"

  /// The most shipments one order has.
  public static let maxShipments = 50

  public static let documentation = MethodDocumentation(
    summary: "Record a shipment of an order, or move one forward (shipped, onTheWay, delivered…).",
    description: """
      Records the shipment shipmentId of the order with its carrier, trackingNumber and optional trackingURL, \
      at status (Apple's fulfillment statuses: open, processing, shipped, onTheWay, outForDelivery, delivered, \
      issue, cancelled; default shipped). The same shipmentId again moves it forward: a status only moves \
      forward (issue and cancelled may come at any point before delivered; after issue, any status from \
      shipped on), and its carrier and tracking number stay what they were (a trackingURL may be added). The \
      same call again changes nothing (changed false). An order has at most \(maxShipments) shipments; a \
      canceled order ships nothing. getOrder shows the shipments; with walletOrders, the Wallet order shows \
      each as a fulfillment, and each change is pushed to the devices following it. An unknown orderId is \
      error -32003.
      """,
    errors: [.storeUnavailable, .orderNotFound], readOnly: false, idempotent: true)
  public static let usesStore = true
  public static let operationKinds: [any Operation.Type] = [WalletPush.self]

  public struct Params: Sendable {
    public var orderId = ""
    public var shipmentId = ""
    public var carrier = ""
    public var trackingNumber = ""
    public var trackingURL: String?
    public var status = ShipmentStatus.shipped
  }

  static func text(_ what: String, max: Int) -> MemberReader<String> {
    { value, path, reader in
      guard case .string(let text) = value, (1...max).contains(text.count),
        !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
      else {
        reader.fail(path(), "must be \(what): 1 to \(max) characters, no control characters")
        return nil
      }
      return text
    }
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member("orderId", \.orderId, .required, .string("From processOrder.", minLength: 1)),
      .member(
        "shipmentId", \.shipmentId, .required, BackOffice.keySchema("Your id of the shipment, unique in the order."),
        read: BackOffice.readKey),
      .member(
        "carrier", \.carrier, .required, .string("The carrier, as the shopper knows it (\"UPS\").", minLength: 1, maxLength: 100),
        read: text("the carrier's name", max: 100)),
      .member(
        "trackingNumber", \.trackingNumber, .required, .string("The carrier's tracking number.", minLength: 1, maxLength: 100),
        read: text("the carrier's tracking number", max: 100)),
      .member(
        "trackingURL", \.trackingURL, .optional, .string("Where the shopper tracks it: an https URL.", maxLength: 2048),
        read: { value, path, reader in
          guard case .string(let text) = value, ConfigDecoder.isHTTPSURL(text) else {
            reader.fail(path(), "must be an https URL of at most 2048 characters, like https://track.example.com/1Z999")
            return nil
          }
          return text
        }),
      .member(
        "status", \.status, .optional,
        .string("Apple's fulfillment status; default shipped.", values: ShipmentStatus.allCases.map(\.rawValue)),
        read: { value, path, reader in
          guard case .string(let text) = value, let status = ShipmentStatus(rawValue: text) else {
            reader.fail(path(), "must be one of \(ShipmentStatus.allCases.map(\.rawValue).joined(separator: ", "))")
            return nil
          }
          return status
        }),
    ])

  public struct Succeeded: Equatable, Sendable, WireObject {
    public var orderId = ""
    public var shipment = ShipmentRecord()
    public var changed = true

    public static let shape = ObjectShape<Succeeded>(
      blank: { Succeeded() },
      [
        .constant("status", "succeeded"), .member("orderId", \.orderId), .member("shipment", \.shipment),
        .member("changed", \.changed, .required, .boolean("false when the shipment was already so.")),
      ])
  }

  public typealias Result = BackOffice.Result<Succeeded>

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let now = context.clock.now()
    let at = RFC3339.format(now)
    return try context.store.write { transaction in
      guard let order = try transaction.lockOrder(params.orderId) else { throw ServiceError.orderNotFound(params.orderId) }
      guard order.status != .canceled else {
        return .failed(.orderCanceled, "The order was canceled: nothing ships.")
      }
      let shipments = try transaction.shipments(orderId: order.orderId)
      var row: ShipmentRow
      let known = shipments.first { $0.shipmentId == params.shipmentId }
      if let known {
        guard known.carrier == params.carrier, known.trackingNumber == params.trackingNumber else {
          return .failed(
            .trackingChanged,
            "Shipment \(known.shipmentId) was recorded with \(known.carrier) \(known.trackingNumber); a shipment keeps its carrier and tracking number: record another shipmentId."
          )
        }
        let current = ShipmentStatus(rawValue: known.status) ?? .open
        guard current.mayMove(to: params.status) else {
          return .failed(
            .statusBackwards, "Shipment \(known.shipmentId) is \(known.status): it cannot become \(params.status.rawValue).")
        }
        row = known
        row.status = params.status.rawValue
        row.trackingURL = params.trackingURL ?? known.trackingURL
        guard row != known else {
          return .succeeded(Succeeded(orderId: order.orderId, shipment: ShipmentRecord(known), changed: false))
        }
        row.updatedAt = at
      } else {
        guard shipments.count < maxShipments else {
          return .failed(.tooManyShipments, "The order has \(maxShipments) shipments, the most it may have.")
        }
        row = ShipmentRow(
          orderId: order.orderId, shipmentId: params.shipmentId, position: shipments.count + 1, carrier: params.carrier,
          trackingNumber: params.trackingNumber, trackingURL: params.trackingURL, status: params.status.rawValue,
          createdAt: at, updatedAt: at)
      }
      try transaction.save(row, isNew: known == nil)
      try WalletOrderUpdates.changed(order.orderId, transaction, context: context, now: now)
      return .succeeded(Succeeded(orderId: order.orderId, shipment: ShipmentRecord(row), changed: true))
    }
  }
}
