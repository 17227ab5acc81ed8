import Foundation
import NIOCore
import NIOHTTP1
import PayServiceCore

/// Reads HTTP/1.1 requests on one connection of one environment's listener and answers each from
/// the core, one at a time.
final class AppStoreServerHTTPHandler: ChannelInboundHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  static let maximumBody = 1 << 16

  let core: AppStoreServerCore
  let environment: AppStoreAPIEnvironment
  var head: HTTPRequestHead?
  var body: [UInt8] = []
  var tooLarge = false
  /// A request is being held unanswered: nothing more is read or answered on this connection.
  var hanging = false

  init(core: AppStoreServerCore, environment: AppStoreAPIEnvironment) {
    self.core = core
    self.environment = environment
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
      let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
      let outcome = core.answer(
        environment: environment, method: head.method.rawValue, path: String(parts[0]),
        query: parts.count > 1 ? String(parts[1]) : nil, authorization: head.headers.first(name: "Authorization"),
        body: body)
      switch outcome {
      case .respond(let status, let text, let extra):
        let bytes = context.channel.allocator.buffer(string: text)
        var headers = HTTPHeaders()
        if !text.isEmpty && !extra.contains(where: { $0.0 == "Content-Type" }) {
          headers.add(name: "Content-Type", value: "application/json")
        }
        for (name, value) in extra { headers.add(name: name, value: value) }
        headers.add(name: "Content-Length", value: String(bytes.readableBytes))
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
          wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: headers))),
          promise: nil)
        if bytes.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(bytes))), promise: nil) }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !head.isKeepAlive {
          written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
      case .hang:
        hanging = true
      }
    }
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    context.close(promise: nil)
  }
}
