/// What payservice fetches from the App Store Server API, applied through the same journal and
/// ledger as what the app and Apple's notifications send, so that a fetch repeated, or overlapping
/// what was heard already, changes nothing twice. Each page is fetched with no transaction open;
/// each item is then recorded in a transaction of its own.
enum AppStoreHistory {
  /// What fetching a customer's transaction history did.
  struct Synced {
    var environment = AppStoreAPIEnvironment.production
    var pages = 0
    /// Each transaction fetched, with what recording it answered, oldest first.
    var recorded: [(transactionId: String?, result: VerifyAppStoreTransaction.Result)] = []
    /// Where the next page starts, when the call stopped at its bound with more to fetch.
    var resumeAt: String?
  }

  /// How much of a history one call fetches before it stops and says where to go on: every call to
  /// Apple spends the merchant's quota, and an API that keeps answering `hasMore` must not keep
  /// one request going.
  struct Bound {
    var pages: Int
    var seconds: Int

    /// A back-office sync: 50 pages (1,000 transactions) or 60 s, then resumed by `revision`.
    static let backOffice = Bound(pages: 50, seconds: 60)
    /// An unverified receipt's lookup: 10 pages or 15 s.
    static let receipt = Bound(pages: 10, seconds: 15)
  }

  /// The environments to look a transaction up in, in Apple's recommended order (Production, then
  /// Sandbox on a 404), among those the config accepts.
  static func environments(_ settings: AppStoreSettings) -> [AppStoreAPIEnvironment] {
    AppStoreAPIEnvironment.allCases.filter { settings.environments.contains($0.rawValue) }
  }

  /// Fetches the pages of the history of `transactionId`'s customer (by `revision`, from `from`),
  /// at most `bound` of them, and records each transaction (under the account Apple's signed data
  /// or the back office's `assign` names, never a caller's claim: `VerifyAppStoreTransaction.record`),
  /// in the first accepted environment that knows it.
  static func sync(
    transactionId: String, environment: AppStoreAPIEnvironment?, from: String? = nil, bound: Bound,
    calls: AppStoreServerCalls, settings: AppStoreSettings, account: String?, context: ServiceContext
  ) throws -> Swift.Result<Synced, AppStoreRefused> {
    let candidates = environment.map { [$0] } ?? environments(settings)
    guard !candidates.isEmpty else {
      return .failure(
        AppStoreRefused(.wrongEnvironment, "appStore.environments accepts neither Production nor Sandbox: there is no history to fetch"))
    }
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: .seconds(bound.seconds))
    environments: for (index, candidate) in candidates.enumerated() {
      var synced = Synced(environment: candidate)
      var revision = from
      while true {
        let page: AppStoreHistoryPage
        switch calls.transactionHistory(transactionId: transactionId, revision: revision, environment: candidate) {
        case .success(let fetched):
          page = fetched
        case .failure(.notFound) where synced.pages == 0 && index + 1 < candidates.count:
          // Not in this environment: Apple's advice is to try the next (Sandbox after Production).
          continue environments
        case .failure(let failure):
          return .failure(AppStoreRefused(failure, "the transaction history of \(transactionId) (\(candidate.rawValue))"))
        }
        synced.pages += 1
        for signed in page.signedTransactions {
          synced.recorded.append(try record(signed, settings: settings, account: account, context: context))
        }
        guard page.hasMore, let next = page.revision, next != revision else { return .success(synced) }
        guard synced.pages < bound.pages, clock.now < deadline else {
          synced.resumeAt = next
          return .success(synced)
        }
        revision = next
      }
    }
    return .failure(AppStoreRefused(.notFound, "transaction \(transactionId) is in no accepted environment"))
  }

  /// Verifies and records one signed transaction fetched from Apple.
  static func record(_ signed: String, settings: AppStoreSettings, account: String?, context: ServiceContext)
    throws -> (transactionId: String?, result: VerifyAppStoreTransaction.Result)
  {
    do {
      let item = try AppStoreTransaction(payload: try settings.verifier.verify(signed, as: .transaction, now: context.clock.now()))
      return (item.transactionId, try VerifyAppStoreTransaction.record(item, account: account, context: context))
    } catch let failure as AppStoreVerificationFailure {
      return (nil, .failed(.verification(failure, "a signed transaction of the history")))
    } catch let problem as AppStorePayloadProblem {
      return (nil, .failed(AppStoreRefused(.invalidFormat, problem.message)))
    }
  }
}
