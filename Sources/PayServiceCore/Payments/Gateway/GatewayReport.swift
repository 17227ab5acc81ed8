/// What a remote gateway (Stripe) reports of an order's money after the sale, and how the store
/// takes it in: a refund (made by payservice, or outside it, in the Dashboard), a dispute. The same
/// code applies an event's object (`processStripeEvent`) and an object a reconciliation listed
/// (`reconcileStripe`), so that hearing of a change twice, late, or both ways records it once.
///
/// Reports arrive in any order. A refund only moves forward (pending or requires_action, then
/// succeeded, then failed or canceled: a bank may return a refund days later); a dispute keeps the
/// report of its latest stage (`DisputeRow.Observation`). Every change of money is an order event,
/// written once, so the books (`payoutReport`) add up the same whatever the order of arrival.
public enum GatewayReport {
  /// A Stripe Refund object's members payservice reads.
  public struct Refund: Sendable, Equatable {
    /// Stripe's id (`re_…`).
    public var id: String
    public var amountMinor: Int64
    /// Its currency as Stripe writes it (`usd`); nil when the object names none.
    public var currency: String?
    public var status: String
    public var paymentIntent: String?
    /// When Stripe made it (its `created`).
    public var created: Int64
    /// `metadata[refund_id]`: payservice's own refunds carry it (and `metadata[order_id]`, which
    /// names no order here: anyone's PaymentIntent may carry it).
    public var refundId: String?

    /// Reads a `refund` object; nil when it is not one.
    public init?(_ value: JSONValue) {
      guard case .object(let object) = value, case .string("refund")? = object["object"],
        case .string(let id)? = object["id"], !id.isEmpty, let amount = GatewayReport.integer(object["amount"]),
        amount >= 0, let created = GatewayReport.time(object["created"])
      else { return nil }
      self.id = id
      amountMinor = amount
      self.created = created
      if case .string(let currency)? = object["currency"] { self.currency = currency }
      // A refund Stripe has not given a status yet is pending (`GatewayRefund.Status`).
      if case .string(let status)? = object["status"] { self.status = status } else { status = "pending" }
      paymentIntent = GatewayReport.id(object["payment_intent"])
      if case .object(let metadata)? = object["metadata"] {
        if case .string(let key)? = metadata["refund_id"] { refundId = key }
      }
    }

    /// pending and requires_action (0) before succeeded (1) before failed and canceled (2).
    static func rank(_ status: String?) -> Int {
      switch status {
      case nil, "succeeded": 1
      case "failed", "canceled": 2
      default: 0
      }
    }
  }

  /// A Stripe Dispute object's members payservice reads.
  public struct Dispute: Sendable, Equatable {
    /// Stripe's id (`dp_…`).
    public var id: String
    public var amountMinor: Int64
    public var currency: String?
    public var reason: String
    public var status: String
    public var paymentIntent: String?
    public var created: Int64
    /// `evidence_details.due_by`.
    public var dueBy: Int64?

    public init(
      id: String, amountMinor: Int64, currency: String?, reason: String, status: String, paymentIntent: String?,
      created: Int64, dueBy: Int64?
    ) {
      self.id = id
      self.amountMinor = amountMinor
      self.currency = currency
      self.reason = reason
      self.status = status
      self.paymentIntent = paymentIntent
      self.created = created
      self.dueBy = dueBy
    }

    /// Reads a `dispute` object; nil when it is not one.
    public init?(_ value: JSONValue) {
      guard case .object(let object) = value, case .string("dispute")? = object["object"],
        case .string(let id)? = object["id"], !id.isEmpty, let amount = GatewayReport.integer(object["amount"]),
        amount >= 0, let created = GatewayReport.time(object["created"]), case .string(let status)? = object["status"]
      else { return nil }
      self.id = id
      amountMinor = amount
      self.created = created
      self.status = status
      if case .string(let currency)? = object["currency"] { self.currency = currency }
      if case .string(let reason)? = object["reason"] { self.reason = reason } else { reason = "general" }
      paymentIntent = GatewayReport.id(object["payment_intent"])
      if case .object(let details)? = object["evidence_details"] { dueBy = GatewayReport.time(details["due_by"]) }
    }
  }

