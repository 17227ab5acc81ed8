/// What an account has from in-app purchases, at the service clock.
public enum GetEntitlements: RPCMethod {
  public static let name = "getEntitlements"

  public static let documentation = MethodDocumentation(
    summary: "An account's App Store entitlements and consumable balances now.",
    description: """
      Name the account by appAccountToken (the UUID the app set on its purchases) or, in the back office \
      (--back-office) only, by the originalTransactionId of one of its purchases (the account that purchase \
      belongs to): transaction ids are numbers anyone may come to know, so a shopper-facing process answers \
      -32602 for them. Answers, at the \
      service clock (--now pins it), each entitlement a non-consumable or subscription grants with its \
      source purchase, status (active, grace_period, billing_retry, expired, revoked), whether it is in force \
      (active), its expiry, grace period end and renewal status; and each consumable's balance: units \
      purchased, refunded, consumed and left. An account payservice has heard nothing of has none. Changes \
      nothing.
      """,
    errors: [.storeUnavailable, .invalidParams], readOnly: true, idempotent: true)
  public static let usesStore = true

  public struct Params: Sendable {
    public var appAccountToken: String?
    public var originalTransactionId: String?
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "appAccountToken", \.appAccountToken, .optional,
        .string("The account's UUID, as the app set it on its purchases.", pattern: VerifyAppStoreTransaction.uuidPattern),
        read: VerifyAppStoreTransaction.readUUID),
      .member(
        "originalTransactionId", \.originalTransactionId, .optional,
        .string(
          "Back office only: a purchase of the account (its originalTransactionId).", pattern: "^[\\x21-\\x7E]{1,64}$"),
        read: readTransactionId),
    ])

  static let readTransactionId: MemberReader<String> = { value, path, reader in
    guard let text = reader.string(value, path()) else { return nil }
    guard (1...64).contains(text.utf8.count), text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
      reader.fail(path(), "must be an App Store transaction id: 1 to 64 printable ASCII characters, like \"2000000123456789\"")
      return nil
    }
    return text
  }

  public typealias Result = AccountEntitlements

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    guard (params.appAccountToken == nil) != (params.originalTransactionId == nil) else {
      throw ServiceError.invalidParams([
        FieldError(path: "", message: "name the account by exactly one of appAccountToken or originalTransactionId")
      ])
    }
    if params.originalTransactionId != nil { try backOfficeOnly("originalTransactionId", context) }
    guard let settings = context.config.appStore else {
      throw ServiceError.invalidParams([
        FieldError(path: "", message: "this payservice's config has no appStore section: it keeps no entitlements")
      ])
    }
    let now = context.clock.now()
    return try context.store.write { transaction in
      var account = params.appAccountToken ?? params.originalTransactionId ?? ""
      if let original = params.originalTransactionId, let chain = try transaction.appStoreChain(original) {
        account = chain.account
      }
      return try AccountEntitlements.read(account: account, settings: settings, transaction, now: now)
    }
  }

  /// -32602 at `path` unless this process is the back office: outside it, an account is named only by
  /// its appAccountToken (a UUID nobody can guess), never by a transaction id.
  static func backOfficeOnly(_ path: String, _ context: ServiceContext) throws {
    guard !context.backOffice else { return }
    throw ServiceError.invalidParams([
      FieldError(
        path: path,
        message:
          "names an account by a transaction id, which only the back office (--back-office) may do; name it by its appAccountToken (a UUID)")
    ])
  }
}

extension AccountEntitlements: MethodResult {}
