extension MethodTable {
  /// What payservice answers on stdio: its methods (`MethodRegistry`), then OpenRPC's discovery
  /// method and MCP's methods, each registered by its own module.
  public static func payservice() -> MethodTable {
    var table = MethodTable()
    MethodRegistry.register(into: &table)
    OpenRPCDocument.register(into: &table)
    MCPEndpoint.register(into: &table)
    return table
  }
}
