import Crypto
import Synchronization

/// What the Orders web service's methods share: their params' bounds, and how a caller proves it
/// is the order's (Wallet's `Authorization: AppleOrder <token>`).
///
/// An unknown order and a wrong token answer alike (`unauthorized`), so that the answers tell
/// nobody which order identifiers exist; the token is compared in constant time.
public enum WalletWebService {
  /// The params' reading: an identifier of 1 to 255 printable ASCII characters without `/` (it is
  /// a path segment of Apple's routes).
  static func identifier(_ example: String) -> MemberReader<String> {
    { value, path, reader in
      guard case .string(let text) = value else {
        reader.fail(path(), "must be a string like \"\(example)\", got \(value.kindName)")
        return nil
      }
      guard (1...255).contains(text.utf8.count), text.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x2F })
      else {
        reader.fail(path(), "must be 1 to 255 printable ASCII characters without spaces or /, like \"\(example)\"")
        return nil
      }
      return text
    }
  }

  static let identifierPattern = "^[\\x21-\\x2E\\x30-\\x7E]{1,255}$"

  /// The order's authentication token: 16 to 255 printable ASCII characters (Wallet sends what the
  /// order's `authenticationToken` was).
  static let readToken: MemberReader<String> = { value, path, reader in
    guard case .string(let text) = value, (16...255).contains(text.utf8.count),
      text.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
    else {
      reader.fail(path(), "must be the order's authentication token: 16 to 255 printable ASCII characters")
      return nil
    }
    return text
  }

  static let tokenSchema = JSONSchema.string(
    "The order's authenticationToken, as Wallet sends it (Authorization: AppleOrder <token>).",
    pattern: "^[\\x21-\\x7E]{16,255}$")

  /// The params Apple's routes share: each from the route, the token from `Authorization`.
  static func deviceField<Params>(_ keyPath: WritableKeyPath<Params, String> & Sendable) -> Field<Params> {
    .member(
      "deviceLibraryIdentifier", keyPath, .required, .string("From the route.", pattern: identifierPattern),
      read: identifier("6b7a9ad0f03b"))
  }

  static func orderTypeField<Params>(_ keyPath: WritableKeyPath<Params, String> & Sendable) -> Field<Params> {
    .member(
      "orderTypeIdentifier", keyPath, .required, .string("From the route.", pattern: identifierPattern),
      read: identifier("order.com.example.shop"))
  }

  static func orderField<Params>(_ keyPath: WritableKeyPath<Params, String> & Sendable) -> Field<Params> {
    .member(
      "orderIdentifier", keyPath, .required, .string("From the route: the orderId.", pattern: identifierPattern),
      read: identifier("ord_…"))
  }

  static func tokenField<Params>(_ keyPath: WritableKeyPath<Params, String> & Sendable) -> Field<Params> {
    .member("authenticationToken", keyPath, .required, tokenSchema, read: readToken)
  }

  /// Runs `body` on the order, in one transaction, when the caller holds its token: `notFound`
  /// for another order type, `unauthorized` for an unknown order or another token.
  static func withOrder<Answer>(
    type: String, orderId: String, token: String, context: ServiceContext, notFound: Answer, unauthorized: Answer,
    _ body: (WalletOrderRow, any StoreTransaction) throws -> Answer
  ) throws -> Answer {
    let (orders, _) = try settings(context)
    guard type == orders.orderTypeIdentifier else { return notFound }
    return try context.store.write { transaction in
      guard let order = try authorized(orderId: orderId, token: token, transaction) else { return unauthorized }
      return try body(order, transaction)
    }
  }

  /// The Wallet order configuration that serves packages, or error -32602 naming what is missing.
  static func settings(_ context: ServiceContext) throws -> (WalletOrders, WalletOrderPackageSettings) {
    guard let orders = context.config.walletOrders, let package = orders.package else {
      throw ServiceError.invalidParams([
        FieldError(
          path: "",
          message:
            "this payservice serves no Wallet orders: its config's walletOrders needs merchantIdentifier, url, orderManagementURL, certificate, privateKey and intermediateCertificate")
      ])
    }
    return (orders, package)
  }

  /// The order if `token` is its authentication token; nil for an unknown order, an order placed
  /// without Wallet orders, or another token, alike.
  static func authorized(orderId: String, token: String, _ transaction: any StoreTransaction) throws -> WalletOrderRow? {
    guard let order = try transaction.walletOrder(orderId) else {
      _ = sameBytes(token, token)
      return nil
    }
    guard let expected = order.authenticationToken, sameBytes(expected, token) else { return nil }
    return order
  }

  /// Whether two texts are the same, in time that does not depend on where they differ: their
  /// SHA-256 digests compared in full.
  static func sameBytes(_ a: String, _ b: String) -> Bool {
    let x = Array(SHA256.hash(data: Array(a.utf8)))
    let y = Array(SHA256.hash(data: Array(b.utf8)))
    var difference: UInt8 = 0
    for index in 0..<x.count { difference |= x[index] ^ y[index] }
    return difference == 0
  }
}

/// What devices tell the merchant's web service about Wallet orders (`logWalletMessages`), held
/// for the operator's log: the executor writes them after the request's answer.
public final class WalletDeviceMessages: Sendable {
  private let waiting = Mutex<[String]>([])

  public init() {}

  func add(_ messages: [String]) {
    waiting.withLock { $0 += messages }
  }

  /// The messages added since the last call.
  public func take() -> [String] {
    waiting.withLock { messages in
      defer { messages = [] }
      return messages
    }
  }
}
