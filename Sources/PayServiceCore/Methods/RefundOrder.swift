/// Gives money back for a paid order: by line (each line's share of what the buyer paid, restocked
/// or not), its shipping, or a goodwill amount. Back office only (`--back-office`).
public enum RefundOrder: OperationMethod {
  public static let name = "refundOrder"

  public static let documentation = MethodDocumentation(
    summary: "Refund a paid order by line (with restock), its shipping, or a goodwill amount.",
    description: """
      Refunds a paid or partially_refunded order. lines refunds units: each line gives back its share of \
      what the buyer paid for it (the coupon and card adjustment taken off and its tax added, allocated \
      exactly), so refunding every unit and the shipping returns exactly the order's amount. restock return \
      or cancel puts the units back on hand in the same transaction; none does not. shipping true adds the \
      shipping and its tax, once per order. amount alone is a goodwill refund (no restock) of up to what \
      remains; amount with lines or shipping may only lower their refund. refundId is the client's \
      idempotency key: the same refundId with the same params returns the stored result and refunds \
      nothing more; with other params it is error -32004. A failure (status failed, failureCode \
      order_not_refundable, refund_exceeds_remaining, quantity_exceeds_remaining, unknown_sku, \
      shipping_already_refunded, amount_exceeds_computed) changes nothing and leaves the refundId unused; \
      refund_declined (the gateway refused) changes nothing and is kept under the refundId.
      """,
    errors: [.storeUnavailable, .orderNotFound, .idempotencyKeyConflict], readOnly: false, idempotent: true,
    destructive: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  /// What happens to refunded units' stock.
  public enum Restock: String, Sendable, WireEnum {
    /// The goods came back: the units are on hand again.
    case `return`
    /// The units were never shipped (cancelled lines): on hand again.
    case cancel
    /// Nothing comes back (damaged, kept by the buyer).
    case none
  }

  /// Units of one order line to refund.
  public struct Line: Equatable, Sendable, WireObject {
    public var sku = ""
    public var quantity = 1
    public var restock = Restock.return

    public static let shape = ObjectShape<Line>(
      blank: { Line() },
      [
        .member("sku", \.sku, .required, .string("A sku of the order.", minLength: 1)),
        .member(
          "quantity", \.quantity, .required,
          .integer("Units to refund.", minimum: CartItem.quantityRange.lowerBound, maximum: CartItem.quantityRange.upperBound),
          read: { value, path, reader in reader.integer(value, path(), range: CartItem.quantityRange) }),
        .member("restock", \.restock),
      ])
  }

  public struct Params: Sendable {
    public var orderId = ""
    public var refundId = ""
    public var lines: [Line]?
    /// Absent means false: a key binds the same params either way.
    public var shipping = false
    public var amount: Amount?
    public var reason: String?
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member("orderId", \.orderId, .required, .string("From processOrder or listOrders.", minLength: 1)),
      .member(
        "refundId", \.refundId, .required,
        BackOffice.keySchema("Your idempotency key for this refund: 1 to 255 printable ASCII characters."),
        read: BackOffice.readKey),
      .member(
        "lines", \.lines, .optional,
        .array(Line.schema, "Units to refund, each sku at most once.", minItems: 1, maxItems: CartItem.maxItems),
        read: readLines),
      .member("shipping", \.shipping, .optional, .boolean("true: also refund the shipping and its tax (once per order).")),
      .member(
        "amount", \.amount, .optional,
        .string(
          "Alone: a goodwill refund of this much. With lines or shipping: refund this much instead of their amount (never more).",
          pattern: MoneyText.pattern)),
      .member(
        "reason", \.reason, .optional, .string("Why, for the order's history (at most 500 characters).", maxLength: 500),
        read: readReason),
    ],
    check: { params, reader in
      let itemized = params.lines != nil || params.shipping
      if !itemized && params.amount == nil {
        reader.fail("", "give lines, shipping: true or an amount to refund")
      } else if !itemized, let amount = params.amount, amount.minor <= 0 {
        reader.fail("amount", "must be more than \(MoneyText.format(0, digits: amount.digits)) for a goodwill refund")
      } else if let amount = params.amount, amount.minor < 0 {
        reader.fail("amount", "must not be negative")
      }
    })

