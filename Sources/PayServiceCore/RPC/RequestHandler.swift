import Foundation

/// Turns one input line into at most one response line, by the JSON-RPC 2.0 rules: parse errors,
/// invalid requests, notifications, batches, method dispatch and error mapping.
public final class RequestHandler: @unchecked Sendable {
  public let context: ServiceContext
  let registry: MethodRegistry
  /// The methods around payservice's own: `rpc.discover` and MCP's (see `MCPEndpoint`).
  let protocolEntries: [String: MethodRegistry.Entry]
  let log: RequestLog

  /// `"name"` of each method that commits in groups, to rule lines out without parsing them.
  private let groupedMethodNames: [[UInt8]]

  /// Every method name answered (anything else is -32601): payservice's, then the protocol ones.
  public var servedMethodNames: [String] { registry.names + protocolEntries.keys.sorted() }

  public init(context: ServiceContext, registry: MethodRegistry = MethodRegistry(), log: RequestLog) {
    self.context = context
    self.registry = registry
    self.log = log
    var protocolEntries = MCPEndpoint.entries(registry: registry, log: log)
    protocolEntries[OpenRPCDocument.discoverMethodName] = OpenRPCDocument.discoverEntry
    self.protocolEntries = protocolEntries
    groupedMethodNames = registry.entries.filter { $0.value.commitsInGroups }.map { Array("\"\($0.key)\"".utf8) }
  }

  /// The response line for `line` (without the LF), or nil when nothing is to be answered.
  public func handle(line: UnsafeRawBufferPointer) -> [UInt8]? {
    var writer = JSONWriter()
    return handle(line: line, into: &writer) ? writer.bytes : nil
  }

  public func handle(line: [UInt8]) -> [UInt8]? {
    line.withUnsafeBytes { handle(line: $0) }
  }

