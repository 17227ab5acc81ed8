import GRDB

// MARK: Back office and gateway books

extension SQLiteTransaction: BackOfficeBook, GatewayBook {
  static let lockOrder = StoreStatement(
    """
    SELECT \(StoreSQL.orderStateColumns),
      (SELECT COALESCE(MAX(position), 0) + 1 FROM orderEvent e WHERE e.orderId = o.orderId)
    \(StoreSQL.orderStateSource)
    """)
  static let orderLines = StoreStatement(
    "SELECT \(StoreSQL.orderLineColumns) FROM orderItem WHERE orderId = ? ORDER BY rowid")

  func lockOrder(_ orderId: String) throws -> OrderState? {
    // The store's write lock is held already: nothing else changes the order meanwhile.
    guard let row = try Row.fetchOne(db.cachedStatement(sql: Self.lockOrder.sqlite), arguments: [orderId]) else {
      return nil
    }
    let lines = try all(Self.orderLines, [.text(orderId)]) { line in
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
      authorizationId: row[10], nextEventPosition: row[13], gatewayPaymentId: row[11], taxIncluded: row[12])
  }

  /// A row selected with `StoreSchema.disputeColumns`.
  static func dispute(_ row: Row) -> DisputeRow {
    DisputeRow(
      disputeId: row[0], orderId: row[1], createdAt: row[2], amountMinor: row[3], currencyCode: row[4], reason: row[5],
      status: row[6], evidenceDueBy: row[7], withdrawnMinor: row[8], reinstatedMinor: row[9],
      observed: DisputeRow.Observation(rank: row[10], at: row[11], by: row[12]))
  }

  func disputes(orderId: String) throws -> [DisputeRow] {
    try all(StoreSQL.disputesOfOrder, [.text(orderId)], Self.dispute)
  }

  /// A row selected with `StoreSQL.refundColumns`.
  static func refund(_ row: Row) -> RefundRow {
    RefundRow(
      refundId: row[0], orderId: row[1], position: row[2], createdAt: row[3], amountMinor: row[4], document: row[5],
      gatewayRefundId: row[6])
  }

  func orderId(gatewayPaymentId: String) throws -> String? {
    try one(StoreSQL.orderIdByGatewayPayment, [.text(gatewayPaymentId)]) { row -> String in row[0] }
  }

  func refund(_ refundId: String) throws -> RefundRow? {
    try one(StoreSQL.refund, [.text(refundId)], Self.refund)
  }

  func refund(gatewayRefundId: String) throws -> RefundRow? {
    try one(StoreSQL.refundByGatewayRefund, [.text(gatewayRefundId)], Self.refund)
  }

  func dispute(_ disputeId: String) throws -> DisputeRow? {
    try one(StoreSQL.dispute, [.text(disputeId)], Self.dispute)
  }

  func orderDocument(_ orderId: String) throws -> String? {
    try one(StoreSQL.orderDocument, [.text(orderId)]) { row -> String in row[0] }
  }
}
