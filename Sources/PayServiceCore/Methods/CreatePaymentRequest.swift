import Foundation

/// Builds the payment request a web page passes to `new ApplePaySession(version, request)`: the
/// merchant's facts from config, the priced cart, the shipping methods offered, and a subscription,
/// automatic reload or pre-order when the cart holds one.
public enum CreatePaymentRequest: RPCMethod {
  public static let name = "createPaymentRequest"

  public static let documentation = MethodDocumentation(
    summary: "Build the ApplePayPaymentRequest that opens the sheet, and the Apple Pay JS version it needs.",
    description: """
      Returns paymentRequest, an ApplePayPaymentRequest to pass unchanged to new ApplePaySession(version, \
      request) (a native app sets the same facts on PKPaymentRequest): countryCode, currencyCode, \
      merchantCapabilities, supportedNetworks, the required contact fields and shippingType from config; \
      shippingMethods offered for the shipping contact's region (else the merchant's country), the \
      requested one first; lineItems and total priced like computeSummaryItems with the first of them; \
      supportsCouponCode when coupons are configured and couponCode when the given one applies; \
      applicationData when given. A cart with a subscription, automatic reload or pre-order adds \
      recurringPaymentRequest, automaticReloadPaymentRequest or deferredPaymentRequest, and its lines \
      carry paymentTiming and dates (RFC 3339 strings: revive them into Date objects). minimumVersion is \
      the lowest Apple Pay JS version that understands every member used (ApplePaySession.supportsVersion). \
      errors lists coupon problems when couponCode was given. Changes nothing.
      """,
    readOnly: true, idempotent: true)
  public static let usesStore = false

