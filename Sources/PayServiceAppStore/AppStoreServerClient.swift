import Foundation
import Logging
import PayServiceCore
import PayServiceRemote

/// The App Store Server API as payservice calls it: Get Transaction History v2 and Get
/// Notification History, over HTTPS (`HTTPRemoteTransport`: TLS 1.2 or later, the host's certificate
/// verified against the system's roots unless `trustRootsPEM` names others), each request carrying
/// an ES256 bearer token signed with the merchant's in-app purchase key (`AppStoreBearerToken`).
///
/// The endpoints, as Apple documents them:
/// - Get Transaction History v2
///   (https://developer.apple.com/documentation/appstoreserverapi/get-transaction-history):
///   `GET /inApps/v2/history/{transactionId}?sort=ASCENDING[&revision=…]`, answered with a
///   `HistoryResponse` `{revision, hasMore, bundleId, appAppleId, environment, signedTransactions}`;
/// - Get Notification History
///   (https://developer.apple.com/documentation/appstoreserverapi/get-notification-history):
///   `POST /inApps/v1/notifications/history[?paginationToken=…]` with a `NotificationHistoryRequest`
///   `{startDate, endDate, onlyFailures}` (milliseconds), answered with a
///   `NotificationHistoryResponse` `{notificationHistory: [{signedPayload, sendAttempts}], hasMore,
///   paginationToken}`.
///
/// Errors are Apple's `{"errorCode": 4040010, "errorMessage": "Transaction id not found."}` with
/// the status (https://developer.apple.com/documentation/appstoreserverapi/error-codes); a 401
/// has no body. 429 and 5xx answers are tried again, at most `maxRetries` times, after the
/// `Retry-After` header (seconds or a date) or else a backoff of 1, 2, 4 … seconds, each wait at
/// most `maxRetryDelaySeconds` (`RetryPolicy`). Both endpoints only read, so sending a request
/// again changes nothing.
///
/// Of the transport failures, only a connection closed or reset before the answer is tried again
/// (the same bounded way): it is what a kept connection the server dropped looks like. A timeout
/// is not: the caller has waited the whole request timeout already, and waiting again would
/// multiply it. A refused connection or a failed TLS handshake is a configuration fault that the
/// next attempt would meet too.
///
/// The key never leaves `AppStoreBearerToken`; tokens are not logged, and redirects are never
/// followed (a token sent elsewhere would be good there for five minutes).
public final class AppStoreServerClient: AppStoreServerAPI {
  private let transport: HTTPRemoteTransport
  private let settings: AppStoreAPISettings
  private let retry: RetryPolicy
  private let token: AppStoreBearerToken
  private let logger: Logger

  /// - Throws: `AppStoreClientSetupError` when the key is not a P-256 PKCS#8 PEM key, an
  ///   identifier is empty, a base URL does not read or the trust roots hold no certificate.
  public convenience init(settings: AppStoreAPISettings) throws {
    try self.init(settings: settings, logger: Logger(label: "payservice.appstore", factory: { _ in SwiftLogNoOpLogHandler() }))
  }

  /// - Parameters:
  ///   - logger: where retries and failures are told (never a token or the key).
  ///   - now: the clock of the bearer tokens, unix seconds.
  public init(
    settings: AppStoreAPISettings, logger: Logger, now: @escaping @Sendable () -> Int64 = { ServiceClock().now() }
  ) throws {
    self.settings = settings
    self.logger = logger
    token = try AppStoreBearerToken(settings: settings, now: now)
    for environment in AppStoreAPIEnvironment.allCases {
      let base = Self.baseURL(settings, environment)
      guard let url = URL(string: base), url.scheme == "https" || url.scheme == "http", url.host?.isEmpty == false else {
        throw AppStoreClientSetupError(.invalidBaseURL(environment))
      }
    }
    var connection = RemoteConnectionSettings(
      connectTimeoutSeconds: settings.connectTimeoutSeconds, requestTimeoutSeconds: settings.requestTimeoutSeconds)
    if let trustRootsPEM = settings.trustRootsPEM { connection.trustRoots = .pem(trustRootsPEM) }
    do {
      transport = try HTTPRemoteTransport(connection)
    } catch {
      throw AppStoreClientSetupError(.invalidTrustRoots)
    }
    retry = RetryPolicy(
      maxRetries: settings.maxRetries, backoffSeconds: 1...1024, maxDelaySeconds: max(settings.maxRetryDelaySeconds, 0))
  }

  /// Closes the client's connections; later calls fail as transport failures. Idempotent. From an
  /// event loop thread the shutdown is begun and not waited for.
  public func shutdown() {
    transport.shutdown()
  }

