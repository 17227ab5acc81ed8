/// A notification Adyen POSTs to the merchant's webhook endpoint (a batch of items), passed on by
/// that endpoint: each item's HMAC signature verified with the webhook's key before anything it says
/// is read, then each recorded once by its event code, success and pspReference in the journal
/// (kind `adyenNotification`), and what it reports put on its order once. Not a back-office method:
/// the endpoint that receives Adyen's notifications is not the back office.
public enum ProcessAdyenNotification: RPCMethod {
  public static let name = "processAdyenNotification"

  public static let documentation = MethodDocumentation(
    summary: "Verify an Adyen notification's items and put what each reports on its order once.",
    description: """
      Give the request body exactly as received (payload). Each item's additionalData.hmacSignature is \
      checked as Adyen documents it (HMAC-SHA256 of pspReference:originalReference:merchantAccountCode:\
      merchantReference:value:currency:eventCode:success under the webhook's HMAC key, the environment \
      variable gateway.hmacKeyVariable, default ADYEN_HMAC_KEY; two separated by a comma while the key is \
      replaced), compared in constant time, before anything else in the item is used. An item that fails \
      (invalid_signature), names another merchant account (wrong_merchant_account) or an amount payservice \
      cannot read (invalid_amount), or repeats a recorded item's eventCode, success and pspReference with \
      other content (conflict), is listed in refused and changes nothing. A verified item is recorded \
      once by its eventCode, success and pspReference: Adyen's redelivery is answered the same and changes \
      nothing more. What it reports goes on its order: AUTHORISATION settles a payment Adyen was still \
      deciding (order_paid, order_authorized with manual capture, order_declined with its stock back); \
      CAPTURE, CAPTURE_FAILED, CANCELLATION settle a capture or cancel Adyen accepted (capture_succeeded, \
      capture_failed, cancel_succeeded, cancel_failed), and a CAPTURE_FAILED after its recorded CAPTURE \
      makes a still-paid order authorized again (capture_failed, a capture_failed order event); REFUND and \
      REFUND_FAILED settle a refund \
      (refund_succeeded, refund_failed: its amount comes off the order). An item whose amount or currency \
      is not what payservice sent is refused (effect refused, with the reason in message) and settles \
      nothing. An item about a payment this store does not know is recorded with effect none. Answer the \
      webhook with reply ([accepted]) whenever the status is succeeded, refused items or not: Adyen sends \
      a batch again until it is accepted, and a forged item would stay forged.
      """,
    errors: [.storeUnavailable], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  public struct Params: Sendable {
    public var payload = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "payload", \.payload, .required,
        .string("The notification request's body exactly as received.", minLength: 1),
        read: ParamReader.string(maxBytes: AdyenNotification.maxPayloadBytes)),
    ])

  /// Why a delivery, or one of its items, was not taken in.
  public enum FailureCode: String, Sendable, WireEnum {
    /// This payservice has no HMAC key for Adyen's notifications: its gateway is not Adyen, or the
    /// variable is unset.
    case notConfigured = "not_configured"
    /// The body is not an Adyen notification (the message says where and what is valid).
    case notANotification = "not_a_notification"
    /// A live notification at a test-mode payservice, or a test one at a live payservice.
    case wrongMode = "wrong_mode"
    /// No key made the item's signature: not Adyen's, or changed on the way.
    case invalidSignature = "invalid_signature"
    /// The item is for another merchant account than gateway.merchantAccount.
    case wrongMerchantAccount = "wrong_merchant_account"
    /// The item's amount cannot be payservice's minor units of its currency.
    case invalidAmount = "invalid_amount"
    /// An item under the same eventCode, success and pspReference was recorded with other content.
    case conflict
  }

  public struct Rejected: Equatable, Sendable, WireObject, FailureReporting {
    public var failureCode = FailureCode.notANotification
    public var message = ""

    public static let shape = ObjectShape<Rejected>(
      blank: { Rejected() },
      [
        .constant("status", "failed"), .member("failureCode", \.failureCode),
        .member("message", \.message, .required, .string("Which check failed."), read: ParamReader.anyString),
      ])

    public var report: ResultFailure { ResultFailure(status: "failed", code: failureCode.rawValue, message: message) }
  }

  /// What a verified item changed.
  public enum Effect: String, Sendable, Equatable, WireEnum {
    case none
    /// A payment Adyen was deciding was authorised: the pending order is paid.
    case orderPaid = "order_paid"
    /// The same with manual capture: the order is authorized, its money held.
    case orderAuthorized = "order_authorized"
    /// Adyen refused it: the pending order failed, its stock is back.
    case orderDeclined = "order_declined"
    case captureSucceeded = "capture_succeeded"
    /// The capture failed: the order stays authorized.
    case captureFailed = "capture_failed"
    case cancelSucceeded = "cancel_succeeded"
    case cancelFailed = "cancel_failed"
    case refundSucceeded = "refund_succeeded"
    /// The refund failed: its amount is off the order's refunds again.
    case refundFailed = "refund_failed"
    case disputeOpened = "dispute_opened"
    case disputeUpdated = "dispute_updated"
    case disputeWon = "dispute_won"
    case disputeLost = "dispute_lost"
    case disputeClosed = "dispute_closed"
    /// The item does not fit what payservice sent or recorded: nothing changed.
    case refused
  }

  /// One verified item, recorded.
  public struct Item: Equatable, Sendable, WireObject {
    public var pspReference = ""
    public var eventCode = ""
    public var success = false
    public var orderId: String?
    public var effect = Effect.none
    public var message: String?

    public static let shape = ObjectShape<Item>(
      blank: { Item() },
      [
        .member("pspReference", \.pspReference, .required, .string("Adyen's reference of what the item is about.")),
        .member("eventCode", \.eventCode, .required, .string("AUTHORISATION, CAPTURE, REFUND, …")),
        .member("success", \.success),
        .member("orderId", \.orderId, .optional, .string("The order the item is about, when it is one of this store's.")),
        .member("effect", \.effect),
        .member(
          "message", \.message, .optional, .string("With effect refused: what does not fit."),
          read: ParamReader.anyString),
      ])
  }

  /// An item not taken in.
  public struct RefusedItem: Equatable, Sendable, WireObject {
    /// Its place in notificationItems.
    public var index = 0
    public var pspReference = ""
    public var eventCode = ""
    public var failureCode = FailureCode.invalidSignature
    public var message = ""

    public static let shape = ObjectShape<RefusedItem>(
      blank: { RefusedItem() },
      [
        .member("index", \.index), .member("pspReference", \.pspReference), .member("eventCode", \.eventCode),
        .member("failureCode", \.failureCode),
        .member("message", \.message, .required, .string("Which check failed."), read: ParamReader.anyString),
      ])
  }

  public struct Accepted: Equatable, Sendable, WireObject {
    public var items: [Item] = []
    public var refused: [RefusedItem] = []

    public static let shape = ObjectShape<Accepted>(
      blank: { Accepted() },
      [
        .constant("status", "succeeded"),
        .constant("reply", "[accepted]"),
        .member("items", \.items, .required, .array(Item.schema, "The verified items, in the body's order.")),
        .member("refused", \.refused, .required, .array(RefusedItem.schema, "The items not taken in.")),
      ])
  }

  public typealias Result = Outcome<Accepted, Rejected>

  public static let operationKinds: [any Operation.Type] = [Recording.self]

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    guard let keys = context.gatewayCalls?.notificationKeys, !keys.isEmpty, let adyen = context.config.gateway.adyen else {
      let message =
        context.config.gateway.adyen.map {
          "the environment variable \($0.hmacKeyVariable) (gateway.hmacKeyVariable) is not set"
        } ?? "this payservice's gateway is not Adyen: it takes no Adyen notifications"
      return .failed(Rejected(failureCode: .notConfigured, message: message))
    }
    let notification: AdyenNotification
    switch AdyenNotification.read(params.payload) {
    case .failure(let malformed): return .failed(Rejected(failureCode: .notANotification, message: malformed.message))
    case .success(let read): notification = read
    }
    if (notification.live == "true") != (adyen.mode == .live) {
      let message = """
        the notification is \(notification.live == "true" ? "live" : "from Adyen's test platform") and this payservice \
        is in \(adyen.mode.rawValue) mode (gateway.mode): nothing was recorded
        """
      return .failed(Rejected(failureCode: .wrongMode, message: message))
    }
    var accepted = Accepted()
    for (index, item) in notification.items.enumerated() {
      func refuse(_ code: FailureCode, _ message: String) {
        accepted.refused.append(
          RefusedItem(
            index: index, pspReference: item.pspReference, eventCode: item.eventCode, failureCode: code, message: message))
      }
      guard AdyenNotificationSignature.isValid(item, keys: keys) else {
        refuse(.invalidSignature, "no HMAC key of gateway.hmacKeyVariable made additionalData.hmacSignature of this item")
        continue
      }
      guard item.merchantAccountCode == adyen.merchantAccount else {
        refuse(.wrongMerchantAccount, "the item is for merchant account \(item.merchantAccountCode), not gateway.merchantAccount")
        continue
      }
      guard let currency = Currency(code: item.currency), let value = Int64(item.value),
        let minor = AdyenAmount.minor(ofValue: value, currency)
      else {
        refuse(.invalidAmount, "\(item.value) of \(item.currency) is not an amount payservice can record")
        continue
      }
      let report = Report(item: item, amountMinor: minor)
      let recorded: Item
      do {
        switch try OperationRunner.run(Recording(report: report), context: context) {
        case .succeeded(let journal): recorded = journal.item
        case .failed: continue  // Recording always succeeds.
        }
      } catch ServiceError.idempotencyKeyConflict {
        refuse(
          .conflict,
          "an item with this eventCode, success and pspReference was recorded with another amount or reference; Adyen never changes an item")
        continue
      }
      // Settled after the item is recorded, and again on a redelivery: settling is once whatever
      // happens between the two.
      try settle(report, recorded, context: context)
      accepted.items.append(recorded)
    }
    return .succeeded(accepted)
  }

  /// A verified item, with its amount in ISO 4217 minor units.
  struct Report: Sendable {
    var item: AdyenNotification.Item
    var amountMinor: Int64

    var succeeded: Bool { item.succeeded && !item.eventCode.hasSuffix("_FAILED") }
  }

  /// The pending work `recorded` says to settle, settled with what the item reports.
  static func settle(_ report: Report, _ recorded: Item, context: ServiceContext) throws {
    guard let orderId = recorded.orderId else { return }
    let item = report.item
    switch recorded.effect {
    case .orderPaid, .orderAuthorized, .orderDeclined:
      _ = try OperationRunner.settleReported(ProcessOrder.Placement.self, subject: orderId, context: context) { charge in
        charge.fits(report) ? charge.reply(to: report, now: context.clock.now()) : nil
      }
    case .captureSucceeded, .captureFailed:
      _ = try OperationRunner.settleReported(CaptureOrder.Capture.self, subject: orderId, context: context) { call in
        guard call.captureId == item.merchantReference, call.paymentId == item.originalReference else { return nil }
        return report.succeeded
          ? .succeeded(GatewayPayment(id: call.paymentId, chargeId: nil, status: .captured, amountCapturedMinor: report.amountMinor))
          : .declined(GatewayDecline(code: "capture_failed", declineCode: nil, chargeId: nil, message: failure("capture", item)))
      }
    case .refundSucceeded, .refundFailed:
      // A refund still pending in the journal when its REFUND came (see `Recording.pendingRefund`);
      // a recorded refund was settled with the item.
      _ = try OperationRunner.settleReported(RefundOrder.Refund.self, subject: orderId, context: context) { call in
        guard call.refund.refundId == item.merchantReference, call.paymentId == item.originalReference,
          Int64(call.amountMinor) == report.amountMinor
        else { return nil }
        return .succeeded(
          GatewayRefund(
            id: item.pspReference, status: report.succeeded ? .succeeded : .failed,
            failureReason: report.succeeded ? nil : item.reason))
      }
    case .cancelSucceeded, .cancelFailed:
      _ = try OperationRunner.settleReported(CancelOrder.Cancellation.self, subject: orderId, context: context) { call in
        guard call.cancelId == item.merchantReference, call.paymentId == item.originalReference else { return nil }
        return report.succeeded
          ? .succeeded(GatewayPayment(id: call.paymentId, chargeId: nil, status: .canceled, amountCapturedMinor: 0))
          : .declined(GatewayDecline(code: "cancel_failed", declineCode: nil, chargeId: nil, message: failure("cancel", item)))
      }
    default: return
    }
  }

  /// What Adyen said of a modification that failed, for the back office.
  static func failure(_ what: String, _ item: AdyenNotification.Item) -> String {
    "Adyen reports that the \(what) failed" + (item.reason.map { ": \($0)" } ?? ".")
  }

  /// A verified item as an operation of the journal (kind `adyenNotification`, keyed by its event
  /// code, success and pspReference): recorded in one transaction, so that a redelivery is answered
  /// from the journal.
  /// An item as the journal keeps it (`Outcome` tells its cases apart by their status).
  public struct RecordedItem: Equatable, Sendable, WireObject {
    public var item = Item()

    public static let shape = ObjectShape<RecordedItem>(
      blank: { RecordedItem() }, [.constant("status", "succeeded"), .member("item", \.item)])
  }

  public struct Recording: KeyLockedOperation {
    public static let kind = "adyenNotification"
    public typealias Result = Outcome<RecordedItem, Rejected>

    let report: Report
    public var key: String { "\(report.item.eventCode):\(report.item.success):\(report.item.pspReference)" }
    public var subject: String? { nil }
    /// Adyen sends an item again unchanged; the same key about other money or another reference is
    /// not the item it names.
    public var fingerprint: String {
      let item = report.item
      return "\(item.merchantReference) \(item.originalReference ?? "") \(item.value) \(item.currency)"
    }
    public var conflict: ServiceError { .idempotencyKeyConflict("pspReference") }

    public func prepare(_ subject: Void, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64)
      throws -> Preparation<Result, NoCall>
    {
      let item = report.item
      var recorded = Item(pspReference: item.pspReference, eventCode: item.eventCode, success: item.succeeded)
      switch item.eventCode {
      case "AUTHORISATION":
        try authorisation(&recorded, transaction)
      case "CAPTURE", "CAPTURE_FAILED":
        try modification(
          &recorded, kind: CaptureOrder.Capture.kind, transaction, context: context, now: now,
          done: (.captureSucceeded, .captureFailed))
      case "CANCELLATION":
        try modification(
          &recorded, kind: CancelOrder.Cancellation.kind, transaction, context: context, now: now,
          done: (.cancelSucceeded, .cancelFailed))
      case "REFUND", "REFUND_FAILED":
        try refund(&recorded, transaction, context: context, now: now)
      case _ where Self.disputeStages[item.eventCode] != nil:
        try dispute(&recorded, transaction, context: context, now: now)
      default:
        break
      }
      return .done(.succeeded(RecordedItem(item: recorded)), final: true)
    }

    /// A payment's outcome: the order it pays for, when it is pending here and the item fits it.
    func authorisation(_ recorded: inout Item, _ transaction: any StoreTransaction) throws {
      let orderId = report.item.merchantReference
      guard let entry = try transaction.pendingOperations(subject: orderId).first(where: { $0.kind == ProcessOrder.Placement.kind }),
        let text = entry.request
      else {
        if try transaction.orderDocument(orderId) != nil { recorded.orderId = orderId }
        return
      }
      recorded.orderId = orderId
      let charge = try StoredJSON.read(text, as: ProcessOrder.Charge.self, "order call")
      guard charge.fits(report) else {
        recorded.effect = .refused
        recorded.message =
          "the item's \(report.amountMinor) minor units of \(report.item.currency) are not the \(charge.amountMinor) of \(charge.currencyCode) charged"
        return
      }
      recorded.effect = !report.succeeded ? .orderDeclined : charge.captureManually ? .orderAuthorized : .orderPaid
    }

    /// A capture's or cancel's outcome: the order whose payment it is, when the modification is
    /// pending there under the item's reference (or a capture recorded there that failed later).
    func modification(
      _ recorded: inout Item, kind: String, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64,
      done: (succeeded: Effect, failed: Effect)
    ) throws {
      guard let payment = report.item.originalReference, let orderId = try transaction.orderId(gatewayPaymentId: payment)
      else { return }
      recorded.orderId = orderId
      guard let entry = try transaction.operation(kind: kind, key: report.item.merchantReference), entry.subject == orderId
      else { return }
      if entry.state == .pending {
        recorded.effect = report.succeeded ? done.succeeded : done.failed
      } else if kind == CaptureOrder.Capture.kind && report.item.eventCode == "CAPTURE_FAILED" {
        try captureFailedLater(&recorded, entry, transaction, context: context, now: now)
      }
    }

    /// A CAPTURE_FAILED after its CAPTURE was recorded: the card scheme refused the capture after
    /// Adyen took it, and no money comes. An order still paid with that capture alone goes back to
    /// authorized, the capture's amount off it (a `capture_failed` event, which the books subtract),
    /// and the capture's answer under its captureId becomes the failure, so that another capture
    /// may be sent. An order refunded or disputed since is left as it is, the item refused: what
    /// the scheme did to those is Adyen's to report, and the merchant's to check.
    func captureFailedLater(
      _ recorded: inout Item, _ entry: OperationRow, _ transaction: any StoreTransaction, context: ServiceContext,
      now: Int64
    ) throws {
      let item = report.item
      guard let text = entry.result,
        case .succeeded(let captured) = try StoredJSON.read(text, as: CaptureOrder.Result.self, "capture result")
      else { return }
      guard let order = try transaction.lockOrder(recorded.orderId ?? ""), order.status == .paid,
        order.capturedMinor == report.amountMinor, order.refundedMinor == 0,
        try transaction.disputes(orderId: order.orderId).isEmpty
      else {
        recorded.effect = .refused
        recorded.message =
          "the capture \(captured.captureId) failed after it was recorded, and the order has moved on since (refunded, disputed, or another amount): check payment \(item.originalReference ?? "") in the Customer Area"
        return
      }
      try transaction.updateOrder(
        order.orderId, status: .authorized, capturedMinor: 0, refundedMinor: 0, shippingRefunded: false)
      try transaction.insert(
        OrderEventRow(
          orderId: order.orderId, position: order.nextEventPosition, kind: .captureFailed, at: RFC3339.format(now),
          amountMinor: report.amountMinor, reference: captured.captureId, reason: item.reason))
      try transaction.rewriteOperation(
        kind: entry.kind, key: entry.key, fingerprint: entry.fingerprint,
        result: CaptureOrder.Capture.journal(.failed(.gatewayError, ProcessAdyenNotification.failure("capture", item))))
      try WalletOrderUpdates.changed(order.orderId, transaction, context: context, now: now)
      recorded.effect = .captureFailed
    }

    /// Adyen's dispute events as the stages the books know ("Dispute notifications"): the dispute
    /// they are about (a second chargeback is a dispute of its own), and its status. An inquiry and
    /// the notice of a chargeback move no money; the chargeback withdraws it; a reversal, or a
    /// pre-arbitration won, gives it back.
    static let disputeStages: [String: (second: Bool, status: String)] = [
      "REQUEST_FOR_INFORMATION": (false, "warning_needs_response"),
      "NOTIFICATION_OF_CHARGEBACK": (false, "warning_needs_response"),
      "CHARGEBACK": (false, "needs_response"),
      "CHARGEBACK_REVERSED": (false, "won"),
      "SECOND_CHARGEBACK": (true, "needs_response"),
      "PREARBITRATION_WON": (true, "won"),
      "PREARBITRATION_LOST": (true, "lost"),
    ]

    /// A dispute's stage, on the order whose payment it disputes, as a Stripe dispute event's is.
    func dispute(_ recorded: inout Item, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64)
      throws
    {
      let item = report.item
      guard report.succeeded, let stage = Self.disputeStages[item.eventCode] else { return }
      let id = stage.second ? item.pspReference + "-second" : item.pspReference
      // eventDate is not covered by the signature: the stage's order is its rank, then when it was heard.
      let at = now
      let dispute = GatewayReport.Dispute(
        id: id, amountMinor: report.amountMinor, currency: item.currency, reason: item.reason ?? "general",
        status: stage.status, paymentIntent: item.originalReference, created: at, dueBy: nil)
      let observed = DisputeRow.Observation(
        rank: DisputeRow.rank(of: stage.status), at: at, by: "\(item.eventCode):\(item.pspReference)")
      switch try GatewayReport.apply(dispute, observed: observed, transaction, context: context, now: now) {
      case .applied(let orderId, let effect):
        recorded.orderId = orderId
        recorded.effect = Effect(rawValue: effect.rawValue) ?? .none
      case .refused(let orderId, let reason):
        recorded.orderId = orderId
        recorded.effect = .refused
        recorded.message = reason
      case .retryLater:
        break
      }
    }

    /// A refund's outcome: the refund payservice made under the item's reference, with Adyen's
    /// pspReference, settled at it once its amount is the one recorded.
    func refund(_ recorded: inout Item, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64) throws {
      guard let row = try transaction.refund(report.item.merchantReference), row.gatewayRefundId == report.item.pspReference,
        let order = try transaction.lockOrder(row.orderId)
      else {
        try pendingRefund(&recorded, transaction)
        return
      }
      recorded.orderId = row.orderId
      guard report.amountMinor == row.amountMinor, report.item.currency == order.currencyCode else {
        recorded.effect = .refused
        recorded.message =
          "the item's \(report.amountMinor) minor units of \(report.item.currency) are not the refund's \(row.amountMinor) of \(order.currencyCode)"
        return
      }
      let outcome: GatewayReport.RefundOutcome = report.succeeded ? .succeeded : .failed(status: "failed")
      if try GatewayReport.settleRefund(
        refundId: row.refundId, gatewayRefundId: row.gatewayRefundId ?? "", outcome: outcome, transaction,
        at: RFC3339.format(now))
      {
        try WalletOrderUpdates.changed(row.orderId, transaction, context: context, now: now)
        recorded.effect = report.succeeded ? .refundSucceeded : .refundFailed
      }
    }

    /// A refund's outcome before the refund is recorded: Adyen executed a refundOrder whose answer
    /// payservice has not recorded yet (the process waiting for it, or killed before it came), so
    /// its call is still pending in the journal under the item's reference. The item is about that
    /// call when its payment and amount are the call's; `settle` then settles the call with what the
    /// item reports, as a capture's is settled by its CAPTURE. Recorded without an effect, the item
    /// would leave the refund pending once recorded, and Adyen does not send an accepted item again.
    func pendingRefund(_ recorded: inout Item, _ transaction: any StoreTransaction) throws {
      let item = report.item
      guard let payment = item.originalReference, let orderId = try transaction.orderId(gatewayPaymentId: payment),
        let entry = try transaction.operation(kind: RefundOrder.Refund.kind, key: item.merchantReference),
        entry.state == .pending, entry.subject == orderId, let text = entry.request,
        let order = try transaction.lockOrder(orderId)
      else { return }
      recorded.orderId = orderId
      let call = try StoredJSON.read(text, as: RefundOrder.Refund.Call.self, "refund call")
      guard call.paymentId == payment, Int64(call.amountMinor) == report.amountMinor, item.currency == order.currencyCode
      else {
        recorded.effect = .refused
        recorded.message =
          "the item's \(report.amountMinor) minor units of \(item.currency) are not the refund's \(call.amountMinor) of \(order.currencyCode)"
        return
      }
      recorded.effect = report.succeeded ? .refundSucceeded : .refundFailed
    }
  }
}

