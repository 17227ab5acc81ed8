/// The Model Context Protocol on payservice's own stdio: agents connect with no flag. MCP is
/// newline-delimited JSON-RPC 2.0 like the service itself, so its methods are answered by the same
/// handler next to the payservice methods, and every payservice method is one MCP tool.
///
/// Two eras of MCP are spoken, both without session state. The handshake revisions (`initialize`,
/// then plain requests) and the 2026-07-28 revision, where `server/discover` replaces the handshake
/// and every request carries its revision and the client's capabilities in `params._meta`; such a
/// request gets that revision's result members (`resultType`, and cache hints where it defines them).
/// A request before `initialize`, or without it, is answered all the same, so plain JSON-RPC clients
/// and agents can share one process.
public enum MCPEndpoint {
  /// The handshake revisions payservice speaks, newest first. Both define tools with `outputSchema`
  /// and results with `structuredContent`.
  public static let supportedVersions = ["2025-11-25", "2025-06-18"]
  /// The revision of the per-request envelope (`server/discover`).
  public static let envelopeVersion = "2026-07-28"
  /// Every revision, as `server/discover` and a -32022 error list them.
  public static let allVersions = [envelopeVersion] + supportedVersions

  static let protocolVersionKey = "io.modelcontextprotocol/protocolVersion"
  static let clientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"
  static let serverInfoKey = "io.modelcontextprotocol/serverInfo"

  static let instructions = """
    payservice prices Apple Pay carts, answers the payment sheet's events, authorizes payments and \
    records orders for one configured shop. Start with listProducts and listShippingMethods to learn \
    the skus and shipping method identifiers. Amounts are decimal strings in the merchant currency. \
    To buy: authorizePayment gives a chargeToken, then processOrder with the same cart and the amount.
    """

  /// What a back-office process (`--back-office`) adds: its tools move money back.
  static let backOfficeInstructions = """
    \(instructions) This is the shop's back office: listOrders and getOrder find orders; captureOrder, \
    cancelOrder and refundOrder move money, each under your own key (captureId, cancelId, refundId): \
    send the same call again with the same key after a timeout, never a new key.
    """

  static func instructions(backOffice: Bool) -> String { backOffice ? backOfficeInstructions : instructions }

  /// Registers MCP's methods and notifications: answered beside payservice's own, each of
  /// payservice's methods one tool.
  /// The tool catalogs, built at the first MCP request that needs one rather than at every start.
  private static let tools = ToolCatalog(backOffice: false)
  private static let backOfficeTools = ToolCatalog(backOffice: true)

  static func register(into table: inout MethodTable, backOffice: Bool) {
    @Sendable func tools() -> ToolCatalog { backOffice ? Self.backOfficeTools : Self.tools }
    // Nothing to answer for these: payservice answers every request before it reads the next line,
    // so a cancellation always names a finished request.
    let nothing = MethodTable.Entry(usesStore: MethodTable.storeFree) { _, _, _ in SerializedJSON(JSONValue.object(JSONObject())) }
    table.register(
      "initialize", MethodTable.Entry(usesStore: MethodTable.storeFree) { params, _, _ in try initialize(params, backOffice: backOffice) })
    table.register(
      "server/discover",
      MethodTable.Entry(usesStore: MethodTable.storeFree) { params, _, _ in try discover(params, backOffice: backOffice) })
    table.register("ping", nothing)
    table.register(
      "tools/list",
      MethodTable.Entry(usesStore: MethodTable.storeFree) { params, _, _ in try tools().list(params, modern: try envelope(params)) })
    // A call of a store method is answered in order, like the method itself; as a notification it
    // does not run (a payment needs an answer).
    table.register(
      "tools/call",
      MethodTable.Entry(answerRequired: "a tool call", usesStore: { tools().callUsesStore($0) }) { params, context, log in
        try tools().call(params, modern: try envelope(params), context: context, log: log)
      })
    table.register("notifications/initialized", nothing)
    table.register("notifications/cancelled", nothing)
  }

