import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import PayServiceCore

/// A local stand-in for Apple Push Notification service, written from Apple's pages on sending
/// notification requests, token-based connections and APNs' responses: HTTP/2 over TLS only (ALPN
/// offers `h2` and nothing else; a client that speaks HTTP/1.1 gets its connection closed), on
/// 127.0.0.1 at an ephemeral port. It delivers nothing: it checks each push as APNs does and
/// records it.
///
/// - One team: its id, the id of its APNs key and the key's public half, which verifies the
///   provider tokens; the topics it may push to (`topics`, `addTopic`).
/// - Devices are registered with the topic of their token (`registerDevice`); a token can be
///   unregistered (`unregister`), and is then answered 410 `Unregistered` with the time.
/// - Faults are queued (`inject`) for the next pushes, of one device token if asked.
/// - Every request is recorded (`pushes`) with what it was answered, so that a test can count
///   exactly how many pushes each device got (`delivered(to:)`).
///
/// `APNsServerCore` lists the checks, their order and the reasons answered.
public final class APNsTestServer: Sendable {
  public typealias Gate = StripeTestServer.Gate

  /// A failure for a queued number of pushes, whatever they hold.
  public enum Fault: Sendable {
    /// 429 `TooManyRequests`, with `retry-after: seconds` when given.
    case tooManyRequests(retryAfter: Int?)
    /// 500 `InternalServerError`.
    case internalServerError
    /// 503 `ServiceUnavailable`, with `retry-after: seconds` when given.
    case serviceUnavailable(retryAfter: Int?)
    /// The TCP connection is reset when the push arrives: no answer.
    case reset
    /// The push is checked and recorded at once, and its answer held until `gate` is released.
    case hold(Gate)
  }

  /// One request as received, and what it was answered.
  public struct Push: Sendable, Equatable {
    /// The path's last segment for `/3/device/{token}`, as sent; "" for another path.
    public var deviceToken: String
    public var method: String
    public var path: String
    /// "HTTP/2.0": the server speaks nothing else.
    public var httpVersion: String
    public var topic: String?
    public var pushType: String?
    public var priority: String?
    /// The JWT of `authorization: bearer …`.
    public var providerToken: String?
    public var payload: String
    /// The status answered (also while held); 0 for a reset connection.
    public var status: Int
    /// APNs' `reason`; nil for 200 (and a reset).
    public var reason: String?
    /// The `apns-id` answered.
    public var apnsId: String?

    /// Whether APNs would deliver it: answered 200.
    public var accepted: Bool { status == 200 }
  }

  public let teamId: String
  public let keyId: String
  /// The CA (PEM) that issued the listener's certificate: what the client must trust.
  public let caPEM: String
  public let port: Int
  /// "https://localhost:PORT", the `apiBase` of a client.
  public var baseURL: String { "https://localhost:\(port)" }

  let core: APNsServerCore
  let listener: TestHTTPSListener

  /// Starts listening on 127.0.0.1 at an ephemeral port, on its own one-thread event loop group.
  /// - Parameters:
  ///   - teamId, keyId: what the provider tokens' `iss` and `kid` must be.
  ///   - publicKey: the APNs key's public half, which verifies the tokens.
  ///   - topics: the topics (bundle ids, order type identifiers) the team may push to.
  ///   - tokenUpdateIntervalSeconds: how long after the team's last provider token a new one is
  ///     answered 429 `TooManyProviderTokenUpdates` (APNs asks for no more than one every 20
  ///     minutes); 0 takes any.
  ///   - now: the clock (unix seconds) the tokens' `iat` is checked against.
  public init(
    teamId: String, keyId: String, publicKey: P256.Signing.PublicKey, topics: Set<String> = [],
    tokenUpdateIntervalSeconds: Int64 = 20 * 60,
    now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
  ) throws {
    self.teamId = teamId
    self.keyId = keyId
    let core = APNsServerCore(
      teamId: teamId, keyId: keyId, publicKey: publicKey, topics: topics,
      tokenUpdateIntervalSeconds: tokenUpdateIntervalSeconds, now: now)
    self.core = core
    let tls = try TestTLSCertificate(caName: "payservice APNs test CA")
    caPEM = tls.caPEM
    listener = try TestHTTPSListener(tls: try tls.serverContext(applicationProtocols: ["h2"]), backlog: 64) { operations, _ in
      _ = try operations.configureHTTP2Pipeline(
        mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()
      ) { stream in
        stream.eventLoop.makeCompletedFuture {
          try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
          try stream.pipeline.syncOperations.addHandler(APNsHTTPHandler(core: core))
        }
      }
      try operations.addHandler(APNsConnectionErrorHandler())
    }
    port = listener.port
  }

  deinit { shutdown() }

  /// Settings that reach this server with `keyPEM`: its ids, its URL, its CA as the only trust
  /// root, and the timeouts given.
  public func settings(keyPEM: String, connectTimeoutSeconds: Double = 30, requestTimeoutSeconds: Double = 60) -> APNsSettings {
    var settings = APNsSettings(keyPEM: keyPEM, keyId: keyId, teamId: teamId, apiBase: baseURL, trustRoots: .pem(caPEM))
    settings.connectTimeoutSeconds = connectTimeoutSeconds
    settings.requestTimeoutSeconds = requestTimeoutSeconds
    return settings
  }

  /// Lets the team push to `topic`.
  public func addTopic(_ topic: String) {
    core.state.withLock { _ = $0.topics.insert(topic) }
  }

  /// Registers a device token (hex) for `topic`, as a device's Wallet gets one for an order type.
  public func registerDevice(_ token: String, topic: String) {
    core.state.withLock { state in
      state.devices[token.lowercased()] = topic
      state.unregistered[token.lowercased()] = nil
    }
  }

  /// Marks a device token no longer active for its topic since `at` (milliseconds since 1970; now
  /// by default): its pushes are answered 410 `Unregistered` with that `timestamp`.
  public func unregister(_ token: String, at milliseconds: Int64? = nil) {
    let time = milliseconds ?? core.now() * 1000
    core.state.withLock { $0.unregistered[token.lowercased()] = time }
  }

  /// Queues `fault` for the next `times` pushes (to `deviceToken` only, when given). Faults are
  /// taken in the order queued.
  public func inject(_ fault: Fault, times: Int = 1, deviceToken: String? = nil) {
    guard times > 0 else { return }
    core.state.withLock {
      $0.faults.append(.init(fault: fault, remaining: times, deviceToken: deviceToken?.lowercased()))
    }
  }

  /// Every request received, in order.
  public var pushes: [Push] { core.state.withLock { $0.pushes } }

  /// The requests to `deviceToken` (whatever their case), in order.
  public func pushes(to deviceToken: String) -> [Push] {
    pushes.filter { $0.deviceToken.lowercased() == deviceToken.lowercased() }
  }

  /// How many pushes to `deviceToken` were accepted (200).
  public func delivered(to deviceToken: String) -> Int {
    pushes(to: deviceToken).filter(\.accepted).count
  }

  /// TCP connections accepted (before TLS and ALPN).
  public var connectionsAccepted: Int { listener.accepted }

  /// Writes the CA certificate to `directory` (for a client in another process); its path.
  public func writeCACertificate(to directory: URL) throws -> String {
    let url = directory.appendingPathComponent("apns-test-ca.pem")
    try caPEM.write(to: url, atomically: true, encoding: .utf8)
    return url.path
  }

  /// Stops listening, closes every connection and shuts the event loop group down. Idempotent.
  /// Call it from a thread that is not the server's event loop (any test thread will do).
  public func shutdown() {
    listener.shutdown()
  }
}
