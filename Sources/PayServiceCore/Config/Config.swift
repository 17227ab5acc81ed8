import Foundation

/// The merchant's store: catalog, shipping and tax rules, loaded from `config.yaml`.
///
/// Every amount is held in integer minor units of `merchant.currency`.
public struct Config: Sendable {
  public var merchant: Merchant
  public var catalog: [Product]
  public var shipping: Shipping
  public var tax: Tax
  public var gateway: Gateway
  public var coupons: [Coupon]
  public var paymentMethodAdjustments: [PaymentMethodAdjustment]
  /// The merchant's Apple Pay payment processing identity; nil: only test tokens are accepted.
  public var applePay: ApplePayMerchant?
  /// What `createPaymentRequest` adds to the merchant's facts (`applePay.shippingType`,
  /// `managementURL`, `billingAgreement`, `tokenNotificationURL`).
  public var paymentRequest = PaymentRequestSettings()
  /// The merchant identity and domains for `startMerchantSession`; nil: not offered.
  public var merchantSession: MerchantSessionSettings?
  /// Apple's Merchant Token Management API (`applePay.merchantTokens`): token events fetched and
  /// tokens unlinked with the merchant identity; nil: processMerchantTokenNotification answers
  /// not_configured and nothing is unlinked.
  public var merchantTokens: MerchantTokenSettings?
  /// Apple Wallet order tracking (`walletOrders:`); nil: authorizePayment gives no orderDetails.
  public var walletOrders: WalletOrders?
  /// How long personal data is kept (`privacy:`).
  public var privacy = Privacy()
  /// How agreements' later payments are collected (`billing:`).
  public var billing = BillingSettings()
  /// In-app purchases of the merchant's app (`appStore:`); nil: the App Store methods answer
  /// not_configured.
  public var appStore: AppStoreSettings?
  /// The config file's text, as read: what `digest` is of.
  public var sourceText = ""
  /// "sha256:" and the hex SHA-256 of the config file's bytes (`ConfigLoader.digest`): which config
  /// a process runs, in its log and its `health` answer. Computed when asked (a start under
  /// `--quiet` never is), so that the hash's code is not paged in by every start.
  public var digest: String { ConfigLoader.digest(of: sourceText.utf8) }

  public let productsBySKU: [String: Product]
  /// Each product's position in `catalog`.
  public let catalogPositionBySKU: [String: Int]
  public let shippingMethodsByIdentifier: [String: ShippingMethod]
  /// Coupons by `Coupon.normalize(code)`.
  public let couponsByCode: [String: Coupon]
  /// Whether any product has a billing plan (carts are then checked to hold at most one).
  public let hasBillingPlans: Bool

  public init(
    merchant: Merchant, catalog: [Product], shipping: Shipping, tax: Tax, gateway: Gateway, coupons: [Coupon] = [],
    paymentMethodAdjustments: [PaymentMethodAdjustment] = [], applePay: ApplePayMerchant? = nil
  ) {
    self.merchant = merchant
    self.catalog = catalog
    self.shipping = shipping
    self.tax = tax
    self.gateway = gateway
    self.coupons = coupons
    self.paymentMethodAdjustments = paymentMethodAdjustments
    self.applePay = applePay
    self.hasBillingPlans = catalog.contains { $0.billing != nil }
    self.couponsByCode = Dictionary(
      coupons.map { (Coupon.normalize($0.code), $0) }, uniquingKeysWith: { first, _ in first })
    self.productsBySKU = Dictionary(catalog.map { ($0.sku, $0) }, uniquingKeysWith: { first, _ in first })
    self.catalogPositionBySKU = Dictionary(
      catalog.enumerated().map { ($0.element.sku, $0.offset) }, uniquingKeysWith: { first, _ in first })
    self.shippingMethodsByIdentifier = Dictionary(
      shipping.methods.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
  }

  public var currency: Currency { merchant.currency }

  /// The most a catalog price or a shipping amount may be, in minor units. The largest cart is
  /// `CartItem.maxItems` lines of 9999 units; a card surcharge at most doubles it (100%), and tax
  /// at a rate of at most 1 at most doubles the lines and the shipping again. So a total is at most
  /// 4 × 999,900 × cap + 2 × cap = 999,900,500,000,000 minor units: within the documented
  /// `MoneyText.maxMinorUnits` (10^15), and every sum and product pricing makes in `Int64` is
  /// smaller still (rates and allocations multiply in `Int128`). Bounds, not overflow checks, keep
  /// pricing from trapping.
  public static let maxPriceMinor: Int64 = 250_000_000

  /// Formats minor units in the merchant currency.
  public func format(_ minor: Int64) -> String {
    MoneyText.format(minor, digits: merchant.currency.minorDigits)
  }
}

/// `privacy:`: what is kept of buyers.
public struct Privacy: Sendable, Equatable {
  /// Orders and payments keep names, street lines, email addresses and phone numbers this many days
  /// after the payment was authorized; a retention run (`payservice retention`) erases them after
  /// that, keeping country, region, postal prefix and the amounts. nil: kept until erased on request.
  public var retainPersonalDataDays: Int?

