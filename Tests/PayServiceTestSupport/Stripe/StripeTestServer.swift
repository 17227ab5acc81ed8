import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// A local stand-in for api.stripe.com, written from Stripe's API reference: HTTP/1.1 over real
/// TLS on 127.0.0.1, so that a real HTTPS client (AsyncHTTPClient trusting `caCertificatePEM`)
/// talks to it exactly as it would to Stripe.
///
/// It serves, with Stripe's state machine and error objects:
/// - `POST /v1/payment_intents` (create, with `confirm=true` to charge a test card),
///   `POST /v1/payment_intents/{id}/capture`, `POST /v1/payment_intents/{id}/cancel`,
///   `POST /v1/refunds`;
/// - `POST /v1/tokens` with `pk_token`: a card token from an Apple Pay token, as Stripe's mobile
///   SDKs create one (see below);
/// - `POST /v1/payment_methods` with `type=card` and `card[token]`: a PaymentMethod made from a token,
///   the documented way (a PaymentIntent with `payment_method_data[card]`, which Stripe's OpenAPI
///   description does not have, is 400 `parameter_unknown`);
/// - `GET /v1/payment_intents/search` with `query=metadata['KEY']:'VALUE'` (Stripe's search_result;
///   `expand[]=data.latest_charge`);
/// - and, for reconciliation, `GET /v1/payment_intents/{id}` (with `expand[]=latest_charge`),
///   `GET /v1/refunds/{id}`, `GET /v1/charges/{id}`; `GET /v1/tokens/{id}` and
///   `GET /v1/payment_methods/{id}` for the card behind a token or PaymentMethod;
/// - `GET /v1/events/{id}`, `GET /v1/disputes/{id}`, `GET /v1/balance_transactions/{id}`;
/// - cards kept for later (StripeTestLedger+SavedCards.swift): `POST /v1/customers` and
///   `GET /v1/customers/{id}`; PaymentIntents with `customer` and `setup_future_usage` (the
///   PaymentMethod attached to the Customer once the payment succeeds) and with `off_session=true`
///   (a PaymentMethod attached to that Customer; off-session outcomes of Stripe's "Authentication
///   and setup" cards, `chargeCustomerFail`, and `declineNextOffSessionCharges`);
///   `POST /v1/setup_intents`, `GET /v1/setup_intents/{id}`; `POST /v1/payment_methods/{id}/attach`
///   and `/detach`;
/// - lists, as Stripe pages them (https://docs.stripe.com/api/pagination): `GET /v1/payment_intents`
///   (`expand[]=data.latest_charge`), `GET /v1/refunds` (`charge`, `payment_intent`),
///   `GET /v1/disputes` (`charge`, `payment_intent`), `GET /v1/setup_intents` (`customer`,
///   `payment_method`), `GET /v1/events` (`type`, with `*` as a
///   wildcard, or `types[]`), `GET /v1/balance_transactions` (`type`, `source`, `currency`), each with
///   `created` or `created[gt|gte|lt|lte]`, `limit` (1…100, default 10; else 400
///   `invalid_request_error`), and one of `starting_after`/`ending_before` (an unknown id is 400
///   `resource_missing`): `{"object": "list", "data": […], "has_more": …, "url": "/v1/refunds"}`,
///   newest first (for the same `created`, the later-made first). An unknown parameter is 400
///   `parameter_unknown`.
///
/// The clock (`setClock`, `advanceClock`; the wall clock by default) gives every `created` and
/// every timestamp: the same requests with the same clock give the same bytes.
///
/// Events (https://docs.stripe.com/api/events/object): every state change appends one Event
/// (`evt_test000001`, `api_version` 2024-06-20, `pending_webhooks` 1, `data.object` as `GET`
/// shows the object then, `data.previous_attributes` for `*.updated` events, `request` the
/// `Request-Id` and `Idempotency-Key` of the API request that caused it, or nulls for a control-API
/// change and for what Stripe does "some time later"). `events()` has each one's exact JSON text,
/// `delivery(of:secret:at:)` signs it as Stripe signs a webhook delivery. In order, per action:
/// - a charge: `charge.succeeded`, then `payment_intent.succeeded` (manual capture:
///   `payment_intent.amount_capturable_updated`); declined: `charge.failed`,
///   `payment_intent.payment_failed`; `payment_intent.processing`; `payment_intent.requires_action`;
/// - capture: `charge.captured`, `payment_intent.succeeded`; cancel or `expireAuthorization`:
///   `payment_intent.canceled`; `settleProcessing`: as a charge;
/// - a refund (API or `refundFromDashboard`): `refund.created`, then `charge.refunded` (the charge,
///   with `amount_refunded`, without `refunds` as since API 2022-11-15) unless it moved no money
///   (canceled, or failed at once: then `refund.failed`); a refund that fails later
///   (`failRefund`, the `refundFail` card): `refund.failed`, `refund.updated`,
///   `charge.refund.updated`; a pending or null-status refund that succeeds: `refund.updated`,
///   `charge.refund.updated`;
/// - a Customer: `customer.created`; a SetupIntent: `setup_intent.created`, then
///   `setup_intent.succeeded` (and `payment_method.attached` when it has a Customer),
///   `setup_intent.requires_action` or `setup_intent.setup_failed`; a PaymentIntent that keeps its
///   card: `payment_method.attached` after its own; a detach: `payment_method.detached`;
/// - `openDispute`: `charge.dispute.created`, `charge.dispute.funds_withdrawn` (not for an inquiry);
///   `updateDispute`: `charge.dispute.updated`; `closeDispute`: `charge.dispute.closed`, then when
///   won `charge.dispute.funds_reinstated`.
/// Other events Stripe makes (`payment_intent.created`, `charge.pending`, `charge.updated`, …) are
/// not made here.
///
/// Balance transactions (https://docs.stripe.com/api/balance_transactions/object), one per movement
/// of money: a charge captured (`charge`, +), a refund (`refund`, −), a refund failed later
/// (`refund_failure`, +), a dispute's withdrawal (`adjustment`, `reporting_category` `dispute`, −)
/// and reinstatement (`adjustment`, `dispute_reversal`, +). The test server takes no fees: `fee` is
/// 0, `fee_details` empty and `net` the amount, and funds are `available` at once (`available_on`
/// is `created`). Charges and refunds name theirs in `balance_transaction`, a dispute lists its own
/// in full in `balance_transactions`.
///
/// Statuses Stripe's spec allows, each on demand: `pm_card_authenticationRequired` (Stripe's 3-D
/// Secure card) is declined `authentication_required` when confirmed with
/// `error_on_requires_action=true`, else left `requires_action`; this server's own cards
/// `processing` (the PaymentIntent stays `processing` until `settleProcessing`),
/// `refundRequiresAction`, `refundCanceled`, `refundNoStatus` (a null refund status, then
/// `succeeded`) and `refundFailsAtOnce` (answered `failed`); a manual-capture charge carries
/// `payment_method_details.card.capture_before` (7 days after it), and `expireAuthorization` cancels
/// the PaymentIntent as Stripe does then; `Fault.serverErrorStored` saves a 500 under the key.
///
/// Authentication is `Authorization: Bearer <secretKey>` or HTTP Basic with the key as the
/// username. POSTs honour `Idempotency-Key` the way Stripe's API v1 does
/// (https://docs.stripe.com/api/idempotent_requests): the status and body are saved once the
/// endpoint begins executing and replayed byte for byte with `Idempotent-Replayed: true`.
///
/// Card outcomes follow Stripe's test tokens and PaymentMethods (https://docs.stripe.com/testing):
/// `tok_visa`, `pm_card_visa`, `tok_mastercard`, … succeed; `tok_chargeDeclined`,
/// `pm_card_visa_chargeDeclinedInsufficientFunds`, `tok_chargeDeclinedExpiredCard`, … decline with
/// HTTP 402; `tok_refundFail`/`pm_card_refundFail` charge, and their refunds start `succeeded`
/// then become `failed` (right after the refund request is answered); `tok_pendingRefund` refunds
/// start `pending` then become `succeeded`. A `tok_…` is single-use (see `setSingleUseTokens`).
///
/// Apple Pay tokens (`POST /v1/tokens`): the form carries `pk_token`, the JSON text of
/// `PKPaymentToken.paymentData`, with `pk_token_instrument_name`, `pk_token_payment_network` and
/// `pk_token_transaction_id` (the parameters Stripe's iOS and Android SDKs send). `pk_token` must
/// be a JSON object with `version` `EC_v1` or `RSA_v1`, non-empty `data` and `signature` strings,
/// and a `header` object with a non-empty `transactionId`; otherwise, or without `pk_token`, the
/// answer is 400 `invalid_request_error` with `param` `pk_token` (nothing executed or saved). The
/// server holds no processing key and decrypts nothing: the token's card is chosen from the form.
/// - `pk_token_instrument_name` naming one of the test cards exactly (`visa_debit`, `amex`,
///   `chargeDeclined`, `visa_chargeDeclinedInsufficientFunds`, `refundFail`, …: the names of
///   `tok_<name>`) makes the token that card: its brand, funding and last4, and its outcome when a
///   PaymentIntent charges it (a declining card is declined there, with HTTP 402, as `tok_<name>`).
/// - Any other instrument name ("Visa 4320", as Apple Pay shows a card) makes it the credit card of
///   `pk_token_payment_network`, compared case-insensitively (`visa`, `masterCard`, `amex`,
///   `discover`, `JCB`, `chinaUnionPay`), which charges. A network without a test card
///   (`privateLabel`, `interac`, …) or none is 400 with `param` `pk_token_payment_network`.
/// The answer is Stripe's token object: `id` `tok_test000001` (counted like the other ids), `object`
/// `token`, `type` `card`, `used`, `livemode` false, and `card` with `brand` spelled for people
/// ("Visa", "MasterCard", "American Express"), `funding`, `last4` and `tokenization_method`
/// `apple_pay`. The token becomes a PaymentMethod once (`POST /v1/payment_methods` with
/// `card[token]`), like a test token. POSTs to `/v1/tokens` honour `Idempotency-Key` like every POST: the same key and form
/// answer the same token again, with `Idempotent-Replayed: true`.
///
/// IDs are deterministic per server, in creation order: `pi_test000001`, `ch_test000001`,
/// `cus_test000001`, `seti_test000001`,
/// `re_test000001`, `pm_test000001` (one PaymentMethod per confirmed test card), `tok_test000001`
/// and `card_test000001` (one per token made from an Apple Pay token), `evt_test000001`,
/// `txn_test000001`, `dp_test000001`, and
/// `req_test000001` for the `Request-Id` of each request received.
public final class StripeTestServer: Sendable {
  public let secretKey: String
  public let port: Int
  /// "https://127.0.0.1:PORT"
  public var baseURL: String { "https://127.0.0.1:\(port)" }
  /// The certificate authority (PEM) that issued the server's certificate: the only root a
  /// client needs to trust.
  public let caCertificatePEM: String

