/// Charges an authorized payment, decrements stock and records the order, as the journal's `order`
/// operation (`Placement`): in one store transaction with the sandbox, in two around the gateway's
/// call with a remote one; the answer is written only after the commit. A charge token is used at
/// most once: the identical request again gets the stored answer, a different one gets -32002.
public enum ProcessOrder: OperationMethod {
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
      -32002. Through a remote gateway (Stripe), gateway_unavailable means the answer was lost and the \
      order is pending: send the identical request again to complete it (the card is charged once); \
      payment_processing means the gateway is still processing the payment and the order is pending (the \
      identical request again settles it once the gateway has decided); gateway_error names the gateway's \
      refusal; gateway_failed means the gateway failed the charge and holds no payment for it (not charged).
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
    /// A remote gateway did not answer: the order is pending; the same request again completes it.
    case gatewayUnavailable = "gateway_unavailable"
    /// A remote gateway refused the request itself (not the card): its error type and message say why.
    case gatewayError = "gateway_error"
    /// A remote gateway is still processing the payment (Stripe's `processing`): the order is
    /// pending with its stock held; the same request again asks for the payment's state and
    /// settles the order once it is final.
    case paymentProcessing = "payment_processing"
    /// A remote gateway failed the charge with a server error it stored under the charge's key,
    /// and holds no payment for the order (Stripe's search by metadata order_id): the card was
    /// not charged, and the order is released.
    case gatewayFailed = "gateway_failed"

