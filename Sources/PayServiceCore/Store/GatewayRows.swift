/// Rows of what a remote gateway reports after the sale (migration v11): disputes, and refunds made
/// outside payservice, the same on every backend.

/// A dispute (chargeback or inquiry) of an order's payment, as its gateway last reported it.
///
/// Stripe delivers events at least once and in no set order, so each row keeps which report it
/// holds (`observed`): a report replaces it only when it is newer by `DisputeRow.Observation`'s order.
/// `withdrawnMinor` and `reinstatedMinor` are what the dispute has moved so far: each change of them
/// is an order event, and the store's books (`payoutReport`) add those events up.
public struct DisputeRow: Sendable, Equatable {
  /// Where a report stands in a dispute's life: a report of a later stage wins; within a stage the
  /// later report (event time, then event id) wins.
  public struct Observation: Sendable, Equatable, Comparable {
    /// `DisputeRow.rank(of:)` of the reported status.
    public var rank: Int
    /// The event's `created`, or the service clock for a reconciliation's read of the object.
    public var at: Int64
    /// The event id, or "reconcile".
    public var by: String

    public init(rank: Int, at: Int64, by: String) {
      self.rank = rank
      self.at = at
      self.by = by
    }

    public static func < (a: Observation, b: Observation) -> Bool {
      (a.rank, a.at, a.by) < (b.rank, b.at, b.by)
    }
  }

  /// Stripe's dispute id (`dp_…`).
  public var disputeId: String
  public var orderId: String
  /// When the gateway opened it (RFC 3339 UTC).
  public var createdAt: String
  public var amountMinor: Int64
  public var currencyCode: String
  /// Stripe's reason (`fraudulent`, `product_not_received`, …).
  public var reason: String
  /// Stripe's status (`warning_needs_response`, `needs_response`, `under_review`, `won`, `lost`, …).
  public var status: String
  /// When evidence is due (RFC 3339 UTC); nil when the gateway gave none.
  public var evidenceDueBy: String?
  /// Funds the dispute has taken from the merchant so far, and given back.
  public var withdrawnMinor: Int64
  public var reinstatedMinor: Int64
  public var observed: Observation

  public init(
    disputeId: String, orderId: String, createdAt: String, amountMinor: Int64, currencyCode: String, reason: String,
    status: String, evidenceDueBy: String?, withdrawnMinor: Int64, reinstatedMinor: Int64, observed: Observation
  ) {
    self.disputeId = disputeId
    self.orderId = orderId
    self.createdAt = createdAt
    self.amountMinor = amountMinor
    self.currencyCode = currencyCode
    self.reason = reason
    self.status = status
    self.evidenceDueBy = evidenceDueBy
    self.withdrawnMinor = withdrawnMinor
    self.reinstatedMinor = reinstatedMinor
    self.observed = observed
  }

  /// Statuses of a dispute still open: the merchant may respond, the outcome is not known.
  public static let openStatuses = ["warning_needs_response", "warning_under_review", "needs_response", "under_review"]
  /// Statuses that make an order show `disputed`: open, or lost.
  public static let disputingStatuses = openStatuses + ["lost"]
  /// Statuses of a chargeback whose charge Stripe refuses to refund (`charge_disputed`): open or
  /// lost. An inquiry may be refunded; that often ends it.
  public static let unrefundableStatuses = ["needs_response", "under_review", "lost"]

  /// A status's stage: an inquiry (warning_…) before a chargeback, response before review, review
  /// before the outcome. Unknown statuses rank lowest, so they never replace a known one.
  public static func rank(of status: String) -> Int {
    switch status {
    case "warning_needs_response": 1
    case "warning_under_review": 2
    case "warning_closed": 3
    case "needs_response": 4
    case "under_review": 5
    case "won", "lost", "charge_refunded", "prevented": 6
    default: 0
    }
  }

  /// What a dispute in `status` has taken from the merchant over its life, and given back: a
  /// chargeback (not an inquiry) withdraws its amount when it opens; winning it reinstates it.
  public static func funds(status: String, amountMinor: Int64) -> (withdrawn: Int64, reinstated: Int64) {
    switch status {
    case "needs_response", "under_review", "lost": (amountMinor, 0)
    case "won": (amountMinor, amountMinor)
    default: (0, 0)
    }
  }

  /// Whether the dispute is over: won, lost, or an inquiry closed.
  public var isClosed: Bool { Self.rank(of: status) == 6 || status == "warning_closed" }
}

/// Money an order's events moved, added up by day (UTC, `YYYY-MM-DD`), currency and kind: what the
/// books (`payoutReport`) are made of.
public struct MoneyMovementRow: Sendable, Equatable {
  public var day: String
  public var currencyCode: String
  /// `captured` (an order charged at once counts on its creation), `refunded`, `refund_failed`,
  /// `dispute_funds_withdrawn` or `dispute_funds_reinstated`.
  public var kind: OrderEventRow.Kind
  public var amountMinor: Int64

