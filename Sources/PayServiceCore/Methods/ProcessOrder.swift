/// Charges an authorized payment, decrements stock and records the order, all in one store
/// transaction; the answer is written only after the commit. A charge token is used at most once:
/// the identical request again gets the stored answer, a different one gets -32002.
public enum ProcessOrder: RPCMethod {
  public static let name = "processOrder"

  public static let documentation = MethodDescription(
    summary: "Charge an authorized payment, decrement stock and record the order.",
    description: """
      Charges the payment authorized by authorizePayment and records the order, in one durable \
      transaction. Send the chargeToken with the same items, shippingMethod, shippingContact (and \
      couponCode and card, when the authorization had them) and the authorized amount and currencyCode. \
      status succeeded returns the order; status failed gives a failureCode: invalid_charge_token, \
      amount_mismatch and out_of_stock leave the token unused (fix the request and send it again), \
      card_declined, expired_card and processing_error consume it. Sending the identical request again \
      returns the stored answer without charging twice; a different order with a used token is error \
      -32002.
      """,
    params: [
      MethodDescription.Param("chargeToken", required: true, .string("From authorizePayment.", minLength: 1)),
      MethodDescription.Param("items", required: true, Shapes.items),
      MethodDescription.Param("shippingMethod", required: true, Shapes.shippingMethodIdentifier),
      MethodDescription.Param("shippingContact", required: true, Shapes.contact),
      MethodDescription.Param("billingContact", required: false, Shapes.contact),
      MethodDescription.Param("amount", required: true, Shapes.amount),
      MethodDescription.Param("currencyCode", required: true, .string("The merchant currency.", minLength: 1)),
      MethodDescription.Param("couponCode", required: false, Shapes.couponCode.allowingNull()),
      MethodDescription.Param(
        "paymentMethod", required: false, Shapes.paymentMethod(displayNameRequired: false).allowingNull()),
    ],
    result: JSONSchema.object(
      [
        ("status", .string(values: ["succeeded", "failed"])),
        ("orderId", .string()),
        ("chargeId", .string()),
        ("amount", Shapes.amount),
        ("currencyCode", Shapes.currencyCode),
        ("order", Shapes.order),
        ("failureCode", .string(values: FailureCode.allCases.map(\.rawValue))),
        ("declineCode", .string(values: ["generic_decline", "insufficient_funds"])),
        ("message", .string("Why the order failed, for people.")),
        (
          "errors",
          .array(
            .object(
              [("sku", .string()), ("requested", .integer(minimum: 1)), ("available", .integer(minimum: 0))],
              required: ["sku", "requested", "available"]), "The short lines of an out_of_stock failure.")
        ),
      ], required: ["status"]
    ).requiring(
      oneOf: [
        ("status", "succeeded", ["orderId", "chargeId", "amount", "currencyCode", "order"]),
        ("status", "failed", ["failureCode", "message"]),
      ]),
    errors: MethodDescription.paramErrors + [.storeUnavailable, .chargeTokenConflict], readOnly: false,
    idempotent: true, failureStatuses: ["failed"])
  public static let runsAsNotification = false
  public static let usesStore = true
  public static let commitsInGroups = true

  public enum FailureCode: String, Sendable, CaseIterable {
    case invalidChargeToken = "invalid_charge_token"
    case amountMismatch = "amount_mismatch"
    case outOfStock = "out_of_stock"
    case cardDeclined = "card_declined"
    case expiredCard = "expired_card"
    case processingError = "processing_error"
  }

  public struct Params: Sendable {
    public var chargeToken: String
    public var binding: OrderBinding
    public var billingContact: Contact?
    /// When given, must be the card the token was authorized with; the token's card prices the order.
    public var paymentMethod: PaymentMethod?
    public var amountMinor: Int64
    public var currencyCode: String
  }

  /// The result as compact JSON text: what is stored with the token and replayed for the same
  /// request, written once and embedded in the response as is.
  public struct Output: JSONRepresentable {
    public var text: String

    public func write(to writer: inout JSONWriter) {
      writer.write(serialized: text)
    }
  }