  let listener: TestHTTPSListener
  let core: StripeServerCore

  /// Starts listening on 127.0.0.1, an ephemeral port, TLS with a fresh self-signed CA and leaf
  /// certificate (leaf SAN: DNS "localhost" and IP 127.0.0.1), on its own one-thread
  /// `MultiThreadedEventLoopGroup`.
  public init(secretKey: String = "sk_test_payservice_4eC39HqLyjWDarjtT1zdp7dc") throws {
    self.secretKey = secretKey
    let certificate = try TestTLSCertificate(caName: "payservice Stripe test server CA")
    caCertificatePEM = certificate.caPEM
    let core = StripeServerCore(secretKey: secretKey)
    self.core = core
    listener = try TestHTTPSListener(tls: try certificate.serverContext(), backlog: 256) { operations, closer in
      try operations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: true)
      try operations.addHandler(StripeHTTPHandler(core: core, closer: closer))
    }
    port = listener.port
  }

  deinit { shutdown() }

  /// Writes the CA certificate to `directory/stripe-test-ca.pem` and returns that path.
  public func writeCACertificate(to directory: URL) throws -> String {
    let url = directory.appendingPathComponent("stripe-test-ca.pem")
    try caCertificatePEM.write(to: url, atomically: true, encoding: .utf8)
    return url.path
  }

  /// Added latency before every response (for benchmarks), scheduled on the event loop: default 0.
  public func setLatency(milliseconds: Int) {
    core.state.withLock { $0.latencyMilliseconds = max(0, milliseconds) }
  }

  /// The most answers that ever waited out the latency at once: how many calls overlapped.
  public var peakDelayedAnswers: Int { core.state.withLock { $0.peakDelayedAnswers } }

  /// Whether a test token (`tok_…`) used once is refused afterwards with `token_already_used`, as
  /// Stripe does with tokens (default true). Test PaymentMethods (`pm_card_…`) are always reusable.
  public func setSingleUseTokens(_ enabled: Bool) {
    core.state.withLock { $0.ledger.singleUseTokens = enabled }
  }

  /// Queues `fault` for the next request that matches `route` (FIFO among the faults a request
  /// matches). A request takes at most one fault, once it is authenticated and its URL is known.
  public func inject(_ fault: Fault, on route: Route = .any) {
    core.state.withLock { $0.faults.append((route, fault)) }
  }

  /// Stops listening, closes every connection and shuts the event loop group down. Idempotent.
  /// Call it from a thread that is not the server's event loop (any test thread will do).
  public func shutdown() {
    listener.shutdown()
  }


  /// Which requests a fault applies to.
  public enum Route: Sendable, Equatable {
    case any, createPaymentIntent, capture, cancel, refund, createToken, createPaymentMethod
    case createCustomer, createSetupIntent, attachPaymentMethod, detachPaymentMethod
  }

  /// How a stored-server-error fault answers: Stripe saves an endpoint's 500 under the
  /// idempotency key like any answer it began executing, and replays it for the key
  /// (`Idempotent-Replayed: true`).
  public enum StoredServerError: Sendable, Equatable {
    /// Nothing is executed (no PaymentIntent made, nothing charged); the 500 is saved.
    case withoutExecuting
    /// The request is executed (a PaymentIntent made and charged), and a 500 saved instead of its answer.
    case afterExecuting
  }

  /// A failure injected into the next matching request.
  public enum Fault: Sendable {
    /// Executes the request (charges, and saves the idempotent result), then waits `seconds`
    /// before answering (past a client's timeout).
    case delayAfterExecuting(seconds: Double)
    /// Executes the request (saving the idempotent result), then resets the connection (TCP RST,
    /// no TLS close_notify) without answering.
    case resetAfterExecuting
    /// Answers 500 with an `api_error` body and `Stripe-Should-Retry: true` without executing
    /// and without saving an idempotent result (a failure before the endpoint began).
    case serverErrorBeforeExecuting
    /// Answers 429 with a rate-limit error (type `invalid_request_error`, code `rate_limit`) and
    /// `Retry-After: <seconds>`, without executing or saving anything.
    case rateLimited(retryAfterSeconds: Int)
    /// Executes the request (saving the idempotent result: a same-key retry meanwhile is a
    /// replay), then holds the answer until the gate is released or the connection closes.
    case holdAfterExecuting(Gate)
    /// Holds the request WITHOUT executing until the gate is released. While held, its
    /// Idempotency-Key counts as in progress: another request with that key is answered 409
    /// (`idempotency_error`, not saved). If the client's connection closes while held, the
    /// request is dropped unexecuted (nothing charged, nothing saved).
    case holdBeforeExecuting(Gate)
    /// Answers exactly `status`, `headers` and `body` without executing or saving anything: what a
    /// proxy or a misconfigured origin in front of Stripe might send (a 302 or 307 with a
    /// `Location`, an error body of its own).
    case answerWithoutExecuting(status: Int, headers: [(String, String)], body: String)
    /// Answers 500 (`api_error`, "An unknown error occurred") and saves it under the request's
    /// Idempotency-Key, so that the same request again gets it replayed: a 500 Stripe stored.
    case serverErrorStored(StoredServerError)
  }

  /// A gate a test waits on: `reached` becomes true (and `waitUntilReached(timeout:)` returns
  /// true) when a request arrives at the fault; `release()` lets it (and any later arrival) go on.
  public final class Gate: Sendable {
    struct State {
      var reached = false
      var released = false
      var onRelease: [@Sendable () -> Void] = []
    }
    let state = Mutex(State())

    public init() {}

    /// Whether a request has arrived at the gate.
    public var reached: Bool { state.withLock { $0.reached } }

    /// Blocks the calling thread until a request arrives at the gate or `timeout` seconds pass;
    /// true if one arrived. From async code prefer `waitUntilReachedAsync(timeout:)`, which does
    /// not block a cooperative thread.
    public func waitUntilReached(timeout: Double) -> Bool {
      let deadline = Date().addingTimeInterval(timeout)
      while !reached {
        if Date() >= deadline { return false }
        usleep(1_000)
      }
      return true
    }

    /// Suspends until a request arrives at the gate or `timeout` seconds pass; true if one arrived.
    public func waitUntilReachedAsync(timeout: Double) async -> Bool {
      let deadline = Date().addingTimeInterval(timeout)
      while !reached {
        if Date() >= deadline { return false }
        try? await Task.sleep(nanoseconds: 1_000_000)
      }
      return true
    }

    /// Lets the held request (and any that arrives later) go on.
    public func release() {
      let callbacks = state.withLock { state -> [@Sendable () -> Void] in
        state.released = true
        defer { state.onRelease = [] }
        return state.onRelease
      }
      for callback in callbacks { callback() }
    }

    func arrive() { state.withLock { $0.reached = true } }

    func whenReleased(_ callback: @escaping @Sendable () -> Void) {
      let now = state.withLock { state -> Bool in
        if state.released { return true }
        state.onRelease.append(callback)
        return false
      }
      if now { callback() }
    }
  }

  // MARK: - Later events (what Stripe does "some time later")

  /// Ends a PaymentIntent in `processing` (a `processing` test card): `succeeded` (or
  /// `requires_capture` with manual capture) with its charge succeeded, or, when not `succeeded`,
  /// `requires_payment_method` with its charge failed and `last_payment_error` set, as Stripe
  /// ends a payment that did not go through. False when the PaymentIntent is not processing.
  @discardableResult
  public func settleProcessing(paymentIntent id: String, succeeded: Bool) -> Bool {
    core.state.withLock { $0.ledger.settleProcessing(id, succeeded: succeeded) }
  }

  /// Lets an uncaptured authorization lapse as Stripe does after 7 days: the PaymentIntent
  /// becomes `canceled` (`cancellation_reason` `automatic`). False when it is not `requires_capture`.
  @discardableResult
  public func expireAuthorization(paymentIntent id: String) -> Bool {
    core.state.withLock { $0.ledger.expireAuthorization(id) }
  }

  // MARK: - Inspection (thread-safe)

  /// PaymentMethods created by `POST /v1/payment_methods` (executed, not replayed) with this Idempotency-Key.
  public func paymentMethodsCreated(idempotencyKey: String) -> Int {
    core.state.withLock { $0.ledger.paymentMethodsPerIdempotencyKey[idempotencyKey] ?? 0 }
  }

  /// PaymentIntents created (executed, not replayed; declined ones included) with this
  /// Idempotency-Key.
  public func paymentIntentsCreated(idempotencyKey: String) -> Int {
    core.state.withLock { $0.ledger.createdPerIdempotencyKey[idempotencyKey] ?? 0 }
  }

  /// Tokens created from Apple Pay tokens (executed, not replayed) with this Idempotency-Key.
  public func tokensCreated(idempotencyKey: String) -> Int {
    core.state.withLock { $0.ledger.tokensPerIdempotencyKey[idempotencyKey] ?? 0 }
  }

  /// Tokens created from Apple Pay tokens in total.
  public var tokenCount: Int { core.state.withLock { $0.ledger.tokenOrder.count } }

  /// PaymentIntents created in total (declined ones included).
  public var paymentIntentCount: Int { core.state.withLock { $0.ledger.paymentIntentOrder.count } }

  /// Refunds created (executed, not replayed) in total, whatever their later status.
  public var refundCount: Int { core.state.withLock { $0.ledger.refundOrder.count } }

  /// The refunds created for a PaymentIntent, in creation order.
  public func refunds(paymentIntent: String) -> [(id: String, amount: Int64)] {
    core.state.withLock { state in
      state.ledger.refundOrder.compactMap { id -> (id: String, amount: Int64)? in
        guard let refund = state.ledger.refunds[id], refund.paymentIntent == paymentIntent else { return nil }
        return (refund.id, refund.amount)
      }
    }
  }

  /// A refund's current status (`succeeded`, `pending`, `failed`), or nil if unknown.
  public func refundStatus(_ id: String) -> String? {
    core.state.withLock { $0.ledger.refunds[id]?.status ?? nil }
  }

  /// A request as received (the Authorization header is never stored).
  public struct RecordedRequest: Sendable {
    public var method: String
    public var path: String
    public var idempotencyKey: String?
    public var stripeVersion: String?
    /// Whether it was answered with a saved idempotent result.
    public var replayed: Bool
    /// The HTTP status answered; 0 while unanswered, or if no answer was sent (a reset, or a
    /// request dropped because its connection closed).
    public var status: Int
    /// The raw form body.
    public var body: String
  }

  /// TLS connections accepted so far (a keep-alive client reuses one for many requests).
  public var connectionsAccepted: Int { listener.accepted }

  /// Every request received, in order of arrival.
  public var requests: [RecordedRequest] { core.state.withLock { $0.requests } }

  /// A PaymentIntent as stored, flattened for assertions: `id`, `amount`, `currency`, `status`,
  /// `amount_received`, `amount_capturable`, `capture_method`, `amount_refunded` (on its latest
  /// charge, failed refunds excluded), `latest_charge`, `payment_method`, `cancellation_reason`,
  /// `customer` and `setup_future_usage` when set, and one `metadata[KEY]` entry per metadata key.
  /// Nil for an unknown id.
  public func paymentIntent(_ id: String) -> [String: String]? {
    core.state.withLock { state in
      guard let intent = state.ledger.paymentIntents[id] else { return nil }
      var fields: [String: String] = [
        "id": intent.id, "amount": String(intent.amount), "currency": intent.currency, "status": intent.status,
        "amount_received": String(intent.amountReceived), "amount_capturable": String(intent.amountCapturable),
        "capture_method": intent.captureMethod,
        "amount_refunded": String(intent.latestCharge.flatMap { state.ledger.charges[$0]?.amountRefunded } ?? 0),
      ]
      fields["latest_charge"] = intent.latestCharge
      fields["capture_before"] = intent.latestCharge.flatMap { state.ledger.charges[$0]?.captureBefore }.map { String($0) }
      fields["payment_method"] = intent.paymentMethod
      fields["cancellation_reason"] = intent.cancellationReason
      fields["customer"] = intent.customer
      fields["setup_future_usage"] = intent.setupFutureUsage
      for entry in intent.metadata { fields["metadata[\(entry.key)]"] = entry.value }
      return fields
    }
  }
}
