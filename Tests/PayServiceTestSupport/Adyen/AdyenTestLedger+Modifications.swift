/// Modifications (captures, cancels, refunds), what happens to payments later (settling a
/// `Received` payment, a capture or refund the scheme rejects), and disputes.
///
/// Adyen answers a modification request at once with `status` `received` and its own pspReference,
/// and reports the outcome only in a notification (CheckoutService-v71.json, the three endpoints'
/// descriptions). So only an unknown payment is refused in the answer (422 167 "Original
/// pspReference required for this operation", as Adyen's API libraries record it); what the
/// payment's balance does not allow is accepted and fails in the notification, with `success`
/// `false` and Adyen's reasons: "Insufficient balance on payment" (a capture or refund above what
/// is left, or in another currency: balances are per currency), "Transaction hasn't been captured,
/// refund not possible" (the REFUND example of Adyen's Webhooks description).
extension AdyenTestLedger {
  struct Modification: Sendable {
    enum Kind: String, Sendable { case capture, cancel, refund }
    var kind: Kind
    var pspReference: String
    var paymentPspReference: String
    var reference: String?
    /// The amount asked for (a cancel: the payment's).
    var amount: AdyenAmount
    /// Whether the notification said `success` `true`.
    var succeeded: Bool
    /// CAPTURE_FAILED or REFUND_FAILED came later (`failModification`).
    var failedLater = false
  }

  struct Dispute: Sendable {
    var pspReference: String
    var paymentPspReference: String
    var amount: AdyenAmount
    /// The event codes sent, in order.
    var events: [String]
  }

  /// A modification request after validation.
  struct ModificationInput: Sendable {
    var amount: AdyenAmount?
    var reference: String?
  }

  func validateModification(
    _ kind: Modification.Kind, _ body: AdyenJSON
  ) -> Result<ModificationInput, AdyenServiceError> {
    guard body["merchantAccount"]?.string == merchantAccount else { return .failure(.invalidMerchantAccount) }
    var amount: AdyenAmount?
    if kind != .cancel {
      switch AdyenAmount.read(body["amount"], minimum: 1) {
      case .success(let read): amount = read
      case .failure(let error): return .failure(error)
      }
    }
    if let reference = body["reference"], reference.string == nil {
      return .failure(.unexpectedInput("Unexpected input: \(reference.rendered) is not a valid reference"))
    }
    return .success(ModificationInput(amount: amount, reference: body["reference"]?.string))
  }

  /// `POST /payments/{paymentPspReference}/captures|cancels|refunds`: the answer (201) and the
  /// queued CAPTURE, CANCELLATION or REFUND notification.
  ///
  /// - A capture succeeds on an Authorised payment with manual capture, not cancelled, in its
  ///   currency, for at most what is capturable; what it leaves is released ("By default, any
  ///   unclaimed amount after a partial capture gets cancelled"). A payment captured automatically
  ///   has nothing left to capture ("making capture requests for payments that are captured
  ///   automatically does not result in double charges").
  /// - A cancel succeeds on an Authorised payment nothing was captured of ("Cancels the
  ///   authorisation on a payment that has not yet been captured"); on a captured one it fails.
  /// - A refund succeeds in the payment's currency for at most what was captured and not yet
  ///   refunded ("You can also perform multiple partial refunds, as long as their sum doesn't
  ///   exceed the captured amount").
  mutating func modify(
    _ kind: Modification.Kind, payment paymentPSP: String, _ input: ModificationInput, idempotencyKey: String?
  ) -> Result<AdyenJSON, AdyenServiceError> {
    guard var payment = payments[paymentPSP] else {
      return .failure(.validation("167", "Original pspReference required for this operation", nextPSPReference()))
    }
    let psp = nextPSPReference()
    let amount = input.amount ?? payment.amount
    let authorised = payment.resultCode == "Authorised" && !payment.cancelled
    let sameCurrency = amount.currency == payment.amount.currency
    var failure: String?
    switch kind {
    case .capture:
      if authorised, sameCurrency, amount.value <= payment.capturable {
        payment.captured += amount.value
        payment.capturable = 0
      } else {
        failure = "Insufficient balance on payment"
      }
    case .cancel:
      if authorised, payment.captured == 0 {
        payment.capturable = 0
        payment.cancelled = true
      } else {
        failure =
          payment.captured > 0
          ? "Transaction has been captured, cancel not possible" : "Insufficient balance on payment"
      }
    case .refund:
      if authorised, sameCurrency, amount.value <= payment.captured - payment.refunded {
        payment.refunded += amount.value
      } else {
        failure =
          authorised && payment.captured == 0
          ? "Transaction hasn't been captured, refund not possible" : "Insufficient balance on payment"
      }
    }
    payments[paymentPSP] = payment
    modifications[psp] = Modification(
      kind: kind, pspReference: psp, paymentPspReference: paymentPSP, reference: input.reference, amount: amount,
      succeeded: failure == nil)
    modificationOrder.append(psp)
    if let idempotencyKey { createdPerIdempotencyKey[idempotencyKey, default: 0] += 1 }
    let eventCode = ["capture": "CAPTURE", "cancel": "CANCELLATION", "refund": "REFUND"][kind.rawValue]!
    queueModification(
      eventCode, success: failure == nil, psp: psp, payment: payment, modificationReference: input.reference,
      amount: amount, reason: failure)
    var members: [(String, AdyenJSON)] = [
      ("merchantAccount", .string(merchantAccount)), ("paymentPspReference", .string(paymentPSP)),
    ]
    if let reference = input.reference { members.append(("reference", .string(reference))) }
    members += [("pspReference", .string(psp)), ("status", .string("received"))]
    if kind != .cancel { members.append(("amount", amount.json)) }
    return .success(.object(members))
  }

