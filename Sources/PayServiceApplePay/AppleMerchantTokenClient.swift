import Foundation
import PayServiceCore
import PayServiceRemote

/// Apple Pay's Merchant Token Management API as a `MerchantTokenService`, over mutual TLS with the
/// merchant identity certificate (`HTTPRemoteTransport`; the identity's chain and key as the client
/// certificate; the gateway verified, hostname included, against the system's roots unless
/// `trustRootsPEM` names others).
///
/// What Apple documents (https://developer.apple.com/documentation/merchanttokennotificationservices):
/// - "Get Details of a Merchant Token Event":
///   `GET /paymentservices/v1/merchantId/{merchantId}/merchantToken/event/{eventId}`, answered 200
///   with a `MerchantTokenEventResponse` (`eventType`, `merchantTokenIdentifier`, `reason`, and
///   `merchantTokenMetadata.cardMetadata` when Apple has it), or 400 and 500 with an
///   `ErrorResponse` (`statusCode`, `subStatusCode`, `errorMessage`). Apple keeps an event's
///   details seven days.
/// - "Invalidate a Merchant Token": `POST /paymentservices/v1/merchantId/{merchantId}/merchantToken/unlink`
///   with `{"merchantTokenIdentifier": …}`, answered 204 No Content, or 400 when the token is not
///   the merchant's.
/// - Both take `Content-Type: application/json` and an `x-request-id` (a fresh UUID per request).
///
/// `{merchantId}` is the identity's merchant identifier, percent-encoded as a path segment. An
/// event id or token that is not `MerchantTokenEventId.isValid` is never sent. Nothing is retried
/// here: the operation journal sends an unlink again, and Apple sends an unanswered notification
/// again. No reply quotes the certificate, the key or a whole body; Apple's `errorMessage` is
/// quoted bounded.
public final class AppleMerchantTokenClient: MerchantTokenService {
  /// The largest answer read: an event's details or an error are well under a kilobyte.
  public static let maximumAnswerBytes = 1 << 16
  /// The most of Apple's `errorMessage` a reason quotes.
  static let quotedMessageLimit = 200

  private let transport: HTTPRemoteTransport
  private let identity: MerchantIdentity
  private let settings: MerchantTokenSettings
  /// `{apiBase}/paymentservices/v1/merchantId/{merchantId}/merchantToken`
  private let tokenURL: String
  /// The API's host, as reasons name it.
  private let host: String

  /// - Throws: `MerchantTokenAPIBaseError` when `apiBase` is not an https URL of a host alone;
  ///   `RemoteSetupError` when the identity or the trust roots do not read as TLS needs them.
  public init(settings: MerchantTokenSettings) throws {
    var base = settings.apiBase
    while base.hasSuffix("/") { base.removeLast() }
    guard let url = URL(string: base), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty,
      url.path.isEmpty, url.query == nil, url.fragment == nil, url.user == nil
    else {
      throw MerchantTokenAPIBaseError(apiBase: settings.apiBase)
    }
    self.host = host
    self.settings = settings
    identity = settings.identity
    tokenURL =
      base + "/paymentservices/v1/merchantId/" + RemoteText.percentEncoded(settings.identity.merchantIdentifier)
      + "/merchantToken"
    var connection = RemoteConnectionSettings(
      connectTimeoutSeconds: settings.connectTimeoutSeconds, requestTimeoutSeconds: settings.requestTimeoutSeconds)
    connection.clientIdentity = RemoteClientIdentity(
      certificateChainPEM: settings.identity.certificateChainPEM, keyPEM: settings.identity.keyPEM)
    if let roots = settings.trustRootsPEM { connection.trustRoots = .pem(roots) }
    connection.idleTimeoutSeconds = 30
    connection.maximumAnswerBytes = Self.maximumAnswerBytes
    // A connection that fails fails the call at once, with its own error: the caller's journal
    // or Apple's next notification tries again.
    transport = try HTTPRemoteTransport(connection)
  }

