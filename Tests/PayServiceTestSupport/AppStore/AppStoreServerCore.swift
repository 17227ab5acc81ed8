import Crypto
import Foundation
import PayServiceCore
import Synchronization

/// What `AppStoreServerTestServer` does with one request.
enum AppStoreServerOutcome {
  case respond(status: Int, body: String, headers: [(String, String)])
  /// Never answers (the connection stays open until the client or the server closes it).
  case hang
}

/// The state and the answers of `AppStoreServerTestServer`, shared by its connections and both
/// environments.
///
/// The answers follow Apple's reference:
/// - the bearer token: "Generating JSON Web Tokens for API requests"
///   (https://developer.apple.com/documentation/appstoreserverapi/generating-json-web-tokens-for-api-requests):
///   header `alg` ES256, `kid` the key id, `typ` JWT; payload `iss`, `iat`, `exp` (no more than an
///   hour after `iat`), `aud` "appstoreconnect-v1", `bid`; a token that fails any of it is answered
///   401 with no body, as the endpoints' "401 Unauthorized" says;
/// - Get Transaction History v2 (`HistoryResponse`: revision, hasMore, bundleId, appAppleId,
///   environment, signedTransactions), `TransactionIdNotFoundError` 4040010 "Transaction id not
///   found.", `InvalidTransactionIdError` 4000006, `InvalidRequestRevisionError` 4000005,
///   `InvalidSortError` 4000021;
/// - Get Notification History (`NotificationHistoryResponse`: notificationHistory of
///   `{signedPayload, sendAttempts: [{attemptDate, sendAttemptResult}]}`, hasMore,
///   paginationToken), `InvalidStartDateError` 4000015, `InvalidEndDateError` 4000016,
///   `StartDateAfterEndDateError` 4000013, `InvalidPaginationTokenError` 4000014;
/// - `RateLimitExceededError` 4290000 (429), `GeneralInternalError` 5000000 (500),
///   `GeneralInternalRetryableError` 5000001 (503 here).
final class AppStoreServerCore: Sendable {
  struct Transaction {
    var transactionId: String
    var originalTransactionId: String
    var signedTransaction: String
  }

  struct Notification {
    var signedPayload: String
    var signedDate: Int64
    var delivered: Bool
  }

  /// Where a revision token points: a chain, its order, and how many of its transactions came before.
  struct Revision: Equatable {
    var environment: AppStoreAPIEnvironment
    var originalTransactionId: String
    var descending: Bool
    var offset: Int
  }

  /// What a pagination token was issued for: the request's filter and how many records came before.
  struct NotificationQuery: Equatable {
    var environment: AppStoreAPIEnvironment
    var startDate: Int64
    var endDate: Int64
    var onlyFailures: Bool
  }

  struct FaultEntry {
    var fault: AppStoreServerTestServer.Fault
    var remaining: Int
    var environment: AppStoreAPIEnvironment?
    var pathPrefix: String?
  }

  struct State {
    var transactions: [AppStoreAPIEnvironment: [Transaction]] = [:]
    var notifications: [AppStoreAPIEnvironment: [Notification]] = [:]
    var revisions: [String: Revision] = [:]
    var paginationTokens: [String: (query: NotificationQuery, offset: Int)] = [:]
    var faults: [FaultEntry] = []
    var requests: [AppStoreServerTestServer.RecordedRequest] = []
    var historyPageSize: Int
    var notificationPageSize: Int
  }

  let state: Mutex<State>
  let publicKey: P256.Signing.PublicKey
  let keyId: String
  let issuerId: String
  let bundleId: String
  let appAppleId: Int64
  let now: @Sendable () -> Int64

  init(
    publicKey: P256.Signing.PublicKey, keyId: String, issuerId: String, bundleId: String, appAppleId: Int64,
    historyPageSize: Int, notificationPageSize: Int, now: @escaping @Sendable () -> Int64
  ) {
    self.publicKey = publicKey
    self.keyId = keyId
    self.issuerId = issuerId
    self.bundleId = bundleId
    self.appAppleId = appAppleId
    self.now = now
    state = Mutex(State(historyPageSize: historyPageSize, notificationPageSize: notificationPageSize))
  }