  /// A modification's notification: the modification's pspReference, the payment's as
  /// `originalReference`, and as `merchantReference` the modification's own `reference` when it
  /// had one (the payment's otherwise).
  mutating func queueModification(
    _ eventCode: String, success: Bool, psp: String, payment: Payment, modificationReference: String?,
    amount: AdyenAmount, reason: String?, additionalData: [String: String] = [:]
  ) {
    queued.append(
      AdyenNotificationItem(
        eventCode: eventCode, success: success, pspReference: psp, originalReference: payment.pspReference,
        merchantAccountCode: merchantAccount, merchantReference: modificationReference ?? payment.reference,
        currency: amount.currency, value: amount.value, paymentMethod: payment.card.brand, reason: reason,
        operations: nil, additionalData: additionalData, eventDate: AdyenClock.eventDate(now)))
  }

  /// Ends a `Received` payment: Authorised (captured or held as its request asked, its card stored
  /// if asked) or Refused (2 "Refused"), with its AUTHORISATION notification. False when the
  /// payment is unknown or not `Received`.
  mutating func settle(_ psp: String, authorised: Bool) -> Bool {
    guard var payment = payments[psp], payment.resultCode == "Received" else { return false }
    var tokenization: [String: String] = [:]
    if authorised {
      tokenization = authorise(&payment)
    } else {
      payment.resultCode = "Refused"
      payment.refusal = .refused
    }
    payments[psp] = payment
    queueAuthorisation(payment, tokenization: tokenization)
    return true
  }

  /// A capture or refund that succeeded and that the card scheme rejects later ("CAPTURE_FAILED
  /// and REFUND_FAILED reasons", https://docs.adyen.com/online-payments/capture/failure-reasons):
  /// queues CAPTURE_FAILED or REFUND_FAILED after its CAPTURE or REFUND, with `success` `true` and
  /// the reason of Adyen's examples ("Capture Failed", "Refund Failed"), and gives the amount back
  /// to the payment's balance. False when `psp` is not such a capture or refund.
  mutating func failModification(_ psp: String) -> Bool {
    guard let modification = modifications[psp], modification.kind != .cancel, modification.succeeded,
      !modification.failedLater, var payment = payments[modification.paymentPspReference]
    else { return false }
    modifications[psp]!.failedLater = true
    if modification.kind == .capture {
      payment.captured -= modification.amount.value
    } else {
      payment.refunded -= modification.amount.value
    }
    payments[payment.pspReference] = payment
    let capture = modification.kind == .capture
    queueModification(
      capture ? "CAPTURE_FAILED" : "REFUND_FAILED", success: true, psp: psp, payment: payment,
      modificationReference: modification.reference, amount: modification.amount,
      reason: capture ? "Capture Failed" : "Refund Failed")
    return true
  }