  public static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> Params? {
    reader.rejectUnknown(
      params, "",
      allowed: [
        "chargeToken", "items", "shippingMethod", "shippingContact", "billingContact", "amount", "currencyCode",
        "couponCode", "paymentMethod",
      ])
    let config = context.config
    let token = reader.string(params["chargeToken"], "chargeToken")
    let items = CartItem.read(params["items"], "items", reader: reader, config: config)
    let method = context.readShippingMethod(params["shippingMethod"], "shippingMethod", reader: reader, required: true)
    let shipping = Contact.read(params["shippingContact"], "shippingContact", reader: reader, required: true)
    let billing = Contact.read(params["billingContact"], "billingContact", reader: reader, required: false)
    let amount = reader.amount(params["amount"], "amount", digits: config.currency.minorDigits)
    let currency = reader.string(params["currencyCode"], "currencyCode")
    let couponCode = context.readCouponCode(params["couponCode"], "couponCode", reader: reader, required: false)
    let card = PaymentMethod.read(params["paymentMethod"], "paymentMethod", reader: reader, required: false)
    guard let token, let items, let method = method ?? nil, let shipping, let amount, let currency,
      reader.errors.isEmpty
    else { return nil }
    return Params(
      chargeToken: token,
      binding: OrderBinding(items: items, shippingMethod: method, shippingContact: shipping, couponCode: couponCode),
      billingContact: billing, paymentMethod: card, amountMinor: amount, currencyCode: currency)
  }

