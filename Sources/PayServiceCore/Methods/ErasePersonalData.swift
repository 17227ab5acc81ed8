/// A buyer's right to erasure (GDPR Art. 17, CCPA), and the retention limit: removes names, street
/// lines, localities, email addresses and phone numbers from orders and payments, keeping country,
/// region, postal prefix and every amount for tax and the books. Back office only (`--back-office`).
public enum ErasePersonalData: RPCMethod {
  public static let name = "erasePersonalData"

  public static let documentation = MethodDocumentation(
    summary: "Erase buyers' personal data from orders and payments, keeping what tax and the books need.",
    description: """
      Covers the payments (charge tokens) and orders of one buyer (emailAddress, matched without ASCII case in \
      the shipping and billing contacts), of one order (orderId), or authorized before a time (before: a \
      retention run; payservice retention sends it). Exactly one of the three. From each, the shipping and \
      billing contacts keep only country, countryCode, administrativeArea and the postal code's prefix (the \
      UK's outward code, Canada's and Japan's first three characters, elsewhere the first three); names, \
      address lines, localities, email addresses and phone numbers are removed from the order, its payment and \
      its stored answers. The reasons staff wrote on its refunds and cancel (free text that often names the \
      buyer) are replaced by "[erased]" wherever kept: the order's events and refunds and the stored answers \
      of refundOrder and cancelOrder, so a repeated call answers with the marker and is still taken as the same. \
      Amounts, lines, tax, status, refunds and events stay: refunds and captures work as \
      before, and getOrder shows personalDataErasedAt. A processOrder sent again for an erased order is \
      compared with its contacts erased and answered with the erased order. An order still pending at its \
      gateway is left for a later run. At most limit payments (default 500) are erased per call; more true \
      says others remain (send another erasureId). erasureId is the client's idempotency key: the same \
      erasureId with the same params returns the stored result and erases nothing more; with other params it \
      is error -32004. The erasure is recorded without the data it was asked for: its key holds a keyed \
      digest of the params, and its answer only order ids and counts. An unknown orderId is error -32003.
      """,
    errors: [.storeUnavailable, .orderNotFound, .idempotencyKeyConflict], readOnly: false, idempotent: true,
    destructive: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  public static let defaultLimit = 500
  public static let maxLimit = 5000

  public struct Params: Sendable {
    public var erasureId = ""
    public var emailAddress: String?
    public var orderId: String?
    public var before: String?
    public var limit = ErasePersonalData.defaultLimit
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "erasureId", \.erasureId, .required,
        BackOffice.keySchema("Your idempotency key for this erasure: 1 to 255 printable ASCII characters."),
        read: BackOffice.readKey),
      .member(
        "emailAddress", \.emailAddress, .optional,
        .string("The buyer's email address, as in a shipping or billing contact.", minLength: 1, maxLength: 256)),
      .member("orderId", \.orderId, .optional, .string("One order, from processOrder or listOrders.", minLength: 1)),
      .member(
        "before", \.before, .optional, .string("Payments authorized before this RFC 3339 time."),
        read: ListOrders.readTime),
      .member(
        "limit", \.limit, .optional,
        .integer("The most payments erased by this call, 1 to 5000; default 500.", minimum: 1, maximum: maxLimit),
        read: { value, path, reader in reader.integer(value, path(), range: 1...maxLimit) }),
    ],
    check: { params, reader in
      let given = [params.emailAddress, params.orderId, params.before].compactMap { $0 }.count
      if given != 1 {
        reader.fail("", "give exactly one of emailAddress, orderId and before")
      }
    })

  /// An erasure done.
  public struct Succeeded: Equatable, Sendable, WireObject {
    public var erasureId = ""
    public var erasedAt = ""
    public var orders: [String] = []
    public var otherPayments = 0
    public var more = false

    public static let shape = ObjectShape<Succeeded>(
      blank: { Succeeded() },
      [
        .constant("status", "succeeded"), .member("erasureId", \.erasureId),
        .member("erasedAt", \.erasedAt, .required, Shapes.timestamp),
        .member("orders", \.orders, .required, .array(.string(minLength: 1), "The orders erased, oldest first.")),
        .member(
          "otherPayments", \.otherPayments, .required,
          .integer("Payments erased that made no order (declined, or never completed).", minimum: 0)),
        .member("more", \.more, .required, .boolean("Whether more remain past limit: send another erasureId.")),
      ])
  }

  public typealias Result = BackOffice.Result<Succeeded>

  public static let operationKinds: [any Operation.Type] = [Erasure.self]

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let result = try OperationRunner.run(Erasure(params: params, context: context), context: context)
    // Best effort, after the erasure committed: a store busy with readers keeps its log until a
    // later checkpoint, and the answer is the erasure's either way.
    if case .succeeded(let erased) = result, !erased.orders.isEmpty || erased.otherPayments > 0 {
      try? context.store.scrubErased()
    }
    return result
  }

  /// erasePersonalData as an operation of the journal (kind `erasure`, keyed by the erasureId),
  /// done in one transaction with the payments' tokens locked.
  public struct Erasure: LocalOperation {
    public static let kind = "erasure"

    let params: Params
    /// A keyed digest of the params: the journal must not keep the email address it erased.
    public let fingerprint: String
    public var key: String { params.erasureId }
    public var subject: String? { nil }
    public var conflict: ServiceError { .idempotencyKeyConflict("erasureId") }

    init(params: Params, context: ServiceContext) throws {
      self.params = params
      fingerprint = "hmac-sha256:" + (try context.identifiers.mac(["erasure", BackOffice.fingerprint(params, ErasePersonalData.params)]))
    }

    public static func lock(key: String, subject: String?, _ transaction: any StoreTransaction, context: ServiceContext) {}

    var selector: ErasureSelector {
      if let address = params.emailAddress { return .emailAddress(address) }
      if let orderId = params.orderId { return .orderId(orderId) }
      return .issuedBefore(params.before ?? "")
    }

    public func prepare(
      _ subject: Void, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64
    ) throws -> Preparation<Result, NoCall> {
      let at = RFC3339.format(now)
      let tokens = try transaction.tokensToErase(selector, limit: params.limit + 1)
      if tokens.isEmpty, let orderId = params.orderId, try transaction.lockOrder(orderId) == nil {
        throw ServiceError.orderNotFound(orderId)
      }
      var done = Succeeded(erasureId: params.erasureId, erasedAt: at, more: tokens.count > params.limit)
      for token in tokens.prefix(params.limit) {
        guard let row = try transaction.personalData(token: token) else { continue }
        try transaction.erasePersonalData(try Self.erased(row, at: at), at: at)
        if let orderId = row.orderId { try Self.eraseStaffReasons(orderId: orderId, transaction) }
        if let entry = try transaction.operation(kind: ProcessOrder.Placement.kind, key: token), entry.state == .settled {
          let fingerprint = try StoredJSON.read(entry.fingerprint, as: ProcessOrder.Fingerprint.self, "request fingerprint")
          // An answer kept without its order's document holds nothing personal: the document is
          // the order row's, erased above.
          let result = try entry.result.map { text throws(StoreError) in
            guard ProcessOrder.Placement.isWhole(text) else { return text }
            return JSONWriter.string(
              Self.erased(try StoredJSON.read(text, as: ProcessOrder.Result.self, "order result"), at: at))
          }
          try transaction.rewriteOperation(
            kind: ProcessOrder.Placement.kind, key: token, fingerprint: JSONWriter.string(fingerprint.erasing()),
            result: result)
        }
        if let orderId = row.orderId {
          // Wallet's copy of the order holds the contacts too: the devices following it fetch it
          // again, without them.
          try WalletOrderUpdates.changed(orderId, transaction, context: context, now: now)
          done.orders.append(orderId)
        } else {
          done.otherPayments += 1
        }
      }
      return .done(.succeeded(done), final: true)
    }

    /// What replaces free text staff wrote about an order.
    public static let marker = "[erased]"

    /// The reasons staff gave for an order's refunds and cancel, replaced by `marker` in its events,
    /// its refunds' documents and the journal entries (params and stored answer) of those calls.
    static func eraseStaffReasons(orderId: String, _ transaction: any StoreTransaction) throws {
      for event in try transaction.eraseStaffReasons(orderId: orderId, marker: marker) {
        guard let reason = event.reason else { continue }
        let kind = event.kind == .canceled ? CancelOrder.Cancellation.kind : RefundOrder.Refund.kind
        if event.kind == .refunded, let refund = try transaction.refund(event.reference) {
          try transaction.updateRefund(refund.refundId, document: erasing(reason, in: refund.document))
        }
        if let entry = try transaction.operation(kind: kind, key: event.reference), entry.state == .settled {
          try transaction.rewriteOperation(
            kind: kind, key: event.reference, fingerprint: erasing(reason, in: entry.fingerprint),
            result: entry.result.map { erasing(reason, in: $0) })
        }
      }
    }

    /// `text` (JSON) with every member `reason` whose value is `reason` replaced by the marker.
    static func erasing(_ reason: String, in text: String) -> String {
      guard let value = try? JSONParser.parse(text) else { return text }
      func walk(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(var object):
          for index in object.members.indices {
            if object.members[index].key == "reason", object.members[index].value == .string(reason) {
              object.members[index].value = .string(marker)
            } else {
              object.members[index].value = walk(object.members[index].value)
            }
          }
          return .object(object)
        case .array(let items): return .array(items.map(walk))
        default: return value
        }
      }
      return JSONWriter.string(walk(value))
    }

    /// A token's and order's rows with their contacts erased.
    static func erased(_ row: PersonalDataRow, at: String) throws(StoreError) -> PersonalDataRow {
      var copy = row
      var binding = try StoredJSON.read(row.binding, as: OrderBinding.self, "binding")
      binding.shippingContact = binding.shippingContact?.erased
      copy.binding = binding.canonical
      copy.billingContact = try row.billingContact.map { text throws(StoreError) in
        JSONWriter.string(try StoredJSON.read(text, as: Contact.self, "billing contact").erased)
      }
      copy.orderDocument = try row.orderDocument.map { text throws(StoreError) in
        JSONWriter.string(Self.erased(try StoredJSON.read(text, as: OrderDocument.self, "order document"), at: at))
      }
      return copy
    }

    static func erased(_ document: OrderDocument, at: String) -> OrderDocument {
      var document = document
      document.shippingContact = document.shippingContact.erased
      document.billingContact = document.billingContact?.erased
      document.personalDataErasedAt = document.personalDataErasedAt ?? at
      return document
    }

    static func erased(_ result: ProcessOrder.Result, at: String) -> ProcessOrder.Result {
      guard case .succeeded(var succeeded) = result else { return result }
      succeeded.order = erased(succeeded.order, at: at)
      return .succeeded(succeeded)
    }
  }
}