  /// The answer to one request: recorded, its token checked, then a fault queued for it, if any,
  /// else the endpoint's answer.
  func answer(
    environment: AppStoreAPIEnvironment, method: String, path: String, query: String?, authorization: String?,
    body: [UInt8]
  ) -> AppStoreServerOutcome {
    var bearer: String?
    if let authorization, authorization.hasPrefix("Bearer ") { bearer = String(authorization.dropFirst(7)) }
    let problem = bearer.map(tokenProblem) ?? "no bearer token in the Authorization header"
    let index = state.withLock { state -> Int in
      state.requests.append(
        .init(
          environment: environment, method: method, path: path, query: query ?? "", bearerToken: bearer,
          tokenValid: problem == nil, tokenProblem: problem, body: String(decoding: body, as: UTF8.self), status: 0))
      return state.requests.count - 1
    }
    let outcome = decide(
      environment: environment, method: method, path: path, query: Self.queryItems(query), tokenProblem: problem, body: body)
    if case .respond(let status, _, _) = outcome {
      state.withLock { $0.requests[index].status = status }
    }
    return outcome
  }

  private func decide(
    environment: AppStoreAPIEnvironment, method: String, path: String, query: [String: String], tokenProblem: String?,
    body: [UInt8]
  ) -> AppStoreServerOutcome {
    if let fault = takeFault(environment: environment, path: path) {
      switch fault {
      case .hang: return .hang
      case .unauthorized: return .respond(status: 401, body: "", headers: [])
      case .notFound: return Self.error(404, 4_040_010, "Transaction id not found.")
      case .rateLimited(let retryAfter):
        return Self.error(
          429, 4_290_000, "Rate limit exceeded.", headers: retryAfter.map { [("Retry-After", String($0))] } ?? [])
      case .internalServerError: return Self.error(500, 5_000_000, "An unknown error occurred.")
      case .serviceUnavailable: return Self.error(503, 5_000_001, "An unknown error occurred. Please try again.")
      case .notJSON:
        return .respond(
          status: 200, body: "<html><body>Service Temporarily Unavailable</body></html>",
          headers: [("Content-Type", "text/html")])
      }
    }
    if tokenProblem != nil { return .respond(status: 401, body: "", headers: []) }
    let historyPrefix = "/inApps/v2/history/"
    if method == "GET", path.hasPrefix(historyPrefix) {
      let id = Self.percentDecoded(String(path.dropFirst(historyPrefix.count))) ?? ""
      return transactionHistory(environment: environment, transactionId: id, query: query)
    }
    if method == "POST", path == "/inApps/v1/notifications/history" {
      return notificationHistory(environment: environment, query: query, body: body)
    }
    return .respond(status: 404, body: "", headers: [])
  }

  private func takeFault(environment: AppStoreAPIEnvironment, path: String) -> AppStoreServerTestServer.Fault? {
    state.withLock { state in
      guard
        let index = state.faults.firstIndex(where: { entry in
          (entry.environment == nil || entry.environment == environment)
            && (entry.pathPrefix.map { path.hasPrefix($0) } ?? true)
        })
      else { return nil }
      let fault = state.faults[index].fault
      state.faults[index].remaining -= 1
      if state.faults[index].remaining <= 0 { state.faults.remove(at: index) }
      return fault
    }
  }

  // MARK: The bearer token

