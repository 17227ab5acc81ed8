/// Pages agreements by next payment date. Back office only (`--back-office`).
public enum ListAgreements: RPCMethod {
  public static let name = "listAgreements"

  public static let documentation = MethodDocumentation(
    summary: "List agreements by next payment date, filtered by status, a page at a time.",
    description: """
      Lists agreements soonest next payment first (those with none scheduled last), then by agreementId, \
      limit per page (1 to 100, default 20). status keeps one status; dueBy (RFC 3339) keeps those with a \
      payment due at or before it. nextCursor, when not null, fetches the next page when sent back as cursor \
      with the same filters (keyset paging). Changes nothing.
      """,
    errors: [.storeUnavailable], readOnly: true, idempotent: true)
  public static let usesStore = true

  public struct Params: Sendable {
    public var status: AgreementStatus?
    public var dueBy: String?
    public var limit = 20
    public var cursor: Cursor?
  }

  /// A position in the listing: the last agreement of a page. Opaque to clients.
  public struct Cursor: KeysetCursor {
    public var nextPaymentAt: Int64?
    public var agreementId: String

    public static let prefix = "ac1_"
    public static let method = ListAgreements.name
    public var fields: [String] { [nextPaymentAt.map(String.init) ?? "", agreementId] }

    public init(nextPaymentAt: Int64?, agreementId: String) {
      self.nextPaymentAt = nextPaymentAt
      self.agreementId = agreementId
    }

    public init?(fields: [Substring]) {
      guard fields.count == 2, fields[0].isEmpty || Int64(fields[0]) != nil, !fields[1].isEmpty else { return nil }
      self.init(nextPaymentAt: Int64(fields[0]), agreementId: String(fields[1]))
    }
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member("status", \.status, .optional),
      .member(
        "dueBy", \.dueBy, .optional, .string("Agreements with a payment due at or before this RFC 3339 time."),
        read: ListOrders.readTime),
      .member(
        "limit", \.limit, .optional, .integer("Agreements per page, 1 to 100; default 20.", minimum: 1, maximum: 100),
        read: { value, path, reader in reader.integer(value, path(), range: 1...100) }),
      .member("cursor", \.cursor, .optional),
    ])

  public struct Result: MethodResult, WireObject {
    public var agreements: [AgreementDocument] = []
    public var nextCursor: Cursor?

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member("agreements", \.agreements, .required, .array(AgreementDocument.schema, "Soonest next payment first.")),
        .member(
          "nextCursor", \.nextCursor, .alwaysOrNull,
          .string("Send as cursor for the next page; null on the last page.", pattern: "^ac1_[0-9a-f]+$")),
      ])
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let rows = try context.store.agreements(
      AgreementQuery(
        status: params.status, dueBy: params.dueBy.flatMap(RFC3339.parse),
        after: params.cursor.map { AgreementCursor(nextPaymentAt: $0.nextPaymentAt, agreementId: $0.agreementId) },
        limit: params.limit + 1))
    let page = rows.prefix(params.limit)
    return Result(
      agreements: try page.map { row throws(StoreError) in try AgreementDocument(row, events: nil, config: context.config) },
      nextCursor: rows.count > params.limit
        ? page.last.map { Cursor(nextPaymentAt: $0.nextPaymentAt, agreementId: $0.agreementId) } : nil)
  }
}
