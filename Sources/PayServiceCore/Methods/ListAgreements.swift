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
  public struct Cursor: Equatable, Sendable, WireValue {
    public var nextPaymentAt: Int64?
    public var agreementId: String

    static let prefix = "ac1_"

    public static var schema: JSONSchema {
      .string("A nextCursor from listAgreements.", pattern: "^ac1_[0-9a-f]+$")
    }

    public static func read(_ value: JSONValue, at path: () -> String, reader: ParamReader) -> Cursor? {
      guard case .string(let text) = value, text.hasPrefix(prefix),
        let bytes = Hex.decode(String(text.dropFirst(prefix.count))),
        let decoded = String(validating: bytes, as: UTF8.self),
        case let parts = decoded.split(separator: "\u{1F}", omittingEmptySubsequences: false), parts.count == 2,
        parts[0].isEmpty || Int64(parts[0]) != nil, !parts[1].isEmpty
      else {
        reader.fail(path(), "must be a nextCursor listAgreements returned")
        return nil
      }
      return Cursor(nextPaymentAt: Int64(parts[0]), agreementId: String(parts[1]))
    }

    public func write(to writer: inout JSONWriter) {
      writer.write(Self.prefix + Hex.encode(Array("\(nextPaymentAt.map(String.init) ?? "")\u{1F}\(agreementId)".utf8)))
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
