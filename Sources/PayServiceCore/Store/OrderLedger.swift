/// Where an order stands after the sale.
public enum OrderStatus: String, Sendable, WireEnum, StoredText {
  /// Sent to a remote gateway whose answer is not recorded yet: its stock is taken and its token
  /// used. Sending the same processOrder again (or the sweep at start-up) resolves it.
  case pending
  /// Placed with `gateway.capture: manual`: the money is held, not taken.
  case authorized
  /// Charged (or captured) and not refunded.
  case paid
  /// Part of the captured amount was refunded.
  case partiallyRefunded = "partially_refunded"
  /// The whole captured amount was refunded.
  case refunded
  /// Voided before capture: no money moved, every line restocked.
  case canceled
  /// Shown, never stored: a dispute of the payment is open, or was lost (see `DisputeRow`). The
  /// stored status underneath is where refunds left the order.
  case disputed

  public static let storedAs = "an order's status"
}

/// An order as the back office decides on it: its money, its lines and what was refunded of them,
/// read locked (see `StoreTransaction.lockOrder(_:)`).
public struct OrderState: Sendable {
  /// One line: what was sold, what the buyer paid for it, and how many units were refunded.
  public struct Line: Sendable {
    public var sku: String
    public var quantity: Int
    public var amountMinor: Int64
    /// The line's share of the coupon and card adjustment (positive reduces the line, negative is
    /// a surcharge) and its tax; nil for orders recorded before the store kept them (v4).
    public var discountMinor: Int64?
    public var taxMinor: Int64?
    public var refundedQuantity: Int

    public init(
      sku: String, quantity: Int, amountMinor: Int64, discountMinor: Int64?, taxMinor: Int64?, refundedQuantity: Int
    ) {
      self.sku = sku
      self.quantity = quantity
      self.amountMinor = amountMinor
      self.discountMinor = discountMinor
      self.taxMinor = taxMinor
      self.refundedQuantity = refundedQuantity
    }
  }

  public var orderId: String
  public var chargeId: String
  public var currencyCode: String
  public var status: OrderStatus
  /// The order's amount: what was authorized.
  public var amountMinor: Int64
  /// What was captured; nil while authorized (and for a canceled order).
  public var capturedMinor: Int64?
  public var refundedMinor: Int64
  /// The shipping charged and its tax; nil for orders recorded before v4.
  public var shippingMinor: Int64?
  public var shippingTaxMinor: Int64?
  public var shippingRefunded: Bool
  public var lines: [Line]
  /// The sandbox outcome of the charge token that paid for the order.
  public var sandboxOutcome: SandboxOutcome
  /// The Apple Pay authorization hold the order's token charged; nil for sandbox test tokens.
  public var authorizationId: String?
  /// The position the order's next event takes.
  public var nextEventPosition: Int
  /// The remote gateway's payment (Stripe's PaymentIntent); nil for orders the sandbox charged.
  public var gatewayPaymentId: String?
  /// The order was priced with tax included: its lines' and shipping's taxes are inside their amounts.
  public var taxIncluded: Bool

  public init(
    orderId: String, chargeId: String, currencyCode: String, status: OrderStatus,
    amountMinor: Int64, capturedMinor: Int64?, refundedMinor: Int64, shippingMinor: Int64?, shippingTaxMinor: Int64?,
    shippingRefunded: Bool, lines: [Line], sandboxOutcome: SandboxOutcome, authorizationId: String?,
    nextEventPosition: Int, gatewayPaymentId: String? = nil, taxIncluded: Bool = false
  ) {
    self.orderId = orderId
    self.chargeId = chargeId
    self.currencyCode = currencyCode
    self.status = status
    self.amountMinor = amountMinor
    self.capturedMinor = capturedMinor
    self.refundedMinor = refundedMinor
    self.shippingMinor = shippingMinor
    self.shippingTaxMinor = shippingTaxMinor
    self.shippingRefunded = shippingRefunded
    self.lines = lines
    self.sandboxOutcome = sandboxOutcome
    self.authorizationId = authorizationId
    self.nextEventPosition = nextEventPosition
    self.gatewayPaymentId = gatewayPaymentId
    self.taxIncluded = taxIncluded
  }
}

