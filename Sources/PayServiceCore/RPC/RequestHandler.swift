import Foundation

/// Turns one input line into at most one response line, by the JSON-RPC 2.0 rules: parse errors,
/// invalid requests, notifications, batches, method dispatch and error mapping.
public final class RequestHandler: @unchecked Sendable {
  public let context: ServiceContext
  let registry: MethodRegistry
  let log: RequestLog

  public init(context: ServiceContext, registry: MethodRegistry = MethodRegistry(), log: RequestLog) {
    self.context = context
    self.registry = registry
    self.log = log
  }

  /// The response line for `line` (without the LF), or nil when nothing is to be answered.
  public func handle(line: UnsafeRawBufferPointer) -> [UInt8]? {
    let response: JSONValue?
    do {
      let request = try JSONParser.parse(line)
      response = handle(value: request)
    } catch {
      log.request(id: nil, method: "", seconds: 0, outcome: "error(-32700)")
      response = Self.errorResponse(id: .null, .parseError("\(error.message) at byte \(error.offset)"))
    }
    guard let response else { return nil }
    var writer = JSONWriter()
    writer.write(response)
    return writer.bytes
  }

  public func handle(line: [UInt8]) -> [UInt8]? {
    line.withUnsafeBytes { handle(line: $0) }
  }

  public func handle(value: JSONValue) -> JSONValue? {
    guard case .array(let elements) = value else { return handleSingle(value) }
    if elements.isEmpty {
      log.request(id: nil, method: "", seconds: 0, outcome: "error(-32600)")
      return Self.errorResponse(id: .null, .invalidRequest("an empty batch"))
    }
    let responses = elements.compactMap(handleSingle)
    return responses.isEmpty ? nil : .array(responses)
  }

  static func errorResponse(id: JSONValue, _ error: RPCError) -> JSONValue {
    var object = JSONObjectBuilder()
    object.set("jsonrpc", "2.0")
    object.set("id", id)
    object.set("error", error.json)
    return object.value
  }

  static func resultResponse(id: JSONValue, _ result: JSONValue) -> JSONValue {
    var object = JSONObjectBuilder()
    object.set("jsonrpc", "2.0")
    object.set("id", id)
    object.set("result", result)
    return object.value
  }

  func handleSingle(_ value: JSONValue) -> JSONValue? {
    guard case .object(let request) = value else {
      log.request(id: nil, method: "", seconds: 0, outcome: "error(-32600)")
      return Self.errorResponse(id: .null, .invalidRequest("a request must be a JSON object, got \(value.kindName)"))
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
      return Self.errorResponse(id: id, .invalidRequest(problem))
    }
    let method = methodName!
    guard let entry = registry.entries[method] else {
      log.request(id: id, method: method, seconds: 0, outcome: isNotification ? "ignored" : "error(-32601)")
      return isNotification ? nil : Self.errorResponse(id: id, .methodNotFound(method))
    }
    if isNotification && !entry.runsAsNotification {
      log.warning("a notification of \(method) was not executed: a payment needs an answer, so send it with an id")
      return nil
    }
    let started = DispatchTime.now().uptimeNanoseconds
    let response: JSONValue
    let outcome: String
    do {
      response = Self.resultResponse(id: id, try entry.handle(request["params"], context))
      outcome = "ok"
    } catch {
      let rpcError = RPCError(mapping: error)
      if rpcError.code == .internalError || rpcError.code == .storeUnavailable {
        // The reason goes to the operator's log only; it holds no request data.
        log.warning("\(method) failed: \(error is StoreError ? "\(error)" : String(describing: type(of: error)))")
      }
      response = Self.errorResponse(id: id, rpcError)
      outcome = "error(\(rpcError.code.rawValue))"
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    log.request(id: id, method: method, seconds: seconds, outcome: isNotification ? "\(outcome),notification" : outcome)
    return isNotification ? nil : response
  }
}
