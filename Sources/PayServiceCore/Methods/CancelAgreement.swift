/// Ends an agreement now or at its period's end: no later payment is charged. Back office only
/// (`--back-office`).
public enum CancelAgreement: OperationMethod {
  public static let name = "cancelAgreement"
  /// The cancel, and the unlinking of the agreement's merchant token that ending it records.
  public static let operationKinds: [any Operation.Type] = [Cancellation.self, MerchantTokenUnlink.self]

  public static let documentation = MethodDocumentation(
    summary: "Cancel an agreement now, or a subscription at the end of its current period.",
    description: """
      Ends an agreement: no later payment is charged. atPeriodEnd (subscriptions only) lets the period the \
      customer paid for run out: the agreement stays active and ends, uncharged, when its next payment comes \
      due; without it the agreement is canceled now. Nothing paid is refunded (refundOrder does that, by \
      order). A pre-order cancelled after its free cancellation date fails with cancellation_not_free when \
      billing.lateCancellation is refuse (the default); allow cancels it at no cost. An agreement already \
      canceled, completed or unpaid fails with agreement_ended. cancelId is your idempotency key: the same \
      cancelId with the same params answers the stored result; with others it is error -32004. A failure \
      changes nothing and leaves the cancelId unused. An unknown agreementId is error -32005.
      """,
    errors: [.storeUnavailable, .agreementNotFound, .idempotencyKeyConflict, .invalidParams], readOnly: false,
    idempotent: true, destructive: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  public struct Params: Sendable {
    public var agreementId = ""
    public var cancelId = ""
    public var atPeriodEnd = false
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member("agreementId", \.agreementId, .required, AgreementDocument.idSchema),
      .member(
        "cancelId", \.cancelId, .required,
        BackOffice.keySchema("Your idempotency key for this cancel: 1 to 255 printable ASCII characters."),
        read: BackOffice.readKey),
      .member(
        "atPeriodEnd", \.atPeriodEnd, .optional,
        .boolean("A subscription ends when its next payment comes due, uncharged; default false: now.")),
    ])

  public enum FailureCode: String, Sendable, WireEnum {
    /// The agreement is canceled, completed or unpaid already.
    case agreementEnded = "agreement_ended"
    /// A pre-order past its free cancellation date, with `billing.lateCancellation: refuse`.
    case cancellationNotFree = "cancellation_not_free"
  }

  public struct Succeeded: Equatable, Sendable, WireObject {
    public var cancelId = ""
    public var agreement = AgreementDocument()

    public static let shape = ObjectShape<Succeeded>(
      blank: { Succeeded() },
      [.constant("status", "succeeded"), .member("cancelId", \.cancelId), .member("agreement", \.agreement)])
  }

  public struct Failed: Equatable, Sendable, WireObject, FailureReporting {
    public var failureCode = FailureCode.agreementEnded
    public var message = ""

    public static let shape = ObjectShape<Failed>(
      blank: { Failed() },
      [
        .constant("status", "failed"), .member("failureCode", \.failureCode),
        .member("message", \.message, .required, .string("Why, and what would be valid."), read: ParamReader.anyString),
      ])

    public var report: ResultFailure { ResultFailure(status: "failed", code: failureCode.rawValue, message: message, lines: []) }
  }

  public typealias Result = Outcome<Succeeded, Failed>

  public static func operation(_ params: Params, context: ServiceContext) -> Cancellation {
    Cancellation(params: params, fingerprint: BackOffice.fingerprint(params, Self.params))
  }

  /// cancelAgreement as an operation of the journal (kind `agreement_cancel`, keyed by the cancelId).
  public struct Cancellation: LocalOperation {
    public static let kind = "agreement_cancel"
    let params: Params
    public let fingerprint: String
    public var key: String { params.cancelId }
    public var subject: String? { params.agreementId }
    public var conflict: ServiceError { .idempotencyKeyConflict("cancelId") }

    public static func lock(key: String, subject: String?, _ transaction: any StoreTransaction, context: ServiceContext)
      throws -> AgreementRow?
    {
      try transaction.lockAgreement(subject ?? "")
    }

    public func prepare(_ locked: AgreementRow?, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64)
      throws -> Preparation<Result, NoCall>
    {
      guard var agreement = locked else { throw ServiceError.agreementNotFound(params.agreementId) }
      func failed(_ code: FailureCode, _ message: String) -> Preparation<Result, NoCall> {
        .done(.failed(Failed(failureCode: code, message: message)), final: false)
      }
      guard agreement.status.collects || agreement.status == .actionRequired else {
        return failed(.agreementEnded, "The agreement is \(agreement.status.rawValue) already: it makes no more payments.")
      }
      if params.atPeriodEnd && agreement.kind != .recurring {
        throw ServiceError.invalidParams([
          FieldError(
            path: "atPeriodEnd",
            message: "only a subscription has periods; this agreement is \(agreement.kind.rawValue): leave atPeriodEnd out")
        ])
      }
      let terms = try Agreements.terms(of: agreement)
      if agreement.kind == .deferred, let freeUntil = terms.freeCancellationDate, now > Int64(freeUntil),
        context.config.billing.lateCancellation == .refuse
      {
        return failed(
          .cancellationNotFree,
          "The free cancellation date \(RFC3339.format(Int64(freeUntil))) has passed: the pre-order is charged on its payment date.")
      }
      if params.atPeriodEnd && agreement.status == .active {
        agreement.cancelAtPeriodEnd = true
        agreement.updatedAt = RFC3339.format(now)
        try transaction.update(agreement)
        try transaction.append(
          AgreementEventRow(
            agreementId: agreement.agreementId, position: 0, kind: .cancelScheduled, at: RFC3339.format(now),
            period: agreement.period))
      } else {
        try Agreements.end(&agreement, as: .canceled, transaction: transaction, context: context, now: now)
      }
      return .done(
        .succeeded(
          Succeeded(
            cancelId: params.cancelId, agreement: try AgreementDocument(agreement, events: nil, config: context.config))),
        final: true)
    }
  }
}
