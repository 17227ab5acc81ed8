import Foundation
import NIOCore
import NIOHTTP1

/// Reads HTTP/1.1 requests, hands each to the core and writes what it answers, one at a time per
/// connection (keep-alive; pipelined requests wait their turn). It keeps reading while a request
/// is being processed, unlike NIO's pipelining helper, so that a client closing its connection
/// is noticed at once (a request held before executing is then dropped).
final class StripeHTTPHandler: ChannelInboundHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  let core: StripeServerCore
  let closer: RawCloseHandler
  var reader = TestHTTPRequestReader(maximumBody: 1 << 20)
  var queue: [(request: StripeIncomingRequest, keepAlive: Bool)] = []
  /// The request being processed (one at a time per connection).
  var current: StripeExchange?
  var closing = false

  init(core: StripeServerCore, closer: RawCloseHandler) {
    self.core = core
    self.closer = closer
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch reader.take(unwrapInboundIn(data)) {
    case .incomplete:
      return
    case .tooLarge:
      context.close(promise: nil)
    case .request(let head, let body):
      let (path, query) = TestHTTPRequestReader.split(head.uri)
      let request = StripeIncomingRequest(
        method: head.method.rawValue, path: path, authorization: head.headers.first(name: "Authorization"),
        idempotencyKey: head.headers.first(name: "Idempotency-Key"),
        stripeVersion: head.headers.first(name: "Stripe-Version"),
        body: String(decoding: body.readableBytesView, as: UTF8.self), query: query ?? "")
      queue.append((request, head.isKeepAlive))
      next(context: context)
    }
  }

  func next(context: ChannelHandlerContext) {
    guard current == nil, !closing, !queue.isEmpty else { return }
    let (request, keepAlive) = queue.removeFirst()
    let exchange = core.exchange(for: request, eventLoop: context.eventLoop)
    current = exchange
    exchange.promise.futureResult.assumeIsolated().whenSuccess { outcome in
      self.current = nil
      self.complete(outcome, keepAlive: keepAlive, context: context)
      self.next(context: context)
    }
    exchange.start()
  }

  func complete(_ outcome: StripeOutcome, keepAlive: Bool, context: ChannelHandlerContext) {
    switch outcome {
    case .respond(let response):
      var headers = HTTPHeaders(response.headers)
      let bytes = context.channel.allocator.buffer(string: response.body)
      headers.add(name: "Content-Length", value: String(bytes.readableBytes))
      if !keepAlive { headers.add(name: "Connection", value: "close") }
      let head = HTTPResponseHead(
        version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
      context.write(wrapOutboundOut(.head(head)), promise: nil)
      context.write(wrapOutboundOut(.body(.byteBuffer(bytes))), promise: nil)
      let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
      if !keepAlive {
        closing = true
        written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
      }
    case .reset:
      closing = true
      closer.reset()
    case .drop:
      closing = true
      context.close(promise: nil)
    }
  }

  func channelInactive(context: ChannelHandlerContext) {
    closing = true
    queue.removeAll()
    current?.abandon()
    context.fireChannelInactive()
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    context.close(promise: nil)
  }
}

/// The first handler of a connection (nearest the socket, before TLS): closing through it skips
/// the TLS handler's orderly close_notify, and with SO_LINGER 0 the kernel sends a TCP RST. What
/// a client sees when a connection breaks after its request was received.
final class RawCloseHandler: ChannelInboundHandler {
  typealias InboundIn = ByteBuffer
  var context: ChannelHandlerContext?

  func handlerAdded(context: ChannelHandlerContext) { self.context = context }
  func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

  func reset() {
    guard let context else { return }
    if let socket = context.channel as? any SocketOptionProvider {
      _ = socket.setSoLinger(linger(l_onoff: 1, l_linger: 0))
    }
    context.close(promise: nil)
  }
}
