import PayServiceCore
import PostgresNIO

/// The store's statements on PostgreSQL, inside a transaction `PostgresStore` opened. Unlike
/// SQLite, other transactions run alongside, so the rows a decision rests on are locked first.
struct PostgresTransaction: StoreTransaction {
  let session: PostgresSession
  /// Where the tokens and authorizations this transaction inserts are noted, for the store's
  /// `IssuedTokens` once it commits; nil: not noted.
  var issued: IssuedRows? = nil

  /// The advisory lock key that serializes issuing charge tokens (ASCII "paysvc.t").
  static let tokenSequenceLock: Int64 = 0x7061_7973_7663_2E74

  func binds(_ build: (inout PostgresBindings) -> Void) -> PostgresBindings {
    var binds = PostgresBindings()
    build(&binds)
    return binds
  }

  func chargeToken(_ token: String) throws -> ChargeTokenRecord? {
    // FOR UPDATE: a second processOrder with this token waits for the first to commit, then reads
    // the token as used and replays its answer, as on SQLite.
    let rows = try session.run(
      """
      SELECT token, binding, billingContact, paymentMethod, issuedAt, amountMinor, currencyCode, sandboxOutcome,
        expiresAt, usedAt, authorizationId, gatewayPaymentData
      FROM chargeToken WHERE token = $1 FOR UPDATE
      """, binds { $0.append(token) }
    ).rows
    guard let row = rows.first else { return nil }
    let (token, binding, billing, card, issuedAt, amount, currency, outcome, expiresAt, usedAt, authorizationId,
      gatewayPaymentData) = try row.columns(
        (String, String, String?, String?, String, Int64, String, String, Int64, String?, String?, String?).self)
    return try ChargeTokenRecord(
      token: token, binding: binding, billingContact: billing, paymentMethod: card, issuedAt: issuedAt,
      amountMinor: amount, currencyCode: currency, sandboxOutcome: outcome, expiresAt: expiresAt, usedAt: usedAt,
      authorizationId: authorizationId, gatewayPaymentData: gatewayPaymentData)
  }

  func nextChargeTokenSequence() throws -> Int64 {
    // Held to the end of the transaction: two hosts issuing at once take turns, so each token gets
    // the next number and the same store state issues the same token.
    try session.run("SELECT pg_advisory_xact_lock($1)", binds { $0.append(Self.tokenSequenceLock) })
    let rows = try session.run("SELECT COALESCE(MAX(sequence), 0) + 1 FROM chargeToken").rows
    return try rows.first.map { try $0.columns(Int64.self) } ?? 1
  }

  func insert(_ token: NewChargeToken) throws {
    let inserted = try session.run(
      """
      INSERT INTO chargeToken
        (token, sequence, binding, billingContact, paymentMethod, amountMinor, currencyCode, sandboxOutcome,
         issuedAt, expiresAt, authorizationId, gatewayPaymentData, walletOrderToken)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
      RETURNING xmin::text
      """,
      binds {
        $0.append(token.token)
        $0.append(token.sequence)
        $0.append(token.binding)
        $0.append(token.billingContact)
        $0.append(token.paymentMethod)
        $0.append(token.amountMinor)
        $0.append(token.currencyCode)
        $0.append(token.sandboxOutcome.rawValue)
        $0.append(token.issuedAt)
        $0.append(token.expiresAt)
        $0.append(token.authorizationId)
        $0.append(token.gatewayPaymentData)
        $0.append(token.walletOrderToken)
      })
    if let issued, let row = inserted.rows.first {
      issued.tokens.append(
        (
          try ChargeTokenRecord(
            token: token.token, binding: token.binding, billingContact: token.billingContact,
            paymentMethod: token.paymentMethod, issuedAt: token.issuedAt, amountMinor: token.amountMinor,
            currencyCode: token.currencyCode, sandboxOutcome: token.sandboxOutcome.rawValue,
            expiresAt: token.expiresAt, usedAt: nil, authorizationId: token.authorizationId,
            gatewayPaymentData: token.gatewayPaymentData),
          try row.columns(String.self)
        ))
    }
  }

  func purgeExpiredChargeTokens(now: Int64, limit: Int) throws -> Int {
    try session.changes(
      """
      DELETE FROM chargeToken WHERE token IN (
        SELECT token FROM chargeToken
        WHERE usedAt IS NULL AND expiresAt <= $1 AND sequence < (SELECT MAX(sequence) FROM chargeToken)
        LIMIT $2)
      """,
      binds {
        $0.append(now)
        $0.append(limit)
      })
  }

