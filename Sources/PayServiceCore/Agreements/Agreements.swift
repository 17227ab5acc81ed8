/// How an agreement is made and how each payment moves it: the rules billing runs, reloads and
/// cancellations share. Every function here runs inside a store transaction with the agreement
/// locked (`StoreTransaction.lockAgreement`), so two processes never move one agreement at once.
public enum Agreements {
  /// Records the agreement a checkout order made (`prepared.agreement`), paid with `credential`,
  /// and returns its id. In the transaction that records the order, with locks when it makes one.
  static func create(
    for prepared: PreparedOrder, credential: AgreementCredential, sandboxOutcome: SandboxOutcome?,
    transaction: any OrderTransaction, context: ServiceContext, now: Int64
  ) throws -> String? {
    guard let planned = prepared.agreement else { return nil }
    let transaction = try transaction.locked()
    let nowText = RFC3339.format(now)
    let orderId = prepared.document.orderId
    let agreementId = try context.identifiers.agreementId(orderId: orderId)
    var terms = planned.terms
    terms.firstPeriod = planned.period
    let next = terms.dueDate(period: planned.period)
    // A subscription whose end came before its next period, or a plan with nothing left to pay.
    let status: AgreementStatus = next == nil && terms.kind != .automaticReload ? .completed : .active
    try transaction.insert(
      AgreementRow(
        agreementId: agreementId, orderId: orderId, kind: terms.kind, sku: planned.sku, quantity: planned.quantity,
        currencyCode: prepared.document.currencyCode, createdAt: nowText, status: status, nextPaymentAt: next,
        period: planned.period, attempt: 0, cancelAtPeriodEnd: false, terms: JSONWriter.string(terms),
        credential: JSONWriter.string(credential), sandboxOutcome: sandboxOutcome?.rawValue, customerAction: nil,
        updatedAt: nowText))
    if let token = credential.merchantToken {
      try transaction.setMerchantToken(agreementId: agreementId, identifier: token.identifier)
    }
    try transaction.append(AgreementEventRow(agreementId: agreementId, position: 0, kind: .created, at: nowText, orderId: orderId))
    if let token = credential.merchantToken, token.status == .unlinked {
      // Apple unlinked the token before the agreement was made: said on it now, ended by the billing run.
      try transaction.append(
        AgreementEventRow(
          agreementId: agreementId, position: 0, kind: .merchantTokenUnlinked, at: nowText, code: token.reason))
    }
    if status == .completed {
      try transaction.append(
        AgreementEventRow(agreementId: agreementId, position: 0, kind: .statusChanged, at: nowText, code: status.rawValue))
    }
    return agreementId
  }

  /// The agreement's terms, as stored.
  static func terms(of agreement: AgreementRow) throws(StoreError) -> AgreementTerms {
    try StoredJSON.read(agreement.terms, as: AgreementTerms.self, "agreement terms")
  }

  static func credential(of agreement: AgreementRow) throws(StoreError) -> AgreementCredential {
    try StoredJSON.read(agreement.credential, as: AgreementCredential.self, "agreement credential")
  }

  /// Sets `status` (with its event when it changes). An agreement that ends gives up its merchant
  /// token (`unlinkMerchantToken`).
  static func move(
    _ agreement: inout AgreementRow, to status: AgreementStatus, transaction: any StoreTransaction,
    context: ServiceContext, now: Int64
  ) throws {
    guard agreement.status != status else { return }
    agreement.status = status
    try transaction.append(
      AgreementEventRow(
        agreementId: agreement.agreementId, position: 0, kind: .statusChanged, at: RFC3339.format(now),
        code: status.rawValue))
    if !status.collects && status != .actionRequired {
      try unlinkMerchantToken(&agreement, transaction: transaction, context: context, now: now)
    }
  }