  public init(day: String, currencyCode: String, kind: OrderEventRow.Kind, amountMinor: Int64) {
    self.day = day
    self.currencyCode = currencyCode
    self.kind = kind
    self.amountMinor = amountMinor
  }
}

extension StoreSchema {
  /// Every order event kind, as migration v11's check lists them.
  public static var orderEventKindCheck: String {
    "CHECK (kind IN (" + OrderEventRow.Kind.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ") + "))"
  }

  /// Migration v11's statements both backends run as they are: the dispute table, refunds findable
  /// by the gateway's id (at most one row each, so that a refund heard of twice is recorded once),
  /// and orders findable by the gateway's payment.
  public static let gatewayMoneyTables = [
    """
    CREATE TABLE dispute (
      disputeId TEXT PRIMARY KEY NOT NULL,
      orderId TEXT NOT NULL REFERENCES "order"(orderId),
      createdAt TEXT NOT NULL,
      amountMinor BIGINT NOT NULL CHECK (amountMinor >= 0),
      currencyCode TEXT NOT NULL,
      reason TEXT NOT NULL,
      status TEXT NOT NULL,
      evidenceDueBy TEXT,
      withdrawnMinor BIGINT NOT NULL CHECK (withdrawnMinor >= 0),
      reinstatedMinor BIGINT NOT NULL CHECK (reinstatedMinor >= 0),
      observedRank BIGINT NOT NULL,
      observedAt BIGINT NOT NULL,
      observedBy TEXT NOT NULL
    )
    """,
    "CREATE INDEX disputeByOrder ON dispute (orderId, createdAt, disputeId)",
    "ALTER TABLE refund ADD COLUMN gatewayRefundId TEXT",
    #"CREATE INDEX orderByGatewayPayment ON "order" (gatewayPaymentId)"#,
  ]

  /// After the refunds' gateway ids are filled in: one row per gateway refund.
  public static let refundByGatewayRefundIndex = "CREATE UNIQUE INDEX refundByGatewayRefund ON refund (gatewayRefundId)"

  /// The status an order shows: `disputed` while a dispute is open or after one was lost,
  /// else its stored status. `o` is the order's alias.
  public static let shownOrderStatus = """
    CASE WHEN EXISTS (SELECT 1 FROM dispute d WHERE d.orderId = o.orderId AND d.status IN (\
    \(DisputeRow.disputingStatuses.map { "'\($0)'" }.joined(separator: ", ")))) THEN 'disputed' ELSE o.status END
    """

  /// The columns a dispute row is read with, in `DisputeRow`'s order.
  public static let disputeColumns = """
    disputeId, orderId, createdAt, amountMinor, currencyCode, reason, status, evidenceDueBy, withdrawnMinor, \
    reinstatedMinor, observedRank, observedAt, observedBy
    """

  /// The money events the books add up, as SQL text.
  public static let moneyEventKinds = [
    OrderEventRow.Kind.captured, .captureFailed, .refunded, .refundFailed, .disputeFundsWithdrawn, .disputeFundsReinstated,
  ].map { "'\($0.rawValue)'" }.joined(separator: ", ")

  /// The books' query, with `?` placeholders (from, to, from, to), RFC 3339 text bounds: the money
  /// events in the range, and the orders charged at once (their capture has no event row: it is
  /// the order's creation) created in it.
  public static func moneyMovementsQuery(placeholders: [String], collate: String) -> String {
    """
    SELECT substr(e.at, 1, 10), o.currencyCode, e.kind, CAST(SUM(e.amountMinor) AS BIGINT)
    FROM orderEvent e JOIN "order" o ON o.orderId = e.orderId
    WHERE e.kind IN (\(moneyEventKinds)) AND e.at\(collate) >= \(placeholders[0]) AND e.at\(collate) < \(placeholders[1])
    GROUP BY substr(e.at, 1, 10), o.currencyCode, e.kind
    UNION ALL
    SELECT substr(o.createdAt, 1, 10), o.currencyCode, 'captured', CAST(SUM(o.capturedMinor) AS BIGINT)
    FROM "order" o
    WHERE o.capturedMinor IS NOT NULL AND o.createdAt\(collate) >= \(placeholders[2])
      AND o.createdAt\(collate) < \(placeholders[3])
      AND NOT EXISTS (SELECT 1 FROM orderEvent c WHERE c.orderId = o.orderId AND c.kind = 'captured')
    GROUP BY substr(o.createdAt, 1, 10), o.currencyCode
    """
  }
}
