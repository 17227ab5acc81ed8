import Foundation
import PayServiceCore
import PayServiceRemote

/// Apple's merchant validation endpoint as a `MerchantSessionClient`: one POST per session over
/// mutual TLS (`HTTPRemoteTransport`; the merchant identity certificate chain and key as the client
/// certificate; TLS 1.2 or later; the gateway's certificate verified, hostname included, against
/// the system's roots unless `trustRootsPEM` names others).
///
/// Apple's requirements ("Setting up your server",
/// https://developer.apple.com/documentation/applepayontheweb/setting-up-your-server): TLS 1.2+,
/// SNI (AsyncHTTPClient sends the host name), port 443. The request ("Requesting an Apple Pay
/// payment session",
/// https://developer.apple.com/documentation/applepayontheweb/requesting-an-apple-pay-payment-session)
/// is a JSON POST; the answer, a JSON object, goes back to the page unchanged.
///
/// Nothing is retried: the validation URL is meant for one session and the payment sheet is
/// waiting. The caller checks the URL (`MerchantSessionURLPolicy`) before calling.
public final class AppleMerchantSessionClient: MerchantSessionClient {
  private let transport: HTTPRemoteTransport
  private let identity: MerchantIdentity
  private let requestTimeoutSeconds: Double
  private let connectTimeoutSeconds: Double
  /// The largest answer read (Apple's sessions are a few kilobytes).
  static let maximumAnswerBytes = 1 << 20

  /// - Parameters:
  ///   - trustRootsPEM: the CA certificates (PEM) the gateway's certificate must chain to; nil
  ///     means the system's roots.
  /// - Throws: `RemoteSetupError` when the identity or the trust roots do not read as TLS needs them.
  public init(
    identity: MerchantIdentity, trustRootsPEM: String?, connectTimeoutSeconds: Double, requestTimeoutSeconds: Double
  ) throws {
    self.identity = identity
    self.requestTimeoutSeconds = requestTimeoutSeconds
    self.connectTimeoutSeconds = connectTimeoutSeconds
    var connection = RemoteConnectionSettings(
      connectTimeoutSeconds: connectTimeoutSeconds, requestTimeoutSeconds: requestTimeoutSeconds)
    connection.clientIdentity = RemoteClientIdentity(certificateChainPEM: identity.certificateChainPEM, keyPEM: identity.keyPEM)
    if let trustRootsPEM { connection.trustRoots = .pem(trustRootsPEM) }
    connection.idleTimeoutSeconds = 30
    connection.maximumAnswerBytes = Self.maximumAnswerBytes
    // `retriesConnecting` stays off: a failed connection fails the request at once with its own
    // error, rather than being tried again until the deadline, which would hide why and retry a
    // single-use URL.
    transport = try HTTPRemoteTransport(connection)
  }

  public func shutdown() {
    transport.shutdown()
  }

  public func startSession(_ endpoint: MerchantSessionEndpoint, body: [UInt8]) async -> MerchantSessionReply {
    let merchant = identity.merchantIdentifier
    if case .expired(let since) = identity.validity(at: ServiceClock().now()) {
      return .failed(
        MerchantSessionFailure(
          code: .identityCertificateExpired,
          message: """
            the merchant identity certificate for \(merchant) expired at \(since); create a new Merchant Identity \
            Certificate for \(merchant) in the Apple Developer account and configure it with its key
            """))
    }
    let request = RemoteRequest(
      method: .POST, url: endpoint.url, headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
      body: body)
    let response: RemoteResponse
    switch await transport.send(request) {
    case .success(let answered): response = answered
    case .failure(let failure): return .failed(self.failure(for: failure, endpoint: endpoint))
    }
    let status = response.status
    let json = try? JSONParser.parse(response.body)
    if status == 200 {
      guard let json, case .object = json else {
        return .failed(
          MerchantSessionFailure(
            code: .invalidResponse,
            message: "\(endpoint.host) answered 200 with something other than a JSON object; no merchant session",
            httpStatus: status))
      }
      return .session(json)
    }
    return .failed(Self.statusFailure(status: status, answer: json, body: body, merchant: merchant, host: endpoint.host))
  }

  // MARK: Failures

