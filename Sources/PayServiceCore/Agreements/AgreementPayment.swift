/// One later payment of an agreement, started by the merchant with the buyer not present: a
/// subscription's period, a pre-order's payment, an automatic reload. An operation of the journal
/// (kind `agreement_payment`), run like an order: with the sandbox in one transaction, with a
/// remote gateway in two around its call, under an idempotency key made of the agreement, the
/// payment and the attempt, so that however many runs overlap or crash, each attempt is charged
/// at most once and each payment paid at most once.
///
/// Keys: `<agreementId>/<period>/<attempt>` for a scheduled payment (a retry after a decline is
/// the next attempt, a new charge), `<agreementId>/reload/<reloadId>` for a reload.
public struct AgreementPayment: GatewayOperation {
  public static let kind = "agreement_payment"

  /// Which payment.
  public enum Trigger: Sendable, Equatable {
    /// A scheduled payment: `period` of the agreement, its `attempt`th try (1 the first).
    case scheduled(period: Int, attempt: Int)
    /// A reload for the balance the merchant reported, once per `reloadId`.
    case reload(reloadId: String, balanceMinor: Int64)
  }

  let agreementId: String
  let trigger: Trigger
  public let key: String
  /// The order the payment makes when it goes through.
  let orderId: String
  public var subject: String? { orderId }
  public let fingerprint: String

  public init(agreementId: String, trigger: Trigger, identifiers: Identifiers) {
    self.agreementId = agreementId
    self.trigger = trigger
    var fingerprint = JSONWriter()
    fingerprint.beginObject()
    fingerprint.member("agreementId", agreementId)
    switch trigger {
    case .scheduled(let period, let attempt):
      key = "\(agreementId)/\(period)/\(attempt)"
      orderId = identifiers.agreementOrderId(agreementId: agreementId, payment: "period-\(period)")
      fingerprint.member("period", period)
      fingerprint.member("attempt", attempt)
    case .reload(let reloadId, let balance):
      key = "\(agreementId)/reload/\(reloadId)"
      orderId = identifiers.agreementOrderId(agreementId: agreementId, payment: "reload-\(reloadId)")
      fingerprint.member("reloadId", reloadId)
      fingerprint.member("balanceMinor", Int(balance))
    }
    fingerprint.endObject()
    self.fingerprint = fingerprint.string
  }

  public var conflict: ServiceError { .idempotencyKeyConflict("reloadId") }

  public static func lock(key: String, subject: String?, _ transaction: any StoreTransaction, context: ServiceContext)
    throws -> AgreementRow?
  {
    try transaction.lockAgreement(String(key.prefix { $0 != "/" }))
  }

  /// The answer: what became of the payment and where the agreement stands after it.
  public struct Result: Equatable, Sendable, WireObject, MethodResult {
    public enum Status: String, Sendable, WireEnum {
      /// Charged: `orderId` is the order it made.
      case succeeded
      /// Declined or refused: not charged; the agreement says what comes next.
      case failed
      /// Sent to the gateway, its answer not final yet: the next run (or the gateway's event)
      /// settles it, charging it once.
      case pending
      /// Not charged, and not counted as an attempt: the merchant's side stopped it (out of stock,
      /// the product gone from the catalog) or it was no longer due; tried again by the next run.
      case skipped
      /// Nothing to charge: the agreement ended instead (cancelled at its period end, or completed).
      case ended
      /// A reload not needed: the balance is at or above the threshold.
      case notNeeded = "not_needed"
    }

