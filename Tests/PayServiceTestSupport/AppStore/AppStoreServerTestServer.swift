import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import PayServiceCore

/// A local stand-in for the App Store Server API, HTTP/1.1 over TLS on 127.0.0.1: one listener
/// for production and one for sandbox, so that the real client reaches each environment at its
/// own base URL as it would api.storekit.itunes.apple.com and api.storekit-sandbox.itunes.apple.com.
/// It serves what tests register and moves no money.
///
/// - Every request's bearer token is checked as Apple documents (ES256 with the configured
///   public key, `kid`, `iss`, `aud` "appstoreconnect-v1", `bid`, `iat`/`exp` with `exp` in the
///   future and at most an hour after `iat`); a missing or bad token is answered 401 with no body.
/// - `GET /inApps/v2/history/{transactionId}`: the transactions registered with the same
///   `originalTransactionId` as `transactionId`, in the order registered (`sort=DESCENDING`
///   reverses it), `historyPageSize` a page, with an opaque `revision` for the next page (the last
///   page has one too, for transactions registered later); an unknown id is 404 with
///   `{"errorCode":4040010,"errorMessage":"Transaction id not found."}`.
/// - `POST /inApps/v1/notifications/history`: the notifications registered with `signedDate` in
///   `[startDate, endDate]` (only those not delivered when `onlyFailures`), oldest first,
///   `notificationPageSize` a page, with an opaque `paginationToken` while there are more.
/// - Faults are queued (`inject`) for the next requests, of an environment or a path if asked;
///   every request is recorded with whether its token was valid.
///
/// See `AppStoreServerCore` for the error codes and Apple's references.
public final class AppStoreServerTestServer: Sendable {
  /// A failure for a queued number of requests, whatever they ask and whatever their token.
  public enum Fault: Sendable, Equatable {
    /// 401 with no body, as for a refused token.
    case unauthorized
    /// 404 with `TransactionIdNotFoundError` (4040010).
    case notFound
    /// 429 with `RateLimitExceededError` (4290000) and `Retry-After: seconds` when given.
    case rateLimited(retryAfter: Int?)
    /// 500 with `GeneralInternalError` (5000000).
    case internalServerError
    /// 503 with `GeneralInternalRetryableError` (5000001).
    case serviceUnavailable
    /// Never answers; the connection stays open until the client gives up (or the server shuts down).
    case hang
    /// 200 with an HTML page, as a misrouted proxy would send.
    case notJSON
  }

  /// A request as received.
  public struct RecordedRequest: Sendable, Equatable {
    public var environment: AppStoreAPIEnvironment
    public var method: String
    /// The path as sent (percent-encoded).
    public var path: String
    /// The query as sent (percent-encoded), "" when none.
    public var query: String
    /// The token of the `Authorization: Bearer …` header.
    public var bearerToken: String?
    public var tokenValid: Bool
    /// Why the token was refused.
    public var tokenProblem: String?
    public var body: String
    /// The status answered; 0 when none was (a hang).
    public var status: Int
  }

  public let keyId: String
  public let issuerId: String
  public let bundleId: String
  /// The CA (PEM) that issued the listeners' certificate: what the client must trust.
  public let caPEM: String
  public let productionPort: Int
  public let sandboxPort: Int
  /// "https://localhost:PORT" of each environment.
  public var productionURL: String { "https://localhost:\(productionPort)" }
  public var sandboxURL: String { "https://localhost:\(sandboxPort)" }

  let core: AppStoreServerCore
  let production: TestHTTPSListener
  let sandbox: TestHTTPSListener

