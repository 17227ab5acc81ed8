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
      instead. One call makes at most limit payments (default 500): payments lists what it did, in order; \
      succeeded, failed, pending, skipped and ended count them, and charged adds up what succeeded, per \
      currency. When cursor is not null, more may be due: the same call with that cursor goes on where this \
      one stopped. Agreements are gone through soonest due first; one that did not go through is not tried \
      again until the next run. skipped payments (out_of_stock, not_priced, gateway_mismatch) were not \
      charged and are tried again by the next run; pending ones wait on the gateway, and the next run (or \
      Stripe's event) settles them. Runs at once (several hosts or processes) may share the agreements out: \
      each given its own shard {index, of} goes only through that part (by the agreement id's last hex \
      digit, of at most 16), so that they never meet on an agreement; runs without a shard, or with the \
      same one, still charge each payment once, taking turns.
      """,
    errors: [.storeUnavailable, .invalidParams], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  /// Payments one call makes at most, by default and at most: a call's answer lists each, so
  /// that no answer outgrows a line (a payment's entry is a few hundred bytes).
  public static let defaultLimit = 500
  public static let maxLimit = 2000

  public struct Params: Sendable {
    /// RFC 3339 UTC to the second; nil: the service clock (or the cursor's).
    public var until: String?
    public var limit = RunBilling.defaultLimit
    public var cursor: Cursor?
    /// The part of the agreements this call goes through; nil: all of them (or the cursor's part).
    public var shard: AgreementShard?
  }

  /// Where a call stopped at its limit: its until, the last agreement it reached in the sweep, the
  /// agreements it charged that are due again behind that point (behind by several periods), which
  /// the next call charges first, and the shard it goes through.
  public struct Cursor: KeysetCursor {
    public var until: Int64
    public var after: AgreementCursor?
    public var dueAgain: [String]
    public var shard: AgreementShard?

    public static let prefix = "bc1_"
    public static let method = RunBilling.name
    public static let answerMember = "cursor"
    /// Room for as many agreements due again as payments at once (`gateway.maxConcurrentCalls`, at
    /// most 1024), each id at most 255 bytes, in hex.
    public static let maxLength = 2 * 1024 * 256 + 256
    public var fields: [String] {
      [
        String(until), after.map { String($0.nextPaymentAt ?? 0) } ?? "", after?.agreementId ?? "",
        dueAgain.joined(separator: " "),
      ] + (shard.map { [String($0.index), String($0.of)] } ?? [])
    }

    public init(until: Int64, after: AgreementCursor?, dueAgain: [String], shard: AgreementShard? = nil) {
      self.until = until
      self.after = after
      self.dueAgain = dueAgain
      self.shard = shard
    }

    /// Four fields, or six with a shard (index, of).
    public init?(fields: [Substring]) {
      guard fields.count == 4 || fields.count == 6, let until = Int64(fields[0]), fields[1].isEmpty == fields[2].isEmpty,
        fields[1].isEmpty || Int64(fields[1]) != nil, fields[2].utf8.count <= 255
      else { return nil }
      let dueAgain = fields[3].split(separator: " ").map(String.init)
      guard dueAgain.count <= 1024, dueAgain.allSatisfy({ $0.utf8.count <= 255 }) else { return nil }
      var shard: AgreementShard?
      if fields.count == 6 {
        guard let index = Int(fields[4]), let of = Int(fields[5]),
          let part = AgreementShard(checkedIndex: index, of: of)
        else { return nil }
        shard = part
      }
      self.init(
        until: until,
        after: Int64(fields[1]).map { AgreementCursor(nextPaymentAt: $0, agreementId: String(fields[2])) },
        dueAgain: dueAgain, shard: shard)
    }
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "until", \.until, .optional,
        .string("Charge the payments due at or before this RFC 3339 time; default, and latest, the service clock."),
        read: ListOrders.readTime),
      .member(
        "limit", \.limit, .optional,
        .integer("The most payments this call makes, 1 to 2000; default 500.", minimum: 1, maximum: maxLimit),
        read: { value, path, reader in reader.integer(value, path(), range: 1...maxLimit) }),
      .member("cursor", \.cursor, .optional),
      .member("shard", \.shard, .optional),
    ])

  public struct Result: MethodResult, WireObject {
    public var until = ""
    public var payments: [AgreementPayment.Result] = []
    public var succeeded = 0
    public var failed = 0
    public var pending = 0
    public var skipped = 0
    public var ended = 0
    public var charged: [CurrencyTotal] = []
    public var cursor: Cursor?

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member("until", \.until, .required, Shapes.timestamp),
        .member(
          "payments", \.payments, .required,
          .array(AgreementPayment.Result.schema, "What this call did, in order: at most limit.")),
        .member("succeeded", \.succeeded, .required, .integer(minimum: 0)),
        .member("failed", \.failed, .required, .integer(minimum: 0)),
        .member("pending", \.pending, .required, .integer(minimum: 0)),
        .member("skipped", \.skipped, .required, .integer(minimum: 0)),
        .member("ended", \.ended, .required, .integer(minimum: 0)),
        .member(
          "charged", \.charged, .required,
          .array(CurrencyTotal.schema, "The succeeded payments' amounts added up, one total per currency.")),
        .member(
          "cursor", \.cursor, .alwaysOrNull,
          .string(
            "Not null when this call stopped at limit and more may be due: send it back as cursor to go on.",
            pattern: "^bc1_[0-9a-f]+$")),
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
    if let cursor = params.cursor, let until = asked, until != cursor.until {
      throw ServiceError.invalidParams([
        FieldError(
          path: "until",
          message: "must be the cursor's until \(RFC3339.format(cursor.until)), or left out to go on from the cursor")
      ])
    }
    if let shard = params.shard, shard.index >= shard.of {
      throw ServiceError.invalidParams([
        FieldError(path: "shard.index", message: "must be below shard.of (\(shard.of)): 0 to \(shard.of - 1)")
      ])
    }
    if let cursor = params.cursor, let shard = params.shard, shard != cursor.shard {
      throw ServiceError.invalidParams([
        FieldError(path: "shard", message: "must be the cursor's shard, or left out to go on from the cursor")
      ])
    }
    let until = params.cursor?.until ?? asked ?? now
    let shard = params.cursor?.shard ?? params.shard
    let identifiers = try context.identifiers
    var result = Result()
    result.until = RFC3339.format(until)
    var charged = CurrencyTotal.Sums()
    // One sweep through the due agreements, soonest first by (nextPaymentAt, agreementId). A payment
    // that went through moves its agreement on by a period: when it is due again at or before the
    // sweep's position (behind by several periods), it is charged again before the sweep goes on;
    // later, the sweep meets it again. One that did not go through stays behind, for the next run.
    var after = params.cursor?.after
    var dueAgain = params.cursor?.dueAgain ?? []
    var page: ArraySlice<AgreementRow> = []
    let width = max(context.gatewayCalls?.maxConcurrent ?? 1, 1)
    while true {
      if page.isEmpty {
        page = try context.store.dueAgreements(by: until, after: after, limit: pageSize, shard: shard)[...]
        if page.isEmpty && dueAgain.isEmpty { break }
      }
      let room = min(width, params.limit - result.payments.count)
      if room == 0 {
        result.cursor = Cursor(until: until, after: after, dueAgain: dueAgain, shard: shard)
        break
      }
      var batch: [AgreementRow] = []
      while batch.count < room, !dueAgain.isEmpty {
        let id = dueAgain.removeFirst()
        if let row = try context.store.agreement(id: id)?.row, row.collects(by: until) { batch.append(row) }
      }
      while batch.count < room, let row = page.popFirst() {
        batch.append(row)
        after = AgreementCursor(nextPaymentAt: row.nextPaymentAt, agreementId: row.agreementId)
      }
      // Started together, so that their gateway calls overlap; each settles in its own transaction.
      var started: [(step: OperationRunner.Started<AgreementPayment>, agreement: AgreementRow)] = []
      for agreement in batch {
        let payment = AgreementPayment(
          agreementId: agreement.agreementId,
          trigger: .scheduled(period: agreement.period, attempt: agreement.attempt + 1), identifiers: identifiers)
        let step = try OperationRunner.start(payment, context: context)
        if case .inFlight(let inFlight) = step { inFlight.send() }
        started.append((step, agreement))
      }
      for (step, agreement) in started {
        let answer: AgreementPayment.Result
        switch step {
        case .answered(let decided): answer = decided
        // Another run (on this host or another) charged or ended the payment under this key
        // (recorded before this run started it, or while both sent the same call): that run's
        // to report, and to follow up, not this one's.
        case .recorded: continue
        case .inFlight(let inFlight):
          let (finished, theirs) = try inFlight.finishRecorded()
          if theirs { continue }
          answer = finished
        }
        // Another run moved the agreement on meanwhile: nothing to report.
        if answer.status == .skipped && answer.failureCode == "not_due" { continue }
        result.payments.append(answer)
        switch answer.status {
        case .succeeded:
          result.succeeded += 1
          if let amount = answer.amount { charged.add(amount, agreement.currencyCode) }
          if let next = answer.nextPaymentAt.flatMap(RFC3339.parse), next <= until,
            next <= after?.nextPaymentAt ?? AgreementCursor.noDate
          {
            dueAgain.append(agreement.agreementId)
          }
        case .failed: result.failed += 1
        case .pending: result.pending += 1
        case .skipped: result.skipped += 1
        case .ended: result.ended += 1
        case .notNeeded: break
        }
      }
    }
    result.charged = charged.totals
    return result
  }
}
