/// What the App Store methods answer: a transaction as recorded, an account's entitlements and
/// balances, and the refusals they share.

/// Why an App Store item was refused: nothing was recorded or granted.
public enum AppStoreFailureCode: String, Sendable, WireEnum {
  /// The config has no `appStore` section (or, for history and recovery, no `appStore.api`).
  case notConfigured = "not_configured"
  case invalidFormat = "invalid_format"
  case invalidCertificate = "invalid_certificate"
  case invalidSignature = "invalid_signature"
  case wrongBundle = "wrong_bundle"
  case wrongEnvironment = "wrong_environment"
  /// A product not in `appStore.products`.
  case unknownProduct = "unknown_product"
  /// The purchase belongs to another account than the one named.
  case wrongAccount = "wrong_account"
  /// The back office would move a purchase away from an account that has spent its units.
  case unitsSpent = "units_spent"
  /// Too many lookups of unverified receipts in this process lately: try again after the time said.
  case rateLimited = "rate_limited"
  /// An app receipt that cannot be read, or that names no in-app purchase.
  case invalidReceipt = "invalid_receipt"
  /// The App Store Server API refused the bearer token (401): the key, key id, issuer or bundle id.
  case unauthorized
  /// The App Store Server API knows no such transaction (404) in any accepted environment.
  case notFound = "not_found"
  /// The App Store Server API refused the request as invalid (400).
  case invalidRequest = "invalid_request"
  /// 429 or 5xx after the retries, or no answer in time: nothing was applied past what is reported;
  /// the same request again continues.
  case unavailable
  /// An answer that is not the documented JSON.
  case invalidResponse = "invalid_response"

  init(_ cause: AppStoreVerificationFailure.Cause) {
    switch cause {
    case .invalidFormat: self = .invalidFormat
    case .invalidCertificate: self = .invalidCertificate
    case .invalidSignature: self = .invalidSignature
    case .wrongBundle: self = .wrongBundle
    case .wrongEnvironment: self = .wrongEnvironment
    }
  }

  init(_ code: AppStoreLedger.Refusal.Code) {
    switch code {
    case .unknownProduct: self = .unknownProduct
    case .wrongAccount: self = .wrongAccount
    case .unitsSpent: self = .unitsSpent
    }
  }
}

/// An App Store item refused, and why.
public struct AppStoreRefused: Equatable, Sendable, WireObject, FailureReporting, Error {
  public var failureCode = AppStoreFailureCode.invalidFormat
  public var message = ""

  public init() {}

  public init(_ code: AppStoreFailureCode, _ message: String) {
    self.failureCode = code
    self.message = message
  }

  public static let shape = ObjectShape<AppStoreRefused>(
    blank: { AppStoreRefused() },
    [
      .constant("status", "failed"), .member("failureCode", \.failureCode),
      .member("message", \.message, .required, .string("Which check failed, and what was found."), read: ParamReader.anyString),
    ])

  public var report: ResultFailure { ResultFailure(status: "failed", code: failureCode.rawValue, message: message) }

  static func verification(_ failure: AppStoreVerificationFailure, _ what: String) -> AppStoreRefused {
    AppStoreRefused(AppStoreFailureCode(failure.cause), "\(what): \(failure.message)")
  }

  init(_ failure: AppStoreAPIFailure, _ what: String) {
    switch failure {
    case AppStoreAPIFailure.unauthorized:
      self.init(
        AppStoreFailureCode.unauthorized,
        "\(what): the App Store Server API refused the bearer token (401): check appStore.api keyFile, keyId and issuerId and the bundleId")
    case .notFound(_, let message):
      self.init(.notFound, "\(what): \(message)")
    case .invalidRequest(_, let message):
      self.init(.invalidRequest, "\(what): \(message)")
    case .unavailable(_, let message):
      self.init(.unavailable, "\(what): \(message)")
    case .transport(let message):
      self.init(.unavailable, "\(what): \(message)")
    case .invalidResponse(let message):
      self.init(.invalidResponse, "\(what): \(message)")
    }
  }

  static let noAPI = AppStoreRefused(
    .notConfigured,
    "this payservice's config has no appStore.api key: it cannot ask the App Store Server API (add keyFile, keyId and issuerId)")

  static let notConfigured = AppStoreRefused(
    .notConfigured, "this payservice's config has no appStore section: it verifies no in-app purchases")
}

/// A transaction as payservice recorded it (its latest signed version).
public struct AppStoreTransactionDocument: Equatable, Sendable, WireObject {
  public var transactionId = ""
  public var originalTransactionId = ""
  public var productId = ""
  public var type = AppStoreProduct.Kind.consumable
  public var entitlement = ""
  /// A consumable's units (the product's units × quantity).
  public var units: Int?
  public var quantity = 1
  public var environment = ""
  public var purchaseDate = ""
  public var expiresDate: String?
  public var revocationDate: String?
  public var revocationReason: Int?
  public var appAccountToken: String?
  public var signedDate = ""

  public init() {}