  func markUsed(token: String, at now: String) throws -> Bool {
    try session.changes(
      "UPDATE chargeToken SET usedAt = $1 WHERE token = $2 AND usedAt IS NULL",
      binds {
        $0.append(now)
        $0.append(token)
      }) == 1
  }

  func quantitiesOnHand(_ skus: [String]) throws -> [Int] {
    // Locked in sku order, whatever the order's line order, so that concurrent orders sharing skus
    // queue instead of deadlocking.
    let rows = try session.run(
      "SELECT sku, quantityOnHand FROM stock WHERE sku = ANY($1) ORDER BY sku FOR UPDATE",
      binds { $0.append(skus) }
    ).rows
    var onHand: [String: Int] = [:]
    for row in rows {
      let (sku, quantity) = try row.columns((String, Int).self)
      onHand[sku] = quantity
    }
    return skus.map { onHand[$0] ?? 0 }
  }

  func decrementStock(_ sku: String, by quantity: Int) throws -> Bool {
    try session.changes(
      """
      UPDATE stock SET quantityOnHand = quantityOnHand - $1, sold = sold + $1
      WHERE sku = $2 AND quantityOnHand >= $1
      """,
      binds {
        $0.append(Int64(quantity))
        $0.append(sku)
      }) == 1
  }

  func insert(_ charge: ChargeRow) throws {
    try session.run(
      """
      INSERT INTO charge (chargeId, token, status, failureCode, declineCode, amountMinor, currencyCode, createdAt)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
      """,
      binds {
        $0.append(charge.chargeId)
        $0.append(charge.token)
        $0.append(charge.succeeded ? "succeeded" : "failed")
        $0.append(charge.failureCode)
        $0.append(charge.declineCode)
        $0.append(charge.amountMinor)
        $0.append(charge.currencyCode)
        $0.append(charge.createdAt)
      })
  }

  func insert(_ order: OrderRow) throws {
    try session.run(
      """
      INSERT INTO "order"
        (orderId, chargeId, createdAt, amountMinor, currencyCode, document, status, capturedMinor, shippingMinor,
         shippingTaxMinor, gatewayPaymentId, taxIncluded, agreementId)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
      """,
      binds {
        $0.append(order.orderId)
        $0.append(order.chargeId)
        $0.append(order.createdAt)
        $0.append(order.amountMinor)
        $0.append(order.currencyCode)
        $0.append(order.document)
        $0.append(order.status.rawValue)
        $0.append(order.capturedMinor)
        $0.append(order.shippingMinor)
        $0.append(order.shippingTaxMinor)
        $0.append(order.gatewayPaymentId)
        $0.append(order.taxIncluded)
        $0.append(order.agreementId)
      })
    // All lines in one statement: one round trip however long the order. WITH ORDINALITY keeps
    // the lines' order for `position`.
    try session.run(
      """
      INSERT INTO orderItem (orderId, sku, quantity, unitPriceMinor, amountMinor, discountMinor, taxMinor)
      SELECT $1, sku, quantity, unitPrice, amount, discount, tax
      FROM UNNEST($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[])
        WITH ORDINALITY AS line(sku, quantity, unitPrice, amount, discount, tax, n)
      ORDER BY n
      """,
      binds {
        $0.append(order.orderId)
        $0.append(order.items.map(\.sku))
        $0.append(order.items.map { Int64($0.quantity) })
        $0.append(order.items.map(\.unitPriceMinor))
        $0.append(order.items.map(\.amountMinor))
        $0.append(order.items.map(\.discountMinor))
        $0.append(order.items.map(\.taxMinor))
      })
  }

  func insertAuthorization(_ authorization: PaymentAuthorization, at now: String) throws -> Bool {
    let inserted = try session.run(
      """
      INSERT INTO paymentAuthorization
        (authorizationId, transactionId, network, cardType, lastFour, amountMinor, currencyCode, status, createdAt)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
      ON CONFLICT (transactionId) DO NOTHING
      RETURNING xmin::text
      """,
      binds {
        $0.append(authorization.authorizationId)
        $0.append(authorization.transactionId)
        $0.append(authorization.network)
        $0.append(authorization.cardType)
        $0.append(authorization.lastFour)
        $0.append(authorization.amountMinor)
        $0.append(authorization.currencyCode)
        $0.append(authorization.status.rawValue)
        $0.append(now)
      }).rows
    guard let row = inserted.first else { return false }
    issued?.authorizations.append((authorization, try row.columns(String.self)))
    return true
  }