  /// Reads a reason: any text of at most 500 characters.
  static let readReason: MemberReader<String> = { value, path, reader in
    guard let text = reader.string(value, path(), nonEmpty: false) else { return nil }
    guard text.count <= 500 else {
      reader.fail(path(), "must be at most 500 characters, got \(text.count)")
      return nil
    }
    return text
  }

  /// Reads the lines: each sku at most once.
  static let readLines: MemberReader<[Line]> = { value, path, reader in
    guard let lines = [Line].read(value, at: path, reader: reader) else { return nil }
    guard (1...CartItem.maxItems).contains(lines.count) else {
      reader.fail(path(), "must hold 1 to \(CartItem.maxItems) lines, got \(lines.count)")
      return nil
    }
    var seen: Set<String> = []
    for (index, line) in lines.enumerated() where !seen.insert(line.sku).inserted {
      reader.fail("\(path())[\(index)].sku", "sku \"\(line.sku)\" appears more than once; give it once with the total quantity")
      return nil
    }
    return lines
  }

  /// A refund succeeded: the refund and where the order stands now.
  public struct Succeeded: Equatable, Sendable, WireObject {
    public var orderId = ""
    public var refund = RefundRecord()
    public var orderStatus = OrderStatus.partiallyRefunded
    public var amountRefunded = ""
    public var amountRemaining = ""

    public static let shape = ObjectShape<Succeeded>(
      blank: { Succeeded() },
      [
        .constant("status", "succeeded"), .member("orderId", \.orderId), .member("refund", \.refund),
        .member("orderStatus", \.orderStatus),
        .member("amountRefunded", \.amountRefunded, .required, .string("All refunds of the order so far.", pattern: MoneyText.pattern)),
        .member("amountRemaining", \.amountRemaining, .required, .string("What may still be refunded.", pattern: MoneyText.pattern)),
      ])
  }

  public typealias Result = BackOffice.Result<Succeeded>

  public static func operation(_ params: Params, context: ServiceContext) -> Refund {
    Refund(params: params, fingerprint: BackOffice.fingerprint(params, Self.params))
  }

  /// refundOrder as an operation of the journal (kind `refund`, keyed by the refundId). While a
  /// refund waits for its gateway's answer, its money, units and shipping count as refunded for the
  /// order's other refunds, so that none of them can give back what it already may have.
  public struct Refund: BackOfficeOperation, GatewayOperation {
    public typealias Succeeded = RefundOrder.Succeeded

    public static let kind = "refund"

    let params: Params
    public let fingerprint: String
    public var key: String { params.refundId }
    public var subject: String? { params.orderId }

    public func matches(_ stored: String, _ subject: OrderState, context: ServiceContext) throws -> Bool {
      BackOffice.matches(stored, fingerprint, reason: params.reason)
    }
    public var conflict: ServiceError { .idempotencyKeyConflict("refundId") }

    /// The refund decided: what is sent to the order's gateway, and recorded when it is done.
    public struct Call: Sendable, WireObject, GatewayKeyed {
      public var orderId = ""
      var amountMinor = 0
      var lines: [Line] = []
      var shipping = false
      /// The refund as it will be recorded (a remote gateway's answer names its gatewayRefundId).
      var refund = RefundRecord()
      public var paymentId = ""
      public var idempotencyKey = ""

      public static let shape = ObjectShape<Call>(
        blank: { Call() },
        [
          .member("orderId", \.orderId), .member("amountMinor", \.amountMinor), .member("lines", \.lines),
          .member("shipping", \.shipping), .member("refund", \.refund), .member("paymentId", \.paymentId),
          .member("idempotencyKey", \.idempotencyKey),
        ])
    }