extension ProcessOrder.Charge {
  /// Whether a reported payment is this charge's: its amount and currency.
  func fits(_ report: ProcessAdyenNotification.Report) -> Bool {
    report.amountMinor == Int64(amountMinor) && report.item.currency == currencyCode
  }

  /// The charge's reply as Adyen's AUTHORISATION reports it.
  func reply(to report: ProcessAdyenNotification.Report, now: Int64) -> GatewayReply<GatewayPayment> {
    let item = report.item
    guard report.succeeded else {
      return .declined(
        GatewayDecline(
          code: "card_declined", declineCode: item.reason, chargeId: item.pspReference,
          message: "Your card was declined. Use another card."))
    }
    let manual = captureManually && amountMinor > 0
    var saved: GatewaySavedCard?
    if saveCard == true, let agreementId,
      let stored = item.additionalData["tokenization.storedPaymentMethodId"]
        ?? item.additionalData["recurring.recurringDetailReference"]
    {
      saved = GatewaySavedCard(customerId: agreementId, paymentMethodId: stored)
    }
    return .succeeded(
      GatewayPayment(
        id: item.pspReference, chargeId: item.pspReference, status: manual ? .authorized : .captured,
        amountCapturedMinor: manual ? 0 : Int64(amountMinor), captureBefore: manual ? now + 7 * 86_400 : nil,
        savedCard: saved))
  }
}
