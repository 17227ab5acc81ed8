/// What the back-office methods (captureOrder, cancelOrder, refundOrder) share: the client's
/// idempotency key, failure results, and the one transaction each call runs in.
public enum BackOffice {
  /// Why a back-office call did not go through. Apart from `refund_declined` (the gateway's answer,
  /// kept under the key), a failure leaves the key unused: fix the request and send it again.
  public enum FailureCode: String, Sendable, WireEnum {
    /// capture or cancel of an order that is not `authorized`.
    case notAuthorized = "not_authorized"
    case captureExceedsAuthorized = "capture_exceeds_authorized"
    /// refund of an order that is not `paid` or `partially_refunded`, or of lines the store has no
    /// per-line amounts for.
    case orderNotRefundable = "order_not_refundable"
    case refundExceedsRemaining = "refund_exceeds_remaining"
    case quantityExceedsRemaining = "quantity_exceeds_remaining"
    case unknownSku = "unknown_sku"
    case shippingAlreadyRefunded = "shipping_already_refunded"
    /// `amount` with lines or shipping is more than they paid: it may only lower the refund.
    case amountExceedsComputed = "amount_exceeds_computed"
    /// The gateway refused the refund: nothing changed, and the key keeps this answer.
    case refundDeclined = "refund_declined"
    /// The order's remote gateway did not answer: nothing was recorded; the same request (same
    /// key) again finds out what the gateway did, and never does it twice.
    case gatewayUnavailable = "gateway_unavailable"
    /// The order's remote gateway refused the request (its error type and message say why).
    case gatewayError = "gateway_error"

    /// Whether the answer is kept under the key: the gateway was asked and answered.
    var isFinal: Bool { self == .refundDeclined }
  }

  /// One problem with one part of the request (a refund line).
  public struct Problem: Equatable, Sendable, WireObject {
    public var path = ""
    public var message = ""

    public static let shape = ObjectShape<Problem>(
      blank: { Problem() },
      [
        .member("path", \.path, .required, .string("The params member, like lines[1].quantity.")),
        .member("message", \.message, .required, .string("What is wrong and what would be valid."), read: ParamReader.anyString),
      ])
  }

  /// A back-office call that did not go through, and why.
  public struct Failed: Equatable, Sendable, WireObject, FailureReporting {
    public var failureCode = FailureCode.notAuthorized
    public var message = ""
    public var errors: [Problem]?

    public static let shape = ObjectShape<Failed>(
      blank: { Failed() },
      [
        .constant("status", "failed"), .member("failureCode", \.failureCode),
        .member("message", \.message, .required, .string("Why, and what would be valid."), read: ParamReader.anyString),
        .member("errors", \.errors, .optional, .array(Problem.schema, "Each refund line that is not valid.")),
      ])

    public var report: ResultFailure {
      ResultFailure(
        status: "failed", code: failureCode.rawValue, message: message,
        lines: (errors ?? []).map { "\($0.path): \($0.message)" })
    }
  }

  /// A back-office answer: the method's success, or a failure.
  public typealias Result<Succeeded: WireObject & Equatable & Sendable> = Outcome<Succeeded, Failed>

  /// The schema of a client's idempotency key.
  static func keySchema(_ description: String) -> JSONSchema {
    .string(description, pattern: "^[\\x20-\\x7E]{1,255}$")
  }

