import ArgumentParser
import Foundation
import PayServiceAdyen
import PayServiceAppStore
import PayServiceApplePay
import PayServiceCore
import PayServicePostgres
import PayServiceStripe
import PayServiceWallet

/// What every command's start opens and checks: the store, the remote services the config names,
/// and what `serve` would refuse to start with.
extension ServeSettings {
  /// What a start with `config` at `now`, in this environment, checks beyond the config itself:
  /// problems stop it (exit 2), warnings are logged. `check-config` reports the same, so that it
  /// says "valid" only when `serve` would start.
  static func startChecks(for config: Config, now: Int64) -> (problems: [String], warnings: [String]) {
    var problems: [String] = []
    var warnings: [String] = []
    let environment = ProcessInfo.processInfo.environment
    if let stripe = config.gateway.stripe, case .failure(let problem) = stripe.secretKey(environment: environment) {
      problems.append("\(problem)")
    }
    if let adyen = config.gateway.adyen {
      if case .failure(let problem) = adyen.apiKey(environment: environment) { problems.append("\(problem)") }
      switch adyen.hmacKeys(environment: environment) {
      case .success: break
      case .failure(.hmacKeyNotSet(let variable)):
        warnings.append(
          "\(variable) is not set: processAdyenNotification answers not_configured, and what Adyen settles later (captures, cancels, refunds, payments it is still processing) stays pending")
      case .failure(let problem): problems.append("\(problem)")
      }
    }
    func check(
      _ validity: MerchantIdentity.Validity, _ subject: String, notValidAfter: Int64, failing what: String
    ) {
      switch validity {
      case .valid: break
      case .expiresSoon(let days):
        warnings.append(
          "\(subject) expires in \(days) days (\(RFC3339.format(notValidAfter))): renew it in the Apple developer account")
      case .expired(let since):
        problems.append("\(subject): expired at \(since); \(what) would fail. Renew it in the Apple developer account")
      case .notYetValid(let until):
        problems.append("\(subject): not valid before \(until); check the clock or use the current certificate")
      }
    }
    if let settings = config.merchantSession {
      check(
        settings.identity.validity(at: now), "applePay.merchantIdentityCertificate",
        notValidAfter: settings.identity.notValidAfter, failing: "merchant sessions")
    }
    if let signer = config.walletOrders?.package?.signer {
      check(
        signer.validity(at: now), "walletOrders.certificate", notValidAfter: signer.notValidAfter,
        failing: "Wallet's order packages")
    }
    return (problems, warnings)
  }

  /// The remote gateway the config names (nil for the sandbox), with its secret key from the
  /// environment (`startChecks` made sure there is one that fits `gateway.mode`).
  static func gateway(for config: Config, clock: ServiceClock) -> GatewayCalls? {
    if let adyen = config.gateway.adyen {
      let environment = ProcessInfo.processInfo.environment
      switch adyen.apiKey(environment: environment) {
      case .failure(let problem): fail("\(problem)")
      case .success(let key):
        // A key that does not read stopped the start (`startChecks`); none set leaves notifications unverifiable.
        let keys = (try? adyen.hmacKeys(environment: environment).get()) ?? []
        return GatewayCalls(
          gateway: AdyenGateway(settings: adyen, apiKey: key, clock: { clock.now() }),
          maxConcurrent: adyen.maxConcurrentCalls, notificationKeys: keys)
      }
    }
    guard let stripe = config.gateway.stripe else { return nil }
    switch stripe.secretKey(environment: ProcessInfo.processInfo.environment) {
    case .failure(let problem): fail("\(problem)")
    case .success(let key):
      let webhookSecrets = StripeWebhookSignature.secrets(
        in: ProcessInfo.processInfo.environment[stripe.webhookSecretVariable] ?? "")
      return GatewayCalls(
        gateway: StripeGateway(settings: stripe, secretKey: key), maxConcurrent: stripe.maxConcurrentCalls,
        webhookSecrets: webhookSecrets)
    }
  }

  /// The merchant session client for the config's merchant identity (nil without one; its
  /// certificate's dates are `startChecks`').
  static func merchantSessions(for config: Config) -> MerchantSessionCalls? {
    guard let settings = config.merchantSession else { return nil }
    let subject = "applePay.merchantIdentityCertificate"
    do {
      let client = try AppleMerchantSessionClient(
        identity: settings.identity, trustRootsPEM: settings.trustRootsPEM,
        connectTimeoutSeconds: settings.connectTimeoutSeconds, requestTimeoutSeconds: settings.requestTimeoutSeconds)
      return MerchantSessionCalls(client: client)
    } catch {
      fail("\(subject): cannot be used for TLS with merchantIdentityKey: \(error)")
    }
  }

