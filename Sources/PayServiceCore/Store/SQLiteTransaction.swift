import GRDB

/// The store's statements on SQLite, inside a transaction `SQLiteStore` opened. The write lock is
/// the whole store's and is held from the transaction's start, so reads need no row locks.
struct SQLiteTransaction: StoreTransaction {
  let db: Database

  func chargeToken(_ token: String) throws -> ChargeTokenRecord? {
    // Columns by position (named lookups showed in order profiles), in the order selected.
    let statement = try db.cachedStatement(
      sql: """
        SELECT token, binding, billingContact, paymentMethod, issuedAt, amountMinor, currencyCode, sandboxOutcome,
          expiresAt, usedAt, authorizationId, gatewayPaymentData
        FROM chargeToken WHERE token = ?
        """)
    // A cursor's row reads the statement in place (fetchOne copies every column first); the row is
    // only valid while its cursor lives.
    let cursor = try Row.fetchCursor(statement, arguments: [token])
    return try withExtendedLifetime(cursor) {
      guard let row = try cursor.next() else { return nil }
      return try ChargeTokenRecord(
        token: row[0], binding: row[1], billingContact: row[2], paymentMethod: row[3],
        issuedAt: row[4], amountMinor: row[5], currencyCode: row[6], sandboxOutcome: row[7], expiresAt: row[8],
        usedAt: row[9], authorizationId: row[10], gatewayPaymentData: row[11])
    }
  }

  func nextChargeTokenSequence() throws -> Int64 {
    try Int64.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(MAX(sequence), 0) + 1 FROM chargeToken")) ?? 1
  }

  func insert(_ token: NewChargeToken) throws {
    try db.cachedStatement(
      sql: """
        INSERT INTO chargeToken
          (token, sequence, binding, billingContact, paymentMethod, amountMinor, currencyCode, sandboxOutcome,
           issuedAt, expiresAt, authorizationId, gatewayPaymentData, walletOrderToken)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    ).execute(arguments: [
      token.token, token.sequence, token.binding, token.billingContact, token.paymentMethod, token.amountMinor,
      token.currencyCode, token.sandboxOutcome.rawValue, token.issuedAt, token.expiresAt, token.authorizationId,
      token.gatewayPaymentData, token.walletOrderToken,
    ])
  }

  func purgeExpiredChargeTokens(now: Int64, limit: Int) throws -> Int {
    try db.cachedStatement(
      sql: """
        DELETE FROM chargeToken WHERE token IN (
          SELECT token FROM chargeToken
          WHERE usedAt IS NULL AND expiresAt <= ? AND sequence < (SELECT MAX(sequence) FROM chargeToken)
          LIMIT ?)
        """
    ).execute(arguments: [now, limit])
    return db.changesCount
  }

  func markUsed(token: String, at now: String) throws -> Bool {
    try db.cachedStatement(sql: "UPDATE chargeToken SET usedAt = ? WHERE token = ? AND usedAt IS NULL")
      .execute(arguments: [now, token])
    return db.changesCount == 1
  }

  func quantitiesOnHand(_ skus: [String]) throws -> [Int] {
    let statement = try db.cachedStatement(sql: "SELECT quantityOnHand FROM stock WHERE sku = ?")
    return try skus.map { sku in try Int.fetchOne(statement, arguments: [sku]) ?? 0 }
  }

  func decrementStock(_ sku: String, by quantity: Int) throws -> Bool {
    try db.cachedStatement(
      sql: """
        UPDATE stock SET quantityOnHand = quantityOnHand - ?1, sold = sold + ?1
        WHERE sku = ?2 AND quantityOnHand >= ?1
        """
    ).execute(arguments: [quantity, sku])
    return db.changesCount == 1
  }

  func insert(_ charge: ChargeRow) throws {
    try db.cachedStatement(
      sql: """
        INSERT INTO charge (chargeId, token, status, failureCode, declineCode, amountMinor, currencyCode, createdAt)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        """
    ).execute(arguments: [
      charge.chargeId, charge.token, charge.succeeded ? "succeeded" : "failed", charge.failureCode,
      charge.declineCode, charge.amountMinor, charge.currencyCode, charge.createdAt,
    ])
  }

  func insert(_ order: OrderRow) throws {
    try db.cachedStatement(
      sql: """
        INSERT INTO "order"
          (orderId, chargeId, createdAt, amountMinor, currencyCode, document, status, capturedMinor, shippingMinor,
           shippingTaxMinor, gatewayPaymentId, taxIncluded, agreementId)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    ).execute(arguments: [
      order.orderId, order.chargeId, order.createdAt, order.amountMinor, order.currencyCode, order.document,
      order.status.rawValue, order.capturedMinor, order.shippingMinor, order.shippingTaxMinor, order.gatewayPaymentId,
      order.taxIncluded, order.agreementId,
    ])
    let item = try db.cachedStatement(
      sql: """
        INSERT INTO orderItem (orderId, sku, quantity, unitPriceMinor, amountMinor, discountMinor, taxMinor)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """)
    for line in order.items {
      try item.execute(arguments: [
        order.orderId, line.sku, line.quantity, line.unitPriceMinor, line.amountMinor, line.discountMinor, line.taxMinor,
      ])
    }
  }

