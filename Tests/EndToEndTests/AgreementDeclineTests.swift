import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Declined renewals through the built binary, at the Stripe test server and in the sandbox: a
/// decline makes the agreement past_due and is retried on `billing.retries` (1, 3 and 5 days, each
/// run with `--now` moved to the retry), then unpaid or canceled as `billing.whenRetriesFail`
/// says; a decline that needs the customer (authentication_required, a detached card) makes it
/// action_required, and later runs leave it alone.
///
/// Each case subscribes to `tea-club` (10.80 a month, the checkout paying the first month) on
/// 2026-12-01T10:00:00Z, so period 1 is due 2027-01-01T10:00:00Z.
@Suite("Declined renewals: dunning at Stripe and in the sandbox", .serialized)
struct AgreementDeclineTests {
  static let checkoutAt = "2026-12-01T10:00:00Z"
  /// When each attempt at period 1 is made: due, then 1, 3 and 5 days after each decline.
  static let attemptTimes = ["2027-01-01T12:00:00Z", "2027-01-02T12:00:00Z", "2027-01-05T12:00:00Z", "2027-01-10T12:00:00Z"]

  enum Gateway: String, CustomStringConvertible, Sendable {
    case stripe, sandbox
    var description: String { rawValue }
  }

  /// A subscriber whose renewals are declined.
  struct Dunning: CustomTestStringConvertible, Sendable {
    var gateway: Gateway
    /// The checkout's payment data.
    var paymentData: String
    /// Stripe: the card error queued for the Customer's next off-session charges.
    var stripeCode = "card_declined"
    /// The decline code each declined attempt carries.
    var declineCode: String
    /// How many attempts are declined (4: every one).
    var declines: Int
    var whenRetriesFail = "unpaid"
    var testDescription: String {
      "\(gateway) \(paymentData) \(declineCode) ×\(declines) (whenRetriesFail \(whenRetriesFail))"
    }
  }

  static let dunningCases: [Dunning] = [
    Dunning(gateway: .stripe, paymentData: "pm_card_visa", declineCode: "insufficient_funds", declines: 2),
    Dunning(gateway: .stripe, paymentData: "pm_card_visa", declineCode: "generic_decline", declines: 4),
    Dunning(
      gateway: .stripe, paymentData: "pm_card_visa", declineCode: "insufficient_funds", declines: 4,
      whenRetriesFail: "canceled"),
    Dunning(gateway: .sandbox, paymentData: "tok_visa_laterDeclinedOnce", declineCode: "insufficient_funds", declines: 1),
    Dunning(gateway: .sandbox, paymentData: "tok_chargeCustomerFail", declineCode: "insufficient_funds", declines: 4),
    Dunning(
      gateway: .sandbox, paymentData: "tok_chargeCustomerFail", declineCode: "insufficient_funds", declines: 4,
      whenRetriesFail: "canceled"),
  ]

  /// A run's payments, one line each: period, attempt, status, amount or failure and decline
  /// codes, the agreement's status and next payment.
  static func payments(_ result: JSONValue) -> [String] {
    (result["payments"]?.arrayValue ?? []).map { payment -> String in
      let period: String = payment["period"].map { "p\($0.compact)" } ?? "-"
      let attempt: String = payment["attempt"].map { "a\($0.compact)" } ?? "-"
      let status: String = payment["status"]?.stringValue ?? "?"
      let codes: String = "\(payment["failureCode"]?.stringValue ?? "-")/\(payment["declineCode"]?.stringValue ?? "-")"
      let amount: String = payment["amount"]?.stringValue ?? codes
      let agreementStatus: String = payment["agreementStatus"]?.stringValue ?? "?"
      let next: String = payment["nextPaymentAt"]?.stringValue ?? "none"
      return [period, attempt, status, amount, agreementStatus, next].joined(separator: " ")
    }
  }

  /// A fresh shop (with a test server for Stripe) and its one subscriber.
  struct Subscriber {
    let server: StripeTestServer?
    let shop: BillingShop
    let agreementId: String
    let checkoutOrder: String

    init(gateway: Gateway, paymentData: String, whenRetriesFail: String = "unpaid") throws {
      server = gateway == .stripe ? try StripeTestServer() : nil
      server?.setClock(RFC3339.parse(AgreementDeclineTests.checkoutAt)!)
      shop = try BillingShop(
        backend: .sqlite, stripe: server, billing: "billing:\n  retries: [1, 3, 5]\n  whenRetriesFail: \(whenRetriesFail)\n")
      let placed = try shop.checkout(at: AgreementDeclineTests.checkoutAt, [.init("tea-club", paymentData: paymentData)])[0]
      #expect(placed["amount"] == .string("10.80"), "\(placed.compact)")
      agreementId = try BillingShop.agreementId(placed)
      checkoutOrder = try #require(placed["orderId"]?.stringValue)
    }