  static let authorizationColumns =
    "authorizationId, transactionId, network, cardType, lastFour, amountMinor, currencyCode, status"

  /// A row selected with `authorizationColumns`.
  static func authorization(_ row: PostgresRow) throws -> PaymentAuthorization {
    let (id, transactionId, network, cardType, lastFour, amount, currency, status) = try row.columns(
      (String, String, String, String, String, Int64, String, String).self)
    return PaymentAuthorization(
      authorizationId: id, transactionId: transactionId, network: network, cardType: cardType, lastFour: lastFour,
      amountMinor: amount, currencyCode: currency, status: try PaymentAuthorization.Status(stored: status))
  }

  func authorization(_ authorizationId: String) throws -> PaymentAuthorization? {
    let rows = try session.run(
      "SELECT \(Self.authorizationColumns) FROM paymentAuthorization WHERE authorizationId = $1",
      binds { $0.append(authorizationId) }
    ).rows
    return try rows.first.map(Self.authorization)
  }

  func markCaptured(_ authorizationId: String, chargeId: String, at now: String) throws -> Bool {
    try session.changes(
      """
      UPDATE paymentAuthorization SET status = 'captured', chargeId = $1, capturedAt = $2
      WHERE authorizationId = $3 AND status = 'held'
      """,
      binds {
        $0.append(chargeId)
        $0.append(now)
        $0.append(authorizationId)
      }) == 1
  }

  func markReleased(_ authorizationId: String, at now: String) throws -> Bool {
    try session.changes(
      """
      UPDATE paymentAuthorization SET releasedAt = $1
      WHERE authorizationId = $2 AND status = 'held' AND releasedAt IS NULL
      """,
      binds {
        $0.append(now)
        $0.append(authorizationId)
      }) == 1
  }

  func lockOrder(_ orderId: String) throws -> OrderState? {
    // FOR UPDATE OF o: back-office calls on one order take turns; the charge and token rows are
    // only read.
    let rows = try session.run(
      """
      SELECT o.chargeId, o.currencyCode, o.status, o.amountMinor, o.capturedMinor, o.refundedMinor,
        o.shippingMinor, o.shippingTaxMinor, o.shippingRefunded, \(StoreSchema.orderSandboxOutcome), t.authorizationId,
        o.gatewayPaymentId, o.taxIncluded
      FROM "order" o JOIN charge c ON c.chargeId = o.chargeId LEFT JOIN chargeToken t ON t.token = c.token
      WHERE o.orderId = $1 FOR UPDATE OF o
      """, binds { $0.append(orderId) }
    ).rows
    guard let row = rows.first else { return nil }
    let (chargeId, currency, status, amount, captured, refunded, shipping, shippingTax, shippingRefunded, outcome,
      authorizationId, gatewayPaymentId, taxIncluded) = try row.columns(
        (String, String, String, Int64, Int64?, Int64, Int64?, Int64?, Bool, String, String?, String?, Bool).self)
    var lines: [OrderState.Line] = []
    for line in try session.run(
      """
      SELECT sku, quantity, amountMinor, discountMinor, taxMinor, refundedQuantity
      FROM orderItem WHERE orderId = $1 ORDER BY position
      """, binds { $0.append(orderId) }
    ).rows {
      let (sku, quantity, lineAmount, discount, tax, refundedQuantity) = try line.columns(
        (String, Int, Int64, Int64?, Int64?, Int).self)
      lines.append(
        OrderState.Line(
          sku: sku, quantity: quantity, amountMinor: lineAmount, discountMinor: discount, taxMinor: tax,
          refundedQuantity: refundedQuantity))
    }
    let positions = try session.run(
      "SELECT COALESCE(MAX(position), 0) + 1 FROM orderEvent WHERE orderId = $1", binds { $0.append(orderId) }
    ).rows
    guard let nextRow = positions.first else { throw StoreError.unavailable(reason: "no event position for \(orderId)") }
    let next = try nextRow.columns(Int.self)
    guard let sandboxOutcome = SandboxOutcome(rawValue: outcome) else {
      throw StoreError.unavailable(reason: "order \(orderId) was paid with a token of unknown sandboxOutcome")
    }
    return OrderState(
      orderId: orderId, chargeId: chargeId, currencyCode: currency,
      status: try OrderStatus(stored: status), amountMinor: amount, capturedMinor: captured, refundedMinor: refunded,
      shippingMinor: shipping, shippingTaxMinor: shippingTax, shippingRefunded: shippingRefunded, lines: lines,
      sandboxOutcome: sandboxOutcome, authorizationId: authorizationId, nextEventPosition: next,
      gatewayPaymentId: gatewayPaymentId, taxIncluded: taxIncluded)
  }