    public func prepare(
      _ order: OrderState, _ transaction: any OrderTransaction, context: ServiceContext, now: Int64
    ) throws -> Preparation<Result, Call> {
      // Decided on the order with its pending refunds counted as done; recorded on the order itself.
      var reserved = order
      if try transaction.disputes(orderId: order.orderId).contains(where: {
        DisputeRow.unrefundableStatuses.contains($0.status)
      }) {
        reserved.status = .disputed
      }
      for pending in try BackOffice.pending(Self.kind, as: Call.self, on: order, transaction) {
        reserved.reserve(pending.call)
      }
      var call: Call
      switch try RefundOrder.decide(reserved, params: params, context: context, now: RFC3339.format(now)) {
      case .failed(let failure): return .done(.failed(failure), final: false)
      case .refund(let decided): call = decided
      }
      // The sandbox's refund id; a remote gateway's answer brings its own.
      call.refund.gatewayRefundId = try context.identifiers.gatewayRefundId(orderId: order.orderId, refundId: params.refundId)
      if order.gatewayPaymentId == nil && order.sandboxOutcome == .refundFails {
        return .done(.failed(.refundDeclined, RefundOrder.declined), final: true)
      }
      return try route(call, order, transaction, context: context, now: now)
    }

    public static func sender(_ context: ServiceContext) -> (@Sendable (Call) -> PendingCall<GatewayReply<GatewayRefund>>)? {
      let currencyCode = context.config.currency.code
      return BackOffice.sender(context) { gateway, call in await gateway.refund(request(call, currencyCode)) }
    }

    static func request(_ call: Call, _ currencyCode: String) -> GatewayRefundRequest {
      GatewayRefundRequest(
        paymentId: call.paymentId, amountMinor: Int64(call.amountMinor), currencyCode: currencyCode,
        orderId: call.orderId, refundId: call.refund.refundId, idempotencyKey: call.idempotencyKey)
    }

    public static func work(_ call: Call, context: ServiceContext) -> GatewayWork {
      .refund(request(call, context.config.currency.code))
    }

    public static func settle(
      _ call: Call, reply: GatewayReply<GatewayRefund>, _ order: OrderState, _ transaction: any StoreTransaction,
      context: ServiceContext, now: Int64
    ) throws -> Settlement<Result> {
      if let settlement = BackOffice.settlement(of: reply, context: context, declined: { _ -> Settlement<Result> in .settled(.failed(.refundDeclined, RefundOrder.declined)) }) {
        return settlement
      }
      guard case .succeeded(let gatewayRefund) = reply else {
        return .settled(.failed(.refundDeclined, RefundOrder.declined))
      }
      var call = call
      call.refund.gatewayRefundId = gatewayRefund.id
      switch gatewayRefund.status {
      case .failed, .canceled:
        let name = context.gatewayCalls?.gateway.name ?? "The gateway"
        let why = gatewayRefund.failureReason.map { " (\($0))" } ?? ""
        return .settled(
          .failed(
            .refundDeclined,
            """
            \(name) answered refund \(gatewayRefund.id) as \(gatewayRefund.status.rawValue)\(why): no money went back, and \
            the order is unchanged. Refund the buyer another way, or try again with a new refundId.
            """))
      case .succeeded: call.refund.status = nil
      case .pending: call.refund.status = "pending"
      case .requiresAction: call.refund.status = "requires_action"
      }
      return .settled(try record(call, order, transaction, context: context, now: now))
    }

