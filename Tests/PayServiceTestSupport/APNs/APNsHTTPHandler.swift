import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// Reads the one request of an HTTP/2 stream (as HTTP/1 parts, through NIO's HTTP/2 to HTTP/1
/// codec), answers it from the core and ends the stream with the answer.
final class APNsHTTPHandler: ChannelInboundHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  let core: APNsServerCore
  /// Bodies are kept up to this; past it the request is too large for APNs whatever it holds.
  static let maximumBody = 1 << 16
  var head: HTTPRequestHead?
  var body: [UInt8] = []
  var bodyTooLarge = false
  var answered = false

  init(core: APNsServerCore) {
    self.core = core
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard !answered else { return }
    switch unwrapInboundIn(data) {
    case .head(let head):
      self.head = head
      return
    case .body(let chunk):
      if body.count + chunk.readableBytes > Self.maximumBody {
        bodyTooLarge = true
      } else {
        body += chunk.readableBytesView
      }
      return
    case .end:
      break
    }
    guard let head else { return }
    let request = APNsIncomingRequest(
      method: head.method.rawValue, path: TestHTTPRequestReader.split(head.uri).path,
      httpVersion: "HTTP/\(head.version.major).\(head.version.minor)",
      headers: head.headers.map { ($0.name.lowercased(), $0.value) }, body: body, bodyTooLarge: bodyTooLarge)
    answered = true
    switch core.answer(request) {
    case .respond(let status, let headers, let body):
      Self.write(context, status: status, headers: headers, body: body)
    case .hold(let gate, let status, let headers, let body):
      let released = context.eventLoop.makePromise(of: Void.self)
      gate.arrive()
      gate.whenReleased { released.succeed(()) }
      released.futureResult.assumeIsolated().whenSuccess {
        Self.write(context, status: status, headers: headers, body: body)
      }
    case .reset:
      // The stream's parent is the TCP connection, whose pipeline starts with the raw closer.
      let closer = try? context.channel.parent?.pipeline.syncOperations.handler(type: RawCloseHandler.self)
      closer?.reset()
    }
  }

  /// The answer as one HEADERS frame (and a DATA frame when there is a body), ending the stream.
  static func write(_ context: ChannelHandlerContext, status: Int, headers extra: [(String, String)], body: String) {
    let bytes = context.channel.allocator.buffer(string: body)
    var headers = HTTPHeaders()
    for (name, value) in extra { headers.add(name: name, value: value) }
    headers.add(name: "content-length", value: String(bytes.readableBytes))
    context.write(
      NIOAny(
        HTTPServerResponsePart.head(
          HTTPResponseHead(version: .init(major: 2, minor: 0), status: .init(statusCode: status), headers: headers))),
      promise: nil)
    if bytes.readableBytes > 0 { context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(bytes))), promise: nil) }
    context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    context.close(promise: nil)
  }
}

/// Closes a connection whose HTTP/2 failed: a client that did not negotiate `h2` (and so sent an
/// HTTP/1.1 request instead of the connection preface), or any protocol error.
final class APNsConnectionErrorHandler: ChannelInboundHandler {
  typealias InboundIn = Any

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    context.close(promise: nil)
  }
}
