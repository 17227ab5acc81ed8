import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import PayServiceCore

/// Apple's merchant validation endpoint as a `MerchantSessionClient`: one POST per session over
/// mutual TLS (AsyncHTTPClient; the merchant identity certificate chain and key as the client
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
  private let client: HTTPClient
  private let identity: MerchantIdentity
  private let requestTimeoutSeconds: Double
  private let connectTimeoutSeconds: Double
  /// The largest answer read (Apple's sessions are a few kilobytes).
  static let maximumAnswerBytes = 1 << 20

  /// - Parameters:
  ///   - trustRootsPEM: the CA certificates (PEM) the gateway's certificate must chain to; nil
  ///     means the system's roots.
  public init(
    identity: MerchantIdentity, trustRootsPEM: String?, connectTimeoutSeconds: Double, requestTimeoutSeconds: Double
  ) throws {
    self.identity = identity
    self.requestTimeoutSeconds = requestTimeoutSeconds
    self.connectTimeoutSeconds = connectTimeoutSeconds
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.minimumTLSVersion = .tlsv12
    tls.certificateVerification = .fullVerification
    tls.certificateChain = try identity.certificateChainPEM.map { .certificate(try NIOSSLCertificate(bytes: Array($0.utf8), format: .pem)) }
    tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.keyPEM.utf8), format: .pem))
    if let trustRootsPEM {
      tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(trustRootsPEM.utf8)))
    }
    var configuration = HTTPClient.Configuration(
      tlsConfiguration: tls,
      timeout: .init(connect: Self.amount(connectTimeoutSeconds), read: Self.amount(requestTimeoutSeconds)))
    // A failed connection fails the request at once with its own error, rather than being tried
    // again until the deadline (which would hide why, and retry a single-use URL).
    configuration.connectionPool.retryConnectionEstablishment = false
    configuration.connectionPool.idleTimeout = .seconds(30)
    configuration.redirectConfiguration = .disallow
    configuration.decompression = .disabled
    client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
  }

  deinit {
    // A client must be shut down before it goes; one shut down already just says so.
    try? client.syncShutdown()
  }

  public func shutdown() {
    try? client.syncShutdown()
  }

  static func amount(_ seconds: Double) -> TimeAmount { .milliseconds(Int64(max(seconds, 0.001) * 1000)) }

  public func startSession(_ endpoint: MerchantSessionEndpoint, body: [UInt8]) async -> MerchantSessionReply {
    let merchant = identity.merchantIdentifier
    if case .expired(let since) = identity.validity(at: Int64(Date().timeIntervalSince1970)) {
      return .failed(
        MerchantSessionFailure(
          code: .identityCertificateExpired,
          message: """
            the merchant identity certificate for \(merchant) expired at \(since); create a new Merchant Identity \
            Certificate for \(merchant) in the Apple Developer account and configure it with its key
            """))
    }
    var request = HTTPClientRequest(url: endpoint.url)
    request.method = .POST
    request.headers.add(name: "Content-Type", value: "application/json")
    request.headers.add(name: "Accept", value: "application/json")
    request.headers.add(name: "User-Agent", value: "payservice/\(PayServiceVersion.current)")
    request.body = .bytes(NIOCore.ByteBuffer(bytes: body))

    let response: HTTPClientResponse
    let bytes: NIOCore.ByteBuffer
    do {
      response = try await client.execute(request, timeout: Self.amount(requestTimeoutSeconds))
      bytes = try await response.body.collect(upTo: Self.maximumAnswerBytes)
    } catch {
      return .failed(failure(for: error, endpoint: endpoint))
    }
    let status = Int(response.status.code)
    let json = try? JSONParser.parse(Array(bytes.readableBytesView))
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
      statusMessage = quoted(text)
    }
    var domain = "the domain"
    if case .object(let request)? = try? JSONParser.parse(body), case .string(let context)? = request["initiativeContext"] {
      domain = "domain \(quoted(context))"
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
  func failure(for error: any Error, endpoint: MerchantSessionEndpoint) -> MerchantSessionFailure {
    let merchant = identity.merchantIdentifier
    let host = endpoint.host
    if let error = error as? HTTPClientError {
      switch error {
      case .deadlineExceeded, .readTimeout, .writeTimeout:
        return MerchantSessionFailure(
          code: .timeout, message: "\(host) did not answer within \(Self.seconds(requestTimeoutSeconds)) s")
      case .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout:
        return MerchantSessionFailure(
          code: .timeout, message: "no connection to \(host):\(endpoint.port) within \(Self.seconds(connectTimeoutSeconds)) s")
      case .remoteConnectionClosed:
        return MerchantSessionFailure(code: .unreachable, message: "\(host) closed the connection before answering")
      default: break
      }
    }
    if let tls = Self.tlsProblem(error) {
      switch tls {
      case .alert("certificate_expired"):
        return MerchantSessionFailure(
          code: .identityCertificateExpired,
          message: """
            \(host) refused the merchant identity certificate as expired (TLS alert certificate_expired); create a \
            new Merchant Identity Certificate for \(merchant) in the Apple Developer account
            """)
      case .alert(let name):
        return MerchantSessionFailure(
          code: .identityCertificateRejected,
          message: """
            \(host) rejected the merchant identity certificate (TLS alert \(name)): use the Merchant Identity \
            Certificate Apple issued for \(merchant), with its own key
            """)
      case .serverNotVerified(let reason):
        return MerchantSessionFailure(
          code: .serverNotTrusted,
          message: """
            the certificate of \(host) did not verify (\(reason)): Apple's gateways chain to public roots; check \
            the trust roots configured and any TLS-intercepting proxy
            """)
      case .other(let reason):
        return MerchantSessionFailure(code: .unreachable, message: "TLS with \(host) failed (\(reason))")
      }
    }
    if let error = error as? IOError {
      let reason =
        switch error.errnoCode {
        case ECONNREFUSED: "refused the connection"
        case ECONNRESET: "reset the connection"
        case EPIPE: "closed the connection"
        default: "could not be reached (errno \(error.errnoCode))"
        }
      return MerchantSessionFailure(code: .unreachable, message: "\(host):\(endpoint.port) \(reason)")
    }
    if let error = error as? ChannelError {
      if case .connectTimeout = error {
        return MerchantSessionFailure(
          code: .timeout, message: "no connection to \(host):\(endpoint.port) within \(Self.seconds(connectTimeoutSeconds)) s")
      }
      return MerchantSessionFailure(code: .unreachable, message: "the connection to \(host) failed (\(error))")
    }
    if let error = error as? NIOSSLError, case .uncleanShutdown = error {
      return MerchantSessionFailure(code: .unreachable, message: "\(host) closed the connection before answering")
    }
    let described = String(describing: error)
    if described.contains("connection refused") || described.contains("Connection refused") {
      return MerchantSessionFailure(code: .unreachable, message: "\(host):\(endpoint.port) refused the connection")
    }
    return MerchantSessionFailure(
      code: .unreachable, message: "the request to \(host) failed (\(String(describing: type(of: error))))")
  }

  enum TLSProblem: Equatable {
    /// A TLS alert the server sent (its name as in RFC 8446, such as `unknown_ca`).
    case alert(String)
    /// Our verification of the server's certificate failed.
    case serverNotVerified(String)
    case other(String)
  }

  /// What a BoringSSL error says: an alert the peer sent (`…_ALERT_UNKNOWN_CA`), a failed
  /// verification of the peer (`CERTIFICATE_VERIFY_FAILED`), or something else.
  static func tlsProblem(_ error: any Error) -> TLSProblem? {
    var reasons: [String] = []
    switch error {
    case let error as NIOSSLError:
      switch error {
      case .handshakeFailed(let inner): reasons = inner.reasons
      case .uncleanShutdown: return nil
      default: reasons = ["\(error)"]
      }
    case let error as BoringSSLError:
      reasons = error.reasons
    case let error as NIOSSLExtraError:
      if error == .failedToValidateHostname || error == .serverHostnameImpossibleToMatch {
        return .serverNotVerified("it does not name the host")
      }
      return .other("\(error)")
    default:
      return nil
    }
    for reason in reasons {
      if let range = reason.range(of: "ALERT_") {
        let name = reason[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }.lowercased()
        return .alert(name.isEmpty ? "unknown" : name)
      }
      if reason.contains("CERTIFICATE_REQUIRED") { return .alert("certificate_required") }
    }
    if reasons.contains(where: { $0.contains("CERTIFICATE_VERIFY_FAILED") }) {
      return .serverNotVerified("certificate verify failed")
    }
    return .other(reasons.first.map { String($0.split(separator: ":").last ?? Substring($0)) } ?? "TLS error")
  }

  static func seconds(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
  }

  /// A peer's text made safe to quote: at most 600 characters, control characters dropped.
  static func quoted(_ text: String) -> String {
    let cleaned = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
    return cleaned.count > 600 ? String(cleaned.prefix(600)) + "…" : cleaned
  }
}

extension BoringSSLError {
  /// The reason strings of the error queue ("error:…:SSL routines:…:TLSV1_ALERT_UNKNOWN_CA").
  var reasons: [String] {
    switch self {
    case .sslError(let errors), .unknownError(let errors), .invalidSNIName(let errors), .failedToSetALPN(let errors):
      return errors.map { "\($0)" }
    default: return ["\(self)"]
    }
  }
}
