/// Every method the request handler answers, by name: payservice's own and those of the protocols
/// spoken beside them (`rpc.discover`, MCP), which register themselves here. The RPC layer knows
/// entries, not what registered them.
public struct MethodTable: Sendable {
  /// How one method is called. A class: a parsed request carries its method's entry.
  public final class Entry: Sendable {
    /// Why a notification of this method is not run (it needs an answer), for the operator's log;
    /// nil when notifications run.
    let answerRequired: String?
    /// Whether a request with these params may read or write the store: it is then answered in
    /// order on the server thread. An entry that does not say is taken to (the safe default).
    let usesStore: @Sendable (JSONValue?) -> Bool
    /// Whether pipelined requests may share one store transaction (see `RPCMethod.commitsInGroups`).
    let commitsInGroups: Bool
    /// Reads the params, runs the method and writes its result, returning the result's failure
    /// report (see `MethodResult.failure`); throws a domain or wire error before writing anything.
    /// The log is the answering thread's, for warnings.
    let call: @Sendable (JSONValue?, ServiceContext, RequestLog, inout JSONWriter) throws -> ResultFailure?
    /// For a method that is one operation (`OperationMethod`): reads the params and makes the
    /// request's operation, which the executor runs in its steps; nil for every other entry.
    let operation: (@Sendable (JSONValue?, ServiceContext) throws -> OperationRequest)?

    /// - Parameter call: reads the params and runs the method, writing its result.
    public init(
      answerRequired: String? = nil, usesStore: @escaping @Sendable (JSONValue?) -> Bool = { _ in true },
      commitsInGroups: Bool = false,
      operation: (@Sendable (JSONValue?, ServiceContext) throws -> OperationRequest)? = nil,
      call: @escaping @Sendable (JSONValue?, ServiceContext, RequestLog, inout JSONWriter) throws -> ResultFailure?
    ) {
      self.answerRequired = answerRequired
      self.usesStore = usesStore
      self.commitsInGroups = commitsInGroups
      self.operation = operation
      self.call = call
    }

    /// - Parameter call: reads the params and runs the method, returning its result.
    public init<Result: MethodResult>(
      answerRequired: String? = nil, usesStore: @escaping @Sendable (JSONValue?) -> Bool = { _ in true },
      commitsInGroups: Bool = false,
      call: @escaping @Sendable (JSONValue?, ServiceContext, RequestLog) throws -> Result
    ) {
      self.answerRequired = answerRequired
      self.usesStore = usesStore
      self.commitsInGroups = commitsInGroups
      self.operation = nil
      self.call = { params, context, log, writer in
        let result = try call(params, context, log)
        result.write(to: &writer)
        return result.failure
      }
    }
  }

  /// `Entry.usesStore` of an entry answered without the store, whatever its params.
  public static let storeFree: @Sendable (JSONValue?) -> Bool = { _ in false }

  private var entries: [String: Entry] = [:]
  /// The names in registration order.
  public private(set) var names: [String] = []

  public init() {
    entries.reserveCapacity(64)
    names.reserveCapacity(64)
  }

  public mutating func register(_ name: String, _ entry: Entry) {
    precondition(entries[name] == nil, "method \(name) registered twice")
    entries[name] = entry
    names.append(name)
  }

  public subscript(name: String) -> Entry? { entries[name] }

  /// The methods also answered straight from a request's bytes (`BorrowedMethod`), and their
  /// names for lookup by the scanned bytes.
  private(set) var borrowed: [any BorrowedMethod.Type] = []
  private(set) var borrowedNames: ByteKeyTable?
  private var borrowedNamesStorage: ByteKeyTable.Storage?

  /// Also answers the registered method `method` from a request's bytes where it can.
  mutating func registerBorrowed(_ method: any BorrowedMethod.Type) {
    precondition(entries[method.name] != nil, "method \(method.name) is not registered")
    borrowed.append(method)
    let (table, storage) = ByteKeyTable.make(borrowed.enumerated().map { ($0.element.name, $0.offset) })
    borrowedNames = table
    borrowedNamesStorage = storage
  }
}

/// A method's result: written as JSON, and able to say when it reports a payment or order that did
/// not go through (an MCP tool call with such a result is marked `isError`).
public protocol MethodResult: JSONRepresentable {
  /// The failure in words, for people and models; nil for a result that is not a failure.
  var failure: ResultFailure? { get }
}

extension MethodResult {
  public var failure: ResultFailure? { nil }
}

/// A result that reports a failed payment or order: its status, code, message and the lines it
/// lists (sheet errors, short stock).
public struct ResultFailure: Equatable, Sendable {
  public var status: String
  public var code: String?
  public var message: String?
  public var lines: [String] = []
}
