/// The merchant's store: catalog, shipping and tax rules, loaded from `config.yaml`.
///
/// Every amount is held in integer minor units of `merchant.currency`.
public struct Config: Sendable {
  public var merchant: Merchant
  public var catalog: [Product]
  public var shipping: Shipping
  public var tax: Tax
  public var gateway: Gateway

  public let productsBySKU: [String: Product]
  public let shippingMethodsByIdentifier: [String: ShippingMethod]

  public init(merchant: Merchant, catalog: [Product], shipping: Shipping, tax: Tax, gateway: Gateway) {
    self.merchant = merchant
    self.catalog = catalog
    self.shipping = shipping
    self.tax = tax
    self.gateway = gateway
    self.productsBySKU = Dictionary(catalog.map { ($0.sku, $0) }, uniquingKeysWith: { first, _ in first })
    self.shippingMethodsByIdentifier = Dictionary(
      shipping.methods.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
  }

  public var currency: Currency { merchant.currency }

  /// Formats minor units in the merchant currency.
  public func format(_ minor: Int64) -> String {
    MoneyText.format(minor, digits: merchant.currency.minorDigits)
  }
}

public struct Merchant: Sendable {
  public var identifier: String
  public var displayName: String
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
  public var amountMinor: Int64
  public var regions: [String]?
  public var exceptRegions: [String]?
}

public struct Tax: Sendable {
  public var rounding: Rounding
  public var defaultRate: Rate
  public var rules: [TaxRule]
}

public struct TaxRule: Sendable {
  /// "US" (a whole country) or "US-CA" (a country's state or province).
  public var region: String
  public var postalCodePrefixes: [String]?
  public var rate: Rate
  public var shippingTaxable: Bool
}

public struct Gateway: Sendable {
  public enum Kind: String, Sendable { case sandbox }
  public var kind: Kind
  public var chargeTokenTTLSeconds: Int
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