  public init(retainPersonalDataDays: Int? = nil) {
    self.retainPersonalDataDays = retainPersonalDataDays
  }
}

/// `billing:`: how payservice collects an agreement's later payments (`runBilling`) and what a
/// declined one leads to.
public struct BillingSettings: Sendable, Equatable {
  /// What an agreement becomes when its last retry is declined too.
  public enum WhenRetriesFail: String, Sendable, WireEnum {
    /// No more payments are attempted; the agreement stays, for the merchant to follow up.
    case unpaid
    /// The agreement ends.
    case canceled
  }

  /// What cancelling a pre-order after its free cancellation date does.
  public enum LateCancellation: String, Sendable, WireEnum {
    /// `cancelAgreement` answers `cancellation_not_free`: the pre-order stays, and is charged on its date.
    case refuse
    /// The pre-order is cancelled at no cost, as before the date.
    case allow
  }

  /// Days from a declined attempt to the next one: a payment is tried once when due and once
  /// more after each of these.
  public var retries: [Int] = [1, 3, 5]
  public var whenRetriesFail = WhenRetriesFail.unpaid
  public var lateCancellation = LateCancellation.refuse

  public init() {}
}

public struct Merchant: Sendable {
  public var identifier: String
  public var displayName: String
  /// The merchant's website (`merchant.url`): what a Wallet order links to; nil when not given.
  public var url: String? = nil
  public var countryCode: String
  public var currency: Currency
  public var supportedNetworks: [String]
  public var merchantCapabilities: [String]
  public var requiredShippingContactFields: [ContactField]
  public var requiredBillingContactFields: [ContactField]
}

/// A contact field a merchant can require (`PKContactField` / Apple Pay JS `ApplePayContactField`).
public enum ContactField: String, Sendable, CaseIterable {
  case postalAddress, name, email, phone
}

public struct Product: Sendable {
  public var sku: String
  public var name: String
  public var description: String
  public var priceMinor: Int64
  public var quantityOnHand: Int
  public var imageURI: String?
  /// Which of a tax rule's rates applies (`catalog[].taxClass`): `standard` unless configured.
  public var taxClass = TaxClass.standard
  /// How the product is paid when not once, today: a subscription, an automatic reload or a
  /// pre-order (`catalog[].recurring`, `automaticReload`, `deferred`); nil: paid now.
  public var billing: BillingPlan?
}

/// What a payment request says beyond the merchant's facts (`applePay:` in config).
public struct PaymentRequestSettings: Sendable {
  /// `ApplePayShippingType`: how the goods reach the buyer, which the sheet's wording follows.
  public enum ShippingType: String, Sendable, CaseIterable, WireEnum {
    case shipping, delivery, storePickup, servicePickup
  }

  public var shippingType = ShippingType.shipping
  /// Where the buyer manages a subscription, reload or pre-order (required when the catalog has one).
  public var managementURL: String?
  /// The terms the buyer agrees to for payments made later, shown on the sheet.
  public var billingAgreement: String?
  /// Where Apple's servers notify the merchant of changes to a merchant token.
  public var tokenNotificationURL: String?

