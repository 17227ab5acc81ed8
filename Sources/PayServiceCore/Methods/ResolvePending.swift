/// The janitor: settles the work pending at the gateway that no answer and no report settled (a
/// charge, capture, cancel or refund whose answer was lost, or that the gateway accepted and never
/// reported on), by looking it up at the gateway, never by sending it again. Back office only
/// (`--back-office`); `payservice pending resolve`, for a timer.
public enum ResolvePending: RPCMethod {
  public static let name = "resolvePending"

  public static let documentation = MethodDocumentation(
    summary: "Settle work pending at the gateway for longer than a threshold by looking it up there.",
    description: """
      Goes through the work still pending at the gateway (a checkout's or an agreement's payment, a capture, \
      a cancel, a refund) recorded at least olderThanMinutes ago (default 60), oldest first, and looks each \
      up at the gateway without ever sending it again: Stripe's search for the order's PaymentIntent, the \
      PaymentIntent as it stands, its refunds. What the gateway shows is recorded as the call's own answer \
      would have been: outcome settled (answer says succeeded or the failure code: a payment made, or \
      declined; a refund done), released (the gateway shows the work was never done: a checkout's order \
      fails with its stock back; a capture, cancel or refund may be asked again under its key or a new \
      one), pending (no answer from the gateway, or still processing: the next run looks again), or \
      to_check (the gateway offers no lookup of such work: Adyen's Checkout API reads nothing back; the \
      message names the references to find in its Customer Area, and Adyen's notification settles the work \
      when it arrives). The same entry is never looked up twice in one run. One call looks up at most limit \
      entries (default 100): when cursor is not null, more may be waiting, and the same call with that \
      cursor goes on after the last one (the threshold stays the first call's). status is failed, with \
      settled, released, pending and toCheck count the outcomes.
      """,
    errors: [.storeUnavailable, .invalidParams], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  public static let defaultMinutes = 60
  /// At least a few minutes: a gateway's search lags a new payment (Stripe's by up to a minute),
  /// and work younger than that may still be answered.
  public static let minutes = 5...43_200
  public static let defaultLimit = 100
  /// Each entry's line is a few hundred bytes: no answer outgrows a line.
  public static let maxLimit = 500

  public struct Params: Sendable {
    public var olderThanMinutes = ResolvePending.defaultMinutes
    public var limit = ResolvePending.defaultLimit
    public var cursor: Cursor?
  }

  /// Where a call stopped at its limit: its threshold, and the last entry it looked at.
  public struct Cursor: KeysetCursor {
    public var createdBy: String
    public var after: OperationPosition

    public static let prefix = "rp1_"
    public static let method = ResolvePending.name
    public static let answerMember = "cursor"
    public var fields: [String] { [createdBy, after.created, after.kind, after.key] }

    public init(createdBy: String, after: OperationPosition) {
      self.createdBy = createdBy
      self.after = after
    }

    public init?(fields: [Substring]) {
      guard fields.count == 4, RFC3339.parse(String(fields[0])) != nil, fields.allSatisfy({ $0.utf8.count <= 255 })
      else { return nil }
      self.init(
        createdBy: String(fields[0]),
        after: OperationPosition(created: String(fields[1]), kind: String(fields[2]), key: String(fields[3])))
    }
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "olderThanMinutes", \.olderThanMinutes, .optional,
        .integer(
          "Look up work recorded at least this many minutes ago, 5 to 43200; default 60. With a cursor, the first call's threshold holds.",
          minimum: minutes.lowerBound, maximum: minutes.upperBound),
        read: { value, path, reader in reader.integer(value, path(), range: minutes) }),
      .member(
        "limit", \.limit, .optional,
        .integer("The most entries this call looks up, 1 to 500; default 100.", minimum: 1, maximum: maxLimit),
        read: { value, path, reader in reader.integer(value, path(), range: 1...maxLimit) }),
      .member("cursor", \.cursor, .optional),
    ])

  public enum Outcome: String, Sendable, WireEnum {
    case settled
    case released
    case pending
    case toCheck = "to_check"
  }

  /// One entry looked at.
  public struct Item: Equatable, Sendable, WireObject {
    /// The journal's kind: order, agreement_payment, capture, cancel, refund.
    public var kind = ""
    public var key = ""
    public var orderId: String?
    public var createdAt = ""
    public var outcome = Outcome.pending
    /// For settled: succeeded, or the answer's failure code.
    public var answer: String?
    /// For the others: why, and where to look.
    public var message: String?

    public static let shape = ObjectShape<Item>(
      blank: { Item() },
      [
        .member(
          "kind", \.kind, .required,
          .string("The work: order (a checkout's payment), agreement_payment, capture, cancel, or refund.")),
        .member("key", \.key, .required, .string("Its key: the charge token, captureId, cancelId, refundId or payment's key.")),
        .member("orderId", \.orderId, .optional, .string("The order the work is about.")),
        .member("createdAt", \.createdAt, .required, Shapes.timestamp),
        .member(
          "outcome", \.outcome, .required,
          .string(
            "settled (recorded as the gateway shows it), released (never done: the key is free again), pending (nothing final yet), or to_check (the gateway offers no lookup).",
            values: Outcome.allCases.map(\.rawValue))),
        .member(
          "answer", \.answer, .optional,
          .string("With settled: succeeded, or the failure code of the answer now kept under the key.")),
        .member(
          "message", \.message, .optional,
          .string("With released, pending and to_check: what the gateway showed, or where to check.")),
      ])
  }

  public struct Resolved: Equatable, Sendable, WireObject, MethodResult {
    public var createdBy = ""
    public var items: [Item] = []
    public var settled = 0
    public var released = 0
    public var pending = 0
    public var toCheck = 0
    public var cursor: Cursor?

    public static let shape = ObjectShape<Resolved>(
      blank: { Resolved() },
      [
        .member("createdBy", \.createdBy, .required, Shapes.timestamp),
        .member("items", \.items, .required, .array(Item.schema, "Each entry looked at, oldest first: at most limit.")),
        .member("settled", \.settled, .required, .integer(minimum: 0)),
        .member("released", \.released, .required, .integer(minimum: 0)),
        .member("pending", \.pending, .required, .integer(minimum: 0)),
        .member("toCheck", \.toCheck, .required, .integer(minimum: 0)),
        .member(
          "cursor", \.cursor, .alwaysOrNull,
          .string("Not null when this call stopped at limit: send it back as cursor to go on.", pattern: "^rp1_[0-9a-f]+$")),
      ])

    /// Work left pending or to check: what `payservice pending resolve`'s exit status says.
    public var failure: ResultFailure? {
      guard pending + toCheck > 0 else { return nil }
      return ResultFailure(
        status: "failed", code: "work_unresolved",
        message: "\(pending) pending, \(toCheck) to check of \(items.count) looked at",
        lines: items.filter { $0.outcome == .pending || $0.outcome == .toCheck }.map { "\($0.kind) \($0.key): \($0.outcome.rawValue)" })
    }
  }

  public typealias Result = Resolved

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let createdBy = params.cursor?.createdBy ?? RFC3339.format(context.clock.now() - Int64(params.olderThanMinutes) * 60)
    // One more than the limit says whether more follow.
    let page = try context.store.pendingOperations(createdBy: createdBy, after: params.cursor?.after, limit: params.limit + 1)
    var resolved = Resolved(createdBy: createdBy)
    for entry in page.prefix(params.limit) {
      var item = Item(kind: entry.kind, key: entry.key, orderId: entry.subject, createdAt: entry.created)
      switch try OperationRunner.resolve(entry, context: context) {
      case .settled(let failure):
        item.outcome = .settled
        item.answer = failure ?? "succeeded"
      case .released(let message): (item.outcome, item.message) = (.released, message)
      case .pending(let message): (item.outcome, item.message) = (.pending, message)
      case .toCheck(let message): (item.outcome, item.message) = (.toCheck, message)
      }
      resolved.items.append(item)
      switch item.outcome {
      case .settled: resolved.settled += 1
      case .released: resolved.released += 1
      case .pending: resolved.pending += 1
      case .toCheck: resolved.toCheck += 1
      }
    }
    if page.count > params.limit, let last = page.prefix(params.limit).last {
      resolved.cursor = Cursor(createdBy: createdBy, after: OperationPosition(last))
    }
    return resolved
  }
}
