/// A JSON-RPC error object as it goes on the wire.
public struct RPCError: Error, Equatable, Sendable, JSONRepresentable {
  /// The error codes payservice answers with.
  public struct Code: RawRepresentable, Equatable, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let parseError = Code(rawValue: -32700)
    public static let invalidRequest = Code(rawValue: -32600)
    public static let methodNotFound = Code(rawValue: -32601)
    public static let invalidParams = Code(rawValue: -32602)
    public static let internalError = Code(rawValue: -32603)
    public static let storeUnavailable = Code(rawValue: -32001)
    public static let chargeTokenConflict = Code(rawValue: -32002)
    public static let orderNotFound = Code(rawValue: -32003)
    /// A back-office idempotency key (captureId, cancelId, refundId) sent again with other params.
    public static let idempotencyKeyConflict = Code(rawValue: -32004)
    public static let agreementNotFound = Code(rawValue: -32005)
    /// MCP 2026-07-28: the request's `_meta` names a protocol revision payservice does not speak.
    public static let unsupportedProtocolVersion = Code(rawValue: -32022)
  }

  /// What an error's `data` member holds.
  public enum Data: Equatable, Sendable, JSONRepresentable {
    /// -32602: each invalid field with its path.
    case fieldErrors([FieldError])
    /// -32022: the protocol revisions to retry with, and the one asked for.
    case protocolVersions(supported: [String], requested: String)

    public func write(to writer: inout JSONWriter) {
      writer.beginObject()
      switch self {
      case .fieldErrors(let errors):
        writer.member("errors", errors)
      case .protocolVersions(let supported, let requested):
        writer.member("supported", supported)
        writer.member("requested", requested)
      }
      writer.endObject()
    }
  }

  public var code: Code
  public var message: String
  public var data: Data?

  public func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.member("code", code.rawValue)
    writer.member("message", message)
    writer.member("data", data)
    writer.endObject()
  }

  public static func parseError(_ detail: String? = nil) -> RPCError {
    RPCError(code: .parseError, message: detail.map { "Parse error: \($0)" } ?? "Parse error")
  }

  public static func invalidRequest(_ detail: String) -> RPCError {
    RPCError(code: .invalidRequest, message: "Invalid Request: \(detail)")
  }

  public static func methodNotFound(_ method: String) -> RPCError {
    RPCError(code: .methodNotFound, message: "Method not found: \(method)")
  }

  public static func invalidParams(_ errors: [FieldError]) -> RPCError {
    RPCError(code: .invalidParams, message: "Invalid params", data: .fieldErrors(errors))
  }

  public static let internalError = RPCError(code: .internalError, message: "Internal error")

  public static let storeUnavailable = RPCError(
    code: .storeUnavailable, message: "Store unavailable: the order store could not be read or written; nothing was changed")

  public static let chargeTokenConflict = RPCError(
    code: .chargeTokenConflict, message: "Charge token conflict: the charge token was already used for a different order")

  public static func orderNotFound(_ orderId: String) -> RPCError {
    RPCError(code: .orderNotFound, message: "Order not found: \(orderId)")
  }

  public static func agreementNotFound(_ agreementId: String) -> RPCError {
    RPCError(code: .agreementNotFound, message: "Agreement not found: \(agreementId)")
  }

  /// `key` names the params member: captureId, cancelId or refundId.
  public static func idempotencyKeyConflict(_ key: String) -> RPCError {
    RPCError(
      code: .idempotencyKeyConflict,
      message: "Idempotency key conflict: this \(key) was already used with different params; use a new \(key)")
  }

  /// MCP's answer to a request in a revision payservice does not speak: the ones it does, to retry with.
  public static func unsupportedProtocolVersion(requested: String, supported: [String]) -> RPCError {
    RPCError(
      code: .unsupportedProtocolVersion, message: "Unsupported protocol version",
      data: .protocolVersions(supported: supported, requested: requested))
  }
}

extension RPCError {
  /// The error as text for people: the message and code, then each invalid field on its own line
  /// with its path (`  items[0].quantity: must be …`).
  public var readableText: String {
    var text = "\(message) (\(code.rawValue))"
    if case .fieldErrors(let problems)? = data {
      for problem in problems { text += "\n  \(problem.path.isEmpty ? "params" : problem.path): \(problem.message)" }
    }
    return text
  }
}

/// One problem with a request's params: where it is and what would be valid.
public struct FieldError: Equatable, Sendable, JSONRepresentable {
  public var path: String
  public var message: String

  public func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.member("path", path)
    writer.member("message", message)
    writer.endObject()
  }
}

/// Domain failures that become JSON-RPC errors. `RPCError.init(mapping:)` is the one place they are
/// given codes; anything else becomes -32603 with no internals.
public enum ServiceError: Error, Equatable, Sendable {
  case invalidParams([FieldError])
  case chargeTokenConflict
  case orderNotFound(String)
  case agreementNotFound(String)
  /// The params member whose key was used before with other params.
  case idempotencyKeyConflict(String)
  /// A Stripe event id recorded before with another type or time.
  case stripeEventConflict
}

extension RPCError {
  public init(mapping error: any Error) {
    switch error {
    case let error as RPCError:
      self = error
    case let error as ServiceError:
      switch error {
      case .invalidParams(let errors): self = .invalidParams(errors)
      case .chargeTokenConflict: self = .chargeTokenConflict
      case .orderNotFound(let id): self = .orderNotFound(id)
      case .agreementNotFound(let id): self = .agreementNotFound(id)
      case .idempotencyKeyConflict(let key): self = .idempotencyKeyConflict(key)
      case .stripeEventConflict:
        self = RPCError(
          code: .idempotencyKeyConflict,
          message:
            "Idempotency key conflict: this Stripe event id was recorded with another type or time; Stripe never changes an event, so this payload is not the event it names")
      }
    case is StoreError:
      self = .storeUnavailable
    default:
      self = .internalError
    }
  }
}
