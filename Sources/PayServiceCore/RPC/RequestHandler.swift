import Foundation

/// Turns input lines into response lines by the JSON-RPC 2.0 rules, in three steps: `parse` reads
/// a line once into a `ParsedLine` (a request, a batch, or what is wrong with it); `needsStore`
/// and `groupableRequest` route it; `answer` runs it and writes at most one response.
///
/// Not Sendable: a handler logs to its thread's `RequestLog` (the helper thread has its own).
public final class RequestHandler {
  /// The most requests one batch may hold: a longer batch is one -32600 and none of it runs.
  public static let maxBatchRequests = 100
  /// The most bytes one response line may have (its LF not counted): a longer answer is replaced
  /// by a -32603 that names the limit. Only what reads a lot can come near it (a batch of
  /// discovery documents, say): the largest order a request can make answers in under 1 MiB.
  public static let maxResponseBytes = 8 << 20

  public let context: ServiceContext
  let methods: MethodTable
  let log: RequestLog
  /// The context's compiled config, copied (plain memory) for the borrowed request path.
  let pricingTable: PricingTable?

  public init(context: ServiceContext, methods: MethodTable, log: RequestLog) {
    self.context = context
    self.methods = methods
    self.log = log
    self.pricingTable = context.pricingTable
  }

  /// Every method name answered (anything else is -32601), in registration order.
  public var servedMethodNames: [String] { methods.names }

  // MARK: Step 1: parse

  /// A JSON-RPC request as read: its id, method (with the entry that answers it, nil for an
  /// unknown one) and params, or what makes it invalid.
  enum Call: Sendable {
    case valid(Request)
    case invalid(id: JSONValue, method: String?, problem: String)

    var id: JSONValue {
      switch self {
      case .valid(let request): return request.id
      case .invalid(let id, _, _): return id
      }
    }
  }

  struct Request: Sendable {
    let id: JSONValue
    let isNotification: Bool
    let method: String
    /// Unretained: the handler's method table keeps its entries, and a request is answered by the
    /// handler that parsed it (a retain of an entry, which every thread shares, would cost each
    /// request a contended atomic).
    let unretainedEntry: Unmanaged<MethodTable.Entry>?
    let params: JSONValue?

  }

  /// One input line, parsed once; every later step reads this.
  enum ParsedLine: Sendable {
    /// Only JSON whitespace: not a request, not answered.
    case blank
    case unparsable(JSONParser.Failure)
    /// Longer than the server's limit (`--max-line-bytes`): not parsed.
    case tooLong(limit: Int)
    case single(Call)
    case batch([Call])
  }

