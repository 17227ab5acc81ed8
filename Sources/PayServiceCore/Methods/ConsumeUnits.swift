/// Spends units of a consumable balance exactly once, never below zero.
public enum ConsumeUnits: OperationMethod {
  public static let name = "consumeUnits"

  public static let documentation = MethodDocumentation(
    summary: "Spend units of an account's consumable balance once (never below zero).",
    description: """
      Spends units of the entitlement a consumable product credits (coins) from the account's balance. \
      account is the appAccountToken or, in the back office (--back-office) only, the originalTransactionId \
      getEntitlements answers as the account of purchases made without one (a shopper-facing process answers \
      -32602 for an account that is not a UUID). consumptionId is your idempotency key: the same consumptionId with the \
      same params answers the stored result and spends nothing more; with others it is error -32004. A \
      balance short of units fails with insufficient_units and spends nothing (the consumptionId stays \
      unused, to be sent again once units are bought); an entitlement no consumable product credits fails \
      with unknown_entitlement. Processes spending from one account at once take turns.
      """,
    errors: [.storeUnavailable, .idempotencyKeyConflict, .invalidParams], readOnly: false, idempotent: true,
    destructive: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  public struct Params: Sendable {
    public var account = ""
    public var entitlement = ""
    public var units = 1
    public var consumptionId = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "account", \.account, .required,
        .string("The account: an appAccountToken, or an originalTransactionId getEntitlements answers as account.", pattern: "^[\\x21-\\x7E]{1,64}$"),
        read: { value, path, reader in
          guard let text = GetEntitlements.readTransactionId(value, path, reader) else { return nil }
          return AppStoreAccount.isUUID(text) ? text.lowercased() : text
        }),
      .member(
        "entitlement", \.entitlement, .required,
        .string("The entitlement a consumable product credits (appStore.products[].entitlement).")),
      .member(
        "units", \.units, .required, .integer("How many units to spend.", minimum: 1, maximum: 1_000_000_000),
        read: { value, path, reader in reader.integer(value, path(), range: 1...1_000_000_000) }),
      .member(
        "consumptionId", \.consumptionId, .required,
        BackOffice.keySchema("Your idempotency key for this spending: 1 to 255 printable ASCII characters."),
        read: BackOffice.readKey),
    ])

  public enum FailureCode: String, Sendable, WireEnum {
    case notConfigured = "not_configured"
    /// No consumable product of the config credits this entitlement.
    case unknownEntitlement = "unknown_entitlement"
    /// The balance is less than the units asked for.
    case insufficientUnits = "insufficient_units"
  }

  public struct Consumed: Equatable, Sendable, WireObject {
    public var consumptionId = ""
    public var account = ""
    public var entitlement = ""
    public var units = 0
    public var consumedAt = ""
    public var balance = AppStoreBalance()

    public static let shape = ObjectShape<Consumed>(
      blank: { Consumed() },
      [
        .constant("status", "succeeded"), .member("consumptionId", \.consumptionId), .member("account", \.account),
        .member("entitlement", \.entitlement), .member("units", \.units),
        .member("consumedAt", \.consumedAt, .required, Shapes.timestamp),
        .member("balance", \.balance),
      ])
  }

  public struct Failed: Equatable, Sendable, WireObject, FailureReporting {
    public var failureCode = FailureCode.insufficientUnits
    public var message = ""
    public var balance: AppStoreBalance?

    public static let shape = ObjectShape<Failed>(
      blank: { Failed() },
      [
        .constant("status", "failed"), .member("failureCode", \.failureCode),
        .member("message", \.message, .required, .string("Why, and what would be valid."), read: ParamReader.anyString),
        .member("balance", \.balance, .optional),
      ])

    public var report: ResultFailure { ResultFailure(status: "failed", code: failureCode.rawValue, message: message) }
  }

  public typealias Result = Outcome<Consumed, Failed>

  public static func operation(_ params: Params, context: ServiceContext) throws -> Consumption {
    if !AppStoreAccount.isUUID(params.account) { try GetEntitlements.backOfficeOnly("account", context) }
    return Consumption(params: params, fingerprint: BackOffice.fingerprint(params, Self.params))
  }

  /// consumeUnits as an operation of the journal (kind `appStoreConsumption`, keyed by the
  /// consumptionId); the account is locked first, so that two processes spending from it take turns.
  public struct Consumption: LocalOperation {
    public static let kind = "appStoreConsumption"
    let params: Params
    public let fingerprint: String
    public var key: String { params.consumptionId }
    public var subject: String? { params.account }
    public var conflict: ServiceError { .idempotencyKeyConflict("consumptionId") }

    public static func lock(key: String, subject: String?, _ transaction: any StoreTransaction, context: ServiceContext)
      throws
    {
      try transaction.lockKey("appStoreAccount", subject ?? "")
    }

    public func prepare(_ subject: Void, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64)
      throws -> Preparation<Result, NoCall>
    {
      func failed(_ code: FailureCode, _ message: String, _ balance: AppStoreBalance? = nil) -> Preparation<
        Result, NoCall
      > {
        .done(.failed(Failed(failureCode: code, message: message, balance: balance)), final: false)
      }
      guard let settings = context.config.appStore else {
        return failed(.notConfigured, "this payservice's config has no appStore section: it keeps no balances")
      }
      let consumables = Set(settings.products.values.filter { $0.kind == .consumable }.map(\.entitlement))
      guard consumables.contains(params.entitlement) else {
        let known = consumables.sorted().joined(separator: ", ")
        return failed(
          .unknownEntitlement,
          "no consumable product in appStore.products credits \(params.entitlement)\(known.isEmpty ? "" : "; those credited: \(known)")")
      }
      var balance =
        try AccountEntitlements.balances(account: params.account, transaction).first {
          $0.entitlement == params.entitlement
        } ?? AppStoreBalance(entitlement: params.entitlement)
      guard balance.units >= params.units else {
        return failed(
          .insufficientUnits,
          "the balance of \(params.entitlement) is \(balance.units), less than the \(params.units) asked for: nothing was spent",
          balance)
      }
      let stamp = RFC3339.format(now)
      try transaction.insert(
        AppStoreConsumptionRow(
          consumptionId: params.consumptionId, account: params.account, entitlement: params.entitlement,
          units: Int64(params.units), consumedAt: stamp))
      balance.consumed += params.units
      balance.units -= params.units
      return .done(
        .succeeded(
          Consumed(
            consumptionId: params.consumptionId, account: params.account, entitlement: params.entitlement,
            units: params.units, consumedAt: stamp, balance: balance)),
        final: true)
    }
  }
}
