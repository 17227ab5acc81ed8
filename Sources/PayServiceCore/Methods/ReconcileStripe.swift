/// Catches up with Stripe: lists the PaymentIntents, refunds and disputes Stripe made since a time
/// (its list APIs, every page) and takes each in as its webhook event would have been
/// (`GatewayReport`), so that events the endpoint missed (an outage, a store restored from a backup)
/// are caught up. Back office only (`--back-office`); `payservice stripe reconcile --since T`.
public enum ReconcileStripe: RPCMethod {
  public static let name = "reconcileStripe"

  public static let documentation = MethodDocumentation(
    summary: "Catch up with Stripe: take in the payments, refunds and disputes made since a time.",
    description: """
      Lists, with Stripe's list APIs (every page, created at or after since), the PaymentIntents, refunds and \
      disputes, and takes each in as its webhook event would be (processStripeEvent): a PaymentIntent of an \
      order still pending sends its pending charge again, as recovery would; a refund payservice made is \
      settled at its status, and one made outside payservice (the Dashboard) is put on its order (amount \
      only); a dispute shows on its order at its current status. Nothing is taken in twice and nothing \
      moves back: running it again changes nothing. The lists are read with no transaction open; each \
      object is taken in by a short transaction of its own. Answers what it listed and what it changed, \
      order by order. Objects of other systems (no order of this store) are counted and left alone. A \
      refund created before since that changed after it is not listed: reconcile from the oldest refund \
      that may still change (Stripe gives up on refunds within 30 days).
      """,
    errors: [.storeUnavailable], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  public struct Params: Sendable {
    public var since = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "since", \.since, .required,
        .string("Take in what Stripe made at or after this RFC 3339 time.", minLength: 1), read: ListOrders.readTime)
    ])

  public enum FailureCode: String, Sendable, WireEnum {
    /// This payservice's gateway is not Stripe.
    case notConfigured = "not_configured"
    /// A list could not be read (Stripe unreachable, or refused it); nothing was taken in.
    case gatewayUnavailable = "gateway_unavailable"
  }

  public struct Failed: Equatable, Sendable, WireObject, FailureReporting {
    public var failureCode = FailureCode.gatewayUnavailable
    public var message = ""

    public static let shape = ObjectShape<Failed>(
      blank: { Failed() },
      [
        .constant("status", "failed"), .member("failureCode", \.failureCode),
        .member("message", \.message, .required, .string("What went wrong."), read: ParamReader.anyString),
      ])

    public var report: ResultFailure { ResultFailure(status: "failed", code: failureCode.rawValue, message: message) }
  }

  /// How many objects of each kind Stripe listed.
  public struct Listed: Equatable, Sendable, WireObject {
    public var paymentIntents = 0
    public var refunds = 0
    public var disputes = 0

    public static let shape = ObjectShape<Listed>(
      blank: { Listed() },
      [
        .member("paymentIntents", \.paymentIntents, .required, .integer(minimum: 0)),
        .member("refunds", \.refunds, .required, .integer(minimum: 0)),
        .member("disputes", \.disputes, .required, .integer(minimum: 0)),
      ])
  }

  /// One change to an order: which Stripe object, and what it did.
  public struct Change: Equatable, Sendable, WireObject {
    public var object = ""
    public var effect = GatewayReport.Effect.none

    public static let shape = ObjectShape<Change>(
      blank: { Change() },
      [
        .member("object", \.object, .required, .string("The Stripe object's id (pi_…, re_…, dp_…).")),
        .member(
          "effect", \.effect, .required,
          .string(
            "As processStripeEvent's effect: order_resumed, refund_recorded, refund_succeeded, refund_failed, dispute_opened, dispute_updated, dispute_won, dispute_lost, dispute_closed, or refused (the object does not fit the order: nothing changed).",
            values: GatewayReport.Effect.allCases.filter { $0 != .none }.map(\.rawValue))),
      ])
  }

  public struct OrderChanges: Equatable, Sendable, WireObject {
    public var orderId = ""
    public var changes: [Change] = []

    public static let shape = ObjectShape<OrderChanges>(
      blank: { OrderChanges() },
      [
        .member("orderId", \.orderId),
        .member("changes", \.changes, .required, .array(Change.schema, "In the order they were made.", minItems: 1)),
      ])
  }

  public struct Reconciled: Equatable, Sendable, WireObject {
    public var since = ""
    public var listed = Listed()
    public var orders: [OrderChanges] = []

    public static let shape = ObjectShape<Reconciled>(
      blank: { Reconciled() },
      [
        .constant("status", "succeeded"), .member("since", \.since, .required, Shapes.timestamp),
        .member("listed", \.listed),
        .member(
          "orders", \.orders, .required,
          .array(OrderChanges.schema, "The orders it changed, by orderId; empty when everything was known already.")),
      ])
  }

  public typealias Result = Outcome<Reconciled, Failed>

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    guard let calls = context.gatewayCalls else {
      return .failed(
        Failed(failureCode: .notConfigured, message: "This payservice's gateway is not Stripe: there is nothing to reconcile."))
    }
    // readTime made it a whole-second RFC 3339 time.
    let since = RFC3339.parse(params.since) ?? 0
    // Every list first, with no transaction open: a list that cannot be read takes nothing in.
    var lists: [GatewayListKind: [JSONValue]] = [:]
    for kind in GatewayListKind.allCases {
      switch calls.run({ gateway in await gateway.list(kind, createdSince: since) }) {
      case .succeeded(let objects): lists[kind] = objects
      case .declined(let decline):
        return .failed(Failed(message: "Stripe refused to list \(kind.rawValue): \(decline.message)"))
      case .refused(let refusal):
        return .failed(Failed(message: "Stripe refused to list \(kind.rawValue): \(refusal.message)"))
      case .unanswered(let reason):
        return .failed(Failed(message: "Stripe did not answer the list of \(kind.rawValue) (\(reason)); nothing was taken in."))
      }
    }
    var changes: [String: [Change]] = [:]
    func note(_ applied: GatewayReport.Applied, _ object: String) {
      switch applied {
      case .applied(let orderId?, let effect) where effect != .none:
        changes[orderId, default: []].append(Change(object: object, effect: effect))
      case .refused(let orderId?, _):
        // Listed, and not taken in: it does not fit the order (`GatewayReport.misfit`).
        changes[orderId, default: []].append(Change(object: object, effect: .refused))
      default: break
      }
    }
    // Stripe lists newest first; taken in oldest first, as they happened. Only a PaymentIntent of
    // an order with work pending (read once) is looked at further.
    let pending = Set(try context.store.pendingOperations().compactMap(\.subject))
    for intent in (lists[.paymentIntents] ?? []).reversed() {
      guard case .object(let object) = intent, case .string(let id)? = object["id"],
        case .object(let metadata)? = object["metadata"], case .string(let orderId)? = metadata["order_id"],
        pending.contains(orderId)
      else { continue }
      let resumed = try OperationRunner.resumable(subject: orderId, context: context)
      guard !resumed.isEmpty else { continue }
      try OperationRunner.complete(resumed)
      changes[orderId, default: []].append(Change(object: id, effect: .orderResumed))
    }
    for value in (lists[.refunds] ?? []).reversed() {
      guard let refund = GatewayReport.Refund(value) else { continue }
      note(
        try context.store.write { transaction in
          try GatewayReport.apply(refund, transaction, context: context, now: context.clock.now())
        }, refund.id)
    }
    for value in (lists[.disputes] ?? []).reversed() {
      guard let dispute = GatewayReport.Dispute(value) else { continue }
      let now = context.clock.now()
      // Read now: newer than any event sent before it at the same stage.
      let observed = DisputeRow.Observation(rank: DisputeRow.rank(of: dispute.status), at: now, by: "reconcile")
      note(
        try context.store.write { transaction in
          try GatewayReport.apply(dispute, observed: observed, transaction, context: context, now: now)
        }, dispute.id)
    }
    return .succeeded(
      Reconciled(
        since: RFC3339.format(since),
        listed: Listed(
          paymentIntents: lists[.paymentIntents]?.count ?? 0, refunds: lists[.refunds]?.count ?? 0,
          disputes: lists[.disputes]?.count ?? 0),
        orders: changes.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map {
          OrderChanges(orderId: $0, changes: changes[$0] ?? [])
        }))
  }
}
