/// payservice's methods as MCP tools: `tools/list` describes them from each method's description
/// (the schemas `rpc.discover` shows), `tools/call` runs them.
struct ToolCatalog: Sendable {
  /// The methods a tool call runs: payservice's own (with `--back-office`, those too), not the protocols'.
  let methods: MethodTable
  let backOffice: Bool

  init(backOffice: Bool) {
    var methods = MethodTable()
    MethodRegistry.register(MethodRegistry.methods(backOffice: backOffice), into: &methods)
    self.methods = methods
    self.backOffice = backOffice
  }

  // Built at the first tools/list (static lets are lazy), not at every start.
  /// `tools/list`'s result: in a handshake revision, and in 2026-07-28; with the back-office tools.
  static let list = SerializedJSON(ToolList(envelope: false, backOffice: false))
  static let envelopeList = SerializedJSON(ToolList(envelope: true, backOffice: false))
  static let backOfficeList = SerializedJSON(ToolList(envelope: false, backOffice: true))
  static let backOfficeEnvelopeList = SerializedJSON(ToolList(envelope: true, backOffice: true))

  /// The `tools/list` result: one tool per method, in registry order.
  struct ToolList: JSONRepresentable {
    let envelope: Bool
    let backOffice: Bool

    func write(to writer: inout JSONWriter) {
      writer.beginObject()
      writer.key("tools")
      writer.beginArray()
      for method in MethodRegistry.methods(backOffice: backOffice) {
        ToolCatalog.writeTool(name: method.name, method.description, into: &writer)
      }
      writer.endArray()
      if envelope { MCPEndpoint.writeCompleteResult(cacheable: true, into: &writer) }
      writer.endObject()
    }
  }

  static func writeTool(name: String, _ description: MethodDescription, into writer: inout JSONWriter) {
    let documentation = description.documentation
    writer.beginObject()
    writer.member("name", name)
    writer.member("description", "\(documentation.summary)\n\n\(documentation.description)")
    writer.member("inputSchema", description.paramsSchema)
    writer.member("outputSchema", description.result)
    writer.key("annotations")
    writer.beginObject()
    writer.member("readOnlyHint", documentation.readOnly)
    writer.member("destructiveHint", documentation.destructive)
    writer.member("idempotentHint", documentation.idempotent)
    writer.endObject()
    writer.endObject()
  }

  func list(_ params: JSONValue?, modern: Bool) throws -> SerializedJSON {
    let reader = ParamReader()
    guard let object = reader.params(params) else { throw ServiceError.invalidParams(reader.errors) }
    // Every tool fits on the first page, so no cursor is ever handed out.
    if let cursor = object["cursor"], cursor != .null {
      throw ServiceError.invalidParams([FieldError(path: "cursor", message: "unknown cursor; tools/list has one page")])
    }
    if backOffice { return modern ? Self.backOfficeEnvelopeList : Self.backOfficeList }
    return modern ? Self.envelopeList : Self.list
  }

  /// Whether a `tools/call` with these params runs a method that uses the store.
  var callUsesStore: @Sendable (JSONValue?) -> Bool {
    { [methods] params in
      // A call that names no known tool is answered with an error, from the params alone.
      guard case .object(let object)? = params, case .string(let name)? = object["name"], let entry = methods[name]
      else { return false }
      return entry.usesStore(object["arguments"])
    }
  }

  /// Runs the named tool. Its answer is a tool result either way: a method's JSON-RPC error (invalid
  /// arguments, an unknown order, the store) and a result whose status is a failure come back with
  /// `isError: true` and a message for people, so a model can read what went wrong and retry.
  func call(_ params: JSONValue?, modern: Bool, context: ServiceContext, log: RequestLog) throws -> ToolResult {
    let reader = ParamReader()
    guard let object = reader.params(params), let name = reader.string(object["name"], "name") else {
      throw ServiceError.invalidParams(reader.errors)
    }
    let arguments = object["arguments"]
    switch arguments {
    case nil, .null?, .object?: break
    case let other?: reader.fail("arguments", "must be an object, got \(other.kindName)")
    }
    guard let entry = methods[name] else {
      reader.fail("name", "unknown tool \"\(name)\"; tools/list lists the tools")
      throw ServiceError.invalidParams(reader.errors)
    }
    guard reader.errors.isEmpty else { throw ServiceError.invalidParams(reader.errors) }

    var output = JSONWriter()
    let failure: String?
    do {
      failure = try entry.call(arguments == .null ? nil : arguments, context, log, &output).map {
        Self.failureText(tool: name, $0)
      }
    } catch {
      let rpcError = log.wireError(for: error, method: "tools/call \(name)")
      return ToolResult(texts: ["\(name): \(rpcError.readableText)"], structured: nil, isError: true, modern: modern)
    }
    let structured = SerializedJSON(writtenBy: output)
    return ToolResult(
      texts: (failure.map { [$0] } ?? []) + [structured.text], structured: structured, isError: failure != nil,
      modern: modern)
  }

  /// A failed payment or order in words: the status, the failure's code and message and each line.
  static func failureText(tool: String, _ failure: ResultFailure) -> String {
    var text = "\(tool): status \(failure.status)"
    if let code = failure.code { text += " (\(code))" }
    if let message = failure.message { text += ": \(message)" }
    for line in failure.lines { text += "\n  \(line)" }
    return text
  }

  struct ToolResult: MethodResult {
    let texts: [String]
    let structured: SerializedJSON?
    let isError: Bool
    let modern: Bool

    func write(to writer: inout JSONWriter) {
      writer.beginObject()
      writer.key("content")
      writer.beginArray()
      for text in texts {
        writer.beginObject()
        writer.member("type", "text")
        writer.member("text", text)
        writer.endObject()
      }
      writer.endArray()
      writer.member("structuredContent", structured)
      writer.member("isError", isError)
      if modern { MCPEndpoint.writeCompleteResult(cacheable: false, into: &writer) }
      writer.endObject()
    }
  }
}