    public var agreementId = ""
    public var period: Int?
    public var attempt: Int?
    public var reloadId: String?
    public var status = Status.succeeded
    public var orderId: String?
    public var chargeId: String?
    public var amount: String?
    public var failureCode: String?
    public var declineCode: String?
    public var message: String?
    public var agreementStatus = AgreementStatus.active
    public var nextPaymentAt: String?

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member("agreementId", \.agreementId), .member("period", \.period, .optional, .integer(minimum: 0)),
        .member("attempt", \.attempt, .optional, .integer(minimum: 1)),
        .member("reloadId", \.reloadId, .optional),
        .member("status", \.status),
        .member("orderId", \.orderId, .optional), .member("chargeId", \.chargeId, .optional),
        .member("amount", \.amount, .optional, Shapes.amount),
        .member(
          "failureCode", \.failureCode, .optional,
          .string(
            """
            failed: card_declined, expired_card, processing_error, gateway_error; pending: gateway_unavailable, \
            payment_processing; skipped: out_of_stock, not_priced, gateway_mismatch, not_due.
            """)),
        .member("declineCode", \.declineCode, .optional),
        .member("message", \.message, .optional, .string("Why, for people."), read: ParamReader.anyString),
        .member("agreementStatus", \.agreementStatus),
        .member(
          "nextPaymentAt", \.nextPaymentAt, .optional,
          .string("When the next payment (or retry) is due, RFC 3339 UTC.", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")),
      ])

    public var failure: ResultFailure? {
      switch status {
      case .succeeded, .ended, .notNeeded: return nil
      case .failed, .pending, .skipped:
        return ResultFailure(status: status.rawValue, code: failureCode ?? status.rawValue, message: message ?? "", lines: [])
      }
    }
  }

  /// A payment sent to a remote gateway: exactly what is sent (and sent again under the same key),
  /// with the order to record when it goes through.
  public struct Call: Sendable, WireObject {
    var agreementId = ""
    var orderId = ""
    var period = 0
    var attempt = 1
    var reloadId: String?
    var idempotencyKey = ""
    var customerId = ""
    var paymentMethodId = ""
    var amountMinor = 0
    var currencyCode = ""
    var createdAt = ""
    /// Whether the payment took stock (not a pre-order's, whose units the checkout took).
    var takesStock = true
    var prepared = PreparedOrder()

    public static let shape = ObjectShape<Call>(
      blank: { Call() },
      [
        .member("agreementId", \.agreementId), .member("orderId", \.orderId), .member("period", \.period),
        .member("attempt", \.attempt), .member("reloadId", \.reloadId, .optional),
        .member("idempotencyKey", \.idempotencyKey), .member("customerId", \.customerId),
        .member("paymentMethodId", \.paymentMethodId), .member("amountMinor", \.amountMinor),
        .member("currencyCode", \.currencyCode), .member("createdAt", \.createdAt),
        .member("takesStock", \.takesStock),
        .member("prepared", \.prepared, read: EmbeddedJSON.read, write: EmbeddedJSON.write),
      ])

    /// The pending payment as listOrders lists it.
    var summary: OrderSummaryRow {
      OrderSummaryRow(
        orderId: orderId, createdAt: createdAt, status: .pending, amountMinor: Int64(amountMinor), refundedMinor: 0,
        currencyCode: currencyCode, itemCount: prepared.lines.reduce(0) { $0 + $1.quantity }, agreementId: agreementId)
    }

    var gatewayCharge: GatewayCharge {
      GatewayCharge(
        paymentData: "", amountMinor: Int64(amountMinor), currencyCode: currencyCode, orderId: orderId,
        captureManually: false, idempotencyKey: idempotencyKey,
        savedCard: GatewaySavedCard(customerId: customerId, paymentMethodId: paymentMethodId), agreementId: agreementId,
        unscheduled: reloadId != nil || !takesStock)
    }
  }

  /// The gateway's idempotency key of an attempt: the agreement, the payment and the attempt.
  static func idempotencyKey(agreementId: String, orderId: String, trigger: Trigger) -> String {
    switch trigger {
    case .scheduled(let period, let attempt): return "payservice-agreement-\(agreementId)-period-\(period)-attempt-\(attempt)"
    case .reload: return "payservice-agreement-\(agreementId)-reload-\(orderId)"
    }
  }

  /// What a result says about `agreement` as it stands.
  func result(_ agreement: AgreementRow, _ status: Result.Status) -> Result {
    var result = Result()
    result.agreementId = agreementId
    switch trigger {
    case .scheduled(let period, let attempt):
      result.period = period
      result.attempt = attempt
    case .reload(let reloadId, _):
      result.reloadId = reloadId
    }
    result.status = status
    result.agreementStatus = agreement.status
    result.nextPaymentAt = agreement.nextPaymentAt.map(RFC3339.format)
    return result
  }

