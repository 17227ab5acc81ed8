import PayServiceCore
import PostgresNIO

/// What optimistic transactions read, without locks, with the row versions their batch checks
/// when it is applied (`PostgresBatch`): charge tokens with their authorizations, stock counts,
/// orders and journal entries (nil: no such row). One serves a transaction, or every member of a
/// group commit, so that the group reads ahead once.
final class PostgresReads {
  /// The tokens this store issued, which are known without a round trip.
  let issued: IssuedTokens

  init(issued: IssuedTokens) {
    self.issued = issued
  }

  private(set) var tokens: [String: (record: ChargeTokenRecord, version: String)?] = [:]
  private(set) var authorizations: [String: (authorization: PaymentAuthorization, version: String)?] = [:]
  private(set) var stock: [String: Int] = [:]
  private(set) var orders: [String: (state: OrderState, version: String, disputed: Bool)?] = [:]
  private(set) var entries: [ReadAhead.Entry: (row: OperationRow, version: String)?] = [:]

  /// Forgets what was read.
  func reset() {
    tokens = [:]
    authorizations = [:]
    stock = [:]
    orders = [:]
    entries = [:]
  }

  /// Forgets the issued tokens read: a batch refused may have read them stale.
  func forgetIssued() {
    for token in tokens.keys { issued.forget(token) }
  }

  /// Fetches, in one statement and without locks, the tokens (with their authorizations) and
  /// stock counts of `rows` not read yet. Tokens this store issued are known
  /// already (`IssuedTokens`): when every token is, nothing is read unless `stock` (a group, whose
  /// one read serves all its orders), and the stock is checked when the batch is applied instead
  /// (`shortages`, `decrementStock`).
  func readAhead(_ rows: ReadAhead, on session: PostgresSession, stock readStock: Bool = false) throws {
    // Read from requests before their params are checked: sets, so a hostile cart costs linear time.
    var seen: Set<String> = []
    let wantedOrders = rows.orders.filter { orders[$0] == nil && seen.insert($0).inserted }
    var seenEntries: Set<ReadAhead.Entry> = []
    let wantedEntries = rows.entries.filter { entries[$0] == nil && seenEntries.insert($0).inserted }
    // Each order's statement reads one journal entry as well.
    for (index, orderId) in wantedOrders.enumerated() {
      try readOrder(orderId, entry: index < wantedEntries.count ? wantedEntries[index] : nil, on: session)
    }
    for entry in wantedEntries.dropFirst(wantedOrders.count) { try readEntry(entry, on: session) }
    var wantedTokens: [String] = []
    seen = []
    for token in rows.tokens where tokens[token] == nil && seen.insert(token).inserted {
      if let known = issued.token(token) {
        tokens[token] = known
        if let authorizationId = known.record.authorizationId, authorizations[authorizationId] == nil,
          let authorization = issued.authorization(authorizationId)
        {
          authorizations[authorizationId] = authorization
        }
      } else {
        wantedTokens.append(token)
      }
    }
    if wantedTokens.isEmpty && !rows.tokens.isEmpty && !readStock { return }
    var wantedSkus: [String] = []
    seen = []
    for sku in rows.skus where stock[sku] == nil && seen.insert(sku).inserted { wantedSkus.append(sku) }
    guard !wantedTokens.isEmpty || !wantedSkus.isEmpty else { return }
    var binds = PostgresBindings()
    binds.append(wantedTokens)
    binds.append(wantedSkus)
    let rows = try session.run("SELECT * FROM payservice_read($1, $2)", binds).rows
    for token in wantedTokens { tokens[token] = .some(nil) }
    for sku in wantedSkus { stock[sku] = 0 }
    for (index, row) in rows.enumerated() {
      let (
        skus, quantities, token, binding, billing, card, issuedAt, amount, currency, outcome, expiresAt, usedAt,
        authorizationId, gatewayPaymentData, tokenVersion, heldId, transactionId, network, cardType, lastFour,
        heldAmount, heldCurrency, status, heldVersion
      ) = try row.columns(
        ([String]?, [Int64]?, String?, String?, String?, String?, String?, Int64?, String?, String?, Int64?, String?,
          String?, String?, String?, String?, String?, String?, String?, String?, Int64?, String?, String?, String?)
          .self)
      if index == 0, let skus, let quantities {
        for (sku, quantity) in zip(skus, quantities) { stock[sku] = Int(quantity) }
      }
      guard let token, let binding, let issuedAt, let amount, let currency, let outcome, let expiresAt,
        let tokenVersion
      else { continue }
      tokens[token] = (
        try ChargeTokenRecord(
          token: token, binding: binding, billingContact: billing, paymentMethod: card, issuedAt: issuedAt,
          amountMinor: amount, currencyCode: currency, sandboxOutcome: outcome, expiresAt: expiresAt,
          usedAt: usedAt, authorizationId: authorizationId, gatewayPaymentData: gatewayPaymentData),
        tokenVersion
      )
      if let authorizationId {
        if let heldId, let transactionId, let network, let cardType, let lastFour, let heldAmount, let heldCurrency,
          let status, let heldVersion
        {
          authorizations[heldId] = (
            PaymentAuthorization(
              authorizationId: heldId, transactionId: transactionId, network: network, cardType: cardType,
              lastFour: lastFour, amountMinor: heldAmount, currencyCode: heldCurrency,
              status: try PaymentAuthorization.Status(stored: status)),
            heldVersion
          )
        } else {
          authorizations[authorizationId] = .some(nil)
        }
      }
    }
  }

