import Foundation

// The remote services payservice calls over HTTPS (Stripe, the App Store Server API, Apple's
// merchant validation) as one exchange: a request, and a response or a failure. The
// `PayServiceRemote` module sends them (AsyncHTTPClient over TLS); this core only describes them,
// so that it builds without SwiftNIO. Each client reads responses and failures into its own
// replies (`GatewayReply`, `AppStoreAPIFailure`, `MerchantSessionFailure`).

/// Something that sends requests to one remote service: `PayServiceRemote.HTTPRemoteTransport`.
public protocol RemoteTransport: Sendable {
  /// Sends `request` once; never throws: a request that brought back no answer is a failure.
  func send(_ request: RemoteRequest) async -> Result<RemoteResponse, RemoteFailure>
  /// Closes the connections; later requests fail with `RemoteFailure.shutDown`. Idempotent.
  func shutdown()
}

/// One HTTP request as a remote service's client makes it.
public struct RemoteRequest: Sendable, CustomStringConvertible {
  public enum Method: String, Sendable {
    case GET, POST, PUT, PATCH, DELETE
  }

  /// The header that carries `idempotencyKey` (Stripe's and Adyen's name for it).
  public static let idempotencyKeyHeader = "Idempotency-Key"

  public var method: Method
  /// The whole URL, path and query percent-encoded.
  public var url: String
  /// Sent in this order, after `User-Agent`. They may hold credentials: never written anywhere.
  public var headers: [(name: String, value: String)]
  public var body: [UInt8]?
  /// The service's idempotency key, for services that have them: a request sent again under the
  /// same key (a retry, or the same call after a lost answer) gets the first answer again.
  public var idempotencyKey: String?

  public init(
    method: Method, url: String, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil,
    idempotencyKey: String? = nil
  ) {
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
    self.idempotencyKey = idempotencyKey
  }

  /// Every header as sent, the idempotency key's last.
  public var allHeaders: [(name: String, value: String)] {
    headers + (idempotencyKey.map { [(Self.idempotencyKeyHeader, $0)] } ?? [])
  }

  /// The method and the URL without its query: no header, no body, no query value.
  public var description: String {
    "\(method.rawValue) \(url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url)"
  }
}

/// An answer: any status, with the headers and the body read (up to the transport's limit).
public struct RemoteResponse: Sendable {
  public var status: Int
  public var headers: [(name: String, value: String)]
  public var body: [UInt8]

  public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// The first value of the header `name`, whatever its case.
  public func header(_ name: String) -> String? {
    headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
  }

  /// The seconds `Retry-After` asks to wait before the next request (`RetryAfter.seconds`).
  public func retryAfter(now: Double = Date().timeIntervalSince1970) -> Double? {
    RetryAfter.seconds(header("Retry-After"), now: now)
  }
}

/// Why a request brought back no answer, as the transport saw it. It never holds the request:
/// not its headers (credentials), its body or its query.
public enum RemoteFailure: Error, Sendable, Equatable, CustomStringConvertible {
  /// No answer within the request timeout.
  case requestTimeout
  /// No connection (TCP and TLS) within the connect timeout.
  case connectTimeout
  /// The server closed the connection before the answer was complete.
  case closedBeforeAnswer
  /// The server refused the connection.
  case refused
  /// A socket call failed with this errno (ECONNRESET, EPIPE, EHOSTUNREACH, …).
  case socket(errno: Int32)
  /// The connection failed otherwise: the channel's reason.
  case connection(String)
  case tls(RemoteTLSProblem)
  /// The client was shut down: nothing was sent.
  case shutDown
  /// Anything else: the error's type, not its text.
  case other(type: String)

  /// Whether a connection was lost under the request (closed, reset or broken): what a kept
  /// connection the server dropped looks like, so that the request may not have reached it.
  public var lostConnection: Bool {
    switch self {
    case .closedBeforeAnswer: return true
    case .socket(let errno): return errno == ECONNRESET || errno == EPIPE
    default: return false
    }
  }

