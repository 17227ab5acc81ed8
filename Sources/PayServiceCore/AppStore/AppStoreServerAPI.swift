import Foundation
import Synchronization

/// How payservice reaches the App Store Server API (`appStore.api` in config): the in-app purchase
/// key that signs each request's bearer token, and where the two environments are served. The key
/// is read from the merchant's `.p8` file at start and never printed or stored.
public struct AppStoreAPISettings: Sendable, Equatable {
  /// The key's PEM text (PKCS#8, P-256), from the file `appStore.api.keyFile` names.
  public var keyPEM: String
  /// The key's id in App Store Connect (the bearer token's `kid`).
  public var keyId: String
  /// The issuer id from App Store Connect's Keys page (`iss`).
  public var issuerId: String
  /// The app's bundle id (`bid`): `appStore.bundleId`.
  public var bundleId: String
  /// Where each environment is served: Apple's hosts unless the config points one elsewhere (a
  /// test server or a proxy the merchant runs).
  public var productionURL = "https://api.storekit.itunes.apple.com"
  public var sandboxURL = "https://api.storekit-sandbox.itunes.apple.com"
  /// A PEM file's text of CA certificates trusted instead of the system's; nil: the system roots.
  public var trustRootsPEM: String?
  public var connectTimeoutSeconds: Double = 5
  public var requestTimeoutSeconds: Double = 15
  /// How many times a 429 or 5xx answer is tried again (after its Retry-After, at most
  /// `maxRetryDelaySeconds`) before the call fails.
  public var maxRetries = 3
  public var maxRetryDelaySeconds: Double = 10

  public init(keyPEM: String, keyId: String, issuerId: String, bundleId: String) {
    self.keyPEM = keyPEM
    self.keyId = keyId
    self.issuerId = issuerId
    self.bundleId = bundleId
  }
}

/// The App Store's two environments of the Server API.
public enum AppStoreAPIEnvironment: String, Sendable, CaseIterable {
  case production = "Production"
  case sandbox = "Sandbox"
}

/// One page of Get Transaction History v2 (`GET /inApps/v2/history/{transactionId}`).
public struct AppStoreHistoryPage: Sendable, Equatable {
  /// The page's signed transactions (JWS), as Apple sent them: verified by the caller.
  public var signedTransactions: [String]
  /// The token for the next page (`revision`).
  public var revision: String?
  public var hasMore: Bool

  public init(signedTransactions: [String], revision: String?, hasMore: Bool) {
    self.signedTransactions = signedTransactions
    self.revision = revision
    self.hasMore = hasMore
  }
}

/// One page of Get Notification History (`POST /inApps/v1/notifications/history`).
public struct AppStoreNotificationHistoryPage: Sendable, Equatable {
  /// Each notification's `signedPayload` (JWS), as Apple sent it: verified by the caller.
  public var signedPayloads: [String]
  public var paginationToken: String?
  public var hasMore: Bool

  public init(signedPayloads: [String], paginationToken: String?, hasMore: Bool) {
    self.signedPayloads = signedPayloads
    self.paginationToken = paginationToken
    self.hasMore = hasMore
  }
}

/// Why a call to the App Store Server API brought back nothing to use.
public enum AppStoreAPIFailure: Error, Sendable, Equatable {
  /// 401: the bearer token was refused (wrong key, key id, issuer or bundle id, or an expired token).
  case unauthorized
  /// 404: Apple knows no such thing; `errorCode` is Apple's (4040010 transaction id not found, …).
  case notFound(errorCode: Int?, message: String)
  /// 400: Apple refused the request as invalid; `errorCode` is Apple's.
  case invalidRequest(errorCode: Int?, message: String)
  /// 429 or 5xx still, after the retries `AppStoreAPISettings.maxRetries` allows.
  case unavailable(status: Int, message: String)
  /// No answer within the timeouts, or no connection.
  case transport(message: String)
  /// An answer that is not the documented JSON.
  case invalidResponse(message: String)
}

/// The App Store Server API as payservice uses it. `PayServiceAppStore.AppStoreServerClient` is
/// the real one (AsyncHTTPClient over TLS, bearer token ES256).
public protocol AppStoreServerAPI: Sendable {
  /// One page of the transaction history of `transactionId`'s customer, oldest first
  /// (`sort=ASCENDING`), from `revision` (nil: the first page).
  func transactionHistory(transactionId: String, revision: String?, environment: AppStoreAPIEnvironment) async
    -> Result<AppStoreHistoryPage, AppStoreAPIFailure>
  /// One page of the notifications Apple sent from `startDate` to `endDate` (milliseconds since
  /// 1970), only those whose delivery failed when `onlyFailures`.
  func notificationHistory(
    startDate: Int64, endDate: Int64, onlyFailures: Bool, paginationToken: String?,
    environment: AppStoreAPIEnvironment
  ) async -> Result<AppStoreNotificationHistoryPage, AppStoreAPIFailure>
  /// Closes the client's connections.
  func shutdown()
}

/// The App Store Server API as the serve loop uses it: a call blocks the calling thread (the
/// store's, with no transaction open) while it runs on a thread of its own (`RemoteCallThread`).
public final class AppStoreServerCalls: Sendable {
  let api: any AppStoreServerAPI
  private let thread = RemoteCallThread(name: "payservice-app-store")
  /// The unverified receipts this process may still look up (shopper-facing processes only).
  let receiptLookups = ReceiptLookupLimit()

  public init(api: any AppStoreServerAPI) {
    self.api = api
  }

  func transactionHistory(transactionId: String, revision: String?, environment: AppStoreAPIEnvironment)
    -> Result<AppStoreHistoryPage, AppStoreAPIFailure>
  {
    let api = self.api
    return thread.run {
      await api.transactionHistory(transactionId: transactionId, revision: revision, environment: environment)
    }
  }

  func notificationHistory(
    startDate: Int64, endDate: Int64, onlyFailures: Bool, paginationToken: String?,
    environment: AppStoreAPIEnvironment
  ) -> Result<AppStoreNotificationHistoryPage, AppStoreAPIFailure> {
    let api = self.api
    return thread.run {
      await api.notificationHistory(
        startDate: startDate, endDate: endDate, onlyFailures: onlyFailures, paginationToken: paginationToken,
        environment: environment)
    }
  }

  /// Closes the client's connections.
  public func shutdown() {
    api.shutdown()
  }
}

/// How many unverified receipts a shopper-facing process looks up at Apple: a bucket of
/// `perMinute` lookups, one coming back every 60/`perMinute` seconds of the service clock. Each
/// lookup makes authenticated calls that spend the merchant's quota, and anyone may send a receipt.
final class ReceiptLookupLimit: Sendable {
  static let perMinute: Int64 = 20
  /// The bucket as of a time (seconds): lookups left, and when it was last counted.
  private let bucket = Mutex<(left: Int64, at: Int64?)>((perMinute, nil))

  /// Takes one lookup: nil when allowed, else the whole seconds until the next one is.
  func take(now: Int64) -> Int64? {
    bucket.withLock { bucket in
      let interval = 60 / Self.perMinute
      if let at = bucket.at, now > at {
        let refilled = (now - at) / interval
        bucket.left = min(Self.perMinute, bucket.left + refilled)
        bucket.at = bucket.left == Self.perMinute ? now : at + refilled * interval
      } else if bucket.at == nil {
        bucket.at = now
      }
      guard bucket.left > 0 else { return max(1, (bucket.at ?? now) + interval - now) }
      bucket.left -= 1
      return nil
    }
  }
}
