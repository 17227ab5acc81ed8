extension MethodTable {
  /// What payservice answers on stdio: its methods (`MethodRegistry`; with `backOffice`, the
  /// back-office methods too), then OpenRPC's discovery method and MCP's methods, each registered
  /// by its own module and describing the same methods.
  public static func payservice(backOffice: Bool = false) -> MethodTable {
    var table = MethodTable()
    MethodRegistry.register(MethodRegistry.methods(backOffice: backOffice), into: &table)
    OpenRPCDocument.register(into: &table, backOffice: backOffice)
    MCPEndpoint.register(into: &table, backOffice: backOffice)
    return table
  }
}
