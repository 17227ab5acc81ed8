import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PayServiceCore

/// A local stand-in for Apple Pay's Merchant Token Management API, HTTP/1.1 over real mutual TLS
/// on 127.0.0.1, so that `AppleMerchantTokenClient` talks to it as to apple-pay-gateway.apple.com.
///
/// - TLS: the server's certificate is issued by `trustRootsPEM`; a client certificate issued by
///   `identityAuthority` is REQUIRED: a client without one, or with another CA's, fails the
///   handshake. The caller is the merchant of its certificate's subject UID (as for
///   `AppleSessionTestServer`).
/// - Routes, exactly: `GET /paymentservices/v1/merchantId/{merchantId}/merchantToken/event/{eventId}`
///   and `POST /paymentservices/v1/merchantId/{merchantId}/merchantToken/unlink` (body
///   `{"merchantTokenIdentifier": …}`); anything else is 404.
/// - Checked in this order, each failure a 400 `ErrorResponse`
///   `{"statusCode":"400","subStatusCode":…,"errorMessage":…}`: the path's `{merchantId}` is the
///   certificate's merchant; `x-request-id` is present; `Content-Type` is `application/json`; the
///   event is one added for that merchant (`addEvent`), or the token one added for it (`addToken`).
///   The sub-status codes and messages are this server's own (`MerchantTokenServerCore.ErrorCode`):
///   Apple documents the shape only.
/// - An event is answered 200 as a `MerchantTokenEventResponse` (`eventType`,
///   `merchantTokenIdentifier`, `reason`, and `merchantTokenMetadata.cardMetadata` when it has a
///   card). Events do not expire here (Apple keeps them seven days).
/// - An unlink of a token of the merchant is answered 204 No Content, again for a token it
///   unlinked before: this server's reading of Apple's "invalidates the token" is that unlinking
///   is idempotent, and `unlinkCount(token:)` counts a token's unlink once.
public final class MerchantTokenTestServer: Sendable {
  public typealias Gate = StripeTestServer.Gate

  public enum Route: Sendable, Hashable {
    case event
    case unlink
  }

  /// A failure for the next request of a route (FIFO per route), whatever it asks.
  public enum Fault: Sendable {
    /// 500 with an `ErrorResponse`; nothing is done.
    case serverError
    /// 429 with an `ErrorResponse`; nothing is done.
    case rateLimited
    /// Resets the connection (TCP RST, no TLS close_notify) without answering; nothing is done.
    case reset
    /// Does what the request asks (an unlink takes effect), then holds its answer until the gate
    /// is released; a client that gave up meanwhile never gets it.
    case holdBeforeAnswer(Gate)
    /// Holds the request before anything is done until the gate is released; a client gone by
    /// then (a process killed) is never acted for, as at a server that had not read its request.
    case holdBeforeExecuting(Gate)
  }

  /// A request as received.
  public struct RecordedRequest: Sendable, Equatable {
    public var method: String
    public var path: String
    public var requestId: String?
    public var contentType: String?
    /// The body as text (empty for a GET).
    public var body: String
    /// The client certificate's subject UID.
    public var certificateMerchant: String?
    /// The status answered (or held to be answered); 0 for a reset.
    public var status: Int
  }

  public let port: Int
  /// "https://localhost:PORT": the client's `apiBase`.
  public var baseURL: String { "https://localhost:\(port)" }
  /// The CA (PEM) that issued the server's certificate: the client's `trustRootsPEM`.
  public let trustRootsPEM: String
  /// The authority whose merchant identity certificates the server accepts.
  public let identityAuthority: TestMerchantIdentityAuthority

  let listener: TestHTTPSListener
  let core = MerchantTokenServerCore()