  /// A failed result's text.
  static func failed(
    _ code: FailureCode, _ message: String, declineCode: String? = nil, chargeId: String? = nil,
    errors: [JSONValue]? = nil
  ) -> String {
    var object = JSONObjectBuilder()
    object.set("status", "failed")
    object.set("failureCode", code.rawValue)
    object.set("declineCode", declineCode)
    object.set("chargeId", chargeId)
    object.set("message", message)
    object.set("errors", errors.map(JSONValue.array))
    return JSONWriter.string(object.value)
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Output {
    let config = context.config
    let pricer = context.pricer
    let binding = params.binding
    let region = pricer.region(of: binding.shippingContact)
    let method = config.shippingMethodsByIdentifier[binding.shippingMethod]
    let requestedCard = params.paymentMethod.map { JSONWriter.string($0) }
    let bindingText = binding.canonical
    let now = context.clock.now()
    let nowText = RFC3339.format(now)
    let requestedBilling = params.billingContact.map { JSONWriter.string($0) }

    let text = try context.store.write { transaction -> String in
      guard let token = try transaction.chargeToken(params.chargeToken) else {
        return failed(.invalidChargeToken, "The charge token is unknown. Authorize the payment again.")
      }
      // The identity of a request: what it asks for, with the billing contact it resolves to.
      let billing = requestedBilling ?? token.billingContact
      let card = requestedCard ?? token.paymentMethod
      var fingerprint = JSONWriter(capacity: 1024)
      fingerprint.beginObject()
      fingerprint.member("binding", bindingText)
      fingerprint.member("billingContact", billing)
      fingerprint.member("paymentMethod", card)
      fingerprint.member("amount", config.format(params.amountMinor))
      fingerprint.member("currencyCode", params.currencyCode)
      fingerprint.endObject()
      let fingerprintText = fingerprint.string

      if token.usedAt != nil {
        guard token.requestFingerprint == fingerprintText, let result = token.result else {
          throw ServiceError.chargeTokenConflict
        }
        // Checked and rewritten rather than trusted: it comes back from the store file.
        return JSONWriter.string(try JSONParser.parse(result))
      }
      if now >= token.expiresAt {
        return failed(.invalidChargeToken, "The charge token has expired. Authorize the payment again.")
      }
      if token.binding != bindingText || billing != token.billingContact || card != token.paymentMethod {
        return failed(
          .invalidChargeToken,
          "The charge token was authorized for a different order (items, shipping method, contacts, coupon or card differ).")
      }
      // Priced as authorized: with the token's card, and the coupon as it stood when the buyer authorized.
      let merchandise = pricer.merchandise(
        items: binding.items, couponCode: binding.couponCode, paymentMethod: PaymentMethod.stored(token.paymentMethod),
        now: token.issuedAt)
      let quote = pricer.quote(merchandise, method: method, region: region)
      guard params.currencyCode == config.currency.code, params.amountMinor == quote.totalMinor,
        token.amountMinor == quote.totalMinor, token.currencyCode == config.currency.code
      else {
        return failed(
          .amountMismatch,
          "The amount does not match the order total \(config.format(quote.totalMinor)) \(config.currency.code).")
      }
      var shortages: [JSONValue] = []
      let quantities = try transaction.quantitiesOnHand(quote.lines.map(\.sku))
      for (line, available) in zip(quote.lines, quantities) {
        if available < line.quantity {
          var shortage = JSONObjectBuilder()
          shortage.set("sku", line.sku)
          shortage.set("requested", line.quantity)
          shortage.set("available", available)
          shortages.append(shortage.value)
        }
      }
      if !shortages.isEmpty {
        return failed(.outOfStock, "Some items are out of stock.", errors: shortages)
      }

      let chargeId = Identifiers.chargeId(token: token.token)
      let result: String
      if let failure = token.sandboxOutcome.failure {
        try transaction.insert(
          ChargeRow(
            chargeId: chargeId, token: token.token, succeeded: false, failureCode: failure.failureCode,
            declineCode: failure.declineCode, amountMinor: quote.totalMinor, currencyCode: config.currency.code,
            createdAt: nowText))
        result = failed(
          FailureCode(rawValue: failure.failureCode)!, failure.message, declineCode: failure.declineCode,
          chargeId: chargeId)
      } else {
        for line in quote.lines {
          guard try transaction.decrementStock(line.sku, by: line.quantity) else {
            throw StoreError.unavailable(reason: "stock changed during the transaction")
          }
        }
        try transaction.insert(
          ChargeRow(
            chargeId: chargeId, token: token.token, succeeded: true, amountMinor: quote.totalMinor,
            currencyCode: config.currency.code, createdAt: nowText))
        // An Apple Pay token's authorization hold is captured: the settlement phase.
        var payment: JSONValue?
        if let authorizationId = token.authorizationId {
          guard let authorization = try transaction.authorization(authorizationId) else {
            throw StoreError.unavailable(reason: "authorization \(authorizationId) of a charge token is missing")
          }
          try transaction.capture(authorizationId, chargeId: chargeId, at: nowText)
          payment = authorization.orderPayment
        }
        let orderId = Identifiers.orderId(token: token.token)
        let order = try orderDocument(
          orderId: orderId, createdAt: nowText, quote: quote, binding: binding, billing: billing, chargeId: chargeId,
          payment: payment, config: config)
        try transaction.insert(
          OrderRow(
            orderId: orderId, chargeId: chargeId, createdAt: nowText, amountMinor: quote.totalMinor,
            currencyCode: config.currency.code, document: order,
            items: quote.lines.map {
              OrderRow.Item(
                sku: $0.sku, quantity: $0.quantity, unitPriceMinor: $0.unitPriceMinor, amountMinor: $0.amountMinor)
            }))
        var success = JSONWriter(capacity: order.utf8.count + 256)
        success.beginObject()
        success.member("status", "succeeded")
        success.member("orderId", orderId)
        success.member("chargeId", chargeId)
        success.member("amount", config.format(quote.totalMinor))
        success.member("currencyCode", config.currency.code)
        success.key("order")
        success.write(serialized: order)
        success.endObject()
        result = success.string
      }
      try transaction.consume(token.token, at: nowText, fingerprint: fingerprintText, result: result)
      return result
    }
    return Output(text: text)
  }

  /// The order document's text, as stored and as embedded in the result.
  static func orderDocument(
    orderId: String, createdAt: String, quote: Pricer.Quote, binding: OrderBinding, billing: String?,
    chargeId: String, payment: JSONValue? = nil, config: Config
  ) throws -> String {
    var order = JSONWriter(capacity: 2048)
    order.beginObject()
    order.member("orderId", orderId)
    order.member("createdAt", createdAt)
    order.key("items")
    order.beginArray()
    for line in quote.lines {
      order.beginObject()
      order.member("sku", line.sku)
      order.member("name", line.name)
      order.member("quantity", line.quantity)
      order.member("unitPrice", config.format(line.unitPriceMinor))
      order.member("amount", config.format(line.amountMinor))
      order.endObject()
    }
    order.endArray()
    order.member("shippingMethod", binding.shippingMethod)
    order.member("couponCode", quote.merchandise.coupon?.code)
    order.member("summaryItems", quote.summaryItems)
    order.member("shippingContact", orNull: binding.shippingContact)
    order.key("billingContact")
    // The token's billing contact comes back from the store file: checked and rewritten.
    if let billing { order.write(try JSONParser.parse(billing)) } else { order.writeNull() }
    order.member("amount", config.format(quote.totalMinor))
    order.member("currencyCode", config.currency.code)
    order.member("chargeId", chargeId)
    if let payment {
      // Paid with an Apple Pay token: the card as network, type and last four digits only.
      order.key("payment")
      order.write(payment)
    }
    order.member("status", "paid")
    order.endObject()
    return order.string
  }
}
