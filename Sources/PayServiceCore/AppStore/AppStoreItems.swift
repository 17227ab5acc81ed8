import Foundation

/// What payservice keeps of the items the App Store signs, read from their verified payloads.
/// Dates are milliseconds since 1970, as Apple sends them.

/// Why a verified payload cannot be used: a member missing or of the wrong type.
struct AppStorePayloadProblem: Error {
  var message: String
}

/// A transaction (`JWSTransactionDecodedPayload`), the members payservice keeps: stored as the
/// transaction's document, the version with the latest `signedDate` winning.
public struct AppStoreTransaction: Sendable, Equatable, WireObject {
  public var transactionId = ""
  public var originalTransactionId = ""
  public var productId = ""
  /// Apple's type: "Auto-Renewable Subscription", "Non-Consumable", "Consumable", "Non-Renewing Subscription".
  public var type = ""
  public var purchaseDate = 0
  public var originalPurchaseDate: Int?
  public var expiresDate: Int?
  public var quantity = 1
  public var appAccountToken: String?
  /// PURCHASED or FAMILY_SHARED.
  public var inAppOwnershipType: String?
  public var revocationDate: Int?
  /// 0: refunded for another reason; 1: for an issue in the app.
  public var revocationReason: Int?
  /// Replaced by a subscription of a higher level in its group: no longer what the chain grants.
  public var isUpgraded = false
  /// PURCHASE or RENEWAL.
  public var transactionReason: String?
  public var environment = ""
  public var signedDate = 0

  public init() {}

  public static let shape = ObjectShape<AppStoreTransaction>(
    blank: { AppStoreTransaction() },
    [
      .member("transactionId", \.transactionId), .member("originalTransactionId", \.originalTransactionId),
      .member("productId", \.productId), .member("type", \.type), .member("purchaseDate", \.purchaseDate),
      .member("originalPurchaseDate", \.originalPurchaseDate, .optional),
      .member("expiresDate", \.expiresDate, .optional), .member("quantity", \.quantity),
      .member("appAccountToken", \.appAccountToken, .optional),
      .member("inAppOwnershipType", \.inAppOwnershipType, .optional),
      .member("revocationDate", \.revocationDate, .optional),
      .member("revocationReason", \.revocationReason, .optional), .member("isUpgraded", \.isUpgraded),
      .member("transactionReason", \.transactionReason, .optional), .member("environment", \.environment),
      .member("signedDate", \.signedDate),
    ])

  /// The members of a verified transaction payload.
  init(payload: JSONObject) throws(AppStorePayloadProblem) {
    var read = PayloadReader(payload, "signedTransaction")
    transactionId = try read.identifier("transactionId")
    originalTransactionId = try read.identifier("originalTransactionId")
    productId = try read.text("productId", maxBytes: 255)
    type = try read.text("type", maxBytes: 64)
    purchaseDate = try read.date("purchaseDate")
    originalPurchaseDate = try read.optionalDate("originalPurchaseDate")
    expiresDate = try read.optionalDate("expiresDate")
    quantity = try read.optionalInt("quantity", range: 1...1_000_000) ?? 1
    appAccountToken = try read.optionalUUID("appAccountToken")
    inAppOwnershipType = try read.optionalText("inAppOwnershipType", maxBytes: 64)
    revocationDate = try read.optionalDate("revocationDate")
    revocationReason = try read.optionalInt("revocationReason", range: 0...1_000)
    isUpgraded = try read.optionalBool("isUpgraded") ?? false
    transactionReason = try read.optionalText("transactionReason", maxBytes: 64)
    environment = try read.text("environment", maxBytes: 64)
    signedDate = try read.date("signedDate")
  }
}

/// A subscription's renewal info (`JWSRenewalInfoDecodedPayload`), the members payservice keeps.
public struct AppStoreRenewal: Sendable, Equatable, WireObject {
  public var originalTransactionId = ""
  public var autoRenewProductId: String?
  /// Whether the subscription renews at the end of its period.
  public var autoRenewStatus: Bool?
  /// Why it expired: 1 cancelled by the customer, 2 billing error, 3 price increase not agreed,
  /// 4 product not available, 5 other.
  public var expirationIntent: Int?
  /// The App Store is still trying to bill the customer.
  public var isInBillingRetryPeriod: Bool?
  /// Access continues until this while billing is retried.
  public var gracePeriodExpiresDate: Int?
  public var renewalDate: Int?
  public var environment = ""
  public var signedDate = 0

  public init() {}

  public static let shape = ObjectShape<AppStoreRenewal>(
    blank: { AppStoreRenewal() },
    [
      .member("originalTransactionId", \.originalTransactionId),
      .member("autoRenewProductId", \.autoRenewProductId, .optional),
      .member("autoRenewStatus", \.autoRenewStatus, .optional),
      .member("expirationIntent", \.expirationIntent, .optional),
      .member("isInBillingRetryPeriod", \.isInBillingRetryPeriod, .optional),
      .member("gracePeriodExpiresDate", \.gracePeriodExpiresDate, .optional),
      .member("renewalDate", \.renewalDate, .optional), .member("environment", \.environment),
      .member("signedDate", \.signedDate),
    ])

  init(payload: JSONObject) throws(AppStorePayloadProblem) {
    var read = PayloadReader(payload, "signedRenewalInfo")
    originalTransactionId = try read.identifier("originalTransactionId")
    autoRenewProductId = try read.optionalText("autoRenewProductId", maxBytes: 255)
    autoRenewStatus = try read.optionalInt("autoRenewStatus", range: 0...1).map { $0 == 1 }
    expirationIntent = try read.optionalInt("expirationIntent", range: 0...1_000)
    isInBillingRetryPeriod = try read.optionalBool("isInBillingRetryPeriod")
    gracePeriodExpiresDate = try read.optionalDate("gracePeriodExpiresDate")
    renewalDate = try read.optionalDate("renewalDate")
    environment = try read.text("environment", maxBytes: 64)
    signedDate = try read.date("signedDate")
  }
}

