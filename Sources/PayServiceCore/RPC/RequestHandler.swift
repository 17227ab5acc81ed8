import Foundation

/// Turns input lines into response lines by the JSON-RPC 2.0 rules, in three steps: `parse` reads
/// a line once into a `ParsedLine` (a request, a batch, or what is wrong with it); `needsStore`
/// routes it; `answer` runs it and writes at most one response (`respond` is the one writer of a
/// response and of its log line, also for the `Executor`, which runs operations in steps).
///
/// Not Sendable: a handler logs to its thread's `RequestLog` (the helper thread has its own).
public final class RequestHandler {
  /// The most requests one batch may hold: a longer batch is one -32600 and none of it runs.
  public static let maxBatchRequests = 100
  /// The most bytes one response line may have (its LF not counted): a longer answer is replaced
  /// by a -32603 that names the limit. Only what reads a lot can come near it (a batch of
  /// discovery documents, say): the largest order a request can make answers in under 1 MiB.
  public static let maxResponseBytes = 8 << 20

  /// The config, store and clock requests are answered with; replaced between requests by a reload.
  /// Unchecked exclusivity: a handler is used by one thread (it is not Sendable), and `replace`
  /// runs between requests, so the dynamic access checks of a class's `var` would only cost every
  /// request its reads.
  @exclusivity(unchecked) public private(set) var context: ServiceContext
  let methods: MethodTable
  let log: RequestLog
  /// The context's compiled config, copied (plain memory) for the borrowed request path.
  @exclusivity(unchecked) private(set) var pricingTable: PricingTable?

  /// Answers the next requests with `context` (a reloaded config): between requests only.
  func replace(_ context: ServiceContext) {
    self.context = context
    self.pricingTable = context.pricingTable
  }

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

  // MARK: Step 3: answer