  /// Reads an authorization the batch does not know (one no token it read names).
  func readAuthorization(_ authorizationId: String, on session: PostgresSession) throws {
    var binds = PostgresBindings()
    binds.append(authorizationId)
    let row = try session.run(
      """
      SELECT \(StoreSQL.authorizationColumns), xmin::text FROM paymentAuthorization WHERE authorizationId = $1
      """, binds
    ).rows.first
    guard let row else {
      authorizations[authorizationId] = .some(nil)
      return
    }
    let (id, transactionId, network, cardType, lastFour, amount, currency, status, version) = try row.columns(
      (String, String, String, String, String, Int64, String, String, String).self)
    authorizations[authorizationId] = (
      PaymentAuthorization(
        authorizationId: id, transactionId: transactionId, network: network, cardType: cardType, lastFour: lastFour,
        amountMinor: amount, currencyCode: currency, status: try PaymentAuthorization.Status(stored: status)),
      version
    )
  }

  /// Reads an order as `lockOrder` does, without a lock, and the journal's `entry` (if any) in the
  /// same statement (`readOrderFunction`).
  func readOrder(_ orderId: String, entry: ReadAhead.Entry?, on session: PostgresSession) throws {
    var binds = PostgresBindings()
    binds.append(orderId)
    binds.append(entry?.kind)
    binds.append(entry?.key)
    let rows = try session.run("SELECT * FROM payservice_read_order($1, $2, $3)", binds).rows
    var read: (state: OrderState, version: String, disputed: Bool)?
    var lines: [OrderState.Line] = []
    var journal: (row: OperationRow, version: String)?
    for (index, row) in rows.enumerated() {
      let (
        chargeId, currency, status, amount, captured, refunded, shipping, shippingTax, shippingRefunded, outcome,
        authorizationId, gatewayPaymentId, taxIncluded, version, disputed, next, sku, quantity, lineAmount, discount,
        tax, refundedQuantity, kind, key, fingerprint, state, subject, request, result, created, settled, entryVersion
      ) = try row.columns(
        (String?, String?, String?, Int64?, Int64?, Int64?, Int64?, Int64?, Bool?, String?, String?, String?, Bool?,
          String?, Bool?, Int?, String?, Int?, Int64?, Int64?, Int64?, Int?, String?, String?, String?, String?,
          String?, String?, String?, String?, String?, String?).self)
      if index == 0 {
        if let kind, let key, let fingerprint, let state, let created, let entryVersion {
          journal = (
            OperationRow(
              kind: kind, key: key, fingerprint: fingerprint, state: try OperationRow.State(stored: state),
              subject: subject, request: request, result: result, created: created, settled: settled),
            entryVersion
          )
        }
        if let chargeId, let currency, let status, let amount, let refunded, let shippingRefunded, let outcome,
          let taxIncluded, let version, let disputed, let next
        {
          guard let sandboxOutcome = SandboxOutcome(rawValue: outcome) else {
            throw StoreError.unavailable(reason: "order \(orderId) was paid with a token of unknown sandboxOutcome")
          }
          read = (
            OrderState(
              orderId: orderId, chargeId: chargeId, currencyCode: currency, status: try OrderStatus(stored: status),
              amountMinor: amount, capturedMinor: captured, refundedMinor: refunded, shippingMinor: shipping,
              shippingTaxMinor: shippingTax, shippingRefunded: shippingRefunded, lines: [],
              sandboxOutcome: sandboxOutcome, authorizationId: authorizationId, nextEventPosition: next,
              gatewayPaymentId: gatewayPaymentId, taxIncluded: taxIncluded),
            version, disputed
          )
        }
      }
      if read != nil, let sku, let quantity, let lineAmount, let refundedQuantity {
        lines.append(
          OrderState.Line(
            sku: sku, quantity: quantity, amountMinor: lineAmount, discountMinor: discount, taxMinor: tax,
            refundedQuantity: refundedQuantity))
      }
    }
    read?.state.lines = lines
    orders[orderId] = .some(read)
    if let entry { entries[entry] = .some(journal) }
  }

