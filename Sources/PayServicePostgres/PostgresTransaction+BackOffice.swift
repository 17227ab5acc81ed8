import PayServiceCore
import PostgresNIO

// MARK: Back office and gateway books

extension PostgresTransaction: BackOfficeBook, GatewayBook {
  // FOR UPDATE OF o: back-office calls on one order take turns; the charge and token rows are
  // only read.
  static let lockOrder =
    StoreStatement("SELECT \(StoreSQL.orderStateColumns)\n\(StoreSQL.orderStateSource)").postgres + " FOR UPDATE OF o"
  static let orderLines =
    StoreStatement("SELECT \(StoreSQL.orderLineColumns) FROM orderItem WHERE orderId = ? ORDER BY position").postgres

  func lockOrder(_ orderId: String) throws -> OrderState? {
    let key: [StoreValue] = [.text(orderId)]
    guard let row = try rows(Self.lockOrder, key).first else { return nil }
    let (chargeId, currency, status, amount, captured, refunded, shipping, shippingTax, shippingRefunded, outcome,
      authorizationId, gatewayPaymentId, taxIncluded) = try row.columns(
        (String, String, String, Int64, Int64?, Int64, Int64?, Int64?, Bool, String, String?, String?, Bool).self)
    let lines = try all(Self.orderLines, key) { line in
      let (sku, quantity, lineAmount, discount, tax, refundedQuantity) = try line.columns(
        (String, Int, Int64, Int64?, Int64?, Int).self)
      return OrderState.Line(
        sku: sku, quantity: quantity, amountMinor: lineAmount, discountMinor: discount, taxMinor: tax,
        refundedQuantity: refundedQuantity)
    }
    guard let next = try one(StoreSQL.nextOrderEventPosition.postgres, key, { try $0.columns(Int.self) }) else {
      throw StoreError.unavailable(reason: "no event position for \(orderId)")
    }
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

  /// A row selected with `StoreSchema.disputeColumns`.
  static func dispute(_ row: PostgresRow) throws -> DisputeRow {
    let (id, orderId, createdAt, amount, currency, reason, status, due, withdrawn, reinstated, rank, at, by) =
      try row.columns((String, String, String, Int64, String, String, String, String?, Int64, Int64, Int, Int64, String).self)
    return DisputeRow(
      disputeId: id, orderId: orderId, createdAt: createdAt, amountMinor: amount, currencyCode: currency, reason: reason,
      status: status, evidenceDueBy: due, withdrawnMinor: withdrawn, reinstatedMinor: reinstated,
      observed: DisputeRow.Observation(rank: rank, at: at, by: by))
  }

  func disputes(orderId: String) throws -> [DisputeRow] {
    try all(StoreSQL.disputesOfOrder.postgres, [.text(orderId)], Self.dispute)
  }

  /// A row selected with `StoreSQL.refundColumns`.
  static func refund(_ row: PostgresRow) throws -> RefundRow {
    let (id, orderId, position, createdAt, amount, document, gatewayRefundId) = try row.columns(
      (String, String, Int, String, Int64, String, String?).self)
    return RefundRow(
      refundId: id, orderId: orderId, position: position, createdAt: createdAt, amountMinor: amount, document: document,
      gatewayRefundId: gatewayRefundId)
  }

  func orderId(gatewayPaymentId: String) throws -> String? {
    try one(StoreSQL.orderIdByGatewayPayment.postgres, [.text(gatewayPaymentId)]) { try $0.columns(String.self) }
  }

  func refund(_ refundId: String) throws -> RefundRow? {
    try one(StoreSQL.refund.postgres, [.text(refundId)], Self.refund)
  }

  func refund(gatewayRefundId: String) throws -> RefundRow? {
    try one(StoreSQL.refundByGatewayRefund.postgres, [.text(gatewayRefundId)], Self.refund)
  }

  func dispute(_ disputeId: String) throws -> DisputeRow? {
    try one(StoreSQL.dispute.postgres, [.text(disputeId)], Self.dispute)
  }

  func orderDocument(_ orderId: String) throws -> String? {
    try one(StoreSQL.orderDocument.postgres, [.text(orderId)]) { try $0.columns(String.self) }
  }
}