  public func prepare(_ locked: AgreementRow?, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64)
    throws -> Preparation<Result, Call>
  {
    guard var agreement = locked else { throw ServiceError.agreementNotFound(agreementId) }
    let config = context.config
    let terms = try Agreements.terms(of: agreement)
    /// Not charged and not an attempt; nothing is recorded, so the next run tries again.
    func skipped(_ code: String, _ message: String) -> Preparation<Result, Call> {
      var answer = result(agreement, .skipped)
      answer.failureCode = code
      answer.message = message
      return .done(answer, final: false)
    }
    switch trigger {
    case .scheduled(let period, let attempt):
      guard agreement.status.collects, agreement.period == period, agreement.attempt + 1 == attempt,
        let due = agreement.nextPaymentAt, due <= now
      else { return skipped("not_due", "This payment is not due: the agreement has moved on.") }
      if agreement.cancelAtPeriodEnd {
        try Agreements.end(&agreement, as: .canceled, transaction: transaction, context: context, now: now)
        var answer = result(agreement, .ended)
        answer.message = "The agreement was cancelled at the end of its period: nothing was charged."
        return .done(answer, final: true)
      }
    case .reload(_, let balance):
      guard agreement.kind == .automaticReload else {
        throw ServiceError.invalidParams([
          FieldError(path: "agreementId", message: "names a \(agreement.kind.rawValue) agreement, not an automatic reload")
        ])
      }
      guard agreement.status.collects else {
        var answer = result(agreement, .failed)
        answer.failureCode = "agreement_not_active"
        answer.message = "The agreement is \(agreement.status.rawValue): it makes no more payments."
        return .done(answer, final: false)
      }
      if let threshold = terms.thresholdMinor, balance >= Int64(threshold) {
        var answer = result(agreement, .notNeeded)
        answer.message = "The balance \(config.format(balance)) is not below the threshold \(config.format(Int64(threshold)))."
        return .done(answer, final: true)
      }
    }
    // A merchant token Apple unlinked never charges: the agreement ends, uncharged.
    if let token = try Agreements.credential(of: agreement).merchantToken, token.status == .unlinked {
      try Agreements.end(&agreement, as: .canceled, transaction: transaction, context: context, now: now)
      var answer = result(agreement, .ended)
      answer.failureCode = "merchant_token_unlinked"
      answer.message =
        "The Apple Pay card of this agreement was removed (by the \(token.reason ?? "customer")): nothing was charged."
      return .done(answer, final: true)
    }
    let attempt = agreement.attempt + 1
    guard let product = config.productsBySKU[agreement.sku], agreement.currencyCode == config.currency.code else {
      return skipped(
        "not_priced",
        "The catalog has no \(agreement.sku) in \(agreement.currencyCode) now: add it back, and the next run charges this payment.")
    }
    let credential = try Agreements.credential(of: agreement)
    let gatewayKind = context.gatewayCalls == nil ? "sandbox" : context.config.gateway.kind.rawValue
    guard credential.gateway == gatewayKind else {
      return skipped(
        "gateway_mismatch",
        "The agreement's card is kept by the \(credential.gateway) gateway, and this payservice charges through \(gatewayKind).")
    }
    let savedCard = credential.savedCard
    if credential.gateway != "sandbox" && savedCard == nil {
      // The gateway answered the checkout without naming the card it kept: nothing can be charged
      // until the customer gives a card again.
      let message = "\(credential.gateway) kept no card for this agreement: it cannot be charged."
      try Agreements.declined(
        &agreement, failureCode: "gateway_error", declineCode: nil,
        action: CustomerAction(
          code: .updatePaymentMethod, message: "Your card can no longer be charged. Add another card to keep your plan."),
        settings: config.billing, transaction: transaction, context: context, now: now)
      var answer = result(agreement, .failed)
      answer.failureCode = "gateway_error"
      answer.message = message
      return .done(answer, final: true)
    }
    // The stock is taken here (the decrement checks it, and changes nothing when short); a payment
    // that does not go through puts it back.
    let takesStock = agreement.kind != .deferred
    if takesStock, try !transaction.decrementStock(agreement.sku, by: agreement.quantity) {
      return skipped("out_of_stock", "\(agreement.sku) is out of stock: the next run charges this payment once it is back.")
    }
    // Priced now, at the catalog price, with the tax of where the goods go; no shipping charge.
    var merchandise = Merchandise(lines: [
      CartLine(
        sku: product.sku, name: product.name, quantity: agreement.quantity, unitPriceMinor: product.priceMinor,
        taxClass: product.taxClass, billing: nil)
    ])
    merchandise.pricedAt = now
    let quote = context.pricer.quote(merchandise, method: nil, region: context.pricer.region(of: terms.region))
    let link: AgreementLink
    switch trigger {
    case .scheduled(let period, _): link = AgreementLink(agreementId: agreementId, payment: .scheduled, period: period)
    case .reload(let reloadId, _): link = AgreementLink(agreementId: agreementId, payment: .reload, reloadId: reloadId)
    }
    var document = OrderDocument(
      orderId: orderId, createdAt: RFC3339.format(now),
      items: [
        OrderDocument.Line(
          sku: product.sku, name: product.name, quantity: agreement.quantity, unitPrice: config.format(product.priceMinor),
          amount: config.format(product.priceMinor * Int64(agreement.quantity)))
      ],
      shippingMethod: terms.shippingMethod, couponCode: nil, summaryItems: quote.summaryItems,
      taxBreakdown: quote.taxBreakdownItems(config), shippingContact: terms.region, billingContact: nil,
      amount: config.format(quote.totalMinor), currencyCode: config.currency.code, status: .pending)
    document.agreement = link
    let prepared = PreparedOrder(document: document, quote: quote)
    guard let savedCard else {
      return .done(
        try chargeInSandbox(
          &agreement, terms: terms, prepared: prepared, attempt: attempt, takesStock: takesStock,
          transaction: transaction, context: context, now: now), final: true)
    }
    return .send(
      Call(
        agreementId: agreementId, orderId: orderId, period: agreement.period, attempt: attempt,
        reloadId: { if case .reload(let id, _) = trigger { return id } else { return nil } }(),
        idempotencyKey: Self.idempotencyKey(agreementId: agreementId, orderId: orderId, trigger: trigger),
        customerId: savedCard.customerId, paymentMethodId: savedCard.paymentMethodId, amountMinor: prepared.amountMinor,
        currencyCode: config.currency.code, createdAt: RFC3339.format(now), takesStock: takesStock, prepared: prepared))
  }

