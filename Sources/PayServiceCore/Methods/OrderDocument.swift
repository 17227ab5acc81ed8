/// A recorded order as processOrder returns it and the store keeps it; getOrder reads it back with
/// where it stands now (status, money captured and refunded, refunds and events).
public struct OrderDocument: Equatable, Sendable, WireObject {
  /// One line of the order, priced.
  public struct Line: Equatable, Sendable, WireObject {
    public var sku = ""
    public var name = ""
    public var quantity = 1
    public var unitPrice = ""
    public var amount = ""

    public static let shape = ObjectShape<Line>(
      blank: { Line() },
      [
        .member("sku", \.sku), .member("name", \.name, .required, .string(), read: ParamReader.anyString),
        .member("quantity", \.quantity, .required, .integer(minimum: 1)),
        .member("unitPrice", \.unitPrice, .required, Shapes.amount),
        .member("amount", \.amount, .required, Shapes.amount),
      ])
  }

  /// The card of an order paid with a real Apple Pay token: network, type and last four digits,
  /// and Apple's transaction id; nothing else of the card.
  public struct Payment: Equatable, Sendable, WireObject {
    public var network = ""
    public var type = ""
    public var lastFour = ""
    public var transactionId = ""

    public static let shape = ObjectShape<Payment>(
      """
      Present when paid with a real Apple Pay token: the card as network, type and last four digits, and \
      Apple's transaction id.
      """,
      blank: { Payment() },
      [
        .member("network", \.network), .member("type", \.type),
        .member("lastFour", \.lastFour, .required, .string(pattern: "^[0-9]{4}$")),
        .member("transactionId", \.transactionId, .required, .string(pattern: "^[0-9a-f]+$")),
      ])
  }

  public var orderId = ""
  public var createdAt = ""
  public var items: [Line] = []
  public var shippingMethod = ""
  /// The coupon that took effect, as configured; nil when none did.
  public var couponCode: String?
  public var summaryItems: [SummaryItem] = []
  /// Per rate, net, tax and gross (see `TaxBreakdownItem`); nil for configs that do not report it.
  public var taxBreakdown: [TaxBreakdownItem]?
  public var shippingContact = Contact()
  public var billingContact: Contact?
  /// When the buyer's personal data was erased from the order (`erasePersonalData`); nil while kept.
  public var personalDataErasedAt: String?
  public var amount = ""
  public var currencyCode = ""
  /// The charge (the gateway's `ch_…` for Stripe); nil while the order is pending.
  public var chargeId: String?
  /// The remote gateway's payment (Stripe's PaymentIntent `pi_…`); nil for the sandbox.
  public var gatewayPaymentId: String?
  public var payment: Payment?
  /// The agreement the order made (its cart had a billing plan) or pays a later payment of; nil
  /// for an order without one.
  public var agreement: AgreementLink?
  /// With manual capture at a remote gateway: when the authorization lapses (RFC 3339 UTC). Stripe
  /// cancels a PaymentIntent left uncaptured 7 days (the charge's `capture_before`); captureOrder
  /// after it fails with `authorization_expired`. nil otherwise.
  public var captureBefore: String?
  public var status = OrderStatus.paid
  /// What getOrder adds: the money captured and refunded so far, the refunds and the events. nil
  /// (left out) in processOrder's answer, which is the order as placed.
  public var amountCaptured: String?
  public var amountRefunded: String?
  /// getOrder: the part of amountRefunded in refunds the gateway has not settled yet (pending or
  /// requires_action); nil (left out) when there is none.
  public var amountRefundPending: String?
  public var refunds: [RefundRecord]?
  /// getOrder: the part of amountRefunded in refunds made outside payservice; nil when none.
  public var amountRefundedOutside: String?
  /// getOrder: what disputes hold of the money now (withdrawn, not reinstated); nil without disputes.
  public var amountDisputed: String?
  /// getOrder: what the merchant keeps: captured, less refunded and disputed; nil (left out) until
  /// the gateway reports money moving outside payservice.
  public var amountNet: String?
  /// getOrder: the payment's disputes, oldest first; nil (left out) when there is none.
  public var disputes: [DisputeRecord]?
  public var events: [OrderEvent]?
  /// getOrder: the shipments shipOrder recorded, in order; nil (left out) when none.
  public var shipments: [ShipmentRecord]?

