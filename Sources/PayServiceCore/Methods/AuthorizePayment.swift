import Foundation

/// The payment sheet authorized a payment: check contacts and card, reprice from config, and have
/// the gateway issue a single-use charge token bound to this order. No money moves here.
public enum AuthorizePayment: RPCMethod {
  public static let name = "authorizePayment"

  public static let documentation = MethodDocumentation(
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
      accepted once; any failed check is status failure with an unknown ApplePayError naming the check. \
      With gateway.kind stripe, paymentData is a Stripe tok_/pm_ from Stripe's SDK, or the Apple Pay token \
      itself (object or JSON text), which Stripe makes a tok_ of (POST /v1/tokens with pk_token; payservice \
      neither verifies nor decrypts it): Stripe's card must be the claimed card, and Stripe declining, \
      refusing or not answering is status failure naming why.
      """,
    errors: [.storeUnavailable], readOnly: false, idempotent: false)
  public static let runsAsNotification = false
  public static let usesStore = true

  public enum Status: String, Sendable, WireEnum {
    case success, failure, invalidBillingPostalAddress, invalidShippingPostalAddress, invalidShippingContact
  }

  public struct Params: Sendable {
    /// The ApplePayPaymentToken the sheet authorized.
    public struct Token: Sendable, WireObject {
      /// A sandbox test name (a string), or a real Apple Pay EC_v1 token (an object).
      public var paymentData: JSONValue = .null
      /// The authorized card: what the card checks and the adjustment use.
      public var paymentMethod = PaymentMethod(network: "", type: .credit)
      public var transactionIdentifier = ""

      public static let shape = ObjectShape<Token>(
        "The ApplePayPaymentToken.", closed: false, blank: { Token() },
        [
          .member(
            "paymentData", \.paymentData, .required,
            .anyOf(
              """
              The token's payment data: a sandbox test name such as "tok_visa", or a real Apple Pay \
              EC_v1 token (its JSON object, or that object's JSON text), verified and decrypted with \
              the applePay config. With gateway.kind stripe: a Stripe tok_ or pm_, or the Apple Pay \
              token, which Stripe makes a token of.
              """,
              [.string(minLength: 1), .object([], closed: false)]),
            read: readPaymentData),
          .member(
            "paymentMethod", \.paymentMethod, .required, PaymentMethod.authorizedShape.schema,
            read: { value, path, reader in PaymentMethod.authorizedShape.read(value, at: path, reader: reader) }),
          .member("transactionIdentifier", \.transactionIdentifier, .required, .string(minLength: 1)),
        ], readingOrder: ["paymentData", "transactionIdentifier", "paymentMethod"])

      /// A test name, an EC_v1 token object, or that object's JSON text.
      static let readPaymentData: MemberReader<JSONValue> = { value, path, reader in
        if let gateway = reader.context?.gatewayCalls?.gateway {
          // An Apple Pay token (an object, or its JSON text) goes to the gateway as it is; anything
          // else must be a form of the gateway's own.
          switch value {
          case .object: return value
          case .string(let text) where text.trimmingWhitespaceAndNewlines().first == "{": break
          default:
            var text = ""
            if case .string(let string) = value { text = string }
            guard let problem = gateway.paymentDataProblem(text) else { return value }
            reader.fail(path(), problem)
            return nil
          }
        }
        switch value {
        case .string(let text) where text.trimmingWhitespaceAndNewlines().first == "{":
          if case .object(let object)? = try? JSONParser.parse(text) { return .object(object) }
          reader.fail(path(), "starts with \"{\" but is not the JSON text of an object")
        case .string(let text) where !text.isEmpty:
          // The sandbox's test card decides the card's network and type (`CardNetworks.sandboxCard`).
          guard CardNetworks.sandboxCard(text) != nil else {
            reader.fail(
              path(),
              "is not a sandbox test card: use one such as \(CardNetworks.sandboxExamples) (tok_NETWORK or tok_NETWORK_TYPE), or a real Apple Pay token (an object)")
            return nil
          }
          return .string(text)
        case .object: return value
        default: reader.fail(path(), "must be a non-empty string or an object, got \(value.kindName)")
        }
        return nil
      }
    }

    /// The ApplePayPayment the sheet authorized.
    public struct Payment: Sendable, WireObject {
      public var token = Token()
      public var shippingContact: Contact?
      public var billingContact: Contact?

      public static let shape = ObjectShape<Payment>(
        "The ApplePayPayment the sheet authorized. Other members are ignored.", closed: false, blank: { Payment() },
        [
          .member("token", \.token),
          .member("shippingContact", \.shippingContact, .optional),
          .member("billingContact", \.billingContact, .optional),
        ])
    }

    public var items: [CartItem] = []
    public var shippingMethod = ""
    public var payment = Payment()
    public var couponCode: String?
    /// The card the sheet showed, when sent: it must be the authorized one.
    public var sheetPaymentMethod: PaymentMethod?
    /// The payment request's `applicationData`, which an Apple Pay token's header hashes.
    public var applicationData: Base64Data?

    public var paymentData: JSONValue { payment.token.paymentData }
    /// The authorized card (`payment.token.paymentMethod`).
    public var paymentMethod: PaymentMethod { payment.token.paymentMethod }
    public var shippingContact: Contact? { payment.shippingContact }
    public var billingContact: Contact? { payment.billingContact }
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member("items", \.items, .required, CartItem.cartSchema, read: CartItem.readCart),
      .member(
        "shippingMethod", \.shippingMethod, .required, Shapes.shippingMethodIdentifier,
        read: ShippingMethod.readIdentifier),
      .member("payment", \.payment),
      .member("couponCode", \.couponCode, .optionalOrNull, Shapes.couponCode, read: Coupon.readCode),
      .member("paymentMethod", \.sheetPaymentMethod, .optionalOrNull),
      .member(
        "applicationData", \.applicationData, .optionalOrNull,
        .string(
          "The payment request's applicationData (base64); an Apple Pay token's header must carry its SHA-256.",
          pattern: "^[A-Za-z0-9+/]*={0,2}$")),
    ],
    check: { params, reader in
      let card = params.paymentMethod
      if let sheetCard = params.sheetPaymentMethod, card.network != sheetCard.network || card.type != sheetCard.type {
        reader.fail(
          "paymentMethod",
          "must match payment.token.paymentMethod (the card that was authorized): network \"\(card.network)\", type \"\(card.type.rawValue)\"")
      }
    })

  public struct Result: MethodResult, WireObject {
    public var status = Status.success
    public var errors: [ApplePayError] = []
    public var chargeToken: String?
    public var amount: String?
    public var currencyCode = ""
    public var summaryItems: [SummaryItem] = []
    public var taxBreakdown: [TaxBreakdownItem]?
    public var orderDetails: OrderDetails?

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member("status", \.status), .member("errors", \.errors),
        .member("chargeToken", \.chargeToken, .optional, .string("Single-use; present only on success.")),
        .member("amount", \.amount, .optional, Shapes.amount),
        .member("currencyCode", \.currencyCode, .required, Shapes.currencyCode),
        .member("summaryItems", \.summaryItems, .required, Shapes.summaryItems),
        .member("taxBreakdown", \.taxBreakdown, .optional, TaxBreakdownItem.listSchema),
        .member("orderDetails", \.orderDetails, .optional),
      ])

    public var failure: ResultFailure? {
      guard status != .success else { return nil }
      return ResultFailure(
        status: status.rawValue,
        lines: errors.map { error in (error.contactField.map { "\($0.rawValue): " } ?? "") + error.message })
    }
  }

  /// Checks in the order the sheet's statuses rank them: the contacts, then the card, then a real
  /// token's verification and hold, and only then issues a charge token.
  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let config = context.config
    let pricer = context.pricer
    let region = pricer.region(of: params.shippingContact)
    let offered = pricer.offeredMethods(for: region).first { $0.identifier == params.shippingMethod }
    // Prices come from config only. An unusable coupon is reported and left out; it never blocks.
    let now = context.clock.now()
    let merchandise = pricer.merchandise(
      items: params.items, couponCode: params.couponCode, paymentMethod: params.paymentMethod, now: now)
    let quote = pricer.quote(merchandise, method: offered, region: region)
    let couponErrors = merchandise.couponError.map { [$0] } ?? []
    func answer(_ status: Status, _ errors: [ApplePayError]) -> Result {
      Result(
        status: status, errors: errors + couponErrors, currencyCode: config.currency.code,
        summaryItems: quote.summaryItems, taxBreakdown: quote.taxBreakdownItems(config))
    }

    if let problems = contactProblems(params, offered: offered, context: context) {
      return answer(problems.status, problems.errors)
    }
    if case .string(let name) = params.paymentData, context.gatewayCalls == nil, let card = CardNetworks.sandboxCard(name) {
      let evidence = CardEvidence(network: card.network, type: card.type, source: "the sandbox test card \(name)")
      if let problem = claimProblem(params, evidence: evidence, context: context, now: now) {
        return answer(.failure, [ApplePayError(.unknown, nil, problem)])
      }
    }
    // With a remote gateway, what it charges: its own token or PaymentMethod as sent, or the token
    // it makes from an Apple Pay token.
    var gatewayPaymentData: String?
    if let calls = context.gatewayCalls {
      switch params.paymentData {
      case .string(let data):
        if let problem = gatewayCardProblem(data, params: params, calls: calls, context: context, now: now) {
          return answer(.failure, [ApplePayError(.unknown, nil, problem)])
        }
        gatewayPaymentData = data
      case .object(let tokenData):
        switch try gatewayToken(tokenData, params: params, calls: calls, context: context, now: now) {
        case .token(let id): gatewayPaymentData = id
        case .problem(let problem): return answer(.failure, [ApplePayError(.unknown, nil, problem)])
        }
      default: break
      }
    }
    if let cardError = merchandise.cardError { return answer(.failure, [cardError]) }
    var hold: ApplePayHold?
    // With a remote gateway, the gateway holds the processing certificate and decrypts the token
    // (above); the applePay section, if any, is not used for it.
    if case .object(let tokenData) = params.paymentData, context.gatewayCalls == nil {
      let identifiers = try context.identifiers
      do throws(ApplePayTokenFailure) {
        hold = try applePayHold(
          tokenData, params: params, totalMinor: quote.totalMinor, context: context, identifiers: identifiers, now: now)
      } catch {
        return answer(.failure, [ApplePayError(.unknown, nil, error.message)])
      }
    }
    let issued: (token: String, walletOrderToken: String?)?
    do {
      issued = try issueChargeToken(
        params, quote: quote, hold: hold, gatewayPaymentData: gatewayPaymentData, context: context, now: now)
    } catch let replay as ApplePayTokenFailure {
      return answer(.failure, [ApplePayError(.unknown, nil, replay.message)])
    }
    guard let issued else {  // only a declined hold issues none
      let reason = hold?.declineReason ?? "declined"
      return answer(.failure, [ApplePayError(.unknown, nil, "the card network declined the authorization: \(reason)")])
    }
    var orderDetails: OrderDetails?
    if let wallet = config.walletOrders, let authenticationToken = issued.walletOrderToken {
      orderDetails = OrderDetails(
        orderTypeIdentifier: wallet.orderTypeIdentifier, orderIdentifier: try context.identifiers.orderId(token: issued.token),
        webServiceURL: wallet.webServiceURL, authenticationToken: authenticationToken)
    }
    return Result(
      status: .success, errors: couponErrors, chargeToken: issued.token, amount: config.format(quote.totalMinor),
      currencyCode: config.currency.code, summaryItems: quote.summaryItems, taxBreakdown: quote.taxBreakdownItems(config),
      orderDetails: orderDetails)
  }

  /// `ApplePayPaymentOrderDetails`: where Apple Wallet fetches and tracks the order this payment
  /// makes (pass it to `completePayment`). `orderIdentifier` is the order processOrder records.
  public struct OrderDetails: Sendable, WireObject {
    public var orderTypeIdentifier = ""
    public var orderIdentifier = ""
    public var webServiceURL = ""
    public var authenticationToken = ""

    public static let shape = ObjectShape<OrderDetails>(
      "ApplePayPaymentOrderDetails for completePayment (Wallet order tracking).", blank: { OrderDetails() },
      [
        .member("orderTypeIdentifier", \.orderTypeIdentifier), .member("orderIdentifier", \.orderIdentifier),
        .member("webServiceURL", \.webServiceURL),
        .member(
          "authenticationToken", \.authenticationToken,
          .string("The secret the Wallet order web service authenticates this order's requests with.")),
      ])
  }

  /// A new Wallet order authentication token for the order `chargeToken` pays for: 32 random bytes
  /// as hex. With the clock pinned (`--now`, tests and replays only), it is derived from the
  /// charge token instead, so that transcripts repeat byte for byte.
  static func walletOrderToken(chargeToken: String, clock: ServiceClock, identifiers: Identifiers) -> String {
    if clock.pinned != nil { return identifiers.walletOrderToken(chargeToken: chargeToken) }
    return Hex.encode(IdentifierKey.randomBytes(32))
  }

  /// Nil when the card the request claims (`payment.token.paymentMethod`) is the card the payment
  /// shows; else why not, naming both. The claim prices the card (its adjustment), so it must be
  /// what the payment proves: the same network, and the same type where the payment has one. A
  /// domestic network co-badged on the brand a card number shows (`cartesBancaires` on a Visa
  /// number) cannot be proved from the number: it is taken when it prices the cart exactly as the
  /// brand does, and refused when it would change the price.
  static func claimProblem(_ params: Params, evidence: CardEvidence, context: ServiceContext, now: Int64) -> String? {
    let claim = params.paymentMethod
    let claimed = claim.recorded
    let typeAgrees = evidence.type.map { $0 == claimed.type } ?? true
    if claimed.network == evidence.network && typeAgrees { return nil }
    let shown = evidence.type.map { "network and type are \(evidence.network) \($0.rawValue)" } ?? "network is \(evidence.network)"
    let said = evidence.type == nil ? claim.network : "\(claim.network) \(claim.type.rawValue)"
    if typeAgrees, evidence.allowsCoBadges, CardNetworks.coBadged[evidence.network]?.contains(claimed.network) == true {
      let pricer = context.pricer
      let asClaimed = pricer.merchandise(
        items: params.items, couponCode: params.couponCode, paymentMethod: claimed, now: now)
      let asShown = pricer.merchandise(
        items: params.items, couponCode: params.couponCode, paymentMethod: evidence.card(claimedType: claimed.type),
        now: now)
      if asClaimed.adjustmentMinor == asShown.adjustmentMinor && asClaimed.adjustment?.label == asShown.adjustment?.label {
        return nil
      }
      return """
        the card's \(shown) (by \(evidence.source)); payservice cannot confirm \(said) from it, and \(said) is \
        priced differently
        """
    }
    return "the card's \(shown) (by \(evidence.source)), but payment.token.paymentMethod says \(said)"
  }

  /// Nil when the remote gateway's record of the payment's card (Stripe's `card.brand` and
  /// `card.funding`) agrees with the claimed card; else why not, or why it could not be read. A
  /// brand Apple Pay has no network for (Diners Club) leaves the claimed network as it is.
  static func gatewayCardProblem(
    _ paymentData: String, params: Params, calls: GatewayCalls, context: ServiceContext, now: Int64
  ) -> String? {
    let name = calls.gateway.name
    switch calls.run({ await $0.card(of: paymentData) }) {
    case .succeeded(let card):
      let evidence = CardEvidence(
        network: card.network ?? params.paymentMethod.network, type: card.type,
        source: "\(name)'s record of \(paymentData), brand \(card.brand)")
      return claimProblem(params, evidence: evidence, context: context, now: now)
    case .declined(let decline): return "\(name) declined the payment data: \(decline.message)"
    case .refused(let refusal): return "\(name) refused to show the payment's card (\(refusal.type)): \(refusal.message)"
    case .unanswered(let reason): return "\(name) did not answer (\(reason)); authorize again"
    case .accepted: return "\(name) did not show the payment's card; authorize again"
    }
  }

  /// What a remote gateway made of an Apple Pay token.
  enum GatewayTokenOutcome: Equatable {
    /// Its token (`tok_…`), whose card agrees with the claimed card.
    case token(String)
    /// Why there is none, for the buyer: no key, no card data.
    case problem(String)
  }

  /// Has the remote gateway turn the Apple Pay token into its own token (Stripe's `POST /v1/tokens`
  /// with `pk_token`), under an idempotency key from the merchant and Apple's transaction
  /// identifier, so that this authorization sent again makes no second token. The gateway decrypts
  /// the token; its record of the card (`card.brand`, `card.funding`) must agree with the claimed
  /// card, as for a token the device's SDK made (`gatewayCardProblem`).
  static func gatewayToken(
    _ tokenData: JSONObject, params: Params, calls: GatewayCalls, context: ServiceContext, now: Int64
  ) throws -> GatewayTokenOutcome {
    let name = calls.gateway.name
    let key = try context.identifiers.tokenIdempotencyKey(
      merchant: context.config.merchant.identifier, transactionIdentifier: params.payment.token.transactionIdentifier)
    let request = ApplePayTokenization(
      paymentData: JSONWriter.string(JSONValue.object(tokenData)), displayName: params.paymentMethod.displayName,
      network: params.paymentMethod.network, transactionIdentifier: params.payment.token.transactionIdentifier,
      idempotencyKey: key)
    switch calls.start(key: key, { await $0.tokenize(applePayToken: request) }).wait() {
    case .succeeded(let token):
      let evidence = CardEvidence(
        network: token.card.network ?? params.paymentMethod.network, type: token.card.type,
        source: "\(name)'s token \(token.label) from the Apple Pay payment, brand \(token.card.brand)")
      if let problem = claimProblem(params, evidence: evidence, context: context, now: now) { return .problem(problem) }
      return .token(token.id)
    case .declined(let decline): return .problem("\(name) declined the Apple Pay payment: \(decline.message)")
    case .refused(let refusal):
      return .problem("\(name) could not use the Apple Pay payment (\(refusal.type)): \(refusal.message)")
    case .unanswered(let reason): return .problem("\(name) did not answer (\(reason)); authorize again")
    case .accepted: return .problem("\(name) did not make a token of the Apple Pay payment; authorize again")
    }
  }

  /// The contacts' problems with the status they give (shipping address, shipping person, billing,
  /// in that order of precedence), all of them listed; nil when there are none.
  static func contactProblems(_ params: Params, offered: ShippingMethod?, context: ServiceContext)
    -> (status: Status, errors: [ApplePayError])?
  {
    let config = context.config
    let validator = context.validator
    let merchant = config.merchant
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
    let errors = shippingAddress + shippingPerson + billing
    if !shippingAddress.isEmpty { return (.invalidShippingPostalAddress, errors) }
    if !shippingPerson.isEmpty { return (.invalidShippingContact, errors) }
    if !billing.isEmpty { return (.invalidBillingPostalAddress, errors) }
    return nil
  }

  /// Records the hold (if any) and issues a single-use charge token bound to this order and card;
  /// nil when the network declined the hold.
  static func issueChargeToken(
    _ params: Params, quote: Pricer.Quote, hold: ApplePayHold?,
    gatewayPaymentData: String?, context: ServiceContext, now: Int64
  ) throws -> (token: String, walletOrderToken: String?)? {
    let config = context.config
    let binding = OrderBinding(
      items: params.items, shippingMethod: params.shippingMethod, shippingContact: params.shippingContact,
      couponCode: params.couponCode)
    let identifiers = try context.identifiers
    let walletToken: ((String) -> String)? =
      config.walletOrders == nil
      ? nil : { [clock = context.clock] in walletOrderToken(chargeToken: $0, clock: clock, identifiers: identifiers) }
    let make = NewChargeToken.maker(
      identifiers: identifiers, merchant: config.merchant.identifier, binding: binding, billingContact: params.billingContact,
      paymentMethod: params.paymentMethod, amountMinor: quote.totalMinor, currencyCode: config.currency.code,
      // A placed hold is approved by the network; otherwise the test name decides the outcome.
      outcome: hold == nil && context.gatewayCalls == nil ? SandboxOutcome(paymentData: params.paymentData) : .approved,
      issuedAt: now, ttlSeconds: config.gateway.chargeTokenTTLSeconds, authorizationId: hold?.authorization.authorizationId,
      // A remote gateway charges its token or PaymentMethod (checked above).
      gatewayPaymentData: context.gatewayCalls == nil ? nil : gatewayPaymentData, walletOrderToken: walletToken)
    // The merchant token goes with the authorization it came with, ahead of the token's issue (a
    // replay's second record writes nothing), for the agreement processOrder makes.
    if let hold, hold.declineReason == nil, let merchantToken = hold.merchantToken {
      try context.store.write { transaction in
        try transaction.insertMerchantTokenHold(
          authorizationId: hold.authorization.authorizationId, merchantTokenIdentifier: merchantToken.identifier,
          card: merchantToken.card.map { JSONWriter.string($0) })
      }
    }
    let token = try context.store.issue(TokenIssue(hold: hold?.authorization, issuedAt: now, make: make))
    return token.map { ($0.token, $0.walletOrderToken) }
  }
}

extension AuthorizePayment {
  /// Verifies and decrypts an Apple Pay token for this order and has the sandbox network place an
  /// authorization hold. The decrypted card data does not outlive this call: only the hold's
  /// network, type, last four digits and Apple's transaction id are kept.
  static func applePayHold(
    _ tokenData: JSONObject, params: Params, totalMinor: Int64, context: ServiceContext, identifiers: Identifiers,
    now: Int64
  ) throws(ApplePayTokenFailure) -> ApplePayHold {
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
      applicationData: params.applicationData?.bytes)
    // The card number shows the card's brand: the claimed network must agree (`claimProblem`).
    if let brand = CardNetworks.brand(ofCardNumber: payment.accountNumber) {
      let evidence = CardEvidence(
        network: brand, type: nil, source: "the card number in the payment data", allowsCoBadges: true)
      if let problem = claimProblem(params, evidence: evidence, context: context, now: now) {
        throw ApplePayTokenFailure(.paymentData, problem)
      }
    }
    // EMV payments (China UnionPay) only where the merchant offers them; the token stays unused.
    if payment.paymentDataType == "EMV" && !config.merchant.merchantCapabilities.contains("supportsEMV") {
      throw ApplePayTokenFailure(
        .paymentData, "this merchant does not take EMV payments (China UnionPay): its merchantCapabilities lack supportsEMV")
    }
    let declineReason = SandboxNetwork.declineReason(payment, now: now)
    let authorization = PaymentAuthorization(
      authorizationId: identifiers.authorizationId(transactionId: payment.transactionId),
      transactionId: payment.transactionId, network: params.paymentMethod.network,
      cardType: params.paymentMethod.type.rawValue, lastFour: payment.lastFour, amountMinor: totalMinor,
      currencyCode: config.currency.code, status: declineReason == nil ? .held : .declined)
    return ApplePayHold(
      authorization: authorization, declineReason: declineReason,
      merchantToken: payment.merchantTokenIdentifier.map { ($0, payment.merchantTokenCard) })
  }

  /// What a decrypted Apple Pay token left: the hold, the network's refusal if any, and the
  /// merchant token (MPAN) a recurring, deferred or automatic reload request brought.
  struct ApplePayHold {
    var authorization: PaymentAuthorization
    var declineReason: String?
    var merchantToken: (identifier: String, card: MerchantTokenCard?)?
  }
}