  /// Why `token` is not one Apple would accept from the configured key, or nil when it is.
  func tokenProblem(_ token: String) -> String? {
    guard let (header, payload, signatureBytes) = AppStoreTestBearerToken.decode(token) else {
      return "not a compact JWS of a JSON header and payload"
    }
    func text(_ object: JSONObject, _ name: String) -> String? {
      if case .string(let value)? = object[name] { return value }
      return nil
    }
    func number(_ name: String) -> Int64? {
      if case .number(let value)? = payload[name] { return Int64(value) }
      return nil
    }
    guard text(header, "alg") == "ES256" else { return "alg is not ES256" }
    guard text(header, "kid") == keyId else { return "kid is not the key's id" }
    if header.contains("typ"), text(header, "typ") != "JWT" { return "typ is not JWT" }
    let signingInput = token[..<token.lastIndex(of: ".")!]
    guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
      publicKey.isValidSignature(signature, for: Array(signingInput.utf8))
    else { return "the signature does not verify with the key" }
    guard text(payload, "iss") == issuerId else { return "iss is not the issuer id" }
    guard text(payload, "aud") == "appstoreconnect-v1" else { return "aud is not appstoreconnect-v1" }
    guard text(payload, "bid") == bundleId else { return "bid is not the app's bundle id" }
    guard let issuedAt = number("iat"), let expires = number("exp") else { return "iat or exp is missing" }
    let time = now()
    guard expires > time else { return "the token expired" }
    guard issuedAt <= time + 60 else { return "iat is in the future" }
    guard expires - issuedAt <= 3600 else { return "exp is more than an hour after iat" }
    return nil
  }

  // MARK: Get Transaction History

