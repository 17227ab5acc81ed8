import Foundation
import PayServiceCore
import X509

/// An app's in-app purchases for tests: the config's `appStore` section trusting a test signing
/// authority, and the items that authority signs as the App Store would (transactions, renewal
/// infos, notifications V2). Dates are milliseconds since 1970, as Apple's.
public struct AppStoreShop: Sendable {
  public static let bundleId = "com.example.beans"
  public static let appAppleId: Int64 = 1_234_567_890

  public let authority: AppStoreTestAuthority

  public init(authority: AppStoreTestAuthority? = nil) throws {
    self.authority = try authority ?? AppStoreTestAuthority()
  }

  /// The products the tests buy: coins (a consumable of 100 units), an unlock, a monthly
  /// subscription and a 30-day pass.
  public static let products: [String: AppStoreProduct] = [
    "com.example.beans.coins100": AppStoreProduct(
      productId: "com.example.beans.coins100", kind: .consumable, entitlement: "coins", units: 100),
    "com.example.beans.darkmode": AppStoreProduct(
      productId: "com.example.beans.darkmode", kind: .nonConsumable, entitlement: "dark_mode"),
    "com.example.beans.pro.monthly": AppStoreProduct(
      productId: "com.example.beans.pro.monthly", kind: .autoRenewable, entitlement: "pro"),
    "com.example.beans.pass30": AppStoreProduct(
      productId: "com.example.beans.pass30", kind: .nonRenewing, entitlement: "pass", durationDays: 30),
  ]

  /// `config` with an `appStore` section trusting this authority's root.
  public func config(_ config: Config = TestConfig.load(), environments: [String] = ["Production", "Sandbox"])
    -> Config
  {
    var config = config
    config.appStore = AppStoreSettings(
      bundleId: Self.bundleId, appAppleId: Self.appAppleId, environments: environments, roots: [authority.root],
      products: Self.products)
    return config
  }

  /// Milliseconds of an RFC 3339 time.
  public static func ms(_ text: String) -> Int { Int(RFC3339.parse(text)!) * 1000 }

  static func json(_ members: [(String, Any?)]) -> String {
    var parts: [String] = []
    for (key, value) in members {
      switch value {
      case nil: continue
      case let text as String: parts.append("\"\(key)\":\"\(text)\"")
      case let flag as Bool: parts.append("\"\(key)\":\(flag)")
      case let number as Int: parts.append("\"\(key)\":\(number)")
      case let number as Int64: parts.append("\"\(key)\":\(number)")
      case let raw as RawJSON: parts.append("\"\(key)\":\(raw.text)")
      default: preconditionFailure("unsupported member \(key)")
      }
    }
    return "{" + parts.joined(separator: ",") + "}"
  }

  struct RawJSON {
    var text: String
  }

  /// A signed transaction, in Apple's shape (`JWSTransactionDecodedPayload`: no appAppleId).
  public func transaction(
    id: String, original: String? = nil, product: String, purchase: Int, expires: Int? = nil, signed: Int,
    quantity: Int = 1, revocation: Int? = nil, revocationReason: Int? = nil, appAccountToken: String? = nil,
    environment: String = "Sandbox", bundleId: String = AppStoreShop.bundleId, upgraded: Bool = false
  ) throws -> String {
    let type = Self.products[product].map { product -> String in
      switch product.kind {
      case .consumable: return "Consumable"
      case .nonConsumable: return "Non-Consumable"
      case .autoRenewable: return "Auto-Renewable Subscription"
      case .nonRenewing: return "Non-Renewing Subscription"
      }
    } ?? "Consumable"
    return try authority.sign(
      Self.json([
        ("transactionId", id), ("originalTransactionId", original ?? id), ("bundleId", bundleId),
        ("productId", product), ("purchaseDate", purchase), ("originalPurchaseDate", purchase),
        ("expiresDate", expires), ("quantity", quantity), ("type", type), ("appAccountToken", appAccountToken),
        ("inAppOwnershipType", "PURCHASED"), ("signedDate", signed), ("revocationDate", revocation),
        ("revocationReason", revocationReason), ("isUpgraded", upgraded ? true : nil),
        ("environment", environment), ("transactionReason", expires == nil ? "PURCHASE" : "RENEWAL"),
      ]))
  }

  /// A signed renewal info.
  public func renewal(
    original: String, product: String = "com.example.beans.pro.monthly", autoRenew: Bool = true, signed: Int,
    billingRetry: Bool? = nil, graceUntil: Int? = nil, expirationIntent: Int? = nil, renewalDate: Int? = nil,
    environment: String = "Sandbox"
  ) throws -> String {
    try authority.sign(
      Self.json([
        ("originalTransactionId", original), ("autoRenewProductId", product), ("productId", product),
        ("autoRenewStatus", autoRenew ? 1 : 0), ("expirationIntent", expirationIntent),
        ("isInBillingRetryPeriod", billingRetry), ("gracePeriodExpiresDate", graceUntil),
        ("renewalDate", renewalDate), ("signedDate", signed), ("environment", environment),
      ]))
  }

  /// A signed notification V2 carrying `transaction` and `renewal` (signed items).
  public func notification(
    uuid: String, type: String, subtype: String? = nil, signed: Int, transaction: String? = nil,
    renewal: String? = nil, environment: String = "Sandbox", bundleId: String = AppStoreShop.bundleId
  ) throws -> String {
    let data = Self.json([
      ("appAppleId", environment == "Production" ? Int(Self.appAppleId) : nil), ("bundleId", bundleId),
      ("bundleVersion", "1.0"), ("environment", environment), ("signedTransactionInfo", transaction),
      ("signedRenewalInfo", renewal), ("status", transaction == nil ? nil : 1),
    ])
    return try authority.sign(
      Self.json([
        ("notificationType", type), ("subtype", subtype), ("notificationUUID", uuid), ("data", RawJSON(text: data)),
        ("version", "2.0"), ("signedDate", signed),
      ]))
  }
}