  /// What taking in a report changed.
  public enum Effect: String, Sendable, Equatable, WireEnum {
    case none
    /// A refund made outside payservice is on the order now.
    case refundRecorded = "refund_recorded"
    /// A refund the gateway had not settled went through.
    case refundSucceeded = "refund_succeeded"
    /// A refund failed or was canceled: its amount is off the order's refunds again.
    case refundFailed = "refund_failed"
    case disputeOpened = "dispute_opened"
    /// A newer stage or detail of an open dispute.
    case disputeUpdated = "dispute_updated"
    /// Won: its funds are back.
    case disputeWon = "dispute_won"
    /// Lost: its funds stay with the buyer.
    case disputeLost = "dispute_lost"
    /// An inquiry closed, or a dispute ended otherwise (`charge_refunded`, `prevented`).
    case disputeClosed = "dispute_closed"
    /// A payservice order's pending charge was sent again (`processStripeEvent`, `reconcileStripe`).
    case orderResumed = "order_resumed"
    /// The report does not fit the order (another currency, more than it captured or refunded, an
    /// amount past 10^15 minor units): recorded, and nothing changed.
    case refused
  }

  /// What a report did to which order; `retryLater` when it is about a refund payservice is still
  /// recording (its refundOrder waits for Stripe's answer): nothing changed, hear it again later.
  public enum Applied: Sendable, Equatable {
    case applied(orderId: String?, Effect)
    case retryLater(refundId: String)
    /// The report does not fit the order it is about (`Effect.refused`): nothing changed.
    case refused(orderId: String?, reason: String)
  }

  /// Why a report of `amountMinor` in `currency` cannot be taken in for `order`, at most `limit`
  /// (what the order has left to refund or dispute); nil when it can.
  static func misfit(_ what: String, amountMinor: Int64, currency: String?, order: OrderState, limit: Int64)
    -> String?
  {
    guard amountMinor <= MoneyText.maxMinorUnits else {
      return "the \(what)'s amount \(amountMinor) is past the 10^15 minor units any amount may have"
    }
    guard let currency, currency.lowercased() == order.currencyCode.lowercased() else {
      return "the \(what) is in \(currency ?? "no currency"), the order in \(order.currencyCode)"
    }
    guard amountMinor <= limit else {
      return "the \(what)'s amount \(amountMinor) is more than the \(max(0, limit)) minor units the order has left for it"
    }
    return nil
  }

  /// Takes in a refund report: settles a refund payservice made (found by `metadata[refund_id]`,
  /// else by Stripe's id), or records or moves forward a refund made outside payservice (amount
  /// only: no lines, no restock).
  public static func apply(_ report: Refund, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64)
    throws -> Applied
  {
    try walletChanged(applyRefund(report, transaction, context: context, now: now), transaction, context: context, now: now)
  }

  /// What changed an order changed its Wallet order too (`WalletOrderUpdates`).
  static func walletChanged(_ applied: Applied, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64)
    throws -> Applied
  {
    if case .applied(let orderId?, let effect) = applied, effect != .none {
      try WalletOrderUpdates.changed(orderId, transaction, context: context, now: now)
    }
    return applied
  }