/// What happened to an order, in order: placed, authorized, captured, canceled, refunded; and
/// what its gateway reported later: a refund that failed, a dispute and the funds it moved.
public struct OrderEventRow: Sendable, Equatable {
  public enum Kind: String, Sendable, WireEnum, CaseIterable {
    case placed, authorized, captured, canceled, refunded
    /// A capture the gateway reported done failed later (Adyen's CAPTURE_FAILED after its CAPTURE):
    /// its amount is off the order again, which is authorized again.
    case captureFailed = "capture_failed"
    /// A refund came back from the bank (or was canceled): its amount is off the order again.
    case refundFailed = "refund_failed"
    case disputeOpened = "dispute_opened"
    case disputeFundsWithdrawn = "dispute_funds_withdrawn"
    case disputeFundsReinstated = "dispute_funds_reinstated"
    /// Won, lost (the reason says which), or an inquiry closed.
    case disputeClosed = "dispute_closed"
  }

  public var orderId: String
  /// 1, 2, … within the order.
  public var position: Int
  public var kind: Kind
  public var at: String
  public var amountMinor: Int64
  /// What the event concerns: the order, charge, capture, cancel or refund id.
  public var reference: String
  public var reason: String?

  public init(
    orderId: String, position: Int, kind: Kind, at: String, amountMinor: Int64, reference: String, reason: String? = nil
  ) {
    self.orderId = orderId
    self.position = position
    self.kind = kind
    self.at = at
    self.amountMinor = amountMinor
    self.reference = reference
    self.reason = reason
  }
}

/// A refund as stored: its money and its record (JSON text, as getOrder lists it).
public struct RefundRow: Sendable {
  public var refundId: String
  public var orderId: String
  /// The position of its `refunded` event: refunds are listed in that order.
  public var position: Int
  public var createdAt: String
  public var amountMinor: Int64
  public var document: String
  /// The gateway's refund id (Stripe's `re_…`, the sandbox's own); at most one row has each.
  public var gatewayRefundId: String?

  public init(
    refundId: String, orderId: String, position: Int, createdAt: String, amountMinor: Int64, document: String,
    gatewayRefundId: String? = nil
  ) {
    self.refundId = refundId
    self.orderId = orderId
    self.position = position
    self.createdAt = createdAt
    self.amountMinor = amountMinor
    self.document = document
    self.gatewayRefundId = gatewayRefundId
  }
}

/// A recorded order with where it stands now, as getOrder reads it.
public struct StoredOrder: Sendable {
  /// The order document processOrder recorded (JSON text).
  public var document: String
  public var status: OrderStatus
  public var capturedMinor: Int64?
  public var refundedMinor: Int64
  /// In position order.
  public var events: [OrderEventRow]
  /// The refund documents, oldest first (by when each was made, then in the order payservice
  /// heard of them): a refund made in the Dashboard lists where it was made, however late
  /// Stripe's event came.
  public var refunds: [String]
  /// Its payment's disputes, oldest first.
  public var disputes: [DisputeRow]

  public init(
    document: String, status: OrderStatus, capturedMinor: Int64?, refundedMinor: Int64, events: [OrderEventRow],
    refunds: [String], disputes: [DisputeRow] = []
  ) {
    self.document = document
    self.status = status
    self.capturedMinor = capturedMinor
    self.refundedMinor = refundedMinor
    self.events = events
    self.refunds = refunds
    self.disputes = disputes
  }
}

/// Which orders listOrders asks for: newest first (`createdAt`, then `orderId`, both descending),
/// after the position a cursor names.
public struct OrderQuery: Sendable, Equatable {
  public var status: OrderStatus?
  /// Inclusive lower bound, RFC 3339 UTC to the second (compared as text, as stored).
  public var createdFrom: String?
  /// Exclusive upper bound.
  public var createdTo: String?
  /// Only orders strictly after this one in the listing's order.
  public var after: (createdAt: String, orderId: String)?
  /// How many rows to return at most.
  public var limit: Int