    /// The Stripe Customer the checkout made.
    var customer: String? {
      server?.customerRecords().first { $0.metadata["order_id"] == checkoutOrder }?.id
    }

    /// `payservice billing run` at `now` (the test server's clock moved with it).
    func run(_ now: String) throws -> (status: Int32, payments: [String]) {
      server?.setClock(RFC3339.parse(now)!)
      let (status, result) = try shop.billingRun(at: now)
      return (status, AgreementDeclineTests.payments(result))
    }

    /// The agreement's PaymentIntents at the test server, after the checkout's.
    var laterIntents: [String] {
      (server?.paymentIntents(agreementId: agreementId) ?? []).filter(\.offSession).map { BillingShop.describe($0) }
    }

    func agreement(at now: String) throws -> JSONValue {
      try #require(try shop.call(at: now, "getAgreement", #"{"agreementId":"\#(agreementId)"}"#)["agreement"])
    }

    func shutdown() { server?.shutdown() }
  }

  @Test(
    "a declined renewal makes the agreement past_due and is retried 1, 3 and 5 days later (each run with --now moved there; a run before a retry is due charges nothing); recovered by a retry it is active again, its retries spent it is unpaid or canceled and never charged again",
    arguments: dunningCases)
  func dunning(_ testCase: Dunning) throws {
    let subscriber = try Subscriber(
      gateway: testCase.gateway, paymentData: testCase.paymentData, whenRetriesFail: testCase.whenRetriesFail)
    defer { subscriber.shutdown() }
    if let server = subscriber.server {
      server.declineNextOffSessionCharges(
        customer: try #require(subscriber.customer), code: testCase.stripeCode, declineCode: testCase.declineCode,
        count: testCase.declines)
    }
    let failure = "card_declined/\(testCase.declineCode)"
    let recovered = testCase.declines < 4
    var events = ["created @\(Self.checkoutAt)"]
    var intents: [String] = []
    for (index, time) in Self.attemptTimes.enumerated() {
      let attempt = index + 1
      guard attempt <= testCase.declines + 1 else { break }
      if index > 0 {
        // A second before the retry is due: nothing.
        let early = try subscriber.run(RFC3339.format(RFC3339.parse(time)! - 1))
        #expect(early.status == 0)
        #expect(early.payments == [])
      }
      let step = try subscriber.run(time)
      if attempt <= testCase.declines {
        let ended = attempt == 4
        let status = ended ? testCase.whenRetriesFail : "past_due"
        let next = ended ? "none" : Self.attemptTimes[index + 1]
        #expect(step.status == 1)
        #expect(step.payments == ["p1 a\(attempt) failed \(failure) \(status) \(next)"])
        events.append("declined p1 a\(attempt) card_declined \(testCase.declineCode) @\(time)")
        if attempt == 1 { events.append("status_changed past_due @\(time)") }
        if ended { events.append("status_changed \(testCase.whenRetriesFail) @\(time)") }
        intents.append("1080 off_session requires_payment_method - period-1-attempt-\(attempt) @\(time)")
      } else {
        #expect(step.status == 0)
        #expect(step.payments == ["p1 a\(attempt) succeeded 10.80 active 2027-02-01T10:00:00Z"])
        events += ["paid p1 a\(attempt) 10.80 @\(time)", "status_changed active @\(time)"]
        intents.append("1080 off_session succeeded - period-1-attempt-\(attempt) @\(time)")
      }
    }
    // The next month: a recovered agreement renews on its schedule; one whose retries were spent
    // is never charged again.
    let next = try subscriber.run("2027-02-01T12:00:00Z")
    #expect(next.status == 0)
    if recovered {
      #expect(next.payments == ["p2 a1 succeeded 10.80 active 2027-03-01T10:00:00Z"])
      events.append("paid p2 a1 10.80 @2027-02-01T12:00:00Z")
      intents.append("1080 off_session succeeded - period-2-attempt-1 @2027-02-01T12:00:00Z")
    } else {
      #expect(next.payments == [])
    }
    let agreement = try subscriber.agreement(at: "2027-02-02T00:00:00Z")
    #expect(agreement["status"] == .string(recovered ? "active" : testCase.whenRetriesFail))
    #expect(agreement["period"] == .number(recovered ? "3" : "1"))
    #expect(agreement["failedAttempts"] == .number(recovered ? "0" : "4"))
    #expect(agreement["nextPaymentAt"] == (recovered ? .string("2027-03-01T10:00:00Z") : .null))
    #expect(agreement["customerAction"] == nil)
    #expect(BillingShop.events(agreement) == events)
    if testCase.gateway == .stripe {
      #expect(subscriber.laterIntents == intents)
    }
    // Each declined attempt's unit came back: only paid renewals took stock.
    let stock = try subscriber.shop.backend.open(subscriber.shop.database).stock()
    #expect(stock["tea-club"] == 1000 - 1 - (recovered ? 2 : 0))
  }

