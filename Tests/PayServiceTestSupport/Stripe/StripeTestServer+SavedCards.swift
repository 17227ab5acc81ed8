import Foundation

/// Cards kept for later (StripeTestLedger+SavedCards.swift): what the card's holder and the card
/// networks do outside the API, and what a test counts.
extension StripeTestServer {
  // MARK: - The card networks and the card's holder

  /// Makes the Customer's next `count` off-session PaymentIntents (`off_session=true`) fail with a
  /// card error, whatever their card: `code` (`card_declined`, `expired_card`, …) and `declineCode`
  /// (`insufficient_funds`, `generic_decline`, …; nil for none), with the message Stripe gives it,
  /// HTTP 402, the PaymentIntent back to `requires_payment_method` with its `last_payment_error`
  /// and the charge failed (`charge.failed`, `payment_intent.payment_failed`), as a decline by the
  /// card's bank. Queued after any still pending for the Customer.
  public func declineNextOffSessionCharges(
    customer: String, code: String = "card_declined", declineCode: String? = "insufficient_funds", count: Int = 1
  ) {
    core.state.withLock {
      $0.ledger.declineNextOffSessionCharges(customer: customer, code: code, declineCode: declineCode, count: count)
    }
  }

  /// Detaches the PaymentMethod from its Customer as `POST /v1/payment_methods/{id}/detach` does
  /// (the customer removing the card elsewhere): never charged again, event
  /// `payment_method.detached`. False when it is unknown or attached to no Customer.
  @discardableResult
  public func detachPaymentMethod(_ id: String) -> Bool {
    core.state.withLock { state in
      if case .success = state.ledger.detachPaymentMethod(id) { return true }
      return false
    }
  }

  /// The holder of a SetupIntent's card completes the authentication it waits for
  /// (`requires_action`), as Stripe.js would let them: `succeeded` (set up for off-session
  /// payments and attached to its Customer; `setup_intent.succeeded`, `payment_method.attached`),
  /// or, when not `succeeded`, fails it (`requires_payment_method`, `last_setup_error`
  /// `setup_intent_authentication_failure`; `setup_intent.setup_failed`). False when it is not
  /// waiting.
  @discardableResult
  public func authenticateSetupIntent(_ id: String, succeeded: Bool = true) -> Bool {
    core.state.withLock { $0.ledger.authenticateSetupIntent(id, succeeded: succeeded) }
  }

  /// Ends a SetupIntent in `processing` (this server's `processing` card): `succeeded` (the card
  /// set up and attached), or back to `requires_payment_method` with a `card_declined`
  /// `last_setup_error`. False when it is not processing.
  @discardableResult
  public func settleProcessing(setupIntent id: String, succeeded: Bool) -> Bool {
    core.state.withLock { $0.ledger.settleSetupIntent(id, succeeded: succeeded) }
  }

  // MARK: - Inspection

  /// A PaymentIntent as made, for counting charges: its state now, and what its request asked.
  public struct PaymentIntentRecord: Sendable, Equatable {
    public var id: String
    public var amount: Int64
    public var currency: String
    public var status: String
    public var captureMethod: String
    public var customer: String?
    /// Its PaymentMethod now (Stripe clears it when a payment fails).
    public var paymentMethod: String?
    public var setupFutureUsage: String?
    /// Confirmed with `off_session=true`.
    public var offSession: Bool
    public var metadata: [String: String]
    public var idempotencyKey: String?
    public var created: Int64
  }

  /// A SetupIntent as made.
  public struct SetupIntentRecord: Sendable, Equatable {
    public var id: String
    public var status: String
    public var customer: String?
    public var paymentMethod: String?
    public var usage: String
    public var metadata: [String: String]
    public var idempotencyKey: String?
    public var created: Int64
  }

  /// A Customer as made.
  public struct CustomerRecord: Sendable, Equatable {
    public var id: String
    public var metadata: [String: String]
    public var email: String?
    public var name: String?
    public var created: Int64
  }

