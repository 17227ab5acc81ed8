import Foundation
import PayServiceCore

/// The clock, the event feed, balance transactions, and what happens outside the API (the
/// Dashboard, the card networks): see the list in `StripeTestServer`'s documentation.
extension StripeTestServer {
  // MARK: - Clock

  /// Fixes the clock every `created` and every timestamp the server makes comes from, in Unix
  /// seconds; nil (the default) is the wall clock. The same requests with the same clock give the
  /// same bytes.
  public func setClock(_ unixSeconds: Int64?) {
    core.state.withLock { $0.ledger.clock = unixSeconds }
  }

  /// Moves the clock on by `seconds` (from the wall clock's now when it was not fixed, which fixes it).
  public func advanceClock(seconds: Int64) {
    core.state.withLock { $0.ledger.clock = $0.ledger.now + seconds }
  }

  // MARK: - Events

  /// An Event the server made: `payload` is its exact JSON text, as Stripe POSTs it to a webhook endpoint.
  public struct Event: Sendable, Equatable {
    public var id: String
    public var type: String
    public var created: Int64
    public var payload: String
  }

  /// Every event made so far, oldest first.
  public func events() -> [Event] {
    core.state.withLock { state in
      state.ledger.events.map { Event(id: $0.id, type: $0.type, created: $0.created, payload: $0.payload) }
    }
  }

  /// The delivery Stripe would make of an event to an endpoint signing with `secret` at
  /// `timestamp`: the body, and its `Stripe-Signature` header. Nil for an unknown event.
  public func delivery(of eventID: String, secret: String, at timestamp: Int64) -> (
    payload: String, signature: String
  )? {
    let payload = core.state.withLock { state in
      state.ledger.eventIndex[eventID].map { state.ledger.events[$0].payload }
    }
    guard let payload else { return nil }
    return (payload, StripeWebhookSignature.header(payload: payload, secret: secret, timestamp: timestamp))
  }

  // MARK: - Balance transactions

  /// A movement of money, as its balance transaction shows it (`fee` 0 and `net` = `amount`).
  public struct BalanceTransaction: Sendable, Equatable {
    public var id: String
    /// `charge`, `refund`, `refund_failure` or `adjustment`.
    public var type: String
    /// `charge`, `refund`, `refund_failure`, `dispute` or `dispute_reversal`.
    public var reportingCategory: String
    /// Positive into the balance, negative out of it.
    public var amount: Int64
    public var currency: String
    public var created: Int64
    /// The charge, refund or dispute that moved the money.
    public var source: String
  }

  /// Every balance transaction so far, oldest first.
  public func balanceTransactions() -> [BalanceTransaction] {
    core.state.withLock { state in
      state.ledger.balanceTransactionOrder.map { id in
        let transaction = state.ledger.balanceTransactions[id]!
        return BalanceTransaction(
          id: transaction.id, type: transaction.type, reportingCategory: transaction.reportingCategory,
          amount: transaction.amount, currency: transaction.currency, created: transaction.created,
          source: transaction.source)
      }
    }
  }

  // MARK: - The Dashboard and the card networks

  /// Refunds `amount` (default: what remains) of the PaymentIntent's captured charge as the Dashboard
  /// does: `succeeded` at once, `metadata` {}, `reason` null, the charge's `amount_refunded` up.
  /// Events `refund.created`, `charge.refunded`. The refund's id, or nil when the PaymentIntent has
  /// no captured charge, the charge was charged back, or `amount` is not 1…what remains.
  @discardableResult
  public func refundFromDashboard(paymentIntent: String, amount: Int64? = nil) -> String? {
    core.state.withLock { $0.ledger.refundFromDashboard(paymentIntent, amount: amount) }
  }

  /// A refund that had moved money (`succeeded`, `pending`, `requires_action`, or a null status)
  /// fails as a card network fails one: `failed` with `failure_reason` and a
  /// `failure_balance_transaction` (`refund_failure`, the money back), the charge's
  /// `amount_refunded` down. Events `refund.failed`, `refund.updated`, `charge.refund.updated`.
  /// False when it is already `failed` or `canceled`, or unknown.
  @discardableResult
  public func failRefund(_ id: String, reason: String = "expired_or_canceled_card") -> Bool {
    core.state.withLock { $0.ledger.failRefund(id, reason: reason) }
  }

  /// Opens a dispute on the PaymentIntent's captured charge (https://docs.stripe.com/disputes/api):
  /// `amount` (default: the captured amount less refunds), `reason` (one of Stripe's dispute
  /// reasons), status `needs_response` with the funds withdrawn at once (an `adjustment` balance
  /// transaction, `reporting_category` `dispute`), or for an inquiry `warning_needs_response` with
  /// nothing withdrawn; `evidence_details.due_by` is the end (23:59:59 UTC) of the day 7 days after.
  /// The charge becomes `disputed`, and (not for an inquiry) refunds of it are refused
  /// (`charge_disputed`). Events `charge.dispute.created`, then (not for an inquiry)
  /// `charge.dispute.funds_withdrawn`. The dispute's id (`dp_test000001`), or nil when there is no
  /// captured charge, the charge already has a dispute, the reason is unknown or the amount is not
  /// 1…what remains.
  @discardableResult
  public func openDispute(
    paymentIntent: String, reason: String = "fraudulent", amount: Int64? = nil, inquiry: Bool = false
  ) -> String? {
    core.state.withLock { $0.ledger.openDispute(paymentIntent, reason: reason, amount: amount, inquiry: inquiry) }
  }

  /// Moves an open dispute to `status`: `under_review` (a dispute) or `warning_under_review` (an
  /// inquiry), or back to `needs_response`/`warning_needs_response`. Event
  /// `charge.dispute.updated` (`previous_attributes` the old status). False for a closed or unknown
  /// dispute, a status of the other kind, or its current status.
  @discardableResult
  public func updateDispute(_ id: String, status: String) -> Bool {
    core.state.withLock { $0.ledger.updateDispute(id, status: status) }
  }

  /// Closes an open dispute: `won`, its funds reinstated (an `adjustment` balance transaction,
  /// `reporting_category` `dispute_reversal`), or `lost`; an inquiry becomes `warning_closed` either
  /// way and moves no money. Events `charge.dispute.closed`, then for a won dispute
  /// `charge.dispute.funds_reinstated`. False when already closed, or unknown.
  @discardableResult
  public func closeDispute(_ id: String, won: Bool) -> Bool {
    core.state.withLock { $0.ledger.closeDispute(id, won: won) }
  }
}