  /// The sandbox's payment, in this transaction: the agreement's outcome for later payments decides.
  func chargeInSandbox(
    _ agreement: inout AgreementRow, terms: AgreementTerms, prepared: PreparedOrder, attempt: Int,
    takesStock: Bool, transaction: any StoreTransaction, context: ServiceContext, now: Int64
  ) throws -> Result {
    let nowText = RFC3339.format(now)
    let chargeId = try context.identifiers.agreementChargeId(orderId: orderId, attempt: attempt)
    let amountMinor = Int64(prepared.amountMinor)
    let outcome = agreement.sandboxOutcome.flatMap(SandboxOutcome.init(rawValue:)) ?? .approved
    let first = agreement.period == terms.firstPeriod && attempt == 1
    if let failure = outcome.laterFailure(first: first) {
      if takesStock {
        guard try transaction.restock(agreement.sku, by: agreement.quantity) else {
          throw StoreError.unavailable(reason: "the stock a declined payment took is not recorded as sold")
        }
      }
      try transaction.insert(
        ChargeRow(
          chargeId: chargeId, token: nil, succeeded: false, failureCode: failure.failureCode,
          declineCode: failure.declineCode, amountMinor: amountMinor, currencyCode: context.config.currency.code,
          createdAt: nowText))
      try Agreements.declined(
        &agreement, failureCode: failure.failureCode, declineCode: failure.declineCode,
        action: Agreements.customerAction(failureCode: failure.failureCode, declineCode: failure.declineCode),
        settings: context.config.billing, transaction: transaction, context: context, now: now)
      var answer = result(agreement, .failed)
      answer.chargeId = chargeId
      answer.failureCode = failure.failureCode
      answer.declineCode = failure.declineCode
      answer.message = failure.message
      return answer
    }
    try transaction.insert(
      ChargeRow(
        chargeId: chargeId, token: nil, succeeded: true, amountMinor: amountMinor,
        currencyCode: context.config.currency.code, createdAt: nowText))
    return try record(
      &agreement, terms: terms, prepared: prepared, chargeId: chargeId, gatewayPaymentId: nil, transaction: transaction,
      context: context, now: now)
  }