  func updateOrder(
    _ orderId: String, status: OrderStatus, capturedMinor: Int64?, refundedMinor: Int64, shippingRefunded: Bool
  ) throws {
    let changed = try session.changes(
      """
      UPDATE "order" SET status = $1, capturedMinor = $2, refundedMinor = $3, shippingRefunded = $4 WHERE orderId = $5
      """,
      binds {
        $0.append(status.rawValue)
        $0.append(capturedMinor)
        $0.append(refundedMinor)
        $0.append(shippingRefunded)
        $0.append(orderId)
      })
    guard changed == 1 else { throw StoreError.unavailable(reason: "order \(orderId) vanished") }
  }

  func setRefundedQuantity(orderId: String, sku: String, to quantity: Int) throws {
    let changed = try session.changes(
      "UPDATE orderItem SET refundedQuantity = $1 WHERE orderId = $2 AND sku = $3",
      binds {
        $0.append(Int64(quantity))
        $0.append(orderId)
        $0.append(sku)
      })
    guard changed == 1 else { throw StoreError.unavailable(reason: "order \(orderId) has no line \(sku)") }
  }

  func restock(_ sku: String, by quantity: Int) throws -> Bool {
    try session.changes(
      """
      UPDATE stock SET quantityOnHand = quantityOnHand + $1, sold = sold - $1
      WHERE sku = $2 AND sold >= $1
      """,
      binds {
        $0.append(Int64(quantity))
        $0.append(sku)
      }) == 1
  }

  func insert(_ event: OrderEventRow) throws {
    try session.run(
      """
      INSERT INTO orderEvent (orderId, position, kind, at, amountMinor, reference, reason)
      VALUES ($1, $2, $3, $4, $5, $6, $7)
      """,
      binds {
        $0.append(event.orderId)
        $0.append(Int64(event.position))
        $0.append(event.kind.rawValue)
        $0.append(event.at)
        $0.append(event.amountMinor)
        $0.append(event.reference)
        $0.append(event.reason)
      })
  }

  func insert(_ refund: RefundRow) throws {
    try session.run(
      """
      INSERT INTO refund (refundId, orderId, position, createdAt, amountMinor, document, gatewayRefundId)
      VALUES ($1, $2, $3, $4, $5, $6, $7)
      """,
      binds {
        $0.append(refund.refundId)
        $0.append(refund.orderId)
        $0.append(Int64(refund.position))
        $0.append(refund.createdAt)
        $0.append(refund.amountMinor)
        $0.append(refund.document)
        $0.append(refund.gatewayRefundId)
      })
  }

  static let refundColumns = "refundId, orderId, position, createdAt, amountMinor, document, gatewayRefundId"

  static func refund(_ row: PostgresRow) throws -> RefundRow {
    let (id, orderId, position, createdAt, amount, document, gatewayRefundId) = try row.columns(
      (String, String, Int, String, Int64, String, String?).self)
    return RefundRow(
      refundId: id, orderId: orderId, position: position, createdAt: createdAt, amountMinor: amount, document: document,
      gatewayRefundId: gatewayRefundId)
  }

  func refund(gatewayRefundId: String) throws -> RefundRow? {
    try session.run(
      "SELECT \(Self.refundColumns) FROM refund WHERE gatewayRefundId = $1", binds { $0.append(gatewayRefundId) }
    ).rows.first.map(Self.refund)
  }

  func orderId(gatewayPaymentId: String) throws -> String? {
    try session.run(
      #"SELECT orderId FROM "order" WHERE gatewayPaymentId = $1"#, binds { $0.append(gatewayPaymentId) }
    ).rows.first.map { try $0.columns(String.self) }
  }

  /// A row selected with `StoreSchema.disputeColumns`.
  // MARK: Agreements

