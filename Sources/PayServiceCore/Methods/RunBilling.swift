/// Charges every agreement payment due: the billing run a cron job or a systemd timer starts
/// (`payservice billing run`). Back office only (`--back-office`).
public enum RunBilling: RPCMethod {
  public static let name = "runBilling"

  public static let documentation = MethodDocumentation(
    summary: "Charge every agreement payment due: subscription periods, pre-orders, retries of declines.",
    description: """
      Charges each payment due at until (default: the service clock; never later than it) of every active or \
      past_due agreement, soonest first: a subscription's period (its trial's end included), a pre-order on \
      its payment date, a retry of a declined payment on billing.retries. Each payment becomes an order of \
      its own (agreement.payment scheduled), priced from the catalog and tax rules in force now, charged with \
      the card the checkout kept (merchant-initiated, the buyer not present), under an idempotency key made \
      of the agreement, the period and the attempt: two runs at once, or a run killed and run again, charge \
      each attempt at most once. A subscription behind by several periods is charged each of them. A \
      declined payment makes the agreement past_due (retried on billing.retries, then unpaid or canceled as \
      billing.whenRetriesFail says), or action_required when the customer must act (authenticate, or give \
      another card): that one is not retried. An agreement cancelled at period end ends at its next payment \
      instead. Payments lists what this run did, in order; succeeded, failed, pending and skipped count \
      them. skipped payments (out_of_stock, not_priced, gateway_mismatch) were not charged and are tried \
      again by the next run; pending ones wait on the gateway, and the next run (or Stripe's event) settles \
      them.
      """,
    errors: [.storeUnavailable, .invalidParams], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  public struct Params: Sendable {
    /// RFC 3339 UTC to the second; nil: the service clock.
    public var until: String?
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "until", \.until, .optional,
        .string("Charge the payments due at or before this RFC 3339 time; default, and latest, the service clock."),
        read: ListOrders.readTime)
    ])

  public struct Result: MethodResult, WireObject {
    public var until = ""
    public var payments: [AgreementPayment.Result] = []
    public var succeeded = 0
    public var failed = 0
    public var pending = 0
    public var skipped = 0

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member("until", \.until, .required, Shapes.timestamp),
        .member("payments", \.payments, .required, .array(AgreementPayment.Result.schema, "What this run did, in order.")),
        .member("succeeded", \.succeeded, .required, .integer(minimum: 0)),
        .member("failed", \.failed, .required, .integer(minimum: 0)),
        .member("pending", \.pending, .required, .integer(minimum: 0)),
        .member("skipped", \.skipped, .required, .integer(minimum: 0)),
      ])

    /// Whether everything due went through: what `payservice billing run`'s exit status says.
    public var failure: ResultFailure? {
      guard failed + pending + skipped > 0 else { return nil }
      return ResultFailure(
        status: "failed", code: "billing_incomplete",
        message: "\(failed) failed, \(pending) pending, \(skipped) skipped of \(payments.count) payments",
        lines: payments.compactMap { payment in
          payment.failure.map { "\(payment.agreementId): \($0.status) \($0.code)" }
        })
    }
  }

  /// Agreements read per page, and payments sent to the gateway at once (at most its concurrency).
  static let pageSize = 100

  public static let operationKinds: [any Operation.Type] = [AgreementPayment.self]

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let now = context.clock.now()
    let asked = params.until.flatMap(RFC3339.parse)
    if let until = asked, until > now {
      throw ServiceError.invalidParams([
        FieldError(path: "until", message: "must not be after the service clock \(RFC3339.format(now))")
      ])
    }
    let until = asked ?? now
    let identifiers = try context.identifiers
    var result = Result()
    result.until = RFC3339.format(until)
    // An agreement is done for this run once a payment of it did not go through; one that went
    // through may be due again (behind by several periods): passes repeat until one charges nothing.
    var done: Set<String> = []
    let width = max(context.gatewayCalls?.maxConcurrent ?? 1, 1)
    while true {
      var charged = false
      var after: AgreementCursor?
      while true {
        let page = try context.store.dueAgreements(by: until, after: after, limit: pageSize)
        guard let last = page.last else { break }
        after = AgreementCursor(nextPaymentAt: last.nextPaymentAt, agreementId: last.agreementId)
        let due = page.filter { !done.contains($0.agreementId) }
        var index = 0
        while index < due.count {
          let batch = due[index..<min(index + width, due.count)]
          index = batch.endIndex
          // Started together, so that their gateway calls overlap; each settles in its own transaction.
          var started: [OperationRunner.Started<AgreementPayment>] = []
          for agreement in batch {
            let payment = AgreementPayment(
              agreementId: agreement.agreementId,
              trigger: .scheduled(period: agreement.period, attempt: agreement.attempt + 1), identifiers: identifiers)
            let step = try OperationRunner.start(payment, context: context)
            if case .inFlight(let inFlight) = step { inFlight.send() }
            started.append(step)
          }
          for step in started {
            let answer: AgreementPayment.Result
            // Another run (on this host or another) charged or ended the payment under this key
            // (recorded before this run started it, or while both sent the same call): that
            // run's to report, not this one's.
            var theirs = false
            switch step {
            case .answered(let decided): answer = decided
            case .recorded(let stored):
              answer = stored
              theirs = true
            case .inFlight(let inFlight): (answer, theirs) = try inFlight.finishRecorded()
            }
            if theirs {
              if answer.status == .succeeded { charged = true } else { done.insert(answer.agreementId) }
              continue
            }
            // Another run moved the agreement on meanwhile: nothing to report.
            if answer.status == .skipped && answer.failureCode == "not_due" { continue }
            result.payments.append(answer)
            switch answer.status {
            case .succeeded: result.succeeded += 1
            case .failed: result.failed += 1
            case .pending: result.pending += 1
            case .skipped: result.skipped += 1
            case .ended, .notNeeded: break
            }
            if answer.status == .succeeded { charged = true } else { done.insert(answer.agreementId) }
          }
        }
      }
      if !charged { break }
    }
    return result
  }
}