  /// A subscriber whose renewal needs them.
  struct ActionCase: CustomTestStringConvertible, Sendable {
    enum Cause: String, Sendable {
      /// Stripe's off-session card error authentication_required.
      case authenticationRequired
      /// The customer removed the card (`POST /v1/payment_methods/{id}/detach`).
      case detached
      /// The sandbox card that needs authentication for every later payment.
      case sandboxAuthentication
    }
    var cause: Cause
    var testDescription: String { cause.rawValue }
  }

  @Test(
    "a renewal that needs the customer (Stripe's authentication_required, a card detached from the Customer, the sandbox's authentication card) makes the agreement action_required with the action to take, and later runs do not retry it",
    arguments: [ActionCase(cause: .authenticationRequired), ActionCase(cause: .detached), ActionCase(cause: .sandboxAuthentication)])
  func actionRequired(_ testCase: ActionCase) throws {
    let subscriber = try Subscriber(
      gateway: testCase.cause == .sandboxAuthentication ? .sandbox : .stripe,
      paymentData: testCase.cause == .sandboxAuthentication ? "tok_visa_laterAuthenticationRequired" : "pm_card_visa")
    defer { subscriber.shutdown() }
    let time = Self.attemptTimes[0]
    var failure = "card_declined/authentication_required"
    var action = #"{"code":"authenticate","message":"Your bank asks you to confirm this payment. Confirm it, or add another card, to keep your plan."}"#
    var intents: [String] = []
    switch testCase.cause {
    case .authenticationRequired:
      // Stripe's `authenticationRequired` test card cannot make the agreement: the checkout
      // confirms with error_on_requires_action, so the card's bank asking for its holder declines
      // it there, and no agreement is made.
      let refused = try subscriber.shop.checkoutAnswers(
        at: Self.checkoutAt, [.init("tea-club", paymentData: "tok_authenticationRequired")])[0]
      #expect(refused["result"]?["status"] == .string("failed"), "\(refused.compact)")
      #expect(refused["result"]?["failureCode"] == .string("card_declined"))
      #expect(refused["result"]?["declineCode"] == .string("authentication_required"))
      #expect(refused["result"]?["order"] == nil)
      // Off-session, the card error that card gets (a card kept, then its bank asking for its
      // holder), for the subscriber's next payment.
      subscriber.server?.declineNextOffSessionCharges(
        customer: try #require(subscriber.customer), code: "authentication_required",
        declineCode: "authentication_required", count: 1)
      intents = ["1080 off_session requires_payment_method - period-1-attempt-1 @\(time)"]
    case .detached:
      let server = try #require(subscriber.server)
      let method = try #require(
        server.paymentIntentRecords().first { $0.metadata["order_id"] == subscriber.checkoutOrder }?.paymentMethod)
      #expect(server.paymentMethodCustomer(method) == subscriber.customer)
      #expect(server.detachPaymentMethod(method))
      failure = "gateway_error/payment_method_unexpected_state"
      action = #"{"code":"update_payment_method","message":"Your card can no longer be charged. Add another card to keep your plan."}"#
    case .sandboxAuthentication:
      break
    }
    let step = try subscriber.run(time)
    #expect(step.status == 1)
    #expect(step.payments == ["p1 a1 failed \(failure) action_required none"])
    // Later runs, when retries would have been due, and the next month: nothing.
    for later in Self.attemptTimes.dropFirst() + ["2027-02-01T12:00:00Z"] {
      let again = try subscriber.run(later)
      #expect(again.status == 0)
      #expect(again.payments == [])
    }
    let agreement = try subscriber.agreement(at: "2027-02-02T00:00:00Z")
    #expect(agreement["status"] == .string("action_required"))
    #expect(agreement["customerAction"]?.compact == action)
    #expect(agreement["nextPaymentAt"] == .null)
    #expect(agreement["period"] == .number("1"))
    #expect(agreement["failedAttempts"] == .number("1"))
    let (code, declineCode) = (failure.split(separator: "/")[0], failure.split(separator: "/")[1])
    #expect(
      BillingShop.events(agreement) == [
        "created @\(Self.checkoutAt)", "declined p1 a1 \(code) \(declineCode) @\(time)",
        "status_changed action_required @\(time)",
      ])
    if let server = subscriber.server {
      #expect(subscriber.laterIntents == intents)
      // The detached card was asked for once, and refused: nothing made.
      let asked = server.requests.filter { $0.method == "POST" && $0.path == "/v1/payment_intents" && $0.body.contains("off_session=true") }
      #expect(asked.count == 1)
      #expect(asked.first?.status == (testCase.cause == .detached ? 400 : 402))
    }
    let stock = try subscriber.shop.backend.open(subscriber.shop.database).stock()
    #expect(stock["tea-club"] == 1000 - 1)
  }
}
