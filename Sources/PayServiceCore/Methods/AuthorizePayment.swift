/// The payment sheet authorized a payment: check contacts and card, reprice from config, and have
/// the gateway issue a single-use charge token bound to this order. No money moves here.
public enum AuthorizePayment: RPCMethod {
  public static let name = "authorizePayment"
  public static let runsAsNotification = false

  public enum Status: String, Sendable, CaseIterable {
    case success, failure, invalidBillingPostalAddress, invalidShippingPostalAddress, invalidShippingContact
  }

  public enum CardType: String, Sendable, CaseIterable {
    case debit, credit, prepaid, store, eMoney
  }

  public struct Params: Sendable {
    public var items: [CartItem]
    public var shippingMethod: String
    public var paymentData: JSONValue
    public var network: String
    public var cardType: CardType
    public var shippingContact: Contact?
    public var billingContact: Contact?
  }

  public struct Output: JSONRepresentable {
    public var status: Status
    public var errors: [ApplePayError]
    public var chargeToken: String?
    public var amount: String?
    public var currencyCode: String
    public var summaryItems: [SummaryItem]

    public var json: JSONValue {
      var object = JSONObjectBuilder()
      object.set("status", status.rawValue)
      object.set("errors", errors.json)
      object.set("chargeToken", chargeToken)
      object.set("amount", amount)
      object.set("currencyCode", currencyCode)
      object.set("summaryItems", summaryItems.json)
      return object.value
    }
  }

  public static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> Params? {
    reader.rejectUnknown(params, "", allowed: ["items", "shippingMethod", "payment"])
    let items = CartItem.read(params["items"], "items", reader: reader, config: context.config)
    let method = context.readShippingMethod(params["shippingMethod"], "shippingMethod", reader: reader, required: true)
    guard let payment = reader.object(params["payment"], "payment") else { return nil }
    let shipping = Contact.read(payment["shippingContact"], "payment.shippingContact", reader: reader, required: false)
    let billing = Contact.read(payment["billingContact"], "payment.billingContact", reader: reader, required: false)
    guard let token = reader.object(payment["token"], "payment.token") else { return nil }
    var paymentData: JSONValue?
    switch token["paymentData"] {
    case nil: reader.fail("payment.token.paymentData", "is required")
    case .string(let text)? where !text.isEmpty: paymentData = .string(text)
    case .object(let object)?: paymentData = .object(object)
    case let other?: reader.fail("payment.token.paymentData", "must be a non-empty string or an object, got \(other.kindName)")
    }
    _ = reader.string(token["transactionIdentifier"], "payment.token.transactionIdentifier")
    var network: String?
    var cardType: CardType?
    if let method = reader.object(token["paymentMethod"], "payment.token.paymentMethod") {
      let path = "payment.token.paymentMethod"
      _ = reader.string(method["displayName"], "\(path).displayName", nonEmpty: false)
      network = reader.string(method["network"], "\(path).network")
      if let type = reader.string(method["type"], "\(path).type") {
        cardType = CardType(rawValue: type)
        if cardType == nil {
          reader.fail(
            "\(path).type", "must be one of \(CardType.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(type)\"")
        }
      }
    }
    guard let items, let method = method ?? nil, let paymentData, let network, let cardType else { return nil }
    return Params(
      items: items, shippingMethod: method, paymentData: paymentData, network: network, cardType: cardType,
      shippingContact: shipping, billingContact: billing)
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

    // 3. Prices come from config only.
    let quote = pricer.quote(items: params.items, method: offered, region: region)
    func answer(_ status: Status, _ errors: [ApplePayError]) -> Output {
      Output(
        status: status, errors: errors, chargeToken: nil, amount: nil, currencyCode: config.currency.code,
        summaryItems: quote.summaryItems)
    }
    let errors = shippingAddress + shippingPerson + billing
    if !shippingAddress.isEmpty { return answer(.invalidShippingPostalAddress, errors) }
    if !shippingPerson.isEmpty { return answer(.invalidShippingContact, errors) }
    if !billing.isEmpty { return answer(.invalidBillingPostalAddress, errors) }

    // 2. Card network and type.
    if !merchant.supportedNetworks.contains(where: { $0.lowercased() == params.network.lowercased() }) {
      return answer(
        .failure,
        [ApplePayError(.unknown, nil, "The \(params.network) network is not accepted. Use another card.")])
    }
    if let rule = requiredCapability(for: params.cardType), merchant.merchantCapabilities.contains(where: isTypeFilter),
      !merchant.merchantCapabilities.contains(rule)
    {
      return answer(
        .failure, [ApplePayError(.unknown, nil, "\(params.cardType.rawValue) cards are not accepted. Use another card.")])
    }

    // 4. A single-use charge token bound to this order.
    let binding = OrderBinding(items: params.items, shippingMethod: params.shippingMethod, shippingContact: params.shippingContact)
    let token = try context.store.issueChargeToken(
      merchant: merchant.identifier, binding: binding.canonical,
      billingContact: params.billingContact.map { JSONWriter.string($0.json) }, amountMinor: quote.totalMinor,
      currencyCode: config.currency.code, outcome: SandboxOutcome(paymentData: params.paymentData),
      issuedAt: context.clock.now(), ttlSeconds: config.gateway.chargeTokenTTLSeconds)
    return Output(
      status: .success, errors: [], chargeToken: token, amount: config.format(quote.totalMinor),
      currencyCode: config.currency.code, summaryItems: quote.summaryItems)
  }

  static func isTypeFilter(_ capability: String) -> Bool {
    capability == "supportsCredit" || capability == "supportsDebit"
  }

  /// The capability a card type needs when the merchant filters by type: credit needs supportsCredit;
  /// debit and prepaid need supportsDebit; store and eMoney cards are not filtered.
  static func requiredCapability(for type: CardType) -> String? {
    switch type {
    case .credit: return "supportsCredit"
    case .debit, .prepaid: return "supportsDebit"
    case .store, .eMoney: return nil
    }
  }
}

/// What a charge token is bound to: the cart, the shipping method and the shipping contact, in a
/// canonical JSON form that is compared byte for byte.
public struct OrderBinding: Equatable, Sendable {
  public var items: [CartItem]
  public var shippingMethod: String
  public var shippingContact: Contact?

  public var canonical: String {
    var object = JSONObjectBuilder()
    object.set("items", items.json)
    object.set("shippingMethod", shippingMethod)
    object.set("shippingContact", shippingContact?.json ?? .null)
    return JSONWriter.string(object.value)
  }
}