    /// Whether a failure with this code uses the token up: a charge was attempted. The others leave
    /// it unused, so the buyer can fix the request and send it again.
    var consumesToken: Bool {
      switch self {
      case .invalidChargeToken, .amountMismatch, .outOfStock, .gatewayUnavailable, .paymentProcessing: return false
      case .cardDeclined, .expiredCard, .processingError, .gatewayError, .gatewayFailed: return true
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
        .member(
          "declineCode", \.declineCode, .optional,
          .string("The issuer's reason, as the gateway gives it: generic_decline, insufficient_funds, lost_card, …", minLength: 1)),
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

  /// What identifies a request for a token: the whole request as sent, the billing contact and
  /// card included when given and absent when not (the card as recorded: network lower-cased, type,
  /// no display name). The identical request again is answered from the store, with the order it
  /// recorded; any other is -32002, so that a request that leaves out what the buyer sent (the
  /// billing contact) never reads it back. Stored as JSON text with the binding, contact and card
  /// embedded as JSON text strings.
  ///
  /// Fingerprints stored before `asSent` (stores of earlier releases) recorded the contact and card
  /// the request resolved to (the token's when not given); a replay of one is compared that way.
  struct Fingerprint: Equatable, Sendable, WireObject {
    var binding = OrderBinding(items: [], shippingMethod: "", shippingContact: nil, couponCode: nil)
    var billingContact: Contact?
    var paymentMethod: PaymentMethod?
    var amount = ""
    var currencyCode = ""
    /// True: the billing contact and card as sent; nil: as resolved (earlier releases).
    var asSent: Bool?
    /// True once the buyer's personal data was erased (`erased()`): the contacts keep only what
    /// `Contact.erased` keeps, and a replay is compared in that form.
    var erased: Bool?

    /// The fingerprint with its contacts erased.
    func erasing() -> Fingerprint {
      var copy = self
      copy.binding.shippingContact = binding.shippingContact?.erased
      copy.billingContact = billingContact?.erased
      copy.erased = true
      return copy
    }

    static let shape = ObjectShape<Fingerprint>(
      blank: { Fingerprint() },
      [
        .member("binding", \.binding, read: EmbeddedJSON.read, write: EmbeddedJSON.write),
        .member("billingContact", \.billingContact, .optional, read: EmbeddedJSON.read, write: EmbeddedJSON.write),
        .member("paymentMethod", \.paymentMethod, .optional, read: EmbeddedJSON.read, write: EmbeddedJSON.write),
        .member("amount", \.amount), .member("currencyCode", \.currencyCode),
        .member("asSent", \.asSent, .optional),
        .member("erased", \.erased, .optional),
      ])
  }

  public static func operation(_ params: Params, context: ServiceContext) throws -> Placement {
    try Placement(params, context: context)
  }

  /// processOrder as an operation of the journal (kind `order`, keyed by the charge token). With
  /// the sandbox it is done in one transaction (the charge happens there). With a remote gateway
  /// the first transaction takes the stock, uses the token and records the charge as pending
  /// before the gateway is called, so that no answer lost to a timeout or a crash can become a
  /// second charge: the same request again (or the sweep at start-up) sends the same charge
  /// under the same idempotency key; the second transaction records the order, or the failure
  /// with the stock put back.
  public struct Placement: GatewayOperation {
    public static let kind = "order"

    let params: Params
    public let key: String
    /// The order the token pays for (`Identifiers.orderId(token:)`).
    let orderId: String
    public var subject: String? { orderId }
    public let fingerprint: String
    let sent: Fingerprint

    init(_ params: Params, context: ServiceContext) throws {
      self.params = params
      key = params.chargeToken
      orderId = try context.identifiers.orderId(token: params.chargeToken)
      sent = Fingerprint(
        binding: params.binding, billingContact: params.billingContact, paymentMethod: params.paymentMethod?.recorded,
        amount: context.config.format(params.amount.minor), currencyCode: params.currencyCode, asSent: true)
      fingerprint = JSONWriter.string(sent)
    }

    public var conflict: ServiceError { .chargeTokenConflict }

    /// Optimistic on PostgreSQL: what the first transaction decides on is the token (checked
    /// unchanged when the writes are applied, so a second request with it, here or on another
    /// host, makes this one run again with locks and replay), the stock (taken only if still on
    /// hand), the Apple Pay authorization (checked unchanged) and the journal key (recorded only
    /// if unused). Carts that make an agreement take the locked path.
    public static var isOptimistic: Bool { true }

    /// A succeeded answer as the journal keeps it: without the order's document, which the order's
    /// row keeps (the same document, changed only by an erasure, which changes the row). Replaying
    /// the answer reads the document back from the row; answers kept whole (by earlier releases)
    /// replay as kept.
    struct Journaled: Equatable, Sendable, WireObject {
      var orderId = ""
      var chargeId = ""
      var amount = ""
      var currencyCode = ""

      static let shape = ObjectShape<Journaled>(
        blank: { Journaled() },
        [
          .constant("status", "succeeded"), .member("orderId", \.orderId), .member("chargeId", \.chargeId),
          .member("amount", \.amount), .member("currencyCode", \.currencyCode),
        ])
    }

    public static func journal(_ result: Result) -> String {
      guard case .succeeded(let order) = result else { return JSONWriter.string(result) }
      return JSONWriter.string(
        Journaled(orderId: order.orderId, chargeId: order.chargeId, amount: order.amount, currencyCode: order.currencyCode))
    }

    /// Whether the journal's `text` holds an answer whole: a failure, or a success kept with its
    /// order's document.
    static func isWhole(_ text: String) -> Bool {
      guard case .object(let answer)? = try? JSONParser.parse(text), answer["status"] == .string("succeeded") else {
        return true
      }
      return answer["order"] != nil
    }

    public static func result(journal text: String, _ transaction: any OrderTransaction) throws -> Result {
      if isWhole(text) { return try StoredJSON.read(text, as: Result.self, "order result") }
      let kept = try StoredJSON.read(text, as: Journaled.self, "order result")
      guard let document = try transaction.locked().orderDocument(kept.orderId) else {
        throw StoreError.unavailable(reason: "the order \(kept.orderId) of a stored answer is not in the store")
      }
      return .succeeded(
        Succeeded(
          orderId: kept.orderId, chargeId: kept.chargeId, amount: kept.amount, currencyCode: kept.currencyCode,
          order: try StoredJSON.read(document, as: OrderDocument.self, "order document")))
    }

    /// The token with its authorization, and the cart's stock.
    public var readAhead: ReadAhead {
      ReadAhead(tokens: [key], skus: params.items.map(\.sku))
    }

    /// The token, locked (PostgreSQL: a second request with it waits for the first to commit).
    public static func lock(
      key: String, subject: String?, _ transaction: any OrderTransaction, context: ServiceContext
    ) throws -> ChargeTokenRecord? {
      try transaction.chargeToken(key)
    }

    /// A token is used exactly when the journal holds it (both are written in one transaction).
    public func mayBeRecorded(_ token: ChargeTokenRecord?) -> Bool {
      token?.usedAt != nil
    }

    /// The request as sent; for a fingerprint stored before `asSent` (an earlier release), the
    /// request as it resolved (the token's contact and card where it gave none).
    public func matches(_ stored: String, _ token: ChargeTokenRecord?, context: ServiceContext) throws -> Bool {
      guard let token, !stored.isEmpty else { return false }
      let recorded = try StoredJSON.read(stored, as: Fingerprint.self, "request fingerprint")
      let request =
        recorded.asSent == true
        ? sent
        : Fingerprint(
          binding: sent.binding, billingContact: params.billingContact ?? token.billingContact,
          paymentMethod: params.paymentMethod?.recorded ?? token.paymentMethod, amount: sent.amount,
          currencyCode: sent.currencyCode)
      // After an erasure the store holds what the request's contacts come to once erased.
      return recorded == (recorded.erased == true ? request.erasing() : request)
    }

    public func prepare(
      _ token: ChargeTokenRecord?, _ transaction: any OrderTransaction, context: ServiceContext, now: Int64
    ) throws -> Preparation<Result, Charge> {
      guard let token else {
        return .done(.failed(.invalidChargeToken, "The charge token is unknown. Authorize the payment again."), final: false)
      }
      guard token.usedAt == nil else {
        throw StoreError.unavailable(reason: "a used charge token has no entry in the operation journal")
      }
      let binding = params.binding
      let billing = params.billingContact ?? token.billingContact
      let card = params.paymentMethod?.recorded ?? token.paymentMethod
      if now >= token.expiresAt {
        return .done(.failed(.invalidChargeToken, "The charge token has expired. Authorize the payment again."), final: false)
      }
      if token.binding != binding || billing != token.billingContact || card != token.paymentMethod {
        return .done(
          .failed(
            .invalidChargeToken,
            "The charge token was authorized for a different order (items, shipping method, contacts, coupon or card differ)."
          ), final: false)
      }
      guard (context.gatewayCalls != nil) == (token.gatewayPaymentData != nil) else {
        return .done(
          .failed(
            .invalidChargeToken,
            "The charge token was authorized for another payment gateway than this one. Authorize the payment again."),
          final: false)
      }
      let prepared: PreparedOrder
      switch try price(
        token, orderId: orderId, params: params, billing: billing, transaction: transaction, context: context,
        now: now)
      {
      case .failed(let failure): return .done(.failed(failure), final: false)
      case .ready(let order): prepared = order
      }
      guard let paymentData = token.gatewayPaymentData else {
        let result = try chargeInSandbox(token, prepared, transaction: transaction, context: context, now: now)
        if case .failed(let failed) = result, !failed.failureCode.consumesToken { return .done(result, final: false) }
        try transaction.use(token.token, at: RFC3339.format(now))
        return .done(result, final: true)
      }
      try takeStock(prepared, transaction: transaction)
      try transaction.use(token.token, at: RFC3339.format(now))
      let orderId = prepared.document.orderId
      return .send(
        Charge(
          orderId: orderId, token: token.token, idempotencyKey: Identifiers.chargeIdempotencyKey(orderId: orderId),
          paymentData: paymentData, amountMinor: prepared.amountMinor, currencyCode: context.config.currency.code,
          captureManually: context.config.gateway.capture == .manual, saveCard: prepared.agreement != nil ? true : nil,
          agreementId: prepared.agreement != nil ? try context.identifiers.agreementId(orderId: orderId) : nil,
          createdAt: RFC3339.format(now),
          itemCount: prepared.lines.reduce(0) { $0 + $1.quantity }, prepared: prepared))
    }

    public static func work(_ charge: Charge, context: ServiceContext) -> GatewayWork { .charge(charge.gatewayCharge) }

    public static func sender(_ context: ServiceContext) -> (@Sendable (Charge) -> PendingCall<GatewayReply<GatewayPayment>>)? {
      guard let calls = context.gatewayCalls else { return nil }
      return { charge in
        let request = charge.gatewayCharge
        return calls.start(key: request.idempotencyKey) { await $0.charge(request) }
      }
    }

    /// Records the gateway's answer: the order (paid or authorized) when the charge went through,
    /// else the failure with the stock put back. No answer leaves it pending.
    public static func settle(
      _ charge: Charge, reply: GatewayReply<GatewayPayment>, _ token: ChargeTokenRecord?,
      _ transaction: any StoreTransaction, context: ServiceContext, now: Int64
    ) throws -> Settlement<Result> {
      let gatewayName = context.gatewayCalls?.gateway.name ?? "The gateway"
      let nowText = RFC3339.format(now)
      var prepared = charge.prepared
      let orderId = charge.orderId
      let currency = charge.currencyCode
      switch reply {
      case .unanswered(let reason):
        return .pending(
          .failed(
            .gatewayUnavailable,
            """
            \(gatewayName) did not answer (\(reason)). The order is pending: send the same processOrder again to \
            complete it; the card is never charged twice.
            """))
      case .accepted(let reference):
        return .pending(
          .failed(
            .paymentProcessing,
            """
            \(gatewayName) accepted the payment (\(reference)) and says later what came of it. The order is pending \
            with its stock held until \(gatewayName)'s notification arrives; the card is never charged twice.
            """))
      case .refused(let refusal) where !refusal.final:
        return .pending(
          .failed(
            .gatewayError,
            """
            \(gatewayName) refused the request (\(refusal.type)): \(refusal.message) The order is pending: once \
            the cause is fixed, send the same processOrder again.
            """))
      case .succeeded(let payment) where payment.status == .processing:
        return .pending(
          .failed(
            .paymentProcessing,
            """
            \(gatewayName) is processing the payment \(payment.id): the money may still arrive. The order is pending \
            with its stock held: send the same processOrder again later to settle it once \(gatewayName) has decided; \
            the card is never charged twice.
            """))
      case .succeeded(let payment) where payment.status == .notFound:
        guard let created = RFC3339.parse(charge.createdAt), now - created >= PendingOrders.searchLagSeconds else {
          return .pending(
            .failed(
              .gatewayUnavailable,
              """
              \(gatewayName) answered the charge with a server error it stored under the idempotency key, and its \
              search finds no payment for order \(orderId) yet (search results can lag a minute behind). The order \
              is pending: send the same processOrder again in \(PendingOrders.searchLagSeconds / 60) minutes to settle it.
              """))
        }
        return .settled(
          try release(
            charge, chargeId: nil, code: .gatewayFailed, declineCode: nil,
            message: """
              \(gatewayName) failed the charge with a server error it stored under the idempotency key, and holds no \
              payment for order \(orderId): the card was not charged. Authorize the payment again to retry.
              """, transaction: transaction, now: nowText))
      case .succeeded(let payment) where payment.status == .captured || payment.status == .authorized:
        let chargeId = payment.chargeId ?? payment.id
        try transaction.insert(
          ChargeRow(
            chargeId: chargeId, token: charge.token, succeeded: true, amountMinor: Int64(charge.amountMinor),
            currencyCode: currency, createdAt: nowText))
        let captured = payment.status == .captured
        prepared.document.chargeId = chargeId
        prepared.document.gatewayPaymentId = payment.id
        prepared.document.status = captured ? .paid : .authorized
        if !captured, let captureBefore = payment.captureBefore {
          prepared.document.captureBefore = RFC3339.format(captureBefore)
        }
        if prepared.agreement != nil {
          prepared.document.agreement = AgreementLink(
            agreementId: try context.identifiers.agreementId(orderId: orderId), payment: .checkout)
        }
        // A payment of nothing (a SetupIntent that kept the card) has no PaymentIntent to refund.
        let paymentId = charge.amountMinor == 0 && charge.saveCard == true ? nil : payment.id
        if paymentId == nil { prepared.document.gatewayPaymentId = nil }
        try transaction.insert(prepared.row(chargeId: chargeId, gatewayPaymentId: paymentId, captured: captured))
        try Agreements.create(
          for: prepared,
          credential: AgreementCredential(
            gateway: context.config.gateway.kind.rawValue, customerId: payment.savedCard?.customerId,
            paymentMethodId: payment.savedCard?.paymentMethodId), sandboxOutcome: nil, transaction: transaction,
          context: context, now: now)
        return .settled(
          .succeeded(
            Succeeded(
              orderId: orderId, chargeId: chargeId, amount: prepared.document.amount, currencyCode: currency,
              order: prepared.document)))
      case .succeeded(let payment) where payment.status == .requiresAction:
        // Not answered with error_on_requires_action=true; as that error, should it be.
        return .settled(
          try release(
            charge, chargeId: payment.chargeId, code: .cardDeclined, declineCode: "authentication_required",
            message: authenticationMessage, transaction: transaction, now: nowText))
      case .succeeded(let payment):
        return .settled(
          try release(
            charge, chargeId: payment.chargeId, code: .processingError, declineCode: nil,
            message: "\(gatewayName) could not complete the payment (it needs an action this checkout cannot take).",
            transaction: transaction, now: nowText))
      case .declined(let decline) where decline.code == "authentication_required":
        return .settled(
          try release(
            charge, chargeId: decline.chargeId, code: .cardDeclined, declineCode: "authentication_required",
            message: authenticationMessage, transaction: transaction, now: nowText))
      case .declined(let decline):
        return .settled(
          try release(
            charge, chargeId: decline.chargeId, code: FailureCode(gatewayCode: decline.code),
            declineCode: decline.declineCode, message: decline.message, transaction: transaction, now: nowText))
      case .refused(let refusal):
        return .settled(
          try release(
            charge, chargeId: nil, code: .gatewayError, declineCode: nil,
            message: "\(gatewayName) refused the request (\(refusal.type)): \(refusal.message)", transaction: transaction,
            now: nowText))
      }
    }

    public static func unsent(_ charge: Charge, because reason: UnsentReason, context: ServiceContext) -> Result {
      switch reason {
      case .tooOld:
        return .failed(
          .gatewayError,
          """
          This order has been pending for more than 23 hours: its gateway may have forgotten the idempotency \
          key, so payservice will not send it again (that could charge twice). Look the payment up at the \
          gateway by its metadata order_id \(charge.orderId).
          """)
      case .noSender:
        return .failed(
          .gatewayUnavailable,
          "This order is pending at a remote gateway, and this payservice has none configured (gateway.kind is sandbox).")
      }
    }
  }

  /// A charge sent to a remote gateway: exactly what is sent (and sent again under the same key
  /// after a lost answer), with the order to record when it succeeds, priced as authorized so that
  /// the order recorded is the one charged whatever the config says then.
  public struct Charge: Sendable, WireObject {
    var orderId = ""
    var token = ""
    var idempotencyKey = ""
    var paymentData = ""
    var amountMinor = 0
    var currencyCode = ""
    var captureManually = false
    /// The order makes an agreement: the gateway keeps the card for its later payments (absent in
    /// charges recorded before agreements).
    var saveCard: Bool?
    /// The agreement the order makes, sent as the gateway's metadata with the card kept (absent in
    /// charges recorded before it was sent).
    var agreementId: String?
    var createdAt = ""
    /// Units across the order's lines (for listOrders).
    var itemCount = 0
    var prepared = PreparedOrder()

    public static let shape = ObjectShape<Charge>(
      blank: { Charge() },
      [
        .member("orderId", \.orderId), .member("token", \.token), .member("idempotencyKey", \.idempotencyKey),
        .member("paymentData", \.paymentData), .member("amountMinor", \.amountMinor),
        .member("currencyCode", \.currencyCode), .member("captureManually", \.captureManually),
        .member("saveCard", \.saveCard, .optional), .member("agreementId", \.agreementId, .optional),
        .member("createdAt", \.createdAt), .member("itemCount", \.itemCount),
        .member("prepared", \.prepared, read: EmbeddedJSON.read, write: EmbeddedJSON.write),
      ])

    /// The charge as sent to the gateway.
    var gatewayCharge: GatewayCharge {
      GatewayCharge(
        paymentData: paymentData, amountMinor: Int64(amountMinor), currencyCode: currencyCode, orderId: orderId,
        captureManually: captureManually, idempotencyKey: idempotencyKey, saveCard: saveCard == true,
        agreementId: agreementId, unscheduled: prepared.agreement.map { $0.terms.kind != .recurring } ?? false)
    }

    /// The pending order as listOrders lists it.
    var summary: OrderSummaryRow {
      OrderSummaryRow(
        orderId: orderId, createdAt: createdAt, status: .pending, amountMinor: Int64(amountMinor), refundedMinor: 0,
        currencyCode: currencyCode, itemCount: itemCount)
    }
  }

  static let authenticationMessage = """
    The card's bank asks the buyer to authenticate this payment, which a payment confirmed by the server \
    cannot do: the card was not charged. Ask the buyer to pay again (Apple Pay authenticates on the device) \
    or with another card.
    """

  /// A final failure of a pending charge: the stock it took goes back, the failed charge is recorded.
  /// `chargeId` is the gateway's failed charge (`ch_…`), when it made one; otherwise the answer
  /// names none and the store's row is keyed `payservice-failed-<orderId>`, an id no gateway makes.
  private static func release(
    _ charge: Charge, chargeId: String?, code: FailureCode, declineCode: String?,
    message: String, transaction: any StoreTransaction, now: String
  ) throws -> Result {
    for line in charge.prepared.lines {
      guard try transaction.restock(line.sku, by: line.quantity) else {
        throw StoreError.unavailable(reason: "the stock a pending charge took is not recorded as sold")
      }
    }
    try transaction.insert(
      ChargeRow(
        chargeId: chargeId ?? "payservice-failed-\(charge.orderId)", token: charge.token, succeeded: false, failureCode: code.rawValue,
        declineCode: declineCode, amountMinor: Int64(charge.amountMinor), currencyCode: charge.currencyCode,
        createdAt: now))
    return .failed(code, message, declineCode: declineCode, chargeId: chargeId)
  }

  enum Prepared {
    case failed(Failed)
    case ready(PreparedOrder)
  }

  /// Prices the order as authorized and checks it: a failure when the amount does not match or
  /// stock is short (the token stays unused), else the order to record.
  static func price(
    _ token: ChargeTokenRecord, orderId: String, params: Params, billing: Contact?, transaction: any OrderTransaction,
    context: ServiceContext, now: Int64
  ) throws -> Prepared {
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
        Failed(
          failureCode: .amountMismatch,
          message: "The amount does not match the order total \(config.format(quote.totalMinor)) \(config.currency.code)."))
    }
    let short = try transaction.shortages(quote.lines.map { (sku: $0.sku, quantity: $0.quantity) })
    let shortages = zip(quote.lines, short).compactMap { line, available in
      available.map { Shortage(sku: line.sku, requested: line.quantity, available: $0) }
    }
    if !shortages.isEmpty {
      return .failed(Failed(failureCode: .outOfStock, message: "Some items are out of stock.", errors: shortages))
    }
    let document = OrderDocument(
      orderId: orderId, createdAt: RFC3339.format(now),
      items: quote.lines.map {
        OrderDocument.Line(
          sku: $0.sku, name: $0.name, quantity: $0.quantity, unitPrice: config.format($0.unitPriceMinor),
          amount: config.format($0.amountMinor))
      },
      shippingMethod: binding.shippingMethod, couponCode: quote.merchandise.coupon?.code,
      summaryItems: quote.summaryItems, taxBreakdown: quote.taxBreakdownItems(config),
      shippingContact: AddressRules.canonical(binding.shippingContact ?? Contact()),
      billingContact: billing.map(AddressRules.canonical),
      amount: config.format(quote.totalMinor), currencyCode: config.currency.code, status: .pending)
    var prepared = PreparedOrder(document: document, quote: quote)
    // A line with a billing plan makes an agreement with the order (one plan per cart).
    if let line = quote.lines.first(where: { $0.billing != nil }), let plan = line.billing {
      let (terms, period) = AgreementTerms.make(
        plan: plan, pricedAt: token.issuedAt, shippingMethod: binding.shippingMethod,
        shippingContact: binding.shippingContact,
        amountMinor: config.productsBySKU[line.sku]!.priceMinor * Int64(line.quantity))
      prepared.agreement = PreparedOrder.Agreement(sku: line.sku, quantity: line.quantity, period: period, terms: terms)
    }
    return .ready(prepared)
  }