  /// A non-200 answer as a failure: Apple's `statusMessage` read for the two causes a merchant
  /// fixes in the developer account (domain, merchant), everything else by status.
  ///
  /// Apple answers `{"statusMessage": "Payment Services Exception …", "statusCode": "400"}`. Forms
  /// seen: "merchantId=<SHA-256> not registered for domain=<domain>" (400), "merchantId=… unauthorized
  /// to process transactions on behalf of merchantId=… reason=\"… is not a registered merchant in
  /// WWDR …\"" (400 per TN3103,
  /// https://developer.apple.com/documentation/technotes/tn3103-apple-pay-on-the-web-troubleshooting-guide;
  /// 417 in https://developer.apple.com/forums/thread/113866), "… not registered for service", and
  /// "Invalid session request -- missing merchant identifier" for a malformed body
  /// (https://developer.apple.com/forums/thread/49912), which stays an `httpStatus` failure.
  static func statusFailure(status: Int, answer: JSONValue?, body: [UInt8], merchant: String, host: String) -> MerchantSessionFailure {
    var statusMessage: String?
    if case .object(let object)? = answer, case .string(let text)? = object["statusMessage"] {
      statusMessage = RemoteText.quoted(text, limit: 600)
    }
    var domain = "the domain"
    if case .object(let request)? = try? JSONParser.parse(body), case .string(let context)? = request["initiativeContext"] {
      domain = "domain \(RemoteText.quoted(context, limit: 600))"
    }
    let apple = statusMessage.map { " (Apple: \"\($0)\")" } ?? ""
    let lowered = statusMessage?.lowercased() ?? ""
    if status == 400 || status == 417 || status == 403 {
      if lowered.contains("not registered for domain") || lowered.contains("domain verification")
        || lowered.contains("domain name") || lowered.contains("domain=")
      {
        return MerchantSessionFailure(
          code: .domainNotRegistered,
          message: """
            Apple answered \(status): \(domain) is not registered for \(merchant)\(apple); add and verify it under \
            the merchant identifier's Merchant Domains in the Apple Developer account
            """,
          httpStatus: status)
      }
      if lowered.contains("not a registered merchant") || lowered.contains("unauthorized")
        || lowered.contains("not registered for service") || lowered.contains("mass enablement")
      {
        return MerchantSessionFailure(
          code: .merchantUnknown,
          message: """
            Apple answered \(status): it does not know \(merchant) as a merchant for this certificate\(apple); check \
            merchantIdentifier and use the Merchant Identity Certificate Apple issued for it
            """,
          httpStatus: status)
      }
    }
    let what =
      switch status {
      case 500...599: "; Apple's gateway failed, the page may ask for a new session"
      case 404: "; the validation URL's path is not a payment session endpoint"
      default: ""
      }
    return MerchantSessionFailure(
      code: .httpStatus, message: "\(host) answered \(status)\(apple)\(what)", httpStatus: status)
  }

  /// A transport failure in words: timeouts, TLS alerts the gateway sent about our certificate,
  /// our verification of the gateway's certificate, and connections that failed.
  func failure(for failure: RemoteFailure, endpoint: MerchantSessionEndpoint) -> MerchantSessionFailure {
    let merchant = identity.merchantIdentifier
    let host = endpoint.host
    switch failure {
    case .requestTimeout:
      return MerchantSessionFailure(
        code: .timeout, message: "\(host) did not answer within \(RemoteText.seconds(requestTimeoutSeconds)) s")
    case .connectTimeout:
      return MerchantSessionFailure(
        code: .timeout,
        message: "no connection to \(host):\(endpoint.port) within \(RemoteText.seconds(connectTimeoutSeconds)) s")
    case .closedBeforeAnswer:
      return MerchantSessionFailure(code: .unreachable, message: "\(host) closed the connection before answering")
    case .tls(.alert("certificate_expired")):
      return MerchantSessionFailure(
        code: .identityCertificateExpired,
        message: """
          \(host) refused the merchant identity certificate as expired (TLS alert certificate_expired); create a \
          new Merchant Identity Certificate for \(merchant) in the Apple Developer account
          """)
    case .tls(.alert(let name)):
      return MerchantSessionFailure(
        code: .identityCertificateRejected,
        message: """
          \(host) rejected the merchant identity certificate (TLS alert \(name)): use the Merchant Identity \
          Certificate Apple issued for \(merchant), with its own key
          """)
    case .tls(.serverNotVerified(let reason)):
      return MerchantSessionFailure(
        code: .serverNotTrusted,
        message: """
          the certificate of \(host) did not verify (\(reason)): Apple's gateways chain to public roots; check \
          the trust roots configured and any TLS-intercepting proxy
          """)
    case .tls(.other(let reason)):
      return MerchantSessionFailure(code: .unreachable, message: "TLS with \(host) failed (\(reason))")
    case .refused:
      return MerchantSessionFailure(code: .unreachable, message: "\(host):\(endpoint.port) refused the connection")
    case .socket(let errno):
      let reason =
        switch errno {
        case ECONNRESET: "reset the connection"
        case EPIPE: "closed the connection"
        default: "could not be reached (errno \(errno))"
        }
      return MerchantSessionFailure(code: .unreachable, message: "\(host):\(endpoint.port) \(reason)")
    case .connection(let reason):
      return MerchantSessionFailure(code: .unreachable, message: "the connection to \(host) failed (\(reason))")
    case .shutDown:
      return MerchantSessionFailure(code: .unreachable, message: "the request to \(host) was not sent: the client is shut down")
    case .other(let type):
      return MerchantSessionFailure(code: .unreachable, message: "the request to \(host) failed (\(type))")
    }
  }
}
