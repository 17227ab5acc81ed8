import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A local stand-in for Apple's merchant validation endpoint (`POST /paymentservices/startSession`
/// and `POST /paymentservices/paymentSession` on an Apple Pay gateway), HTTP/1.1 over real mutual
/// TLS on 127.0.0.1, so that the real client talks to it as it would to
/// apple-pay-gateway.apple.com.
///
/// - TLS: the server's certificate is issued by `serverCAPEM` (a client must trust it), and the
///   server REQUIRES a client certificate issued by `identityAuthority` (its own test "Apple
///   merchant identity" CA): a client without one, or with another CA's certificate, fails the
///   handshake.
/// - The merchant is the client certificate's subject UID. The JSON body must be an object whose
///   `merchantIdentifier` is that merchant, registered here; `displayName` 1–64 characters;
///   `initiative` "web"; `initiativeContext` one of the merchant's registered domains. Otherwise
///   400 with `{"statusMessage":"Payment Services Exception …","statusCode":"400"}` in Apple's
///   wording (see `AppleSessionServerCore`).
/// - A valid request gets 200 and a merchant session object shaped like Apple's (epochTimestamp,
///   expiresAt an hour later, merchantSessionIdentifier, nonce, merchantIdentifier as Apple's
///   upper-case hex hash, domainName, displayName, signature, operationalAnalyticsIdentifier,
///   retries 0, pspId). Sessions are deterministic: the ids derive from SHA-256 of the merchant, the
///   domain and the server's session counter, the timestamps from the injected clock.
public final class AppleSessionTestServer: Sendable {
  /// A failure for the next request (FIFO), whatever it asks.
  public enum Fault: Sendable, Equatable {
    /// Never answers; the connection stays open until the client gives up (or the server shuts down).
    case hang
    /// Resets the connection (TCP RST, no TLS close_notify) without answering.
    case reset
    /// 500 with an Apple-style error object.
    case internalServerError
    /// 503 with an Apple-style error object.
    case serviceUnavailable
    /// 200 with a body that is not JSON (an HTML error page, as a misrouted proxy would send).
    case notJSON
  }

  /// A request as received.
  public struct RecordedRequest: Sendable, Equatable {
    public var method: String
    public var path: String
    /// The Content-Type header, if any.
    public var contentType: String?
    public var body: String
    /// The client certificate's subject UID.
    public var certificateMerchant: String?
    /// The status answered; 0 when none was (a hang or a reset).
    public var status: Int
  }

  public let port: Int
  public let host = "localhost"
  /// "https://localhost:PORT"
  public var baseURL: String { "https://\(host):\(port)" }
  /// What Apple Pay JS would hand `onvalidatemerchant`: "https://localhost:PORT/paymentservices/startSession".
  public var validationURL: String { baseURL + "/paymentservices/startSession" }
  /// The documented endpoint: "https://localhost:PORT/paymentservices/paymentSession".
  public var paymentSessionURL: String { baseURL + "/paymentservices/paymentSession" }
  /// The `additionalHosts` entry that admits this server: "localhost:PORT".
  public var additionalHost: String { "\(host):\(port)" }
  /// The CA (PEM) that issued the server's certificate: what the client must trust.
  public let serverCAPEM: String
  /// The authority whose merchant identity certificates the server accepts.
  public let identityAuthority: TestMerchantIdentityAuthority

  let listener: TestHTTPSListener
  let core: AppleSessionServerCore

  /// Starts listening on 127.0.0.1, an ephemeral port, on its own one-thread event loop group.
  /// - Parameters:
  ///   - registrations: merchant identifier → the domains registered and verified for it.
  ///   - now: the clock (unix seconds) for the sessions' timestamps.
  ///   - identityAuthority: the client certificate CA; a fresh one when nil.
  public init(
    registrations: [String: [String]], now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) },
    identityAuthority: TestMerchantIdentityAuthority? = nil
  ) throws {
    let authority = try identityAuthority ?? TestMerchantIdentityAuthority()
    self.identityAuthority = authority
    let tls = try TestTLSCertificate(caName: "payservice Apple Pay gateway test CA")
    serverCAPEM = tls.caPEM
    let core = AppleSessionServerCore(registrations: registrations, now: now)
    self.core = core
    listener = try TestHTTPSListener(tls: try tls.serverContext(clientCAPEM: authority.caPEM), backlog: 64) {
      operations, closer in
      try operations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: true)
      try operations.addHandler(AppleSessionHTTPHandler(core: core, closer: closer))
    }
    port = listener.port
  }

  deinit { shutdown() }

  /// A merchant identity certificate and key from `identityAuthority` (valid from a day ago for
  /// `days` days).
  public func issueIdentity(
    merchantIdentifier: String, days: Int = 365, key: TestMerchantIdentity.KeyKind = .rsa2048
  ) throws -> TestMerchantIdentity {
    try identityAuthority.issue(merchantIdentifier: merchantIdentifier, days: days, key: key)
  }

  /// Writes the server CA to `directory/apple-gateway-test-ca.pem` and returns that path.
  public func writeServerCA(to directory: URL) throws -> String {
    let url = directory.appendingPathComponent("apple-gateway-test-ca.pem")
    try serverCAPEM.write(to: url, atomically: true, encoding: .utf8)
    return url.path
  }

  /// Queues `fault` for the next request.
  public func inject(_ fault: Fault) {
    core.state.withLock { $0.faults.append(fault) }
  }

  /// Merchant sessions issued (200 answers).
  public var sessionCount: Int { core.state.withLock { $0.sessionsIssued } }

  /// TCP connections accepted (before TLS: a client that fails the handshake counts).
  public var connectionsAccepted: Int { listener.accepted }

  /// Connections open now.
  public var openConnections: Int { listener.open }

  /// Every request received, in order.
  public var requests: [RecordedRequest] { core.state.withLock { $0.requests } }

  /// Stops listening, closes every connection and shuts the event loop group down. Idempotent.
  /// Call it from a thread that is not the server's event loop.
  public func shutdown() {
    listener.shutdown()
  }

}