  static func agreement(_ row: PostgresRow) throws -> AgreementRow {
    let (
      id, orderId, kind, sku, quantity, currency, createdAt, status, next, period, attempt, cancelAtEnd, terms,
      credential, outcome, action, updatedAt
    ) = try row.columns(
      (String, String, String, String, Int, String, String, String, Int64?, Int, Int, Int64, String, String, String?,
        String?, String).self)
    guard let kind = BillingPlan.Kind(rawValue: kind), let status = AgreementStatus(rawValue: status) else {
      throw StoreError.unavailable(reason: "agreement \(id) has an unknown kind or status")
    }
    return AgreementRow(
      agreementId: id, orderId: orderId, kind: kind, sku: sku, quantity: quantity, currencyCode: currency,
      createdAt: createdAt, status: status, nextPaymentAt: next, period: period, attempt: attempt,
      cancelAtPeriodEnd: cancelAtEnd != 0, terms: terms, credential: credential, sandboxOutcome: outcome,
      customerAction: action, updatedAt: updatedAt)
  }

  static func agreementEvent(_ row: PostgresRow) throws -> AgreementEventRow {
    let (id, position, kind, at, period, attempt, orderId, amount, code, declineCode) = try row.columns(
      (String, Int, String, String, Int?, Int?, String?, Int64?, String?, String?).self)
    guard let kind = AgreementEventRow.Kind(rawValue: kind) else {
      throw StoreError.unavailable(reason: "an agreement event has an unknown kind")
    }
    return AgreementEventRow(
      agreementId: id, position: position, kind: kind, at: at, period: period, attempt: attempt, orderId: orderId,
      amountMinor: amount, code: code, declineCode: declineCode)
  }

  func lockAgreement(_ agreementId: String) throws -> AgreementRow? {
    try session.run(
      "SELECT \(StoreSchema.agreementColumns) FROM agreement WHERE agreementId = $1 FOR UPDATE",
      binds { $0.append(agreementId) }
    ).rows.first.map(Self.agreement)
  }

  func insert(_ agreement: AgreementRow) throws {
    try session.run(
      """
      INSERT INTO agreement (\(StoreSchema.agreementColumns))
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
      """,
      binds {
        $0.append(agreement.agreementId)
        $0.append(agreement.orderId)
        $0.append(agreement.kind.rawValue)
        $0.append(agreement.sku)
        $0.append(Int64(agreement.quantity))
        $0.append(agreement.currencyCode)
        $0.append(agreement.createdAt)
        $0.append(agreement.status.rawValue)
        $0.append(agreement.nextPaymentAt)
        $0.append(Int64(agreement.period))
        $0.append(Int64(agreement.attempt))
        $0.append(Int64(agreement.cancelAtPeriodEnd ? 1 : 0))
        $0.append(agreement.terms)
        $0.append(agreement.credential)
        $0.append(agreement.sandboxOutcome)
        $0.append(agreement.customerAction)
        $0.append(agreement.updatedAt)
      })
  }

  func update(_ agreement: AgreementRow) throws {
    let rows = try session.run(
      """
      UPDATE agreement SET status = $1, nextPaymentAt = $2, period = $3, attempt = $4, cancelAtPeriodEnd = $5,
        credential = $6, customerAction = $7, updatedAt = $8
      WHERE agreementId = $9 RETURNING 1
      """,
      binds {
        $0.append(agreement.status.rawValue)
        $0.append(agreement.nextPaymentAt)
        $0.append(Int64(agreement.period))
        $0.append(Int64(agreement.attempt))
        $0.append(Int64(agreement.cancelAtPeriodEnd ? 1 : 0))
        $0.append(agreement.credential)
        $0.append(agreement.customerAction)
        $0.append(agreement.updatedAt)
        $0.append(agreement.agreementId)
      }
    ).rows
    guard rows.count == 1 else { throw StoreError.unavailable(reason: "agreement \(agreement.agreementId) vanished") }
  }

  @discardableResult func append(_ event: AgreementEventRow) throws -> AgreementEventRow {
    // One round trip: the position is the agreement's next, taken in the insert itself.
    let rows = try session.run(
      """
      INSERT INTO agreementEvent (\(StoreSchema.agreementEventColumns))
      SELECT $1, COALESCE(MAX(position), 0) + 1, $2, $3, $4, $5, $6, $7, $8, $9
      FROM agreementEvent WHERE agreementId = $1
      RETURNING position
      """,
      binds {
        $0.append(event.agreementId)
        $0.append(event.kind.rawValue)
        $0.append(event.at)
        $0.append(event.period.map(Int64.init))
        $0.append(event.attempt.map(Int64.init))
        $0.append(event.orderId)
        $0.append(event.amountMinor)
        $0.append(event.code)
        $0.append(event.declineCode)
      }
    ).rows
    var recorded = event
    recorded.position = try rows.first.map { try $0.columns(Int.self) } ?? 0
    return recorded
  }