  /// Every PaymentIntent made (executed, not replayed; declined ones included), in creation order.
  public func paymentIntentRecords() -> [PaymentIntentRecord] {
    core.state.withLock { state in
      state.ledger.paymentIntentOrder.map { id in
        let intent = state.ledger.paymentIntents[id]!
        return PaymentIntentRecord(
          id: id, amount: intent.amount, currency: intent.currency, status: intent.status,
          captureMethod: intent.captureMethod, customer: intent.customer, paymentMethod: intent.paymentMethod,
          setupFutureUsage: intent.setupFutureUsage, offSession: intent.offSession,
          metadata: Dictionary(intent.metadata.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 }),
          idempotencyKey: intent.idempotencyKey, created: intent.created)
      }
    }
  }

  /// The PaymentIntents whose `metadata[agreement_id]` is `agreementId`, in creation order.
  public func paymentIntents(agreementId: String) -> [PaymentIntentRecord] {
    paymentIntentRecords().filter { $0.metadata["agreement_id"] == agreementId }
  }

  /// Every SetupIntent made (executed, not replayed), in creation order.
  public func setupIntentRecords() -> [SetupIntentRecord] {
    core.state.withLock { state in
      state.ledger.setupIntentOrder.map { id in
        let intent = state.ledger.setupIntents[id]!
        return SetupIntentRecord(
          id: id, status: intent.status, customer: intent.customer, paymentMethod: intent.paymentMethod,
          usage: intent.usage, metadata: Dictionary(intent.metadata.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 }),
          idempotencyKey: intent.idempotencyKey, created: intent.created)
      }
    }
  }

  /// The SetupIntents whose `metadata[agreement_id]` is `agreementId`, in creation order.
  public func setupIntents(agreementId: String) -> [SetupIntentRecord] {
    setupIntentRecords().filter { $0.metadata["agreement_id"] == agreementId }
  }

  /// Every Customer made (executed, not replayed), in creation order.
  public func customerRecords() -> [CustomerRecord] {
    core.state.withLock { state in
      state.ledger.customerOrder.map { id in
        let customer = state.ledger.customers[id]!
        return CustomerRecord(
          id: id, metadata: Dictionary(customer.metadata.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 }),
          email: customer.email, name: customer.name, created: customer.created)
      }
    }
  }

  /// Customers created by `POST /v1/customers` (executed, not replayed) with this Idempotency-Key.
  public func customersCreated(idempotencyKey: String) -> Int {
    core.state.withLock { $0.ledger.customersPerIdempotencyKey[idempotencyKey] ?? 0 }
  }

  /// SetupIntents created (executed, not replayed; failed ones included) with this Idempotency-Key.
  public func setupIntentsCreated(idempotencyKey: String) -> Int {
    core.state.withLock { $0.ledger.setupIntentsPerIdempotencyKey[idempotencyKey] ?? 0 }
  }

  /// The Customer a PaymentMethod is attached to; nil when none (or unknown).
  public func paymentMethodCustomer(_ id: String) -> String? {
    core.state.withLock { $0.ledger.paymentMethods[id]?.customer }
  }

  /// Whether a PaymentMethod is set up for off-session payments (see `StripeTestCard.Outcome`).
  public func paymentMethodSetUpForOffSession(_ id: String) -> Bool {
    core.state.withLock { $0.ledger.paymentMethods[id]?.setUpForOffSession ?? false }
  }

  /// A SetupIntent as stored, flattened for assertions: `id`, `status`, `usage`, `customer` and
  /// `payment_method` when set, and one `metadata[KEY]` entry per metadata key. Nil for an unknown id.
  public func setupIntent(_ id: String) -> [String: String]? {
    core.state.withLock { state in
      guard let intent = state.ledger.setupIntents[id] else { return nil }
      var fields = ["id": intent.id, "status": intent.status, "usage": intent.usage]
      fields["customer"] = intent.customer
      fields["payment_method"] = intent.paymentMethod
      for entry in intent.metadata { fields["metadata[\(entry.key)]"] = entry.value }
      return fields
    }
  }
}
