/// An error the way Adyen's Checkout API answers one: the `ServiceError` object (`status`,
/// `errorCode`, `message`, `errorType`, and `pspReference` where Adyen gives one) with that HTTP
/// status (CheckoutService-v71.json, components.schemas.ServiceError and its examples).
struct AdyenServiceError: Error, Sendable, Equatable {
  var status: Int
  var errorCode: String
  var message: String
  /// `validation`, `security`, `configuration` or `internal` ("Error codes and messages",
  /// https://docs.adyen.com/development-resources/error-codes).
  var errorType: String
  var pspReference: String? = nil
  /// Extra response headers (`Transient-Error` on an idempotency conflict).
  var headers: [(String, String)] = []

  static func == (lhs: AdyenServiceError, rhs: AdyenServiceError) -> Bool { lhs.body == rhs.body }

  var body: AdyenJSON {
    var members: [(String, AdyenJSON)] = [
      ("status", .int(Int64(status))), ("errorCode", .string(errorCode)), ("message", .string(message)),
      ("errorType", .string(errorType)),
    ]
    if let pspReference { members.append(("pspReference", .string(pspReference))) }
    return .object(members)
  }

  /// 401, the generic-401 example: a missing or wrong `X-API-Key`.
  static let unauthorized = AdyenServiceError(
    status: 401, errorCode: "000", message: "HTTP Status Response - Unauthorized", errorType: "security")

  /// 403 901, the generic-403 example: a `merchantAccount` other than the server's.
  static let invalidMerchantAccount = AdyenServiceError(
    status: 403, errorCode: "901", message: "Invalid Merchant Account", errorType: "security")

  /// 400 702: a body that is not JSON, or a request with fields the endpoint's schema does not have
  /// ("Structure of PaymentRequest contains the following unknown fields: [x]", as Adyen words it).
  static func unexpectedInput(_ message: String) -> AdyenServiceError {
    AdyenServiceError(status: 400, errorCode: "702", message: message, errorType: "validation")
  }

  /// 422, a request validation error (`errorType` `validation`).
  static func validation(_ code: String, _ message: String, _ pspReference: String?) -> AdyenServiceError {
    AdyenServiceError(
      status: 422, errorCode: code, message: message, errorType: "validation", pspReference: pspReference)
  }

  /// 500 before executing (`Fault.serverErrorBeforeExecuting`): Adyen's generic code 000.
  static let internalError = AdyenServiceError(
    status: 500, errorCode: "000", message: "An unknown error occurred", errorType: "internal")

  /// Whether Adyen gives this kind of error a pspReference of its own: its 403, 422 and 500
  /// examples carry one, its 400 and 401 examples do not.
  var carriesReference: Bool { (status == 403 || status == 422 || status == 500) && errorCode != "704" }

  /// 429 (`Fault.rateLimited`): Adyen's "Internal" error page gives code 00_500 with the detail
  /// "too many requests" for a rate limit (https://docs.adyen.com/errors/internal).
  static let tooManyRequests = AdyenServiceError(
    status: 429, errorCode: "00_500", message: "too many requests", errorType: "internal")

  /// 409 704 with `Transient-Error: true`: another request with the key is still being processed
  /// ("API idempotency", https://docs.adyen.com/development-resources/api-idempotency; "HTTP status
  /// codes", https://docs.adyen.com/development-resources/response-handling: 409 Conflict,
  /// "request is already processed or in progress", retry when the transient error header is true).
  static let idempotencyInProgress = AdyenServiceError(
    status: 409, errorCode: "704", message: "request already processed or in progress", errorType: "validation",
    headers: [("Transient-Error", "true")])

  /// 422 704 with `Transient-Error: false`: the key was used for another request (another path or
  /// body). Adyen's page gives code 704 for a key it has seen; the status and header that tell the
  /// client not to retry are this server's reading of it.
  static let idempotencyKeyReused = AdyenServiceError(
    status: 422, errorCode: "704", message: "request already processed or in progress", errorType: "validation",
    headers: [("Transient-Error", "false")])
}

/// The endpoints served, under `/v71`.
enum AdyenEndpoint: Sendable, Equatable {
  case payments
  case captures(String)
  case cancels(String)
  case refunds(String)

  init?(method: String, path: String) {
    let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    guard method == "POST", parts.count >= 3, parts[0].isEmpty, parts[1] == "v71" else { return nil }
    switch Array(parts.dropFirst(2)) {
    case ["payments"]: self = .payments
    case let rest where rest.count == 3 && rest[0] == "payments" && !rest[1].isEmpty:
      switch rest[2] {
      case "captures": self = .captures(rest[1])
      case "cancels": self = .cancels(rest[1])
      case "refunds": self = .refunds(rest[1])
      default: return nil
      }
    default: return nil
    }
  }

  var route: AdyenTestServer.Route {
    switch self {
    case .payments: .payments
    case .captures: .captures
    case .cancels: .cancels
    case .refunds: .refunds
    }
  }