  static func dispute(_ row: PostgresRow) throws -> DisputeRow {
    let (id, orderId, createdAt, amount, currency, reason, status, due, withdrawn, reinstated, rank, at, by) =
      try row.columns((String, String, String, Int64, String, String, String, String?, Int64, Int64, Int, Int64, String).self)
    return DisputeRow(
      disputeId: id, orderId: orderId, createdAt: createdAt, amountMinor: amount, currencyCode: currency, reason: reason,
      status: status, evidenceDueBy: due, withdrawnMinor: withdrawn, reinstatedMinor: reinstated,
      observed: DisputeRow.Observation(rank: rank, at: at, by: by))
  }

  func dispute(_ disputeId: String) throws -> DisputeRow? {
    try session.run(
      "SELECT \(StoreSchema.disputeColumns) FROM dispute WHERE disputeId = $1", binds { $0.append(disputeId) }
    ).rows.first.map(Self.dispute)
  }

  func disputes(orderId: String) throws -> [DisputeRow] {
    try session.run(
      """
      SELECT \(StoreSchema.disputeColumns) FROM dispute WHERE orderId = $1
      ORDER BY createdAt COLLATE "C", disputeId COLLATE "C"
      """, binds { $0.append(orderId) }
    ).rows.map(Self.dispute)
  }

  func save(_ dispute: DisputeRow, isNew: Bool) throws {
    let values = binds {
      $0.append(dispute.orderId)
      $0.append(dispute.createdAt)
      $0.append(dispute.amountMinor)
      $0.append(dispute.currencyCode)
      $0.append(dispute.reason)
      $0.append(dispute.status)
      $0.append(dispute.evidenceDueBy)
      $0.append(dispute.withdrawnMinor)
      $0.append(dispute.reinstatedMinor)
      $0.append(Int64(dispute.observed.rank))
      $0.append(dispute.observed.at)
      $0.append(dispute.observed.by)
      $0.append(dispute.disputeId)
    }
    if isNew {
      try session.run(
        """
        INSERT INTO dispute (orderId, createdAt, amountMinor, currencyCode, reason, status, evidenceDueBy,
          withdrawnMinor, reinstatedMinor, observedRank, observedAt, observedBy, disputeId)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
        """, values)
    } else {
      let changed = try session.changes(
        """
        UPDATE dispute SET orderId = $1, createdAt = $2, amountMinor = $3, currencyCode = $4, reason = $5, status = $6,
          evidenceDueBy = $7, withdrawnMinor = $8, reinstatedMinor = $9, observedRank = $10, observedAt = $11,
          observedBy = $12
        WHERE disputeId = $13
        """, values)
      guard changed == 1 else { throw StoreError.unavailable(reason: "dispute \(dispute.disputeId) vanished") }
    }
  }

  static let operationColumns = "kind, key, fingerprint, state, subject, request, result, created, settled"

  /// A row selected with `operationColumns`.
  static func operation(_ row: PostgresRow) throws -> OperationRow {
    let (kind, key, fingerprint, state, subject, request, result, created, settled) = try row.columns(
      (String, String, String, String, String?, String?, String?, String, String?).self)
    return OperationRow(
      kind: kind, key: key, fingerprint: fingerprint, state: try OperationRow.state(stored: state), subject: subject,
      request: request, result: result, created: created, settled: settled)
  }

  func eraseStaffReasons(orderId: String, marker: String) throws -> [OrderEventRow] {
    let filter = "orderId = $1 AND kind IN ('refunded', 'canceled') AND reason IS NOT NULL AND reason <> $2"
    var erased: [OrderEventRow] = []
    for row in try session.run(
      "SELECT position, kind, at, amountMinor, reference, reason FROM orderEvent WHERE \(filter)",
      binds {
        $0.append(orderId)
        $0.append(marker)
      }
    ).rows {
      let (position, kind, at, amount, reference, reason) = try row.columns((Int, String, String, Int64, String, String).self)
      erased.append(
        OrderEventRow(
          orderId: orderId, position: position, kind: OrderEventRow.Kind(rawValue: kind) ?? .refunded, at: at,
          amountMinor: amount, reference: reference, reason: reason))
    }
    try session.run(
      "UPDATE orderEvent SET reason = $3 WHERE \(filter)",
      binds {
        $0.append(orderId)
        $0.append(marker)
        $0.append(marker)
      })
    return erased
  }

  func refund(_ refundId: String) throws -> RefundRow? {
    try session.run(
      "SELECT \(Self.refundColumns) FROM refund WHERE refundId = $1", binds { $0.append(refundId) }
    ).rows.first.map(Self.refund)
  }