  /// Reads an idempotency key: 1 to 255 printable ASCII characters (space to tilde).
  static let readKey: MemberReader<String> = { value, path, reader in
    guard case .string(let key) = value else {
      reader.fail(path(), "must be a string of 1 to 255 printable ASCII characters, got \(value.kindName)")
      return nil
    }
    guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
      reader.fail(path(), "must be 1 to 255 printable ASCII characters (space to ~), like \"refund-1001-a\"")
      return nil
    }
    return key
  }

  /// Reads an amount that must be more than zero.
  static func readPositiveAmount(_ what: String) -> MemberReader<Amount> {
    { value, path, reader in
      guard let amount = Amount.read(value, at: path, reader: reader) else { return nil }
      guard amount.minor > 0 else {
        reader.fail(path(), "must be more than \(MoneyText.format(0, digits: amount.digits)); \(what)")
        return nil
      }
      return amount
    }
  }

  /// Runs one back-office call on one order in one transaction: the order is locked, a key used
  /// before answers with its stored result (the same params) or error -32004 (other params), and
  /// otherwise `body` decides. A success (or a gateway's refusal) is stored under the key in the
  /// same transaction as everything `body` wrote, so it is durable before it is answered, and a
  /// replay after a crash finds it.
  ///
  /// - Parameters:
  ///   - kind: the key space ("capture", "cancel", "refund").
  ///   - keyName: the params member holding the key, for the conflict error.
  ///   - fingerprint: the params as canonical JSON text.
  static func run<Succeeded>(
    kind: String, keyName: String, key: String, orderId: String, fingerprint: String, context: ServiceContext,
    _ body: (OrderState, any StoreTransaction, _ now: String) throws -> Result<Succeeded>
  ) throws -> Result<Succeeded> {
    let now = RFC3339.format(context.clock.now())
    return try context.store.write { transaction in
      guard let order = try transaction.lockOrder(orderId) else { throw ServiceError.orderNotFound(orderId) }
      if let stored = try transaction.backOfficeRequest(kind: kind, key: key) {
        guard stored.fingerprint == fingerprint else { throw ServiceError.idempotencyKeyConflict(keyName) }
        return try StoredJSON.read(stored.result, as: Result<Succeeded>.self, "\(kind) result")
      }
      let result = try body(order, transaction, now)
      guard result.isFinal else { return result }
      let stored = BackOfficeRequestRow(
        kind: kind, key: key, orderId: orderId, fingerprint: fingerprint, result: JSONWriter.string(result),
        createdAt: now)
      // Another process stored the key meanwhile (for another order: the same order's calls take
      // turns on its lock). Throwing undoes everything `body` wrote.
      guard try transaction.insert(stored) else { throw ServiceError.idempotencyKeyConflict(keyName) }
      return result
    }
  }

  /// The params as canonical JSON text: what a key is bound to.
  static func fingerprint<Params>(_ params: Params, _ shape: ObjectShape<Params>) -> String {
    var writer = JSONWriter()
    shape.write(params, to: &writer)
    return writer.string
  }

  /// Why an order in `status` cannot be captured or canceled.
  static func notAuthorizedMessage(_ status: OrderStatus, action: String) -> String {
    switch status {
    case .authorized: return "The order is authorized."
    case .paid, .partiallyRefunded, .refunded:
      return "The order was already captured (status \(status.rawValue)); it cannot be \(action). Refund it with refundOrder."
    case .canceled: return "The order was canceled; its authorization was released and nothing can be \(action)."
    case .pending:
      return "The order is pending: its payment's answer is not recorded yet. Send its processOrder again first."
    }
  }

  /// What the order's gateway did with a back-office call.
  enum GatewayStep<Value: Sendable> {
    /// The order was charged by the sandbox: the store alone decides.
    case sandbox
    case done(Value)
    /// The gateway declined it (a refund the card's issuer refused).
    case declined(String)
    case failed(Failed)
  }

  /// Asks the remote gateway an order was charged through to move its money, under an
  /// idempotency key derived from the client's key: the same request after a lost answer or a
  /// crash (whose transaction was rolled back) is the same call, which the gateway does once.
  /// The order stays locked meanwhile, so calls on one order take turns.
  static func callGateway<Value: Sendable>(
    _ order: OrderState, kind: String, keyName: String, key: String, context: ServiceContext,
    _ call: @escaping @Sendable (any RemoteGateway, _ paymentId: String, _ idempotencyKey: String) async -> GatewayReply<Value>
  ) throws -> GatewayStep<Value> {
    guard let paymentId = order.gatewayPaymentId else { return .sandbox }
    guard let calls = context.gatewayCalls else {
      return .failed(
        Failed(
          failureCode: .gatewayUnavailable,
          message: "This order was charged through a remote gateway, and this payservice has none (gateway.kind is sandbox)."))
    }
    let idempotencyKey = Identifiers.backOfficeIdempotencyKey(kind: kind, orderId: order.orderId, key: key)
    let name = calls.gateway.name
    switch calls.run({ gateway in await call(gateway, paymentId, idempotencyKey) }) {
    case .succeeded(let value): return .done(value)
    case .declined(let decline): return .declined(decline.message)
    case .refused(let refusal) where refusal.type == "idempotency_error":
      // The gateway holds this key for a call with other params: the client reused its key.
      throw ServiceError.idempotencyKeyConflict(keyName)
    case .refused(let refusal):
      return .failed(
        Failed(failureCode: .gatewayError, message: "\(name) refused the request (\(refusal.type)): \(refusal.message)"))
    case .unanswered(let reason):
      return .failed(
        Failed(
          failureCode: .gatewayUnavailable,
          message: "\(name) did not answer (\(reason)). Nothing was recorded: send the same request again; it is never done twice."))
    }
  }
}

extension Outcome where Failed == BackOffice.Failed {
  static func failed(_ code: BackOffice.FailureCode, _ message: String, errors: [BackOffice.Problem]? = nil) -> Outcome {
    .failed(BackOffice.Failed(failureCode: code, message: message, errors: errors))
  }

  /// Whether the answer is kept under the client's key: a success, or the gateway's final refusal.
  var isFinal: Bool {
    switch self {
    case .succeeded: return true
    case .failed(let failed): return failed.failureCode.isFinal
    }
  }
}