  // MARK: - Disputes

  /// The dispute events ("Dispute webhooks",
  /// https://docs.adyen.com/risk-management/disputes-api/dispute-notifications), each with the
  /// `disputeStatus` it carries by default, and the events that may follow it.
  static let disputeEvents: [String: (status: String, next: Set<String>)] = [
    "REQUEST_FOR_INFORMATION": ("Unresponded", ["NOTIFICATION_OF_CHARGEBACK", "CHARGEBACK"]),
    "NOTIFICATION_OF_CHARGEBACK": ("Undefended", ["CHARGEBACK"]),
    "CHARGEBACK": ("Undefended", ["CHARGEBACK_REVERSED", "SECOND_CHARGEBACK"]),
    "CHARGEBACK_REVERSED": ("Won", ["SECOND_CHARGEBACK"]),
    "SECOND_CHARGEBACK": ("Lost", []),
  ]

  /// Opens a dispute on an Authorised payment with `event` (REQUEST_FOR_INFORMATION,
  /// NOTIFICATION_OF_CHARGEBACK or CHARGEBACK) for `value` in the payment's currency; returns its
  /// pspReference, shared by all its events, or nil.
  mutating func openDispute(payment psp: String, value: Int64, event: String, status: String?) -> String? {
    guard let payment = payments[psp], payment.resultCode == "Authorised", value > 0, value <= payment.amount.value,
      ["REQUEST_FOR_INFORMATION", "NOTIFICATION_OF_CHARGEBACK", "CHARGEBACK"].contains(event)
    else { return nil }
    let id = nextPSPReference()
    disputes[id] = Dispute(
      pspReference: id, paymentPspReference: psp, amount: AdyenAmount(currency: payment.amount.currency, value: value),
      events: [])
    queueDispute(id, event: event, status: status)
    return id
  }

  /// Moves a dispute on with `event`, one its last event allows. False otherwise.
  mutating func advanceDispute(_ id: String, event: String, status: String?) -> Bool {
    guard let dispute = disputes[id], let last = dispute.events.last,
      Self.disputeEvents[last]?.next.contains(event) == true
    else { return false }
    queueDispute(id, event: event, status: status)
    return true
  }

  /// A dispute item: the dispute's pspReference, the payment's as `originalReference` and its
  /// reference as `merchantReference`; chargeback events carry Adyen's example reason code (Visa
  /// 10.4 "Other Fraud-Card Absent Environment") and move the payment's charged-back amount
  /// (CHARGEBACK and SECOND_CHARGEBACK debit it, CHARGEBACK_REVERSED credits it back).
  mutating func queueDispute(_ id: String, event: String, status: String?) {
    guard var dispute = disputes[id], var payment = payments[dispute.paymentPspReference] else { return }
    dispute.events.append(event)
    disputes[id] = dispute
    switch event {
    case "CHARGEBACK", "SECOND_CHARGEBACK": payment.chargedBack += dispute.amount.value
    case "CHARGEBACK_REVERSED": payment.chargedBack -= dispute.amount.value
    default: break
    }
    payments[payment.pspReference] = payment
    var additional = ["disputeStatus": status ?? Self.disputeEvents[event]!.status]
    var reason = ""
    if event != "REQUEST_FOR_INFORMATION" {
      additional["chargebackReasonCode"] = "10.4"
      additional["chargebackSchemeCode"] = payment.card.brand
      reason = "Other Fraud-Card Absent Environment"
    }
    queued.append(
      AdyenNotificationItem(
        eventCode: event, success: true, pspReference: id, originalReference: payment.pspReference,
        merchantAccountCode: merchantAccount, merchantReference: payment.reference, currency: dispute.amount.currency,
        value: dispute.amount.value, paymentMethod: payment.card.brand, reason: reason, operations: nil,
        additionalData: additional, eventDate: AdyenClock.eventDate(now)))
  }
}