    /// Records the refund on the order: its lines' units refunded (and restocked), its money, its
    /// event and its document.
    public static func record(
      _ call: Call, _ order: OrderState, _ transaction: any OrderTransaction, context: ServiceContext, now: Int64
    ) throws -> Result {
      let (config, at, amount) = (context.config, RFC3339.format(now), Int64(call.amountMinor))
      for change in call.lines {
        guard let line = order.lines.first(where: { $0.sku == change.sku }) else {
          throw StoreError.unavailable(reason: "order \(order.orderId) has no line \(change.sku)")
        }
        try transaction.setRefundedQuantity(
          orderId: order.orderId, sku: line.sku, to: line.refundedQuantity + change.quantity)
        if change.restock != .none {
          guard try transaction.restock(line.sku, by: change.quantity) else {
            throw StoreError.unavailable(reason: "stock of \(line.sku) cannot take back \(change.quantity) units")
          }
        }
      }
      let captured = order.capturedMinor ?? 0
      let refunded = order.refundedMinor + amount
      guard refunded <= captured else {
        throw StoreError.unavailable(reason: "order \(order.orderId) would be refunded more than was captured")
      }
      let status: OrderStatus = refunded == captured ? .refunded : .partiallyRefunded
      try transaction.updateOrder(
        order.orderId, status: status, capturedMinor: order.capturedMinor, refundedMinor: refunded,
        shippingRefunded: order.shippingRefunded || call.shipping)
      try transaction.insert(
        OrderEventRow(
          orderId: order.orderId, position: order.nextEventPosition, kind: .refunded, at: at, amountMinor: amount,
          reference: call.refund.refundId, reason: call.refund.reason))
      try transaction.insert(
        RefundRow(
          refundId: call.refund.refundId, orderId: order.orderId, position: order.nextEventPosition, createdAt: call.refund.createdAt,
          amountMinor: amount, document: JSONWriter.string(call.refund), gatewayRefundId: call.refund.gatewayRefundId))
      try WalletOrderUpdates.changed(order.orderId, transaction, context: context, now: now)
      return .succeeded(
        Succeeded(
          orderId: order.orderId, refund: call.refund, orderStatus: status, amountRefunded: config.format(refunded),
          amountRemaining: config.format(captured - refunded)))
    }
  }

  static let declined =
    "The gateway declined the refund; the order is unchanged. Refund the buyer another way, or try again with a new refundId."

  enum Decision {
    case failed(BackOffice.Failed)
    case refund(Refund.Call)

    static func failed(_ code: BackOffice.FailureCode, _ message: String, errors: [BackOffice.Problem]? = nil) -> Decision {
      .failed(BackOffice.Failed(failureCode: code, message: message, errors: errors))
    }
  }

