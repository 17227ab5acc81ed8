/// Pages the recorded orders newest first. Back office only (`--back-office`).
public enum ListOrders: RPCMethod {
  public static let name = "listOrders"

  public static let documentation = MethodDocumentation(
    summary: "List orders newest first, filtered by status and creation time, a page at a time.",
    description: """
      Lists orders newest first (by createdAt, then orderId, both descending), limit per page (1 to 100, \
      default 20), pending ones (charged through a remote gateway whose answer is not recorded yet) \
      among them. status keeps one status; createdFrom (inclusive) and createdTo (exclusive) are RFC 3339 \
      times. nextCursor, when not null, fetches the next page when sent back as cursor with the same \
      filters: pages are cut by position (keyset), so an order placed while paging neither repeats nor \
      hides another. Changes nothing.
      """,
    errors: [.storeUnavailable], readOnly: true, idempotent: true)
  public static let usesStore = true

  public struct Params: Sendable {
    public var status: OrderStatus?
    /// RFC 3339 UTC to the second, rounded up from the time given (orders are stamped to the second).
    public var createdFrom: String?
    public var createdTo: String?
    public var limit = 20
    public var cursor: Cursor?
  }

  /// A position in the listing: the last order of a page. Opaque to clients (hex of its createdAt
  /// and orderId).
  public struct Cursor: KeysetCursor {
    public var createdAt: String
    public var orderId: String

    public static let prefix = "oc1_"
    public static let method = ListOrders.name
    public var fields: [String] { [createdAt, orderId] }

    public init(createdAt: String, orderId: String) {
      self.createdAt = createdAt
      self.orderId = orderId
    }

    public init?(fields: [Substring]) {
      guard fields.count == 2, RFC3339.parse(String(fields[0])) != nil, !fields[1].isEmpty else { return nil }
      self.init(createdAt: String(fields[0]), orderId: String(fields[1]))
    }
  }

  /// Reads a time bound: any RFC 3339 time, as the first whole second at or after it.
  static let readTime: MemberReader<String> = { value, path, reader in
    guard case .string(let text) = value, let seconds = RFC3339.parse(text) else {
      reader.fail(path(), "must be an RFC 3339 time like \"2026-11-21T12:00:00Z\"")
      return nil
    }
    // parse drops a fraction: a time past the whole second bounds from the next one.
    let fraction = text.utf8.dropFirst(19).prefix { $0 != UInt8(ascii: "Z") && $0 != UInt8(ascii: "z") && $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") }
    let pastTheSecond = fraction.contains { (0x31...0x39).contains($0) }
    return RFC3339.format(seconds + (pastTheSecond ? 1 : 0))
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member("status", \.status, .optional),
      .member("createdFrom", \.createdFrom, .optional, .string("Orders created at or after this RFC 3339 time."), read: readTime),
      .member("createdTo", \.createdTo, .optional, .string("Orders created before this RFC 3339 time."), read: readTime),
      .member(
        "limit", \.limit, .optional, .integer("Orders per page, 1 to 100; default 20.", minimum: 1, maximum: 100),
        read: { value, path, reader in reader.integer(value, path(), range: 1...100) }),
      .member("cursor", \.cursor, .optional),
    ],
    check: { params, reader in
      if let from = params.createdFrom, let to = params.createdTo, from >= to {
        reader.fail("createdTo", "must be after createdFrom")
      }
    })

  /// One order in the listing.
  public struct Summary: Equatable, Sendable, WireObject {
    public var orderId = ""
    public var createdAt = ""
    public var status = OrderStatus.paid
    public var amount = ""
    public var amountRefunded = ""
    public var currencyCode = ""
    public var itemCount = 1
    /// The agreement whose later payment the order is; nil for a checkout.
    public var agreementId: String?

    public static let shape = ObjectShape<Summary>(
      blank: { Summary() },
      [
        .member("orderId", \.orderId), .member("createdAt", \.createdAt, .required, Shapes.timestamp),
        .member("status", \.status), .member("amount", \.amount, .required, Shapes.amount),
        .member("amountRefunded", \.amountRefunded, .required, Shapes.amount),
        .member("currencyCode", \.currencyCode, .required, Shapes.currencyCode),
        .member("itemCount", \.itemCount, .required, .integer("Units across the order's lines.", minimum: 1)),
        .member(
          "agreementId", \.agreementId, .optional,
          .string("Present on an agreement's later payment (a renewal, a pre-order's payment, a reload).", minLength: 1)),
      ])
  }

  public struct Result: MethodResult, WireObject {
    public var orders: [Summary] = []
    public var nextCursor: Cursor?

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member("orders", \.orders, .required, .array(Summary.schema, "Newest first.")),
        .member(
          "nextCursor", \.nextCursor, .alwaysOrNull,
          .string("Send as cursor for the next page; null on the last page.", pattern: "^oc1_[0-9a-f]+$")),
      ])
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    // One more than a page tells whether another page follows.
    let query = OrderQuery(
      status: params.status, createdFrom: params.createdFrom, createdTo: params.createdTo,
      after: params.cursor.map { ($0.createdAt, $0.orderId) }, limit: params.limit + 1)
    var rows: [OrderSummaryRow] = []
    var entries: [OperationRow] = []
    switch params.status {
    case nil: (rows, entries) = try context.store.ordersAndPending(query)
    case .pending?: entries = try context.store.pendingOperations()
    default: rows = try context.store.orders(query)
    }
    if params.status == nil || params.status == .pending {
      // Pending charges are few (each resolves with its gateway's answer): read whole, filtered
      // and merged here in the listing's order (RFC 3339 and ids are ASCII: String order is byte order).
      let pending = try PendingOrders.among(entries).map(\.summary).filter(query.includes)
      if !pending.isEmpty {
        rows = Array(
          (rows + pending).sorted { ($0.createdAt, $0.orderId) > ($1.createdAt, $1.orderId) }.prefix(query.limit))
      }
    }
    let page = rows.prefix(params.limit)
    let config = context.config
    return Result(
      orders: page.map {
        Summary(
          orderId: $0.orderId, createdAt: $0.createdAt, status: $0.status, amount: config.format($0.amountMinor),
          amountRefunded: config.format($0.refundedMinor), currencyCode: $0.currencyCode, itemCount: $0.itemCount,
          agreementId: $0.agreementId)
      },
      nextCursor: rows.count > params.limit ? page.last.map { Cursor(createdAt: $0.createdAt, orderId: $0.orderId) } : nil)
  }
}

extension OrderQuery {
  /// Whether a pending order falls within the query's time bounds and after its cursor.
  func includes(_ pending: OrderSummaryRow) -> Bool {
    if let createdFrom, pending.createdAt < createdFrom { return false }
    if let createdTo, pending.createdAt >= createdTo { return false }
    if let after, (pending.createdAt, pending.orderId) >= (after.createdAt, after.orderId) { return false }
    return true
  }
}