  public init() {}
}

/// What `startMerchantSession` needs: the merchant identity certificate Apple issued for
/// `merchant.identifier` (its key used for mutual TLS with Apple), the domains the merchant
/// registered with Apple, and where a session may be requested.
public struct MerchantSessionSettings: Sendable {
  public var identity: MerchantIdentity
  /// The web domains registered and verified with Apple for this merchant, lower-cased.
  public var domains: [String]
  /// Which validation URLs may be used: Apple's gateway hosts, plus the hosts the config adds
  /// (`applePay.merchantSession.additionalHosts`, a test server or a proxy the merchant runs).
  /// Only the merchant's config file can add them. Parsed once, at start.
  public var urlPolicy = MerchantSessionURLPolicy(additionalHosts: [])
  /// A PEM file's text of CA certificates trusted instead of the system's; nil: the system roots.
  public var trustRootsPEM: String?
  public var connectTimeoutSeconds: Double = 5
  public var requestTimeoutSeconds: Double = 10
}

/// Apple Wallet order tracking (`walletOrders:`): authorizePayment's success carries the order's
/// `ApplePayPaymentOrderDetails`, so that Wallet can fetch the order from the merchant's web service;
/// with `package`, payservice also answers that web service (`getWalletOrder` and the device
/// registrations) and, with `apns`, tells registered devices when an order changes.
public struct WalletOrders: Sendable {
  /// The order type identifier registered with Apple (`order.com.example.shop`).
  public var orderTypeIdentifier: String
  /// The merchant's order web service (https).
  public var webServiceURL: String
  /// What signs and fills the order packages; nil: payservice serves none.
  public var package: WalletOrderPackageSettings?
  /// Apple's push service for order updates; nil: no pushes.
  public var apns: APNsSettings?

  public init(
    orderTypeIdentifier: String, webServiceURL: String, package: WalletOrderPackageSettings? = nil,
    apns: APNsSettings? = nil
  ) {
    self.orderTypeIdentifier = orderTypeIdentifier
    self.webServiceURL = webServiceURL
    self.package = package
    self.apns = apns
  }
}

/// What an order package needs beyond the order: the merchant as Wallet shows it, where the
/// shopper manages the order, and the Order Type ID certificate that signs it.
public struct WalletOrderPackageSettings: Sendable {
  /// The Apple merchant identifier the order names (`walletOrders.merchantIdentifier`).
  public var merchantIdentifier: String
  /// The merchant's name as Wallet shows it (`merchant.displayName`).
  public var displayName: String
  /// The merchant's website (`walletOrders.url`, else `merchant.url`).
  public var merchantURL: String
  /// Where the shopper manages the order: `{orderId}` is the order's id.
  public var orderManagementURL: String
  /// The Order Type ID certificate, its key and Apple's WWDR intermediate.
  public var signer: WalletOrderSigner

  public init(
    merchantIdentifier: String, displayName: String, merchantURL: String, orderManagementURL: String,
    signer: WalletOrderSigner
  ) {
    (self.merchantIdentifier, self.displayName, self.merchantURL) = (merchantIdentifier, displayName, merchantURL)
    (self.orderManagementURL, self.signer) = (orderManagementURL, signer)
  }

  /// The order's management URL.
  public func orderManagementURL(orderId: String) -> String {
    orderManagementURL.replacingOccurrences(of: "{orderId}", with: orderId)
  }
}

/// The name of a tax rate class: `standard`, or one a config names (`reduced`, `zero`, …).
public enum TaxClass {
  public static let standard = "standard"
}

public struct Shipping: Sendable {
  public var shipsTo: [String]
  public var methods: [ShippingMethod]
}

public struct ShippingMethod: Sendable {
  public var identifier: String
  public var label: String
  public var detail: String
  public var transitDays: Int
  /// The delivery window's last day; nil means the window is the single day `transitDays`.
  public var transitDaysMax: Int?
  public var amountMinor: Int64
  /// Shipping is free when the merchandise subtotal after discounts is at least this.
  public var freeOverMinor: Int64?
  public var regions: [String]?
  public var exceptRegions: [String]?
}

public struct Tax: Sendable {
  public var rounding: Rounding
  public var defaultRate: Rate
  public var rules: [TaxRule]
  /// The default rates of classes other than standard (`tax.defaultRates`).
  public var defaultClassRates: [String: Rate] = [:]
  /// Catalog prices, shipping amounts and amountOff coupons include tax, which is extracted from
  /// them rather than added (`tax.pricesIncludeTax`).
  public var pricesIncludeTax = false
  public var roundingTarget = RoundingTarget.perLine
  /// The rate class shipping is taxed at, where a rule taxes shipping.
  public var shippingTaxClass = TaxClass.standard
  /// With inclusive prices, a summary line showing the tax the total contains (for example
  /// "Includes VAT"); nil shows none.
  public var inclusiveLabel: String?