  /// Whether `params` carries the 2026-07-28 envelope (`_meta` with the revision and the client's
  /// capabilities). A revision payservice does not speak is -32022 naming the ones it does.
  static func envelope(_ params: JSONValue?) throws -> Bool {
    guard case .object(let object)? = params, case .object(let meta)? = object["_meta"],
      let version = meta[protocolVersionKey]
    else { return false }
    guard case .string(let requested) = version else {
      throw ServiceError.invalidParams([
        FieldError(path: "_meta.\(protocolVersionKey)", message: "must be a string, got \(version.kindName)")
      ])
    }
    guard allVersions.contains(requested) else {
      throw RPCError.unsupportedProtocolVersion(requested: requested, supported: allVersions)
    }
    guard requested == envelopeVersion else { return false }
    guard case .object? = meta[clientCapabilitiesKey] else {
      throw ServiceError.invalidParams([
        FieldError(path: "_meta.\(clientCapabilitiesKey)", message: "is required with protocol version \(requested)")
      ])
    }
    return true
  }

  /// `server/discover` (2026-07-28): the revisions, capabilities and identity, in place of `initialize`.
  static func discover(_ params: JSONValue?, backOffice: Bool) throws -> Discovery {
    guard try envelope(params) else {
      throw ServiceError.invalidParams([
        FieldError(
          path: "_meta",
          message: "must carry \(protocolVersionKey) \"\(envelopeVersion)\" and \(clientCapabilitiesKey)")
      ])
    }
    return Discovery(backOffice: backOffice)
  }

  struct Discovery: MethodResult {
    let backOffice: Bool

    func write(to writer: inout JSONWriter) {
      writer.beginObject()
      writer.key("_meta")
      writer.beginObject()
      writer.key(serverInfoKey)
      writeServerInfo(into: &writer)
      writer.endObject()
      writer.member("supportedVersions", allVersions)
      writer.key("capabilities")
      writeCapabilities(into: &writer)
      writer.member("instructions", instructions(backOffice: backOffice))
      writeCompleteResult(cacheable: true, into: &writer)
      writer.endObject()
    }
  }

  /// `{"tools":{"listChanged":false}}`: tools only, and they never change while payservice runs.
  static func writeCapabilities(into writer: inout JSONWriter) {
    writer.beginObject()
    writer.key("tools")
    writer.beginObject()
    writer.member("listChanged", false)
    writer.endObject()
    writer.endObject()
  }

  static func writeServerInfo(into writer: inout JSONWriter) {
    writer.beginObject()
    writer.member("name", "payservice")
    writer.member("title", "payservice: Apple Pay checkout")
    writer.member("version", PayServiceVersion.current)
    writer.endObject()
  }

  /// The members every 2026-07-28 result carries, and the cache hints of the cacheable ones: stale at
  /// once and private, since a restarted payservice may be another release with other tools.
  static func writeCompleteResult(cacheable: Bool, into writer: inout JSONWriter) {
    writer.member("resultType", "complete")
    if cacheable {
      writer.member("ttlMs", 0)
      writer.member("cacheScope", "private")
    }
  }

  /// The revision to answer with: the client's when payservice speaks it, else the newest.
  public static func negotiate(_ requested: String) -> String {
    supportedVersions.contains(requested) ? requested : supportedVersions[0]
  }

  static func initialize(_ params: JSONValue?, backOffice: Bool) throws -> Initialized {
    let reader = ParamReader()
    guard let object = reader.params(params), let requested = reader.string(object["protocolVersion"], "protocolVersion")
    else { throw ServiceError.invalidParams(reader.errors) }
    _ = reader.object(object["capabilities"], "capabilities", required: false)
    _ = reader.object(object["clientInfo"], "clientInfo", required: false)
    guard reader.errors.isEmpty else { throw ServiceError.invalidParams(reader.errors) }
    return Initialized(protocolVersion: negotiate(requested), backOffice: backOffice)
  }

  struct Initialized: MethodResult {
    let protocolVersion: String
    let backOffice: Bool

    func write(to writer: inout JSONWriter) {
      writer.beginObject()
      writer.member("protocolVersion", protocolVersion)
      writer.key("capabilities")
      writeCapabilities(into: &writer)
      writer.key("serverInfo")
      writeServerInfo(into: &writer)
      writer.member("instructions", instructions(backOffice: backOffice))
      writer.endObject()
    }
  }
}