  static func applyRefund(_ report: Refund, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64)
    throws -> Applied
  {
    let at = RFC3339.format(now)
    // A refund payservice knows: settled or moved forward once its amount and currency are the
    // recorded ones.
    func known(_ row: RefundRow, _ apply: () throws -> Effect) throws -> Applied {
      guard let order = try transaction.lockOrder(row.orderId) else { return .applied(orderId: nil, .none) }
      let differs =
        report.amountMinor == row.amountMinor
        ? nil : "the refund's amount \(report.amountMinor) is not the \(row.amountMinor) recorded"
      if let reason = misfit(
        "refund", amountMinor: report.amountMinor, currency: report.currency, order: order, limit: row.amountMinor)
        ?? differs
      {
        return .refused(orderId: row.orderId, reason: reason)
      }
      return .applied(orderId: row.orderId, try apply())
    }
    if let key = report.refundId {
      if let row = try transaction.refund(key), row.gatewayRefundId == report.id {
        return try known(row) { try settleOwn(row, report, transaction, at: at) }
      }
      if let entry = try transaction.operation(kind: RefundOrder.Refund.kind, key: key), entry.state == .pending {
        return .retryLater(refundId: key)
      }
    }
    if let row = try transaction.refund(gatewayRefundId: report.id) {
      let refund = try StoredJSON.read(row.document, as: RefundRecord.self, "refund")
      guard refund.origin == RefundRecord.gatewayOrigin else {
        return try known(row) { try settleOwn(row, report, transaction, at: at) }
      }
      return try known(row) { try moveOutside(row, refund, report, transaction, at: at) }
    }
    // Only through the order's own payment: metadata anyone's PaymentIntent may carry names no order.
    guard let orderId = try order(of: report.paymentIntent, transaction), let order = try transaction.lockOrder(orderId),
      let captured = order.capturedMinor
    else { return .applied(orderId: nil, .none) }
    if let reason = misfit(
      "refund", amountMinor: report.amountMinor, currency: report.currency, order: order,
      limit: captured - order.refundedMinor)
    {
      return .refused(orderId: orderId, reason: reason)
    }
    // Made outside payservice (or by a payservice whose store lost it): its money, once.
    let stripeStatus = GatewayReport.Refund.rank(report.status) == 1 ? nil : report.status
    var record = RefundRecord(
      refundId: report.id, createdAt: RFC3339.format(report.created), gatewayRefundId: report.id)
    record.amount = context.config.format(report.amountMinor)
    record.tax = context.config.format(0)
    record.status = stripeStatus
    record.origin = RefundRecord.gatewayOrigin
    var events = EventWriter(order: order, at: at)
    let position = events.next
    try events.write(.refunded, report.amountMinor, report.id, transaction)
    try transaction.insert(
      RefundRow(
        refundId: report.id, orderId: orderId, position: position, createdAt: record.createdAt,
        amountMinor: report.amountMinor, document: JSONWriter.string(record), gatewayRefundId: report.id))
    var refunded = order.refundedMinor + report.amountMinor
    if Refund.rank(stripeStatus) == 2 {
      try events.write(.refundFailed, report.amountMinor, report.id, transaction)
      refunded -= report.amountMinor
    }
    try transaction.updateOrder(
      orderId, status: OrderStatus.afterRefunds(refunded, of: captured), capturedMinor: order.capturedMinor,
      refundedMinor: refunded, shippingRefunded: order.shippingRefunded)
    return .applied(orderId: orderId, .refundRecorded)
  }

  /// Where a refund recorded as `pending` or `requires_action` ends at its gateway, for what
  /// hears of it later (Stripe's `refund.updated` / `refund.failed` events, a reconciliation).
  public enum RefundOutcome: Sendable, Equatable {
    case succeeded
    /// Failed or canceled: no money went back.
    case failed(status: String)
  }

  /// Settles a refund at what its gateway says of it later, found by its refundId (Stripe's
  /// `metadata[refund_id]`) and checked against the gateway's refund id. `succeeded` drops the
  /// marker of a refund recorded while its gateway had not decided (`pending`,
  /// `requires_action`). `failed` marks the refund with the gateway's status and takes its
  /// amount off the order's refunded money (the order's status follows), whether it was pending
  /// or had succeeded (a bank can return a refund days later), with a `refund_failed` event; the
  /// units it refunded stay refunded (and restocked: the goods came back). A failed refund stays failed: an
  /// older `succeeded` heard after it changes nothing. Returns false, changing nothing, when the
  /// refund is unknown, another gateway refund, or already where the outcome would put it; so an
  /// event heard twice settles once. Locks the order first.
  public static func settleRefund(
    refundId: String, gatewayRefundId: String, outcome: RefundOutcome, _ transaction: any StoreTransaction,
    at now: String
  ) throws -> Bool {
    guard let row = try transaction.refund(refundId), let order = try transaction.lockOrder(row.orderId) else {
      return false
    }
    var refund = try StoredJSON.read(row.document, as: RefundRecord.self, "refund")
    guard refund.gatewayRefundId == gatewayRefundId else { return false }
    let undecided = refund.status.map { RefundRecord.unsettledStatuses.contains($0) } ?? false
    switch outcome {
    case .succeeded where !undecided, .failed where !(undecided || refund.status == nil): return false
    default: break
    }
    switch outcome {
    case .succeeded:
      refund.status = nil
    case .failed(let status):
      refund.status = status
      let refunded = order.refundedMinor - row.amountMinor
      try transaction.updateOrder(
        order.orderId, status: OrderStatus.afterRefunds(refunded, of: order.capturedMinor ?? 0),
        capturedMinor: order.capturedMinor, refundedMinor: refunded, shippingRefunded: order.shippingRefunded)
      try transaction.insert(
        OrderEventRow(
          orderId: order.orderId, position: order.nextEventPosition, kind: .refundFailed, at: now,
          amountMinor: row.amountMinor, reference: refundId))
    }
    try transaction.updateRefund(refundId, document: JSONWriter.string(refund))
    return true
  }