  static func baseURL(_ settings: AppStoreAPISettings, _ environment: AppStoreAPIEnvironment) -> String {
    var base = environment == .production ? settings.productionURL : settings.sandboxURL
    while base.hasSuffix("/") { base.removeLast() }
    return base
  }

  // MARK: Endpoints

  public func transactionHistory(transactionId: String, revision: String?, environment: AppStoreAPIEnvironment) async
    -> Result<AppStoreHistoryPage, AppStoreAPIFailure>
  {
    var path = "/inApps/v2/history/" + RemoteText.percentEncoded(transactionId) + "?sort=ASCENDING"
    if let revision { path += "&revision=" + RemoteText.percentEncoded(revision) }
    let call = Call(method: .GET, path: path, body: nil, environment: environment)
    return await perform(call).flatMap { object -> Result<AppStoreHistoryPage, AppStoreAPIFailure> in
      guard case .array(let items)? = object["signedTransactions"], case .bool(let hasMore)? = object["hasMore"] else {
        return .failure(call.malformed("no signedTransactions array and hasMore boolean"))
      }
      var signed: [String] = []
      for item in items {
        guard case .string(let jws) = item else { return .failure(call.malformed("a signed transaction that is not a string")) }
        signed.append(jws)
      }
      var revision: String?
      switch object["revision"] {
      case .string(let text)?: revision = text
      case nil, .null?: revision = nil
      default: return .failure(call.malformed("a revision that is not a string"))
      }
      return .success(AppStoreHistoryPage(signedTransactions: signed, revision: revision, hasMore: hasMore))
    }
  }

  public func notificationHistory(
    startDate: Int64, endDate: Int64, onlyFailures: Bool, paginationToken: String?,
    environment: AppStoreAPIEnvironment
  ) async -> Result<AppStoreNotificationHistoryPage, AppStoreAPIFailure> {
    var path = "/inApps/v1/notifications/history"
    if let paginationToken { path += "?paginationToken=" + RemoteText.percentEncoded(paginationToken) }
    var body = JSONObjectBuilder(capacity: 3)
    body.set("startDate", .number(String(startDate)))
    body.set("endDate", .number(String(endDate)))
    body.set("onlyFailures", onlyFailures)
    let call = Call(method: .POST, path: path, body: JSONWriter.string(body.value), environment: environment)
    return await perform(call).flatMap { object -> Result<AppStoreNotificationHistoryPage, AppStoreAPIFailure> in
      guard case .array(let items)? = object["notificationHistory"], case .bool(let hasMore)? = object["hasMore"] else {
        return .failure(call.malformed("no notificationHistory array and hasMore boolean"))
      }
      var payloads: [String] = []
      for item in items {
        guard case .object(let record) = item, case .string(let payload)? = record["signedPayload"] else {
          return .failure(call.malformed("a notification history record without a signedPayload string"))
        }
        payloads.append(payload)
      }
      var token: String?
      switch object["paginationToken"] {
      case .string(let text)?: token = text
      case nil, .null?: token = nil
      default: return .failure(call.malformed("a paginationToken that is not a string"))
      }
      return .success(AppStoreNotificationHistoryPage(signedPayloads: payloads, paginationToken: token, hasMore: hasMore))
    }
  }

  // MARK: Requests

  /// One request as the messages name it.
  struct Call {
    var method: RemoteRequest.Method
    /// The path with its query, percent-encoded.
    var path: String
    var body: String?
    var environment: AppStoreAPIEnvironment

    /// "GET /inApps/v2/history/123 (Sandbox)": the query left out (a revision says nothing to an
    /// operator).
    var name: String {
      let bare = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
      return "\(method.rawValue) \(bare) (\(environment.rawValue))"
    }

    func malformed(_ what: String) -> AppStoreAPIFailure {
      .invalidResponse(message: "the App Store Server API answered \(name) with 200 but \(what), not the documented JSON")
    }
  }

  /// Sends `call` until it is answered or may not be tried again.
  func perform(_ call: Call) async -> Result<JSONObject, AppStoreAPIFailure> {
    let outcome = await retry.run({ await attempt(call) }) { _, delay in
      logger.info("App Store Server API: \(call.name) is tried again in \(delay) s")
    }
    switch outcome {
    case .done(let result):
      return result
    case .exhausted(let failure, let attempts):
      logger.warning("App Store Server API: \(call.name) failed after \(attempts) attempts")
      return .failure(Self.afterAttempts(failure, attempts))
    }
  }

