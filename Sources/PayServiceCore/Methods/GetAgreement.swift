/// One agreement by id, with its events. Back office only (`--back-office`).
public enum GetAgreement: RPCMethod {
  public static let name = "getAgreement"

  public static let documentation = MethodDocumentation(
    summary: "Fetch an agreement (subscription, automatic reload, pre-order) with its schedule and events.",
    description: """
      Returns the agreement a checkout with a billing plan made: its kind, product, status (active, past_due, \
      action_required, unpaid, canceled, completed), the schedule agreed on the sheet, when the next payment \
      is due, declined attempts at it, what the customer must do when action_required, and its events \
      (created, paid, declined, status_changed, cancel_scheduled), each later payment with its orderId. An \
      unknown agreementId is error -32005. Changes nothing.
      """,
    errors: [.storeUnavailable, .agreementNotFound], readOnly: true, idempotent: true)
  public static let usesStore = true

  public struct Params: Sendable {
    public var agreementId = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() }, [.member("agreementId", \.agreementId, .required, AgreementDocument.idSchema)])

  public struct Result: MethodResult, WireObject {
    public var agreement = AgreementDocument()

    public static let shape = ObjectShape<Result>(blank: { Result() }, [.member("agreement", \.agreement)])
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    guard let stored = try context.store.agreement(id: params.agreementId) else {
      throw ServiceError.agreementNotFound(params.agreementId)
    }
    return Result(agreement: try AgreementDocument(stored.row, events: stored.events, config: context.config))
  }
}