  /// Appends the response to `line` (without the LF) to `writer`; false when nothing is to be
  /// answered (a notification, or a batch of them), and then nothing was appended.
  public func handle(line: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> Bool {
    let request: JSONValue
    do {
      request = try JSONParser.parse(line)
    } catch {
      log.request(id: nil, method: "", seconds: 0, outcome: "error(-32700)")
      Self.writeError(id: .null, .parseError("\(error.message) at byte \(error.offset)"), into: &writer)
      return true
    }
    return handle(value: request, into: &writer)
  }

  /// Like `handle(line:into:)`, but only for a line that cannot touch the store: a single request
  /// of a method that does not use it, or a line that is answered with an error. Returns nil, and
  /// writes and logs nothing, for any other line (a batch, or a store method), which the caller
  /// must then answer in order with `handle(line:into:)`.
  func handleIfStoreFree(line: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> Bool? {
    guard let request = try? JSONParser.parse(line) else { return handle(line: line, into: &writer) }
    switch request {
    case .array: return nil
    case .object(let object):
      if case .string(let method)? = object["method"], let entry = entry(for: method),
        entry.usesStore(object["params"])
      {
        return nil
      }
    default: break
    }
    return handle(value: request, into: &writer)
  }

  /// The request on `line` when it is a request (with an id) of a method that commits in groups;
  /// the caller answers it with `handle(value:into:)`, as `handle(line:into:)` would. Asked of
  /// every line answered on the server thread, so a line that does not hold such a method's name
  /// as plain bytes is ruled out without parsing (a name spelled with escapes is then not grouped,
  /// only answered alone).
  func groupedRequest(line: UnsafeRawBufferPointer) -> JSONValue? {
    guard groupedMethodNames.contains(where: { Self.bytes(line, contain: $0) }) else { return nil }
    guard let parsed = try? JSONParser.parse(line), case .object(let request) = parsed, request.contains("id"),
      case .string(let method)? = request["method"], registry.entries[method]?.commitsInGroups == true
    else { return nil }
    return parsed
  }

  func handle(value: JSONValue, into writer: inout JSONWriter) -> Bool {
    guard case .array(let elements) = value else { return handleSingle(value, into: &writer) }
    if elements.isEmpty {
      log.request(id: nil, method: "", seconds: 0, outcome: "error(-32600)")
      Self.writeError(id: .null, .invalidRequest("an empty batch"), into: &writer)
      return true
    }
    let start = writer.mark
    writer.beginArray()
    var answered = false
    for element in elements where handleSingle(element, into: &writer) {
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

  /// Answers one request object; false for a notification (nothing written).
  func handleSingle(_ value: JSONValue, into writer: inout JSONWriter) -> Bool {
    guard case .object(let request) = value else {
      log.request(id: nil, method: "", seconds: 0, outcome: "error(-32600)")
      Self.writeError(
        id: .null, .invalidRequest("a request must be a JSON object, got \(value.kindName)"), into: &writer)
      return true
    }
    // The id, when it can be determined.
    var id: JSONValue = .null
    var idProblem: String?
    let isNotification = !request.contains("id")
    switch request["id"] {
    case nil, .null?: break
    case .string(let text)?: id = .string(text)
    case .number(let text)?: id = .number(text)
    case let other?: idProblem = "\"id\" must be a string, a number or null, got \(other.kindName)"
    }
    var problem = idProblem
    if request["jsonrpc"] != .string("2.0") {
      problem = problem ?? "\"jsonrpc\" must be exactly \"2.0\""
    }
    var methodName: String?
    switch request["method"] {
    case .string(let name)?: methodName = name
    case nil: problem = problem ?? "\"method\" is required"
    case let other?: problem = problem ?? "\"method\" must be a string, got \(other.kindName)"
    }
    switch request["params"] {
    case nil, .object?, .array?: break
    case let other?: problem = problem ?? "\"params\" must be an object or an array, got \(other.kindName)"
    }
    if let problem {
      log.request(id: id, method: methodName ?? "", seconds: 0, outcome: "error(-32600)")
      Self.writeError(id: id, .invalidRequest(problem), into: &writer)
      return true
    }
    let method = methodName!
    guard let entry = entry(for: method) else {
      log.request(id: id, method: method, seconds: 0, outcome: isNotification ? "ignored" : "error(-32601)")
      if isNotification { return false }
      Self.writeError(id: id, .methodNotFound(method), into: &writer)
      return true
    }
    if isNotification && !entry.runsAsNotification {
      let reason = registry.entries[method] == nil ? "a tool call" : "a payment"
      log.warning("a notification of \(method) was not executed: \(reason) needs an answer, so send it with an id")
      return false
    }
    let started = DispatchTime.now().uptimeNanoseconds
    let outcome: String
    // A notification's result is computed (its effects happen) but not sent.
    var discarded = JSONWriter(capacity: 0)
    let start = writer.mark
    do {
      if isNotification {
        try entry.handle(request["params"], context, &discarded)
      } else {
        writer.beginObject()
        writer.member("jsonrpc", "2.0")
        writer.member("id", id)
        writer.key("result")
        try entry.handle(request["params"], context, &writer)
        writer.endObject()
      }
      outcome = "ok"
    } catch {
      let rpcError = log.wireError(for: error, method: method)
      writer.rewind(to: start)
      if !isNotification { Self.writeError(id: id, rpcError, into: &writer) }
      outcome = "error(\(rpcError.code.rawValue))"
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    log.request(id: id, method: method, seconds: seconds, outcome: isNotification ? "\(outcome),notification" : outcome)
    return !isNotification
  }

  /// The entry answering `method`: a payservice method, else a protocol method.
  private func entry(for method: String) -> MethodRegistry.Entry? {
    registry.entries[method] ?? protocolEntries[method]
  }

  static func bytes(_ haystack: UnsafeRawBufferPointer, contain needle: [UInt8]) -> Bool {
    guard needle.count > 1 else { return needle.isEmpty || haystack.contains(needle[0]) }
    guard haystack.count >= needle.count, let base = haystack.baseAddress else { return false }
    // Candidates are found by their second byte with memchr (the first of a quoted name is a quote,
    // which JSON is full of), then compared whole.
    let second = Int32(needle[1])
    var position = 1
    let end = haystack.count - needle.count + 2  // past the last position the second byte can have
    return needle.withUnsafeBytes { needleBytes in
      while position < end, let found = memchr(base + position, second, end - position) {
        let candidate = base.distance(to: UnsafeRawPointer(found)) - 1
        if memcmp(base + candidate, needleBytes.baseAddress!, needle.count) == 0 { return true }
        position = candidate + 2
      }
      return false
    }
  }

}