  /// The App Store Server API client for the config's in-app purchase key (nil without
  /// `appStore.api`). A client that cannot be made (trust roots that do not read, say; the key was
  /// checked with the config) stops the start (exit 2); the message never holds the key.
  static func appStoreServer(for config: Config) -> AppStoreServerCalls? {
    guard let settings = config.appStore?.api else { return nil }
    do {
      return AppStoreServerCalls(api: try AppStoreServerClient(settings: settings))
    } catch {
      fail("appStore.api: \(error)")
    }
  }

  /// The client of Apple's Merchant Token Management API (nil without `applePay.merchantTokens`),
  /// with the merchant identity certificate. A client that cannot be made stops the start (exit 2).
  static func merchantTokens(for config: Config) -> MerchantTokenCalls? {
    guard let settings = config.merchantTokens else { return nil }
    do {
      return MerchantTokenCalls(service: try AppleMerchantTokenClient(settings: settings))
    } catch {
      fail("applePay.merchantTokens: \(error)")
    }
  }

  /// The APNs client for Wallet order pushes (nil without `walletOrders.apns`). A client that
  /// cannot be made stops the start (exit 2); the message never holds the key. Provider tokens are
  /// made with the real clock, whatever `--now` pins: APNs checks them against its own.
  static func walletPushes(for config: Config) -> WalletPushCalls? {
    guard let settings = config.walletOrders?.apns else { return nil }
    do {
      return WalletPushCalls(service: try APNsClient(settings: settings))
    } catch {
      fail("walletOrders.apns: \(error)")
    }
  }

  /// Opens the store at `location`. A store this creates gets the identifier key
  /// `PAYSERVICE_ID_KEY` pins, else with the clock pinned (`--now`: transcripts and tests, never a
  /// shop) the published transcript key, so that a session on a new store repeats byte for byte,
  /// else a random one (the store's default, made only when it creates the store).
  static func open(_ location: StoreLocation, now: String?) throws(StoreError) -> any Store {
    let transcript = now != nil && (IdentifierKey.pinInEnvironment ?? "").isEmpty
    let key: IdentifierKey? = transcript ? .transcript : nil
    switch location {
    case .sqlite(let path): return try SQLiteStore(path: path, newIdentifierKey: key)
    case .postgres(let url): return try PostgresStore(url: url, newIdentifierKey: key)
    }
  }

  /// Where `--database` points; a malformed PostgreSQL URL stops the start (exit 2).
  static func location(_ database: String) -> StoreLocation {
    do {
      return try StoreLocation.parse(database)
    } catch {
      fail("invalid PostgreSQL URL for --database: \(error)")
    }
  }

  /// Opens the store `--database` names, or stops the start (exit 2) with the reason.
  static func openStore(_ database: String, now: String?) -> any Store {
    do throws(StoreError) {
      return try open(location(database), now: now)
    } catch {
      fail("\(error)")
    }
  }

  /// A start that cannot go on (invalid config, store that cannot be opened): exit 2 with the reason.
  static func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("payservice: \(message)\n".utf8))
    Foundation.exit(2)
  }
}

/// The remote services a config names, each client made as a start makes it (nil where the config
/// names none): what a process's context calls, and closes when it ends.
struct RemoteClients {
  let gateway: GatewayCalls?
  let sessions: MerchantSessionCalls?
  let appStore: AppStoreServerCalls?
  let pushes: WalletPushCalls?
  let tokens: MerchantTokenCalls?

  init(for config: Config, clock: ServiceClock) {
    gateway = ServeSettings.gateway(for: config, clock: clock)
    sessions = ServeSettings.merchantSessions(for: config)
    appStore = ServeSettings.appStoreServer(for: config)
    pushes = ServeSettings.walletPushes(for: config)
    tokens = ServeSettings.merchantTokens(for: config)
  }

  /// Whether a previous process may have left work of these services pending in the journal: the
  /// start then sweeps it.
  var mayHavePendingWork: Bool { gateway != nil || pushes != nil || tokens != nil }

  func context(
    config: Config, storeSource: StoreSource, clock: ServiceClock, reloader: ConfigReloader? = nil, backOffice: Bool
  ) -> ServiceContext {
    ServiceContext(
      config: config, storeSource: storeSource, clock: clock, gateway: gateway, merchantSessions: sessions,
      appStoreServer: appStore, walletPushes: pushes, merchantTokens: tokens, reloader: reloader, backOffice: backOffice)
  }

  func shutdown() {
    gateway?.shutdown()
    sessions?.shutdown()
    appStore?.shutdown()
    pushes?.shutdown()
    tokens?.shutdown()
  }
}