  /// Decides the refund on the order as it stands (its pending refunds counted as done): a failure,
  /// or the refund to make.
  static func decide(_ order: OrderState, params: Params, context: ServiceContext, now: String) throws -> Decision {
    let config = context.config
    switch order.status {
    case .pending:
      return .failed(.orderNotRefundable, BackOffice.notAuthorizedMessage(order.status, action: "refunded"))
    case .paid, .partiallyRefunded: break
    case .authorized:
      return .failed(
        .orderNotRefundable,
        "The order is authorized, not captured: capture it with captureOrder first, or cancel it with cancelOrder to release the hold.")
    case .canceled: return .failed(.orderNotRefundable, "The order was canceled: no money was taken, so there is nothing to refund.")
    case .disputed: return .failed(.orderNotRefundable, disputedMessage)
    case .refunded: return .failed(.orderNotRefundable, "The order is fully refunded: nothing remains to refund.")
    }
    let captured = order.capturedMinor ?? 0
    let remaining = captured - order.refundedMinor
    var refund = RefundRecord(refundId: params.refundId, createdAt: now, reason: params.reason)
    var computed: Int64 = 0
    var computedTax: Int64 = 0
    var changes: [(line: OrderState.Line, quantity: Int, restock: Restock)] = []
    if let lines = params.lines {
      var unknown: [BackOffice.Problem] = []
      var excess: [BackOffice.Problem] = []
      for (index, requested) in lines.enumerated() {
        guard let line = order.lines.first(where: { $0.sku == requested.sku }) else {
          unknown.append(
            BackOffice.Problem(
              path: "lines[\(index)].sku",
              message: "sku \"\(requested.sku)\" is not in this order; its skus are \(order.lines.map(\.sku).joined(separator: ", "))"))
          continue
        }
        let left = line.quantity - line.refundedQuantity
        if requested.quantity > left {
          excess.append(
            BackOffice.Problem(
              path: "lines[\(index)].quantity",
              message: "\(line.refundedQuantity) of \(line.quantity) units of \(line.sku) were already refunded; at most \(left) more"))
        }
        changes.append((line, requested.quantity, requested.restock))
      }
      if !unknown.isEmpty {
        return .failed(.unknownSku, "Some lines name a sku that is not in the order.", errors: unknown)
      }
      if !excess.isEmpty {
        return .failed(.quantityExceedsRemaining, "Some lines ask for more units than remain to refund.", errors: excess)
      }
      for change in changes {
        guard let discount = change.line.discountMinor, let tax = change.line.taxMinor else { return .failed(.orderNotRefundable, legacyMessage) }
        let line = change.line
        let net = Allocation.unitsShare(
          line.amountMinor - discount, taking: change.quantity, taken: line.refundedQuantity, of: line.quantity)
        let lineTax = Allocation.unitsShare(tax, taking: change.quantity, taken: line.refundedQuantity, of: line.quantity)
        // With tax included the line's amount holds its tax; otherwise the tax was added to it.
        let gross = order.taxIncluded ? net : net + lineTax
        computed += gross
        computedTax += lineTax
        refund.lines.append(
          RefundRecord.Line(
            sku: line.sku, quantity: change.quantity, restock: change.restock, amount: config.format(gross),
            tax: config.format(lineTax)))
      }
    }
    if params.shipping {
      if order.shippingRefunded {
        return .failed(.shippingAlreadyRefunded, "The shipping of this order was already refunded; leave shipping out.")
      }
      guard let shipping = order.shippingMinor, let shippingTax = order.shippingTaxMinor else {
        return .failed(.orderNotRefundable, legacyMessage)
      }
      let gross = order.taxIncluded ? shipping : shipping + shippingTax
      computed += gross
      computedTax += shippingTax
      refund.shipping = RefundRecord.Shipping(amount: config.format(gross), tax: config.format(shippingTax))
    }
    let itemized = params.lines != nil || params.shipping
    var amount = computed
    if let asked = params.amount?.minor {
      if itemized && asked > computed {
        return .failed(
          .amountExceedsComputed,
          "amount \(config.format(asked)) is more than the \(config.format(computed)) these lines and shipping paid; "
            + "give at most \(config.format(computed)) or leave amount out.")
      }
      amount = asked
    }
    if amount > remaining {
      return .failed(
        .refundExceedsRemaining,
        "This refund is \(config.format(amount)) \(order.currencyCode), but only \(config.format(remaining)) of the "
          + "\(config.format(captured)) captured remains to refund.")
    }
    // The withheld part (a fee kept) comes off the merchandise first: tax refunded is at most the
    // amount, and never more than the lines and shipping charged.
    refund.amount = config.format(amount)
    refund.tax = config.format(itemized ? min(computedTax, amount) : 0)
    if itemized && amount < computed { refund.withheld = config.format(computed - amount) }
    return .refund(
      Refund.Call(
        orderId: order.orderId, amountMinor: Int(amount),
        lines: changes.map { Line(sku: $0.line.sku, quantity: $0.quantity, restock: $0.restock) }, shipping: params.shipping,
        refund: refund))
  }

  static let disputedMessage =
    "The buyer's bank charged this payment back, and a charged-back payment cannot be refunded. Answer the dispute at your gateway; if you lose it, the buyer already has the money back."

  static let legacyMessage =
    "The order was recorded before payservice kept each line's share of the total, so lines and shipping cannot be priced; refund it by amount."
}

extension OrderState {
  /// Counts a refund waiting for its gateway's answer as done: its money, units and shipping.
  mutating func reserve(_ refund: RefundOrder.Refund.Call) {
    refundedMinor += Int64(refund.amountMinor)
    for change in refund.lines {
      if let index = lines.firstIndex(where: { $0.sku == change.sku }) { lines[index].refundedQuantity += change.quantity }
    }
    if refund.shipping { shippingRefunded = true }
  }
}

/// One refund of an order, as refundOrder answers it and getOrder lists it.
public struct RefundRecord: Equatable, Sendable, WireObject {
  /// Refunded units of one line: their share of what the buyer paid, and its tax.
  public struct Line: Equatable, Sendable, WireObject {
    public var sku = ""
    public var quantity = 1
    public var restock = RefundOrder.Restock.return
    public var amount = ""
    public var tax = ""