  /// Starts listening on 127.0.0.1, an ephemeral port, on its own one-thread event loop group.
  /// - Parameter identityAuthority: the client certificate CA; a fresh one when nil.
  public init(identityAuthority: TestMerchantIdentityAuthority? = nil) throws {
    let authority = try identityAuthority ?? TestMerchantIdentityAuthority()
    self.identityAuthority = authority
    let tls = try TestTLSCertificate(caName: "payservice Apple Pay merchant token API test CA")
    trustRootsPEM = tls.caPEM
    let core = self.core
    listener = try TestHTTPSListener(tls: try tls.serverContext(clientCAPEM: authority.caPEM), backlog: 64) {
      operations, closer in
      try operations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: true)
      try operations.addHandler(MerchantTokenHTTPHandler(core: core, closer: closer))
    }
    port = listener.port
  }

  deinit { shutdown() }

  /// A merchant identity certificate and key the server accepts (from `identityAuthority`, valid
  /// from a day ago for `days` days).
  public func issueIdentity(
    merchantIdentifier: String, days: Int = 365, key: TestMerchantIdentity.KeyKind = .p256
  ) throws -> TestMerchantIdentity {
    try identityAuthority.issue(merchantIdentifier: merchantIdentifier, days: days, key: key)
  }

  /// `issueIdentity` loaded as the client configures it.
  public func merchantIdentity(_ merchantIdentifier: String, key: TestMerchantIdentity.KeyKind = .p256) throws
    -> MerchantIdentity
  {
    let issued = try issueIdentity(merchantIdentifier: merchantIdentifier, key: key)
    return try MerchantIdentity.load(
      certificatePEM: issued.certificatePEM, keyPEM: issued.keyPEM, merchantIdentifier: merchantIdentifier)
  }

  /// Settings that reach this server as `merchantIdentifier`, with a new identity certificate.
  public func settings(merchantIdentifier: String) throws -> MerchantTokenSettings {
    MerchantTokenSettings(
      identity: try merchantIdentity(merchantIdentifier), apiBase: baseURL, trustRootsPEM: trustRootsPEM)
  }

  /// Writes the server CA to `directory/merchant-token-api-test-ca.pem` and returns that path.
  public func writeTrustRoots(to directory: URL) throws -> String {
    let url = directory.appendingPathComponent("merchant-token-api-test-ca.pem")
    try trustRootsPEM.write(to: url, atomically: true, encoding: .utf8)
    return url.path
  }

  /// An event `merchantId` may fetch by `eventId` (replacing one of that id). `card` holds
  /// `cardMetadata`'s fields (`cardCountry`, `expirationDate`, `fpanSuffix`, `longDescription`,
  /// `shortDescription`), written as given.
  public func addEvent(
    eventId: String, eventType: String, merchantTokenIdentifier: String, reason: String,
    card: [String: String]? = nil, merchantId: String
  ) {
    let event = MerchantTokenServerCore.Event(
      eventType: eventType, merchantTokenIdentifier: merchantTokenIdentifier, reason: reason, card: card)
    core.state.withLock { $0.events["\(merchantId)\n\(eventId)"] = event }
  }

  /// A token of `merchantId` that it may unlink.
  public func addToken(_ id: String, merchantId: String) {
    _ = core.state.withLock { $0.tokens[merchantId, default: []].insert(id) }
  }

  /// Queues `fault` for the next request of `route`.
  public func inject(_ fault: Fault, route: Route) {
    core.state.withLock { $0.faults[route, default: []].append(fault) }
  }

  /// Requests that asked for `eventId` (whatever they were answered).
  public func eventRequests(eventId: String) -> Int {
    core.state.withLock { $0.eventRequests[eventId] ?? 0 }
  }

  /// Tokens of that identifier unlinked (once each per merchant, however often asked).
  public func unlinkCount(token: String) -> Int {
    core.state.withLock { $0.unlinkCounts[token] ?? 0 }
  }

  /// Whether `merchantId` unlinked `token`.
  public func isUnlinked(_ token: String, merchantId: String) -> Bool {
    core.state.withLock { $0.unlinked.contains("\(merchantId)\n\(token)") }
  }

  /// Every request received, in order.
  public var requests: [RecordedRequest] { core.state.withLock { $0.requests } }

  /// TCP connections accepted (before TLS: a client that fails the handshake counts).
  public var connectionsAccepted: Int { listener.accepted }

  /// Stops listening, closes every connection and shuts the event loop group down. Idempotent.
  /// Call it from a thread that is not the server's event loop.
  public func shutdown() {
    listener.shutdown()
  }
}
