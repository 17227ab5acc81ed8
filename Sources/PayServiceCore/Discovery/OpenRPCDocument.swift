/// payservice's release version: `--version`, OpenRPC's `info.version` and MCP's `serverInfo.version`.
public enum PayServiceVersion {
  public static let current = "0.11.0"
}

/// The OpenRPC 1.3 document `rpc.discover` answers with: every method the process serves
/// (`MethodRegistry.methods(backOffice:)`), described by its `MethodDescription`, with the example
/// pairings from the golden transcripts.
public enum OpenRPCDocument {
  public static let openrpcVersion = "1.3.2"

  /// The document, the same for every config (schemas name no configured sku or method).
  public static let json: JSONValue = build(methods: MethodRegistry.methods)
  /// The document of a process started with `--back-office`.
  public static let backOfficeJSON: JSONValue = build(methods: MethodRegistry.methods(backOffice: true))
  static let serialized = SerializedJSON(json)
  static let backOfficeSerialized = SerializedJSON(backOfficeJSON)

  /// OpenRPC's service discovery method: the document, for params absent, `[]` or `{}`.
  public static let discoverMethodName = "rpc.discover"

  static func register(into table: inout MethodTable, backOffice: Bool) {
    table.register(
      discoverMethodName,
      MethodTable.Entry(usesStore: MethodTable.storeFree) { params, _, _ in
        switch params {
        case nil: break
        case .array(let elements)? where elements.isEmpty: break
        case .object(let members)? where members.members.isEmpty: break
        default: throw ServiceError.invalidParams([FieldError(path: "params", message: "rpc.discover takes no params")])
        }
        return backOffice ? backOfficeSerialized : serialized
      })
  }

  static func build(methods: [any RPCMethod.Type]) -> JSONValue {
    var info = JSONObjectBuilder()
    info.set("title", "payservice")
    info.set(
      "description",
      """
      The merchant side of an Apple Pay checkout over line-delimited JSON-RPC 2.0 on stdio: pricing, the \
      payment sheet's events, authorization and orders. Params are by name. Amounts are decimal strings. \
      The full contract is protocol.md.
      """)
    info.set("version", PayServiceVersion.current)
    var document = JSONObjectBuilder()
    document.set("openrpc", openrpcVersion)
    document.set("info", info.value)
    document.set("methods", .array(methods.map { method(name: $0.name, $0.description) }))
    return document.value
  }

  static func method(name: String, _ description: MethodDescription) -> JSONValue {
    var method = JSONObjectBuilder()
    method.set("name", name)
    method.set("summary", description.summary)
    method.set("description", description.documentation.description)
    method.set("paramStructure", "by-name")
    method.set(
      "params",
      .array(
        description.params.map { param in
          var descriptor = JSONObjectBuilder()
          descriptor.set("name", param.name)
          descriptor.set("required", param.required)
          descriptor.set("schema", param.schema.json)
          return descriptor.value
        }))
    var result = JSONObjectBuilder()
    result.set("name", "\(name)Result")
    result.set("schema", description.result.json)
    method.set("result", result.value)
    method.set(
      "errors",
      .array(
        (description.errors + [.internalError]).map { code in
          var error = JSONObjectBuilder()
          error.set("code", code.rawValue)
          error.set("message", code.summary)
          return error.value
        }))
    method.set("examples", .array(MethodExample.all.filter { $0.method == name }.map(examplePairing)))
    return method.value
  }

  static func examplePairing(_ example: MethodExample) -> JSONValue {
    // The texts are generated from parsed golden transcripts; a failure here is a build defect.
    guard case .object(let params)? = try? JSONParser.parse(example.params),
      let result = try? JSONParser.parse(example.result)
    else { preconditionFailure("example \(example.name) is not JSON") }
    var pairing = JSONObjectBuilder()
    pairing.set("name", example.name)
    pairing.set(
      "description",
      "\(example.summary). Recorded in Tests/EndToEndTests/Golden/\(example.golden), request id \(example.requestId).")
    pairing.set(
      "params",
      .array(
        params.members.map { member in
          var value = JSONObjectBuilder()
          value.set("name", member.key)
          value.set("value", member.value)
          return value.value
        }))
    var resultExample = JSONObjectBuilder()
    resultExample.set("name", "\(example.name)-result")
    resultExample.set("value", result)
    pairing.set("result", resultExample.value)
    return pairing.value
  }
}