  /// The request schema's name and its properties (CheckoutService-v71.json): a field outside
  /// them is 400 702.
  var schema: (name: String, fields: Set<String>) {
    switch self {
    case .payments: ("PaymentRequest", Self.paymentRequestFields)
    case .captures:
      (
        "PaymentCaptureRequest",
        [
          "amount", "applicationInfo", "enhancedSchemeData", "lineItems", "merchantAccount", "platformChargebackLogic",
          "reference", "splits", "subMerchants",
        ]
      )
    case .cancels: ("PaymentCancelRequest", ["applicationInfo", "enhancedSchemeData", "merchantAccount", "reference"])
    case .refunds:
      (
        "PaymentRefundRequest",
        [
          "amount", "applicationInfo", "capturePspReference", "enhancedSchemeData", "lineItems", "merchantAccount",
          "merchantRefundReason", "reference", "splits", "store",
        ]
      )
    }
  }

  static let paymentRequestFields: Set<String> = [
    "accountInfo", "additionalAmount", "additionalData", "amount", "applicationInfo", "authenticationData",
    "bankAccount", "billingAddress", "browserInfo", "captureDelayHours", "channel", "checkoutAttemptId", "company",
    "conversionId", "countryCode", "dateOfBirth", "dccQuote", "deliverAt", "deliveryAddress", "deliveryDate",
    "deviceFingerprint", "enableOneClick", "enablePayOut", "enableRecurring", "enhancedSchemeData", "entityType",
    "fraudOffset", "fundOrigin", "fundRecipient", "industryUsage", "installments", "lineItems",
    "localizedShopperStatement", "mandate", "mcc", "merchantAccount", "merchantOrderReference",
    "merchantRiskIndicator", "metadata", "mpiData", "order", "orderReference", "origin", "paymentMethod",
    "paymentValidations", "platformChargebackLogic", "recurringExpiry", "recurringFrequency",
    "recurringProcessingModel", "redirectFromIssuerMethod", "redirectToIssuerMethod", "reference", "returnUrl",
    "riskData", "sessionValidity", "shopperConversionId", "shopperEmail", "shopperIP", "shopperInteraction",
    "shopperLocale", "shopperName", "shopperReference", "shopperStatement", "shopperTaxInfo", "socialSecurityNumber",
    "splits", "store", "storePaymentMethod", "subMerchants", "surcharge", "telephoneNumber", "threeDS2RequestData",
    "threeDSAuthenticationOnly", "trustedShopper",
  ]

  /// `paymentMethod`'s properties by type: `ApplePayDetails` and `CardDetails`.
  static let paymentMethodFields: [String: Set<String>] = [
    "applepay": [
      "applePayToken", "checkoutAttemptId", "fundingSource", "recurringDetailReference", "sdkData",
      "storedPaymentMethodId", "type",
    ],
    "scheme": [
      "billingSequenceNumber", "brand", "checkoutAttemptId", "cupsecureplus.smscode", "cvc", "encryptedCard",
      "encryptedCardNumber", "encryptedExpiryMonth", "encryptedExpiryYear", "encryptedPassword",
      "encryptedSecurityCode", "expiryMonth", "expiryYear", "fastlaneData", "fundingSource", "holderName",
      "networkPaymentReference", "number", "recurringDetailReference", "sdkData", "shopperNotificationReference",
      "srcCorrelationId", "srcDigitalCardId", "srcScheme", "srcTokenReference", "storedPaymentMethodId",
      "threeDS2SdkVersion", "type",
    ],
  ]

  /// The fields of `body` outside the schema (top level, `amount`, and `paymentMethod` for its
  /// type), as Adyen lists them: `[a, b]`; nil when there are none.
  func unknownFields(_ body: AdyenJSON) -> String? {
    guard let members = body.members else { return nil }
    var unknown = members.map(\.0).filter { !schema.fields.contains($0) }
    if let amount = body["amount"]?.members {
      unknown += amount.map(\.0).filter { $0 != "currency" && $0 != "value" }.map { "amount." + $0 }
    }
    if self == .payments, let method = body["paymentMethod"],
      let fields = method["type"]?.string
        .flatMap({ Self.paymentMethodFields[$0] }), let methodMembers = method.members
    {
      unknown += methodMembers.map(\.0).filter { !fields.contains($0) }.map { "paymentMethod." + $0 }
    }
    guard !unknown.isEmpty else { return nil }
    return "Structure of \(schema.name) contains the following unknown fields: [\(unknown.joined(separator: ", "))]"
  }
}

/// An `amount` as read from a request: `currency` three capital letters, `value` a whole number of
/// minor units, at least 0 for a payment (0 is a zero-value authorisation) and at least 1 for a
/// capture or refund.
struct AdyenAmount: Sendable, Equatable {
  var currency: String
  var value: Int64

  var json: AdyenJSON { .object([("currency", .string(currency)), ("value", .int(value))]) }

  /// Nil with 422 100 when absent, 422 137 "Invalid amount specified" when malformed
  /// ("Error codes and messages", https://docs.adyen.com/development-resources/error-codes).
  static func read(_ json: AdyenJSON?, minimum: Int64) -> Result<AdyenAmount, AdyenServiceError> {
    guard let json else {
      return .failure(.validation("100", "Required object 'amount' is not provided", nil))
    }
    guard let currency = json["currency"]?.string, currency.count == 3,
      currency.allSatisfy({ $0.isASCII && $0.isUppercase }), let value = json["value"]?.int64, value >= minimum
    else { return .failure(.validation("137", "Invalid amount specified", nil)) }
    return .success(AdyenAmount(currency: currency, value: value))
  }
}
