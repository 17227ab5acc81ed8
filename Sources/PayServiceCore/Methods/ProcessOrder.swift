/// Charges an authorized payment, decrements stock and records the order, all in one store
/// transaction; the answer is written only after the commit. A charge token is used at most once:
/// the identical request again gets the stored answer, a different one gets -32002.
public enum ProcessOrder: RPCMethod {
  public static let name = "processOrder"

  public static let documentation = MethodDocumentation(
    summary: "Charge an authorized payment, decrement stock and record the order.",
    description: """
      Charges the payment authorized by authorizePayment and records the order, in one durable \
      transaction. Send the chargeToken with the same items, shippingMethod, shippingContact (and \
      couponCode and card, when the authorization had them) and the authorized amount and currencyCode. \
      status succeeded returns the order: paid, or authorized (the money held until a back-office \
      captureOrder) when the shop captures manually; status failed gives a failureCode: invalid_charge_token, \
      amount_mismatch and out_of_stock leave the token unused (fix the request and send it again), \
      card_declined, expired_card and processing_error consume it. Sending the identical request again \
      returns the stored answer without charging twice; a different order with a used token is error \
      -32002.
      """,
    errors: [.storeUnavailable, .chargeTokenConflict], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true
  public static let commitsInGroups = true

  public enum FailureCode: String, Sendable, WireEnum {
    case invalidChargeToken = "invalid_charge_token"
    case amountMismatch = "amount_mismatch"
    case outOfStock = "out_of_stock"
    case cardDeclined = "card_declined"
    case expiredCard = "expired_card"
    case processingError = "processing_error"

    /// Whether a failure with this code uses the token up: a charge was attempted. The others leave
    /// it unused, so the buyer can fix the request and send it again.
    var consumesToken: Bool {
      switch self {
      case .invalidChargeToken, .amountMismatch, .outOfStock: return false
      case .cardDeclined, .expiredCard, .processingError: return true
      }
    }
  }

  public struct Params: Sendable {
    public var chargeToken = ""
    public var items: [CartItem] = []
    public var shippingMethod = ""
    public var shippingContact = Contact()
    public var billingContact: Contact?
    public var amount = Amount(minor: 0)
    public var currencyCode = ""
    public var couponCode: String?
    /// When given, must be the card the token was authorized with; the token's card prices the order.
    public var paymentMethod: PaymentMethod?

    public var binding: OrderBinding {
      OrderBinding(items: items, shippingMethod: shippingMethod, shippingContact: shippingContact, couponCode: couponCode)
    }
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member("chargeToken", \.chargeToken, .required, .string("From authorizePayment.", minLength: 1)),
      .member("items", \.items, .required, CartItem.cartSchema, read: CartItem.readCart),
      .member(
        "shippingMethod", \.shippingMethod, .required, Shapes.shippingMethodIdentifier,
        read: ShippingMethod.readIdentifier),
      .member("shippingContact", \.shippingContact),
      .member("billingContact", \.billingContact, .optional),
      .member("amount", \.amount),
      .member("currencyCode", \.currencyCode, .required, .string("The merchant currency.", minLength: 1)),
      .member("couponCode", \.couponCode, .optionalOrNull, Shapes.couponCode, read: Coupon.readCode),
      .member("paymentMethod", \.paymentMethod, .optionalOrNull),
    ])

  /// A charged order: what it cost and the order recorded.
  public struct Succeeded: Equatable, Sendable, WireObject {
    public var orderId = ""
    public var chargeId = ""
    public var amount = ""
    public var currencyCode = ""
    public var order = OrderDocument()

    public static let shape = ObjectShape<Succeeded>(
      blank: { Succeeded() },
      [
        .constant("status", "succeeded"), .member("orderId", \.orderId), .member("chargeId", \.chargeId),
        .member("amount", \.amount, .required, Shapes.amount),
        .member("currencyCode", \.currencyCode, .required, Shapes.currencyCode),
        .member("order", \.order),
      ])
  }

  /// A sku the order wants more of than is on hand.
  public struct Shortage: Equatable, Sendable, WireObject {
    public var sku = ""
    public var requested = 1
    public var available = 0

    public static let shape = ObjectShape<Shortage>(
      blank: { Shortage() },
      [
        .member("sku", \.sku), .member("requested", \.requested, .required, .integer(minimum: 1)),
        .member("available", \.available, .required, .integer(minimum: 0)),
      ])
  }

  /// An order that did not go through, and why.
  public struct Failed: Equatable, Sendable, WireObject, FailureReporting {
    public var failureCode = FailureCode.processingError
    public var declineCode: String?
    public var chargeId: String?
    public var message = ""
    public var errors: [Shortage]?

