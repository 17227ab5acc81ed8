import Crypto
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization
import SwiftASN1
import X509

/// A throwaway certificate authority and the server certificate it issued, made fresh for each
/// test server (Stripe, Adyen, the App Store, Apple's sessions, APNs): the leaf names DNS
/// `localhost` and IP `127.0.0.1`, is good for TLS server authentication, and is valid from an hour
/// ago for a year. A client trusts `caPEM` (and only it) to talk to the server exactly as it would
/// to the real service.
struct TestTLSCertificate: Sendable {
  let caPEM: String
  let leafDER: [UInt8]
  let leafKeyPEM: String

  /// - Parameter caName: the CA's common name, which says whose test server it is.
  init(caName commonName: String, now: Date = Date()) throws {
    let caKey = P256.Signing.PrivateKey()
    let leafKey = P256.Signing.PrivateKey()
    let notBefore = now.addingTimeInterval(-3_600)
    let notAfter = now.addingTimeInterval(365 * 86_400)
    let caName = try DistinguishedName {
      OrganizationName("payservice tests")
      CommonName(commonName)
    }
    let ca = try Certificate(
      version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(caKey.publicKey),
      notValidBefore: notBefore, notValidAfter: notAfter, issuer: caName, subject: caName,
      signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions {
        Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
        Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        SubjectKeyIdentifier(hash: Certificate.PublicKey(caKey.publicKey))
      },
      issuerPrivateKey: .init(caKey))
    let leaf = try Certificate(
      version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(leafKey.publicKey),
      notValidBefore: notBefore, notValidAfter: notAfter, issuer: caName,
      subject: try DistinguishedName { CommonName("localhost") },
      signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions {
        Critical(BasicConstraints.notCertificateAuthority)
        Critical(KeyUsage(digitalSignature: true))
        try ExtendedKeyUsage([.serverAuth])
        SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
        AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: Certificate.PublicKey(caKey.publicKey)).keyIdentifier)
      },
      issuerPrivateKey: .init(caKey))
    caPEM = try ca.serializeAsPEM().pemString
    var serializer = DER.Serializer()
    try serializer.serialize(leaf)
    leafDER = serializer.serializedBytes
    leafKeyPEM = leafKey.pemRepresentation
  }

  /// The server side of TLS: the leaf certificate and key, TLS 1.2 or later, and ALPN offering
  /// only `applicationProtocols` (`http/1.1` for the servers that speak nothing else, `h2` for the
  /// APNs test server). With `clientCAPEM`, a client certificate issued by it is required (no
  /// hostname check: a client certificate names a merchant, not a host).
  func serverContext(clientCAPEM: String? = nil, applicationProtocols: [String] = ["http/1.1"]) throws -> NIOSSLContext {
    var configuration = TLSConfiguration.makeServerConfiguration(
      certificateChain: [.certificate(try NIOSSLCertificate(bytes: leafDER, format: .der))],
      privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(leafKeyPEM.utf8), format: .pem)))
    configuration.minimumTLSVersion = .tlsv12
    configuration.applicationProtocols = applicationProtocols
    if let clientCAPEM {
      configuration.certificateVerification = .noHostnameVerification
      configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(clientCAPEM.utf8)))
    }
    return try NIOSSLContext(configuration: configuration)
  }
}

/// What the test servers share below HTTP: a TLS listener on 127.0.0.1 at an ephemeral port, on its
/// own one-thread event loop group, that counts the connections it accepts and closes them all at
/// `shutdown`.
final class TestHTTPSListener: Sendable {
  /// The connections, shared with the channel initializer.
  private final class Connections: Sendable {
    struct State {
      var open: [ObjectIdentifier: any Channel] = [:]
      var accepted = 0
      var isShutDown = false
    }

    let state = Mutex(State())
  }

  let port: Int
  private let group: MultiThreadedEventLoopGroup
  private let serverChannel: any Channel
  private let connections = Connections()

  /// - Parameter handlers: adds the HTTP handlers after the raw close handler and TLS.
  init(
    tls: NIOSSLContext, backlog: Int,
    handlers: @escaping @Sendable (ChannelPipeline.SynchronousOperations, RawCloseHandler) throws -> Void
  ) throws {
    let connections = self.connections
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    self.group = group
    do {
      serverChannel = try ServerBootstrap(group: group)
        .serverChannelOption(ChannelOptions.backlog, value: Int32(backlog))
        .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
          channel.eventLoop.makeCompletedFuture {
            let id = ObjectIdentifier(channel)
            connections.state.withLock {
              $0.accepted += 1
              $0.open[id] = channel
            }
            channel.closeFuture.whenComplete { _ in _ = connections.state.withLock { $0.open.removeValue(forKey: id) } }
            let closer = RawCloseHandler()
            let operations = channel.pipeline.syncOperations
            try operations.addHandler(closer)
            try operations.addHandler(NIOSSLServerHandler(context: tls))
            try handlers(operations, closer)
          }
        }
        .bind(host: "127.0.0.1", port: 0).wait()
    } catch {
      try? group.syncShutdownGracefully()
      throw error
    }
    port = serverChannel.localAddress?.port ?? 0
  }

  /// TCP connections accepted (before TLS: a client that fails the handshake counts).
  var accepted: Int { connections.state.withLock { $0.accepted } }

  /// Connections open now.
  var open: Int { connections.state.withLock { $0.open.count } }

  /// Stops listening, closes every connection and shuts the event loop group down. Idempotent.
  /// Call it from a thread that is not the listener's event loop (any test thread will do).
  func shutdown() {
    let channels = connections.state.withLock { state -> [any Channel]? in
      defer { state.isShutDown = true }
      return state.isShutDown ? nil : Array(state.open.values)
    }
    guard let channels else { return }
    serverChannel.close(promise: nil)
    for channel in channels { channel.close(promise: nil) }
    try? group.syncShutdownGracefully()
  }
}
