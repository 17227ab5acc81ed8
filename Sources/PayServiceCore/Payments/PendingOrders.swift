/// The orders pending at a remote gateway: charged, or being charged, with no answer recorded
/// yet. The journal holds them (a checkout's `order` entry, an agreement's later payment), each
/// with the order it records once the gateway answers.
enum PendingOrders {
  /// The orders pending (not recorded yet), oldest first: checkouts, and agreements' later
  /// payments. Each as its document (status pending) and as listOrders lists it.
  static func of(_ store: any Store) throws -> [(document: OrderDocument, summary: OrderSummaryRow)] {
    try among(store.pendingOperations())
  }

  /// The orders among pending journal entries (`Store.pendingOperations`).
  static func among(_ entries: [OperationRow]) throws -> [(document: OrderDocument, summary: OrderSummaryRow)] {
    try entries.compactMap { entry in
      switch entry.kind {
      case ProcessOrder.Placement.kind:
        let charge = try OperationRunner.call(of: entry, as: ProcessOrder.Placement.self).0
        return (charge.prepared.document, charge.summary)
      case AgreementPayment.kind:
        let call = try OperationRunner.call(of: entry, as: AgreementPayment.self).0
        return (call.prepared.document, call.summary)
      default:
        return nil
      }
    }
  }

  /// How old a pending charge must be before a gateway search that finds no payment for it is
  /// believed: Stripe's search results can lag a new PaymentIntent by up to a minute.
  static let searchLagSeconds: Int64 = 120
}
