import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import X509

/// Reads HTTP/1.1 requests on one connection, answers each from the core, one at a time. The
/// merchant is read from the client certificate the TLS handshake verified.
final class AppleSessionHTTPHandler: ChannelInboundHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  static let maximumBody = 1 << 16

  let core: AppleSessionServerCore
  let closer: RawCloseHandler
  var head: HTTPRequestHead?
  var body: [UInt8] = []
  var tooLarge = false
  /// A request is being held unanswered: nothing more is read or answered on this connection.
  var hanging = false

  init(core: AppleSessionServerCore, closer: RawCloseHandler) {
    self.core = core
    self.closer = closer
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard !hanging else { return }
    switch unwrapInboundIn(data) {
    case .head(let head):
      self.head = head
      body = []
      tooLarge = false
    case .body(let chunk):
      if body.count + chunk.readableBytes > Self.maximumBody {
        tooLarge = true
      } else {
        body += chunk.readableBytesView
      }
    case .end:
      guard let head else { return }
      self.head = nil
      if tooLarge {
        context.close(promise: nil)
        return
      }
      let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? head.uri
      let outcome = core.answer(
        method: head.method.rawValue, path: path, contentType: head.headers.first(name: "Content-Type"), body: body,
        certificateMerchant: certificateMerchant(context: context))
      switch outcome {
      case .respond(let status, let text):
        let bytes = context.channel.allocator.buffer(string: text)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: text.hasPrefix("{") ? "application/json" : "text/plain")
        headers.add(name: "Content-Length", value: String(bytes.readableBytes))
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
          wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: headers))),
          promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(bytes))), promise: nil)
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !head.isKeepAlive {
          written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
      case .hang:
        hanging = true
      case .reset:
        hanging = true
        closer.reset()
      }
    }
  }

  /// The merchant identifier in the verified client certificate's subject UID.
  func certificateMerchant(context: ChannelHandlerContext) -> String? {
    guard let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self),
      let peer = tls.peerCertificate, let der = try? peer.toDERBytes(),
      let certificate = try? Certificate(derEncoded: der)
    else { return nil }
    for relativeName in certificate.subject {
      for attribute in relativeName where attribute.type == TestMerchantIdentityAuthority.userIDAttribute {
        return attribute.value.description
      }
    }
    return nil
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    context.close(promise: nil)
  }
}
