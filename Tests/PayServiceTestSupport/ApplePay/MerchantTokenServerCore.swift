import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import PayServiceCore
import Synchronization

/// What `MerchantTokenTestServer` does with one request.
enum MerchantTokenOutcome {
  /// Answers `status` with `body` (JSON, or nothing for 204).
  case respond(status: Int, body: String)
  /// Answers as `.respond` once the gate is released.
  case hold(MerchantTokenTestServer.Gate, status: Int, body: String)
  /// Resets the connection without answering.
  case reset
  /// Waits for the gate, then, if the client is still connected, decides and answers.
  case holdBeforeDeciding(MerchantTokenTestServer.Gate, decide: @Sendable () -> MerchantTokenOutcome)
}

/// The state and the answers of `MerchantTokenTestServer`, shared by its connections.
///
/// Apple documents the routes, the headers, the 200 and 204 bodies and the `ErrorResponse` shape
/// (`statusCode`, `subStatusCode`, `errorMessage`), but no `subStatusCode` values or messages: the
/// ones below (`ErrorCode`) are this server's own, plausible in form, and nothing should depend on
/// them beyond this server.
final class MerchantTokenServerCore: Sendable {
  /// The `ErrorResponse`s this server answers: status, `subStatusCode`, `errorMessage`. Apple
  /// documents the shape, not these values.
  enum ErrorCode: String {
    case missingRequestId = "40001"
    case contentType = "40002"
    case merchantMismatch = "40003"
    case eventNotFound = "40004"
    case tokenNotFound = "40005"
    case malformedBody = "40006"
    case notFound = "40400"
    case rateLimited = "42900"
    case internalError = "50000"

    var status: Int {
      switch self {
      case .notFound: 404
      case .rateLimited: 429
      case .internalError: 500
      default: 400
      }
    }

    var message: String {
      switch self {
      case .missingRequestId: "Missing required header x-request-id"
      case .contentType: "Content-Type must be application/json"
      case .merchantMismatch: "Merchant identifier does not match the merchant identity certificate"
      case .eventNotFound: "Merchant token event not found"
      case .tokenNotFound: "Merchant token not found for this merchant"
      case .malformedBody: "Invalid request body: merchantTokenIdentifier is required"
      case .notFound: "Resource not found"
      case .rateLimited: "Too many requests"
      case .internalError: "Internal server error"
      }
    }

    /// `{"statusCode":"400","subStatusCode":"…","errorMessage":"…"}`
    var body: String {
      JSONWriter.string(
        JSONValue.object(
          JSONObject([
            ("statusCode", .string(String(status))), ("subStatusCode", .string(rawValue)),
            ("errorMessage", .string(message)),
          ])))
    }
  }

  struct Event {
    var eventType: String
    var merchantTokenIdentifier: String
    var reason: String
    var card: [String: String]?
  }

  struct State {
    /// "merchant\neventId" → the event.
    var events: [String: Event] = [:]
    /// merchant → its tokens.
    var tokens: [String: Set<String>] = [:]
    /// "merchant\ntoken" of the tokens unlinked.
    var unlinked: Set<String> = []
    var unlinkCounts: [String: Int] = [:]
    var eventRequests: [String: Int] = [:]
    var faults: [MerchantTokenTestServer.Route: [MerchantTokenTestServer.Fault]] = [:]
    var requests: [MerchantTokenTestServer.RecordedRequest] = []
  }

  let state = Mutex(State())

  /// A request's route and what its path names, nil when it is not one of the two.
  enum Routed {
    case event(merchant: String, eventId: String)
    case unlink(merchant: String)

    var route: MerchantTokenTestServer.Route {
      switch self {
      case .event: .event
      case .unlink: .unlink
      }
    }
  }

  static func route(method: String, path: String) -> Routed? {
    let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    guard parts.count >= 7, parts[0].isEmpty, parts[1] == "paymentservices", parts[2] == "v1", parts[3] == "merchantId",
      parts[5] == "merchantToken", let merchant = parts[4].removingPercentEncoding, !merchant.isEmpty
    else { return nil }
    if method == "GET", parts.count == 8, parts[6] == "event", let eventId = parts[7].removingPercentEncoding,
      !eventId.isEmpty
    {
      return .event(merchant: merchant, eventId: eventId)
    }
    if method == "POST", parts.count == 7, parts[6] == "unlink" { return .unlink(merchant: merchant) }
    return nil
  }

  /// The answer to one request; `certificateMerchant` is the verified client certificate's UID.
  func answer(
    method: String, path: String, requestId: String?, contentType: String?, body: [UInt8], certificateMerchant: String?
  ) -> MerchantTokenOutcome {
    let routed = Self.route(method: method, path: path)
    let (index, fault) = state.withLock { state -> (Int, MerchantTokenTestServer.Fault?) in
      state.requests.append(
        .init(
          method: method, path: path, requestId: requestId, contentType: contentType,
          body: String(decoding: body, as: UTF8.self), certificateMerchant: certificateMerchant, status: 0))
      guard let routed else { return (state.requests.count - 1, nil) }
      if case .event(_, let eventId) = routed { state.eventRequests[eventId, default: 0] += 1 }
      let fault = state.faults[routed.route]?.isEmpty == false ? state.faults[routed.route]?.removeFirst() : nil
      return (state.requests.count - 1, fault)
    }
    @Sendable func recorded(_ outcome: MerchantTokenOutcome) -> MerchantTokenOutcome {
      switch outcome {
      case .respond(let status, _), .hold(_, let status, _): state.withLock { $0.requests[index].status = status }
      case .reset, .holdBeforeDeciding: break
      }
      return outcome
    }
    guard let routed else { return recorded(Self.error(.notFound)) }
    switch fault {
    case .serverError?: return recorded(Self.error(.internalError))
    case .rateLimited?: return recorded(Self.error(.rateLimited))
    case .reset?: return .reset
    case .holdBeforeExecuting(let gate)?:
      return .holdBeforeDeciding(gate) { [self] in
        recorded(
          decide(
            routed, requestId: requestId, contentType: contentType, body: body, certificateMerchant: certificateMerchant))
      }
    case .holdBeforeAnswer?, nil: break
    }
    let answer = decide(
      routed, requestId: requestId, contentType: contentType, body: body, certificateMerchant: certificateMerchant)
    if case .holdBeforeAnswer(let gate)? = fault, case .respond(let status, let text) = answer {
      return recorded(.hold(gate, status: status, body: text))
    }
    return recorded(answer)
  }