    public static let shape = ObjectShape<Failed>(
      blank: { Failed() },
      [
        .constant("status", "failed"), .member("failureCode", \.failureCode),
        .member("declineCode", \.declineCode, .optional, .string(values: ["generic_decline", "insufficient_funds"])),
        .member("chargeId", \.chargeId, .optional),
        .member("message", \.message, .required, .string("Why the order failed, for people."), read: ParamReader.anyString),
        .member("errors", \.errors, .optional, .array(Shortage.schema, "The short lines of an out_of_stock failure.")),
      ])

    public var report: ResultFailure {
      ResultFailure(
        status: "failed", code: failureCode.rawValue, message: message,
        lines: (errors ?? []).map { "\($0.sku): \($0.requested) requested, \($0.available) available" })
    }
  }

  /// The answer: stored with the token and replayed for the identical request.
  public typealias Result = Outcome<Succeeded, Failed>

  /// What identifies a request for a token: what it asks for, with the billing contact and card it
  /// resolves to. The identical request again is answered from the store; any other is -32002.
  /// Stored as JSON text with the binding, contact and card embedded as JSON text strings.
  struct Fingerprint: Equatable, Sendable, WireObject {
    var binding = OrderBinding(items: [], shippingMethod: "", shippingContact: nil, couponCode: nil)
    var billingContact: Contact?
    /// The card as recorded: network lower-cased, type, no display name.
    var paymentMethod: PaymentMethod?
    var amount = ""
    var currencyCode = ""

    static let shape = ObjectShape<Fingerprint>(
      blank: { Fingerprint() },
      [
        .member("binding", \.binding, read: EmbeddedJSON.read, write: EmbeddedJSON.write),
        .member("billingContact", \.billingContact, .optional, read: EmbeddedJSON.read, write: EmbeddedJSON.write),
        .member("paymentMethod", \.paymentMethod, .optional, read: EmbeddedJSON.read, write: EmbeddedJSON.write),
        .member("amount", \.amount), .member("currencyCode", \.currencyCode),
      ])
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let binding = params.binding
    let now = context.clock.now()
    return try context.store.write { transaction -> Result in
      guard let token = try transaction.chargeToken(params.chargeToken) else {
        return .failed(.invalidChargeToken, "The charge token is unknown. Authorize the payment again.")
      }
      let billing = params.billingContact ?? token.billingContact
      let card = params.paymentMethod?.recorded ?? token.paymentMethod
      let fingerprint = Fingerprint(
        binding: binding, billingContact: billing, paymentMethod: card,
        amount: context.config.format(params.amount.minor), currencyCode: params.currencyCode)
      if token.usedAt != nil {
        guard let stored = token.requestFingerprint, let result = token.result,
          try StoredJSON.read(stored, as: Fingerprint.self, "request fingerprint") == fingerprint
        else {
          throw ServiceError.chargeTokenConflict
        }
        return try StoredJSON.read(result, as: Result.self, "processOrder result")
      }
      if now >= token.expiresAt {
        return .failed(.invalidChargeToken, "The charge token has expired. Authorize the payment again.")
      }
      if token.binding != binding || billing != token.billingContact || card != token.paymentMethod {
        return .failed(
          .invalidChargeToken,
          "The charge token was authorized for a different order (items, shipping method, contacts, coupon or card differ).")
      }
      let result = try charge(token, params: params, billing: billing, transaction: transaction, context: context, now: now)
      if case .failed(let failed) = result, !failed.failureCode.consumesToken { return result }
      try transaction.consume(
        token.token, at: RFC3339.format(now), fingerprint: JSONWriter.string(fingerprint),
        result: JSONWriter.string(result))
      return result
    }
  }

