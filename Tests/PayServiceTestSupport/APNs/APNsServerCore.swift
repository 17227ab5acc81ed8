import Crypto
import Foundation
import PayServiceCore
import Synchronization

/// One request as the APNs test server's handler read it off an HTTP/2 stream.
struct APNsIncomingRequest {
  var method: String
  var path: String
  /// "HTTP/2.0": what the stream's codec says the request came over.
  var httpVersion: String
  /// Every header as sent, names lowercase (HTTP/2 has no others).
  var headers: [(name: String, value: String)]
  var body: [UInt8]
  /// The body was longer than the handler reads: too large whatever its size.
  var bodyTooLarge: Bool

  func values(_ name: String) -> [String] {
    headers.filter { $0.name.lowercased() == name }.map(\.value)
  }
}

/// What the handler does with one request.
enum APNsServerOutcome {
  case respond(status: Int, headers: [(String, String)], body: String)
  /// The same answer, once `gate` is released.
  case hold(APNsTestServer.Gate, status: Int, headers: [(String, String)], body: String)
  /// The TCP connection is reset under the request (every stream on it goes).
  case reset
}

/// The state and the answers of `APNsTestServer`, shared by its connections.
///
/// What it checks, in this order, with the statuses and reasons of "Handling notification
/// responses from APNs"
/// (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns):
/// 1. a fault queued for the request (`APNsTestServer.Fault`), before anything else;
/// 2. the method: only POST (405 `MethodNotAllowed`);
/// 3. the path `/3/device/{token}` (404 `BadPath`; 400 `MissingDeviceToken` with no token);
/// 4. a header sent twice (400 `DuplicateHeaders`);
/// 5. the provider token ("Establishing a token-based connection to APNs",
///    https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns):
///    no `authorization: bearer …` (403 `MissingProviderToken`); a token that is not an ES256
///    JWS of the registered key's `kid`, signed by it, with the team's `iss` and an `iat`
///    (403 `InvalidProviderToken`); an `iat` more than an hour old (403 `ExpiredProviderToken`);
///    a new token less than `tokenUpdateIntervalSeconds` after the team's last one (429
///    `TooManyProviderTokenUpdates`);
/// 6. the topic: none (400 `MissingTopic`), not an identifier (400 `BadTopic`), not one of the
///    team's registered topics (400 `TopicDisallowed`);
/// 7. the device token: not hex of a device token's length, or unknown (400 `BadDeviceToken`);
///    registered for another topic (400 `DeviceTokenNotForTopic`); unregistered (410
///    `Unregistered`, with `timestamp`);
/// 8. the other headers ("Sending notification requests to APNs",
///    https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns):
///    an unknown `apns-push-type` (400 `InvalidPushType`), an `apns-priority` other than 1, 5 or
///    10, or 10 for a background push (400 `BadPriority`), an `apns-id` that is not a UUID (400
///    `BadMessageId`), an `apns-expiration` that is not a number (400 `BadExpirationDate`), an
///    `apns-collapse-id` over 64 bytes (400 `BadCollapseId`);
/// 9. the payload: none (400 `PayloadEmpty`), over 4 KiB (413 `PayloadTooLarge`).
///
/// A push that passes is answered 200 with its `apns-id` (the request's, or the next of a
/// deterministic sequence of UUIDs); every answer carries one, and an error's body is
/// `{"reason":"…"}` (with `"timestamp"`, milliseconds, for 410).
final class APNsServerCore: Sendable {
  struct FaultEntry {
    var fault: APNsTestServer.Fault
    var remaining: Int
    var deviceToken: String?
  }

  struct State {
    /// Device token (lowercase hex) → the topic it was registered for.
    var devices: [String: String] = [:]
    /// Device token (lowercase hex) → when it was unregistered (milliseconds since 1970).
    var unregistered: [String: Int64] = [:]
    var topics: Set<String>
    var faults: [FaultEntry] = []
    var pushes: [APNsTestServer.Push] = []
    /// The last provider token accepted, and its `iat`.
    var lastToken: (jwt: String, issuedAt: Int64)?
    var nextId = 1
  }

  /// The largest payload APNs takes for a push other than VoIP.
  static let maximumPayloadBytes = 4096
  /// How old a provider token may be.
  static let tokenMaximumAgeSeconds: Int64 = 3600
  static let pushTypes: Set<String> = [
    "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk",
    "widgets", "controls",
  ]
  static let checkedHeaders = [
    "authorization", "apns-topic", "apns-push-type", "apns-priority", "apns-id", "apns-expiration", "apns-collapse-id",
  ]