  /// The default rate of `taxClass` (where no rule matches); nil when the config has none.
  public func defaultRate(for taxClass: String) -> Rate? {
    taxClass == TaxClass.standard ? defaultRate : defaultClassRates[taxClass]
  }
}

public struct TaxRule: Sendable {
  /// "US" (a whole country) or "US-CA" (a country's state or province).
  public var region: String
  public var postalCodePrefixes: [String]?
  /// The standard rate.
  public var rate: Rate
  public var shippingTaxable: Bool
  /// The rates of classes other than standard (`rates` in config, whose `standard` is `rate`).
  public var classRates: [String: Rate] = [:]

  /// The rule's rate for `taxClass`; nil when it has none (a config error for any class in use).
  public func rate(for taxClass: String) -> Rate? {
    taxClass == TaxClass.standard ? rate : classRates[taxClass]
  }
}

/// A coupon code the payment sheet can apply (`coupons[]` in config).
public struct Coupon: Sendable {
  public enum Discount: Sendable {
    /// A share of the merchandise subtotal, held as a fraction (10% is 0.10).
    case percentOff(Rate)
    /// A fixed amount in minor units, capped at the merchandise subtotal.
    case amountOff(Int64)
  }

  /// As written in config; matched after `normalize`.
  public var code: String
  public var label: String
  public var discount: Discount
  public var minimumSubtotalMinor: Int64?
  /// Seconds since the epoch; the coupon is accepted up to and including this second.
  public var expires: Int64?

  public init(
    code: String, label: String = "Discount", discount: Discount, minimumSubtotalMinor: Int64? = nil,
    expires: Int64? = nil
  ) {
    self.code = code
    self.label = label
    self.discount = discount
    self.minimumSubtotalMinor = minimumSubtotalMinor
    self.expires = expires
  }

  /// What a typed code is compared by: surrounding whitespace dropped, upper-cased.
  public static func normalize(_ code: String) -> String {
    code.trimmingWhitespaceAndNewlines().uppercased()
  }
}

/// A surcharge or discount for paying with a particular kind of card (`paymentMethodAdjustments[]`).
public struct PaymentMethodAdjustment: Sendable {
  public var label: String
  /// When set, the card's network must equal this (case-insensitively).
  public var network: String?
  /// When set, the card's type must equal this.
  public var type: CardType?
  /// A signed fraction of the merchandise subtotal after the coupon: -0.05 is a 5% discount.
  public var percent: Rate

  public func matches(_ method: PaymentMethod) -> Bool {
    (network.map { $0.lowercased() == method.network.lowercased() } ?? true) && (type.map { $0 == method.type } ?? true)
  }
}

public struct Gateway: Sendable {
  /// Who takes the money: the built-in deterministic `sandbox`, or Stripe or Adyen over HTTPS.
  public enum Kind: String, Sendable { case sandbox, stripe, adyen }
  /// When processOrder takes the money: at once, or only when captureOrder says so (physical goods
  /// charged at shipment); until then the order is `authorized` and the money held.
  public enum Capture: String, Sendable, CaseIterable {
    case automatic
    case manual
  }

  /// Whether a remote gateway's key may move real money: `live` must be said explicitly.
  public enum Mode: String, Sendable, CaseIterable {
    case test
    case live
  }

  /// How payservice reaches Stripe (`gateway.kind: stripe`). The secret key is never part of the
  /// config: only the name of the environment variable that holds it.
  public struct Stripe: Sendable, Equatable, RemoteGatewaySettings {
    /// Stripe's API origin.
    public static let defaultAPIBase = "https://api.stripe.com"

    public var mode: Mode = .test
    /// The environment variable holding the secret key (`sk_…` or a restricted `rk_…`).
    public var secretKeyVariable = "STRIPE_SECRET_KEY"
    /// The environment variable holding the webhook endpoint's signing secret (`whsec_…`), or
    /// several separated by commas while one is rolled (`processStripeEvent`).
    public var webhookSecretVariable = "STRIPE_WEBHOOK_SECRET"
    /// The API origin: https, no path (tests point it at a local server).
    public var apiBase = Stripe.defaultAPIBase
    /// A PEM file of CA certificates trusted instead of the system's (a TLS-inspecting proxy, a
    /// test server); nil: the system trust roots. Resolved against the config file's directory.
    public var trustRoots: String?
    /// Seconds to establish a connection (TCP and TLS).
    public var connectTimeoutSeconds: Double = 10
    /// Seconds for a whole request, from sending to the last byte of the answer.
    public var requestTimeoutSeconds: Double = 30
    /// How many times a 429 or 5xx answer (or a failure to connect) is retried with the same
    /// idempotency key before the call counts as unanswered.
    public var maxRetries = 2
    /// Gateway calls in flight at once (pipelined processOrder requests overlap up to this).
    public var maxConcurrentCalls = 32

