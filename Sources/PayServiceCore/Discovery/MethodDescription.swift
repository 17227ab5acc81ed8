/// What a method tells clients about itself: the one source of `rpc.discover`'s OpenRPC method
/// objects and of MCP's tools, so the two cannot disagree.
public struct MethodDescription: Sendable {
  /// One named param.
  public struct Param: Sendable {
    public var name: String
    public var required: Bool
    public var schema: JSONSchema

    public init(_ name: String, required: Bool, _ schema: JSONSchema) {
      self.name = name
      self.required = required
      self.schema = schema
    }
  }

  /// One line: what the method is for.
  public var summary: String
  /// What a caller (a person or a model) needs to use it well.
  public var description: String
  public var params: [Param]
  public var result: JSONSchema
  /// The JSON-RPC error codes the method itself can answer with (besides -32603, which any can).
  public var errors: [RPCError.Code]
  /// Reads config, clock or store and changes nothing.
  public var readOnly: Bool
  /// The same call again has no further effect (and gets the same answer).
  public var idempotent: Bool
  /// Result `status` values that mean the payment or order did not go through: an MCP tool call
  /// with such a result is marked `isError`.
  public var failureStatuses: [String]

  public init(
    summary: String, description: String, params: [Param], result: JSONSchema, errors: [RPCError.Code],
    readOnly: Bool, idempotent: Bool, failureStatuses: [String] = []
  ) {
    self.summary = summary
    self.description = description
    self.params = params
    self.result = result
    self.errors = errors
    self.readOnly = readOnly
    self.idempotent = idempotent
    self.failureStatuses = failureStatuses
  }

  /// The params as one object schema: MCP's `inputSchema`. Unknown params are -32602, so it is closed.
  public var paramsSchema: JSONSchema {
    .object(params.map { ($0.name, $0.schema) }, required: params.filter(\.required).map(\.name))
  }

  /// The params every pricing method reads (`SheetState`), with the ones in `required` required.
  static func sheetParams(required: Set<SheetState.Field>) -> [Param] {
    func optional(_ field: SheetState.Field, _ schema: JSONSchema) -> JSONSchema {
      required.contains(field) ? schema : schema.allowingNull()
    }
    return [
      Param("items", required: true, Shapes.items),
      Param(
        "shippingMethod", required: required.contains(.shippingMethod),
        required.contains(.shippingMethod)
          ? Shapes.shippingMethodIdentifier
          : .string(
            "The selected shipping method's identifier; priced when offered for the region, else the first offered one.",
            minLength: 1)),
      Param("shippingContact", required: required.contains(.shippingContact), Shapes.contact),
      Param("couponCode", required: required.contains(.couponCode), optional(.couponCode, Shapes.couponCode)),
      Param(
        "paymentMethod", required: required.contains(.paymentMethod),
        optional(.paymentMethod, Shapes.paymentMethod(displayNameRequired: false))),
    ]
  }

  /// The error codes every method can answer with: its params are checked.
  static let paramErrors: [RPCError.Code] = [.invalidParams]
}

extension RPCError.Code {
  /// The message this code's errors carry (their start, where the message names something).
  public var summary: String {
    switch self {
    case .parseError: return "Parse error"
    case .invalidRequest: return "Invalid Request"
    case .methodNotFound: return "Method not found"
    case .invalidParams: return "Invalid params: data.errors lists each problem as {path, message}"
    case .storeUnavailable: return "Store unavailable: the order store could not be read or written; nothing was changed"
    case .chargeTokenConflict: return "Charge token conflict: the charge token was already used for a different order"
    case .orderNotFound: return "Order not found: no order has this orderId"
    case .unsupportedProtocolVersion: return "Unsupported protocol version: data.supported lists the ones to retry with"
    default: return "Internal error"
    }
  }
}
