// MARK: What the store reads outside a write transaction (`Store`)

extension StoreSQL {
  /// Every sku's stock, by sku.
  public static let stockLevels = StoreStatement { dialect in
    "SELECT sku, quantityOnHand, sold FROM stock ORDER BY sku\(dialect.collate)"
  }

  /// (sku, limit) Its stock changes by hand, newest first.
  public static let stockEvents = StoreStatement(
    "SELECT \(stockEventColumns) FROM stockEvent WHERE sku = ? ORDER BY position DESC LIMIT ?")

  /// (orderId) What getOrder shows of an order: its document and money, then its events in
  /// order, its refunds' documents (by when each was made) and its disputes (`disputesOfOrder`).
  public static let storedOrder = StoreStatement(
    #"SELECT document, status, capturedMinor, refundedMinor FROM "order" WHERE orderId = ?"#)
  public static let orderEvents = StoreStatement(
    "SELECT position, kind, at, amountMinor, reference, reason FROM orderEvent WHERE orderId = ? ORDER BY position")
  public static let refundDocuments = StoreStatement { dialect in
    "SELECT document FROM refund WHERE orderId = ? ORDER BY createdAt\(dialect.collate), position"
  }

  /// (agreementId) An agreement's events in order (the agreement itself: `agreement`).
  public static let agreementEvents = StoreStatement(
    "SELECT \(StoreSchema.agreementEventColumns) FROM agreementEvent WHERE agreementId = ? ORDER BY position")

  /// (by, after's date, after's date, after's id, limit) Agreements that still collect with a
  /// payment due at or before `by`, soonest first, after a cursor.
  public static let dueAgreements = dueAgreements(inShard: false)

  /// As `dueAgreements`, with the 16 last digits of a shard's ids before the limit (`AgreementShard`;
  /// the unused ones empty).
  public static let dueAgreementsInShard = dueAgreements(inShard: true)

  static func dueAgreements(inShard: Bool) -> StoreStatement {
    StoreStatement { dialect in
      """
      SELECT \(StoreSchema.agreementColumns) FROM agreement
      WHERE nextPaymentAt IS NOT NULL AND nextPaymentAt <= ? AND status IN ('active', 'past_due')
        AND (nextPaymentAt > ? OR (nextPaymentAt = ? AND agreementId\(dialect.collate) > ?))\(
          inShard
          ? "\n  AND substr(agreementId, length(agreementId), 1) IN (\(StoreStatement.placeholders(AgreementShard.maxParts)))"
          : "")
      ORDER BY nextPaymentAt, agreementId\(dialect.collate) LIMIT ?
      """
    }
  }

  /// The statement and its values for `Store.dueAgreements`.
  public static func dueAgreements(by: Int64, after: AgreementCursor?, limit: Int, shard: AgreementShard?) -> (
    statement: StoreStatement, values: [StoreValue]
  ) {
    let date = after?.nextPaymentAt ?? Int64.min
    var values: [StoreValue] = [.integer(by), .integer(date), .integer(date), .text(after?.agreementId ?? "")]
    guard let shard, shard.of > 1 else { return (dueAgreements, values + [.int(limit)]) }
    let digits = shard.lastDigits
    values += (0..<AgreementShard.maxParts).map { .text($0 < digits.count ? digits[$0] : "") }
    return (dueAgreementsInShard, values + [.int(limit)])
  }

  /// The orders `query` lists, newest first, as `dialect` writes it, and what it binds.
  public static func orders(_ query: OrderQuery, in dialect: StoreStatement.Dialect) -> (sql: String, values: [StoreValue]) {
    var conditions: [String] = []
    var values: [StoreValue] = []
    let collate = dialect.collate
    if let status = query.status {
      conditions.append("(\(StoreSchema.shownOrderStatus)) = ?")
      values.append(.text(status.rawValue))
    }
    if let from = query.createdFrom {
      conditions.append("o.createdAt\(collate) >= ?")
      values.append(.text(from))
    }
    if let to = query.createdTo {
      conditions.append("o.createdAt\(collate) < ?")
      values.append(.text(to))
    }
    if let after = query.after {
      conditions.append("(o.createdAt\(collate), o.orderId\(collate)) < (?, ?)")
      values += [.text(after.createdAt), .text(after.orderId)]
    }
    values.append(.int(query.limit))
    let sql = """
      SELECT o.orderId, o.createdAt, \(StoreSchema.shownOrderStatus), o.amountMinor, o.refundedMinor, o.currencyCode,
        (SELECT CAST(SUM(quantity) AS BIGINT) FROM orderItem i WHERE i.orderId = o.orderId), o.agreementId
      FROM "order" o \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
      ORDER BY o.createdAt\(collate) DESC, o.orderId\(collate) DESC LIMIT ?
      """
    return (dialect.placing(sql), values)
  }
}

extension StoreSQL {
  /// The agreements `query` lists (`StoreSchema.agreementListing`), as `dialect` writes it, and
  /// what it binds.
  public static func agreements(_ query: AgreementQuery, in dialect: StoreStatement.Dialect) -> (
    sql: String, values: [StoreValue]
  ) {
    var values: [StoreValue] = []
    if let status = query.status { values.append(.text(status.rawValue)) }
    if let dueBy = query.dueBy { values.append(.integer(dueBy)) }
    if let after = query.after {
      let date = after.nextPaymentAt ?? AgreementCursor.noDate
      values += [.integer(date), .integer(date), .text(after.agreementId)]
    }
    values.append(.int(query.limit))
    return (dialect.placing(StoreSchema.agreementListing(query, collate: dialect.collate) { _ in "?" }.sql), values)
  }
}
