import Crypto
import Foundation
import ZIPFoundation

/// An order as Wallet shows it: the `.order` package Apple's Wallet Orders format describes
/// (https://developer.apple.com/documentation/walletorders): `order.json`, `manifest.json` with each
/// file's SHA-256 and `signature`, a detached CMS signature of the manifest by the Order Type ID
/// certificate, zipped.
///
/// Built from the order as the store has it, and from nothing else: the same order state gives the
/// same package. Its times (the zip entries', the signature's) are the package's `updatedAt`, so
/// that with an RSA certificate (PKCS#1 v1.5 signatures are deterministic) the bytes repeat.
public enum OrderPackage {
  /// Wallet's media type for an order package.
  public static let mediaType = "application/vnd.apple.finance.order"

  /// What the package is made from.
  public struct Source: Sendable {
    /// The order as getOrder shows it (`GetOrder.current`).
    public var order: OrderDocument
    public var wallet: WalletOrderRow
    public var shipments: [ShipmentRow]

    public init(order: OrderDocument, wallet: WalletOrderRow, shipments: [ShipmentRow]) {
      self.order = order
      self.wallet = wallet
      self.shipments = shipments
    }
  }

  /// The package's bytes (a zip archive).
  public static func build(_ source: Source, orders: WalletOrders, package: WalletOrderPackageSettings) throws
    -> [UInt8]
  {
    let updatedAt = source.wallet.lastModified
    let orderJSON = Array(JSONWriter.string(orderJSON(source, orders: orders, package: package)).utf8)
    var manifest = JSONObjectBuilder(capacity: 1)
    manifest.set("order.json", Hex.encode(Array(SHA256.hash(data: orderJSON))))
    let manifestJSON = Array(JSONWriter.string(manifest.value).utf8)
    let signature = try package.signer.sign(manifest: manifestJSON, signedAt: updatedAt)
    return try zip(
      [("order.json", orderJSON), ("manifest.json", manifestJSON), ("signature", signature)], at: updatedAt)
  }

  /// The order in Apple's schema (schemaVersion 1).
  static func orderJSON(_ source: Source, orders: WalletOrders, package: WalletOrderPackageSettings) -> JSONValue {
    let order = source.order
    let currency = order.currencyCode
    var json = JSONObjectBuilder(capacity: 18)
    json.set("schemaVersion", 1)
    json.set("orderType", "ecommerce")
    json.set("orderTypeIdentifier", orders.orderTypeIdentifier)
    json.set("orderIdentifier", order.orderId)
    json.set("orderNumber", order.orderId)
    json.set("webServiceURL", orders.webServiceURL)
    json.set("authenticationToken", source.wallet.authenticationToken)
    var merchant = JSONObjectBuilder(capacity: 3)
    merchant.set("merchantIdentifier", package.merchantIdentifier)
    merchant.set("displayName", package.displayName)
    merchant.set("url", package.merchantURL)
    json.set("merchant", .object(merchant.object))
    json.set("orderManagementURL", package.orderManagementURL(orderId: order.orderId))
    json.set("createdAt", order.createdAt)
    json.set("updatedAt", RFC3339.format(source.wallet.lastModified))
    json.set("status", status(order, source.shipments))
    if order.personalDataErasedAt == nil, let customer = customer(order.shippingContact) {
      json.set("customer", customer)
    }
    json.set("lineItems", .array(order.items.map { lineItem($0, currency) }))
    if !source.shipments.isEmpty {
      let recipient = order.personalDataErasedAt == nil ? self.recipient(order.shippingContact) : nil
      json.set("fulfillments", .array(source.shipments.map { fulfillment($0, recipient: recipient) }))
    }
    json.set("payment", payment(order, currency))
    return .object(json.object)
  }

  /// The order's status in Wallet's three: cancelled once canceled (or refunded in full before
  /// anything was delivered), completed once every shipment is delivered (at least one), else open.
  static func status(_ order: OrderDocument, _ shipments: [ShipmentRow]) -> String {
    let live = shipments.filter { $0.status != ShipmentStatus.cancelled.rawValue }
    let delivered = !live.isEmpty && live.allSatisfy { $0.status == ShipmentStatus.delivered.rawValue }
    switch order.status {
    case .canceled: return "cancelled"
    case .refunded: return delivered ? "completed" : "cancelled"
    default: return delivered ? "completed" : "open"
    }
  }

  /// An amount as Wallet's `CurrencyAmount`: the decimal as a JSON number, exactly as written.
  static func amount(_ text: String, _ currency: String) -> JSONValue {
    var amount = JSONObjectBuilder(capacity: 2)
    amount.set("amount", .number(text))
    amount.set("currency", currency)
    return .object(amount.object)
  }

  static func lineItem(_ line: OrderDocument.Line, _ currency: String) -> JSONValue {
    var item = JSONObjectBuilder(capacity: 4)
    item.set("title", line.name)
    item.set("quantity", line.quantity)
    item.set("price", amount(line.unitPrice, currency))
    item.set("sku", line.sku)
    return .object(item.object)
  }