  static func takeStock(_ prepared: PreparedOrder, transaction: any OrderBook) throws {
    for line in prepared.lines {
      guard try transaction.decrementStock(line.sku, by: line.quantity) else {
        throw StoreError.unavailable(reason: "stock changed during the transaction")
      }
    }
  }

  /// The sandbox's charge, in the order's transaction: its test outcome decides; when it succeeds
  /// the stock is taken, the hold captured and the order recorded.
  static func chargeInSandbox(
    _ token: ChargeTokenRecord, _ prepared: PreparedOrder, transaction: any OrderTransaction,
    context: ServiceContext, now: Int64
  ) throws -> Result {
    let config = context.config
    let nowText = RFC3339.format(now)
    let chargeId = try context.identifiers.chargeId(token: token.token)
    let amountMinor = Int64(prepared.amountMinor)
    if let failure = token.sandboxOutcome.failure {
      try transaction.insert(
        ChargeRow(
          chargeId: chargeId, token: token.token, succeeded: false, failureCode: failure.failureCode,
          declineCode: failure.declineCode, amountMinor: amountMinor, currencyCode: config.currency.code,
          createdAt: nowText))
      return .failed(
        FailureCode(rawValue: failure.failureCode)!, failure.message, declineCode: failure.declineCode,
        chargeId: chargeId)
    }
    try takeStock(prepared, transaction: transaction)
    try transaction.insert(
      ChargeRow(
        chargeId: chargeId, token: token.token, succeeded: true, amountMinor: amountMinor,
        currencyCode: config.currency.code, createdAt: nowText))
    // Charged at once, an Apple Pay token's authorization hold is captured (the settlement phase);
    // with manual capture the hold stays until captureOrder or cancelOrder.
    let captureNow = config.gateway.capture == .automatic
    var order = prepared.document
    if let authorizationId = token.authorizationId {
      guard let authorization = try transaction.authorization(authorizationId) else {
        throw StoreError.unavailable(reason: "authorization \(authorizationId) of a charge token is missing")
      }
      if captureNow { try transaction.capture(authorizationId, chargeId: chargeId, at: nowText) }
      order.payment = authorization.orderPayment
    }
    order.chargeId = chargeId
    order.status = captureNow ? .paid : .authorized
    var recorded = prepared
    if prepared.agreement != nil {
      order.agreement = AgreementLink(
        agreementId: try context.identifiers.agreementId(orderId: order.orderId), payment: .checkout)
    }
    recorded.document = order
    try transaction.insert(recorded.row(chargeId: chargeId, gatewayPaymentId: nil, captured: captureNow))
    // The sandbox keeps the token's outcome for the agreement's later payments, and the merchant
    // token the Apple Pay token brought.
    var credential = AgreementCredential()
    if prepared.agreement != nil, let authorizationId = token.authorizationId,
      let hold = try transaction.locked().merchantTokenHold(authorizationId: authorizationId)
    {
      // A token Apple unlinked before its agreement was made charges nothing (runBilling ends it).
      credential.merchantToken = MerchantTokenState(
        identifier: hold.identifier, status: hold.unlinkedBy == nil ? .active : .unlinked, reason: hold.unlinkedBy,
        card: try hold.card.map { text throws(StoreError) in
          try StoredJSON.read(text, as: MerchantTokenCard.self, "merchant token card")
        })
    }
    try Agreements.create(
      for: recorded, credential: credential, sandboxOutcome: token.sandboxOutcome, transaction: transaction,
      context: context, now: now)
    return .succeeded(
      Succeeded(
        orderId: order.orderId, chargeId: chargeId, amount: order.amount, currencyCode: config.currency.code,
        order: order))
  }
}

extension ProcessOrder.FailureCode {
  /// A remote gateway's card-error code in this vocabulary: its own when it has one here, else card_declined.
  init(gatewayCode: String) {
    switch gatewayCode {
    case "expired_card": self = .expiredCard
    case "processing_error": self = .processingError
    default: self = .cardDeclined
    }
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