    public init() {}
  }

  /// How payservice reaches Adyen's Checkout API (`gateway.kind: adyen`). The API key and the
  /// notifications' HMAC key are never part of the config: only the names of the environment
  /// variables that hold them.
  public struct Adyen: Sendable, Equatable, RemoteGatewaySettings {
    /// The Checkout API's origin on Adyen's test platform. The live platform has one per merchant
    /// (`https://{PREFIX}-checkout-live.adyenpayments.com/checkout`, from the Customer Area), which
    /// `mode: live` requires in `apiBase`.
    public static let testAPIBase = "https://checkout-test.adyen.com"

    public var mode: Mode = .test
    /// The merchant account payments are made for (`merchantAccount` in every request).
    public var merchantAccount = ""
    /// The environment variable holding the API key (sent as `X-API-Key`).
    public var apiKeyVariable = "ADYEN_API_KEY"
    /// The environment variable holding the webhook's HMAC key (hex, as the Customer Area shows
    /// it), or two separated by a comma while it is replaced (`processAdyenNotification`).
    public var hmacKeyVariable = "ADYEN_HMAC_KEY"
    /// The Checkout API's origin and path prefix, before `/v71/…`: https, no query or credentials.
    public var apiBase = Adyen.testAPIBase
    public var trustRoots: String?
    public var connectTimeoutSeconds: Double = 10
    public var requestTimeoutSeconds: Double = 30
    public var maxRetries = 2
    public var maxConcurrentCalls = 32

    public init() {}
  }

  public var kind: Kind
  public var chargeTokenTTLSeconds: Int
  public var capture: Capture
  /// Set when `kind` is stripe.
  public var stripe: Stripe?
  /// Set when `kind` is adyen.
  public var adyen: Adyen?

  public init(kind: Kind, chargeTokenTTLSeconds: Int, capture: Capture, stripe: Stripe? = nil, adyen: Adyen? = nil) {
    self.kind = kind
    self.chargeTokenTTLSeconds = chargeTokenTTLSeconds
    self.capture = capture
    self.stripe = stripe
    self.adyen = adyen
  }
}

/// What every remote gateway's settings hold besides its own: where it is, whom to trust, and how
/// long and how often to try. One decoder reads them for each gateway.
public protocol RemoteGatewaySettings {
  var mode: Gateway.Mode { get set }
  /// The API origin (tests point it at a local server).
  var apiBase: String { get set }
  /// A PEM file of CA certificates trusted instead of the system's (a TLS-inspecting proxy, a
  /// test server); nil: the system trust roots. Resolved against the config file's directory.
  var trustRoots: String? { get set }
  /// Seconds to establish a connection (TCP and TLS).
  var connectTimeoutSeconds: Double { get set }
  /// Seconds for a whole request, from sending to the last byte of the answer.
  var requestTimeoutSeconds: Double { get set }
  /// How many times a 429 or 5xx answer (or a failure to connect) is retried with the same
  /// idempotency key before the call counts as unanswered.
  var maxRetries: Int { get set }
  /// Gateway calls in flight at once (pipelined processOrder requests overlap up to this).
  var maxConcurrentCalls: Int { get set }
}

/// Apple Pay network names as Apple Pay on the Web spells them.
public enum ApplePayNetworks {
  public static let all: [String] = [
    "amex", "bancomat", "bancontact", "cartesBancaires", "chinaUnionPay", "dankort", "discover", "eftpos",
    "electron", "elo", "girocard", "interac", "jcb", "mada", "maestro", "masterCard", "meeza", "mir",
    "nanaco", "privateLabel", "quicPay", "suica", "visa", "vPay", "waon",
  ]
}

/// `ApplePayMerchantCapability` values.
public enum MerchantCapability {
  public static let all = ["supports3DS", "supportsEMV", "supportsCredit", "supportsDebit"]
}