  init(_ item: AppStoreTransaction, product: AppStoreProduct) {
    func date(_ milliseconds: Int) -> String { RFC3339.format(Int64(milliseconds / 1000)) }
    transactionId = item.transactionId
    originalTransactionId = item.originalTransactionId
    productId = item.productId
    type = product.kind
    entitlement = product.entitlement
    units = product.units.map { Int($0) * item.quantity }
    quantity = item.quantity
    environment = item.environment
    purchaseDate = date(item.purchaseDate)
    expiresDate = item.expiresDate.map(date)
    revocationDate = item.revocationDate.map(date)
    revocationReason = item.revocationReason
    appAccountToken = item.appAccountToken
    signedDate = date(item.signedDate)
  }

  public static let shape = ObjectShape<AppStoreTransactionDocument>(
    blank: { AppStoreTransactionDocument() },
    [
      .member("transactionId", \.transactionId), .member("originalTransactionId", \.originalTransactionId),
      .member("productId", \.productId), .member("type", \.type),
      .member("entitlement", \.entitlement, .required, .string("What the config's product grants.")),
      .member("units", \.units, .optional), .member("quantity", \.quantity),
      .member("environment", \.environment), .member("purchaseDate", \.purchaseDate, .required, Shapes.timestamp),
      .member("expiresDate", \.expiresDate, .optional, Shapes.timestamp),
      .member("revocationDate", \.revocationDate, .optional, Shapes.timestamp),
      .member("revocationReason", \.revocationReason, .optional),
      .member("appAccountToken", \.appAccountToken, .optional),
      .member("signedDate", \.signedDate, .required, Shapes.timestamp),
    ])
}

/// A consumable entitlement's units: bought, refunded, spent, and what is left.
public struct AppStoreBalance: Equatable, Sendable, WireObject {
  public var entitlement = ""
  /// What is left: purchased − refunded − consumed. Negative when units were spent and then refunded.
  public var units = 0
  public var purchased = 0
  public var refunded = 0
  public var consumed = 0

  public init() {}

  init(entitlement: String, units: Int = 0, purchased: Int = 0, refunded: Int = 0, consumed: Int = 0) {
    self.entitlement = entitlement
    self.units = units
    self.purchased = purchased
    self.refunded = refunded
    self.consumed = consumed
  }

  public static let shape = ObjectShape<AppStoreBalance>(
    blank: { AppStoreBalance() },
    [
      .member("entitlement", \.entitlement),
      .member(
        "units", \.units, .required,
        .integer("What is left: purchased - refunded - consumed (negative when spent units were refunded).")),
      .member("purchased", \.purchased), .member("refunded", \.refunded), .member("consumed", \.consumed),
    ])
}

/// What an account has at the service clock.
public struct AccountEntitlements: Equatable, Sendable, WireObject {
  public var account = ""
  public var asOf = ""
  public var entitlements: [Entitlement] = []
  public var balances: [AppStoreBalance] = []

  public init() {}

  public static let shape = ObjectShape<AccountEntitlements>(
    blank: { AccountEntitlements() },
    [
      .member(
        "account", \.account, .required,
        .string("The appAccountToken (lower-case), or the originalTransactionId of purchases made without one.")),
      .member("asOf", \.asOf, .required, Shapes.timestamp),
      .member("entitlements", \.entitlements), .member("balances", \.balances),
    ])

  /// The account's entitlements and balances at `now`, read in `transaction`.
  static func read(
    account: String, settings: AppStoreSettings, _ transaction: any StoreTransaction, now: Int64
  ) throws -> AccountEntitlements {
    var result = AccountEntitlements()
    result.account = account
    result.asOf = RFC3339.format(now)
    let rows = try transaction.appStoreEntitlementTransactions(account: account)
    let byChain = Dictionary(grouping: rows, by: \.originalTransactionId)
    for chain in try transaction.appStoreEntitlementChains(account: account) {
      if let entitlement = try AppStoreLedger.entitlement(
        of: chain, byChain[chain.originalTransactionId] ?? [], settings: settings, now: now)
      {
        result.entitlements.append(entitlement)
      }
    }
    result.entitlements.sort { ($0.entitlement, $0.originalTransactionId) < ($1.entitlement, $1.originalTransactionId) }
    result.balances = try balances(account: account, transaction)
    return result
  }

  /// The account's consumable balances, by entitlement: summed by the store, not read row by row.
  static func balances(account: String, _ transaction: any StoreTransaction) throws -> [AppStoreBalance] {
    var balances: [String: AppStoreBalance] = [:]
    for (entitlement, credit) in try transaction.appStoreCredits(account: account) {
      balances[entitlement] = AppStoreBalance(
        entitlement: entitlement, units: 0, purchased: Int(credit.purchased), refunded: Int(credit.refunded), consumed: 0)
    }
    for (entitlement, units) in try transaction.appStoreConsumed(account: account) {
      balances[entitlement, default: AppStoreBalance(entitlement: entitlement)].consumed = Int(units)
    }
    return balances.values.map { balance in
      var balance = balance
      balance.units = balance.purchased - balance.refunded - balance.consumed
      return balance
    }.sorted { $0.entitlement < $1.entitlement }
  }
}
