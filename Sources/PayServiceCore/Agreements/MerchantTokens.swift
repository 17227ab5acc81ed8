/// Apple's Merchant Token Management API (`applePay.merchantTokens`), each call on a thread of
/// its own (`RemoteCallThread`).
public final class MerchantTokenCalls: Sendable {
  let service: any MerchantTokenService
  private let thread = RemoteCallThread(name: "payservice-merchant-tokens")

  public init(service: any MerchantTokenService) {
    self.service = service
  }

  func event(_ eventId: String) -> PendingCall<MerchantTokenEventReply> {
    let service = self.service
    return thread.start(key: "event/\(eventId)") { await service.event(eventId) }
  }

  func unlink(_ merchantTokenIdentifier: String) -> PendingCall<MerchantTokenUnlinkReply> {
    let service = self.service
    return thread.start(key: "unlink/\(merchantTokenIdentifier)") { await service.unlink(merchantTokenIdentifier) }
  }

  public func shutdown() {
    service.shutdown()
  }
}

/// An operation whose call goes to Apple's Merchant Token Management API: sent through the
/// context's `MerchantTokenCalls`, none without `applePay.merchantTokens`.
public protocol MerchantTokenOperation: Operation {
  /// Starts `call` with `calls`.
  static func start(_ call: Call, with calls: MerchantTokenCalls) -> PendingCall<Reply>
}

extension MerchantTokenOperation {
  public static func sender(_ context: ServiceContext) -> (@Sendable (Call) -> PendingCall<Reply>)? {
    guard let calls = context.merchantTokens else { return nil }
    return { call in start(call, with: calls) }
  }
}

extension Agreements {
  /// An agreement that ends (canceled, unpaid or completed) no longer needs its merchant token:
  /// the token is marked unlinked by the merchant and its unlinking at Apple is recorded, once per
  /// token (kind `merchant_token_unlink`, keyed by the token), in the transaction that ends it.
  /// Nothing when the agreement has no active token, or the config does not reach Apple's API.
  static func unlinkMerchantToken(
    _ agreement: inout AgreementRow, transaction: any StoreTransaction, context: ServiceContext, now: Int64
  ) throws {
    var credential = try credential(of: agreement)
    guard context.config.merchantTokens != nil, var token = credential.merchantToken, token.status == .active else {
      return
    }
    token.status = .unlinked
    token.reason = "merchant"
    token.updatedAt = RFC3339.format(now)
    credential.merchantToken = token
    agreement.credential = JSONWriter.string(credential)
    try transaction.append(
      AgreementEventRow(
        agreementId: agreement.agreementId, position: 0, kind: .merchantTokenUnlinked, at: RFC3339.format(now),
        code: "merchant"))
    let call = MerchantTokenUnlink.Call(merchantTokenIdentifier: token.identifier, agreementId: agreement.agreementId)
    try context.recordedCalls.record(
      MerchantTokenUnlink.self, call, key: token.identifier, subject: agreement.agreementId, transaction, now: now)
  }
}

/// The unlinking of one merchant token at Apple (kind `merchant_token_unlink`, keyed by the
/// token): recorded by the agreement's ending (`Agreements.unlinkMerchantToken`), never prepared
/// from a request; sent once, settled with what Apple answered.
public struct MerchantTokenUnlink: RecordedOperation, MerchantTokenOperation {
  public static let kind = "merchant_token_unlink"

  public struct Call: Sendable, WireObject {
    public var merchantTokenIdentifier = ""
    /// The agreement whose ending asked for it.
    public var agreementId = ""

    public static let shape = ObjectShape<Call>(
      blank: { Call() },
      [.member("merchantTokenIdentifier", \.merchantTokenIdentifier), .member("agreementId", \.agreementId)])
  }

  public static func start(_ call: Call, with calls: MerchantTokenCalls) -> PendingCall<Reply> {
    calls.unlink(call.merchantTokenIdentifier)
  }

  /// What came of the unlink, as the journal keeps it.
  public struct Result: Sendable, Equatable, WireObject {
    /// `unlinked`, `refused` or `unavailable`; `not_sent` when it was never sent.
    public var outcome = ""
    public var reason: String?

    public static let shape = ObjectShape<Result>(
      blank: { Result() }, [.member("outcome", \.outcome), .member("reason", \.reason, .optional)])
  }

  public typealias Reply = MerchantTokenUnlinkReply

  public let call: Call
  public var key: String { call.merchantTokenIdentifier }
  public var subject: String? { call.agreementId }
  public var fingerprint: String { key }
  public var conflict: ServiceError { .idempotencyKeyConflict("merchant token unlink") }

  /// Unlinks are recorded by the ending of an agreement, never prepared from a request.
  public func prepare(_ subject: Void, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64) throws
    -> Preparation<Result, Call>
  {
    .done(Result(outcome: "not_sent", reason: "an unlink is recorded by the agreement's ending"), final: false)
  }

  public static func settle(
    _ call: Call, reply: Reply, _ subject: Void, _ transaction: any StoreTransaction, context: ServiceContext,
    now: Int64
  ) throws -> Settlement<Result> {
    switch reply {
    case .unlinked: return .settled(Result(outcome: "unlinked"))
    case .refused(_, let reason): return .settled(Result(outcome: "refused", reason: reason))
    case .unavailable(let reason): return .pending(Result(outcome: "unavailable", reason: reason))
    }
  }

  public static func unsent(_ call: Call, because reason: UnsentReason, context: ServiceContext) throws -> Result {
    Result(
      outcome: "not_sent", reason: reason == .tooOld ? "older than 30 days" : "no applePay.merchantTokens configured")
  }

  /// Apple's unlink is the same whenever it is sent; a month bounds what a forgotten entry costs.
  public static var maxResendAgeSeconds: Int64 { 30 * 86_400 }
}
