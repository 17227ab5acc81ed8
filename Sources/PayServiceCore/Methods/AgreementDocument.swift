/// An agreement as the back office reads it (`getAgreement`, `listAgreements`, `cancelAgreement`).
public struct AgreementDocument: Equatable, Sendable, WireObject {
  /// The schedule agreed at checkout. Times are RFC 3339 UTC.
  public struct Schedule: Equatable, Sendable, WireObject {
    /// Each later payment as the sheet showed it (price × quantity, before tax).
    public var amount = ""
    public var interval: BillingPlan.IntervalUnit?
    public var intervalCount: Int?
    /// A subscription's regular period 0 (the trial's end, the start date, or the checkout).
    public var firstPaymentAt: String?
    public var endDate: String?
    public var trialEnd: String?
    /// A pre-order's payment date.
    public var paymentDate: String?
    public var freeCancellationDate: String?
    public var freeCancellationTimeZone: String?
    public var thresholdAmount: String?

    public static let shape = ObjectShape<Schedule>(
      blank: { Schedule() },
      [
        .member(
          "amount", \.amount, .required,
          .string(
            "Each later payment as the sheet showed it (price × quantity, before tax); each is charged at the catalog price then.",
            pattern: MoneyText.pattern)),
        .member("interval", \.interval, .optional), .member("intervalCount", \.intervalCount, .optional),
        .member("firstPaymentAt", \.firstPaymentAt, .optional, Shapes.timestamp),
        .member("endDate", \.endDate, .optional, Shapes.timestamp),
        .member("trialEnd", \.trialEnd, .optional, Shapes.timestamp),
        .member("paymentDate", \.paymentDate, .optional, Shapes.timestamp),
        .member("freeCancellationDate", \.freeCancellationDate, .optional, Shapes.timestamp),
        .member("freeCancellationTimeZone", \.freeCancellationTimeZone, .optional),
        .member("thresholdAmount", \.thresholdAmount, .optional, Shapes.amount),
      ])
  }

  /// One thing that happened to the agreement.
  public struct Event: Equatable, Sendable, WireObject {
    public var type = AgreementEventRow.Kind.created
    public var at = ""
    public var period: Int?
    public var attempt: Int?
    public var orderId: String?
    public var amount: String?
    /// status_changed: the new status.
    public var status: AgreementStatus?
    /// declined, skipped: why (and the issuer's code); merchant_token_unlinked: who unlinked the
    /// token (as Apple said: the user or the issuer; or merchant).
    public var failureCode, declineCode, reason: String?

    public static let shape = ObjectShape<Event>(
      blank: { Event() },
      [
        .member("type", \.type), .member("at", \.at, .required, Shapes.timestamp),
        .member("period", \.period, .optional), .member("attempt", \.attempt, .optional),
        .member("orderId", \.orderId, .optional), .member("amount", \.amount, .optional, Shapes.amount),
        .member("status", \.status, .optional), .member("failureCode", \.failureCode, .optional),
        .member("declineCode", \.declineCode, .optional), .member("reason", \.reason, .optional),
      ])
  }

  public var agreementId = ""
  /// The checkout order that made it.
  public var orderId = ""
  public var kind = BillingPlan.Kind.recurring
  public var sku = ""
  public var quantity = 1
  public var status = AgreementStatus.active
  public var createdAt = ""
  public var schedule = Schedule()
  public var nextPaymentAt: String?
  /// The payment to make next (`AgreementRow.period`).
  public var period = 0
  /// Declined attempts at it so far.
  public var failedAttempts = 0
  public var cancelAtPeriodEnd = false
  /// The gateway that keeps the card (`sandbox`, `stripe`) and, at Stripe, its Customer.
  public var gateway = "sandbox"
  public var customerId: String?
  public var customerAction: CustomerAction?
  /// The Apple Pay merchant token its payments charge, when the first payment brought one.
  public var merchantToken: MerchantTokenState?
  public var currencyCode = ""
  public var events: [Event]?