  let state: Mutex<State>
  let teamId: String
  let keyId: String
  let publicKey: P256.Signing.PublicKey
  let tokenUpdateIntervalSeconds: Int64
  let now: @Sendable () -> Int64

  init(
    teamId: String, keyId: String, publicKey: P256.Signing.PublicKey, topics: Set<String>,
    tokenUpdateIntervalSeconds: Int64, now: @escaping @Sendable () -> Int64
  ) {
    self.teamId = teamId
    self.keyId = keyId
    self.publicKey = publicKey
    self.tokenUpdateIntervalSeconds = tokenUpdateIntervalSeconds
    self.now = now
    state = Mutex(State(topics: topics))
  }

  /// The answer to one request, recorded with what it came to.
  func answer(_ request: APNsIncomingRequest) -> APNsServerOutcome {
    let devicePrefix = "/3/device/"
    let deviceToken = request.path.hasPrefix(devicePrefix) ? String(request.path.dropFirst(devicePrefix.count)) : ""
    var bearer: String?
    if let authorization = request.values("authorization").first, authorization.lowercased().hasPrefix("bearer ") {
      bearer = String(authorization.dropFirst(7))
    }
    let fault = state.withLock { Self.takeFault(&$0, deviceToken: deviceToken.lowercased()) }
    var record = APNsTestServer.Push(
      deviceToken: deviceToken, method: request.method, path: request.path, httpVersion: request.httpVersion,
      topic: request.values("apns-topic").first, pushType: request.values("apns-push-type").first,
      priority: request.values("apns-priority").first, providerToken: bearer,
      payload: String(decoding: request.body, as: UTF8.self), status: 0, reason: nil, apnsId: nil)

    if case .reset? = fault {
      state.withLock { $0.pushes.append(record) }
      return .reset
    }
    // The request's own apns-id when it is a UUID, else the next of the sequence.
    let apnsId = state.withLock { state -> String in
      if let given = request.values("apns-id").first, UUID(uuidString: given) != nil { return given }
      defer { state.nextId += 1 }
      return Self.uuid(state.nextId)
    }
    let (status, reason, timestamp) = decide(request, fault: fault, deviceToken: deviceToken, bearer: bearer)
    record.status = status
    record.reason = reason
    record.apnsId = apnsId
    state.withLock { $0.pushes.append(record) }

    var headers: [(String, String)] = [("apns-id", apnsId)]
    var body = ""
    if let reason {
      var object = JSONObjectBuilder(capacity: 2)
      object.set("reason", reason)
      if let timestamp { object.set("timestamp", .number(String(timestamp))) }
      body = JSONWriter.string(object.value)
      headers.append(("content-type", "application/json"))
    }
    switch fault {
    case .tooManyRequests(let retryAfter?), .serviceUnavailable(let retryAfter?):
      headers.append(("retry-after", String(retryAfter)))
    case .hold(let gate):
      return .hold(gate, status: status, headers: headers, body: body)
    default:
      break
    }
    return .respond(status: status, headers: headers, body: body)
  }

  private static func takeFault(_ state: inout State, deviceToken: String) -> APNsTestServer.Fault? {
    guard let index = state.faults.firstIndex(where: { $0.deviceToken.map { $0 == deviceToken } ?? true }) else {
      return nil
    }
    let fault = state.faults[index].fault
    state.faults[index].remaining -= 1
    if state.faults[index].remaining <= 0 { state.faults.remove(at: index) }
    return fault
  }