  public init(
    status: OrderStatus? = nil, createdFrom: String? = nil, createdTo: String? = nil,
    after: (createdAt: String, orderId: String)? = nil, limit: Int
  ) {
    self.status = status
    self.createdFrom = createdFrom
    self.createdTo = createdTo
    self.after = after
    self.limit = limit
  }

  public static func == (a: OrderQuery, b: OrderQuery) -> Bool {
    a.status == b.status && a.createdFrom == b.createdFrom && a.createdTo == b.createdTo
      && a.after?.createdAt == b.after?.createdAt && a.after?.orderId == b.after?.orderId && a.limit == b.limit
  }
}

/// One order as listOrders lists it.
public struct OrderSummaryRow: Sendable, Equatable {
  public var orderId: String
  public var createdAt: String
  public var status: OrderStatus
  public var amountMinor: Int64
  public var refundedMinor: Int64
  public var currencyCode: String
  /// Units across the order's lines.
  public var itemCount: Int
  /// The agreement whose later payment the order is; nil for a checkout.
  public var agreementId: String?

  public init(
    orderId: String, createdAt: String, status: OrderStatus, amountMinor: Int64, refundedMinor: Int64,
    currencyCode: String, itemCount: Int, agreementId: String? = nil
  ) {
    self.agreementId = agreementId
    self.orderId = orderId
    self.createdAt = createdAt
    self.status = status
    self.amountMinor = amountMinor
    self.refundedMinor = refundedMinor
    self.currencyCode = currencyCode
    self.itemCount = itemCount
  }
}

/// A charge token to insert.
public struct NewChargeToken: Sendable {
  public var token: String
  public var sequence: Int64
  public var binding: String
  public var billingContact: String?
  public var paymentMethod: String?
  public var amountMinor: Int64
  public var currencyCode: String
  public var sandboxOutcome: SandboxOutcome
  public var issuedAt: String
  public var expiresAt: Int64
  public var authorizationId: String?
  /// What a remote gateway charges (a Stripe `tok_…` or `pm_…`); nil for the sandbox.
  public var gatewayPaymentData: String?
  /// The Wallet order's authentication token (`walletOrders:`), which the merchant's order web
  /// service checks; nil without Wallet order tracking.
  public var walletOrderToken: String? = nil
}

/// A charge to insert: succeeded, or failed with its codes.
public struct ChargeRow: Sendable {
  public var chargeId: String
  /// The charge token paid with; nil for a payment the merchant started from an agreement.
  public var token: String?
  public var succeeded: Bool
  public var failureCode: String?
  public var declineCode: String?
  public var amountMinor: Int64
  public var currencyCode: String
  public var createdAt: String
}

/// An order to insert, with its lines and how its amount splits across them (what refunds give back).
public struct OrderRow: Sendable {
  public struct Item: Sendable {
    public var sku: String
    public var quantity: Int
    public var unitPriceMinor: Int64
    public var amountMinor: Int64
    /// The line's share of the coupon and card adjustment (positive reduces it) and its tax.
    public var discountMinor: Int64
    public var taxMinor: Int64
  }

  public var orderId: String
  public var chargeId: String
  public var createdAt: String
  public var amountMinor: Int64
  public var currencyCode: String
  public var document: String
  public var items: [Item]
  public var status: OrderStatus
  /// What was captured: the amount when charged at once, nil while only authorized.
  public var capturedMinor: Int64?
  public var shippingMinor: Int64
  public var shippingTaxMinor: Int64
  /// The remote gateway's payment (Stripe's PaymentIntent `pi_…`); nil for the sandbox.
  public var gatewayPaymentId: String? = nil
  /// The amounts include their tax (`tax.pricesIncludeTax`): line and shipping taxes are contained
  /// in them, not added.
  public var taxIncluded = false
  /// The agreement this order pays a later payment of (a renewal, a pre-order's payment, a
  /// reload); nil for a checkout.
  public var agreementId: String? = nil
}
