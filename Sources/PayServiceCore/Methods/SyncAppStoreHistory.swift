/// Fetches a customer's whole transaction history from the App Store Server API and applies it:
/// what a missed notification or an app that never sent its purchase left out. Back office only
/// (`--back-office`).
public enum SyncAppStoreHistory: RPCMethod {
  public static let name = "syncAppStoreHistory"

  public static let documentation = MethodDocumentation(
    summary: "Fetch a customer's App Store transaction history and apply what payservice missed.",
    description: """
      Asks the App Store Server API (Get Transaction History v2, page by page by revision, oldest first) for the \
      history of the customer of transactionId, in Production and then, if Apple knows it not there, in \
      Sandbox (or in the environment given), each request signed with appStore.api's in-app purchase key. \
      Each signed transaction is verified and recorded as verifyAppStoreTransaction records it, so a \
      transaction known already changes nothing and an older version overwrites nothing. Pages are fetched \
      with no store transaction open. Answers each transaction's effect, those refused, and the account's \
      entitlements, and how many had each effect. One call fetches at most limit pages (default and most \
      50: 1,000 transactions) or 60 s of them: when Apple has more, the answer says revision, and the same request with that revision goes on from there. 429 and 5xx answers are retried after Retry-After (appStore.api.maxRetries); a failure \
      (unauthorized, not_found, invalid_request, unavailable, invalid_response, not_configured) keeps what \
      earlier pages applied, and the same request again continues.
      """,
    errors: [.storeUnavailable, .invalidParams], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  public struct Params: Sendable {
    public var transactionId = ""
    public var environment: String?
    public var revision: String?
    public var limit = AppStoreHistory.Bound.backOffice.pages
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "transactionId", \.transactionId, .required,
        .string("Any transaction of the customer (an originalTransactionId or a transactionId).", pattern: "^[\\x21-\\x7E]{1,64}$"),
        read: GetEntitlements.readTransactionId),
      .member(
        "environment", \.environment, .optional,
        .string("Production or Sandbox; default: Production, then Sandbox when Apple knows it not there.", values: AppStoreAPIEnvironment.allCases.map(\.rawValue)),
        read: { value, path, reader in
          guard let text = reader.string(value, path()) else { return nil }
          guard AppStoreAPIEnvironment(rawValue: text) != nil else {
            reader.fail(path(), "must be Production or Sandbox, got \"\(text)\"")
            return nil
          }
          return text
        }),
      .member(
        "revision", \.revision, .optional,
        .string("Where to go on: the revision an earlier answer stopped at.", minLength: 1, maxLength: 1024),
        read: { value, path, reader in
          guard let text = reader.string(value, path()) else { return nil }
          guard text.utf8.count <= 1024 else {
            reader.fail(path(), "must be at most 1024 bytes, got \(text.utf8.count)")
            return nil
          }
          return text
        }),
      .member(
        "limit", \.limit, .optional,
        .integer(
          "The most pages of the history this call fetches (Apple's pages hold up to 20 transactions), 1 to 50; default 50.",
          minimum: 1, maximum: AppStoreHistory.Bound.backOffice.pages),
        read: { value, path, reader in reader.integer(value, path(), range: 1...AppStoreHistory.Bound.backOffice.pages) }),
    ])

  /// One transaction fetched and what recording it did.
  public struct Applied: Equatable, Sendable, WireObject {
    public var transactionId = ""
    public var effect = AppStoreLedger.Effect.none

    public static let shape = ObjectShape<Applied>(
      blank: { Applied() }, [.member("transactionId", \.transactionId), .member("effect", \.effect)])
  }

  public struct Synced: Equatable, Sendable, WireObject {
    public var environment = ""
    public var pages = 0
    /// Where the next call goes on, when this one stopped at its bound with more to fetch.
    public var revision: String?
    public var applied: [Applied] = []
    public var refused: [AppStoreRefused] = []
    public var effects: [EffectCount<AppStoreLedger.Effect>] = []
    public var entitlements: AccountEntitlements?

    public static let shape = ObjectShape<Synced>(
      blank: { Synced() },
      [
        .constant("status", "succeeded"), .member("environment", \.environment), .member("pages", \.pages),
        .member(
          "revision", \.revision, .optional,
          .string("Present when Apple has more than this call fetched: send it as revision, with this environment, to go on.")),
        .member("applied", \.applied), .member("refused", \.refused),
        .member(
          "effects", \.effects, .required,
          .array(
            EffectCount<AppStoreLedger.Effect>.schema,
            "How many of the transactions applied had each effect, in the order of the effects.")),
        .member(
          "entitlements", \.entitlements, .optional,
          AccountEntitlements.schema),
      ])
  }

  public typealias Result = Outcome<Synced, AppStoreRefused>

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    if params.revision != nil, params.environment == nil {
      throw ServiceError.invalidParams([
        FieldError(path: "environment", message: "is required with revision: the environment the earlier answer named")
      ])
    }
    guard let settings = context.config.appStore else { return .failed(.notConfigured) }
    guard let calls = context.appStoreServer else { return .failed(.noAPI) }
    switch try AppStoreHistory.sync(
      transactionId: params.transactionId, environment: params.environment.flatMap(AppStoreAPIEnvironment.init),
      from: params.revision, bound: AppStoreHistory.Bound(pages: params.limit, seconds: AppStoreHistory.Bound.backOffice.seconds),
      calls: calls, settings: settings, account: nil, context: context)
    {
    case .failure(let refused): return .failed(refused)
    case .success(let synced): return .succeeded(try answer(synced, context: context))
    }
  }

  static func answer(_ synced: AppStoreHistory.Synced, context: ServiceContext) throws -> Synced {
    var answer = Synced(environment: synced.environment.rawValue, pages: synced.pages, revision: synced.resumeAt)
    for (transactionId, result) in synced.recorded {
      switch result {
      case .succeeded(let verified):
        answer.applied.append(Applied(transactionId: transactionId ?? "", effect: verified.effect))
        answer.entitlements = verified.entitlements
      case .failed(let refused):
        answer.refused.append(refused)
      }
    }
    answer.effects = EffectCount.counts(answer.applied.map(\.effect))
    if let account = answer.entitlements?.account, let settings = context.config.appStore {
      // The account as it stands after the whole history, not after the transaction that named it.
      let now = context.clock.now()
      answer.entitlements = try context.store.write { transaction in
        try AccountEntitlements.read(account: account, settings: settings, transaction, now: now)
      }
    }
    return answer
  }
}
