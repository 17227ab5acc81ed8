/// Every method the request handler answers, by name: payservice's own and those of the protocols
/// spoken beside them (`rpc.discover`, MCP), which register themselves here. The RPC layer knows
/// entries, not what registered them.
public struct MethodTable: Sendable {
  /// How one method is called.
  public struct Entry: Sendable {
    /// Why a notification of this method is not run (it needs an answer), for the operator's log;
    /// nil when notifications run.
    let answerRequired: String?
    /// Whether a request with these params reads or writes the store: it is then answered in order
    /// on the server thread.
    let usesStore: @Sendable (JSONValue?) -> Bool
    /// Whether pipelined requests may share one store transaction (see `RPCMethod.commitsInGroups`).
    let commitsInGroups: Bool
    /// Reads the params and runs the method; throws a domain or wire error. The log is the
    /// answering thread's, for warnings.
    let call: @Sendable (JSONValue?, ServiceContext, RequestLog) throws -> any MethodResult

    public init(
      answerRequired: String? = nil, usesStore: @escaping @Sendable (JSONValue?) -> Bool = { _ in false },
      commitsInGroups: Bool = false,
      call: @escaping @Sendable (JSONValue?, ServiceContext, RequestLog) throws -> any MethodResult
    ) {
      self.answerRequired = answerRequired
      self.usesStore = usesStore
      self.commitsInGroups = commitsInGroups
      self.call = call
    }
  }

  private var entries: [String: Entry] = [:]
  /// The names in registration order.
  public private(set) var names: [String] = []

  public init() {}

  public mutating func register(_ name: String, _ entry: Entry) {
    precondition(entries[name] == nil, "method \(name) registered twice")
    entries[name] = entry
    names.append(name)
  }

  public subscript(name: String) -> Entry? { entries[name] }
}