  /// A refund payservice made, settled at what Stripe reports of it.
  static func settleOwn(_ row: RefundRow, _ report: Refund, _ transaction: any StoreTransaction, at: String) throws
    -> Effect
  {
    let outcome: RefundOutcome
    switch Refund.rank(report.status) {
    case 1: outcome = .succeeded
    case 2: outcome = .failed(status: report.status)
    default: return .none
    }
    guard
      try settleRefund(
        refundId: row.refundId, gatewayRefundId: report.id, outcome: outcome, transaction, at: at)
    else { return .none }
    return outcome == .succeeded ? .refundSucceeded : .refundFailed
  }

  /// A refund made outside payservice, moved forward to what Stripe reports (never back).
  static func moveOutside(
    _ row: RefundRow, _ refund: RefundRecord, _ report: Refund, _ transaction: any StoreTransaction, at: String
  ) throws -> Effect {
    let (old, new) = (Refund.rank(refund.status), Refund.rank(report.status))
    guard new > old, let order = try transaction.lockOrder(row.orderId) else { return .none }
    var updated = refund
    updated.status = new == 1 ? nil : report.status
    try transaction.updateRefund(row.refundId, document: JSONWriter.string(updated))
    guard new == 2 else { return .refundSucceeded }
    var events = EventWriter(order: order, at: at)
    try events.write(.refundFailed, row.amountMinor, row.refundId, transaction)
    let refunded = order.refundedMinor - row.amountMinor
    try transaction.updateOrder(
      order.orderId, status: OrderStatus.afterRefunds(refunded, of: order.capturedMinor ?? 0),
      capturedMinor: order.capturedMinor, refundedMinor: refunded, shippingRefunded: order.shippingRefunded)
    return .refundFailed
  }

  /// Takes in a dispute report `observed` at a stage and time: records it when new, else keeps the
  /// newer of what is known and what is reported. Each change of the funds it moved is an order event.
  public static func apply(
    _ report: Dispute, observed: DisputeRow.Observation, _ transaction: any StoreTransaction, context: ServiceContext,
    now: Int64
  ) throws -> Applied {
    try walletChanged(
      applyDispute(report, observed: observed, transaction, context: context, now: now), transaction, context: context,
      now: now)
  }

