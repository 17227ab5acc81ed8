/// An in-app purchase the app sends its server: verified as the App Store signed it, recorded once
/// by its transaction id, and applied to the account's entitlements. Public, like the app's own
/// calls: what it records is only what Apple signed.
public enum VerifyAppStoreTransaction: RPCMethod {
  public static let name = "verifyAppStoreTransaction"

  public static let documentation = MethodDocumentation(
    summary: "Verify an App Store transaction the app sends, record it once and answer the account's entitlements.",
    description: """
      Give the signed transaction StoreKit 2 hands the app (Transaction.jwsRepresentation), or the app receipt \
      of an app on original StoreKit (appReceipt, base64): its first in-app purchase's transaction id is \
      looked up with the App Store Server API (appStore.api), whose signed history is recorded as \
      syncAppStoreHistory records it (at most 10 pages); the receipt itself is not trusted, so outside the \
      back office a receipt needs appAccountToken and is answered only for a purchase Apple signed for that \
      account, and a process looks up at most 20 receipts a minute (then rate_limited). A transaction is verified as \
      the App Store signs: a compact JWS with alg ES256 and an x5c chain of three certificates ending at a \
      configured root (Apple Root CA - G3 unless appStore.rootCertificates names others), Apple's marker \
      extensions on the intermediate and leaf, validity at the item's own signedDate, the signature, then \
      bundleId and environment against appStore. A refused item is failed with the cause \
      (invalid_format, invalid_certificate, invalid_signature, wrong_bundle, wrong_environment, unknown_product, \
      wrong_account, units_spent, invalid_receipt, rate_limited, not_configured) and grants nothing. A verified one is recorded by its transactionId, the \
      latest signed version kept: a consumable credits its units once however often it is sent; a \
      non-consumable or subscription grants its entitlement (until expiresDate for a subscription); a \
      transaction with revocationDate revokes. A purchase belongs to the account Apple signed in it \
      (appAccountToken), else to the account named by its originalTransactionId. appAccountToken in the params \
      never moves a purchase outside the back office: there it is the account the caller expects, and a \
      purchase Apple's signed data puts elsewhere is failed wrong_account with nothing recorded. In the back \
      office (--back-office) it assigns the account of a purchase Apple signed none for, moving it from \
      another account (units_spent when that account spent more units than it would keep). A purchase under \
      its own originalTransactionId that is later given an account takes what was spent from it along. The answer is the transaction as recorded, \
      what it changed (effect) and the account's entitlements and balances at the service clock. The same \
      signed transaction again answers the same and changes nothing (it is recorded in the journal by its id \
      and signedDate); with another appAccountToken it is error -32004.
      """,
    errors: [.storeUnavailable, .idempotencyKeyConflict, .invalidParams], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  /// A signed item is a few KiB; a larger string is not one.
  public static let maxSignedBytes = 64 << 10

  public struct Params: Sendable {
    public var signedTransaction: String?
    public var appReceipt: String?
    public var appAccountToken: String?
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "signedTransaction", \.signedTransaction, .optional,
        .string("The transaction's JWS as StoreKit gives it (Transaction.jwsRepresentation).", minLength: 1),
        read: readSigned),
      .member(
        "appReceipt", \.appReceipt, .optional,
        .string(
          "Instead of signedTransaction: the app receipt original StoreKit gives (base64), or a legacy transaction receipt.",
          minLength: 1),
        read: { value, path, reader in
          guard let text = reader.string(value, path()) else { return nil }
          guard text.utf8.count <= AppReceipt.maximumBase64Length else {
            reader.fail(path(), "must be at most \(AppReceipt.maximumBase64Length) bytes, got \(text.utf8.count)")
            return nil
          }
          return text
        }),
      .member(
        "appAccountToken", \.appAccountToken, .optional,
        .string(
          "The account (a UUID) the purchase is expected under; in the back office, the account to assign a purchase Apple signed none for.",
          pattern: uuidPattern),
        read: readUUID),
    ])

  static let uuidPattern = "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"

  static let readSigned: MemberReader<String> = { value, path, reader in
    guard let text = reader.string(value, path()) else { return nil }
    guard text.utf8.count <= maxSignedBytes else {
      reader.fail(path(), "must be at most \(maxSignedBytes) bytes, got \(text.utf8.count)")
      return nil
    }
    return text
  }

  static let readUUID: MemberReader<String> = { value, path, reader in
    guard let text = reader.string(value, path()) else { return nil }
    guard AppStoreAccount.isUUID(text) else {
      reader.fail(path(), "must be a UUID like 7e3fb20b-4cdb-47cc-936d-99d65f608138")
      return nil
    }
    return text.lowercased()
  }

  public struct Verified: Equatable, Sendable, WireObject {
    public var transaction = AppStoreTransactionDocument()
    public var effect = AppStoreLedger.Effect.none
    public var entitlements = AccountEntitlements()

    public static let shape = ObjectShape<Verified>(
      blank: { Verified() },
      [
        .constant("status", "succeeded"), .member("transaction", \.transaction),
        .member(
          "effect", \.effect, .required,
          .string(
            """
            What recording it changed: credited (a consumable's units), debited (refunded units), granted, \
            extended, revoked, restored, updated, stale (older than what is kept) or none (known already).
            """, values: AppStoreLedger.Effect.allCases.map(\.rawValue))),
        .member("entitlements", \.entitlements),
      ])
  }

  public typealias Result = Outcome<Verified, AppStoreRefused>

  public static let operationKinds: [any Operation.Type] = [Recording.self]

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    guard (params.signedTransaction == nil) != (params.appReceipt == nil) else {
      throw ServiceError.invalidParams([
        FieldError(path: "", message: "give exactly one of signedTransaction (StoreKit 2) or appReceipt (original StoreKit)")
      ])
    }
    guard let settings = context.config.appStore else { return .failed(.notConfigured) }
    guard let signed = params.signedTransaction else {
      guard params.appAccountToken != nil || context.backOffice else {
        throw ServiceError.invalidParams([
          FieldError(
            path: "appAccountToken",
            message:
              "is required with appReceipt outside the back office: a receipt is not signed data, so it is answered only for a purchase Apple signed for the account named")
        ])
      }
      return try receipt(params.appReceipt ?? "", account: params.appAccountToken, settings: settings, context: context)
    }
    let item: AppStoreTransaction
    do {
      item = try AppStoreTransaction(payload: try settings.verifier.verify(signed, as: .transaction, now: context.clock.now()))
    } catch let failure as AppStoreVerificationFailure {
      return .failed(.verification(failure, "signedTransaction"))
    } catch let problem as AppStorePayloadProblem {
      return .failed(AppStoreRefused(.invalidFormat, problem.message))
    }
    return try record(item, account: params.appAccountToken, context: context)
  }

  /// An app receipt: its first in-app purchase's transaction id is looked up in the App Store
  /// Server API (the receipt itself is not trusted, only the signed history Apple answers), the
  /// customer's history recorded, and that transaction answered. Outside the back office, lookups
  /// are rate-limited per process (each costs the merchant's quota at Apple).
  static func receipt(_ receipt: String, account: String?, settings: AppStoreSettings, context: ServiceContext)
    throws -> Result
  {
    let transactionId: String
    do {
      if let found = try AppReceipt.transactionId(fromAppReceipt: receipt) {
        transactionId = found
      } else {
        return .failed(AppStoreRefused(.invalidReceipt, "appReceipt: the receipt holds no in-app purchase"))
      }
    } catch let appFailure {
      do {
        transactionId = try AppReceipt.transactionId(fromTransactionReceipt: receipt)
      } catch {
        return .failed(AppStoreRefused(.invalidReceipt, "appReceipt: \(appFailure.message)"))
      }
    }
    guard let calls = context.appStoreServer else { return .failed(.noAPI) }
    if !context.backOffice, let wait = calls.receiptLookups.take(now: context.clock.now()) {
      return .failed(
        AppStoreRefused(
          .rateLimited,
          "appReceipt: this process looked up \(ReceiptLookupLimit.perMinute) receipts in the last minute, its limit; try again in \(wait) s"))
    }
    switch try AppStoreHistory.sync(
      transactionId: transactionId, environment: nil, bound: context.backOffice ? .backOffice : .receipt, calls: calls,
      settings: settings, account: account, context: context)
    {
    case .failure(let refused):
      return .failed(refused)
    case .success(let synced):
      guard let named = synced.recorded.last(where: { $0.transactionId == transactionId }) else {
        let bounded = synced.resumeAt == nil ? "" : " (its first \(synced.pages) pages, the most one lookup fetches)"
        return .failed(
          AppStoreRefused(.notFound, "appReceipt: transaction \(transactionId) is not in the history Apple answered\(bounded)"))
      }
      guard case .succeeded(var verified) = named.result else { return named.result }
      // The account as the whole history left it.
      let now = context.clock.now()
      verified.entitlements = try context.store.write { transaction in
        try AccountEntitlements.read(account: verified.entitlements.account, settings: settings, transaction, now: now)
      }
      return .succeeded(verified)
    }
  }

  /// Records a verified transaction through the journal (also for history fetched from Apple):
  /// `account` is assigned in the back office, and only expected elsewhere.
  static func record(_ item: AppStoreTransaction, account: String?, context: ServiceContext) throws -> Result {
    do {
      return try OperationRunner.run(Recording(item: item, account: account), context: context)
    } catch let refusal as AppStoreLedger.Refusal {
      return .failed(AppStoreRefused(AppStoreFailureCode(refusal.code), refusal.message))
    }
  }

  /// A verified transaction version as an operation of the journal (kind `appStoreTransaction`,
  /// keyed by its transactionId and signedDate): the same version again answers as the first time.
  public struct Recording: KeyLockedOperation {
    public static let kind = "appStoreTransaction"
    let item: AppStoreTransaction
    /// The account the params name: assigned in the back office, expected elsewhere.
    let account: String?
    public var key: String { "\(item.transactionId)@\(item.signedDate)" }
    public var subject: String? { nil }
    public var fingerprint: String { account ?? "" }
    public var conflict: ServiceError { .idempotencyKeyConflict("appAccountToken") }

    public func prepare(_ subject: Void, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64)
      throws -> Preparation<Result, NoCall>
    {
      guard let settings = context.config.appStore else { return .done(.failed(.notConfigured), final: false) }
      // A refusal is thrown out of the transaction: nothing of it is kept, and the key stays unused.
      let applied = try AppStoreLedger.record(
        transaction: item, renewal: nil, assign: context.backOffice ? account : nil, settings: settings, transaction,
        now: now)
      if let account, applied.account != account {
        // Which account it is under is not said: the caller named another.
        throw AppStoreLedger.Refusal(
          code: .wrongAccount,
          message:
            "purchase \(applied.originalTransactionId) is not signed for account \(account), and only the back office assigns accounts: nothing was recorded")
      }
      let kept = applied.transaction ?? item
      guard let product = settings.products[kept.productId] ?? settings.products[item.productId] else {
        throw AppStoreLedger.Refusal(code: .unknownProduct, message: "product \(kept.productId) is not in appStore.products")
      }
      return .done(
        .succeeded(
          Verified(
            transaction: AppStoreTransactionDocument(kept, product: product), effect: applied.effect,
            entitlements: try AccountEntitlements.read(
              account: applied.account, settings: settings, transaction, now: now))),
        final: true)
    }
  }
}