  func insertAuthorization(_ authorization: PaymentAuthorization, at now: String) throws -> Bool {
    try db.cachedStatement(
      sql: """
        INSERT INTO paymentAuthorization
          (authorizationId, transactionId, network, cardType, lastFour, amountMinor, currencyCode, status, createdAt)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(transactionId) DO NOTHING
        """
    ).execute(arguments: [
      authorization.authorizationId, authorization.transactionId, authorization.network, authorization.cardType,
      authorization.lastFour, authorization.amountMinor, authorization.currencyCode, authorization.status.rawValue,
      now,
    ])
    return db.changesCount == 1
  }

  static let authorizationColumns =
    "authorizationId, transactionId, network, cardType, lastFour, amountMinor, currencyCode, status"

  /// A row selected with `authorizationColumns`.
  static func authorization(_ row: Row) throws(StoreError) -> PaymentAuthorization {
    PaymentAuthorization(
      authorizationId: row[0], transactionId: row[1], network: row[2], cardType: row[3], lastFour: row[4],
      amountMinor: row[5], currencyCode: row[6], status: try PaymentAuthorization.Status(stored: row[7]))
  }

  func authorization(_ authorizationId: String) throws -> PaymentAuthorization? {
    let statement = try db.cachedStatement(
      sql: "SELECT \(Self.authorizationColumns) FROM paymentAuthorization WHERE authorizationId = ?")
    return try Row.fetchOne(statement, arguments: [authorizationId]).map(Self.authorization)
  }

  func markCaptured(_ authorizationId: String, chargeId: String, at now: String) throws -> Bool {
    try db.cachedStatement(
      sql: """
        UPDATE paymentAuthorization SET status = 'captured', chargeId = ?, capturedAt = ?
        WHERE authorizationId = ? AND status = 'held'
        """
    ).execute(arguments: [chargeId, now, authorizationId])
    return db.changesCount == 1
  }

  func markReleased(_ authorizationId: String, at now: String) throws -> Bool {
    try db.cachedStatement(
      sql: """
        UPDATE paymentAuthorization SET releasedAt = ?
        WHERE authorizationId = ? AND status = 'held' AND releasedAt IS NULL
        """
    ).execute(arguments: [now, authorizationId])
    return db.changesCount == 1
  }