  /// Starts both listeners on 127.0.0.1 at ephemeral ports, each on its own one-thread event loop
  /// group.
  /// - Parameters:
  ///   - publicKey: the in-app purchase key's public half, which verifies the tokens.
  ///   - keyId, issuerId, bundleId: what the tokens' `kid`, `iss` and `bid` must be.
  ///   - now: the clock (unix seconds) the tokens' `exp` is checked against.
  public init(
    publicKey: P256.Signing.PublicKey, keyId: String, issuerId: String, bundleId: String, appAppleId: Int64 = 1_234_567_890,
    historyPageSize: Int = 20, notificationPageSize: Int = 20,
    now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
  ) throws {
    self.keyId = keyId
    self.issuerId = issuerId
    self.bundleId = bundleId
    let core = AppStoreServerCore(
      publicKey: publicKey, keyId: keyId, issuerId: issuerId, bundleId: bundleId, appAppleId: appAppleId,
      historyPageSize: historyPageSize, notificationPageSize: notificationPageSize, now: now)
    self.core = core
    let tls = try TestTLSCertificate(caName: "payservice App Store Server API test CA")
    caPEM = tls.caPEM
    func listener(_ environment: AppStoreAPIEnvironment) throws -> TestHTTPSListener {
      try TestHTTPSListener(tls: try tls.serverContext(), backlog: 64) { operations, _ in
        try operations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: true)
        try operations.addHandler(AppStoreServerHTTPHandler(core: core, environment: environment))
      }
    }
    let production = try listener(.production)
    let sandbox: TestHTTPSListener
    do {
      sandbox = try listener(.sandbox)
    } catch {
      production.shutdown()
      throw error
    }
    self.production = production
    self.sandbox = sandbox
    productionPort = production.port
    sandboxPort = sandbox.port
  }

  deinit { shutdown() }

  /// Settings that reach this server with `keyPEM`: its ids, both URLs, its CA as the only trust
  /// root, and the timeouts and retries given.
  public func settings(
    keyPEM: String, connectTimeoutSeconds: Double = 2, requestTimeoutSeconds: Double = 5, maxRetries: Int = 3,
    maxRetryDelaySeconds: Double = 2
  ) -> AppStoreAPISettings {
    var settings = AppStoreAPISettings(keyPEM: keyPEM, keyId: keyId, issuerId: issuerId, bundleId: bundleId)
    settings.productionURL = productionURL
    settings.sandboxURL = sandboxURL
    settings.trustRootsPEM = caPEM
    settings.connectTimeoutSeconds = connectTimeoutSeconds
    settings.requestTimeoutSeconds = requestTimeoutSeconds
    settings.maxRetries = maxRetries
    settings.maxRetryDelaySeconds = maxRetryDelaySeconds
    return settings
  }

  /// Registers signed transactions (JWS) in `environment`, after those registered before: their
  /// order is the history's ascending order.
  public func addTransactions(
    _ transactions: [(transactionId: String, originalTransactionId: String, signedTransaction: String)],
    environment: AppStoreAPIEnvironment
  ) {
    core.state.withLock { state in
      state.transactions[environment, default: []] += transactions.map {
        AppStoreServerCore.Transaction(
          transactionId: $0.transactionId, originalTransactionId: $0.originalTransactionId,
          signedTransaction: $0.signedTransaction)
      }
    }
  }

  /// Registers a notification Apple sent (or failed to send, when not `delivered`) at `signedDate`
  /// (milliseconds since 1970) in `environment`.
  public func addNotification(
    signedPayload: String, signedDate: Int64, delivered: Bool, environment: AppStoreAPIEnvironment
  ) {
    core.state.withLock { state in
      state.notifications[environment, default: []].append(
        .init(signedPayload: signedPayload, signedDate: signedDate, delivered: delivered))
    }
  }

  /// Queues `fault` for the next `times` requests (of `environment` and under `pathPrefix`, when
  /// given). Faults are taken in the order queued.
  public func inject(
    _ fault: Fault, times: Int = 1, environment: AppStoreAPIEnvironment? = nil, pathPrefix: String? = nil
  ) {
    guard times > 0 else { return }
    core.state.withLock {
      $0.faults.append(.init(fault: fault, remaining: times, environment: environment, pathPrefix: pathPrefix))
    }
  }

  /// Every request received, in order.
  public var requests: [RecordedRequest] { core.state.withLock { $0.requests } }

  /// TCP connections accepted by both listeners.
  public var connectionsAccepted: Int { production.accepted + sandbox.accepted }

  /// Stops listening, closes every connection and shuts both event loop groups down. Idempotent.
  /// Call it from a thread that is not one of the server's event loops.
  public func shutdown() {
    production.shutdown()
    sandbox.shutdown()
  }
}
