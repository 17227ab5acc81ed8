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

  let core: AppleSessionServerCore
  let closer: RawCloseHandler
  var reader = TestHTTPRequestReader(maximumBody: 1 << 16)
  /// A request is being held unanswered: nothing more is read or answered on this connection.
  var hanging = false

  init(core: AppleSessionServerCore, closer: RawCloseHandler) {
    self.core = core
    self.closer = closer
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard !hanging else { return }
    switch reader.take(unwrapInboundIn(data)) {
    case .incomplete:
      return
    case .tooLarge:
      context.close(promise: nil)
    case .request(let head, let body):
      let outcome = core.answer(
        method: head.method.rawValue, path: TestHTTPRequestReader.split(head.uri).path,
        contentType: head.headers.first(name: "Content-Type"), body: Array(body.readableBytesView),
        certificateMerchant: Self.certificateMerchant(context: context))
      switch outcome {
      case .respond(let status, let text):
        TestHTTPResponse.write(
          context, status: status, headers: [("Content-Type", text.hasPrefix("{") ? "application/json" : "text/plain")],
          body: text, keepAlive: head.isKeepAlive)
      case .hang:
        hanging = true
      case .reset:
        hanging = true
        closer.reset()
      }
    }
  }

  /// The merchant identifier in the verified client certificate's subject UID (the merchant
  /// token test server reads its callers so too).
  static func certificateMerchant(context: ChannelHandlerContext) -> String? {
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
