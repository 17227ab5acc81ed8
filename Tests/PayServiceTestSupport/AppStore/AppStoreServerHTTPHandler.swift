import Foundation
import NIOCore
import NIOHTTP1
import PayServiceCore

/// Reads HTTP/1.1 requests on one connection of one environment's listener and answers each from
/// the core, one at a time.
final class AppStoreServerHTTPHandler: ChannelInboundHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  let core: AppStoreServerCore
  let environment: AppStoreAPIEnvironment
  var reader = TestHTTPRequestReader(maximumBody: 1 << 16)
  /// A request is being held unanswered: nothing more is read or answered on this connection.
  var hanging = false

  init(core: AppStoreServerCore, environment: AppStoreAPIEnvironment) {
    self.core = core
    self.environment = environment
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard !hanging else { return }
    switch reader.take(unwrapInboundIn(data)) {
    case .incomplete:
      return
    case .tooLarge:
      context.close(promise: nil)
    case .request(let head, let body):
      let (path, query) = TestHTTPRequestReader.split(head.uri)
      let outcome = core.answer(
        environment: environment, method: head.method.rawValue, path: path, query: query,
        authorization: head.headers.first(name: "Authorization"), body: Array(body.readableBytesView))
      switch outcome {
      case .respond(let status, let text, let extra):
        var headers = extra
        if !text.isEmpty && !extra.contains(where: { $0.0 == "Content-Type" }) {
          headers.insert(("Content-Type", "application/json"), at: 0)
        }
        TestHTTPResponse.write(context, status: status, headers: headers, body: text, keepAlive: head.isKeepAlive)
      case .hang:
        hanging = true
      }
    }
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    context.close(promise: nil)
  }
}
