/// Wallet's `GET /v1/devices/{deviceLibraryIdentifier}/registrations/{orderTypeIdentifier}?ordersModifiedSince=…`:
/// which of the orders a device follows changed since it last asked.
public enum ListChangedWalletOrders: RPCMethod {
  public static let name = "listChangedWalletOrders"

  /// The most order identifiers one answer lists: the rest come with the next call, from its lastModified.
  public static let maxOrders = 500

  public static let documentation = MethodDocumentation(
    summary: "Wallet's order web service: the orders a device follows that changed (GET …/registrations/{type}).",
    description: """
      For the HTTP front of the walletOrders webServiceURL. Lists the orderIdentifiers of the orders the device \
      registered for whose package changed at or after ordersModifiedSince (Wallet sends back the lastModified \
      of its previous answer; absent: every order it follows), oldest change first, at most \(maxOrders), with \
      lastModified to send next time: status ok (HTTP 200 with {orderIdentifiers, lastModified}), or noContent \
      (HTTP 204) when none changed; another order type answers notFound (HTTP 404). An order changed within the second of lastModified is listed again next \
      time: Wallet then finds it not modified. Apple's route carries no authentication token: the answer is \
      order identifiers only. Needs the walletOrders package keys (else error -32602). Changes nothing.
      """,
    errors: [.storeUnavailable], readOnly: true, idempotent: true)
  public static let usesStore = true

  public struct Params: Sendable {
    public var deviceLibraryIdentifier = ""
    public var orderTypeIdentifier = ""
    public var ordersModifiedSince: String?
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      WalletWebService.deviceField(\.deviceLibraryIdentifier), WalletWebService.orderTypeField(\.orderTypeIdentifier),
      .member(
        "ordersModifiedSince", \.ordersModifiedSince, .optional,
        .string("The query's ordersModifiedSince: a previous answer's lastModified.", pattern: "^[0-9]{1,12}$"),
        read: { value, path, reader in
          guard case .string(let text) = value, (1...12).contains(text.utf8.count),
            text.utf8.allSatisfy({ (0x30...0x39).contains($0) })
          else {
            reader.fail(path(), "must be a lastModified this method answered: 1 to 12 digits")
            return nil
          }
          return text
        }),
    ])

  public struct Result: MethodResult, WireObject {
    public var status = "ok"
    public var orderIdentifiers: [String]?
    public var lastModified: String?

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member(
          "status", \.status, .required,
          .string("ok (200), noContent (204), or notFound (404) for another order type.", values: ["ok", "noContent", "notFound"])),
        .member("orderIdentifiers", \.orderIdentifiers, .optional, .array(.string(), "ok: the orders that changed.")),
        .member(
          "lastModified", \.lastModified, .optional,
          .string("ok: what Wallet sends back as ordersModifiedSince.", pattern: "^[0-9]{1,12}$")),
      ])
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let (orders, _) = try WalletWebService.settings(context)
    guard params.orderTypeIdentifier == orders.orderTypeIdentifier else { return Result(status: "notFound") }
    let changed = try context.store.write { transaction in
      try transaction.changedWalletOrders(
        deviceLibraryIdentifier: params.deviceLibraryIdentifier, orderTypeIdentifier: params.orderTypeIdentifier,
        since: params.ordersModifiedSince.flatMap { Int64($0) }, limit: maxOrders)
    }
    guard let last = changed.last else { return Result(status: "noContent") }
    return Result(status: "ok", orderIdentifiers: changed.map(\.orderId), lastModified: String(last.updatedAt))
  }
}