  public static let shape = ObjectShape<OrderDocument>(
    "A recorded order.", blank: { OrderDocument() },
    [
      .member("orderId", \.orderId),
      .member("createdAt", \.createdAt, .required, Shapes.timestamp),
      .member("items", \.items, .required, .array(Line.schema, minItems: 1)),
      .member("shippingMethod", \.shippingMethod),
      .member(
        "couponCode", \.couponCode, .optional, .string("The coupon that took effect, as configured."),
        read: ParamReader.anyString),
      .member("summaryItems", \.summaryItems, .required, Shapes.summaryItems),
      .member("taxBreakdown", \.taxBreakdown, .optional, TaxBreakdownItem.listSchema),
      .member("shippingContact", \.shippingContact, .required, Contact.storedSchema),
      .member("billingContact", \.billingContact, .alwaysOrNull, Contact.storedSchema),
      .member(
        "personalDataErasedAt", \.personalDataErasedAt, .optional,
        .string(
          "When the buyer's personal data was erased (RFC 3339 UTC): the contacts keep only country, region and postal prefix.",
          pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")),
      .member("amount", \.amount, .required, Shapes.amount),
      .member("currencyCode", \.currencyCode, .required, Shapes.currencyCode),
      .member("chargeId", \.chargeId, .optional, .string("The charge; absent while the order is pending.", minLength: 1)),
      .member(
        "gatewayPaymentId", \.gatewayPaymentId, .optional,
        .string("The payment at a remote gateway (Stripe: the PaymentIntent pi_…); absent for the sandbox.", minLength: 1)),
      .member("payment", \.payment, .optional),
      .member("agreement", \.agreement, .optional),
      .member(
        "captureBefore", \.captureBefore, .optional,
        .string(
          """
          Manual capture at Stripe: when the authorization lapses (RFC 3339 UTC; the charge's capture_before, \
          else 7 days after it was made). Stripe cancels the payment then; captureOrder after it fails with \
          authorization_expired, cancelOrder still cancels the order.
          """,
          pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")),
      .member(
        "status", \.status, .required,
        .string(
          """
          pending (sent to a remote gateway, its answer not recorded yet: send the same processOrder \
          again), authorized (gateway.capture manual: held, not taken), paid, partially_refunded, refunded, \
          canceled, or disputed (getOrder and listOrders: a dispute of the payment is open, or was lost).
          """,
          values: OrderStatus.allCases.map(\.rawValue))),
      .member(
        "amountCaptured", \.amountCaptured, .optional,
        .string("getOrder: the money taken (0 while authorized or canceled).", pattern: MoneyText.pattern)),
      .member(
        "amountRefunded", \.amountRefunded, .optional,
        .string(
          "getOrder: the money refunded so far, refunds the gateway has not settled yet included (see amountRefundPending).",
          pattern: MoneyText.pattern)),
      .member(
        "amountRefundPending", \.amountRefundPending, .optional,
        .string(
          "getOrder: the part of amountRefunded in refunds whose status is pending or requires_action; absent when none is.",
          pattern: MoneyText.pattern)),
      .member("refunds", \.refunds, .optional, .array(RefundRecord.schema, "getOrder: the refunds, oldest first.")),
      .member(
        "amountRefundedOutside", \.amountRefundedOutside, .optional,
        .string(
          "getOrder: the part of amountRefunded in refunds made outside payservice (origin gateway); absent when none.",
          pattern: MoneyText.pattern)),
      .member(
        "amountDisputed", \.amountDisputed, .optional,
        .string(
          """
          getOrder: what the payment's disputes hold now: withdrawn from the merchant and not reinstated (an open \
          or lost chargeback; 0 once won). Absent when there is no dispute.
          """,
          pattern: MoneyText.pattern)),
      .member(
        "amountNet", \.amountNet, .optional,
        .string(
          """
          getOrder: what the merchant keeps: amountCaptured less amountRefunded and amountDisputed. Present once \
          the gateway reported money moving outside payservice (a dispute, a refund made outside it); \
          otherwise it is amountCaptured less amountRefunded.
          """, pattern: MoneyText.pattern)),
      .member("disputes", \.disputes, .optional, .array(DisputeRecord.schema, "getOrder: the payment's disputes, oldest first; absent when none.")),
      .member("events", \.events, .optional, .array(OrderEvent.schema, "getOrder: what happened, in order.")),
      .member(
        "shipments", \.shipments, .optional,
        .array(ShipmentRecord.schema, "getOrder: the shipments shipOrder recorded, in order; absent when none.")),
    ])
}

/// A shipment of an order (`shipOrder`), as getOrder and the Wallet order show it.
public struct ShipmentRecord: Equatable, Sendable, WireObject {
  public var shipmentId = ""
  public var carrier = ""
  public var trackingNumber = ""
  public var trackingURL: String?
  public var status = ""
  public var createdAt = ""
  public var updatedAt = ""

  public init() {}

  public init(_ row: ShipmentRow) {
    (shipmentId, carrier, trackingNumber, trackingURL) = (row.shipmentId, row.carrier, row.trackingNumber, row.trackingURL)
    (status, createdAt, updatedAt) = (row.status, row.createdAt, row.updatedAt)
  }

  public static let shape = ObjectShape<ShipmentRecord>(
    blank: { ShipmentRecord() },
    [
      .member("shipmentId", \.shipmentId, .required, .string("The merchant's id of the shipment.", minLength: 1)),
      .member("carrier", \.carrier, .required, .string("The carrier, as the shopper knows it.", minLength: 1)),
      .member("trackingNumber", \.trackingNumber, .required, .string("The carrier's tracking number.", minLength: 1)),
      .member("trackingURL", \.trackingURL, .optional, .string("Where the shopper tracks it (https).")),
      .member(
        "status", \.status, .required,
        .string("Apple's shipping fulfillment status.", values: ShipmentStatus.allCases.map(\.rawValue))),
      .member("createdAt", \.createdAt, .required, Shapes.timestamp),
      .member("updatedAt", \.updatedAt, .required, Shapes.timestamp),
    ])
}

/// Apple's statuses of a shipping fulfillment (Wallet orders' `ShippingFulfillment.status`), in
/// the order a shipment moves through them; `issue` and `cancelled` may come at any point before
/// `delivered`, and `issue` may be followed by any status from `shipped` on.
public enum ShipmentStatus: String, Sendable, CaseIterable, WireEnum {
  case open, processing, shipped, onTheWay, outForDelivery, delivered, issue, cancelled

  /// How far along the way: a shipment's status never goes back.
  var rank: Int {
    switch self {
    case .open: 0
    case .processing: 1
    case .shipped: 2
    case .onTheWay: 3
    case .outForDelivery: 4
    case .delivered: 6
    case .issue: 2
    case .cancelled: 7
    }
  }

  /// Whether a shipment at `self` may move to `next` (the same status is no move, and allowed).
  public func mayMove(to next: ShipmentStatus) -> Bool {
    if next == self { return true }
    switch self {
    case .delivered, .cancelled: return false
    default: break
    }
    switch next {
    case .issue, .cancelled: return true
    default: return next.rank > rank || (self == .issue && next.rank >= ShipmentStatus.shipped.rank)
    }
  }
}

/// A dispute of an order's payment (a chargeback, or an inquiry), as its gateway last reported it.
public struct DisputeRecord: Equatable, Sendable, WireObject {
  public var disputeId = ""
  public var createdAt = ""
  public var amount = ""
  public var reason = ""
  public var status = ""
  public var evidenceDueBy: String?
  /// What it took from the merchant, and gave back.
  public var fundsWithdrawn = ""
  public var fundsReinstated = ""

  public static let shape = ObjectShape<DisputeRecord>(
    blank: { DisputeRecord() },
    [
      .member("disputeId", \.disputeId, .required, .string("The gateway's dispute id (Stripe: dp_…).")),
      .member("createdAt", \.createdAt, .required, Shapes.timestamp),
      .member("amount", \.amount, .required, .string("The amount disputed.", pattern: MoneyText.pattern)),
      .member("reason", \.reason, .required, .string("Stripe's reason: fraudulent, product_not_received, …")),
      .member(
        "status", \.status, .required,
        .string(
          """
          Stripe's status: warning_needs_response, warning_under_review, warning_closed (an inquiry: no funds \
          move), needs_response, under_review, won, lost.
          """)),
      .member(
        "evidenceDueBy", \.evidenceDueBy, .optional,
        .string("When evidence is due (RFC 3339 UTC).", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")),
      .member(
        "fundsWithdrawn", \.fundsWithdrawn, .required,
        .string("Taken from the merchant when the chargeback opened.", pattern: MoneyText.pattern)),
      .member(
        "fundsReinstated", \.fundsReinstated, .required,
        .string("Given back when the dispute was won.", pattern: MoneyText.pattern)),
    ])

  init(_ row: DisputeRow, config: Config) {
    disputeId = row.disputeId
    createdAt = row.createdAt
    amount = config.format(row.amountMinor)
    reason = row.reason
    status = row.status
    evidenceDueBy = row.evidenceDueBy
    fundsWithdrawn = config.format(row.withdrawnMinor)
    fundsReinstated = config.format(row.reinstatedMinor)
  }

  init() {}
}

/// One thing that happened to an order.
public struct OrderEvent: Equatable, Sendable, WireObject {
  public var type = OrderEventRow.Kind.placed
  public var at = ""
  public var amount = ""
  /// The order id (placed), charge id (authorized; captured at once), or the client's captureId,
  /// cancelId or refundId.
  public var id = ""
  public var reason: String?

  public static let shape = ObjectShape<OrderEvent>(
    blank: { OrderEvent() },
    [
      .member("type", \.type), .member("at", \.at, .required, Shapes.timestamp),
      .member("amount", \.amount, .required, Shapes.amount), .member("id", \.id),
      .member(
        "reason", \.reason, .optional,
        .string("The reason given with a cancel or refund; a dispute's reason (opened) or outcome (closed)."),
        read: ParamReader.anyString),
    ])
}

extension OrderEvent {
  init(_ row: OrderEventRow, config: Config) {
    self.init(type: row.kind, at: row.at, amount: config.format(row.amountMinor), id: row.reference, reason: row.reason)
  }
}

/// Values payservice wrote to the store as JSON text, read back into their types. A value that does
/// not read is a store failure (-32001), never a silent default.
enum StoredJSON {
  static func read<Value: WireValue>(_ text: String, as type: Value.Type, _ what: String) throws(StoreError) -> Value {
    let reader = ParamReader()
    guard let value = try? JSONParser.parse(text), let read = Value.read(value, at: { what }, reader: reader) else {
      let problem = reader.errors.first.map { "\($0.path): \($0.message)" } ?? "not JSON"
      throw StoreError.unavailable(reason: "the store holds a \(what) payservice cannot read (\(problem))")
    }
    return read
  }
}

/// How an order belongs to an agreement: the checkout that made it, or one of its later payments.
public struct AgreementLink: Equatable, Sendable, WireObject {
  public enum Payment: String, Sendable, WireEnum {
    /// The checkout that made the agreement.
    case checkout
    /// A scheduled payment: a subscription's period (`period`), a pre-order's payment (period 0).
    case scheduled
    /// An automatic reload (`reloadId`).
    case reload
  }

  public var agreementId = ""
  public var payment = Payment.checkout
  public var period: Int?
  public var reloadId: String?

  public static let shape = ObjectShape<AgreementLink>(
    "The agreement the order made (payment checkout) or pays a later payment of.", blank: { AgreementLink() },
    [
      .member("agreementId", \.agreementId, .required, .string("From processOrder's order or listAgreements.", minLength: 1)),
      .member("payment", \.payment),
      .member("period", \.period, .optional, .integer(minimum: 0)),
      .member("reloadId", \.reloadId, .optional, .string("The reloadBalance request's reloadId.", minLength: 1)),
    ])
}
