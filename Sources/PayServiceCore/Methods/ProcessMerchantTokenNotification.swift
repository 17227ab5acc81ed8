/// Apple's `GET {tokenNotificationURL}/notification/merchantToken/{eventId}`: a merchant token of
/// the merchant's changed. Apple's call carries no body and no signature, so only the event id is
/// taken from it; what happened is asked of Apple's own API, over mutual TLS with the merchant
/// identity certificate, and applied once however often and from however many processes the
/// notification arrives.
public enum ProcessMerchantTokenNotification: OperationMethod {
  public static let name = "processMerchantTokenNotification"

  public static let documentation = MethodDocumentation(
    summary: "Apple's merchant token notification: fetch the event from Apple and apply it once.",
    description: """
      For the HTTP front of the tokenNotificationURL: pass the {eventId} of GET …/notification/merchantToken/{eventId} \
      and nothing else (Apple's call has no body and no signature). payservice fetches the event's details from \
      Apple (GET …/paymentservices/v1/merchantId/{merchantId}/merchantToken/event/{eventId}, mutual TLS with the \
      merchant identity certificate) and applies them once per eventId: an UNLINK (the customer or the issuer \
      removed the token) marks the token unlinked on every agreement that charges it and cancels those still \
      running, so that runBilling never charges it again; card metadata Apple gives is recorded on them; any other \
      event is recorded without effect. reply is the HTTP status to give Apple: 200 once the event is applied, \
      recorded, or unknown to Apple (a forged or expired eventId changes nothing and is not kept), 500 when Apple \
      could not be reached or this config has no applePay.merchantTokens, so that Apple sends the notification \
      again. The same eventId again answers the stored result. An eventId that is not 1 to 128 letters, digits, - \
      or _ is error -32602 and never reaches a URL.
      """,
    errors: [.storeUnavailable, .invalidParams], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  public struct Params: Sendable {
    public var eventId = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "eventId", \.eventId, .required,
        .string(
          "The {eventId} of Apple's notification path: 1 to 128 letters, digits, - and _.",
          pattern: "^[A-Za-z0-9_-]{1,128}$", minLength: 1, maxLength: MerchantTokenEventId.maxLength),
        read: { value, path, reader in
          guard case .string(let text) = value, MerchantTokenEventId.isValid(text) else {
            reader.fail(path(), "must be the eventId of Apple's notification path: 1 to 128 letters, digits, - and _")
            return nil
          }
          return text
        })
    ])

  public struct Result: MethodResult, Equatable, Sendable, WireObject {
    public enum Status: String, Sendable, WireEnum, CaseIterable {
      /// The event changed agreements (`agreements`).
      case applied
      /// The event is Apple's but changed nothing here (no agreement charges the token, or a type
      /// that changes nothing).
      case recorded
      /// Apple knows no such event for this merchant: nothing changed, nothing kept.
      case unknownEvent = "unknown_event"
      /// Apple could not be reached: nothing changed yet; Apple sends the notification again.
      case unavailable
      /// This config has no `applePay.merchantTokens`.
      case notConfigured = "not_configured"
    }

    public var status = Status.applied
    /// The HTTP status the endpoint gives Apple.
    public var reply = 200
    public var eventId = ""
    public var eventType: String?
    public var merchantTokenIdentifier: String?
    /// The agreements the event changed, by agreementId.
    public var agreements: [String]?
    public var message: String?

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member(
          "status", \.status, .required,
          .string(
            """
            applied (agreements changed), recorded (Apple's event, nothing to change), unknown_event (Apple knows \
            no such event: nothing changed or kept), unavailable (Apple not reached), not_configured.
            """, values: Status.allCases.map(\.rawValue))),
        .member("reply", \.reply, .required, .integer("The HTTP status to answer Apple: 200, or 500 to have it retry.")),
        .member("eventId", \.eventId), .member("eventType", \.eventType, .optional),
        .member("merchantTokenIdentifier", \.merchantTokenIdentifier, .optional),
        .member(
          "agreements", \.agreements, .optional,
          .array(.string(), "The agreements the event changed, by agreementId: the first 100 when there are more.")),
        .member("message", \.message, .optional),
      ])
  }

  public static func operation(_ params: Params, context: ServiceContext) -> Event {
    Event(eventId: params.eventId)
  }

  /// One event of Apple's (kind `merchant_token_event`, keyed by its id): fetched, then applied
  /// in the second transaction, once.
  public struct Event: MerchantTokenOperation {
    public static let kind = "merchant_token_event"

    public struct Call: Sendable, WireObject {
      public var eventId = ""
      public static let shape = ObjectShape<Call>(blank: { Call() }, [.member("eventId", \.eventId)])
    }

    public typealias Reply = MerchantTokenEventReply

    let eventId: String
    public var key: String { eventId }
    public var subject: String? { nil }
    public var fingerprint: String { eventId }
    public var conflict: ServiceError { .idempotencyKeyConflict("eventId") }

    public static func lock(key: String, subject: String?, _ transaction: any StoreTransaction, context: ServiceContext)
      throws
    {
      try transaction.lockKey(kind, key)
    }

    public func prepare(_ subject: Void, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64) throws
      -> Preparation<Result, Call>
    {
      guard context.config.merchantTokens != nil else {
        return .done(
          Result(
            status: .notConfigured, reply: 500, eventId: eventId,
            message: "this config has no applePay.merchantTokens: the event cannot be fetched from Apple"),
          final: false)
      }
      return .send(Call(eventId: eventId))
    }

    public static func start(_ call: Call, with calls: MerchantTokenCalls) -> PendingCall<Reply> {
      calls.event(call.eventId)
    }

    public static func settle(
      _ call: Call, reply: Reply, _ subject: Void, _ transaction: any StoreTransaction, context: ServiceContext,
      now: Int64
    ) throws -> Settlement<Result> {
      switch reply {
      case .event(let details):
        return .settled(try apply(details, eventId: call.eventId, transaction, context: context, now: now))
      case .notFound(_, let reason):
        // Not kept: a forged id costs the journal nothing.
        return .released(
          Result(
            status: .unknownEvent, reply: 200, eventId: call.eventId,
            message: "Apple knows no such event for this merchant (\(reason)): nothing changed"))
      case .unavailable(let reason):
        return .pending(
          Result(
            status: .unavailable, reply: 500, eventId: call.eventId,
            message: "Apple's merchant token API was not reached (\(reason)): nothing changed; Apple sends it again"))
      }
    }

    /// Applies an event Apple's API gave: to every agreement that charges its token.
    static func apply(
      _ details: MerchantTokenEventDetails, eventId: String, _ transaction: any StoreTransaction,
      context: ServiceContext, now: Int64
    ) throws -> Result {
      var result = Result(
        status: .recorded, reply: 200, eventId: eventId, eventType: details.eventType,
        merchantTokenIdentifier: details.merchantTokenIdentifier)
      let nowText = RFC3339.format(now)
      // An authorization whose agreement is not made yet learns it too.
      if details.endsToken {
        try transaction.markMerchantTokenHoldsUnlinked(details.merchantTokenIdentifier, by: details.reason)
      }
      var changed: [String] = []
      for agreementId in try transaction.agreementIds(merchantToken: details.merchantTokenIdentifier) {
        guard var agreement = try transaction.lockAgreement(agreementId) else { continue }
        var credential = try Agreements.credential(of: agreement)
        guard var token = credential.merchantToken, token.identifier == details.merchantTokenIdentifier else { continue }
        let ends = details.endsToken && token.status == .active
        let recard = details.card != nil && details.card != token.card
        guard ends || recard else { continue }
        if let card = details.card { token.card = card }
        token.updatedAt = nowText
        if ends {
          token.status = .unlinked
          token.reason = details.reason
        }
        credential.merchantToken = token
        agreement.credential = JSONWriter.string(credential)
        agreement.updatedAt = nowText
        try transaction.append(
          AgreementEventRow(
            agreementId: agreementId, position: 0, kind: ends ? .merchantTokenUnlinked : .merchantTokenUpdated,
            at: nowText, code: ends ? details.reason : nil))
        if ends && (agreement.status.collects || agreement.status == .actionRequired) {
          // The token is unlinked already: ending the agreement records no unlink of it.
          try Agreements.end(&agreement, as: .canceled, transaction: transaction, context: context, now: now)
        } else {
          try transaction.update(agreement)
        }
        changed.append(agreementId)
      }
      if !changed.isEmpty {
        result.status = .applied
        // Every agreement is changed; the answer names the first `maxListed`, so that it stays a line.
        result.agreements = Array(changed.prefix(maxListed))
      }
      return result
    }

    public static func unsent(_ call: Call, because reason: UnsentReason, context: ServiceContext) throws -> Result {
      Result(
        status: reason == .tooOld ? .unknownEvent : .notConfigured, reply: reason == .tooOld ? 200 : 500,
        eventId: call.eventId,
        message: reason == .tooOld
          ? "older than the 7 days Apple keeps an event's details: nothing changed"
          : "this config has no applePay.merchantTokens: the event cannot be fetched from Apple")
    }

    /// The most agreements an answer names.
    static let maxListed = 100

    /// Apple keeps an event's details for 7 days.
    public static var maxResendAgeSeconds: Int64 { 7 * 86_400 }
  }
}