/// An App Store Server Notification V2 (`responseBodyV2DecodedPayload`), before its nested items
/// are verified.
struct AppStoreNotificationPayload: Equatable {
  var notificationUUID: String
  var notificationType: String
  var subtype: String?
  var signedDate: Int
  var environment: String
  var signedTransactionInfo: String?
  var signedRenewalInfo: String?

  init(payload: JSONObject) throws(AppStorePayloadProblem) {
    var read = PayloadReader(payload, "signedPayload")
    notificationUUID = try read.text("notificationUUID", maxBytes: 64)
    notificationType = try read.text("notificationType", maxBytes: 64)
    subtype = try read.optionalText("subtype", maxBytes: 64)
    signedDate = try read.date("signedDate")
    guard let environment = try? AppStoreSignedDataVerifier.environment(of: payload, .notification) else {
      throw AppStorePayloadProblem(message: "signedPayload: data.environment is missing")
    }
    self.environment = environment
    if case .object(let data)? = payload["data"] {
      var nested = PayloadReader(data, "signedPayload.data")
      signedTransactionInfo = try nested.optionalText("signedTransactionInfo", maxBytes: 64 << 10)
      signedRenewalInfo = try nested.optionalText("signedRenewalInfo", maxBytes: 64 << 10)
    }
  }
}

/// Reads typed members of a verified payload, naming the member that is wrong.
struct PayloadReader {
  let object: JSONObject
  let name: String

  init(_ object: JSONObject, _ name: String) {
    self.object = object
    self.name = name
  }

  func fail(_ key: String, _ expected: String) -> AppStorePayloadProblem {
    AppStorePayloadProblem(message: "\(name): \(key) must be \(expected)")
  }

  func optionalText(_ key: String, maxBytes: Int) throws(AppStorePayloadProblem) -> String? {
    switch object[key] {
    case nil, .null?: return nil
    case .string(let text)? where !text.isEmpty && text.utf8.count <= maxBytes: return text
    default: throw fail(key, "a string of 1 to \(maxBytes) bytes")
    }
  }

  func text(_ key: String, maxBytes: Int) throws(AppStorePayloadProblem) -> String {
    guard let text = try optionalText(key, maxBytes: maxBytes) else { throw fail(key, "present") }
    return text
  }

  /// An App Store id: 1 to 64 printable ASCII bytes (Apple's are digits; Xcode's may be "0").
  func identifier(_ key: String) throws(AppStorePayloadProblem) -> String {
    let text = try text(key, maxBytes: 64)
    guard text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { throw fail(key, "printable ASCII") }
    return text
  }

  func optionalInt(_ key: String, range: ClosedRange<Int>) throws(AppStorePayloadProblem) -> Int? {
    switch object[key] {
    case nil, .null?: return nil
    case .number(let text)?:
      guard text.utf8.count <= 18, let value = Int(text), range.contains(value) else {
        throw fail(key, "a whole number from \(range.lowerBound) to \(range.upperBound)")
      }
      return value
    default: throw fail(key, "a number")
    }
  }

  /// Milliseconds since 1970, up to the year 9999. Xcode's StoreKit testing writes fractions of a
  /// millisecond (1700358336049.7297): they are dropped.
  func optionalDate(_ key: String) throws(AppStorePayloadProblem) -> Int? {
    switch object[key] {
    case nil, .null?: return nil
    case .number(let text)?:
      guard let value = AppStoreDates.milliseconds(text), (0...253_402_300_799_999).contains(value) else {
        throw fail(key, "a whole number from 0 to 253402300799999")
      }
      return value
    default: throw fail(key, "a number")
    }
  }

  func date(_ key: String) throws(AppStorePayloadProblem) -> Int {
    guard let value = try optionalDate(key) else { throw fail(key, "present (milliseconds since 1970)") }
    return value
  }

  func optionalBool(_ key: String) throws(AppStorePayloadProblem) -> Bool? {
    switch object[key] {
    case nil, .null?: return nil
    case .bool(let value)?: return value
    default: throw fail(key, "true or false")
    }
  }

  /// A UUID, lower-cased.
  func optionalUUID(_ key: String) throws(AppStorePayloadProblem) -> String? {
    guard let text = try optionalText(key, maxBytes: 36) else { return nil }
    guard AppStoreAccount.isUUID(text) else { throw fail(key, "a UUID") }
    return text.lowercased()
  }
}

/// Accounts: an app's `appAccountToken` (a UUID, lower-cased), or a chain's
/// `originalTransactionId` when the app set none.
public enum AppStoreAccount {
  /// 8-4-4-4-12 hexadecimal digits, as Foundation reads a UUID.
  public static func isUUID(_ text: String) -> Bool {
    UUID(uuidString: text) != nil
  }
}

/// Dates as the App Store writes them: milliseconds since 1970.
enum AppStoreDates {
  /// The whole milliseconds of a JSON number's text: digits with an optional fraction (dropped), at
  /// most 18 of them before the point; nil for an exponent or anything else.
  static func milliseconds(_ text: String) -> Int? {
    let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    let whole = parts[0]
    var digits = Substring(whole)
    if digits.hasPrefix("-") { digits = digits.dropFirst() }
    guard (1...18).contains(digits.utf8.count), digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
      return nil
    }
    if parts.count == 2 {
      guard !parts[1].isEmpty, parts[1].utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
    }
    return Int(whole)
  }
}
