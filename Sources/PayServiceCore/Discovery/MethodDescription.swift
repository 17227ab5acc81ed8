/// What a method says about itself beyond its shapes: the one source of its prose and traits in
/// `rpc.discover`'s OpenRPC method objects and MCP's tools.
public struct MethodDocumentation: Sendable {
  /// One line: what the method is for.
  public var summary: String
  /// What a caller (a person or a model) needs to use it well.
  public var description: String
  /// The JSON-RPC error codes the method can answer with besides -32602 (its params are checked)
  /// and -32603 (which any can).
  public var errors: [RPCError.Code]
  /// Reads config, clock or store and changes nothing.
  public var readOnly: Bool
  /// The same call again has no further effect (and gets the same answer).
  public var idempotent: Bool
  /// Undoes or gives back something (MCP's destructiveHint): a cancel, a refund.
  public var destructive: Bool

  public init(
    summary: String, description: String, errors: [RPCError.Code] = [], readOnly: Bool, idempotent: Bool,
    destructive: Bool = false
  ) {
    self.summary = summary
    self.description = description
    self.errors = errors
    self.readOnly = readOnly
    self.idempotent = idempotent
    self.destructive = destructive
  }
}

/// A method as clients see it: its documentation with the params and result schemas its shapes give.
public struct MethodDescription: Sendable {
  public var documentation: MethodDocumentation
  public var params: [ObjectMember]
  public var result: JSONSchema

  public var summary: String { documentation.summary }
  /// Every error code the method answers with except -32603.
  public var errors: [RPCError.Code] { [.invalidParams] + documentation.errors }

  /// The params as one object schema: MCP's `inputSchema`. Unknown params are -32602, so it is closed.
  public var paramsSchema: JSONSchema {
    .object(params.map { ($0.name, $0.schema) }, required: params.filter(\.required).map(\.name))
  }
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
    case .agreementNotFound: return "Agreement not found: no agreement has this agreementId"
    case .idempotencyKeyConflict:
      return
        "Idempotency key conflict: the request's key (captureId, cancelId, refundId, adjustmentId, erasureId, reloadId, a Stripe event id) was already used with different params"
    case .unsupportedProtocolVersion: return "Unsupported protocol version: data.supported lists the ones to retry with"
    default: return "Internal error"
    }
  }
}
