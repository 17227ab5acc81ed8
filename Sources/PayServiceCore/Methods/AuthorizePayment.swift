import Foundation

/// The payment sheet authorized a payment: check contacts and card, reprice from config, and have
/// the gateway issue a single-use charge token bound to this order. No money moves here.
public enum AuthorizePayment: RPCMethod {
  public static let name = "authorizePayment"

  public static let documentation = MethodDescription(
    summary: "The sheet authorized a payment: check it and obtain a single-use charge token.",
    description: """
      Answers PKPaymentAuthorizationResult. Checks the shipping and billing contacts against the \
      configured required fields, the card's network and type, reprices the cart from config (coupon \
      and card adjustment included) and, when everything passes, returns status success with a \
      chargeToken bound to exactly this order and its amount. No money moves: pass the token to \
      processOrder with the same items, shipping method and contacts. Any other status lists the \
      problems as ApplePayErrors. Every successful call issues a new token. A real Apple Pay EC_v1 \
      token (with the applePay config) is verified (signature, certificate chain to the Apple root, \
      signing time), decrypted with the merchant key and checked against the order total and currency; \
      the sandbox network then places an authorization hold that processOrder captures. A token is \
      accepted once; any failed check is status failure with an unknown ApplePayError naming the check.
      """,
    params: [
      MethodDescription.Param("items", required: true, Shapes.items),
      MethodDescription.Param("shippingMethod", required: true, Shapes.shippingMethodIdentifier),
      MethodDescription.Param(
        "payment", required: true,
        .object(
          "The ApplePayPayment the sheet authorized. Other members are ignored.",
          [
            (
              "token",
              .object(
                "The ApplePayPaymentToken.",
                [
                  (
                    "paymentData",
                    .anyOf(
                      """
                      The token's payment data: a sandbox test name such as "tok_visa", or a real Apple Pay \
                      EC_v1 token (its JSON object, or that object's JSON text), verified and decrypted with \
                      the applePay config.
                      """,
                      [.string(minLength: 1), .object([], closed: false)])
                  ),
                  ("paymentMethod", Shapes.paymentMethod(displayNameRequired: true)),
                  ("transactionIdentifier", .string(minLength: 1)),
                ], required: ["paymentData", "paymentMethod", "transactionIdentifier"], closed: false)
            ),
            ("shippingContact", Shapes.contact),
            ("billingContact", Shapes.contact),
          ], required: ["token"], closed: false)),
      MethodDescription.Param("couponCode", required: false, Shapes.couponCode.allowingNull()),
      MethodDescription.Param(
        "paymentMethod", required: false, Shapes.paymentMethod(displayNameRequired: false).allowingNull()),
      MethodDescription.Param(
        "applicationData", required: false,
        .string(
          "The payment request's applicationData (base64); an Apple Pay token's header must carry its SHA-256.",
          pattern: "^[A-Za-z0-9+/]*={0,2}$"
        ).allowingNull()),
    ],
    result: .object(
      [
        ("status", .string(values: Status.allCases.map(\.rawValue))),
        ("errors", Shapes.applePayErrors),
        ("chargeToken", .string("Single-use; present only on success.")),
        ("amount", Shapes.amount),
        ("currencyCode", Shapes.currencyCode),
        ("summaryItems", Shapes.summaryItems),
      ], required: ["status", "errors", "currencyCode", "summaryItems"]),
    errors: MethodDescription.paramErrors + [.storeUnavailable], readOnly: false, idempotent: false,
    failureStatuses: Status.allCases.filter { $0 != .success }.map(\.rawValue))
  public static let runsAsNotification = false
  public static let usesStore = true

  public enum Status: String, Sendable, CaseIterable {
    case success, failure, invalidBillingPostalAddress, invalidShippingPostalAddress, invalidShippingContact
  }

  public struct Params: Sendable {
    public var items: [CartItem]
    public var shippingMethod: String
    public var paymentData: JSONValue
    /// The authorized card (`payment.token.paymentMethod`): what the card checks and the adjustment use.
    public var paymentMethod: PaymentMethod
    public var shippingContact: Contact?
    public var billingContact: Contact?
    public var couponCode: String?
    /// The payment request's `applicationData` (decoded from base64), which an Apple Pay token's
    /// header hashes.
    public var applicationData: [UInt8]?
  }

  public struct Output: JSONRepresentable {
    public var status: Status
    public var errors: [ApplePayError]
    public var chargeToken: String?
    public var amount: String?
    public var currencyCode: String
    public var summaryItems: [SummaryItem]

    public func write(to writer: inout JSONWriter) {
      writer.beginObject()
      writer.member("status", status.rawValue)
      writer.member("errors", errors)
      writer.member("chargeToken", chargeToken)
      writer.member("amount", amount)
      writer.member("currencyCode", currencyCode)
      writer.member("summaryItems", summaryItems)
      writer.endObject()
    }
  }