  /// Records the paid order and moves the agreement on.
  func record(
    _ agreement: inout AgreementRow, terms: AgreementTerms, prepared: PreparedOrder, chargeId: String,
    gatewayPaymentId: String?, transaction: any StoreTransaction, context: ServiceContext, now: Int64
  ) throws -> Result {
    var recorded = prepared
    recorded.document.chargeId = chargeId
    recorded.document.gatewayPaymentId = gatewayPaymentId
    recorded.document.status = .paid
    try transaction.insert(recorded.row(chargeId: chargeId, gatewayPaymentId: gatewayPaymentId, captured: true))
    let amountMinor = Int64(prepared.amountMinor)
    try Agreements.paid(
      &agreement, terms: terms, orderId: orderId, amountMinor: amountMinor, transaction: transaction, context: context,
      now: now)
    var answer = result(agreement, .succeeded)
    answer.orderId = orderId
    answer.chargeId = chargeId
    answer.amount = recorded.document.amount
    return answer
  }

  public static func work(_ call: Call, context: ServiceContext) -> GatewayWork { .charge(call.gatewayCharge) }

  public static func sender(_ context: ServiceContext) -> (@Sendable (Call) -> PendingCall<GatewayReply<GatewayPayment>>)? {
    guard let calls = context.gatewayCalls else { return nil }
    return { call in
      let request = call.gatewayCharge
      return calls.start(key: request.idempotencyKey) { await $0.charge(request) }
    }
  }

