/// An App Store Server Notification V2, passed on by the merchant's notification endpoint:
/// verified with the items nested in it, recorded once by its notificationUUID (journal kind
/// `appStoreNotification`) and applied to the purchase it is about. Not a back-office method: the
/// endpoint Apple posts to is not the back office, and only what Apple signed is applied.
public enum ProcessAppStoreNotification: RPCMethod {
  public static let name = "processAppStoreNotification"

  public static let documentation = MethodDocumentation(
    summary: "Verify an App Store Server Notification V2 and apply it once.",
    description: """
      Give the signedPayload of the notification's JSON body. It is verified as verifyAppStoreTransaction \
      verifies a transaction, and so are the signedTransactionInfo and signedRenewalInfo inside it. A refused \
      notification is failed with the cause and changes nothing: answer Apple with a non-2xx status and it \
      sends it again (an unknown_product one too, once the product is in the config). A verified one is \
      recorded once by its notificationUUID and answered succeeded (answer Apple with 200); the same \
      notification again answers the same and changes nothing. Its transaction and renewal info are kept as \
      verifyAppStoreTransaction keeps them, the latest signed version winning, so that notifications arriving \
      twice or out of order end in the same state: an older item is recorded and overwrites nothing (effect \
      stale). SUBSCRIBED, DID_RENEW, OFFER_REDEEMED, RENEWAL_EXTENDED and ONE_TIME_CHARGE grant or extend; \
      DID_FAIL_TO_RENEW puts a subscription in billing retry, with access until gracePeriodExpiresDate when \
      it has a grace period; GRACE_PERIOD_EXPIRED and EXPIRED end access; DID_CHANGE_RENEWAL_STATUS and \
      DID_CHANGE_RENEWAL_PREF update the renewal; REFUND and REVOKE revoke (a refunded consumable's units \
      come off the balance); REFUND_REVERSED restores. CONSUMPTION_REQUEST, TEST and types payservice does \
      not know are recorded and acknowledged (effect none).
      """,
    errors: [.storeUnavailable, .idempotencyKeyConflict, .invalidParams], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  /// A notification with its nested items is a few tens of KiB.
  public static let maxPayloadBytes = 256 << 10

  public struct Params: Sendable {
    public var signedPayload = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "signedPayload", \.signedPayload, .required,
        .string("The signedPayload member of the notification's JSON body, as Apple sent it.", minLength: 1),
        read: { value, path, reader in
          guard let text = reader.string(value, path()) else { return nil }
          guard text.utf8.count <= maxPayloadBytes else {
            reader.fail(path(), "must be at most \(maxPayloadBytes) bytes, got \(text.utf8.count)")
            return nil
          }
          return text
        })
    ])

  /// What a notification says of itself: its id, type, environment, signing time and the
  /// transaction it is about. Written flat among the members of a notification's answer and of
  /// listAppStoreNotifications' items.
  public struct About: Equatable, Sendable {
    public var notificationUUID = ""
    public var notificationType = ""
    public var subtype: String?
    public var environment = ""
    public var signedDate = ""
    public var originalTransactionId: String?
    public var transactionId: String?

    static let shape = ObjectShape<About>(
      blank: { About() },
      [
        .member("notificationUUID", \.notificationUUID), .member("notificationType", \.notificationType),
        .member("subtype", \.subtype, .optional), .member("environment", \.environment),
        .member("signedDate", \.signedDate, .required, Shapes.timestamp),
        .member("originalTransactionId", \.originalTransactionId, .optional),
        .member("transactionId", \.transactionId, .optional),
      ])
  }

  /// A verified notification, recorded.
  public struct Recorded: Equatable, Sendable, WireObject {
    public var about = About()
    public var account: String?
    public var effect = AppStoreLedger.Effect.none
    public var recordedAt = ""

    public static let shape = ObjectShape<Recorded>(
      blank: { Recorded() },
      [.constant("status", "succeeded")] + About.shape.fields(at: \.about) + [
        .member("account", \.account, .optional, .string("The account the purchase belongs to.")),
        .member(
          "effect", \.effect, .required,
          .string(
            "What it changed, as verifyAppStoreTransaction's effect.",
            values: AppStoreLedger.Effect.allCases.map(\.rawValue))),
        .member("recordedAt", \.recordedAt, .required, Shapes.timestamp),
      ])
  }

  public typealias Result = Outcome<Recorded, AppStoreRefused>

  public static let operationKinds: [any Operation.Type] = [Recording.self]

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    guard let settings = context.config.appStore else { return .failed(.notConfigured) }
    switch verify(params.signedPayload, settings: settings, now: context.clock.now()) {
    case .failure(let refused): return .failed(refused)
    case .success(let notification): return try record(notification, context: context)
    }
  }

  /// A notification and its nested items, verified.
  struct Verified {
    var payload: AppStoreNotificationPayload
    var transaction: AppStoreTransaction?
    var renewal: AppStoreRenewal?
  }

  static func verify(_ signedPayload: String, settings: AppStoreSettings, now: Int64)
    -> Swift.Result<Verified, AppStoreRefused>
  {
    let verifier = settings.verifier
    var what = "signedPayload"
    do {
      let payload = try AppStoreNotificationPayload(payload: try verifier.verify(signedPayload, as: .notification, now: now))
      var verified = Verified(payload: payload)
      if let signed = payload.signedTransactionInfo {
        what = "signedPayload.data.signedTransactionInfo"
        verified.transaction = try AppStoreTransaction(payload: try verifier.verify(signed, as: .transaction, now: now))
      }
      if let signed = payload.signedRenewalInfo {
        what = "signedPayload.data.signedRenewalInfo"
        verified.renewal = try AppStoreRenewal(payload: try verifier.verify(signed, as: .renewalInfo, now: now))
      }
      // Every level names the same environment: a Sandbox item inside a Production notification is not Apple's.
      for (path, nested) in [
        ("signedTransactionInfo", verified.transaction?.environment), ("signedRenewalInfo", verified.renewal?.environment),
      ] {
        if let nested, nested != payload.environment {
          return .failure(
            AppStoreRefused(
              .wrongEnvironment,
              "signedPayload.data.\(path): signed in the \(nested) environment, inside a \(payload.environment) notification"))
        }
      }
      if let transaction = verified.transaction, let renewal = verified.renewal,
        transaction.originalTransactionId != renewal.originalTransactionId
      {
        return .failure(
          AppStoreRefused(.invalidFormat, "the transaction and renewal info are about different originalTransactionIds"))
      }
      return .success(verified)
    } catch let failure as AppStoreVerificationFailure {
      return .failure(.verification(failure, what))
    } catch let problem as AppStorePayloadProblem {
      return .failure(AppStoreRefused(.invalidFormat, problem.message))
    } catch {
      return .failure(AppStoreRefused(.invalidFormat, "\(what): \(error)"))
    }
  }

  /// Records a verified notification through the journal (also for notifications recovered from
  /// Apple's history).
  static func record(_ notification: Verified, context: ServiceContext) throws -> Result {
    do {
      return try OperationRunner.run(Recording(notification: notification), context: context)
    } catch let refusal as AppStoreLedger.Refusal {
      return .failed(AppStoreRefused(AppStoreFailureCode(refusal.code), refusal.message))
    }
  }

  /// How recording a notification went: newly recorded, heard before, or refused.
  enum Started {
    case recorded(Recorded)
    case known
    case failed(AppStoreRefused)
  }

  /// Records a verified notification, saying whether it was heard before (for recovery's counts).
  static func start(_ notification: Verified, context: ServiceContext) throws -> Started {
    do {
      switch try OperationRunner.start(Recording(notification: notification), context: context) {
      case .answered(.succeeded(let recorded)): return .recorded(recorded)
      case .recorded(.succeeded): return .known
      case .answered(.failed(let refused)), .recorded(.failed(let refused)): return .failed(refused)
      case .inFlight(let inFlight):
        // A local operation is never in flight; finish it as the runner would.
        switch try inFlight.finish() {
        case .succeeded(let recorded): return .recorded(recorded)
        case .failed(let refused): return .failed(refused)
        }
      }
    } catch let refusal as AppStoreLedger.Refusal {
      return .failed(AppStoreRefused(AppStoreFailureCode(refusal.code), refusal.message))
    }
  }

  public struct Recording: KeyLockedOperation {
    public static let kind = "appStoreNotification"
    let notification: Verified
    public var key: String { notification.payload.notificationUUID }
    public var subject: String? { nil }
    /// Apple sends a notification again unchanged; the same uuid with another type or time is not Apple's.
    public var fingerprint: String {
      let payload = notification.payload
      return "\(payload.notificationType) \(payload.subtype ?? "-") \(payload.signedDate)"
    }
    public var conflict: ServiceError { .idempotencyKeyConflict("signedPayload") }

    public func prepare(_ subject: Void, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64)
      throws -> Preparation<Result, NoCall>
    {
      guard let settings = context.config.appStore else { return .done(.failed(.notConfigured), final: false) }
      let payload = notification.payload
      var applied: AppStoreLedger.Applied?
      if notification.transaction != nil || notification.renewal != nil {
        // A refusal is thrown out of the transaction: nothing is kept, and Apple's next delivery is heard.
        applied = try AppStoreLedger.record(
          transaction: notification.transaction, renewal: notification.renewal, assign: nil, settings: settings,
          transaction, now: now)
      }
      let effect = applied?.effect ?? .none
      let row = AppStoreNotificationRow(
        notificationUUID: payload.notificationUUID, type: payload.notificationType, subtype: payload.subtype,
        signedDate: Int64(payload.signedDate), environment: payload.environment,
        originalTransactionId: applied?.originalTransactionId, transactionId: notification.transaction?.transactionId,
        effect: effect.rawValue, receivedAt: RFC3339.format(now))
      _ = try transaction.insert(row)
      let recorded = Recorded(about: About(row), account: applied?.account, effect: effect, recordedAt: row.receivedAt)
      return .done(.succeeded(recorded), final: true)
    }
  }
}

extension ProcessAppStoreNotification.About {
  /// As the store keeps it (`signedDate` in milliseconds there, to the second here).
  init(_ row: AppStoreNotificationRow) {
    self.init(
      notificationUUID: row.notificationUUID, notificationType: row.type, subtype: row.subtype,
      environment: row.environment, signedDate: RFC3339.format(row.signedDate / 1000),
      originalTransactionId: row.originalTransactionId, transactionId: row.transactionId)
  }
}
