/// payservice's methods as MCP tools: `tools/list` describes them from each method's
/// `MethodDescription` (the schemas `rpc.discover` shows), `tools/call` runs them.
struct ToolCatalog: Sendable {
  let registry: MethodRegistry

  // Built at the first tools/list or tools/call (static lets are lazy), not at every start.
  /// `tools/list`'s result, written once: in a handshake revision, and in 2026-07-28.
  static let listText = JSONWriter.string(list(MethodRegistry.methods, envelope: false))
  static let envelopeListText = JSONWriter.string(list(MethodRegistry.methods, envelope: true))
  /// Each tool's result statuses that mean the payment or order did not go through.
  static let failureStatuses: [String: [String]] = Dictionary(
    uniqueKeysWithValues: MethodRegistry.methods.map { ($0.name, $0.documentation.failureStatuses) })

  /// The `tools/list` result: one tool per method, in registry order.
  static func list(_ methods: [any RPCMethod.Type], envelope: Bool) -> JSONValue {
    var result = JSONObjectBuilder()
    result.set("tools", .array(methods.map { tool(name: $0.name, $0.documentation) }))
    if envelope {
      for member in MCPEndpoint.completeResultMembers(cacheable: true) { result.set(member.key, member.value) }
    }
    return result.value
  }

  static func tool(name: String, _ description: MethodDescription) -> JSONValue {
    var annotations = JSONObjectBuilder()
    annotations.set("readOnlyHint", description.readOnly)
    annotations.set("destructiveHint", false)
    annotations.set("idempotentHint", description.idempotent)
    var tool = JSONObjectBuilder()
    tool.set("name", name)
    tool.set("description", "\(description.summary)\n\n\(description.description)")
    tool.set("inputSchema", description.paramsSchema.json)
    tool.set("outputSchema", description.result.json)
    tool.set("annotations", annotations.value)
    return tool.value
  }

  func list(_ params: JSONValue?, modern: Bool, into writer: inout JSONWriter) throws {
    let reader = ParamReader()
    guard let object = reader.params(params) else { throw ServiceError.invalidParams(reader.errors) }
    // Every tool fits on the first page, so no cursor is ever handed out.
    if let cursor = object["cursor"], cursor != .null {
      throw ServiceError.invalidParams([FieldError(path: "cursor", message: "unknown cursor; tools/list has one page")])
    }
    writer.write(serialized: modern ? Self.envelopeListText : Self.listText)
  }

  /// Whether a `tools/call` with these params runs a method that uses the store.
  func callUsesStore(_ params: JSONValue?) -> Bool {
    guard case .object(let object)? = params, case .string(let name)? = object["name"] else { return false }
    return registry.entries[name]?.usesStore(object["arguments"]) == true
  }

  /// Runs the named tool. Its answer is a tool result either way: a method's JSON-RPC error (invalid
  /// arguments, an unknown order, the store) and a result whose status is a failure come back with
  /// `isError: true` and a message for people, so a model can read what went wrong and retry.
  func call(
    _ params: JSONValue?, modern: Bool, context: ServiceContext, log: RequestLog, into writer: inout JSONWriter
  ) throws {
    let reader = ParamReader()
    guard let object = reader.params(params), let name = reader.string(object["name"], "name") else {
      throw ServiceError.invalidParams(reader.errors)
    }
    let arguments = object["arguments"]
    switch arguments {
    case nil, .null?, .object?: break
    case let other?: reader.fail("arguments", "must be an object, got \(other.kindName)")
    }
    guard let entry = registry.entries[name] else {
      reader.fail("name", "unknown tool \"\(name)\"; tools/list lists the tools")
      throw ServiceError.invalidParams(reader.errors)
    }
    guard reader.errors.isEmpty else { throw ServiceError.invalidParams(reader.errors) }

    var output = JSONWriter()
    do {
      try entry.handle(arguments == .null ? nil : arguments, context, &output)
    } catch {
      let rpcError = log.wireError(for: error, method: "tools/call \(name)")
      Self.writeToolResult(texts: ["\(name): \(RPCError.readableText(rpcError.json))"], structured: nil, isError: true,
        modern: modern, into: &writer)
      return
    }
    let text = output.string
    var failure: String?
    if let statuses = Self.failureStatuses[name], !statuses.isEmpty,
      case .object(let result)? = try? JSONParser.parse(text),
      case .string(let status)? = result["status"], statuses.contains(status)
    {
      failure = Self.failureText(tool: name, status: status, result: result)
    }
    Self.writeToolResult(
      texts: (failure.map { [$0] } ?? []) + [text], structured: text, isError: failure != nil, modern: modern,
      into: &writer)
  }

  /// A failed payment or order in words: the status, the failure's message and each sheet error.
  static func failureText(tool: String, status: String, result: JSONObject) -> String {
    var text = "\(tool): status \(status)"
    if case .string(let code)? = result["failureCode"] { text += " (\(code))" }
    if case .string(let message)? = result["message"] { text += ": \(message)" }
    if case .array(let errors)? = result["errors"] {
      for case .object(let error) in errors {
        if case .string(let message)? = error["message"] {
          text += "\n  "
          if case .string(let field)? = error["contactField"] { text += "\(field): " }
          text += message
        } else if case .string(let sku)? = error["sku"], case .number(let requested)? = error["requested"],
          case .number(let available)? = error["available"]
        {
          text += "\n  \(sku): \(requested) requested, \(available) available"
        }
      }
    }
    return text
  }

  static func writeToolResult(
    texts: [String], structured: String?, isError: Bool, modern: Bool, into writer: inout JSONWriter
  ) {
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
    if let structured {
      writer.key("structuredContent")
      writer.write(serialized: structured)
    }
    writer.member("isError", isError)
    if modern { MCPEndpoint.writeCompleteResult(cacheable: false, into: &writer) }
    writer.endObject()
  }
}
