/// A health check: the process answers, and its store does. (MCP's `ping`, answered beside it,
/// is MCP's liveness check and must answer an empty object, so this one has its own name.)
public enum Health: RPCMethod {
  public static let name = "health"

  public static let documentation = MethodDocumentation(
    summary: "Check that payservice and its store answer; say which config is in effect.",
    description: """
      Answers status ok once the store has answered a query, with the SHA-256 of the config file in effect \
      (it changes when a reload takes effect). A store that does not answer is error -32001. Changes \
      nothing; `payservice call health` is a health check's command.
      """,
    errors: [.storeUnavailable], readOnly: true, idempotent: true)
  public static let usesStore = true

  public struct Params: Sendable {}

  public static let params = ObjectShape<Params>(blank: { Params() }, [])

  public struct Result: MethodResult, WireObject {
    public var config = ""

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .constant("status", "ok"),
        .member(
          "config", \.config, .required,
          .string("sha256: and the config file's SHA-256, hex.", pattern: "^sha256:[0-9a-f]{64}$")),
      ])
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    try context.store.check()
    return Result(config: context.config.digest)
  }
}
