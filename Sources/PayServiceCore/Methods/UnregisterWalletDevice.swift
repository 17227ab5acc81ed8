/// Wallet's `DELETE /v1/devices/{deviceLibraryIdentifier}/registrations/{orderTypeIdentifier}/{orderIdentifier}`:
/// a device no longer follows the order.
public enum UnregisterWalletDevice: RPCMethod {
  public static let name = "unregisterWalletDevice"

  public static let documentation = MethodDocumentation(
    summary: "Wallet's order web service: unregister a device from an order (DELETE …/registrations/…).",
    description: """
      For the HTTP front of the walletOrders webServiceURL. With the order's authenticationToken, the device no \
      longer hears of the order: status unregistered (HTTP 200), or notRegistered when it was not (HTTP 200 \
      too). An unknown order and a wrong token both answer unauthorized (HTTP 401); another order type \
      notFound (404). Needs the walletOrders package keys (else error -32602).
      """,
    errors: [.storeUnavailable], readOnly: false, idempotent: true)
  public static let usesStore = true

  public struct Params: Sendable {
    public var deviceLibraryIdentifier = ""
    public var orderTypeIdentifier = ""
    public var orderIdentifier = ""
    public var authenticationToken = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      WalletWebService.deviceField(\.deviceLibraryIdentifier), WalletWebService.orderTypeField(\.orderTypeIdentifier),
      WalletWebService.orderField(\.orderIdentifier), WalletWebService.tokenField(\.authenticationToken),
    ])

  public struct Result: MethodResult, WireObject {
    public var status = "unregistered"

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member(
          "status", \.status, .required,
          .string(
            "unregistered (200), notRegistered (200), unauthorized (401) or notFound (404).",
            values: ["unregistered", "notRegistered", "unauthorized", "notFound"]))
      ])
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    try WalletWebService.withOrder(
      type: params.orderTypeIdentifier, orderId: params.orderIdentifier, token: params.authenticationToken,
      context: context, notFound: Result(status: "notFound"), unauthorized: Result(status: "unauthorized")
    ) { order, transaction in
      let removed = try transaction.deleteWalletRegistration(
        deviceLibraryIdentifier: params.deviceLibraryIdentifier, orderTypeIdentifier: params.orderTypeIdentifier,
        orderId: order.orderId)
      return Result(status: removed ? "unregistered" : "notRegistered")
    }
  }
}
