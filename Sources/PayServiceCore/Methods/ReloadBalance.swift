/// Charges an automatic reload once per reloadId when the balance the merchant reports is below
/// the agreement's threshold. Back office only (`--back-office`).
public enum ReloadBalance: OperationMethod {
  public static let name = "reloadBalance"

  public static let documentation = MethodDocumentation(
    summary: "Reload a stored balance: charge the reload amount once per reloadId when it is below the threshold.",
    description: """
      For an automaticReload agreement: when balance (the stored value as the merchant's system reports it, in \
      the merchant currency) is below the agreement's threshold, charges the product's price from the catalog \
      now (with its tax) with the card the checkout kept, as an order of its own (agreement.payment reload). \
      At or above the threshold nothing is charged (status not_needed). reloadId is your idempotency key: the \
      same reloadId with the same balance answers the stored result and never charges twice; with another \
      balance it is error -32004. A declined reload makes the agreement past_due (the next reloadId tries \
      again) or action_required; an unknown agreementId is error -32005.
      """,
    errors: [.storeUnavailable, .agreementNotFound, .idempotencyKeyConflict, .invalidParams], readOnly: false,
    idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  public struct Params: Sendable {
    public var agreementId = ""
    public var balance = Amount(minor: 0)
    public var reloadId = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member("agreementId", \.agreementId, .required, AgreementDocument.idSchema),
      .member("balance", \.balance),
      .member(
        "reloadId", \.reloadId, .required,
        BackOffice.keySchema("Your idempotency key for this reload: 1 to 255 printable ASCII characters."),
        read: BackOffice.readKey),
    ])

  public typealias Result = AgreementPayment.Result

  public static func operation(_ params: Params, context: ServiceContext) throws -> AgreementPayment {
    AgreementPayment(
      agreementId: params.agreementId, trigger: .reload(reloadId: params.reloadId, balanceMinor: params.balance.minor),
      identifiers: try context.identifiers)
  }
}
