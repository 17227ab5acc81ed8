import NIOCore
import NIOHTTP1

/// Reads HTTP/1.1 requests, hands each to the core and writes what it answers, one at a time per
/// connection (keep-alive; pipelined requests wait their turn). It keeps reading while a request
/// is being processed, so that a client closing its connection is noticed at once (a request
/// held before executing is then dropped).
final class AdyenHTTPHandler: ChannelInboundHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  let core: AdyenServerCore
  let closer: RawCloseHandler
  var reader = TestHTTPRequestReader(maximumBody: 1 << 20)
  var queue: [(request: AdyenIncomingRequest, keepAlive: Bool)] = []
  /// The request being processed (one at a time per connection).
  var current: AdyenExchange?
  var closing = false

  init(core: AdyenServerCore, closer: RawCloseHandler) {
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
      let (path, _) = TestHTTPRequestReader.split(head.uri)
      let request = AdyenIncomingRequest(
        method: head.method.rawValue, path: path, apiKey: head.headers.first(name: "X-API-Key"),
        idempotencyKey: head.headers.first(name: "Idempotency-Key"),
        body: String(decoding: body.readableBytesView, as: UTF8.self))
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

  func complete(_ outcome: AdyenOutcome, keepAlive: Bool, context: ChannelHandlerContext) {
    switch outcome {
    case .respond(let response):
      if !keepAlive { closing = true }
      TestHTTPResponse.write(
        context, status: response.status, headers: response.headers, body: response.body, keepAlive: keepAlive)
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