  func lockOrder(_ orderId: String) throws -> OrderState? {
    // The store's write lock is held already: nothing else changes the order meanwhile.
    guard
      let row = try Row.fetchOne(
        db.cachedStatement(
          sql: """
            SELECT o.chargeId, o.currencyCode, o.status, o.amountMinor, o.capturedMinor, o.refundedMinor,
              o.shippingMinor, o.shippingTaxMinor, o.shippingRefunded, \(StoreSchema.orderSandboxOutcome), t.authorizationId,
              (SELECT COALESCE(MAX(position), 0) + 1 FROM orderEvent e WHERE e.orderId = o.orderId), o.gatewayPaymentId,
              o.taxIncluded
            FROM "order" o JOIN charge c ON c.chargeId = o.chargeId LEFT JOIN chargeToken t ON t.token = c.token
            WHERE o.orderId = ?
            """), arguments: [orderId])
    else { return nil }
    let lines = try Row.fetchAll(
      db.cachedStatement(
        sql: """
          SELECT sku, quantity, amountMinor, discountMinor, taxMinor, refundedQuantity
          FROM orderItem WHERE orderId = ? ORDER BY rowid
          """), arguments: [orderId]
    ).map { line in
      OrderState.Line(
        sku: line[0], quantity: line[1], amountMinor: line[2], discountMinor: line[3], taxMinor: line[4],
        refundedQuantity: line[5])
    }
    guard let outcome = SandboxOutcome(rawValue: row[9]) else {
      throw StoreError.unavailable(reason: "order \(orderId) was paid with a token of unknown sandboxOutcome")
    }
    return OrderState(
      orderId: orderId, chargeId: row[0], currencyCode: row[1], status: try OrderStatus(stored: row[2]),
      amountMinor: row[3], capturedMinor: row[4], refundedMinor: row[5], shippingMinor: row[6],
      shippingTaxMinor: row[7], shippingRefunded: row[8], lines: lines, sandboxOutcome: outcome,
      authorizationId: row[10], nextEventPosition: row[11], gatewayPaymentId: row[12], taxIncluded: row[13])
  }

