/// An RPC method that is one operation of the journal: it declares the `Operation` a request
/// makes, and `Executor` runs it in the operation's steps (its first transaction, shared with the
/// requests grouped with it; its network call with no transaction open; its settlement). A batch,
/// a one-shot `call` or an MCP tool call runs it to its answer (`run`).
public protocol OperationMethod: RPCMethod {
  associatedtype Work: Operation where Work.Result == Result

  /// Whether pipelined requests of this method share their transactions (group commit): their
  /// first steps run in one transaction, each in its own savepoint, and so do their settlements;
  /// they are answered only after the shared commit. Undeclared: no.
  static var commitsInGroups: Bool { get }

  /// The operation a request with these params makes (its key, subject and fingerprint).
  static func operation(_ params: Params, context: ServiceContext) throws -> Work

  /// Reads the params and makes the request's operation, as the executor starts it. A requirement
  /// so that the registry reaches code specialized for each method.
  static func request(_ params: JSONValue?, context: ServiceContext) throws -> OperationRequest
}

extension OperationMethod {
  public static var commitsInGroups: Bool { false }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    try OperationRunner.run(operation(params, context: context), context: context)
  }

  public static var operationKinds: [any Operation.Type] { [Work.self] }

  public static var tableEntry: MethodTable.Entry {
    tableEntry(commitsInGroups: commitsInGroups) { params, context in try request(params, context: context) }
  }

  public static func request(_ params: JSONValue?, context: ServiceContext) throws -> OperationRequest {
    let operation = try operation(readParams(params, context: context), context: context)
    return OperationRequest(readAhead: operation.readAhead) { context in
      switch try OperationRunner.start(operation, context: context) {
      case .answered(let result), .recorded(let result): return .answered(result)
      case .inFlight(let inFlight): return .inFlight(inFlight)
      }
    }
  }
}

/// A request of an `OperationMethod`, its params read: what its first transaction will read by
/// key, and what starts it.
public struct OperationRequest: Sendable {
  /// The rows the first transaction reads (see `Operation.readAhead`).
  let readAhead: ReadAhead
  /// Runs the first transaction (`OperationRunner.start`).
  let start: @Sendable (ServiceContext) throws -> OperationStep
}

/// How far the first transaction took a request.
enum OperationStep {
  /// The answer is known (decided without the network, or stored under the key).
  case answered(any MethodResult)
  /// The entry is pending: its call is to be sent once the transaction is durable.
  case inFlight(any AnsweredInFlight)
}

/// A started operation's call and settlement, whatever its kind.
protocol AnsweredInFlight: Resumed {
  /// Waits for the reply and records it in the second transaction: the request's answer.
  func answer() throws -> any MethodResult
}

extension OperationRunner.InFlight: AnsweredInFlight where Op.Result: MethodResult {
  func answer() throws -> any MethodResult { try finish() }
}