  /// Reads the journal's entry for `entry`, without a lock.
  func readEntry(_ entry: ReadAhead.Entry, on session: PostgresSession) throws {
    var binds = PostgresBindings()
    binds.append(entry.kind)
    binds.append(entry.key)
    guard
      let found = try session.run(
        "SELECT \(StoreSQL.operationColumns), xmin::text FROM operation WHERE kind = $1 AND key = $2", binds
      ).rows.first
    else {
      entries[entry] = .some(nil)
      return
    }
    let (kind, key, fingerprint, state, subject, request, result, created, settled, version) = try found.columns(
      (String, String, String, String, String?, String?, String?, String, String?, String).self)
    entries[entry] = (
      OperationRow(
        kind: kind, key: key, fingerprint: fingerprint, state: try OperationRow.State(stored: state), subject: subject,
        request: request, result: result, created: created, settled: settled),
      version
    )
  }
}

/// The charge tokens (with their Apple Pay authorizations) this store issued, as committed, with
/// their row versions, so that an order paid with one reads nothing first: its batch checks the
/// version when applied. A token used, erased or purged since has another version (or none), the
/// batch is refused, and the order runs again as if the token were unknown here; so an entry can
/// be stale without harm. Bounded: the oldest go first. Used only with the store's lock held.
final class IssuedTokens {
  static let capacity = 4096

  /// The sequence number the next token this store issues is expected to take: one past the last
  /// it issued (nil before the first). Another issuer may have taken it since.
  var nextSequence: Int64?

  private var tokens: [String: (record: ChargeTokenRecord, version: String)] = [:]
  private var authorizations: [String: (authorization: PaymentAuthorization, version: String)] = [:]
  private var order: [String] = []
  private var first = 0

  func token(_ token: String) -> (record: ChargeTokenRecord, version: String)? { tokens[token] }

  func authorization(_ id: String) -> (authorization: PaymentAuthorization, version: String)? { authorizations[id] }

  func add(_ record: ChargeTokenRecord, version: String) {
    if tokens.updateValue((record, version), forKey: record.token) == nil { order.append(record.token) }
    while order.count - first > Self.capacity {
      forget(order[first])
      first += 1
    }
    if first > Self.capacity {
      order.removeFirst(first)
      first = 0
    }
  }

  func add(_ authorization: PaymentAuthorization, version: String) {
    authorizations[authorization.authorizationId] = (authorization, version)
  }

  func forget(_ token: String) {
    if let authorizationId = tokens.removeValue(forKey: token)?.record.authorizationId {
      authorizations[authorizationId] = nil
    }
  }
}

/// What a transaction issued, kept for `IssuedTokens` once it commits.
final class IssuedRows {
  var tokens: [(record: ChargeTokenRecord, version: String)] = []
  var authorizations: [(authorization: PaymentAuthorization, version: String)] = []
  /// One past the sequence number of the last token inserted.
  var nextSequence: Int64?
}