  public func shutdown() {
    transport.shutdown()
  }

  // MARK: Event details

  public func event(_ eventId: String) async -> MerchantTokenEventReply {
    guard MerchantTokenEventId.isValid(eventId) else {
      return .notFound(
        status: 0,
        reason: "not sent: the event id is not 1 to 128 letters, digits, '-' and '_', so Apple has no such event")
    }
    let response: RemoteResponse
    switch await send(.GET, "/event/" + eventId) {
    case .success(let answered): response = answered
    case .failure(let problem): return .unavailable(reason: problem.text)
    }
    let status = response.status
    switch status {
    case 200:
      switch Self.details(response.body) {
      case .success(let details): return .event(details)
      case .failure(let problem):
        return .unavailable(
          reason: "\(host) answered 200 with something other than a merchant token event (\(problem.text))")
      }
    case 400, 404:
      return .notFound(
        status: status, reason: "\(host) answered \(status) for event \(eventId)\(Self.apple(response.body))")
    default:
      return .unavailable(reason: "\(host) answered \(status) for event \(eventId)\(Self.apple(response.body))")
    }
  }

  /// Why a call brought no answer, or a 200's body is not an event's details, in words.
  struct Problem: Error {
    var text: String
  }

  /// A `MerchantTokenEventResponse` read strictly: the three strings required, each 1 to 128
  /// printable characters, the token identifier a plain identifier; the card as
  /// `MerchantTokenCard.read` keeps it.
  static func details(_ body: [UInt8]) -> Result<MerchantTokenEventDetails, Problem> {
    guard case .object(let object)? = try? JSONParser.parse(body) else {
      return .failure(Problem(text: "not a JSON object"))
    }
    var texts: [String] = []
    for key in ["eventType", "merchantTokenIdentifier", "reason"] {
      guard case .string(let value)? = object[key] else { return .failure(Problem(text: "no \(key) string")) }
      guard !value.isEmpty, value.count <= MerchantTokenCard.maxFieldLength,
        value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
      else {
        return .failure(
          Problem(text: "\(key) is not 1 to \(MerchantTokenCard.maxFieldLength) printable characters"))
      }
      texts.append(value)
    }
    guard MerchantTokenEventId.isValid(texts[1]) else {
      return .failure(Problem(text: "merchantTokenIdentifier is not 1 to 128 letters, digits, '-' and '_'"))
    }
    return .success(
      MerchantTokenEventDetails(
        eventType: texts[0], merchantTokenIdentifier: texts[1], reason: texts[2],
        card: MerchantTokenCard.read(object["merchantTokenMetadata"])))
  }

  // MARK: Unlink

  public func unlink(_ merchantTokenIdentifier: String) async -> MerchantTokenUnlinkReply {
    guard MerchantTokenEventId.isValid(merchantTokenIdentifier) else {
      return .refused(
        status: 0, reason: "not sent: the merchant token identifier is not 1 to 128 letters, digits, '-' and '_'")
    }
    var body = JSONObjectBuilder(capacity: 1)
    body.set("merchantTokenIdentifier", merchantTokenIdentifier)
    let response: RemoteResponse
    switch await send(.POST, "/unlink", body: Array(JSONWriter.string(body.value).utf8)) {
    case .success(let answered): response = answered
    case .failure(let problem): return .unavailable(reason: problem.text)
    }
    let status = response.status
    switch status {
    case 200, 204:
      return .unlinked
    case 400, 403, 404:
      return .refused(
        status: status, reason: "\(host) answered \(status) to the unlink\(Self.apple(response.body))")
    default:
      return .unavailable(reason: "\(host) answered \(status) to the unlink\(Self.apple(response.body))")
    }
  }

  // MARK: What is sent and said