  public static func settle(
    _ call: Call, reply: GatewayReply<GatewayPayment>, _ locked: AgreementRow?, _ transaction: any StoreTransaction,
    context: ServiceContext, now: Int64
  ) throws -> Settlement<Result> {
    guard var agreement = locked else { throw ServiceError.agreementNotFound(call.agreementId) }
    let payment = AgreementPayment(call: call, identifiers: try context.identifiers)
    let terms = try Agreements.terms(of: agreement)
    let gatewayName = context.gatewayCalls?.gateway.name ?? "The gateway"
    /// Still waiting: the stock stays taken, the same call goes again.
    func pending(_ code: String, _ message: String) -> Settlement<Result> {
      var answer = payment.result(agreement, .pending)
      answer.failureCode = code
      answer.message = message
      return .pending(answer)
    }
    /// Not charged: the stock goes back, the failed charge is recorded, dunning decides.
    func declined(chargeId: String?, code: String, declineCode: String?, message: String, action: CustomerAction?) throws
      -> Settlement<Result>
    {
      if call.takesStock {
        guard try transaction.restock(agreement.sku, by: agreement.quantity) else {
          throw StoreError.unavailable(reason: "the stock a declined payment took is not recorded as sold")
        }
      }
      try transaction.insert(
        ChargeRow(
          chargeId: chargeId ?? "payservice-failed-\(call.orderId)-\(call.attempt)", token: nil, succeeded: false,
          failureCode: code, declineCode: declineCode, amountMinor: Int64(call.amountMinor),
          currencyCode: call.currencyCode, createdAt: RFC3339.format(now)))
      try Agreements.declined(
        &agreement, failureCode: code, declineCode: declineCode, action: action, settings: context.config.billing,
        transaction: transaction, context: context, now: now)
      var answer = payment.result(agreement, .failed)
      answer.chargeId = chargeId
      answer.failureCode = code
      answer.declineCode = declineCode
      answer.message = message
      return .settled(answer)
    }
    switch reply {
    case .unanswered(let reason):
      return pending("gateway_unavailable", "\(gatewayName) did not answer (\(reason)): the next run sends the same payment again.")
    case .accepted(let reference):
      return pending(
        "payment_processing",
        "\(gatewayName) accepted the payment (\(reference)) and says later what came of it; the next run settles it once it has.")
    case .refused(let refusal) where !refusal.final:
      return pending(
        "gateway_error", "\(gatewayName) refused the request (\(refusal.type)): \(refusal.message) The next run sends it again.")
    case .refused(let refusal):
      return try declined(
        chargeId: nil, code: "gateway_error", declineCode: refusal.code,
        message: "\(gatewayName) refused the payment (\(refusal.type)): \(refusal.message)",
        action: CustomerAction(
          code: .updatePaymentMethod, message: "Your card can no longer be charged. Add another card to keep your plan."))
    case .declined(let decline):
      return try declined(
        chargeId: decline.chargeId, code: decline.code == "authentication_required" ? "card_declined" : decline.code,
        declineCode: decline.declineCode, message: decline.message,
        action: Agreements.customerAction(failureCode: decline.code, declineCode: decline.declineCode))
    case .succeeded(let paid):
      switch paid.status {
      case .captured, .authorized:
        let chargeId = paid.chargeId ?? paid.id
        try transaction.insert(
          ChargeRow(
            chargeId: chargeId, token: nil, succeeded: true, amountMinor: Int64(call.amountMinor),
            currencyCode: call.currencyCode, createdAt: RFC3339.format(now)))
        return .settled(
          try payment.record(
            &agreement, terms: terms, prepared: call.prepared, chargeId: chargeId, gatewayPaymentId: paid.id,
            transaction: transaction, context: context, now: now))
      case .processing:
        return pending(
          "payment_processing", "\(gatewayName) is processing the payment \(paid.id): its event, or the next run, settles it.")
      case .notFound:
        guard let created = RFC3339.parse(call.createdAt), now - created >= PendingOrders.searchLagSeconds else {
          return pending(
            "gateway_unavailable",
            "\(gatewayName) stored a server error under the payment's key and its search finds no payment yet: the next run looks again.")
        }
        return try declined(
          chargeId: nil, code: "gateway_error", declineCode: nil,
          message: "\(gatewayName) failed the payment with a server error and holds no payment for it: not charged.",
          action: nil)
      case .requiresAction:
        return try declined(
          chargeId: paid.chargeId, code: "card_declined", declineCode: "authentication_required",
          message: "The card's bank asks the customer to authenticate this payment.",
          action: Agreements.customerAction(failureCode: "card_declined", declineCode: "authentication_required"))
      case .canceled, .incomplete:
        return try declined(
          chargeId: paid.chargeId, code: "processing_error", declineCode: nil,
          message: "\(gatewayName) could not complete the payment \(paid.id).", action: nil)
      }
    }
  }

  /// The operation a pending call belongs to.
  init(call: Call, identifiers: Identifiers) {
    let trigger: Trigger
    if let reloadId = call.reloadId {
      // The balance is not in the call; the key and order do not depend on it.
      trigger = .reload(reloadId: reloadId, balanceMinor: 0)
    } else {
      trigger = .scheduled(period: call.period, attempt: call.attempt)
    }
    self.init(agreementId: call.agreementId, trigger: trigger, identifiers: identifiers)
  }

  public static func unsent(_ call: Call, because reason: UnsentReason, context: ServiceContext) -> Result {
    var answer = Result()
    answer.agreementId = call.agreementId
    answer.period = call.reloadId == nil ? call.period : nil
    answer.attempt = call.reloadId == nil ? call.attempt : nil
    answer.reloadId = call.reloadId
    answer.status = .pending
    answer.orderId = call.orderId
    switch reason {
    case .tooOld:
      answer.failureCode = "gateway_error"
      answer.message = """
        This payment has been pending for more than 23 hours: the gateway may have forgotten its idempotency key, \
        so payservice will not send it again. Look it up at the gateway by its metadata order_id \(call.orderId).
        """
    case .noSender:
      answer.failureCode = "gateway_unavailable"
      answer.message = "This payment is pending at a remote gateway, and this payservice has none configured."
    }
    return answer
  }
}