  func updateOrder(
    _ orderId: String, status: OrderStatus, capturedMinor: Int64?, refundedMinor: Int64, shippingRefunded: Bool
  ) throws {
    try db.cachedStatement(
      sql: """
        UPDATE "order" SET status = ?, capturedMinor = ?, refundedMinor = ?, shippingRefunded = ? WHERE orderId = ?
        """
    ).execute(arguments: [status.rawValue, capturedMinor, refundedMinor, shippingRefunded, orderId])
    guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "order \(orderId) vanished") }
  }

  func setRefundedQuantity(orderId: String, sku: String, to quantity: Int) throws {
    try db.cachedStatement(sql: "UPDATE orderItem SET refundedQuantity = ? WHERE orderId = ? AND sku = ?")
      .execute(arguments: [quantity, orderId, sku])
    guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "order \(orderId) has no line \(sku)") }
  }

  func restock(_ sku: String, by quantity: Int) throws -> Bool {
    try db.cachedStatement(
      sql: """
        UPDATE stock SET quantityOnHand = quantityOnHand + ?1, sold = sold - ?1
        WHERE sku = ?2 AND sold >= ?1
        """
    ).execute(arguments: [quantity, sku])
    return db.changesCount == 1
  }

  func insert(_ event: OrderEventRow) throws {
    try db.cachedStatement(
      sql: """
        INSERT INTO orderEvent (orderId, position, kind, at, amountMinor, reference, reason)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """
    ).execute(arguments: [
      event.orderId, event.position, event.kind.rawValue, event.at, event.amountMinor, event.reference, event.reason,
    ])
  }

  func insert(_ refund: RefundRow) throws {
    try db.cachedStatement(
      sql: """
        INSERT INTO refund (refundId, orderId, position, createdAt, amountMinor, document, gatewayRefundId)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """
    ).execute(arguments: [
      refund.refundId, refund.orderId, refund.position, refund.createdAt, refund.amountMinor, refund.document,
      refund.gatewayRefundId,
    ])
  }

  static let refundColumns = "refundId, orderId, position, createdAt, amountMinor, document, gatewayRefundId"

  static func refund(_ row: Row) -> RefundRow {
    RefundRow(
      refundId: row[0], orderId: row[1], position: row[2], createdAt: row[3], amountMinor: row[4], document: row[5],
      gatewayRefundId: row[6])
  }

  func eraseStaffReasons(orderId: String, marker: String) throws -> [OrderEventRow] {
    let filter = "orderId = ? AND kind IN ('refunded', 'canceled') AND reason IS NOT NULL AND reason <> ?"
    let erased = try Row.fetchAll(
      db.cachedStatement(sql: "SELECT position, kind, at, amountMinor, reference, reason FROM orderEvent WHERE \(filter)"),
      arguments: [orderId, marker]
    ).map { row in
      OrderEventRow(
        orderId: orderId, position: row[0], kind: OrderEventRow.Kind(rawValue: row[1]) ?? .refunded, at: row[2],
        amountMinor: row[3], reference: row[4], reason: row[5])
    }
    try db.cachedStatement(sql: "UPDATE orderEvent SET reason = ? WHERE \(filter)").execute(arguments: [
      marker, orderId, marker,
    ])
    return erased
  }

  func refund(_ refundId: String) throws -> RefundRow? {
    let statement = try db.cachedStatement(sql: "SELECT \(Self.refundColumns) FROM refund WHERE refundId = ?")
    return try Row.fetchOne(statement, arguments: [refundId]).map(Self.refund)
  }

  func refund(gatewayRefundId: String) throws -> RefundRow? {
    let statement = try db.cachedStatement(sql: "SELECT \(Self.refundColumns) FROM refund WHERE gatewayRefundId = ?")
    return try Row.fetchOne(statement, arguments: [gatewayRefundId]).map(Self.refund)
  }

  func orderId(gatewayPaymentId: String) throws -> String? {
    try String.fetchOne(
      db.cachedStatement(sql: #"SELECT orderId FROM "order" WHERE gatewayPaymentId = ?"#), arguments: [gatewayPaymentId])
  }

  /// A row selected with `StoreSchema.disputeColumns`.
  // MARK: Agreements

  static func agreement(_ row: Row) throws(StoreError) -> AgreementRow {
    let id: String = row[0]
    guard let kind = BillingPlan.Kind(rawValue: row[2]), let status = AgreementStatus(rawValue: row[7]) else {
      throw StoreError.unavailable(reason: "agreement \(id) has an unknown kind or status")
    }
    return AgreementRow(
      agreementId: id, orderId: row[1], kind: kind, sku: row[3], quantity: row[4], currencyCode: row[5],
      createdAt: row[6], status: status, nextPaymentAt: row[8], period: row[9], attempt: row[10],
      cancelAtPeriodEnd: (row[11] as Int64) != 0, terms: row[12], credential: row[13], sandboxOutcome: row[14],
      customerAction: row[15], updatedAt: row[16])
  }

  static func agreementEvent(_ row: Row) throws(StoreError) -> AgreementEventRow {
    guard let kind = AgreementEventRow.Kind(rawValue: row[2]) else {
      throw StoreError.unavailable(reason: "an agreement event has an unknown kind")
    }
    return AgreementEventRow(
      agreementId: row[0], position: row[1], kind: kind, at: row[3], period: row[4], attempt: row[5], orderId: row[6],
      amountMinor: row[7], code: row[8], declineCode: row[9])
  }

  func lockAgreement(_ agreementId: String) throws -> AgreementRow? {
    // The store's write lock is held already.
    try Row.fetchOne(
      db.cachedStatement(sql: "SELECT \(StoreSchema.agreementColumns) FROM agreement WHERE agreementId = ?"),
      arguments: [agreementId]
    ).map(Self.agreement)
  }

  func insert(_ agreement: AgreementRow) throws {
    try db.cachedStatement(
      sql: "INSERT INTO agreement (\(StoreSchema.agreementColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ).execute(arguments: [
      agreement.agreementId, agreement.orderId, agreement.kind.rawValue, agreement.sku, agreement.quantity,
      agreement.currencyCode, agreement.createdAt, agreement.status.rawValue, agreement.nextPaymentAt, agreement.period,
      agreement.attempt, agreement.cancelAtPeriodEnd ? 1 : 0, agreement.terms, agreement.credential,
      agreement.sandboxOutcome, agreement.customerAction, agreement.updatedAt,
    ])
  }

  func update(_ agreement: AgreementRow) throws {
    try db.cachedStatement(
      sql: """
        UPDATE agreement SET status = ?, nextPaymentAt = ?, period = ?, attempt = ?, cancelAtPeriodEnd = ?,
          credential = ?, customerAction = ?, updatedAt = ?
        WHERE agreementId = ?
        """
    ).execute(arguments: [
      agreement.status.rawValue, agreement.nextPaymentAt, agreement.period, agreement.attempt,
      agreement.cancelAtPeriodEnd ? 1 : 0, agreement.credential, agreement.customerAction, agreement.updatedAt,
      agreement.agreementId,
    ])
    guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "agreement \(agreement.agreementId) vanished") }
  }

  @discardableResult func append(_ event: AgreementEventRow) throws -> AgreementEventRow {
    var event = event
    event.position =
      try Int.fetchOne(
        db.cachedStatement(sql: "SELECT COALESCE(MAX(position), 0) + 1 FROM agreementEvent WHERE agreementId = ?"),
        arguments: [event.agreementId]) ?? 1
    try db.cachedStatement(
      sql: "INSERT INTO agreementEvent (\(StoreSchema.agreementEventColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ).execute(arguments: [
      event.agreementId, event.position, event.kind.rawValue, event.at, event.period, event.attempt, event.orderId,
      event.amountMinor, event.code, event.declineCode,
    ])
    return event
  }

  static func dispute(_ row: Row) -> DisputeRow {
    DisputeRow(
      disputeId: row[0], orderId: row[1], createdAt: row[2], amountMinor: row[3], currencyCode: row[4], reason: row[5],
      status: row[6], evidenceDueBy: row[7], withdrawnMinor: row[8], reinstatedMinor: row[9],
      observed: DisputeRow.Observation(rank: row[10], at: row[11], by: row[12]))
  }

  func dispute(_ disputeId: String) throws -> DisputeRow? {
    try Row.fetchOne(
      db.cachedStatement(sql: "SELECT \(StoreSchema.disputeColumns) FROM dispute WHERE disputeId = ?"),
      arguments: [disputeId]
    ).map(Self.dispute)
  }

  func disputes(orderId: String) throws -> [DisputeRow] {
    try Row.fetchAll(
      db.cachedStatement(
        sql: "SELECT \(StoreSchema.disputeColumns) FROM dispute WHERE orderId = ? ORDER BY createdAt, disputeId"),
      arguments: [orderId]
    ).map(Self.dispute)
  }

  func save(_ dispute: DisputeRow, isNew: Bool) throws {
    let values: [(any DatabaseValueConvertible)?] = [
      dispute.orderId, dispute.createdAt, dispute.amountMinor, dispute.currencyCode, dispute.reason, dispute.status,
      dispute.evidenceDueBy, dispute.withdrawnMinor, dispute.reinstatedMinor, dispute.observed.rank, dispute.observed.at,
      dispute.observed.by, dispute.disputeId,
    ]
    if isNew {
      try db.cachedStatement(
        sql: """
          INSERT INTO dispute (orderId, createdAt, amountMinor, currencyCode, reason, status, evidenceDueBy,
            withdrawnMinor, reinstatedMinor, observedRank, observedAt, observedBy, disputeId)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          """
      ).execute(arguments: StatementArguments(values))
    } else {
      try db.cachedStatement(
        sql: """
          UPDATE dispute SET orderId = ?, createdAt = ?, amountMinor = ?, currencyCode = ?, reason = ?, status = ?,
            evidenceDueBy = ?, withdrawnMinor = ?, reinstatedMinor = ?, observedRank = ?, observedAt = ?, observedBy = ?
          WHERE disputeId = ?
          """
      ).execute(arguments: StatementArguments(values))
      guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "dispute \(dispute.disputeId) vanished") }
    }
  }

  func updateRefund(_ refundId: String, document: String) throws {
    try db.cachedStatement(sql: "UPDATE refund SET document = ? WHERE refundId = ?").execute(arguments: [document, refundId])
  }

  func orderDocument(_ orderId: String) throws -> String? {
    try String.fetchOne(db.cachedStatement(sql: #"SELECT document FROM "order" WHERE orderId = ?"#), arguments: [orderId])
  }

  static let operationColumns = "kind, key, fingerprint, state, subject, request, result, created, settled"

  /// A row selected with `operationColumns`.
  static func operation(_ row: Row) throws(StoreError) -> OperationRow {
    OperationRow(
      kind: row[0], key: row[1], fingerprint: row[2], state: try OperationRow.state(stored: row[3]), subject: row[4],
      request: row[5], result: row[6], created: row[7], settled: row[8])
  }

  func operation(kind: String, key: String) throws -> OperationRow? {
    // The store's write lock is held already: nothing else changes the entry meanwhile.
    try Row.fetchOne(
      db.cachedStatement(sql: "SELECT \(Self.operationColumns) FROM operation WHERE kind = ? AND key = ?"),
      arguments: [kind, key]
    ).map(Self.operation)
  }

  func insert(_ operation: OperationRow) throws -> Bool {
    try db.cachedStatement(
      sql: """
        INSERT INTO operation (\(Self.operationColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (kind, key) DO NOTHING
        """
    ).execute(arguments: [
      operation.kind, operation.key, operation.fingerprint, operation.state.rawValue, operation.subject,
      operation.request, operation.result, operation.created, operation.settled,
    ])
    return db.changesCount == 1
  }

  func settleOperation(kind: String, key: String, result: String, at now: String) throws {
    try db.cachedStatement(
      sql: """
        UPDATE operation SET state = 'settled', result = ?, settled = ? WHERE kind = ? AND key = ? AND state = 'pending'
        """
    ).execute(arguments: [result, now, kind, key])
    guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "operation \(kind) \(key) is not pending") }
  }

  func removeOperation(kind: String, key: String) throws {
    try db.cachedStatement(sql: "DELETE FROM operation WHERE kind = ? AND key = ? AND state = 'pending'")
      .execute(arguments: [kind, key])
    guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "operation \(kind) \(key) is not pending") }
  }

  func pendingOperations(subject: String) throws -> [OperationRow] {
    try Row.fetchAll(
      db.cachedStatement(
        sql: """
          SELECT \(Self.operationColumns) FROM operation WHERE subject = ? AND state = 'pending' ORDER BY created, kind, key
          """), arguments: [subject]
    ).map(Self.operation)
  }

  func rewriteOperation(kind: String, key: String, fingerprint: String, result: String?) throws {
    try db.cachedStatement(
      sql: "UPDATE operation SET fingerprint = ?, result = ? WHERE kind = ? AND key = ? AND state = 'settled'"
    ).execute(arguments: [fingerprint, result, kind, key])
    guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "operation \(kind) \(key) is not settled") }
  }

  // MARK: Stock by hand

  func stockLevel(_ sku: String) throws -> StockLevel? {
    try Row.fetchOne(
      db.cachedStatement(sql: "SELECT quantityOnHand, sold FROM stock WHERE sku = ?"), arguments: [sku]
    ).map { StockLevel(sku: sku, quantityOnHand: $0[0], sold: $0[1]) }
  }

  func setQuantityOnHand(_ sku: String, to quantity: Int) throws {
    try db.cachedStatement(sql: "UPDATE stock SET quantityOnHand = ? WHERE sku = ?").execute(arguments: [quantity, sku])
    guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "stock of \(sku) vanished") }
  }

  func nextStockEventPosition(_ sku: String) throws -> Int {
    try Int.fetchOne(
      db.cachedStatement(sql: "SELECT COALESCE(MAX(position), 0) + 1 FROM stockEvent WHERE sku = ?"), arguments: [sku]
    ) ?? 1
  }

  static let stockEventColumns = "sku, position, kind, at, delta, quantityOnHand, adjustmentId, reason"

  /// A row selected with `stockEventColumns`.
  static func stockEvent(_ row: Row) throws(StoreError) -> StockEventRow {
    guard let kind = StockEventRow.Kind(rawValue: row[2]) else {
      throw StoreError.unavailable(reason: "a stock event of unknown kind")
    }
    return StockEventRow(
      sku: row[0], position: row[1], kind: kind, at: row[3], delta: row[4], quantityOnHand: row[5],
      adjustmentId: row[6], reason: row[7])
  }

  func insert(_ event: StockEventRow) throws {
    try db.cachedStatement(
      sql: "INSERT INTO stockEvent (\(Self.stockEventColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    ).execute(arguments: [
      event.sku, event.position, event.kind.rawValue, event.at, event.delta, event.quantityOnHand, event.adjustmentId,
      event.reason,
    ])
  }

  // MARK: Personal data

  func tokensToErase(_ selector: ErasureSelector, limit: Int) throws -> [String] {
    let condition: String
    let value: String
    switch selector {
    case .emailAddress(let address):
      // ASCII case folding on both sides (SQLite's lower() folds ASCII only; PostgreSQL's store folds the same).
      condition = """
        (lower(json_extract(t.binding, '$.shippingContact.emailAddress')) = ?1
          OR lower(json_extract(t.billingContact, '$.emailAddress')) = ?1
          OR lower(json_extract(json_extract(op.fingerprint, '$.billingContact'), '$.emailAddress')) = ?1)
        """
      value = ErasureSelector.foldedEmail(address)
    case .orderId(let orderId):
      condition = "o.orderId = ?1"
      value = orderId
    case .issuedBefore(let time):
      condition = "t.issuedAt < ?1"
      value = time
    }
    return try String.fetchAll(
      db,
      sql: """
        SELECT t.token FROM chargeToken t
        LEFT JOIN charge c ON c.token = t.token LEFT JOIN "order" o ON o.chargeId = c.chargeId
        LEFT JOIN operation op ON op.kind = 'order' AND op.key = t.token
        WHERE t.erasedAt IS NULL AND (op.state IS NULL OR op.state = 'settled') AND \(condition)
        ORDER BY t.sequence LIMIT ?2
        """, arguments: [value, limit])
  }

  func personalData(token: String) throws -> PersonalDataRow? {
    try Row.fetchOne(
      db,
      sql: """
        SELECT t.binding, t.billingContact, o.orderId, o.document FROM chargeToken t
        LEFT JOIN charge c ON c.token = t.token LEFT JOIN "order" o ON o.chargeId = c.chargeId
        WHERE t.token = ?
        """, arguments: [token]
    ).map { row in
      PersonalDataRow(token: token, binding: row[0], billingContact: row[1], orderId: row[2], orderDocument: row[3])
    }
  }

  func erasePersonalData(_ row: PersonalDataRow, at now: String) throws {
    try db.execute(
      sql: "UPDATE chargeToken SET binding = ?, billingContact = ?, erasedAt = ? WHERE token = ?",
      arguments: [row.binding, row.billingContact, now, row.token])
    guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "a charge token vanished") }
    if let orderId = row.orderId, let document = row.orderDocument {
      try db.execute(
        sql: #"UPDATE "order" SET document = ?, erasedAt = ? WHERE orderId = ?"#, arguments: [document, now, orderId])
      guard db.changesCount == 1 else { throw StoreError.unavailable(reason: "order \(orderId) vanished") }
    }
  }
}