  static func error(_ code: ErrorCode) -> MerchantTokenOutcome {
    .respond(status: code.status, body: code.body)
  }

  private func decide(
    _ routed: Routed, requestId: String?, contentType: String?, body: [UInt8], certificateMerchant: String?
  ) -> MerchantTokenOutcome {
    let merchant: String
    switch routed {
    case .event(let named, _), .unlink(let named): merchant = named
    }
    // The caller is the merchant its certificate names; the path must name the same one.
    guard let certificateMerchant, certificateMerchant == merchant else { return Self.error(.merchantMismatch) }
    guard let requestId, !requestId.trimmingCharacters(in: .whitespaces).isEmpty else {
      return Self.error(.missingRequestId)
    }
    let mediaType = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
    guard mediaType == "application/json" else { return Self.error(.contentType) }
    switch routed {
    case .event(_, let eventId):
      guard let event = state.withLock({ $0.events["\(merchant)\n\(eventId)"] }) else {
        return Self.error(.eventNotFound)
      }
      return .respond(status: 200, body: JSONWriter.string(Self.json(event)))
    case .unlink:
      guard case .object(let object)? = try? JSONParser.parse(body),
        case .string(let token)? = object["merchantTokenIdentifier"], !token.isEmpty
      else { return Self.error(.malformedBody) }
      let known = state.withLock { state -> Bool in
        guard state.tokens[merchant]?.contains(token) == true else { return false }
        if state.unlinked.insert("\(merchant)\n\(token)").inserted { state.unlinkCounts[token, default: 0] += 1 }
        return true
      }
      return known ? .respond(status: 204, body: "") : Self.error(.tokenNotFound)
    }
  }

  /// A `MerchantTokenEventResponse`: the card's fields in key order under
  /// `merchantTokenMetadata.cardMetadata`, when the event has a card.
  static func json(_ event: Event) -> JSONValue {
    var object = JSONObjectBuilder(capacity: 4)
    object.set("eventType", event.eventType)
    object.set("merchantTokenIdentifier", event.merchantTokenIdentifier)
    object.set("reason", event.reason)
    if let card = event.card {
      let fields = JSONObject(card.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })
      object.set("merchantTokenMetadata", JSONValue.object(JSONObject([("cardMetadata", .object(fields))])))
    }
    return object.value
  }
}

/// Reads HTTP/1.1 requests on one connection and answers each from the core, one at a time; the
/// merchant is the verified client certificate's subject UID.
final class MerchantTokenHTTPHandler: ChannelInboundHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  let core: MerchantTokenServerCore
  let closer: RawCloseHandler
  var reader = TestHTTPRequestReader(maximumBody: 1 << 16)
  /// The connection was reset: nothing more is read.
  var done = false

  init(core: MerchantTokenServerCore, closer: RawCloseHandler) {
    self.core = core
    self.closer = closer
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard !done else { return }
    switch reader.take(unwrapInboundIn(data)) {
    case .incomplete:
      return
    case .tooLarge:
      context.close(promise: nil)
    case .request(let head, let body):
      let outcome = core.answer(
        method: head.method.rawValue, path: TestHTTPRequestReader.split(head.uri).path,
        requestId: head.headers.first(name: "x-request-id"), contentType: head.headers.first(name: "Content-Type"),
        body: Array(body.readableBytesView),
        certificateMerchant: AppleSessionHTTPHandler.certificateMerchant(context: context))
      let keepAlive = head.isKeepAlive
      switch outcome {
      case .respond(let status, let text):
        Self.write(context, status: status, body: text, keepAlive: keepAlive)
      case .hold(let gate, let status, let text):
        let released = context.eventLoop.makePromise(of: Void.self)
        gate.arrive()
        gate.whenReleased { released.succeed(()) }
        released.futureResult.assumeIsolated().whenSuccess {
          guard context.channel.isActive else { return }
          Self.write(context, status: status, body: text, keepAlive: keepAlive)
        }
      case .holdBeforeDeciding(let gate, let decide):
        let released = context.eventLoop.makePromise(of: Void.self)
        gate.arrive()
        gate.whenReleased { released.succeed(()) }
        released.futureResult.assumeIsolated().whenSuccess {
          guard context.channel.isActive, case .respond(let status, let text) = decide() else { return }
          Self.write(context, status: status, body: text, keepAlive: keepAlive)
        }
      case .reset:
        done = true
        closer.reset()
      }
    }
  }

  static func write(_ context: ChannelHandlerContext, status: Int, body: String, keepAlive: Bool) {
    TestHTTPResponse.write(
      context, status: status, headers: body.isEmpty ? [] : [("Content-Type", "application/json")], body: body,
      keepAlive: keepAlive)
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    context.close(promise: nil)
  }
}
