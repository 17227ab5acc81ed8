/// The Model Context Protocol on payservice's own stdio: agents connect with no flag. MCP is
/// newline-delimited JSON-RPC 2.0 like the service itself, so its methods are answered by the same
/// handler next to the payservice methods, and every payservice method is one MCP tool.
///
/// The endpoint keeps no session state: `initialize` negotiates a revision and answers; a request
/// before it (or without it) is answered all the same, so plain JSON-RPC clients and agents can share
/// one process.
public enum MCPEndpoint {
  /// The handshake revisions payservice speaks, newest first. Both define tools with `outputSchema`
  /// and results with `structuredContent`.
  public static let supportedVersions = ["2025-11-25", "2025-06-18"]

  /// Names of the MCP methods and notifications answered here.
  public static let methodNames = [
    "initialize", "ping", "tools/list", "tools/call", "notifications/initialized", "notifications/cancelled",
  ]

  static let instructions = """
    payservice prices Apple Pay carts, answers the payment sheet's events, authorizes payments and \
    records orders for one configured shop. Start with listProducts and listShippingMethods to learn \
    the skus and shipping method identifiers. Amounts are decimal strings in the merchant currency. \
    To buy: authorizePayment gives a chargeToken, then processOrder with the same cart and the amount.
    """

  /// The entries that answer MCP's methods, for `RequestHandler`.
  static func entries(registry: MethodRegistry, log: RequestLog) -> [String: MethodRegistry.Entry] {
    let tools = ToolCatalog(registry: registry)
    var entries: [String: MethodRegistry.Entry] = [:]
    entries["initialize"] = .init(runsAsNotification: true, usesStore: false, commitsInGroups: false) {
      params, _, writer in try initialize(params, into: &writer)
    }
    entries["ping"] = .init(runsAsNotification: true, usesStore: false, commitsInGroups: false) { _, _, writer in
      writer.write(serialized: "{}")
    }
    entries["tools/list"] = .init(runsAsNotification: true, usesStore: false, commitsInGroups: false) {
      params, _, writer in
      try tools.list(params, into: &writer)
    }
    // Runs a method, which may use the store; RequestHandler keeps such calls in order.
    entries["tools/call"] = .init(runsAsNotification: false, usesStore: false, commitsInGroups: false) {
      params, context, writer in
      try tools.call(params, context: context, log: log, into: &writer)
    }
    for notification in ["notifications/initialized", "notifications/cancelled"] {
      // Nothing to do: payservice answers every request before it reads the next line, so a
      // cancellation always names a finished request.
      entries[notification] = .init(runsAsNotification: true, usesStore: false, commitsInGroups: false) {
        _, _, writer in writer.write(serialized: "{}")
      }
    }
    return entries
  }

  /// The revision to answer with: the client's when payservice speaks it, else the newest.
  public static func negotiate(_ requested: String) -> String {
    supportedVersions.contains(requested) ? requested : supportedVersions[0]
  }

  static func initialize(_ params: JSONValue?, into writer: inout JSONWriter) throws {
    let reader = ParamReader()
    guard let object = reader.params(params), let requested = reader.string(object["protocolVersion"], "protocolVersion")
    else { throw ServiceError.invalidParams(reader.errors) }
    _ = reader.object(object["capabilities"], "capabilities", required: false)
    _ = reader.object(object["clientInfo"], "clientInfo", required: false)
    guard reader.errors.isEmpty else { throw ServiceError.invalidParams(reader.errors) }
    writer.beginObject()
    writer.member("protocolVersion", negotiate(requested))
    writer.key("capabilities")
    writer.write(serialized: #"{"tools":{"listChanged":false}}"#)
    writer.key("serverInfo")
    writer.beginObject()
    writer.member("name", "payservice")
    writer.member("title", "payservice: Apple Pay checkout")
    writer.member("version", PayServiceVersion.current)
    writer.endObject()
    writer.member("instructions", instructions)
    writer.endObject()
  }
}