  /// Sends `path` (after the merchant's token URL) with Apple's headers, unless the identity
  /// certificate has expired: the answer, or why there is none.
  func send(_ method: RemoteRequest.Method, _ path: String, body: [UInt8]? = nil) async -> Result<RemoteResponse, Problem> {
    if let expired = expiredIdentity() { return .failure(Problem(text: expired)) }
    switch await transport.send(RemoteRequest(method: method, url: tokenURL + path, headers: Self.headers(), body: body)) {
    case .success(let answered): return .success(answered)
    case .failure(let failure): return .failure(Problem(text: reason(for: failure)))
    }
  }

  /// The headers Apple requires, with a fresh request id.
  static func headers() -> [(name: String, value: String)] {
    [("Content-Type", "application/json"), ("Accept", "application/json"), ("x-request-id", UUID().uuidString)]
  }

  /// ` (Apple: SUBSTATUS "errorMessage")` from an `ErrorResponse`, bounded; empty when the body is
  /// not one.
  static func apple(_ body: [UInt8]) -> String {
    guard case .object(let object)? = try? JSONParser.parse(body) else { return "" }
    var message: String?
    if case .string(let text)? = object["errorMessage"] { message = RemoteText.quoted(text, limit: quotedMessageLimit) }
    var subStatus: String?
    switch object["subStatusCode"] {
    case .string(let text)?: subStatus = RemoteText.quoted(text, limit: 32)
    case .number(let text)?: subStatus = text
    default: break
    }
    switch (subStatus, message) {
    case (let code?, let message?): return " (Apple: \(code) \"\(message)\")"
    case (nil, let message?): return " (Apple: \"\(message)\")"
    case (let code?, nil): return " (Apple: \(code))"
    case (nil, nil): return ""
    }
  }

  /// Why nothing is sent with an identity certificate past its end; nil when it is not.
  private func expiredIdentity() -> String? {
    guard case .expired(let since) = identity.validity(at: ServiceClock().now()) else { return nil }
    return """
      not sent: the merchant identity certificate for \(identity.merchantIdentifier) expired at \(since); create a new \
      Merchant Identity Certificate in the Apple Developer account and configure it with its key
      """
  }

  /// A request that brought back no answer, in words (the session client's, for this API).
  func reason(for failure: RemoteFailure) -> String {
    let merchant = identity.merchantIdentifier
    switch failure {
    case .requestTimeout:
      return "\(host) did not answer within \(RemoteText.seconds(settings.requestTimeoutSeconds)) s"
    case .connectTimeout:
      return "no connection to \(host) within \(RemoteText.seconds(settings.connectTimeoutSeconds)) s"
    case .closedBeforeAnswer:
      return "\(host) closed the connection before answering"
    case .tls(.alert(let name)):
      return """
        \(host) refused the merchant identity certificate (TLS alert \(name)): use the Merchant Identity Certificate \
        Apple issued for \(merchant), with its own key
        """
    case .tls(.serverNotVerified(let reason)):
      return
        "the certificate of \(host) did not verify (\(reason)); check the trust roots and any TLS-intercepting proxy"
    case .tls(.other(let reason)):
      return "TLS with \(host) failed (\(reason))"
    case .refused:
      return "\(host) refused the connection"
    case .socket(let errno):
      switch errno {
      case ECONNRESET: return "\(host) reset the connection"
      case EPIPE: return "\(host) closed the connection"
      default: return "\(host) could not be reached (errno \(errno))"
      }
    case .connection(let reason):
      return "the connection to \(host) failed (\(RemoteText.quoted(reason, limit: 100)))"
    case .shutDown:
      return "not sent: the merchant token client is shut down"
    case .other(let type):
      return "the request to \(host) failed (\(type))"
    }
  }
}

/// `applePay.merchantTokens.apiBase` is not an https URL of a host (and port) alone.
public struct MerchantTokenAPIBaseError: Error, Sendable, Equatable, CustomStringConvertible {
  public var apiBase: String

  public var description: String {
    "the merchant token API base \(RemoteText.quoted(apiBase, limit: 200)) is not an https URL of a host (and port) alone"
  }
}