  /// Appends the response to `line` to `writer`, followed by a line feed; false when nothing is to
  /// be answered (a blank line, a notification or a batch of them), and then nothing was appended.
  func answer(_ line: ParsedLine, into writer: inout JSONWriter) -> Bool {
    let answered: Bool
    switch line {
    case .blank: return false
    case .unparsable(let failure):
      answered = refuse(.parseError("\(failure.message) at byte \(failure.offset)"), into: &writer)
    case .tooLong(let limit):
      answered = refuse(.invalidRequest("line exceeds the limit of \(limit) bytes (--max-line-bytes)"), into: &writer)
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
    if calls.isEmpty { return refuse(.invalidRequest("an empty batch"), into: &writer) }
    if calls.count > Self.maxBatchRequests {
      return refuse(
        .invalidRequest("a batch holds at most \(Self.maxBatchRequests) requests, this one \(calls.count); none was run"),
        into: &writer)
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

  /// Answers a line or batch that is no request with `error` (id null), and logs it.
  private func refuse(_ error: RPCError, into writer: inout JSONWriter) -> Bool {
    respond(id: .null, method: "", anonymous: true, started: nil, into: &writer) { _ in throw error }
    return true
  }

  /// Answers one request; false for a notification (nothing written).
  private func answer(_ call: Call, into writer: inout JSONWriter) -> Bool {
    switch call {
    case .invalid(let id, let method, let problem):
      respond(id: id, method: method ?? "", started: nil, into: &writer) { _ in throw RPCError.invalidRequest(problem) }
      return true
    case .valid(let request) where request.isNotification:
      // A notification's method runs (its effects happen), but its result is not sent.
      var discarded = JSONWriter(capacity: 0)
      respond(to: request, into: &discarded) { writer in try run(request, into: &writer) }
      return false
    case .valid(let request):
      respond(to: request, into: &writer) { writer in try run(request, into: &writer) }
      return true
    }
  }

  /// Runs a request's method, writing its result; throws the wire error of an unknown method or a
  /// failure instead. A notification of a method that needs an answer does not run (and is not
  /// logged as a request: the warning says why).
  private func run(_ request: Request, into writer: inout JSONWriter) throws -> Outcome {
    guard let entry = request.unretainedEntry else {
      if request.isNotification { return .ignored }
      throw RPCError.methodNotFound(request.method)
    }
    if request.isNotification, let reason = entry._withUnsafeGuaranteedRef({ $0.answerRequired }) {
      log.warning("a notification of \(request.method) was not executed: \(reason) needs an answer, so send it with an id")
      return .unlogged
    }
    _ = try entry._withUnsafeGuaranteedRef { try $0.call(request.params, context, log, &writer) }
    return .answered
  }

  /// What writing a request's result came to.
  enum Outcome {
    /// The result is written.
    case answered
    /// Nothing to answer or log (a notification the warning log explains).
    case unlogged
    /// A notification of an unknown method: logged as ignored.
    case ignored
    /// The answer comes later (its work waits on a network call): nothing written or logged now;
    /// a later `respond` with the same start time writes and logs it.
    case later
  }

  /// The request clock's reading, when the log records requests (`--quiet` skips the clock reads).
  func timer() -> UInt64? {
    log.recordsRequests ? RequestLog.monotonicNanoseconds() : nil
  }

  /// `respond(id:…)` for a parsed request: timed from now unless `started` says otherwise; a
  /// notification's response is written only to be dropped.
  @discardableResult
  func respond(
    to request: Request, started: UInt64?? = .none, into writer: inout JSONWriter,
    _ result: (inout JSONWriter) throws -> Outcome
  ) -> RPCError? {
    respond(
      id: request.id, method: request.method, notification: request.isNotification, started: started ?? timer(),
      into: &writer, result)
  }

  /// The one writer of the response envelope and the one place a request is logged: appends
  /// `{"jsonrpc":"2.0","id":…,"result":…}` with what `result` writes, or, when it throws, the error
  /// envelope with its wire error (what it wrote dropped); then the line is logged with its
  /// duration since `started` (nil: not timed) and outcome (`anonymous`: a line that is no request,
  /// logged without an id). When `result` says the answer comes later, nothing is appended or logged. Returns the wire error written, if any.
  @discardableResult
  private func respond(
    id: JSONValue, method: String, anonymous: Bool = false, notification: Bool = false, started: UInt64?,
    into writer: inout JSONWriter, _ result: (inout JSONWriter) throws -> Outcome
  ) -> RPCError? {
    let mark = writer.mark
    writer.beginObject()
    writer.member("jsonrpc", "2.0")
    writer.member("id", id)
    writer.key("result")
    var outcome: String
    var wireError: RPCError?
    do {
      switch try result(&writer) {
      case .answered:
        writer.endObject()
        outcome = "ok"
      case .unlogged, .later:
        writer.rewind(to: mark)
        return nil
      case .ignored:
        writer.rewind(to: mark)
        outcome = "ignored"
      }
    } catch let failure {
      writer.rewind(to: mark)
      let error = failure as? RPCError ?? log.wireError(for: failure, method: method)
      Self.writeError(id: id, error, into: &writer)
      outcome = "error(\(error.code.rawValue))"
      wireError = error
    }
    guard log.recordsRequests else { return wireError }
    if notification && outcome != "ignored" { outcome += ",notification" }
    let seconds = started.map { Double(RequestLog.monotonicNanoseconds() - $0) / 1e9 } ?? 0
    log.request(id: anonymous ? nil : id, method: method, seconds: seconds, outcome: outcome)
    return wireError
  }

  /// The borrowed path's response opening (a line of its own, never in a batch): the envelope
  /// `respond` writes, with the id as the request's bytes.
  static func openResponse(rawID: UnsafeRawBufferPointer, into writer: inout JSONWriter) {
    writer.raw(#"{"jsonrpc":"2.0","id":"#)
    writer.raw(rawID)
    writer.raw(#","result":"#)
  }

  /// Logs a request the borrowed path answered (outcome ok), as `respond` logs the others.
  func logBorrowed(rawID: UnsafeRawBufferPointer, method: String, started: UInt64) {
    guard log.recordsRequests else { return }
    log.request(rawID: rawID, method: method, nanoseconds: RequestLog.monotonicNanoseconds() - started)
  }

  static func writeError(id: JSONValue, _ error: RPCError, into writer: inout JSONWriter) {
    writer.beginObject()
    writer.member("jsonrpc", "2.0")
    writer.member("id", id)
    writer.member("error", error)
    writer.endObject()
  }

  /// Runs one request object the way a served line would, for `payservice call`: its result or
  /// its wire error.
  func call(_ request: JSONValue) -> Result<SerializedJSON, RPCError> {
    var response = JSONWriter()
    var result = JSONWriter()
    let error: RPCError?
    switch envelope(request) {
    case .invalid(let id, let method, let problem):
      error = respond(id: id, method: method ?? "", started: nil, into: &response) { _ in
        throw RPCError.invalidRequest(problem)
      }
    case .valid(let request):
      // The result alone, written beside the response (which is dropped).
      error = respond(to: request, into: &response) { _ in try run(request, into: &result) }
    }
    return error.map { .failure($0) } ?? .success(SerializedJSON(writtenBy: result))
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
