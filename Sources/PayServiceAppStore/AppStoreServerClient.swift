import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import PayServiceCore
import Synchronization

/// The App Store Server API as payservice calls it: Get Transaction History v2 and Get
/// Notification History, over HTTPS (AsyncHTTPClient, TLS 1.2 or later, the host's certificate
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
/// `Retry-After` header's seconds or else a backoff of 1, 2, 4 … seconds, each wait at most
/// `maxRetryDelaySeconds`. Both endpoints only read, so sending a request again changes nothing.
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
  private let client: HTTPClient
  private let settings: AppStoreAPISettings
  private let token: AppStoreBearerToken
  private let isOpen = Mutex(true)
  private let logger: Logger
  /// The largest answer read: a page holds at most 20 JWS of a few kilobytes each.
  static let maximumAnswerBytes = 1 << 22

  /// - Throws: `AppStoreClientSetupError` when the key is not a P-256 PKCS#8 PEM key, an
  ///   identifier is empty, a base URL does not read or the trust roots hold no certificate.
  public convenience init(settings: AppStoreAPISettings) throws {
    try self.init(settings: settings, logger: Logger(label: "payservice.appstore", factory: { _ in SwiftLogNoOpLogHandler() }))
  }

  /// - Parameters:
  ///   - logger: where retries and failures are told (never a token or the key).
  ///   - now: the clock of the bearer tokens, unix seconds.
  public init(
    settings: AppStoreAPISettings, logger: Logger,
    now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
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
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.minimumTLSVersion = .tlsv12
    tls.certificateVerification = .fullVerification
    if let trustRootsPEM = settings.trustRootsPEM {
      guard let roots = try? NIOSSLCertificate.fromPEMBytes(Array(trustRootsPEM.utf8)), !roots.isEmpty else {
        throw AppStoreClientSetupError(.invalidTrustRoots)
      }
      tls.trustRoots = .certificates(roots)
    }
    var configuration = HTTPClient.Configuration(
      tlsConfiguration: tls,
      timeout: .init(
        connect: Self.amount(settings.connectTimeoutSeconds), read: Self.amount(settings.requestTimeoutSeconds)))
    // A failed connection fails the attempt at once with its own error, rather than being tried
    // again until the deadline (which would hide why).
    configuration.connectionPool.retryConnectionEstablishment = false
    configuration.connectionPool.idleTimeout = .seconds(60)
    // A redirect would carry the bearer token to another host.
    configuration.redirectConfiguration = .disallow
    client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
  }

  deinit {
    shutdown()
  }

  /// Closes the client's connections; later calls fail as transport failures. Idempotent. From an
  /// event loop thread (where blocking would deadlock) the shutdown is begun and not waited for.
  public func shutdown() {
    let wasOpen = isOpen.withLock { open in
      defer { open = false }
      return open
    }
    guard wasOpen else { return }
    if client.eventLoopGroup.makeIterator().contains(where: { $0.inEventLoop }) {
      client.shutdown { _ in }
    } else {
      try? client.syncShutdown()
    }
  }

  static func amount(_ seconds: Double) -> TimeAmount { .milliseconds(Int64(max(seconds, 0.001) * 1000)) }

  static func baseURL(_ settings: AppStoreAPISettings, _ environment: AppStoreAPIEnvironment) -> String {
    var base = environment == .production ? settings.productionURL : settings.sandboxURL
    while base.hasSuffix("/") { base.removeLast() }
    return base
  }

  // MARK: Endpoints

  public func transactionHistory(transactionId: String, revision: String?, environment: AppStoreAPIEnvironment) async
    -> Result<AppStoreHistoryPage, AppStoreAPIFailure>
  {
    var path = "/inApps/v2/history/" + Self.percentEncoded(transactionId) + "?sort=ASCENDING"
    if let revision { path += "&revision=" + Self.percentEncoded(revision) }
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
    if let paginationToken { path += "?paginationToken=" + Self.percentEncoded(paginationToken) }
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
    var method: HTTPMethod
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

  /// What one attempt came to.
  enum Attempt {
    case done(Result<JSONObject, AppStoreAPIFailure>)
    /// Worth sending again: the failure if no more attempts are allowed, and the seconds the
    /// server asked to wait (`Retry-After`), if it did.
    case retry(AppStoreAPIFailure, after: Double?)
  }

  /// Sends `call` until it is answered or may not be tried again.
  func perform(_ call: Call) async -> Result<JSONObject, AppStoreAPIFailure> {
    var retries = 0
    while true {
      let attempt = await send(call)
      guard case .retry(let failure, let after) = attempt else {
        if case .done(let result) = attempt { return result }
        preconditionFailure("unreachable")
      }
      guard retries < settings.maxRetries else {
        logger.warning("App Store Server API: \(call.name) failed after \(retries + 1) attempts")
        return .failure(Self.afterAttempts(failure, retries + 1))
      }
      retries += 1
      let backoff = min(after ?? Double(1 << min(retries - 1, 10)), max(settings.maxRetryDelaySeconds, 0))
      logger.info("App Store Server API: \(call.name) is tried again in \(backoff) s")
      if backoff > 0 { try? await Task.sleep(for: .milliseconds(Int64(backoff * 1000))) }
    }
  }

  /// The last attempt's failure, saying how many attempts were made when there were several.
  static func afterAttempts(_ failure: AppStoreAPIFailure, _ attempts: Int) -> AppStoreAPIFailure {
    guard attempts > 1 else { return failure }
    switch failure {
    case .unavailable(let status, let message):
      return .unavailable(status: status, message: message + ", after \(attempts) attempts")
    case .transport(let message):
      return .transport(message: message + ", after \(attempts) attempts")
    default:
      return failure
    }
  }

  private func send(_ call: Call) async -> Attempt {
    let bearer: String
    do {
      bearer = try token.current()
    } catch {
      // Signing with a key that loaded does not fail; if it ever did, nothing was sent.
      return .done(.failure(.transport(message: "the bearer token for \(call.name) could not be signed")))
    }
    var request = HTTPClientRequest(url: Self.baseURL(settings, call.environment) + call.path)
    request.method = call.method
    request.headers.add(name: "Authorization", value: "Bearer " + bearer)
    request.headers.add(name: "Accept", value: "application/json")
    request.headers.add(name: "User-Agent", value: "payservice/\(PayServiceVersion.current)")
    if let body = call.body {
      request.headers.add(name: "Content-Type", value: "application/json")
      request.body = .bytes(NIOCore.ByteBuffer(string: body))
    }
    let response: HTTPClientResponse
    let bytes: NIOCore.ByteBuffer
    do {
      response = try await client.execute(request, timeout: Self.amount(settings.requestTimeoutSeconds))
      bytes = try await response.body.collect(upTo: Self.maximumAnswerBytes)
    } catch {
      let (message, retry) = describe(error, call: call)
      return retry ? .retry(.transport(message: message), after: nil) : .done(.failure(.transport(message: message)))
    }
    let status = Int(response.status.code)
    let json = try? JSONParser.parse(Array(bytes.readableBytesView))
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
      return .retry(failure, after: Self.retryAfter(response.headers.first(name: "Retry-After")))
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
    if case .string(let text)? = object["errorMessage"] { message = quoted(text) }
    return (code, message)
  }

  /// `Retry-After` as seconds: a number of seconds or an HTTP date (RFC 9110, 10.2.3).
  static func retryAfter(_ header: String?, now: Date = Date()) -> Double? {
    guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
    if let seconds = Double(header), seconds.isFinite { return max(seconds, 0) }
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    guard let date = formatter.date(from: header) else { return nil }
    return max(date.timeIntervalSince(now), 0)
  }

  /// A transport failure in words, and whether it is tried again.
  func describe(_ error: any Error, call: Call) -> (String, retry: Bool) {
    let host = URL(string: Self.baseURL(settings, call.environment))?.host ?? "the App Store Server API"
    if let error = error as? HTTPClientError {
      switch error {
      case .deadlineExceeded, .readTimeout, .writeTimeout:
        return ("\(host) did not answer \(call.name) within \(Self.seconds(settings.requestTimeoutSeconds)) s", false)
      case .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout:
        return ("no connection to \(host) within \(Self.seconds(settings.connectTimeoutSeconds)) s for \(call.name)", false)
      case .remoteConnectionClosed:
        return ("\(host) closed the connection before answering \(call.name)", true)
      case .alreadyShutdown:
        return ("the App Store Server API client is shut down; \(call.name) was not sent", false)
      default: break
      }
    }
    if let error = error as? IOError {
      switch error.errnoCode {
      case ECONNRESET, EPIPE: return ("\(host) reset the connection before answering \(call.name)", true)
      case ECONNREFUSED: return ("\(host) refused the connection for \(call.name)", false)
      default: return ("the connection to \(host) failed (errno \(error.errnoCode)) for \(call.name)", false)
      }
    }
    if let error = error as? ChannelError {
      if case .connectTimeout = error {
        return ("no connection to \(host) within \(Self.seconds(settings.connectTimeoutSeconds)) s for \(call.name)", false)
      }
      return ("the connection to \(host) failed for \(call.name)", false)
    }
    if let error = error as? NIOSSLError {
      if case .uncleanShutdown = error { return ("\(host) closed the connection before answering \(call.name)", true) }
      return ("TLS with \(host) failed for \(call.name) (check the trust roots and any TLS-intercepting proxy)", false)
    }
    if error is BoringSSLError || error is NIOSSLExtraError {
      return ("TLS with \(host) failed for \(call.name) (check the trust roots and any TLS-intercepting proxy)", false)
    }
    let described = String(describing: error)
    if described.contains("onnection refused") { return ("\(host) refused the connection for \(call.name)", false) }
    return ("the request \(call.name) to \(host) failed (\(String(describing: type(of: error))))", false)
  }

  static func seconds(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
  }

  /// A peer's text made safe to quote: at most 300 characters, control characters dropped.
  static func quoted(_ text: String) -> String {
    let cleaned = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
    return cleaned.count > 300 ? String(cleaned.prefix(300)) + "…" : cleaned
  }

  /// Percent-encoding of a path segment or query value: unreserved characters (RFC 3986, 2.3)
  /// kept, every other byte of the UTF-8 as %XX.
  static func percentEncoded(_ text: String) -> String {
    let hex = Array("0123456789ABCDEF".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(text.utf8.count)
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "~"):
        out.append(byte)
      default:
        out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
      }
    }
    return String(decoding: out, as: UTF8.self)
  }
}
