import NIOCore
import NIOHTTP1

/// What the test servers' handlers share: a request assembled from the parts NIO reads (its head
/// and a body of at most `maximumBody` bytes), and a whole response written back.
struct TestHTTPRequestReader {
  /// What one part made of the request so far.
  enum Read {
    case incomplete
    /// The body passed `maximumBody`: the handler closes the connection.
    case tooLarge
    case request(HTTPRequestHead, body: ByteBuffer)
  }

  let maximumBody: Int
  private var head: HTTPRequestHead?
  private var body = ByteBuffer()
  private var tooLarge = false

  init(maximumBody: Int) {
    self.maximumBody = maximumBody
  }

  mutating func take(_ part: HTTPServerRequestPart) -> Read {
    switch part {
    case .head(let head):
      self.head = head
      body.clear()
      tooLarge = false
      return .incomplete
    case .body(var chunk):
      if body.readableBytes + chunk.readableBytes > maximumBody {
        tooLarge = true
      } else {
        body.writeBuffer(&chunk)
      }
      return .incomplete
    case .end:
      guard let head else { return .incomplete }
      self.head = nil
      return tooLarge ? .tooLarge : .request(head, body: body)
    }
  }

  /// A request's path and query (the query nil when the URI has none).
  static func split(_ uri: String) -> (path: String, query: String?) {
    let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    return (String(parts[0]), parts.count > 1 ? String(parts[1]) : nil)
  }
}

enum TestHTTPResponse {
  /// Writes a whole response, with its Content-Length, and closes the connection after it when the
  /// request did not keep it alive.
  static func write(
    _ context: ChannelHandlerContext, status: Int, headers extra: [(String, String)], body text: String, keepAlive: Bool
  ) {
    let bytes = context.channel.allocator.buffer(string: text)
    var headers = HTTPHeaders()
    for (name, value) in extra { headers.add(name: name, value: value) }
    headers.add(name: "Content-Length", value: String(bytes.readableBytes))
    if !keepAlive { headers.add(name: "Connection", value: "close") }
    context.write(
      NIOAny(
        HTTPServerResponsePart.head(
          HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: headers))),
      promise: nil)
    if bytes.readableBytes > 0 { context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(bytes))), promise: nil) }
    let written = context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)))
    if !keepAlive {
      written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
  }
}