  /// Prices the order as authorized and charges it: a failure when the amount does not match or
  /// stock is short (the token stays unused), else the charge with its outcome and, when it
  /// succeeds, the stock taken, the hold captured and the order recorded.
  static func charge(
    _ token: ChargeTokenRecord, params: Params, billing: Contact?, transaction: any StoreTransaction,
    context: ServiceContext, now: Int64
  ) throws -> Result {
    let config = context.config
    let binding = token.binding
    // Priced as authorized: with the token's card, and the coupon as it stood when the buyer authorized.
    let merchandise = context.pricer.merchandise(
      items: binding.items, couponCode: binding.couponCode, paymentMethod: token.paymentMethod, now: token.issuedAt)
    let quote = context.pricer.quote(
      merchandise, method: config.shippingMethodsByIdentifier[binding.shippingMethod],
      region: context.pricer.region(of: binding.shippingContact))
    guard params.currencyCode == config.currency.code, params.amount.minor == quote.totalMinor,
      token.amountMinor == quote.totalMinor, token.currencyCode == config.currency.code
    else {
      return .failed(
        .amountMismatch,
        "The amount does not match the order total \(config.format(quote.totalMinor)) \(config.currency.code).")
    }
    let quantities = try transaction.quantitiesOnHand(quote.lines.map(\.sku))
    let shortages = zip(quote.lines, quantities).filter { $0.1 < $0.0.quantity }.map { line, available in
      Shortage(sku: line.sku, requested: line.quantity, available: available)
    }
    if !shortages.isEmpty { return .failed(.outOfStock, "Some items are out of stock.", errors: shortages) }

    let nowText = RFC3339.format(now)
    let chargeId = Identifiers.chargeId(token: token.token)
    if let failure = token.sandboxOutcome.failure {
      try transaction.insert(
        ChargeRow(
          chargeId: chargeId, token: token.token, succeeded: false, failureCode: failure.failureCode,
          declineCode: failure.declineCode, amountMinor: quote.totalMinor, currencyCode: config.currency.code,
          createdAt: nowText))
      return .failed(
        FailureCode(rawValue: failure.failureCode)!, failure.message, declineCode: failure.declineCode,
        chargeId: chargeId)
    }
    for line in quote.lines {
      guard try transaction.decrementStock(line.sku, by: line.quantity) else {
        throw StoreError.unavailable(reason: "stock changed during the transaction")
      }
    }
    try transaction.insert(
      ChargeRow(
        chargeId: chargeId, token: token.token, succeeded: true, amountMinor: quote.totalMinor,
        currencyCode: config.currency.code, createdAt: nowText))
    // Charged at once, an Apple Pay token's authorization hold is captured (the settlement phase);
    // with manual capture the hold stays until captureOrder or cancelOrder.
    let captureNow = config.gateway.capture == .automatic
    var payment: OrderDocument.Payment?
    if let authorizationId = token.authorizationId {
      guard let authorization = try transaction.authorization(authorizationId) else {
        throw StoreError.unavailable(reason: "authorization \(authorizationId) of a charge token is missing")
      }
      if captureNow { try transaction.capture(authorizationId, chargeId: chargeId, at: nowText) }
      payment = authorization.orderPayment
    }
    let orderId = Identifiers.orderId(token: token.token)
    let status: OrderStatus = captureNow ? .paid : .authorized
    let order = OrderDocument(
      orderId: orderId, createdAt: nowText,
      items: quote.lines.map {
        OrderDocument.Line(
          sku: $0.sku, name: $0.name, quantity: $0.quantity, unitPrice: config.format($0.unitPriceMinor),
          amount: config.format($0.amountMinor))
      },
      shippingMethod: binding.shippingMethod, couponCode: quote.merchandise.coupon?.code,
      summaryItems: quote.summaryItems, shippingContact: binding.shippingContact ?? Contact(), billingContact: billing,
      amount: config.format(quote.totalMinor), currencyCode: config.currency.code, chargeId: chargeId, payment: payment,
      status: status)
    try transaction.insert(
      OrderRow(
        orderId: orderId, chargeId: chargeId, createdAt: nowText, amountMinor: quote.totalMinor,
        currencyCode: config.currency.code, document: JSONWriter.string(order),
        items: quote.lines.indices.map { index in
          let line = quote.lines[index]
          return OrderRow.Item(
            sku: line.sku, quantity: line.quantity, unitPriceMinor: line.unitPriceMinor, amountMinor: line.amountMinor,
            discountMinor: quote.lineDiscountMinor(index), taxMinor: quote.lineTaxMinor(index))
        },
        status: status, capturedMinor: captureNow ? quote.totalMinor : nil, shippingMinor: quote.shippingMinor,
        shippingTaxMinor: quote.shippingTaxMinor))
    return .succeeded(
      Succeeded(
        orderId: orderId, chargeId: chargeId, amount: config.format(quote.totalMinor),
        currencyCode: config.currency.code, order: order))
  }
}

extension Outcome where Failed == ProcessOrder.Failed {
  static func failed(
    _ code: ProcessOrder.FailureCode, _ message: String, declineCode: String? = nil, chargeId: String? = nil,
    errors: [ProcessOrder.Shortage]? = nil
  ) -> Outcome {
    .failed(ProcessOrder.Failed(failureCode: code, declineCode: declineCode, chargeId: chargeId, message: message, errors: errors))
  }
}
