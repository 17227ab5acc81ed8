/// Catches up with Stripe: lists the PaymentIntents, refunds and disputes Stripe made since a time
/// (its list APIs, every page) and takes each in as its webhook event would have been
/// (`GatewayReport`), so that events the endpoint missed (an outage, a store restored from a backup)
/// are caught up. Back office only (`--back-office`); `payservice stripe reconcile --since T`.
public enum ReconcileStripe: RPCMethod {
  public static let name = "reconcileStripe"

  public static let documentation = MethodDocumentation(
    summary: "Catch up with Stripe: take in the payments, refunds and disputes made since a time.",
    description: """
      Lists, with Stripe's list APIs (created at or after since), the PaymentIntents, refunds and disputes, \
      and takes each in as its webhook event would be (processStripeEvent): a PaymentIntent of an \
      order still pending sends its pending charge again, as recovery would; a refund payservice made is \
      settled at its status, and one made outside payservice (the Dashboard) is put on its order (amount \
      only); a dispute shows on its order at its current status. Nothing is taken in twice and nothing \
      moves back: running it again changes nothing. One call reads at most limit objects (default 500), \
      PaymentIntents, then refunds, then disputes, each list newest first, and takes them in oldest first; \
      when more remain, cursor says where the next call goes on (send it back as cursor). The lists are \
      read with no transaction open, and a list that cannot be read takes nothing of the call in; each \
      object is taken in by a short transaction of its own. Answers what it listed and what it changed, \
      order by order, and how many changes of each effect. Objects of other systems (no order of this \
      store) are counted and left alone. A \
      refund created before since that changed after it is not listed: reconcile from the oldest refund \
      that may still change (Stripe gives up on refunds within 30 days).
      """,
    errors: [.storeUnavailable], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  public static let defaultLimit = 500
  public static let maxLimit = 2000

  public struct Params: Sendable {
    public var since: String?
    public var limit = ReconcileStripe.defaultLimit
    public var cursor: Cursor?
  }

  /// Where a call stopped at its limit: the since it reconciles from, the list it was reading, and
  /// the last object of it taken in.
  public struct Cursor: KeysetCursor {
    public var since: Int64
    public var kind: GatewayListKind
    public var after: String?

    public static let prefix = "rc1_"
    public static let method = ReconcileStripe.name
    public static let answerMember = "cursor"
    public var fields: [String] { [String(since), kind.rawValue, after ?? ""] }

    public init(since: Int64, kind: GatewayListKind, after: String?) {
      self.since = since
      self.kind = kind
      self.after = after
    }

    public init?(fields: [Substring]) {
      guard fields.count == 3, let since = Int64(fields[0]), let kind = GatewayListKind(rawValue: String(fields[1])),
        fields[2].utf8.count <= 255
      else { return nil }
      self.init(since: since, kind: kind, after: fields[2].isEmpty ? nil : String(fields[2]))
    }
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "since", \.since, .optional,
        .string("Take in what Stripe made at or after this RFC 3339 time; required without cursor.", minLength: 1),
        read: ListOrders.readTime),
      .member(
        "limit", \.limit, .optional,
        .integer("The most objects this call reads, 1 to 2000; default 500.", minimum: 1, maximum: maxLimit),
        read: { value, path, reader in reader.integer(value, path(), range: 1...maxLimit) }),
      .member("cursor", \.cursor, .optional),
    ],
    check: { params, reader in
      switch (params.since, params.cursor) {
      case (nil, nil): reader.fail("since", "is required without cursor")
      case (let since?, let cursor?) where RFC3339.parse(since) != cursor.since:
        reader.fail("since", "must be the cursor's since \(RFC3339.format(cursor.since)), or left out to go on from the cursor")
      default: break
      }
    })

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
    public var effects: [EffectCount<GatewayReport.Effect>] = []
    public var cursor: Cursor?

    public static let shape = ObjectShape<Reconciled>(
      blank: { Reconciled() },
      [
        .constant("status", "succeeded"), .member("since", \.since, .required, Shapes.timestamp),
        .member("listed", \.listed),
        .member(
          "orders", \.orders, .required,
          .array(OrderChanges.schema, "The orders it changed, by orderId; empty when everything was known already.")),
        .member(
          "effects", \.effects, .required,
          .array(
            EffectCount<GatewayReport.Effect>.schema,
            "How many changes of each effect, in the order of the effects above; empty when nothing changed.")),
        .member(
          "cursor", \.cursor, .alwaysOrNull,
          .string(
            "Not null when Stripe lists more than this call read: send it back as cursor to go on.",
            pattern: "^rc1_[0-9a-f]+$")),
      ])
  }

  public typealias Result = Outcome<Reconciled, Failed>

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    guard let calls = context.gatewayCalls else {
      return .failed(
        Failed(failureCode: .notConfigured, message: "This payservice's gateway is not Stripe: there is nothing to reconcile."))
    }
    // readTime made it a whole-second RFC 3339 time; the params' check made one of the two given.
    let since = params.cursor?.since ?? params.since.flatMap(RFC3339.parse) ?? 0
    // This call's pages first, with no transaction open: a list that cannot be read takes nothing in.
    var lists: [GatewayListKind: [JSONValue]] = [:]
    var read = 0
    var position: (kind: GatewayListKind, after: String?)? = params.cursor.map { ($0.kind, $0.after) } ?? (.paymentIntents, nil)
    while let (kind, after) = position, read < params.limit {
      let limit = min(params.limit - read, GatewayListKind.pageSize)
      switch calls.run({ gateway in await gateway.list(kind, createdSince: since, startingAfter: after, limit: limit) }) {
      case .succeeded(let page):
        let objects = page.objects.prefix(limit)
        lists[kind, default: []] += objects
        read += objects.count
        if page.more || objects.count < page.objects.count, case .object(let last)? = objects.last,
          case .string(let id)? = last["id"]
        {
          position = (kind, id)
        } else {
          let kinds = GatewayListKind.allCases
          let next = kinds.firstIndex(of: kind).map { $0 + 1 } ?? kinds.count
          position = next < kinds.count ? (kinds[next], nil) : nil
        }
      case .declined(let decline):
        return .failed(Failed(message: "Stripe refused to list \(kind.rawValue): \(decline.message)"))
      case .refused(let refusal):
        return .failed(Failed(message: "Stripe refused to list \(kind.rawValue): \(refusal.message)"))
      case .unanswered(let reason):
        return .failed(Failed(message: "Stripe did not answer the list of \(kind.rawValue) (\(reason)); nothing was taken in."))
      case .accepted:
        return .failed(Failed(message: "Stripe did not list \(kind.rawValue); nothing was taken in."))
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
        },
        effects: EffectCount.counts(changes.values.joined().map(\.effect)),
        cursor: position.map { Cursor(since: since, kind: $0.kind, after: $0.after) }))
  }
}