  /// Parses one line (without its LF; a trailing CR is dropped).
  func parse(_ line: UnsafeRawBufferPointer) -> ParsedLine {
    var slice = line
    if let last = slice.last, last == UInt8(ascii: "\r") { slice = UnsafeRawBufferPointer(rebasing: slice.dropLast()) }
    if slice.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return .blank }
    do {
      return parsed(try JSONParser.parse(slice))
    } catch {
      return .unparsable(error)
    }
  }

  /// A parsed JSON value as a request or batch.
  func parsed(_ value: JSONValue) -> ParsedLine {
    guard case .array(let elements) = value else { return .single(envelope(value)) }
    return .batch(elements.map(envelope))
  }

  /// Checks one request object's envelope (id, jsonrpc, method, params), reporting the first
  /// problem, and finds the method's entry.
  func envelope(_ value: JSONValue) -> Call {
    guard case .object(let request) = value else {
      return .invalid(id: .null, method: nil, problem: "a request must be a JSON object, got \(value.kindName)")
    }
    var id: JSONValue = .null
    var problem: String?
    switch request["id"] {
    case nil, .null?: break
    case .string(let text)?: id = .string(text)
    case .number(let text)?: id = .number(text)
    case let other?: problem = "\"id\" must be a string, a number or null, got \(other.kindName)"
    }
    if request["jsonrpc"] != .string("2.0") {
      problem = problem ?? "\"jsonrpc\" must be exactly \"2.0\""
    }
    var method: String?
    switch request["method"] {
    case .string(let name)?: method = name
    case nil: problem = problem ?? "\"method\" is required"
    case let other?: problem = problem ?? "\"method\" must be a string, got \(other.kindName)"
    }
    let params = request["params"]
    switch params {
    case nil, .object?, .array?: break
    case let other?: problem = problem ?? "\"params\" must be an object or an array, got \(other.kindName)"
    }
    guard let method, problem == nil else { return .invalid(id: id, method: method, problem: problem!) }
    return .valid(
      Request(
        id: id, isNotification: !request.contains("id"), method: method,
        unretainedEntry: methods[method].map { Unmanaged.passUnretained($0) }, params: params))
  }

  // MARK: Step 2: route

  /// Whether answering the line may read or write the store: a batch, or a request of a method
  /// that uses it. Such lines are answered in order on the server thread.
  func needsStore(_ line: ParsedLine) -> Bool {
    switch line {
    case .batch: return true
    case .single(.valid(let request)):
      return request.unretainedEntry?._withUnsafeGuaranteedRef { $0.usesStore(request.params) } == true
    case .blank, .unparsable, .tooLong, .single(.invalid): return false
    }
  }

  /// Whether the line is a request (with an id) of a method whose pipelined requests commit in groups.
  func isGroupable(_ line: ParsedLine) -> Bool {
    guard case .single(.valid(let request)) = line, !request.isNotification else { return false }
    return request.unretainedEntry?._withUnsafeGuaranteedRef { $0.commitsInGroups } == true
  }

  // MARK: Step 3: answer

  /// Appends the response to `line` to `writer`, followed by a line feed; false when nothing is to
  /// be answered (a blank line, a notification or a batch of them), and then nothing was appended.
  func answer(_ line: ParsedLine, into writer: inout JSONWriter) -> Bool {
    let answered: Bool
    switch line {
    case .blank: return false
    case .unparsable(let failure):
      log.request(id: nil, method: "", seconds: 0, outcome: "error(-32700)")
      Self.writeError(id: .null, .parseError("\(failure.message) at byte \(failure.offset)"), into: &writer)
      answered = true
    case .tooLong(let limit):
      log.request(id: nil, method: "", seconds: 0, outcome: "error(-32600)")
      Self.writeError(
        id: .null, .invalidRequest("line exceeds the limit of \(limit) bytes (--max-line-bytes)"), into: &writer)
      answered = true
    case .single(let call):
      let start = writer.mark
      answered = answer(call, into: &writer)
      capResponse(from: start, id: call.id, into: &writer)
    case .batch(let calls):
      let start = writer.mark
      answered = answer(batch: calls, into: &writer)
      capResponse(from: start, id: .null, into: &writer)
    }
    if answered { writer.newline() }
    return answered
  }

  /// Replaces what was written since `start` by a -32603 when it is longer than `maxResponseBytes`.
  private func capResponse(from start: JSONWriter.Mark, id: JSONValue, into writer: inout JSONWriter) {
    guard writer.count - start.count > Self.maxResponseBytes else { return }
    writer.rewind(to: start)
    log.warning("a response exceeded \(Self.maxResponseBytes) bytes and was replaced by -32603")
    Self.writeError(id: id, Self.responseTooLarge, into: &writer)
  }

  static let responseTooLarge = RPCError(
    code: .internalError,
    message: "Internal error: the response exceeds the limit of \(maxResponseBytes >> 20) MiB per line; ask for less at a time")

  private func answer(batch calls: [Call], into writer: inout JSONWriter) -> Bool {
    if calls.isEmpty {
      log.request(id: nil, method: "", seconds: 0, outcome: "error(-32600)")
      Self.writeError(id: .null, .invalidRequest("an empty batch"), into: &writer)
      return true
    }
    if calls.count > Self.maxBatchRequests {
      log.request(id: nil, method: "", seconds: 0, outcome: "error(-32600)")
      Self.writeError(
        id: .null,
        .invalidRequest("a batch holds at most \(Self.maxBatchRequests) requests, this one \(calls.count); none was run"),
        into: &writer)
      return true
    }
    let start = writer.mark
    writer.beginArray()
    var answered = false
    for call in calls where answer(call, into: &writer) {
      answered = true
    }
    guard answered else {
      writer.rewind(to: start)
      return false
    }
    writer.endArray()
    return true
  }

  static func writeError(id: JSONValue, _ error: RPCError, into writer: inout JSONWriter) {
    writer.beginObject()
    writer.member("jsonrpc", "2.0")
    writer.member("id", id)
    writer.member("error", error)
    writer.endObject()
  }

  /// Answers one request; false for a notification (nothing written).
  private func answer(_ call: Call, into writer: inout JSONWriter) -> Bool {
    switch call {
    case .invalid(let id, let method, let problem):
      log.request(id: id, method: method ?? "", seconds: 0, outcome: "error(-32600)")
      Self.writeError(id: id, .invalidRequest(problem), into: &writer)
      return true
    case .valid(let request) where request.isNotification:
      // A notification's method runs (its effects happen), but its result is not sent.
      var discarded = JSONWriter(capacity: 0)
      _ = run(request, into: &discarded)
      return false
    case .valid(let request):
      let start = writer.mark
      writer.beginObject()
      writer.member("jsonrpc", "2.0")
      writer.member("id", request.id)
      writer.key("result")
      if let error = run(request, into: &writer) {
        writer.rewind(to: start)
        Self.writeError(id: request.id, error, into: &writer)
      } else {
        writer.endObject()
      }
      return true
    }
  }

  /// Runs a request's method, writing its result, and logs it. Returns the wire error instead (with
  /// nothing written) when it fails or the method is unknown. A notification of a method that
  /// needs an answer does not run.
  private func run(_ request: Request, into writer: inout JSONWriter) -> RPCError? {
    let (id, method) = (request.id, request.method)
    guard let entry = request.unretainedEntry else {
      log.request(id: id, method: method, seconds: 0, outcome: request.isNotification ? "ignored" : "error(-32601)")
      return .methodNotFound(method)
    }
    if request.isNotification, let reason = entry._withUnsafeGuaranteedRef({ $0.answerRequired }) {
      log.warning("a notification of \(method) was not executed: \(reason) needs an answer, so send it with an id")
      return nil
    }
    // Timed only when the log records requests (`--quiet` skips the clock reads).
    let started = log.recordsRequests ? RequestLog.monotonicNanoseconds() : 0
    let start = writer.mark
    var error: RPCError?
    do {
      _ = try entry._withUnsafeGuaranteedRef { try $0.call(request.params, context, log, &writer) }
    } catch let failure {
      writer.rewind(to: start)
      error = log.wireError(for: failure, method: method)
    }
    if log.recordsRequests {
      let outcome = error.map { "error(\($0.code.rawValue))" } ?? "ok"
      let seconds = Double(RequestLog.monotonicNanoseconds() - started) / 1e9
      log.request(
        id: id, method: method, seconds: seconds, outcome: request.isNotification ? "\(outcome),notification" : outcome)
    }
    return error
  }

  /// A request whose answer waits on a remote gateway's call: `send` starts the call, `wait` blocks
  /// until its answer is in, `finish` (on the handler) records and writes it.
  struct Waiting {
    fileprivate let request: Request
    fileprivate let started: UInt64
    fileprivate let continuation: Continuation

    func send() { continuation.send() }
    func wait() { continuation.wait() }
  }

  /// Starts answering a line: for a request (with an id) of a method that waits on a remote
  /// gateway, everything up to the gateway's call (not sent yet), returning the rest; for any other
  /// line (or when the answer is known at once) the whole answer, appended to `writer`, and nil.
  func start(_ line: ParsedLine, into writer: inout JSONWriter) -> Waiting? {
    guard case .single(.valid(let request)) = line, !request.isNotification,
      let entry = request.unretainedEntry, let start = entry._withUnsafeGuaranteedRef({ $0.start })
    else {
      _ = answer(line, into: &writer)
      return nil
    }
    // Timed only when the log records requests, as `run` does.
    let started = log.recordsRequests ? RequestLog.monotonicNanoseconds() : 0
    var continuation: Continuation?
    respond(to: request, started: started, into: &writer) { writer in
      continuation = try start(request.params, context, &writer)
      return continuation == nil
    }
    return continuation.map { Waiting(request: request, started: started, continuation: $0) }
  }

  /// Waits for a started request's gateway call, records its answer and appends the response.
  func finish(_ waiting: Waiting, into writer: inout JSONWriter) {
    respond(to: waiting.request, started: waiting.started, into: &writer) { writer in
      _ = try waiting.continuation.finish(&writer)
      return true
    }
  }

  /// Appends the response to `request` with the result `body` writes, or the error it throws, and
  /// logs it; when `body` returns false (the answer comes later) nothing is appended or logged.
  private func respond(
    to request: Request, started: UInt64, into writer: inout JSONWriter, _ body: (inout JSONWriter) throws -> Bool
  ) {
    let mark = writer.mark
    writer.beginObject()
    writer.member("jsonrpc", "2.0")
    writer.member("id", request.id)
    writer.key("result")
    var failure: RPCError?
    do {
      guard try body(&writer) else {
        writer.rewind(to: mark)
        return
      }
      writer.endObject()
    } catch {
      failure = log.wireError(for: error, method: request.method)
      writer.rewind(to: mark)
      Self.writeError(id: request.id, failure!, into: &writer)
    }
    writer.newline()
    guard log.recordsRequests else { return }
    let seconds = Double(RequestLog.monotonicNanoseconds() - started) / 1e9
    log.request(
      id: request.id, method: request.method, seconds: seconds, outcome: failure.map { "error(\($0.code.rawValue))" } ?? "ok")
  }

  /// Runs one request object the way a served line would, for `payservice call`: its result or
  /// its wire error.
  func call(_ request: JSONValue) -> Result<SerializedJSON, RPCError> {
    switch envelope(request) {
    case .invalid(let id, let method, let problem):
      log.request(id: id, method: method ?? "", seconds: 0, outcome: "error(-32600)")
      return .failure(.invalidRequest(problem))
    case .valid(let request):
      var writer = JSONWriter()
      if let error = run(request, into: &writer) { return .failure(error) }
      return .success(SerializedJSON(writtenBy: writer))
    }
  }

  // MARK: Conveniences (tests, fuzzing)

  /// The response line for `line` (without the LF), or nil when nothing is to be answered.
  public func handle(line: UnsafeRawBufferPointer) -> [UInt8]? {
    var writer = JSONWriter()
    // As the server answers a line: the borrowed path first.
    guard answerBorrowed(line, into: &writer) || answer(parse(line), into: &writer) else { return nil }
    var bytes = writer.bytes
    bytes.removeLast()  // the LF
    return bytes
  }

  public func handle(line: [UInt8]) -> [UInt8]? {
    line.withUnsafeBytes { handle(line: $0) }
  }
}