  static func applyDispute(
    _ report: Dispute, observed: DisputeRow.Observation, _ transaction: any StoreTransaction, context: ServiceContext,
    now: Int64
  ) throws -> Applied {
    let known = try transaction.dispute(report.id)
    guard let orderId = try known?.orderId ?? order(of: report.paymentIntent, transaction),
      let order = try transaction.lockOrder(orderId)
    else { return .applied(orderId: nil, .none) }
    if let reason = misfit(
      "dispute", amountMinor: report.amountMinor, currency: report.currency, order: order,
      limit: order.capturedMinor ?? order.amountMinor)
    {
      return .refused(orderId: orderId, reason: reason)
    }
    let funds = DisputeRow.funds(status: report.status, amountMinor: report.amountMinor)
    var row = DisputeRow(
      disputeId: report.id, orderId: orderId, createdAt: RFC3339.format(report.created),
      amountMinor: report.amountMinor, currencyCode: order.currencyCode, reason: report.reason, status: report.status,
      evidenceDueBy: report.dueBy.map(RFC3339.format), withdrawnMinor: funds.withdrawn,
      reinstatedMinor: funds.reinstated, observed: observed)
    var events = EventWriter(order: order, at: RFC3339.format(now))
    if let known {
      guard observed > known.observed else { return .applied(orderId: orderId, .none) }
      // What the dispute moved only grows: a report of an earlier stage never takes it back.
      row.withdrawnMinor = max(row.withdrawnMinor, known.withdrawnMinor)
      row.reinstatedMinor = max(row.reinstatedMinor, known.reinstatedMinor)
      var unchanged = row
      unchanged.observed = known.observed
      // Kept even when nothing else changed: a report older than this one must not win later.
      try transaction.save(row, isNew: false)
      guard unchanged != known else { return .applied(orderId: orderId, .none) }
      try events.writeFunds(from: known, to: row, transaction)
      if row.isClosed && !known.isClosed {
        try events.write(.disputeClosed, row.amountMinor, row.disputeId, transaction, reason: row.status)
        return .applied(orderId: orderId, closedEffect(row.status))
      }
      return .applied(orderId: orderId, .disputeUpdated)
    }
    try transaction.save(row, isNew: true)
    try events.write(.disputeOpened, row.amountMinor, row.disputeId, transaction, reason: row.reason)
    var none = row
    (none.withdrawnMinor, none.reinstatedMinor) = (0, 0)
    try events.writeFunds(from: none, to: row, transaction)
    if row.isClosed {
      try events.write(.disputeClosed, row.amountMinor, row.disputeId, transaction, reason: row.status)
      return .applied(orderId: orderId, closedEffect(row.status))
    }
    return .applied(orderId: orderId, .disputeOpened)
  }

  static func closedEffect(_ status: String) -> Effect {
    switch status {
    case "won": .disputeWon
    case "lost": .disputeLost
    default: .disputeClosed
    }
  }

  /// The order a gateway payment paid for: only its own payment names an order.
  static func order(of paymentIntent: String?, _ transaction: any StoreTransaction) throws -> String? {
    guard let paymentIntent else { return nil }
    return try transaction.orderId(gatewayPaymentId: paymentIntent)
  }

  /// An integer member (Stripe's amounts and times).
  static func integer(_ value: JSONValue?) -> Int64? {
    guard case .number(let text)? = value, text.utf8.count <= 18 else { return nil }
    return Int64(text)
  }

  /// A time member: seconds since 1970, up to the end of 9999 (what RFC 3339 writes).
  static func time(_ value: JSONValue?) -> Int64? {
    guard let seconds = integer(value), (0...253_402_300_799).contains(seconds) else { return nil }
    return seconds
  }

  /// An object's id, whether Stripe sent it as an id or expanded.
  static func id(_ value: JSONValue?) -> String? {
    switch value {
    case .string(let id)?: id
    case .object(let object)?: if case .string(let id)? = object["id"] { id } else { nil }
    default: nil
    }
  }

  /// Writes an order's events one after another from its next position.
  struct EventWriter {
    let orderId: String
    var next: Int
    let at: String

    init(order: OrderState, at: String) {
      orderId = order.orderId
      next = order.nextEventPosition
      self.at = at
    }

    mutating func write(
      _ kind: OrderEventRow.Kind, _ amountMinor: Int64, _ reference: String, _ transaction: any StoreTransaction,
      reason: String? = nil
    ) throws {
      try transaction.insert(
        OrderEventRow(
          orderId: orderId, position: next, kind: kind, at: at, amountMinor: amountMinor, reference: reference,
          reason: reason))
      next += 1
    }

    /// The funds a dispute moved between two reports, as events.
    mutating func writeFunds(from old: DisputeRow, to new: DisputeRow, _ transaction: any StoreTransaction) throws {
      if new.withdrawnMinor > old.withdrawnMinor {
        try write(.disputeFundsWithdrawn, new.withdrawnMinor - old.withdrawnMinor, new.disputeId, transaction)
      }
      if new.reinstatedMinor > old.reinstatedMinor {
        try write(.disputeFundsReinstated, new.reinstatedMinor - old.reinstatedMinor, new.disputeId, transaction)
      }
    }
  }
}

extension OrderStatus {
  /// A captured order's status once `refunded` of `captured` went back.
  static func afterRefunds(_ refunded: Int64, of captured: Int64) -> OrderStatus {
    refunded <= 0 ? .paid : refunded >= captured ? .refunded : .partiallyRefunded
  }
}
