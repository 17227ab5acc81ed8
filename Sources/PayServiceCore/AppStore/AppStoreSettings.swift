import X509

/// `appStore:` in config: the app whose in-app purchases payservice verifies and keeps, the
/// environments and roots it accepts, what each product grants, and the App Store Server API key.
public struct AppStoreSettings: Sendable {
  /// The app's bundle id; every signed item must name it.
  public var bundleId: String
  /// The App Store's id of the app; required when Production is accepted.
  public var appAppleId: Int64?
  /// The environments accepted, as the App Store names them: `Production`, `Sandbox`, and (only
  /// when listed, since Apple does not sign it) `Xcode` and `LocalTesting`.
  public var environments: [String]
  /// The roots a signed item's chain must end at: Apple Root CA - G3 unless the config names others.
  public var roots: [Certificate]
  /// What each App Store product grants, by `productId`.
  public var products: [String: AppStoreProduct]
  /// The App Store Server API's key and hosts; nil: history, notification recovery and receipts
  /// are not available.
  public var api: AppStoreAPISettings?

  public init(
    bundleId: String, appAppleId: Int64?, environments: [String], roots: [Certificate],
    products: [String: AppStoreProduct], api: AppStoreAPISettings? = nil
  ) {
    self.bundleId = bundleId
    self.appAppleId = appAppleId
    self.environments = environments
    self.roots = roots
    self.products = products
    self.api = api
  }

  /// The environments Apple does not sign for: accepted only when listed.
  public static let unsignedEnvironments: Set<String> = ["Xcode", "LocalTesting"]
  public static let knownEnvironments = ["Production", "Sandbox", "Xcode", "LocalTesting"]

  /// The verifier for this app's signed items.
  public var verifier: AppStoreSignedDataVerifier {
    AppStoreSignedDataVerifier(
      roots: roots, bundleId: bundleId, appAppleId: appAppleId, environments: Set(environments))
  }
}

/// What an App Store product is, and what buying it grants.
public struct AppStoreProduct: Sendable, Equatable {
  /// The App Store's product types.
  public enum Kind: String, Sendable, CaseIterable, WireEnum {
    /// Used up and bought again (coins): each purchase credits `units` of the entitlement.
    case consumable
    /// Bought once, kept (an unlock): grants the entitlement with no end.
    case nonConsumable
    /// A subscription the App Store renews: grants the entitlement until its `expiresDate`.
    case autoRenewable
    /// A subscription the App Store does not renew: grants the entitlement for `durationDays`
    /// from the purchase (the App Store gives no end date for these).
    case nonRenewing
  }

  public var productId: String
  public var kind: Kind
  /// The entitlement granted (`pro`), or for a consumable the balance credited (`coins`).
  public var entitlement: String
  /// A consumable's units a purchase credits (per unit of its quantity); nil for other kinds.
  public var units: Int64?
  /// A non-renewing subscription's length; nil for other kinds.
  public var durationDays: Int?

  public init(productId: String, kind: Kind, entitlement: String, units: Int64? = nil, durationDays: Int? = nil) {
    self.productId = productId
    self.kind = kind
    self.entitlement = entitlement
    self.units = units
    self.durationDays = durationDays
  }
}