  /// The status, the reason (nil for 200) and, for 410, the timestamp.
  private func decide(_ request: APNsIncomingRequest, fault: APNsTestServer.Fault?, deviceToken: String, bearer: String?)
    -> (Int, String?, Int64?)
  {
    switch fault {
    case .tooManyRequests?: return (429, "TooManyRequests", nil)
    case .internalServerError?: return (500, "InternalServerError", nil)
    case .serviceUnavailable?: return (503, "ServiceUnavailable", nil)
    case .hold?, .reset?, nil: break
    }
    guard request.method == "POST" else { return (405, "MethodNotAllowed", nil) }
    guard request.path.hasPrefix("/3/device/") else { return (404, "BadPath", nil) }
    guard !deviceToken.isEmpty else { return (400, "MissingDeviceToken", nil) }
    guard !deviceToken.contains("/") else { return (404, "BadPath", nil) }
    if Self.checkedHeaders.contains(where: { request.values($0).count > 1 }) { return (400, "DuplicateHeaders", nil) }

    guard let bearer else { return (403, "MissingProviderToken", nil) }
    switch tokenProblem(bearer) {
    case .invalid: return (403, "InvalidProviderToken", nil)
    case .expired: return (403, "ExpiredProviderToken", nil)
    case .updatedTooSoon: return (429, "TooManyProviderTokenUpdates", nil)
    case nil: break
    }

    guard let topic = request.values("apns-topic").first else { return (400, "MissingTopic", nil) }
    guard Self.isIdentifier(topic) else { return (400, "BadTopic", nil) }
    let token = deviceToken.lowercased()
    let (topicKnown, registeredTopic, unregisteredAt) = state.withLock {
      ($0.topics.contains(topic), $0.devices[token], $0.unregistered[token])
    }
    guard topicKnown else { return (400, "TopicDisallowed", nil) }
    guard Self.isDeviceToken(deviceToken), let registeredTopic else { return (400, "BadDeviceToken", nil) }
    guard registeredTopic == topic else { return (400, "DeviceTokenNotForTopic", nil) }
    if let unregisteredAt { return (410, "Unregistered", unregisteredAt) }

    let pushType = request.values("apns-push-type").first
    if let pushType, !Self.pushTypes.contains(pushType) { return (400, "InvalidPushType", nil) }
    if let priority = request.values("apns-priority").first {
      guard ["1", "5", "10"].contains(priority) else { return (400, "BadPriority", nil) }
      if priority == "10" && pushType == "background" { return (400, "BadPriority", nil) }
    }
    if let id = request.values("apns-id").first, UUID(uuidString: id) == nil { return (400, "BadMessageId", nil) }
    if let expiration = request.values("apns-expiration").first, Int64(expiration) == nil {
      return (400, "BadExpirationDate", nil)
    }
    if let collapse = request.values("apns-collapse-id").first, collapse.utf8.count > 64 {
      return (400, "BadCollapseId", nil)
    }
    if request.bodyTooLarge || request.body.count > Self.maximumPayloadBytes { return (413, "PayloadTooLarge", nil) }
    guard !request.body.isEmpty else { return (400, "PayloadEmpty", nil) }
    return (200, nil, nil)
  }

  enum TokenProblem {
    case invalid, expired, updatedTooSoon
  }

  /// What APNs would hold against `token`; nil when it takes it. A token taken becomes the team's
  /// last one.
  private func tokenProblem(_ token: String) -> TokenProblem? {
    guard let (header, claims, signatureBytes) = AppStoreTestBearerToken.decode(token) else { return .invalid }
    func text(_ object: JSONObject, _ name: String) -> String? {
      if case .string(let value)? = object[name] { return value }
      return nil
    }
    guard text(header, "alg") == "ES256", text(header, "kid") == keyId, text(claims, "iss") == teamId,
      case .number(let iat)? = claims["iat"], let issuedAt = Int64(iat)
    else { return .invalid }
    let signingInput = token[..<token.lastIndex(of: ".")!]
    guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
      publicKey.isValidSignature(signature, for: Array(signingInput.utf8))
    else { return .invalid }
    let time = now()
    guard issuedAt <= time + 60 else { return .invalid }
    guard time - issuedAt <= Self.tokenMaximumAgeSeconds else { return .expired }
    return state.withLock { state -> TokenProblem? in
      if let last = state.lastToken, last.jwt != token, issuedAt < last.issuedAt + tokenUpdateIntervalSeconds {
        return .updatedTooSoon
      }
      state.lastToken = (token, issuedAt)
      return nil
    }
  }

  /// Hex digits of a device token's length: an even count from 16 to 200.
  static func isDeviceToken(_ token: String) -> Bool {
    (16...200).contains(token.utf8.count) && token.utf8.count % 2 == 0 && token.allSatisfy(\.isHexDigit)
  }

  /// Letters, digits, '.', '-' and '_', at most 255 bytes: a bundle id or an order type identifier.
  static func isIdentifier(_ topic: String) -> Bool {
    !topic.isEmpty && topic.utf8.count <= 255
      && topic.unicodeScalars.allSatisfy {
        $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0))
      }
  }

  /// The `n`th `apns-id`: "00000000-0000-4000-8000-00000000000N" in hex, a version 4 UUID's shape.
  static func uuid(_ n: Int) -> String {
    let hex = String(n, radix: 16, uppercase: true)
    return "00000000-0000-4000-8000-" + String(repeating: "0", count: max(12 - hex.count, 0)) + hex
  }
}
