import Crypto

#if canImport(Glibc)
import Glibc
#endif

/// The identifiers payservice makes: charge tokens, order, charge, authorization and refund ids.
///
/// Each is an HMAC-SHA256, under the store's own identifier key, of what it identifies (a token's
/// sequence number, cart and time; an order's token), so that:
/// - nobody without the key can derive or guess one from what they know about a purchase (the
///   cart, the shipping contact, roughly when): 128 bits or more of each are keyed MAC output;
/// - the same store state and clock still give the same identifiers (transcripts with `--now`
///   repeat byte for byte when the store's key is pinned, see `IdentifierKey`);
/// - every process sharing a store (a file, or a PostgreSQL server) makes the same ones.
///
/// The key is created from the system's CSPRNG when a store is first opened and stays in it
/// (`Store.identifiers`, table `storeKey`): it protects what is guessable from outside, not the store's
/// own contents, which it sits beside.
///
/// A charge token starts with the second it was issued, as 8 hex digits after `ctok_`, and what is
/// derived from it (its order and charge, the order's agreement, refunds and later payments) starts
/// with the same 8 digits, before 32 hex digits of MAC: identifiers sort by when their token was
/// issued, so that the store's indexes keyed by them take each new row beside the last ones instead
/// of at a random place, and the pages a store works on stay few however large it grows. The
/// prefix is never read for its meaning: it is copied from the identifier something is derived from.
///
/// Stores written before identifiers were keyed hold tokens and orders with the shorter, unkeyed
/// forms (`ctok_` + 32, `ord_` + 20 hex digits), and stores written before they were time-ordered
/// hold keyed ones without the prefix (`ctok_` + 40, `ord_` + 32); what is derived from one of those
/// (its order, its charge) keeps that form's derivation, so that a pending payment of such a token
/// is found again under the same identifiers.
public struct Identifiers: Sendable {
  private let key: SymmetricKey

  public init(key: IdentifierKey) {
    self.key = SymmetricKey(data: key.bytes)
  }

  /// HMAC-SHA256 of the parts joined with U+001F, as lowercase hex.
  func mac(_ parts: [String]) -> String {
    let code = HMAC<SHA256>.authenticationCode(for: Array(parts.joined(separator: "\u{1F}").utf8), using: key)
    return code.withUnsafeBytes { Hex.encode($0) }
  }

  /// The 8 hex digits of a second (clamped to 1970–2106), the prefix of time-ordered identifiers.
  static func moment(_ seconds: Int64) -> String {
    withUnsafeBytes(of: UInt32(clamping: seconds).bigEndian) { Hex.encode($0) }
  }

  /// The time prefix of `identifier` when it has the time-ordered form of `kind` (`kind`, then 8
  /// and `macDigits` lower-case hex digits); "" otherwise, so that what is derived from an older
  /// form keeps that form.
  static func moment(of identifier: String, kind: String, macDigits: Int) -> String {
    let utf8 = identifier.utf8
    guard utf8.count == kind.utf8.count + 8 + macDigits, identifier.hasPrefix(kind) else { return "" }
    let digits = utf8.dropFirst(kind.utf8.count).prefix(8)
    return Hex.isLowercase(digits) ? String(decoding: digits, as: UTF8.self) : ""
  }

  static func moment(ofToken token: String) -> String { moment(of: token, kind: "ctok_", macDigits: 40) }
  static func moment(ofOrder orderId: String) -> String { moment(of: orderId, kind: "ord_", macDigits: 32) }
  static func moment(ofAgreement agreementId: String) -> String { moment(of: agreementId, kind: "agr_", macDigits: 32) }

  /// `ctok_`, the second of `issuedAt` (8 hex digits) and 40 hex digits of MAC.
  public func chargeToken(merchant: String, sequence: Int64, binding: String, issuedAt: Int64) -> String {
    "ctok_" + Self.moment(issuedAt) + mac(["charge-token", merchant, String(sequence), binding, String(issuedAt)]).prefix(40)
  }

  public func chargeId(token: String) -> String {
    if Legacy.isToken(token) { return Legacy.chargeId(token: token) }
    return "ch_" + Self.moment(ofToken: token) + mac(["charge", token]).prefix(32)
  }

  /// An Apple Pay authorization hold's id: one per token (Apple's transaction id).
  public func authorizationId(transactionId: String) -> String {
    "auth_" + mac(["authorization", transactionId]).prefix(32)
  }

  public func orderId(token: String) -> String {
    if Legacy.isToken(token) { return Legacy.orderId(token: token) }
    return "ord_" + Self.moment(ofToken: token) + mac(["order", token]).prefix(32)
  }

  /// The agreement a checkout order made: one per order.
  public func agreementId(orderId: String) -> String {
    "agr_" + Self.moment(ofOrder: orderId) + mac(["agreement", orderId]).prefix(32)
  }

  /// The order of an agreement's later payment: one per agreement and payment (`period-3`,
  /// `reload-<reloadId>`), whatever attempt pays it.
  public func agreementOrderId(agreementId: String, payment: String) -> String {
    "ord_" + Self.moment(ofAgreement: agreementId) + mac(["agreement-order", agreementId, payment]).prefix(32)
  }

  /// The sandbox's charge of an agreement's later payment: one per order and attempt.
  public func agreementChargeId(orderId: String, attempt: Int) -> String {
    "ch_" + Self.moment(ofOrder: orderId) + mac(["agreement-charge", orderId, String(attempt)]).prefix(32)
  }