  /// The last attempt's failure, saying how many attempts were made when there were several.
  static func afterAttempts(_ failure: AppStoreAPIFailure, _ attempts: Int) -> AppStoreAPIFailure {
    switch failure {
    case .unavailable(let status, let message):
      return .unavailable(status: status, message: message + RetryPolicy.afterAttempts(attempts))
    case .transport(let message):
      return .transport(message: message + RetryPolicy.afterAttempts(attempts))
    default:
      return failure
    }
  }

  /// One attempt: the call's result, or the failure that is worth trying again (429, 5xx, a
  /// connection lost under the request).
  private func attempt(_ call: Call) async -> RemoteAttempt<Result<JSONObject, AppStoreAPIFailure>, AppStoreAPIFailure> {
    let bearer: String
    do {
      bearer = try token.current()
    } catch {
      // Signing with a key that loaded does not fail; if it ever did, nothing was sent.
      return .done(.failure(.transport(message: "the bearer token for \(call.name) could not be signed")))
    }
    var request = RemoteRequest(
      method: call.method, url: Self.baseURL(settings, call.environment) + call.path,
      headers: [("Authorization", "Bearer " + bearer), ("Accept", "application/json")])
    if let body = call.body {
      request.headers.append(("Content-Type", "application/json"))
      request.body = Array(body.utf8)
    }
    let response: RemoteResponse
    switch await transport.send(request) {
    case .success(let answered):
      response = answered
    case .failure(let failure):
      let message = describe(failure, call: call)
      return failure.lostConnection ? .retry(.transport(message: message), after: nil) : .done(.failure(.transport(message: message)))
    }
    let status = response.status
    let json = try? JSONParser.parse(response.body)
    if status == 200 {
      guard case .object(let object)? = json else {
        return .done(.failure(call.malformed("a body that is not a JSON object")))
      }
      return .done(.success(object))
    }
    let apple = Self.appleError(json)
    let said = apple.message.map { ": \"\($0)\"" } ?? ""
    let code = apple.code.map { " (errorCode \($0))" } ?? ""
    switch status {
    case 401:
      return .done(.failure(.unauthorized))
    case 404:
      return .done(
        .failure(.notFound(errorCode: apple.code, message: "the App Store Server API answered \(call.name) with 404\(said)\(code)")))
    case 400:
      return .done(
        .failure(
          .invalidRequest(errorCode: apple.code, message: "the App Store Server API refused \(call.name) with 400\(said)\(code)")))
    case 429, 500...599:
      let failure = AppStoreAPIFailure.unavailable(
        status: status, message: "the App Store Server API answered \(call.name) with \(status)\(said)\(code)")
      return .retry(failure, after: response.retryAfter())
    default:
      return .done(
        .failure(
          .invalidResponse(
            message: "the App Store Server API answered \(call.name) with \(status)\(said)\(code), which it does not document")))
    }
  }

  /// Apple's error body, `{"errorCode": 4040010, "errorMessage": "…"}`, when there is one.
  static func appleError(_ json: JSONValue?) -> (code: Int?, message: String?) {
    guard case .object(let object)? = json else { return (nil, nil) }
    var code: Int?
    if case .number(let text)? = object["errorCode"] { code = Int(text) }
    var message: String?
    if case .string(let text)? = object["errorMessage"] { message = RemoteText.quoted(text, limit: 300) }
    return (code, message)
  }

  /// A transport failure in words.
  func describe(_ failure: RemoteFailure, call: Call) -> String {
    let host = URL(string: Self.baseURL(settings, call.environment))?.host ?? "the App Store Server API"
    switch failure {
    case .requestTimeout:
      return "\(host) did not answer \(call.name) within \(RemoteText.seconds(settings.requestTimeoutSeconds)) s"
    case .connectTimeout:
      return "no connection to \(host) within \(RemoteText.seconds(settings.connectTimeoutSeconds)) s for \(call.name)"
    case .closedBeforeAnswer:
      return "\(host) closed the connection before answering \(call.name)"
    case .socket where failure.lostConnection:
      return "\(host) reset the connection before answering \(call.name)"
    case .refused:
      return "\(host) refused the connection for \(call.name)"
    case .socket(let errno):
      return "the connection to \(host) failed (errno \(errno)) for \(call.name)"
    case .connection:
      return "the connection to \(host) failed for \(call.name)"
    case .tls:
      return "TLS with \(host) failed for \(call.name) (check the trust roots and any TLS-intercepting proxy)"
    case .shutDown:
      return "the App Store Server API client is shut down; \(call.name) was not sent"
    case .other(let type):
      return "the request \(call.name) to \(host) failed (\(type))"
    }
  }
}
