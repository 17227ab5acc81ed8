/// Wallet's `POST /v1/devices/{deviceLibraryIdentifier}/registrations/{orderTypeIdentifier}/{orderIdentifier}`:
/// a device asks to hear of the order's changes.
public enum RegisterWalletDevice: RPCMethod {
  public static let name = "registerWalletDevice"

  /// The most devices registered for one order: what one change of it pushes at most.
  public static let maxDevicesPerOrder = 20

  public static let documentation = MethodDocumentation(
    summary: "Wallet's order web service: register a device for an order's updates (POST …/registrations/…).",
    description: """
      For the HTTP front of the walletOrders webServiceURL. With the order's authenticationToken, records that \
      the device (deviceLibraryIdentifier) follows the order and where to push (pushToken, from the request's \
      body): status created (HTTP 201), or alreadyRegistered (HTTP 200; a new pushToken replaces the old). An \
      unknown order and a wrong token both answer unauthorized (HTTP 401); another order type notFound (404). \
      At most \(maxDevicesPerOrder) devices follow one order: one more answers tooManyDevices (HTTP 403). A \
      registration holds no personal data. Needs the walletOrders package keys (else error -32602).
      """,
    errors: [.storeUnavailable], readOnly: false, idempotent: true)
  public static let usesStore = true

  public struct Params: Sendable {
    public var deviceLibraryIdentifier = ""
    public var pushToken = ""
    public var orderTypeIdentifier = ""
    public var orderIdentifier = ""
    public var authenticationToken = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      WalletWebService.deviceField(\.deviceLibraryIdentifier),
      .member(
        "pushToken", \.pushToken, .required,
        .string("From the body: the device's APNs token, hex.", pattern: "^[0-9a-fA-F]{16,200}$"),
        read: { value, path, reader in
          guard case .string(let token) = value, (16...200).contains(token.utf8.count),
            token.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) })
          else {
            reader.fail(path(), "must be the device's APNs token: 16 to 200 hexadecimal digits")
            return nil
          }
          return token.lowercased()
        }),
      WalletWebService.orderTypeField(\.orderTypeIdentifier), WalletWebService.orderField(\.orderIdentifier),
      WalletWebService.tokenField(\.authenticationToken),
    ])

  public struct Result: MethodResult, WireObject {
    public var status = "created"

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member(
          "status", \.status, .required,
          .string(
            "created (201), alreadyRegistered (200), unauthorized (401), notFound (404) or tooManyDevices (403).",
            values: ["created", "alreadyRegistered", "unauthorized", "notFound", "tooManyDevices"]))
      ])
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let now = context.clock.now()
    return try WalletWebService.withOrder(
      type: params.orderTypeIdentifier, orderId: params.orderIdentifier, token: params.authenticationToken,
      context: context, notFound: Result(status: "notFound"), unauthorized: Result(status: "unauthorized")
    ) { order, transaction in
      _ = try transaction.lockOrder(order.orderId)
      let registered = try transaction.walletRegistrations(orderId: order.orderId)
      let registration = WalletRegistrationRow(
        deviceLibraryIdentifier: params.deviceLibraryIdentifier, orderTypeIdentifier: params.orderTypeIdentifier,
        orderId: order.orderId, pushToken: params.pushToken, registeredAt: RFC3339.format(now))
      if let known = registered.first(where: {
        $0.deviceLibraryIdentifier == params.deviceLibraryIdentifier && $0.orderTypeIdentifier == params.orderTypeIdentifier
      }) {
        if known.pushToken != params.pushToken {
          _ = try transaction.deleteWalletRegistration(
            deviceLibraryIdentifier: known.deviceLibraryIdentifier, orderTypeIdentifier: known.orderTypeIdentifier,
            orderId: known.orderId)
          _ = try transaction.insert(registration)
        }
        return Result(status: "alreadyRegistered")
      }
      guard registered.count < maxDevicesPerOrder else { return Result(status: "tooManyDevices") }
      // A registered order's package time is set, so that listChangedWalletOrders finds it.
      if order.updatedAt == nil { try transaction.setWalletUpdatedAt(order.orderId, to: order.lastModified) }
      return Result(status: try transaction.insert(registration) ? "created" : "alreadyRegistered")
    }
  }
}