  static func customer(_ contact: Contact) -> JSONValue? {
    var customer = JSONObjectBuilder(capacity: 4)
    customer.set("givenName", contact.givenName)
    customer.set("familyName", contact.familyName)
    customer.set("emailAddress", contact.emailAddress)
    customer.set("phoneNumber", contact.phoneNumber)
    return customer.object.members.isEmpty ? nil : .object(customer.object)
  }

  /// Who the shipments go to, and where: the order's shipping contact.
  static func recipient(_ contact: Contact) -> JSONValue? {
    var recipient = JSONObjectBuilder(capacity: 3)
    recipient.set("givenName", contact.givenName)
    recipient.set("familyName", contact.familyName)
    var address = JSONObjectBuilder(capacity: 8)
    if let lines = contact.addressLines, !lines.isEmpty { address.set("addressLines", .array(lines.map { .string($0) })) }
    let parts = [
      ("subLocality", contact.subLocality), ("locality", contact.locality),
      ("subAdministrativeArea", contact.subAdministrativeArea), ("administrativeArea", contact.administrativeArea),
      ("postalCode", contact.postalCode), ("countryCode", contact.countryCode),
    ]
    for (key, value) in parts { address.set(key, value) }
    if !address.object.members.isEmpty { recipient.set("address", .object(address.object)) }
    return recipient.object.members.isEmpty ? nil : .object(recipient.object)
  }

  static func fulfillment(_ shipment: ShipmentRow, recipient: JSONValue?) -> JSONValue {
    var json = JSONObjectBuilder(capacity: 9)
    json.set("fulfillmentType", "shipping")
    json.set("fulfillmentIdentifier", shipment.shipmentId)
    json.set("status", shipment.status)
    json.set("carrier", shipment.carrier)
    json.set("trackingNumber", shipment.trackingNumber)
    json.set("trackingURL", shipment.trackingURL)
    json.set("shippedAt", shipment.createdAt)
    if shipment.status == ShipmentStatus.delivered.rawValue { json.set("deliveredAt", shipment.updatedAt) }
    json.set("recipient", recipient)
    return .object(json.object)
  }

  /// The payment: its total and summary, its state, and its refunds as transactions.
  static func payment(_ order: OrderDocument, _ currency: String) -> JSONValue {
    var json = JSONObjectBuilder(capacity: 4)
    json.set("total", amount(order.amount, currency))
    let status: String =
      switch order.status {
      case .pending: "pending"
      case .authorized: "authorized"
      case .canceled: "voided"
      case .refunded: "refunded"
      case .paid, .partiallyRefunded, .disputed: "paid"
      }
    json.set("status", status)
    json.set(
      "summaryItems",
      .array(
        order.summaryItems.map { line in
          var item = JSONObjectBuilder(capacity: 2)
          item.set("label", line.label)
          item.set("value", amount(line.amount, currency))
          return .object(item.object)
        }))
    let refunds = order.refunds ?? []
    if !refunds.isEmpty {
      // The card's network only (no digits); a sandbox order has no card: Apple Pay, as the sheet said.
      let method = order.payment.map(\.network).flatMap { $0.isEmpty ? nil : $0 } ?? "Apple Pay"
      json.set(
        "transactions",
        .array(
          refunds.map { refund in
            var transaction = JSONObjectBuilder(capacity: 5)
            transaction.set("transactionType", "refund")
            transaction.set("amount", amount(refund.amount, currency))
            transaction.set("createdAt", refund.createdAt)
            transaction.set(
              "status",
              RefundRecord.failedStatuses.contains(refund.status ?? "")
                ? "failed" : RefundRecord.unsettledStatuses.contains(refund.status ?? "") ? "pending" : "completed")
            var paymentMethod = JSONObjectBuilder(capacity: 1)
            paymentMethod.set("displayName", method)
            transaction.set("paymentMethod", paymentMethod.value)
            return .object(transaction.object)
          }))
    }
    return .object(json.object)
  }

  /// The files as one zip archive (deflated), in the order given, each dated `time` (unix
  /// seconds; ZIPFoundation writes a zip's zoneless date fields in UTC, whatever `TZ` says).
  static func zip(_ files: [(name: String, bytes: [UInt8])], at time: Int64) throws -> [UInt8] {
    let date = Date(timeIntervalSince1970: TimeInterval(time))
    let archive = try Archive(accessMode: .create)
    for (name, bytes) in files {
      let data = Data(bytes)
      try archive.addEntry(
        with: name, type: .file, uncompressedSize: Int64(data.count), modificationDate: date, permissions: 0o644,
        compressionMethod: .deflate
      ) { position, size in
        data.subdata(in: Int(position)..<Int(position) + size)
      }
    }
    guard let data = archive.data else { throw StoreError.unavailable(reason: "the order package's archive is empty") }
    return Array(data)
  }
}
