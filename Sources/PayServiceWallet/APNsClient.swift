import Foundation
import PayServiceCore
import PayServiceRemote
import Synchronization

/// Wallet order pushes sent to Apple Push Notification service over HTTP/2, with a token-based
/// connection. What each part follows:
///
/// - Wallet Orders, "Register a device for update notifications"
///   (https://developer.apple.com/documentation/walletorders/register-a-device-for-update-notifications):
///   when an order changes, send a push to each registered device's push token, with the order
///   type identifier as the push topic and an empty payload. The body is `{}`, an empty JSON
///   dictionary: APNs refuses a body with nothing in it (400 `PayloadEmpty`).
/// - "Sending notification requests to APNs"
///   (https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns):
///   `POST /3/device/{token}` over HTTP/2, with `authorization: bearer <provider token>`,
///   `apns-topic`, `apns-push-type` and `apns-priority`. Wallet's pages name no push type or
///   priority; an update that shows nothing and only makes Wallet fetch the order is what that page
///   calls a background push, `apns-push-type: background`, which must have `apns-priority: 5`
///   (10 is an error for it).
/// - "Establishing a token-based connection to APNs"
///   (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns):
///   the provider token is an ES256 JWT, header `{"alg":"ES256","kid":keyId}`, claims
///   `{"iss":teamId,"iat":now}`; APNs refuses a token issued more than an hour ago
///   (`ExpiredProviderToken`) and one made anew more often than every 20 minutes
///   (`TooManyProviderTokenUpdates`). One token serves every push and is made anew when it is
///   `tokenLifetimeSeconds` (50 minutes) old.
/// - "Handling notification responses from APNs"
///   (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns):
///   200 with `apns-id`; an error's JSON body `{"reason": "…"}` (with `timestamp` for 410).
///
/// What a push comes to (`WalletPushOutcome`): 200 is `.delivered`; 410 (`Unregistered`,
/// `ExpiredToken`) and 400 `BadDeviceToken` or `DeviceTokenNotForTopic` are `.gone`: that token is
/// no longer the device's for the topic; 429, 5xx and no answer are `.unavailable`, with
/// `Retry-After` when APNs sent one; any other answer is `.refused` with APNs' reason. A 403
/// `ExpiredProviderToken` makes a new token and sends the push once more with it (unless the token
/// was made within the last minute: then this clock is behind APNs', and a new one would not do
/// better). A push token that is not hex, or a topic that is not an identifier, is `.refused` with
/// status 0: nothing is sent. A push that met a kept connection APNs had just closed is given to a
/// new connection: nothing of it had been written.
///
/// Nothing here writes the key, a provider token or a device token into an outcome, a description
/// or an error.
public final class APNsClient: WalletPushService, CustomStringConvertible {
  /// How old a provider token gets before a new one is made: within the 20 to 60 minutes Apple asks.
  public static let tokenLifetimeSeconds: Int64 = 50 * 60
  /// The push type and priority of a Wallet order update.
  public static let pushType = "background"
  public static let priority = "5"
  /// A device token's hex digits: an even count within these bounds (today's tokens have 64; Apple
  /// says their length may change).
  public static let pushTokenDigits = 16...200
  /// The longest topic sent.
  public static let maximumTopicBytes = 255
  /// A token younger than this that APNs calls expired is not made again.
  static let freshSeconds: Int64 = 60
  /// How many times a push that found its kept connection closed is given to a new one.
  static let closedConnectionResends = 3

  private let transport: HTTPRemoteTransport
  private let settings: APNsSettings
  private let base: String
  private let signer: ES256JWT
  private let now: @Sendable () -> Int64
  /// The provider token in use and when it was issued.
  private let token = Mutex<(jwt: String, issuedAt: Int64)?>(nil)