  public static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> Params? {
    reader.rejectUnknown(
      params, "", allowed: ["items", "shippingMethod", "payment", "couponCode", "paymentMethod", "applicationData"])
    let items = CartItem.read(params["items"], "items", reader: reader, config: context.config)
    let method = context.readShippingMethod(params["shippingMethod"], "shippingMethod", reader: reader, required: true)
    let couponCode = context.readCouponCode(params["couponCode"], "couponCode", reader: reader, required: false)
    let sheetCard = PaymentMethod.read(params["paymentMethod"], "paymentMethod", reader: reader, required: false)
    guard let payment = reader.object(params["payment"], "payment") else { return nil }
    let shipping = Contact.read(payment["shippingContact"], "payment.shippingContact", reader: reader, required: false)
    let billing = Contact.read(payment["billingContact"], "payment.billingContact", reader: reader, required: false)
    guard let token = reader.object(payment["token"], "payment.token") else { return nil }
    var paymentData: JSONValue?
    switch token["paymentData"] {
    case nil: reader.fail("payment.token.paymentData", "is required")
    case .string(let text)? where text.trimmingWhitespaceAndNewlines().first == "{":
      // An Apple Pay token passed on as the JSON text of its paymentData.
      if case .object(let object)? = try? JSONParser.parse(text) {
        paymentData = .object(object)
      } else {
        reader.fail("payment.token.paymentData", "starts with \"{\" but is not the JSON text of an object")
      }
    case .string(let text)? where !text.isEmpty: paymentData = .string(text)
    case .object(let object)?: paymentData = .object(object)
    case let other?: reader.fail("payment.token.paymentData", "must be a non-empty string or an object, got \(other.kindName)")
    }
    _ = reader.string(token["transactionIdentifier"], "payment.token.transactionIdentifier")
    let card = PaymentMethod.read(token["paymentMethod"], "payment.token.paymentMethod", reader: reader, required: true, displayNameRequired: true)
    if let card, let sheetCard, card.network != sheetCard.network || card.type != sheetCard.type {
      reader.fail(
        "paymentMethod",
        "must match payment.token.paymentMethod (the card that was authorized): network \"\(card.network)\", type \"\(card.type.rawValue)\"")
    }
    var applicationData: [UInt8]?
    if let value = params["applicationData"], value != .null {
      if case .string(let text) = value, let data = Data(base64Encoded: text) {
        applicationData = Array(data)
      } else {
        reader.fail("applicationData", "must be base64 text (the payment request's applicationData), got \(value.kindName)")
      }
    }
    guard let items, let method = method ?? nil, let paymentData, let card, reader.errors.isEmpty else { return nil }
    return Params(
      items: items, shippingMethod: method, paymentData: paymentData, paymentMethod: card,
      shippingContact: shipping, billingContact: billing, couponCode: couponCode, applicationData: applicationData)
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Output {
    let config = context.config
    let pricer = context.pricer
    let validator = context.validator
    let merchant = config.merchant
    let region = pricer.region(of: params.shippingContact)
    let offered = pricer.offeredMethods(for: region).first { $0.identifier == params.shippingMethod }

    // 1. Contacts, in status order.
    var shippingAddress: [ApplePayError] = []
    if merchant.requiredShippingContactFields.contains(.postalAddress) {
      shippingAddress = validator.addressErrors(params.shippingContact, role: .shipping, complete: true)
    }
    if shippingAddress.isEmpty && offered == nil {
      let label = config.shippingMethodsByIdentifier[params.shippingMethod]?.label ?? params.shippingMethod
      shippingAddress.append(
        ApplePayError(.addressUnserviceable, .postalAddress, "\(label) isn't available for this address."))
    }
    let shippingPerson = validator.personErrors(
      params.shippingContact, role: .shipping, required: merchant.requiredShippingContactFields)
    var billing: [ApplePayError] = []
    if merchant.requiredBillingContactFields.contains(.postalAddress) {
      billing = validator.addressErrors(params.billingContact, role: .billing, complete: true)
    }
    billing += validator.personErrors(params.billingContact, role: .billing, required: merchant.requiredBillingContactFields)

    // 3. Prices come from config only. An unusable coupon is reported and left out; it never blocks.
    let now = context.clock.now()
    let merchandise = pricer.merchandise(
      items: params.items, couponCode: params.couponCode, paymentMethod: params.paymentMethod, now: now)
    let quote = pricer.quote(merchandise, method: offered, region: region)
    let couponErrors = merchandise.couponError.map { [$0] } ?? []
    func answer(_ status: Status, _ errors: [ApplePayError]) -> Output {
      Output(
        status: status, errors: errors + couponErrors, chargeToken: nil, amount: nil,
        currencyCode: config.currency.code, summaryItems: quote.summaryItems)
    }
    let errors = shippingAddress + shippingPerson + billing
    if !shippingAddress.isEmpty { return answer(.invalidShippingPostalAddress, errors) }
    if !shippingPerson.isEmpty { return answer(.invalidShippingContact, errors) }
    if !billing.isEmpty { return answer(.invalidBillingPostalAddress, errors) }

    // 2. Card network and type.
    if let cardError = merchandise.cardError { return answer(.failure, [cardError]) }

    // 4. A real Apple Pay token: verified, decrypted and submitted to the network for a hold.
    var hold: (authorization: PaymentAuthorization, declineReason: String?)?
    if case .object(let tokenData) = params.paymentData {
      do throws(ApplePayTokenFailure) {
        hold = try applePayHold(tokenData, params: params, totalMinor: quote.totalMinor, context: context, now: now)
      } catch {
        return answer(.failure, [ApplePayError(.unknown, nil, error.message)])
      }
    }

    // 5. A single-use charge token bound to this order and card (and to the hold).
    let binding = OrderBinding(
      items: params.items, shippingMethod: params.shippingMethod, shippingContact: params.shippingContact,
      couponCode: params.couponCode)
    let token: String?
    do {
      token = try context.store.write { transaction -> String? in
        if let hold {
          try transaction.record(hold.authorization, at: RFC3339.format(now))
          if hold.declineReason != nil { return nil }
        }
        return try transaction.issueChargeToken(
          merchant: merchant.identifier, binding: binding.canonical,
          billingContact: params.billingContact.map { JSONWriter.string($0) },
          paymentMethod: JSONWriter.string(params.paymentMethod), amountMinor: quote.totalMinor,
          currencyCode: config.currency.code,
          // A placed hold is approved by the network; otherwise the test name decides the outcome.
          outcome: hold == nil ? SandboxOutcome(paymentData: params.paymentData) : .approved,
          issuedAt: now, ttlSeconds: config.gateway.chargeTokenTTLSeconds,
          authorizationId: hold?.authorization.authorizationId)
      }
    } catch let replay as ApplePayTokenFailure {
      return answer(.failure, [ApplePayError(.unknown, nil, replay.message)])
    }
    guard let token else {  // only a declined hold issues none
      let reason = hold?.declineReason ?? "declined"
      return answer(.failure, [ApplePayError(.unknown, nil, "the card network declined the authorization: \(reason)")])
    }
    return Output(
      status: .success, errors: couponErrors, chargeToken: token, amount: config.format(quote.totalMinor),
      currencyCode: config.currency.code, summaryItems: quote.summaryItems)
  }
}

extension AuthorizePayment {
  /// Verifies and decrypts an Apple Pay token for this order and has the sandbox network place an
  /// authorization hold. The decrypted card data does not outlive this call: only the hold's
  /// network, type, last four digits and Apple's transaction id are kept.
  static func applePayHold(
    _ tokenData: JSONObject, params: Params, totalMinor: Int64, context: ServiceContext, now: Int64
  ) throws(ApplePayTokenFailure) -> (authorization: PaymentAuthorization, declineReason: String?) {
    let config = context.config
    guard let merchant = config.applePay else {
      try ApplePayTokenVerifier.requireVersion(tokenData)
      throw ApplePayTokenFailure(
        .notConfigured,
        """
        this payservice cannot verify Apple Pay tokens: its config has no applePay section (test tokens are \
        strings such as "tok_visa")
        """)
    }
    let payment = try ApplePayTokenVerifier(merchant: merchant).verify(
      tokenData, now: now, totalMinor: totalMinor, currency: config.currency,
      applicationData: params.applicationData)
    let declineReason = SandboxNetwork.declineReason(payment, now: now)
    let authorization = PaymentAuthorization(
      authorizationId: Identifiers.authorizationId(transactionId: payment.transactionId),
      transactionId: payment.transactionId, network: params.paymentMethod.network,
      cardType: params.paymentMethod.type.rawValue, lastFour: payment.lastFour, amountMinor: totalMinor,
      currencyCode: config.currency.code, status: declineReason == nil ? .held : .declined)
    return (authorization, declineReason)
  }
}

/// What a charge token is bound to: the cart, the shipping method, the shipping contact and the
/// coupon code, in a canonical JSON form that is compared byte for byte.
public struct OrderBinding: Equatable, Sendable {
  public var items: [CartItem]
  public var shippingMethod: String
  public var shippingContact: Contact?
  /// Normalized (trimmed, upper-cased); nil for none or an empty code.
  public var couponCode: String?

  public init(items: [CartItem], shippingMethod: String, shippingContact: Contact?, couponCode: String?) {
    self.items = items
    self.shippingMethod = shippingMethod
    self.shippingContact = shippingContact
    let normalized = couponCode.map(Coupon.normalize)
    self.couponCode = normalized?.isEmpty == false ? normalized : nil
  }

  /// The coupon member is present only with a code, so orders without one bind exactly as in version 1.
  public var canonical: String {
    var writer = JSONWriter()
    writer.beginObject()
    writer.member("items", items)
    writer.member("shippingMethod", shippingMethod)
    writer.member("shippingContact", orNull: shippingContact)
    writer.member("couponCode", couponCode)
    writer.endObject()
    return writer.string
  }
}