  private func transactionHistory(environment: AppStoreAPIEnvironment, transactionId: String, query: [String: String])
    -> AppStoreServerOutcome
  {
    guard !transactionId.isEmpty, transactionId.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
      return Self.error(400, 4_000_006, "Invalid transaction id.")
    }
    let sort = query["sort"] ?? "ASCENDING"
    guard sort == "ASCENDING" || sort == "DESCENDING" else { return Self.error(400, 4_000_021, "Invalid sort.") }
    let descending = sort == "DESCENDING"
    return state.withLock { state -> AppStoreServerOutcome in
      let all = state.transactions[environment] ?? []
      guard let original = all.first(where: { $0.transactionId == transactionId })?.originalTransactionId else {
        return Self.error(404, 4_040_010, "Transaction id not found.")
      }
      var chain = all.filter { $0.originalTransactionId == original }
      if descending { chain.reverse() }
      var offset = 0
      if let revision = query["revision"] {
        guard let point = state.revisions[revision], point.environment == environment,
          point.originalTransactionId == original, point.descending == descending
        else { return Self.error(400, 4_000_005, "Invalid request revision.") }
        offset = min(point.offset, chain.count)
      }
      let end = min(offset + max(state.historyPageSize, 1), chain.count)
      let page = chain[offset..<end]
      let next = Revision(environment: environment, originalTransactionId: original, descending: descending, offset: end)
      let token = Self.opaqueToken("revision", environment.rawValue, original, sort, String(end))
      state.revisions[token] = next
      let object = JSONObject([
        ("revision", .string(token)),
        ("hasMore", .bool(end < chain.count)),
        ("bundleId", .string(bundleId)),
        ("appAppleId", .number(String(appAppleId))),
        ("environment", .string(environment.rawValue)),
        ("signedTransactions", .array(page.map { .string($0.signedTransaction) })),
      ])
      return .respond(status: 200, body: JSONWriter.string(JSONValue.object(object)), headers: [])
    }
  }

  // MARK: Get Notification History

  private func notificationHistory(environment: AppStoreAPIEnvironment, query: [String: String], body: [UInt8])
    -> AppStoreServerOutcome
  {
    guard case .object(let request)? = try? JSONParser.parse(body) else {
      return Self.error(400, 4_000_000, "Bad request.")
    }
    func number(_ name: String) -> Int64? {
      if case .number(let value)? = request[name] { return Int64(value) }
      return nil
    }
    guard let startDate = number("startDate") else { return Self.error(400, 4_000_015, "Invalid start date.") }
    guard let endDate = number("endDate") else { return Self.error(400, 4_000_016, "Invalid end date.") }
    guard startDate <= endDate else { return Self.error(400, 4_000_013, "Start date after end date.") }
    var onlyFailures = false
    switch request["onlyFailures"] {
    case nil: break
    case .bool(let value)?: onlyFailures = value
    default: return Self.error(400, 4_000_000, "Bad request.")
    }
    let asked = NotificationQuery(environment: environment, startDate: startDate, endDate: endDate, onlyFailures: onlyFailures)
    return state.withLock { state -> AppStoreServerOutcome in
      var offset = 0
      if let token = query["paginationToken"] {
        guard let point = state.paginationTokens[token], point.query == asked else {
          return Self.error(400, 4_000_014, "Invalid pagination token.")
        }
        offset = point.offset
      }
      let records = (state.notifications[environment] ?? []).enumerated()
        .filter { $0.element.signedDate >= startDate && $0.element.signedDate <= endDate }
        .filter { !onlyFailures || !$0.element.delivered }
        .sorted { ($0.element.signedDate, $0.offset) < ($1.element.signedDate, $1.offset) }
        .map(\.element)
      offset = min(offset, records.count)
      let end = min(offset + max(state.notificationPageSize, 1), records.count)
      var members: [(key: String, value: JSONValue)] = []
      if end < records.count {
        let token = Self.opaqueToken(
          "notifications", environment.rawValue, String(startDate), String(endDate), String(onlyFailures), String(end))
        state.paginationTokens[token] = (asked, end)
        members.append(("paginationToken", .string(token)))
      }
      members.append(("hasMore", .bool(end < records.count)))
      members.append(("notificationHistory", .array(records[offset..<end].map(Self.record))))
      return .respond(status: 200, body: JSONWriter.string(JSONValue.object(JSONObject(members))), headers: [])
    }
  }

  // MARK: Helpers

  /// Apple's error answer: `{"errorCode": code, "errorMessage": message}` with `status`.
  static func error(_ status: Int, _ code: Int, _ message: String, headers: [(String, String)] = []) -> AppStoreServerOutcome {
    .respond(
      status: status,
      body: JSONWriter.string(
        JSONValue.object(JSONObject([("errorCode", .number(String(code))), ("errorMessage", .string(message))]))),
      headers: headers)
  }

  /// A notification history record: the payload and its one send attempt, at its signedDate.
  static func record(_ notification: Notification) -> JSONValue {
    let attempt = JSONObject([
      ("attemptDate", .number(String(notification.signedDate))),
      ("sendAttemptResult", .string(notification.delivered ? "SUCCESS" : "NO_RESPONSE")),
    ])
    return .object(JSONObject([("sendAttempts", .array([.object(attempt)])), ("signedPayload", .string(notification.signedPayload))]))
  }

  /// A token that says nothing of what it stands for: hex of a SHA-256 of its parts.
  static func opaqueToken(_ parts: String...) -> String {
    let digest = SHA256.hash(data: Array(parts.joined(separator: "\n").utf8))
    return digest.prefix(16).map { String(format: "%02x", $0) }.joined()
  }

  /// `a=1&b=2` as a dictionary, names and values percent-decoded (the last of a name wins).
  static func queryItems(_ query: String?) -> [String: String] {
    var items: [String: String] = [:]
    for pair in (query ?? "").split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard let name = percentDecoded(String(parts[0])) else { continue }
      items[name] = parts.count > 1 ? percentDecoded(String(parts[1])) ?? "" : ""
    }
    return items
  }

  /// `%XX` decoded (and nothing else: `+` stays a plus); nil for a broken escape or bad UTF-8.
  static func percentDecoded(_ text: String) -> String? {
    var out: [UInt8] = []
    var bytes = text.utf8.makeIterator()
    while let byte = bytes.next() {
      guard byte == UInt8(ascii: "%") else {
        out.append(byte)
        continue
      }
      guard let high = bytes.next(), let low = bytes.next(), let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
      else { return nil }
      out.append(value)
    }
    return String(validating: out, as: UTF8.self)
  }
}