  /// In words, naming no host: for services whose replies carry a reason.
  public var description: String {
    switch self {
    case .requestTimeout: return "no answer within the request timeout"
    case .connectTimeout: return "cannot connect within the connect timeout"
    case .closedBeforeAnswer: return "the connection was closed before the answer"
    case .refused, .socket, .connection: return "the connection failed"
    case .tls(let problem): return "TLS failed: \(problem)"
    case .shutDown: return "the client is shut down; nothing was sent"
    case .other(let type): return "the request failed (\(type))"
    }
  }
}

/// What went wrong in a TLS handshake.
public enum RemoteTLSProblem: Sendable, Equatable, CustomStringConvertible {
  /// A TLS alert the server sent (its name as in RFC 8446, such as `unknown_ca`): about the
  /// client's certificate, mostly.
  case alert(String)
  /// The server's certificate did not verify against the trust roots, or does not name the host.
  case serverNotVerified(String)
  case other(String)

  public var description: String {
    switch self {
    case .alert(let name): return "TLS alert \(name)"
    case .serverNotVerified(let reason): return "the server's certificate did not verify (\(reason))"
    case .other(let reason): return reason
    }
  }
}

/// How a transport reaches its service: TLS (1.2 or later, the server's certificate and host name
/// verified), timeouts and connection reuse. Redirects are never followed: a request's
/// credentials go to the URL it names and nowhere else.
public struct RemoteConnectionSettings: Sendable, Equatable {
  /// The CA certificates the server's certificate must chain to.
  public enum TrustRoots: Sendable, Equatable {
    case system
    /// PEM text of one or more certificates.
    case pem(String)
    /// A PEM file's path, read when the first connection is made.
    case file(String)
  }

  public var trustRoots: TrustRoots = .system
  /// The client certificate for mutual TLS; nil: none.
  public var clientIdentity: RemoteClientIdentity?
  public var connectTimeoutSeconds: Double
  /// From sending the request to the last byte of the answer.
  public var requestTimeoutSeconds: Double
  /// How long a kept connection may wait for the next request.
  public var idleTimeoutSeconds: Double = 60
  /// Connections kept open to one host; nil: AsyncHTTPClient's default.
  public var maxConnectionsPerHost: Int?
  /// Whether a connection that failed is tried again until the request's deadline; if not, the
  /// request fails at once with the connection's own error (which says why).
  public var retriesConnecting = false
  /// The largest answer read; a larger one is a failure.
  public var maximumAnswerBytes = 1 << 22
  /// Whether only HTTP/2 will do (APNs speaks nothing else). Every transport offers HTTP/2 and
  /// HTTP/1.1 by ALPN and takes what the server picks; with this set, an answer that came over
  /// HTTP/1.x is a failure (`.connection`), whatever it says.
  public var requiresHTTP2 = false
  /// How many times a request is given to a new connection when the kept connection it was given
  /// to had closed meanwhile (the server's close or GOAWAY raced it): nothing of it was written
  /// then, so it cannot be done twice. 0: that failure is returned.
  public var resendsUnwritten = 0

  public init(connectTimeoutSeconds: Double, requestTimeoutSeconds: Double) {
    self.connectTimeoutSeconds = connectTimeoutSeconds
    self.requestTimeoutSeconds = requestTimeoutSeconds
  }
}

/// A client certificate chain and its private key, for mutual TLS (Apple's merchant identity).
/// Its description names no key material.
public struct RemoteClientIdentity: Sendable, Equatable, CustomStringConvertible {
  /// Leaf first, one PEM certificate each.
  public var certificateChainPEM: [String]
  /// One PEM private key block.
  public var keyPEM: String

  public init(certificateChainPEM: [String], keyPEM: String) {
    self.certificateChainPEM = certificateChainPEM
    self.keyPEM = keyPEM
  }

  public var description: String { "a client certificate chain of \(certificateChainPEM.count) and its key" }
}

/// Why a transport could not be set up from its settings: the TLS library's reason, which
/// quotes no PEM text.
public enum RemoteSetupError: Error, Sendable, Equatable, CustomStringConvertible {
  /// `TrustRoots.pem` holds no certificate that reads.
  case trustRoots(String)
  /// The client certificate chain or its key does not read.
  case clientIdentity(String)

  public var description: String {
    switch self {
    case .trustRoots(let reason), .clientIdentity(let reason): return reason
    }
  }
}
