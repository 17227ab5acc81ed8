import Foundation

/// Wallet's `GET /v1/orders/{orderTypeIdentifier}/{orderIdentifier}`: the order's package, signed,
/// when the caller holds the order's authentication token.
public enum GetWalletOrder: RPCMethod {
  public static let name = "getWalletOrder"

  public static let documentation = MethodDocumentation(
    summary: "Wallet's order web service: an order's signed package (GET /v1/orders/{type}/{id}).",
    description: """
      For the HTTP front of the walletOrders webServiceURL. With the order's authenticationToken (Wallet's \
      Authorization: AppleOrder header), answers status ok with package (the .order file, base64; serve it \
      as application/vnd.apple.finance.order) and lastModified (an HTTP date; send it as Last-Modified); \
      with ifModifiedSince (the If-Modified-Since header as received) not before lastModified, notModified \
      (HTTP 304). An unknown order and a wrong token both answer unauthorized (HTTP 401); another order type \
      answers notFound (HTTP 404). The package is built from the order as the store has it now: its \
      status, payment, refunds and shipments; after erasePersonalData it holds no contact data. Needs the \
      walletOrders package keys (else error -32602). Changes nothing.
      """,
    errors: [.storeUnavailable], readOnly: true, idempotent: true)
  public static let usesStore = true

  public struct Params: Sendable {
    public var orderTypeIdentifier = ""
    public var orderIdentifier = ""
    public var authenticationToken = ""
    public var ifModifiedSince: String?
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      WalletWebService.orderTypeField(\.orderTypeIdentifier), WalletWebService.orderField(\.orderIdentifier),
      WalletWebService.tokenField(\.authenticationToken),
      .member(
        "ifModifiedSince", \.ifModifiedSince, .optional,
        .string("The If-Modified-Since header as received; one that is not an HTTP date is ignored, as HTTP says.", maxLength: 64),
        read: ParamReader.string(maxBytes: 64)),
    ])

  public struct Result: MethodResult, WireObject {
    /// `ok`, `notModified`, `unauthorized` or `notFound`.
    public var status = "ok"
    public var package: String?
    public var lastModified: String?

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member(
          "status", \.status, .required,
          .string(
            "ok (200), notModified (304), unauthorized (401) or notFound (404).",
            values: ["ok", "notModified", "unauthorized", "notFound"])),
        .member("package", \.package, .optional, .string("ok: the .order package, base64.")),
        .member(
          "lastModified", \.lastModified, .optional,
          .string("ok and notModified: when the package last changed, as an HTTP date (Last-Modified).")),
      ])
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let (orders, package) = try WalletWebService.settings(context)
    enum Found {
      case order(WalletOrderRow, [ShipmentRow])
      case answer(Result)
    }
    let found = try WalletWebService.withOrder(
      type: params.orderTypeIdentifier, orderId: params.orderIdentifier, token: params.authenticationToken,
      context: context, notFound: Found.answer(Result(status: "notFound")),
      unauthorized: Found.answer(Result(status: "unauthorized"))
    ) { order, transaction in .order(order, try transaction.shipments(orderId: order.orderId)) }
    let (wallet, shipments): (WalletOrderRow, [ShipmentRow])
    switch found {
    case .answer(let answer): return answer
    case .order(let order, let recorded): (wallet, shipments) = (order, recorded)
    }
    let store = try context.store
    let lastModified = HTTPDate.format(wallet.lastModified)
    if let since = params.ifModifiedSince.flatMap({ HTTPDate.parse($0, now: context.clock.now()) }),
      wallet.lastModified <= since
    {
      return Result(status: "notModified", lastModified: lastModified)
    }
    guard let stored = try store.order(id: wallet.orderId) else { return Result(status: "unauthorized") }
    let source = OrderPackage.Source(
      order: try GetOrder.current(stored, config: context.config), wallet: wallet, shipments: shipments)
    let bytes = try OrderPackage.build(source, orders: orders, package: package)
    return Result(status: "ok", package: Data(bytes).base64EncodedString(), lastModified: lastModified)
  }
}
