import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import PayServiceCore
import Synchronization

/// A remote service reached over HTTPS through AsyncHTTPClient: TLS 1.2 or later, the server's
/// certificate and host name verified against `RemoteConnectionSettings.trustRoots`, the client
/// identity presented when the settings hold one (mutual TLS), connections kept and reused,
/// redirects never followed (a request's credentials would go with it). Every request carries
/// `User-Agent: payservice/<version>`.
///
/// A failure is classified (`RemoteFailure`) from the error's kind only: nothing of the request
/// (its credentials) or of the error's text beyond TLS reasons and channel names is kept.
public final class HTTPRemoteTransport: RemoteTransport {
  private let client: HTTPClient
  private let settings: RemoteConnectionSettings
  private let isOpen = Mutex(true)

  /// - Throws: `RemoteSetupError` when PEM trust roots hold no certificate that reads, or the
  ///   client identity does not read. A trust-roots file is read at the first connection.
  public init(_ settings: RemoteConnectionSettings) throws(RemoteSetupError) {
    self.settings = settings
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.minimumTLSVersion = .tlsv12
    tls.certificateVerification = .fullVerification
    switch settings.trustRoots {
    case .system: break
    case .file(let path): tls.trustRoots = .file(path)
    case .pem(let text):
      let roots: [NIOSSLCertificate]
      do {
        roots = try NIOSSLCertificate.fromPEMBytes(Array(text.utf8))
      } catch {
        throw .trustRoots(String(describing: error))
      }
      guard !roots.isEmpty else { throw .trustRoots("the trust roots hold no PEM certificate") }
      tls.trustRoots = .certificates(roots)
    }
    if let identity = settings.clientIdentity {
      do {
        tls.certificateChain = try identity.certificateChainPEM.map {
          .certificate(try NIOSSLCertificate(bytes: Array($0.utf8), format: .pem))
        }
        tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.keyPEM.utf8), format: .pem))
      } catch {
        throw .clientIdentity(String(describing: error))
      }
    }
    var configuration = HTTPClient.Configuration(
      tlsConfiguration: tls,
      timeout: .init(connect: Self.amount(settings.connectTimeoutSeconds), read: Self.amount(settings.requestTimeoutSeconds)))
    configuration.connectionPool.idleTimeout = Self.amount(settings.idleTimeoutSeconds)
    if let limit = settings.maxConnectionsPerHost {
      configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = limit
    }
    configuration.connectionPool.retryConnectionEstablishment = settings.retriesConnecting
    configuration.redirectConfiguration = .disallow
    // HTTP/2 when the server picks it by ALPN (offered as "h2", then "http/1.1"), else HTTP/1.1.
    configuration.httpVersion = .automatic
    configuration.decompression = .disabled
    client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
  }

  deinit {
    // A client must be shut down before it goes.
    shutdown()
  }

  /// Seconds as NIO's time amount: at least a millisecond, at most a year.
  static func amount(_ seconds: Double) -> TimeAmount {
    .milliseconds(Int64(min(max(seconds, 0.001), 365 * 86_400) * 1000))
  }

  public func send(_ request: RemoteRequest) async -> Result<RemoteResponse, RemoteFailure> {
    var outgoing = HTTPClientRequest(url: request.url)
    outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
    outgoing.headers.add(name: "User-Agent", value: "payservice/\(PayServiceVersion.current)")
    for (name, value) in request.allHeaders { outgoing.headers.add(name: name, value: value) }
    if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
    do {
      var response: HTTPClientResponse
      var resent = 0
      while true {
        do {
          response = try await client.execute(outgoing, timeout: Self.amount(settings.requestTimeoutSeconds))
          break
        } catch let error where resent < settings.resendsUnwritten && Self.unwritten(error) {
          resent += 1
        }
      }
      let body = try await response.body.collect(upTo: settings.maximumAnswerBytes)
      if settings.requiresHTTP2 && response.version.major != 2 {
        return .failure(.connection("the server answered over HTTP/\(response.version.major).\(response.version.minor), not HTTP/2"))
      }
      return .success(
        RemoteResponse(
          status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
          body: Array(body.readableBytesView)))
    } catch {
      return .failure(Self.failure(of: error))
    }
  }

  /// Whether `error` says the request was given to a kept connection that had closed meanwhile
  /// (the server's close or HTTP/2 GOAWAY raced it, and the pool had not seen it yet), so that
  /// nothing of it was written: NIO's I/O on a closed channel, or AsyncHTTPClient cancelling a
  /// request that reached a closing HTTP/2 connection (not a cancelled task).
  static func unwritten(_ error: any Error) -> Bool {
    if let error = error as? ChannelError, case .ioOnClosedChannel = error { return true }
    if let error = error as? HTTPClientError, error == .cancelled { return !Task.isCancelled }
    return false
  }

  /// Closes the connections; later requests fail with `.shutDown`. Idempotent. From an event loop
  /// thread (where blocking would deadlock) the shutdown is begun and not waited for.
  public func shutdown() {
    guard markClosed() else { return }
    if client.eventLoopGroup.makeIterator().contains(where: { $0.inEventLoop }) {
      client.shutdown { _ in }
    } else {
      try? client.syncShutdown()
    }
  }

  /// As `shutdown`, from an async context: waits for the connections to close without blocking a
  /// thread.
  public func close() async {
    guard markClosed() else { return }
    try? await client.shutdown()
  }

  /// Marks the transport closed: whether it was open.
  private func markClosed() -> Bool {
    isOpen.withLock { open in
      defer { open = false }
      return open
    }
  }

  // MARK: Failures

  /// What an error of AsyncHTTPClient, NIO or BoringSSL says about the request.
  static func failure(of error: any Error) -> RemoteFailure {
    if let error = error as? HTTPClientError {
      switch error {
      case .deadlineExceeded, .readTimeout, .writeTimeout: return .requestTimeout
      case .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout: return .connectTimeout
      case .remoteConnectionClosed: return .closedBeforeAnswer
      case .alreadyShutdown: return .shutDown
      default: break
      }
    }
    if let error = error as? NIOSSLError, case .uncleanShutdown = error { return .closedBeforeAnswer }
    if let problem = tlsProblem(error) { return .tls(problem) }
    if let error = error as? IOError {
      return error.errnoCode == ECONNREFUSED ? .refused : .socket(errno: error.errnoCode)
    }
    if let error = error as? ChannelError {
      if case .connectTimeout = error { return .connectTimeout }
      return .connection(String(describing: error))
    }
    if String(describing: error).contains("onnection refused") { return .refused }
    return .other(type: String(describing: type(of: error)))
  }

  /// What a TLS error says: an alert the peer sent (`…_ALERT_UNKNOWN_CA`), a failed verification
  /// of the peer (`CERTIFICATE_VERIFY_FAILED`, a certificate for another host), or something else;
  /// nil for an error that is not TLS's.
  static func tlsProblem(_ error: any Error) -> RemoteTLSProblem? {
    var reasons: [String] = []
    switch error {
    case let error as NIOSSLError:
      switch error {
      case .handshakeFailed(let inner): reasons = inner.reasons
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