  public static let shape = ObjectShape<AgreementDocument>(
    "An agreement: what the buyer agreed to be charged later.", blank: { AgreementDocument() },
    [
      .member("agreementId", \.agreementId), .member("orderId", \.orderId), .member("kind", \.kind),
      .member("sku", \.sku), .member("quantity", \.quantity, .required, .integer(minimum: 1)),
      .member(
        "status", \.status, .required,
        .string(
          """
          active; past_due (a payment was declined and is retried on billing.retries); action_required \
          (the customer must act: see customerAction); unpaid (its retries were declined); canceled; completed.
          """, values: AgreementStatus.allCases.map(\.rawValue))),
      .member("createdAt", \.createdAt, .required, Shapes.timestamp),
      .member("schedule", \.schedule),
      .member(
        "nextPaymentAt", \.nextPaymentAt, .alwaysOrNull,
        .string("When the next payment (or retry) is due, RFC 3339 UTC; null when none is scheduled.")),
      .member("period", \.period, .required, .integer("The payment made next.", minimum: 0)),
      .member("failedAttempts", \.failedAttempts, .required, .integer("Declined attempts at it.", minimum: 0)),
      .member("cancelAtPeriodEnd", \.cancelAtPeriodEnd),
      .member("gateway", \.gateway), .member("customerId", \.customerId, .optional),
      .member("customerAction", \.customerAction, .optional),
      .member("merchantToken", \.merchantToken, .optional),
      .member("currencyCode", \.currencyCode, .required, Shapes.currencyCode),
      .member("events", \.events, .optional, .array(Event.schema, "getAgreement: what happened, in order.")),
    ])

  /// The document of a stored agreement; `events` when given.
  init(_ row: AgreementRow, events: [AgreementEventRow]?, config: Config) throws(StoreError) {
    let terms = try Agreements.terms(of: row)
    let credential = try Agreements.credential(of: row)
    agreementId = row.agreementId
    orderId = row.orderId
    kind = row.kind
    sku = row.sku
    quantity = row.quantity
    status = row.status
    createdAt = row.createdAt
    let time = { (seconds: Int?) in seconds.map { RFC3339.format(Int64($0)) } }
    schedule.amount = config.format(Int64(terms.amountMinor))
    schedule.interval = terms.interval
    schedule.intervalCount = terms.intervalCount
    if row.kind == .deferred {
      schedule.paymentDate = time(terms.firstPaymentAt)
    } else {
      schedule.firstPaymentAt = time(terms.firstPaymentAt)
    }
    schedule.endDate = time(terms.endDate)
    schedule.trialEnd = time(terms.trialEnd)
    schedule.freeCancellationDate = time(terms.freeCancellationDate)
    schedule.freeCancellationTimeZone = terms.freeCancellationTimeZone
    schedule.thresholdAmount = terms.thresholdMinor.map { config.format(Int64($0)) }
    nextPaymentAt = row.nextPaymentAt.map(RFC3339.format)
    period = row.period
    failedAttempts = row.attempt
    cancelAtPeriodEnd = row.cancelAtPeriodEnd
    (gateway, customerId, merchantToken) = (credential.gateway, credential.customerId, credential.merchantToken)
    customerAction = try row.customerAction.map { text throws(StoreError) in
      try StoredJSON.read(text, as: CustomerAction.self, "customer action")
    }
    currencyCode = row.currencyCode
    self.events = events?.map { event in
      var shown = Event()
      shown.type = event.kind
      shown.at = event.at
      shown.period = event.period
      shown.attempt = event.attempt
      shown.orderId = event.orderId
      shown.amount = event.amountMinor.map(config.format)
      if event.kind == .statusChanged {
        shown.status = event.code.flatMap(AgreementStatus.init(rawValue:))
      } else if event.kind == .merchantTokenUnlinked {
        shown.reason = event.code
      } else {
        shown.failureCode = event.code
      }
      shown.declineCode = event.declineCode
      return shown
    }
  }

  init() {}

  /// The agreementId param every agreement method takes.
  static let idSchema = JSONSchema.string("From the checkout order's agreement, or listAgreements.", minLength: 1)
}