    public static let shape = ObjectShape<Line>(
      blank: { Line() },
      [
        .member("sku", \.sku), .member("quantity", \.quantity, .required, .integer(minimum: 1)),
        .member("restock", \.restock),
        .member("amount", \.amount, .required, .string("What these units paid, tax included.", pattern: MoneyText.pattern)),
        .member("tax", \.tax, .required, .string("The tax in amount.", pattern: MoneyText.pattern)),
      ])
  }

  /// The refunded shipping: what it cost and its tax.
  public struct Shipping: Equatable, Sendable, WireObject {
    public var amount = ""
    public var tax = ""

    public static let shape = ObjectShape<Shipping>(
      blank: { Shipping() },
      [
        .member("amount", \.amount, .required, .string("The shipping paid, tax included.", pattern: MoneyText.pattern)),
        .member("tax", \.tax, .required, .string("The tax in amount.", pattern: MoneyText.pattern)),
      ])
  }

  public var refundId = ""
  public var createdAt = ""
  public var amount = ""
  public var tax = ""
  public var lines: [Line] = []
  public var shipping: Shipping?
  /// What the lines and shipping paid beyond `amount`, when an amount lowered the refund.
  public var withheld: String?
  public var reason: String?
  public var gatewayRefundId = ""
  /// Where the refund stands at a remote gateway when it is not done: `pending` (Stripe's
  /// `pending`, or a null status) or `requires_action`; `failed` or `canceled` when the gateway
  /// gave it up later; nil (left out) once it succeeded. A refund that failed or was canceled at
  /// once is never recorded (refund_declined).
  public var status: String?
  /// `gateway` for a refund made outside payservice (Stripe's Dashboard) that the gateway reported:
  /// its refundId is the gateway's id, it has no lines and restocked nothing. nil for refundOrder's.
  public var origin: String?

  /// The statuses a recorded refund may show while it counts in amountRefunded.
  public static let unsettledStatuses = ["pending", "requires_action"]
  /// The statuses of a refund that gave no money back after all.
  public static let failedStatuses = ["failed", "canceled"]
  /// `origin` of a refund made outside payservice.
  public static let gatewayOrigin = "gateway"

  public static let shape = ObjectShape<RefundRecord>(
    blank: { RefundRecord() },
    [
      .member("refundId", \.refundId), .member("createdAt", \.createdAt, .required, Shapes.timestamp),
      .member("amount", \.amount, .required, .string("The money given back.", pattern: MoneyText.pattern)),
      .member("tax", \.tax, .required, .string("The tax in amount.", pattern: MoneyText.pattern)),
      .member("lines", \.lines, .required, .array(Line.schema, "The refunded units; empty for a goodwill refund.")),
      .member("shipping", \.shipping, .optional),
      .member(
        "withheld", \.withheld, .optional,
        .string("What the lines and shipping paid beyond amount (a fee kept).", pattern: MoneyText.pattern)),
      .member("reason", \.reason, .optional, .string("The reason given."), read: ParamReader.anyString),
      .member("gatewayRefundId", \.gatewayRefundId),
      .member(
        "status", \.status, .optional,
        .string(
          """
          Present while the gateway has not settled the refund: pending (Stripe's pending, or no status yet) or \
          requires_action; its amount counts in amountRefunded meanwhile. failed or canceled: the gateway gave \
          it up later (a refund_failed event), and its amount is off amountRefunded. Absent once it succeeded.
          """,
          values: unsettledStatuses + failedStatuses)),
      .member(
        "origin", \.origin, .optional,
        .string(
          """
          gateway: a refund made outside payservice (in Stripe's Dashboard) that Stripe reported; its refundId \
          is Stripe's id, and it has no lines and restocked nothing. Absent for refundOrder's refunds.
          """,
          values: [gatewayOrigin])),
    ])

  init(
    refundId: String = "", createdAt: String = "", reason: String? = nil, gatewayRefundId: String = ""
  ) {
    self.refundId = refundId
    self.createdAt = createdAt
    self.reason = reason
    self.gatewayRefundId = gatewayRefundId
  }
}