  /// - Parameter now: the clock of the provider tokens, unix seconds.
  /// - Throws: `APNsSetupError` when the key is not a P-256 PKCS#8 PEM key, an id is not one,
  ///   `apiBase` is not an https URL with a host, or PEM trust roots hold no certificate.
  public init(settings: APNsSettings, now: @escaping @Sendable () -> Int64 = { ServiceClock().now() }) throws(APNsSetupError) {
    do {
      signer = try ES256JWT(pkcs8PEM: settings.keyPEM)
    } catch {
      switch error {
      case .notPKCS8: throw .keyNotPKCS8
      case .notP256: throw .keyNotP256
      }
    }
    for (name, value) in [("keyId", settings.keyId), ("teamId", settings.teamId)]
    where value.isEmpty || !value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
      throw .invalidIdentifier(name)
    }
    var base = settings.apiBase
    while base.hasSuffix("/") { base.removeLast() }
    guard let url = URL(string: base), url.scheme == "https", url.host?.isEmpty == false, url.path.isEmpty,
      url.query == nil, url.user == nil
    else {
      throw .invalidAPIBase
    }
    self.base = base
    self.settings = settings
    self.now = now
    var connection = RemoteConnectionSettings(
      connectTimeoutSeconds: settings.connectTimeoutSeconds, requestTimeoutSeconds: settings.requestTimeoutSeconds)
    connection.trustRoots = settings.trustRoots
    connection.requiresHTTP2 = true
    // Apple asks providers to keep a connection open across pushes rather than open one per burst:
    // kept an hour when idle (APNs may close it sooner; see below).
    connection.idleTimeoutSeconds = 3600
    // APNs closes connections it has kept idle; a push that meets one is given to a new one. A
    // connection lost under a push that was written is not: APNs may have taken it.
    connection.resendsUnwritten = Self.closedConnectionResends
    // An answer is a status, a few headers and at most a short JSON reason.
    connection.maximumAnswerBytes = 1 << 16
    do {
      transport = try HTTPRemoteTransport(connection)
    } catch {
      throw .invalidTrustRoots
    }
  }

  /// The server and the ids; never the key or a token.
  public var description: String { "APNs client (\(settings))" }

  public func shutdown() {
    transport.shutdown()
  }

  public func push(pushToken: String, topic: String) async -> WalletPushOutcome {
    if let problem = Self.pushTokenProblem(pushToken) {
      return .refused(status: 0, reason: "not sent: the push token \(problem)")
    }
    if let problem = Self.topicProblem(topic) {
      return .refused(status: 0, reason: "not sent: the topic \(problem)")
    }
    let jwt: String
    do {
      jwt = try providerToken()
    } catch {
      // Signing with a key that loaded does not fail; if it ever did, nothing was sent.
      return .unavailable(reason: "the provider token could not be signed; nothing was sent", retryAfterSeconds: nil)
    }
    let answer = await send(pushToken: pushToken, topic: topic, jwt: jwt)
    guard case .answered(403, "ExpiredProviderToken", _, _) = answer, !isFresh(jwt) else {
      return Self.outcome(answer)
    }
    // APNs holds the token too old (the process slept, or the clocks drifted): once more with a
    // new one. A token made within the last minute is not made again: a new one would be as old
    // to APNs, and making tokens often is an error of its own (TooManyProviderTokenUpdates).
    let fresh: String
    do {
      fresh = try renewProviderToken(replacing: jwt)
    } catch {
      return Self.outcome(answer)
    }
    return Self.outcome(await send(pushToken: pushToken, topic: topic, jwt: fresh))
  }

  // MARK: The provider token

  /// The token in use, or a new one when there is none or it is `tokenLifetimeSeconds` old.
  func providerToken() throws -> String {
    let time = now()
    if let current = token.withLock({ $0 }), time - current.issuedAt < Self.tokenLifetimeSeconds, time >= current.issuedAt {
      return current.jwt
    }
    return try renewProviderToken(replacing: token.withLock { $0?.jwt })
  }

  /// Whether `jwt` is the token in use and was made less than `freshSeconds` ago.
  private func isFresh(_ jwt: String) -> Bool {
    let time = now()
    return token.withLock { $0.map { $0.jwt == jwt && time - $0.issuedAt < Self.freshSeconds } ?? false }
  }

  /// A new token, unless another push already replaced `old`: then that one. Concurrent pushes
  /// that all met the same stale token make one new token between them.
  private func renewProviderToken(replacing old: String?) throws -> String {
    let time = now()
    let made = try makeProviderToken(issuedAt: time)
    return token.withLock { current in
      if let current, current.jwt != old { return current.jwt }
      current = (made, time)
      return made
    }
  }

  func makeProviderToken(issuedAt: Int64) throws -> String {
    var header = JSONObjectBuilder(capacity: 2)
    header.set("alg", "ES256")
    header.set("kid", settings.keyId)
    var claims = JSONObjectBuilder(capacity: 2)
    claims.set("iss", settings.teamId)
    claims.set("iat", .number(String(issuedAt)))
    return try signer.sign(header: header.object, payload: claims.object)
  }

  // MARK: One request

  enum Answer {
    /// APNs answered: the status, its `reason` (nil when the body had none), and the header that
    /// matters for it (`apns-id` for 200, `Retry-After` seconds otherwise).
    case answered(status: Int, reason: String?, apnsId: String?, retryAfter: Int?)
    case failed(RemoteFailure)
  }

  private func send(pushToken: String, topic: String, jwt: String) async -> Answer {
    let request = RemoteRequest(
      method: .POST, url: base + "/3/device/" + pushToken,
      headers: [
        ("authorization", "bearer " + jwt), ("apns-topic", topic), ("apns-push-type", Self.pushType),
        ("apns-priority", Self.priority),
      ],
      body: Array("{}".utf8))
    switch await transport.send(request) {
    case .failure(let failure):
      return .failed(failure)
    case .success(let response):
      var reason: String?
      if case .object(let object)? = try? JSONParser.parse(response.body), case .string(let text)? = object["reason"] {
        reason = Self.readable(text)
      }
      let retryAfter = response.retryAfter().map { Int(max($0, 0).rounded(.up)) }
      return .answered(status: response.status, reason: reason, apnsId: response.header("apns-id"), retryAfter: retryAfter)
    }
  }

  /// What an answer comes to.
  static func outcome(_ answer: Answer) -> WalletPushOutcome {
    switch answer {
    case .failed(.connection(let reason)):
      return .unavailable(reason: "no answer from APNs: the connection failed (\(readable(reason)))", retryAfterSeconds: nil)
    case .failed(let failure):
      return .unavailable(reason: "no answer from APNs: \(failure)", retryAfterSeconds: nil)
    case .answered(let status, let reason, let apnsId, let retryAfter):
      let said = reason ?? "HTTP \(status)"
      switch (status, reason) {
      case (200, _):
        return .delivered(apnsId: apnsId.map { readable($0) })
      case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"):
        return .gone(reason: said)
      case (429, _), (500...599, _):
        return .unavailable(reason: "APNs answered \(status) \(said)", retryAfterSeconds: retryAfter)
      default:
        return .refused(status: status, reason: said)
      }
    }
  }

  /// APNs' text as a message may quote it: printable ASCII, at most 100 characters.
  static func readable(_ text: String) -> String {
    RemoteText.quoted(String(String.UnicodeScalarView(text.unicodeScalars.filter(\.isASCII))), limit: 100)
  }

  // MARK: What is sent

  /// Why `token` is not a device token to put in a path, in words that do not quote it; nil when
  /// it is one.
  static func pushTokenProblem(_ token: String) -> String? {
    guard token.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x46) || ($0 >= 0x61 && $0 <= 0x66) })
    else { return "is not hex digits" }
    guard pushTokenDigits.contains(token.utf8.count), token.utf8.count % 2 == 0 else {
      return
        "has \(token.utf8.count) hex digits, not an even count from \(pushTokenDigits.lowerBound) to \(pushTokenDigits.upperBound)"
    }
    return nil
  }

  /// Why `topic` is not an order type identifier to send as `apns-topic`; nil when it is one.
  static func topicProblem(_ topic: String) -> String? {
    guard !topic.isEmpty else { return "is empty" }
    guard topic.utf8.count <= maximumTopicBytes else { return "is longer than \(maximumTopicBytes) bytes" }
    let allowed = topic.utf8.allSatisfy { byte in
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
        UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
        return true
      default:
        return false
      }
    }
    return allowed ? nil : "is not an identifier (letters, digits, '.', '-' and '_')"
  }
}
