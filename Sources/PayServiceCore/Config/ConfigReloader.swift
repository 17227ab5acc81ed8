import Synchronization

/// Loads a process's config again (SIGHUP, or the back office's `reloadConfig`) and hands the
/// server the new `ServiceContext` to swap in between requests: every request is answered under one
/// config, and the next one after a reload under the new one.
///
/// A config with errors, one that `serve` would not start with (`startChecks`), or one that changes
/// what the process built its connections from at start (the gateway's kind and Stripe settings, the
/// merchant identity certificate) is refused, and the old config stays. Products new to the store
/// get their seed stock when the reload is accepted.
public final class ConfigReloader: Sendable {
  /// The config file, as the process was given it.
  public let path: String
  private let startChecks: @Sendable (Config) -> [String]
  private let pending = Mutex<ServiceContext?>(nil)
  private let reports = Mutex<[Report]>([])
  /// Set with each report: the server looks here between requests (one atomic load) before it
  /// takes the locks.
  private let news = Atomic<Bool>(false)

  /// Whether a reload was reported since the last `takeReports`.
  public var hasNews: Bool { news.load(ordering: .acquiring) }

  /// What became of a reload, for the process's log.
  public enum Report: Equatable, Sendable {
    case tookEffect(path: String, digest: String)
    case refused(path: String, problems: [String], keeping: String)

    /// Whether the lines are warnings (a refused reload) rather than notices.
    public var isWarning: Bool {
      if case .refused = self { return true }
      return false
    }

    /// The log lines: one, then one per problem of a refused reload.
    public var lines: [String] {
      switch self {
      case .tookEffect(let path, let digest): return ["config \(path) (\(digest)) took effect"]
      case .refused(let path, let problems, let keeping):
        return ["config \(path) not reloaded (\(problems.count) problem\(problems.count == 1 ? "" : "s")); \(keeping) stays in effect"]
          + problems
      }
    }
  }

  /// - Parameter startChecks: what a start with the config would refuse in this environment (a
  ///   Stripe key missing, an expired certificate), as problems.
  public init(path: String, startChecks: @escaping @Sendable (Config) -> [String] = { _ in [] }) {
    self.path = path
    self.startChecks = startChecks
  }

  /// Loads and checks the config file again. Accepted, the new context waits for `takePending`
  /// and the config is returned; refused, the problems are returned, each with its place.
  public func reload(from current: ServiceContext) -> Swift.Result<Config, ConfigError> {
    let outcome = load(current)
    switch outcome {
    case .success(let config):
      report(.tookEffect(path: path, digest: config.digest))
    case .failure(let error):
      report(.refused(path: path, problems: error.problems.map(\.description), keeping: current.config.digest))
    }
    return outcome
  }

  private func load(_ current: ServiceContext) -> Swift.Result<Config, ConfigError> {
    let config: Config
    do {
      config = try ConfigLoader.load(path: path)
    } catch {
      return .failure(error)
    }
    var problems = startChecks(config).map { ConfigError.Problem(file: path, line: nil, column: nil, path: "", message: $0) }
    for section in Self.restartOnlyChanges(from: current.config, to: config) {
      problems.append(
        ConfigError.Problem(
          file: path, line: nil, column: nil, path: section,
          message: "changed; this process made its connections from the old value at start, so restart it to change this"))
    }
    guard problems.isEmpty else { return .failure(ConfigError(problems: problems)) }
    do {
      try current.store.seedStock(config.catalog)
    } catch {
      return .failure(
        ConfigError(problems: [.init(file: path, line: nil, column: nil, path: "", message: "the store: \(error)")]))
    }
    let next = ServiceContext(
      config: config, storeSource: current.storeSource, clock: current.clock, gateway: current.gatewayCalls,
      merchantSessions: current.merchantSessions, appStoreServer: current.appStoreServer,
      walletPushes: current.walletPushes, merchantTokens: current.merchantTokens, recordedCalls: current.recordedCalls,
      reloader: self, backOffice: current.backOffice)
    pending.withLock { $0 = next }
    return .success(config)
  }

  /// The sections whose change needs a restart: what the gateway, merchant session and App Store
  /// Server API clients were built from.
  static func restartOnlyChanges(from old: Config, to new: Config) -> [String] {
    var sections: [String] = []
    if old.gateway.kind != new.gateway.kind || old.gateway.stripe != new.gateway.stripe || old.gateway.adyen != new.gateway.adyen {
      sections.append("gateway")
    }
    if old.merchantSession?.identity.certificate != new.merchantSession?.identity.certificate
      || old.merchantSession?.trustRootsPEM != new.merchantSession?.trustRootsPEM
    {
      sections.append("applePay.merchantIdentityCertificate")
    }
    if old.merchantTokens?.apiBase != new.merchantTokens?.apiBase
      || old.merchantTokens?.trustRootsPEM != new.merchantTokens?.trustRootsPEM
    {
      sections.append("applePay.merchantTokens")
    }
    if old.appStore?.api != new.appStore?.api { sections.append("appStore.api") }
    return sections
  }

  /// The context of the last accepted reload, once: the server swaps it in before the next request.
  public func takePending() -> ServiceContext? {
    pending.withLock { pending in
      defer { pending = nil }
      return pending
    }
  }

  private func report(_ report: Report) {
    reports.withLock { $0.append(report) }
    news.store(true, ordering: .releasing)
  }

  /// What reloads came to since the last call, oldest first, for the log.
  public func takeReports() -> [Report] {
    news.store(false, ordering: .releasing)
    return reports.withLock { reports in
      defer { reports.removeAll() }
      return reports
    }
  }
}