  /// A payment went through: the agreement moves to its next payment (or is completed), a
  /// decline's dunning is over.
  static func paid(
    _ agreement: inout AgreementRow, terms: AgreementTerms, orderId: String, amountMinor: Int64,
    transaction: any StoreTransaction, context: ServiceContext, now: Int64
  ) throws {
    let nowText = RFC3339.format(now)
    try transaction.append(
      AgreementEventRow(
        agreementId: agreement.agreementId, position: 0, kind: .paid, at: nowText, period: agreement.period,
        attempt: agreement.attempt + 1, orderId: orderId, amountMinor: amountMinor))
    agreement.period += 1
    agreement.attempt = 0
    agreement.customerAction = nil
    agreement.updatedAt = nowText
    switch agreement.kind {
    case .automaticReload:
      agreement.nextPaymentAt = nil
      try move(&agreement, to: .active, transaction: transaction, context: context, now: now)
    case .recurring, .deferred:
      agreement.nextPaymentAt = terms.dueDate(period: agreement.period)
      try move(
        &agreement, to: agreement.nextPaymentAt == nil ? .completed : .active, transaction: transaction, context: context,
        now: now)
    }
    try transaction.update(agreement)
  }

  /// Whether a decline needs the customer rather than a retry: the bank wants them to
  /// authenticate, or the card can no longer be charged.
  static func customerAction(failureCode: String, declineCode: String?) -> CustomerAction? {
    if declineCode == "authentication_required" || failureCode == "authentication_required" {
      return CustomerAction(
        code: .authenticate,
        message: "Your bank asks you to confirm this payment. Confirm it, or add another card, to keep your plan.")
    }
    let needsNewCard = ["expired_card", "lost_card", "stolen_card", "pickup_card", "incorrect_number", "invalid_account", "fraudulent",
                        "card_not_supported", "payment_method_unavailable"]
    if needsNewCard.contains(failureCode) || needsNewCard.contains(declineCode ?? "") {
      return CustomerAction(
        code: .updatePaymentMethod, message: "Your card can no longer be charged. Add another card to keep your plan.")
    }
    return nil
  }

  /// A payment was declined (or refused for good): the agreement is past due and retried on
  /// `billing.retries`, or waits for the customer, or, its retries spent, is unpaid or canceled.
  static func declined(
    _ agreement: inout AgreementRow, failureCode: String, declineCode: String?, action: CustomerAction?,
    settings: BillingSettings, transaction: any StoreTransaction, context: ServiceContext, now: Int64
  ) throws {
    let nowText = RFC3339.format(now)
    agreement.attempt += 1
    try transaction.append(
      AgreementEventRow(
        agreementId: agreement.agreementId, position: 0, kind: .declined, at: nowText, period: agreement.period,
        attempt: agreement.attempt, code: failureCode, declineCode: declineCode))
    agreement.updatedAt = nowText
    if let action {
      agreement.customerAction = JSONWriter.string(action)
      agreement.nextPaymentAt = nil
      try move(&agreement, to: .actionRequired, transaction: transaction, context: context, now: now)
    } else if agreement.attempt <= settings.retries.count {
      // A reload is tried again when a balance is next reported, not on a schedule.
      agreement.nextPaymentAt =
        agreement.kind == .automaticReload ? nil : now + Int64(settings.retries[agreement.attempt - 1]) * 86_400
      try move(&agreement, to: .pastDue, transaction: transaction, context: context, now: now)
    } else {
      agreement.nextPaymentAt = nil
      try move(
        &agreement, to: settings.whenRetriesFail == .canceled ? .canceled : .unpaid, transaction: transaction,
        context: context, now: now)
    }
    try transaction.update(agreement)
  }

  /// Ends an agreement now (`canceled` or `completed`): nothing more is charged.
  static func end(
    _ agreement: inout AgreementRow, as status: AgreementStatus, transaction: any StoreTransaction,
    context: ServiceContext, now: Int64
  ) throws {
    let nowText = RFC3339.format(now)
    agreement.nextPaymentAt = nil
    agreement.cancelAtPeriodEnd = false
    agreement.updatedAt = nowText
    try move(&agreement, to: status, transaction: transaction, context: context, now: now)
    try transaction.update(agreement)
  }
}