  func updateRefund(_ refundId: String, document: String) throws {
    _ = try session.changes(
      "UPDATE refund SET document = $1 WHERE refundId = $2",
      binds {
        $0.append(document)
        $0.append(refundId)
      })
  }

  func orderDocument(_ orderId: String) throws -> String? {
    try session.run(#"SELECT document FROM "order" WHERE orderId = $1"#, binds { $0.append(orderId) }).rows.first.map {
      try $0.columns(String.self)
    }
  }

  func operation(kind: String, key: String) throws -> OperationRow? {
    // FOR UPDATE: a second transaction on this key waits for the first to end, then reads what it left.
    try session.run(
      "SELECT \(Self.operationColumns) FROM operation WHERE kind = $1 AND key = $2 FOR UPDATE",
      binds {
        $0.append(kind)
        $0.append(key)
      }
    ).rows.first.map(Self.operation)
  }

  func insert(_ operation: OperationRow) throws -> Bool {
    // A concurrent insert of the same key waits here for the other transaction, then does nothing.
    try session.changes(
      """
      INSERT INTO operation (\(Self.operationColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
      ON CONFLICT (kind, key) DO NOTHING
      """,
      binds {
        $0.append(operation.kind)
        $0.append(operation.key)
        $0.append(operation.fingerprint)
        $0.append(operation.state.rawValue)
        $0.append(operation.subject)
        $0.append(operation.request)
        $0.append(operation.result)
        $0.append(operation.created)
        $0.append(operation.settled)
      }) == 1
  }

  func settleOperation(kind: String, key: String, result: String, at now: String) throws {
    let changed = try session.changes(
      """
      UPDATE operation SET state = 'settled', result = $1, settled = $2 WHERE kind = $3 AND key = $4 AND state = 'pending'
      """,
      binds {
        $0.append(result)
        $0.append(now)
        $0.append(kind)
        $0.append(key)
      })
    guard changed == 1 else { throw StoreError.unavailable(reason: "operation \(kind) \(key) is not pending") }
  }

  func removeOperation(kind: String, key: String) throws {
    let changed = try session.changes(
      "DELETE FROM operation WHERE kind = $1 AND key = $2 AND state = 'pending'",
      binds {
        $0.append(kind)
        $0.append(key)
      })
    guard changed == 1 else { throw StoreError.unavailable(reason: "operation \(kind) \(key) is not pending") }
  }

  func pendingOperations(subject: String) throws -> [OperationRow] {
    try session.run(
      """
      SELECT \(Self.operationColumns) FROM operation WHERE subject = $1 AND state = 'pending'
      ORDER BY created COLLATE "C", kind COLLATE "C", key COLLATE "C"
      """, binds { $0.append(subject) }
    ).rows.map(Self.operation)
  }

  func rewriteOperation(kind: String, key: String, fingerprint: String, result: String?) throws {
    let changed = try session.changes(
      "UPDATE operation SET fingerprint = $1, result = $2 WHERE kind = $3 AND key = $4 AND state = 'settled'",
      binds {
        $0.append(fingerprint)
        $0.append(result)
        $0.append(kind)
        $0.append(key)
      })
    guard changed == 1 else { throw StoreError.unavailable(reason: "operation \(kind) \(key) is not settled") }
  }

  // MARK: Stock by hand

  func stockLevel(_ sku: String) throws -> StockLevel? {
    try session.run("SELECT quantityOnHand, sold FROM stock WHERE sku = $1 FOR UPDATE", binds { $0.append(sku) })
      .rows.first.map { row in
        let (onHand, sold) = try row.columns((Int, Int).self)
        return StockLevel(sku: sku, quantityOnHand: onHand, sold: sold)
      }
  }

  func setQuantityOnHand(_ sku: String, to quantity: Int) throws {
    let changed = try session.changes(
      "UPDATE stock SET quantityOnHand = $1 WHERE sku = $2",
      binds {
        $0.append(Int64(quantity))
        $0.append(sku)
      })
    guard changed == 1 else { throw StoreError.unavailable(reason: "stock of \(sku) vanished") }
  }

  func nextStockEventPosition(_ sku: String) throws -> Int {
    let rows = try session.run(
      "SELECT COALESCE(MAX(position), 0) + 1 FROM stockEvent WHERE sku = $1", binds { $0.append(sku) }
    ).rows
    return try rows.first.map { try $0.columns(Int.self) } ?? 1
  }

