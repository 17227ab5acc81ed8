/// Loads the process's config file again and, when it is valid, answers every later request with
/// it. Back office only (`--back-office`); SIGHUP does the same for any `serve` process.
public enum ReloadConfig: RPCMethod {
  public static let name = "reloadConfig"

  public static let documentation = MethodDocumentation(
    summary: "Load the config file again; later requests are answered with it when it is valid.",
    description: """
      Reads the file the process was started with (--config) again and checks it as a start would. Valid, \
      it takes effect for the next request: status succeeded with its SHA-256, and products new to the store \
      get their configured stock (existing counts stay: the store's are the truth). Invalid, nothing changes: \
      status failed with every problem and its place (file:line:column), and the config in effect stays \
      (config says which). Changing gateway.kind or Stripe's settings, or the merchant identity certificate, \
      needs a restart, and such a config is refused. Only this process reloads: every process serving the \
      store reads the file itself (SIGHUP to each, or a restart).
      """,
    errors: [.storeUnavailable], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  public struct Params: Sendable {}

  public static let params = ObjectShape<Params>(blank: { Params() }, [])

  public struct Reloaded: Equatable, Sendable, WireObject {
    public var config = ""

    public static let shape = ObjectShape<Reloaded>(
      blank: { Reloaded() },
      [
        .constant("status", "succeeded"),
        .member(
          "config", \.config, .required,
          .string("The config now in effect: sha256: and its SHA-256, hex.", pattern: "^sha256:[0-9a-f]{64}$")),
      ])
  }

  public struct Failed: Equatable, Sendable, WireObject, FailureReporting {
    public var config = ""
    public var errors: [String] = []

    public static let shape = ObjectShape<Failed>(
      blank: { Failed() },
      [
        .constant("status", "failed"),
        .member(
          "config", \.config, .required,
          .string("The config still in effect: sha256: and its SHA-256, hex.", pattern: "^sha256:[0-9a-f]{64}$")),
        .member(
          "errors", \.errors, .required,
          .array(.string("file:line:column: field: what is wrong and what would be valid."), minItems: 1)),
      ])

    public var report: ResultFailure {
      ResultFailure(status: "failed", code: nil, message: "The config file has errors; the config in effect stays.", lines: errors)
    }
  }

  public typealias Result = Outcome<Reloaded, Failed>

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    guard let reloader = context.reloader else {
      return .failed(Failed(config: context.config.digest, errors: ["this process does not reload its config (payservice call)"]))
    }
    switch reloader.reload(from: context) {
    case .success(let config): return .succeeded(Reloaded(config: config.digest))
    case .failure(let error): return .failed(Failed(config: context.config.digest, errors: error.problems.map(\.description)))
    }
  }
}