  /// The gateway's id of a refund: one per order and refundId.
  public func gatewayRefundId(orderId: String, refundId: String) -> String {
    if Legacy.isOrderId(orderId) { return Legacy.gatewayRefundId(orderId: orderId, refundId: refundId) }
    return "re_" + Self.moment(ofOrder: orderId) + mac(["refund", orderId, refundId]).prefix(32)
  }

  /// A Wallet order authentication token derived from the charge token, for a pinned clock only
  /// (see `AuthorizePayment.walletOrderToken`): 256 bits.
  public func walletOrderToken(chargeToken: String) -> String {
    mac(["wallet-order-token", chargeToken])
  }

  /// The idempotency key of a remote gateway's token for an Apple Pay payment (Stripe's
  /// `POST /v1/tokens`): one per merchant and Apple's transaction identifier, so that an
  /// authorizePayment sent again for the same payment makes no second token. Keyed, so that it
  /// says nothing about the transaction to whoever reads it.
  public func tokenIdempotencyKey(merchant: String, transactionIdentifier: String) -> String {
    "payservice-token-" + mac(["gateway-token", merchant, transactionIdentifier]).prefix(32)
  }

  /// The idempotency key of an order's charge at a remote gateway: one per order, so the same
  /// charge sent again (a replay, the sweep at start-up) is the same call to the gateway.
  public static func chargeIdempotencyKey(orderId: String) -> String {
    "payservice-charge-" + orderId
  }

  /// The idempotency key of a back-office call at a remote gateway: one per kind (capture, cancel,
  /// refund), order and the client's key for it. Sent only to the gateway, and the same however the
  /// store's key changes, so that a call in flight across an upgrade keeps its key.
  public static func backOfficeIdempotencyKey(kind: String, orderId: String, key: String) -> String {
    "payservice-\(kind)-" + Legacy.digest([kind, orderId, key]).prefix(32)
  }

  /// The unkeyed forms of stores written before identifiers were keyed.
  enum Legacy {
    static func digest(_ parts: [String]) -> String {
      SHA256.hash(data: Array(parts.joined(separator: "\u{1F}").utf8)).withUnsafeBytes { Hex.encode($0) }
    }

    /// `ctok_` and 32 hex digits (keyed tokens have 40).
    static func isToken(_ token: String) -> Bool { token.utf8.count == 37 && token.hasPrefix("ctok_") }
    /// `ord_` and 20 hex digits (keyed order ids have 32).
    static func isOrderId(_ orderId: String) -> Bool { orderId.utf8.count == 24 && orderId.hasPrefix("ord_") }

    static func chargeId(token: String) -> String { "ch_" + digest(["charge", token]).prefix(24) }
    static func orderId(token: String) -> String { "ord_" + digest(["order", token]).prefix(20) }
    static func gatewayRefundId(orderId: String, refundId: String) -> String {
      "re_" + digest(["refund", orderId, refundId]).prefix(24)
    }
  }
}

/// A store's identifier key: 32 bytes.
public struct IdentifierKey: Equatable, Sendable {
  public let bytes: [UInt8]

  /// The environment variable that pins the key of a store created by this process (64 hex
  /// digits), so that transcripts with `--now` repeat byte for byte on a new store. For tests and
  /// examples only: a shop's store gets a random key. A store that has a key keeps it.
  public static let pinVariable = "PAYSERVICE_ID_KEY"

  /// The key of stores created with the clock pinned (`--now`) and no `PAYSERVICE_ID_KEY`: published
  /// (the tests and protocol.md's examples use it), so that a transcript on a new store repeats.
  /// Its ids are derivable by anyone: a store created with it is for transcripts, never a shop.
  public static let transcript = IdentifierKey(
    hex: "7061797365727669636520746573747320706179736572766963652074657374")!

  public init?(hex: String) {
    guard hex.utf8.count == 64, let bytes = Hex.decode(hex) else { return nil }
    self.bytes = bytes
  }

  public init(bytes: [UInt8]) {
    precondition(bytes.count == 32, "an identifier key has 32 bytes")
    self.bytes = bytes
  }

  /// 32 bytes from the system's CSPRNG.
  public static func random() -> IdentifierKey {
    IdentifierKey(bytes: randomBytes(32))
  }

  /// `count` bytes (a multiple of 8) from `SystemRandomNumberGenerator`: getrandom(2) on Linux.
  static func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    for _ in 0..<count / 8 { withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) } }
    return bytes
  }

  /// The value of `PAYSERVICE_ID_KEY` in this process's environment (read with getenv: Foundation's
  /// `ProcessInfo` costs a start more than it reads).
  public static var pinInEnvironment: String? {
    getenv(pinVariable).map { String(cString: $0) }
  }

  /// The key for a store created now: `pin` (a `PAYSERVICE_ID_KEY` value) when given, else a random
  /// one. A pin that is not 64 hex digits is refused (the caller stops the start).
  public static func forNewStore(pin: String? = pinInEnvironment) throws(StoreError) -> IdentifierKey {
    guard let pinned = pin, !pinned.isEmpty else { return random() }
    guard let key = IdentifierKey(hex: pinned) else {
      throw StoreError.unavailable(reason: "\(pinVariable) must be 64 hex digits (32 bytes)")
    }
    return key
  }

  public var hex: String { Hex.encode(bytes) }
}