  static let stockEventColumns = "sku, position, kind, at, delta, quantityOnHand, adjustmentId, reason"

  /// A row selected with `stockEventColumns`.
  static func stockEvent(_ row: PostgresRow) throws -> StockEventRow {
    let (sku, position, kind, at, delta, onHand, adjustmentId, reason) = try row.columns(
      (String, Int, String, String, Int, Int, String, String).self)
    guard let kind = StockEventRow.Kind(rawValue: kind) else {
      throw StoreError.unavailable(reason: "a stock event of unknown kind")
    }
    return StockEventRow(
      sku: sku, position: position, kind: kind, at: at, delta: delta, quantityOnHand: onHand,
      adjustmentId: adjustmentId, reason: reason)
  }

  func insert(_ event: StockEventRow) throws {
    try session.run(
      "INSERT INTO stockEvent (\(Self.stockEventColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
      binds {
        $0.append(event.sku)
        $0.append(Int64(event.position))
        $0.append(event.kind.rawValue)
        $0.append(event.at)
        $0.append(Int64(event.delta))
        $0.append(Int64(event.quantityOnHand))
        $0.append(event.adjustmentId)
        $0.append(event.reason)
      })
  }

  // MARK: Personal data

  /// ASCII letters of `expression` lower-cased, as SQLite's lower() does (and `ErasureSelector.foldedEmail`).
  private static func asciiLower(_ expression: String) -> String {
    "translate(\(expression), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
  }

  func tokensToErase(_ selector: ErasureSelector, limit: Int) throws -> [String] {
    let condition: String
    let value: String
    switch selector {
    case .emailAddress(let address):
      condition = """
        (\(Self.asciiLower("t.binding::jsonb #>> '{shippingContact,emailAddress}'")) = $1
          OR \(Self.asciiLower("t.billingContact::jsonb ->> 'emailAddress'")) = $1
          OR \(Self.asciiLower("(op.fingerprint::jsonb ->> 'billingContact')::jsonb ->> 'emailAddress'")) = $1)
        """
      value = ErasureSelector.foldedEmail(address)
    case .orderId(let orderId):
      condition = "o.orderId = $1"
      value = orderId
    case .issuedBefore(let time):
      condition = #"t.issuedAt COLLATE "C" < $1"#
      value = time
    }
    // FOR UPDATE OF t: an erasure and an order on the same token take turns.
    return try session.run(
      """
      SELECT t.token FROM chargeToken t
      LEFT JOIN charge c ON c.token = t.token LEFT JOIN "order" o ON o.chargeId = c.chargeId
      LEFT JOIN operation op ON op.kind = 'order' AND op.key = t.token
      WHERE t.erasedAt IS NULL AND (op.state IS NULL OR op.state = 'settled') AND \(condition)
      ORDER BY t.sequence LIMIT $2 FOR UPDATE OF t
      """,
      binds {
        $0.append(value)
        $0.append(limit)
      }
    ).rows.map { try $0.columns(String.self) }
  }

  func personalData(token: String) throws -> PersonalDataRow? {
    let rows = try session.run(
      """
      SELECT t.binding, t.billingContact, o.orderId, o.document FROM chargeToken t
      LEFT JOIN charge c ON c.token = t.token LEFT JOIN "order" o ON o.chargeId = c.chargeId
      WHERE t.token = $1 FOR UPDATE OF t
      """, binds { $0.append(token) }
    ).rows
    guard let row = rows.first else { return nil }
    let (binding, billing, orderId, document) = try row.columns((String, String?, String?, String?).self)
    return PersonalDataRow(token: token, binding: binding, billingContact: billing, orderId: orderId, orderDocument: document)
  }

  func erasePersonalData(_ row: PersonalDataRow, at now: String) throws {
    let changed = try session.changes(
      "UPDATE chargeToken SET binding = $1, billingContact = $2, erasedAt = $3 WHERE token = $4",
      binds {
        $0.append(row.binding)
        $0.append(row.billingContact)
        $0.append(now)
        $0.append(row.token)
      })
    guard changed == 1 else { throw StoreError.unavailable(reason: "a charge token vanished") }
    if let orderId = row.orderId, let document = row.orderDocument {
      let changed = try session.changes(
        #"UPDATE "order" SET document = $1, erasedAt = $2 WHERE orderId = $3"#,
        binds {
          $0.append(document)
          $0.append(now)
          $0.append(orderId)
        })
      guard changed == 1 else { throw StoreError.unavailable(reason: "order \(orderId) vanished") }
    }
  }
}