  public struct Params: Sendable {
    public var items: [CartItem] = []
    public var shippingMethod: String?
    public var couponCode: String?
    public var shippingContact: Contact?
    public var applicationData: Base64Data?
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member("items", \.items, .required, CartItem.cartSchema, read: CartItem.readCart),
      .member(
        "shippingMethod", \.shippingMethod, .optional,
        .string("The shipping method to offer first (when offered for the region).", minLength: 1),
        read: ShippingMethod.readIdentifier),
      .member("couponCode", \.couponCode, .optionalOrNull, Shapes.couponCode, read: Coupon.readCode),
      .member("shippingContact", \.shippingContact, .optional),
      .member(
        "applicationData", \.applicationData, .optional,
        .string(
          "Base64 data the token's header will carry the SHA-256 of (send it again to authorizePayment).",
          pattern: "^[A-Za-z0-9+/]*={0,2}$")),
    ])

  public struct Result: MethodResult, WireObject {
    public var minimumVersion = PaymentRequest.baseVersion
    public var paymentRequest = PaymentRequest()
    public var errors: [ApplePayError]?

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member(
          "minimumVersion", \.minimumVersion,
          .integer("The lowest Apple Pay JS version that understands this request.", minimum: 3, maximum: 14)),
        .member("paymentRequest", \.paymentRequest),
        .member("errors", \.errors, .optional),
      ])
  }

  /// An `ApplePayPaymentRequest`.
  public struct PaymentRequest: Sendable, WireObject {
    /// Every request payservice builds needs `supportedCountries`-era Apple Pay JS at least.
    public static let baseVersion = 3

    public var countryCode = ""
    public var currencyCode = ""
    public var merchantCapabilities: [String] = []
    public var supportedNetworks: [String] = []
    public var requiredShippingContactFields: [String] = []
    public var requiredBillingContactFields: [String] = []
    public var shippingType = PaymentRequestSettings.ShippingType.shipping
    public var shippingMethods: [ShippingMethodOffer] = []
    public var lineItems: [SummaryItem] = []
    public var total = SummaryItem(label: "", amount: "0")
    public var supportsCouponCode: Bool?
    public var couponCode: String?
    public var applicationData: String?
    public var recurringPaymentRequest: BillingRequest?
    public var automaticReloadPaymentRequest: BillingRequest?
    public var deferredPaymentRequest: BillingRequest?

    public static let shape = ObjectShape<PaymentRequest>(
      "An ApplePayPaymentRequest.", blank: { PaymentRequest() },
      [
        .member("countryCode", \.countryCode), .member("currencyCode", \.currencyCode, Shapes.currencyCode),
        .member("merchantCapabilities", \.merchantCapabilities), .member("supportedNetworks", \.supportedNetworks),
        .member("requiredShippingContactFields", \.requiredShippingContactFields),
        .member("requiredBillingContactFields", \.requiredBillingContactFields),
        .member("shippingType", \.shippingType),
        .member("shippingMethods", \.shippingMethods, .required, Shapes.shippingMethodOffers),
        .member("lineItems", \.lineItems, .required, Shapes.summaryItems),
        .member("total", \.total),
        .member("supportsCouponCode", \.supportsCouponCode, .optional),
        .member("couponCode", \.couponCode, .optional),
        .member("applicationData", \.applicationData, .optional),
        .member("recurringPaymentRequest", \.recurringPaymentRequest, .optional),
        .member("automaticReloadPaymentRequest", \.automaticReloadPaymentRequest, .optional),
        .member("deferredPaymentRequest", \.deferredPaymentRequest, .optional),
      ])
  }

  /// `ApplePayRecurringPaymentRequest`, `ApplePayAutomaticReloadPaymentRequest` or
  /// `ApplePayDeferredPaymentRequest`: the one billing line's description, its line item (as
  /// `regularBilling` with `trialBilling`, `automaticReloadBilling` or `deferredBilling`) and the
  /// merchant's management URL and terms.
  public struct BillingRequest: Sendable, WireObject {
    public var paymentDescription = ""
    public var regularBilling: SummaryItem?
    public var trialBilling: SummaryItem?
    public var automaticReloadBilling: SummaryItem?
    public var deferredBilling: SummaryItem?
    public var billingAgreement: String?
    public var managementURL = ""
    public var tokenNotificationURL: String?
    public var freeCancellationDate: String?
    public var freeCancellationDateTimeZone: String?

    public static let shape = ObjectShape<BillingRequest>(
      "A recurring, automatic reload or deferred payment request: which billing members are set says which.",
      blank: { BillingRequest() },
      [
        .member("paymentDescription", \.paymentDescription),
        .member("regularBilling", \.regularBilling, .optional),
        .member("trialBilling", \.trialBilling, .optional),
        .member("automaticReloadBilling", \.automaticReloadBilling, .optional),
        .member("deferredBilling", \.deferredBilling, .optional),
        .member("billingAgreement", \.billingAgreement, .optional),
        .member("managementURL", \.managementURL),
        .member("tokenNotificationURL", \.tokenNotificationURL, .optional),
        .member("freeCancellationDate", \.freeCancellationDate, .optional, SummaryItem.dateSchema),
        .member("freeCancellationDateTimeZone", \.freeCancellationDateTimeZone, .optional),
      ])
  }

  /// The Apple Pay JS version that introduced each network name (Apple's "Supported networks"
  /// table and the version release notes); names whose version is not documented count as 14.
  static let networkVersions: [String: Int] = [
    "amex": 3, "chinaUnionPay": 3, "discover": 3, "interac": 3, "masterCard": 3, "privateLabel": 3, "visa": 3,
    "jcb": 3, "cartesBancaires": 4, "eftpos": 4, "electron": 4, "maestro": 4, "vPay": 4, "elo": 5, "mada": 5,
    "mir": 11, "girocard": 11, "dankort": 13, "bancomat": 14, "bancontact": 14,
  ]

  public static func run(_ params: Params, context: ServiceContext) -> Result {
    let config = context.config
    let merchant = config.merchant
    let settings = config.paymentRequest
    let state = SheetState(
      items: params.items, shippingMethod: params.shippingMethod, shippingContact: params.shippingContact,
      couponCode: params.couponCode)
    let priced = context.price(state)
    let summary = priced.quote.summaryItems

    var request = PaymentRequest(
      countryCode: merchant.countryCode, currencyCode: config.currency.code,
      merchantCapabilities: merchant.merchantCapabilities, supportedNetworks: merchant.supportedNetworks,
      requiredShippingContactFields: merchant.requiredShippingContactFields.map(\.rawValue),
      requiredBillingContactFields: merchant.requiredBillingContactFields.map(\.rawValue),
      shippingType: settings.shippingType, shippingMethods: context.offers(priced.methods, for: priced.merchandise),
      lineItems: Array(summary.dropLast()), total: summary.last!)
    var version = PaymentRequest.baseVersion
    for network in merchant.supportedNetworks { version = max(version, networkVersions[network] ?? 14) }
    if priced.quote.totalMinor == 0 { version = max(version, 4) }
    if !request.shippingMethods.isEmpty { version = max(version, 12) }  // dateComponentsRange
    if !config.coupons.isEmpty {
      request.supportsCouponCode = true
      request.couponCode = priced.merchandise.coupon?.code
      version = max(version, 12)
    }
    request.applicationData = params.applicationData.map { Data($0.bytes).base64EncodedString() }

    if let line = priced.merchandise.lines.first(where: { $0.billing != nil }), let plan = line.billing {
      let product = config.productsBySKU[line.sku]!
      // The plan's lines as the quote priced them (a cart has one line with a plan).
      let items = summary.filter { $0.timing != nil }
      var billing = BillingRequest(
        paymentDescription: product.description.isEmpty ? product.name : product.description,
        billingAgreement: settings.billingAgreement, managementURL: settings.managementURL ?? "",
        tokenNotificationURL: settings.tokenNotificationURL)
      switch plan.schedule {
      case .recurring(_, _, _, let trial):
        billing.regularBilling = items.last
        if trial != nil { billing.trialBilling = items.first }
        request.recurringPaymentRequest = billing
      case .automaticReload:
        billing.automaticReloadBilling = items[0]
        request.automaticReloadPaymentRequest = billing
      case .deferred(_, let cancellation, let timeZone):
        billing.deferredBilling = items[0]
        billing.freeCancellationDate = cancellation.map(RFC3339.format)
        billing.freeCancellationDateTimeZone = cancellation == nil ? nil : (timeZone ?? "UTC")
        request.deferredPaymentRequest = billing
      }
      version = 14
    }
    return Result(
      minimumVersion: version, paymentRequest: request,
      errors: params.couponCode == nil ? nil : priced.merchandise.errors)
  }
}
