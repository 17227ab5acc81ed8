// MARK: Back office and gateway books (`BackOfficeBook`, `GatewayBook`)

extension StoreSQL {
  /// What `OrderState` reads of an order (`o`), its charge and token (`t`, left joined): the
  /// columns, and from where, by orderId.
  public static let orderStateColumns = """
    o.chargeId, o.currencyCode, o.status, o.amountMinor, o.capturedMinor, o.refundedMinor, o.shippingMinor, \
    o.shippingTaxMinor, o.shippingRefunded, \(StoreSchema.orderSandboxOutcome), t.authorizationId, o.gatewayPaymentId, \
    o.taxIncluded
    """
  public static let orderStateSource = """
    FROM "order" o JOIN charge c ON c.chargeId = o.chargeId LEFT JOIN chargeToken t ON t.token = c.token
    WHERE o.orderId = ?
    """

  /// An order line's columns, in `OrderState.Line`'s order.
  public static let orderLineColumns = "sku, quantity, amountMinor, discountMinor, taxMinor, refundedQuantity"

  /// (orderId) The position an order's next event takes.
  public static let nextOrderEventPosition = StoreStatement(
    "SELECT COALESCE(MAX(position), 0) + 1 FROM orderEvent WHERE orderId = ?")

  /// (orderId) Its disputes, oldest first.
  public static let disputesOfOrder = StoreStatement { dialect in
    """
    SELECT \(StoreSchema.disputeColumns) FROM dispute WHERE orderId = ?
    ORDER BY createdAt\(dialect.collate), disputeId\(dialect.collate)
    """
  }

  /// (status, capturedMinor, refundedMinor, shippingRefunded, orderId)
  public static let updateOrder = StoreStatement(
    #"UPDATE "order" SET status = ?, capturedMinor = ?, refundedMinor = ?, shippingRefunded = ? WHERE orderId = ?"#)

  /// (quantity, orderId, sku)
  public static let setRefundedQuantity = StoreStatement(
    "UPDATE orderItem SET refundedQuantity = ? WHERE orderId = ? AND sku = ?")

  /// (quantity, sku)
  public static let restock = StoreStatement(
    """
    UPDATE stock SET quantityOnHand = quantityOnHand + ?1, sold = sold - ?1
    WHERE sku = ?2 AND sold >= ?1
    """)

  public static let insertOrderEvent = StoreStatement(
    """
    INSERT INTO orderEvent (orderId, position, kind, at, amountMinor, reference, reason)
    VALUES (\(StoreStatement.placeholders(7)))
    """)

  public static func values(_ event: OrderEventRow) -> [StoreValue] {
    [
      .text(event.orderId), .int(event.position), .text(event.kind.rawValue), .text(event.at),
      .integer(event.amountMinor), .text(event.reference), .text(event.reason),
    ]
  }

  /// A refund's columns, in `RefundRow`'s order.
  public static let refundColumns = "refundId, orderId, position, createdAt, amountMinor, document, gatewayRefundId"

  public static let insertRefund = StoreStatement(
    "INSERT INTO refund (\(refundColumns)) VALUES (\(StoreStatement.placeholders(7)))")

  public static func values(_ refund: RefundRow) -> [StoreValue] {
    [
      .text(refund.refundId), .text(refund.orderId), .int(refund.position), .text(refund.createdAt),
      .integer(refund.amountMinor), .text(refund.document), .text(refund.gatewayRefundId),
    ]
  }

  public static let orderIdByGatewayPayment = StoreStatement(#"SELECT orderId FROM "order" WHERE gatewayPaymentId = ?"#)
  public static let refund = StoreStatement("SELECT \(refundColumns) FROM refund WHERE refundId = ?")
  public static let refundByGatewayRefund = StoreStatement(
    "SELECT \(refundColumns) FROM refund WHERE gatewayRefundId = ?")
  /// (document, refundId)
  public static let updateRefund = StoreStatement("UPDATE refund SET document = ? WHERE refundId = ?")
  public static let orderDocument = StoreStatement(#"SELECT document FROM "order" WHERE orderId = ?"#)
  public static let dispute = StoreStatement("SELECT \(StoreSchema.disputeColumns) FROM dispute WHERE disputeId = ?")

  public static let insertDispute = StoreStatement(
    """
    INSERT INTO dispute (orderId, createdAt, amountMinor, currencyCode, reason, status, evidenceDueBy,
      withdrawnMinor, reinstatedMinor, observedRank, observedAt, observedBy, disputeId)
    VALUES (\(StoreStatement.placeholders(13)))
    """)

  public static let updateDispute = StoreStatement(
    """
    UPDATE dispute SET orderId = ?, createdAt = ?, amountMinor = ?, currencyCode = ?, reason = ?, status = ?,
      evidenceDueBy = ?, withdrawnMinor = ?, reinstatedMinor = ?, observedRank = ?, observedAt = ?, observedBy = ?
    WHERE disputeId = ?
    """)

  /// What `insertDispute` and `updateDispute` bind.
  public static func values(_ dispute: DisputeRow) -> [StoreValue] {
    [
      .text(dispute.orderId), .text(dispute.createdAt), .integer(dispute.amountMinor), .text(dispute.currencyCode),
      .text(dispute.reason), .text(dispute.status), .text(dispute.evidenceDueBy), .integer(dispute.withdrawnMinor),
      .integer(dispute.reinstatedMinor), .int(dispute.observed.rank), .integer(dispute.observed.at),
      .text(dispute.observed.by), .text(dispute.disputeId),
    ]
  }
}

extension StatementRunner {
  public func updateOrder(
    _ orderId: String, status: OrderStatus, capturedMinor: Int64?, refundedMinor: Int64, shippingRefunded: Bool
  ) throws {
    try executeOne(
      StoreSQL.updateOrder,
      [.text(status.rawValue), .integer(capturedMinor), .integer(refundedMinor), .bool(shippingRefunded), .text(orderId)],
      orFail: "order \(orderId) vanished")
  }

  public func setRefundedQuantity(orderId: String, sku: String, to quantity: Int) throws {
    try executeOne(
      StoreSQL.setRefundedQuantity, [.int(quantity), .text(orderId), .text(sku)],
      orFail: "order \(orderId) has no line \(sku)")
  }

  public func restock(_ sku: String, by quantity: Int) throws -> Bool {
    try execute(StoreSQL.restock, [.int(quantity), .text(sku)]) == 1
  }

  public func insert(_ event: OrderEventRow) throws {
    try execute(StoreSQL.insertOrderEvent, StoreSQL.values(event))
  }

  public func insert(_ refund: RefundRow) throws {
    try execute(StoreSQL.insertRefund, StoreSQL.values(refund))
  }

  public func updateRefund(_ refundId: String, document: String) throws {
    try execute(StoreSQL.updateRefund, [.text(document), .text(refundId)])
  }

  public func save(_ dispute: DisputeRow, isNew: Bool) throws {
    if isNew {
      try execute(StoreSQL.insertDispute, StoreSQL.values(dispute))
    } else {
      try executeOne(StoreSQL.updateDispute, StoreSQL.values(dispute), orFail: "dispute \(dispute.disputeId) vanished")
    }
  }
}
