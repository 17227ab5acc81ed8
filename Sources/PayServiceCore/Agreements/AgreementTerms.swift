/// What the buyer agreed to at checkout, fixed then: the schedule of later payments (from the
/// product's billing plan as the sheet showed it), where the goods go (for the tax of later
/// payments) and how the card is charged later. Prices are not terms: each later payment is priced
/// from the catalog and tax rules in force when it is charged.
///
/// Stored as JSON text with the agreement (`AgreementRow.terms`).
public struct AgreementTerms: Sendable, Equatable, WireObject {
  public var kind = BillingPlan.Kind.recurring
  /// A subscription's interval.
  public var interval: BillingPlan.IntervalUnit?
  public var intervalCount: Int?
  /// A subscription: when its regular period 0 is due (the trial's end, the start date, or the
  /// checkout); a pre-order: its payment date. Unix seconds.
  public var firstPaymentAt: Int?
  /// A subscription's end: no period starting at or after it is charged.
  public var endDate: Int?
  /// A subscription's trial end, when it had a trial (paid at checkout).
  public var trialEnd: Int?
  /// A pre-order's free cancellation date, and its time zone (IANA) as the sheet showed it.
  public var freeCancellationDate: Int?
  public var freeCancellationTimeZone: String?
  /// An automatic reload's threshold, minor units.
  public var thresholdMinor: Int?
  /// The first payment after the checkout's (`AgreementRow.period` when the agreement was made).
  public var firstPeriod = 0
  /// What each later payment cost as the sheet showed it (the plan's regular line: price × quantity,
  /// before tax), minor units: a record of what was agreed. Each payment is priced from the catalog
  /// in force when it is charged.
  public var amountMinor = 0
  /// The shipping method of the checkout; later payments ship the same way, with no shipping charge.
  public var shippingMethod = ""
  /// Where the goods go, kept as erasure keeps it (country, region, postal prefix): what taxes
  /// later payments. No name, street, email or phone.
  public var region = Contact()

  public init() {}

  public static let shape = ObjectShape<AgreementTerms>(
    blank: { AgreementTerms() },
    [
      .member("kind", \.kind), .member("interval", \.interval, .optional),
      .member("intervalCount", \.intervalCount, .optional), .member("firstPaymentAt", \.firstPaymentAt, .optional),
      .member("endDate", \.endDate, .optional), .member("trialEnd", \.trialEnd, .optional),
      .member("freeCancellationDate", \.freeCancellationDate, .optional),
      .member("freeCancellationTimeZone", \.freeCancellationTimeZone, .optional),
      .member("thresholdMinor", \.thresholdMinor, .optional), .member("firstPeriod", \.firstPeriod),
      .member("amountMinor", \.amountMinor, .optional),
      .member("shippingMethod", \.shippingMethod),
      .member("region", \.region, .required, Contact.storedSchema),
    ])

  /// The terms of a checkout at `pricedAt` (when its cart was priced: the authorization) for a
  /// line of `plan`, and the payment to make first after the checkout's (`period`).
  public static func make(
    plan: BillingPlan, pricedAt: Int64, shippingMethod: String, shippingContact: Contact?, amountMinor: Int64 = 0
  ) -> (terms: AgreementTerms, period: Int) {
    var terms = AgreementTerms()
    terms.kind = plan.kind
    terms.amountMinor = Int(amountMinor)
    terms.shippingMethod = shippingMethod
    terms.region = (shippingContact ?? Contact()).erased
    switch plan.schedule {
    case .recurring(let interval, let startDate, let endDate, let trial):
      terms.interval = interval.unit
      terms.intervalCount = interval.count
      terms.endDate = endDate.map(Int.init)
      let start = startDate ?? pricedAt
      if let trial {
        // The checkout paid the trial; the regular periods start at its end.
        let trialEnd = trial.interval.advance(start)
        terms.trialEnd = Int(trialEnd)
        terms.firstPaymentAt = Int(trialEnd)
        return (terms, 0)
      }
      terms.firstPaymentAt = Int(start)
      // A start still to come: the checkout paid nothing of the plan, period 0 is due then.
      // Otherwise the checkout paid the period it fell in; the next one is due next.
      var period = 0
      while terms.dueDate(period: period).map({ $0 <= pricedAt }) == true { period += 1 }
      return (terms, period)
    case .automaticReload(let threshold):
      terms.thresholdMinor = Int(threshold)
      return (terms, 0)
    case .deferred(let paymentDate, let freeCancellationDate, let timeZone):
      terms.firstPaymentAt = Int(paymentDate)
      terms.freeCancellationDate = freeCancellationDate.map(Int.init)
      terms.freeCancellationTimeZone = timeZone
      return (terms, 0)
    }
  }

  /// When `period` is due, nil when the agreement has no such payment: past a subscription's end
  /// date, a pre-order's second payment, any reload (reloads are due when a balance is reported).
  /// A subscription's periods are counted from `firstPaymentAt`, not from each other, so a month
  /// end stays a month end (January 31, February 28, March 31).
  public func dueDate(period: Int) -> Int64? {
    guard let first = firstPaymentAt, period >= 0 else { return nil }
    switch kind {
    case .recurring:
      guard let unit = interval, let count = intervalCount else { return nil }
      let due = BillingPlan.Interval(unit: unit, count: count * period).advance(Int64(first))
      if let endDate, due >= Int64(endDate) { return nil }
      return due
    case .deferred: return period == 0 ? Int64(first) : nil
    case .automaticReload: return nil
    }
  }
}

/// How the gateway charges the agreement's later payments: the sandbox (whose outcome is kept on
/// the agreement) or a card kept at a remote gateway. Ids only, never card data.
public struct AgreementCredential: Sendable, Equatable, WireObject {
  /// `sandbox` or the remote gateway's name in lower case (`stripe`).
  public var gateway = "sandbox"
  /// Stripe's Customer (`cus_…`) and PaymentMethod (`pm_…`) saved for off-session payments.
  public var customerId: String?
  public var paymentMethodId: String?
  /// The Apple Pay merchant token the first payment's decrypted data carried.
  public var merchantToken: MerchantTokenState?

  public static let shape = ObjectShape<AgreementCredential>(
    blank: { AgreementCredential() },
    [
      .member("gateway", \.gateway), .member("customerId", \.customerId, .optional),
      .member("paymentMethodId", \.paymentMethodId, .optional), .member("merchantToken", \.merchantToken, .optional),
    ])

  /// The card kept at a remote gateway; nil for the sandbox.
  var savedCard: GatewaySavedCard? {
    guard let customerId, let paymentMethodId else { return nil }
    return GatewaySavedCard(customerId: customerId, paymentMethodId: paymentMethodId)
  }
}

/// What the customer must do before an agreement's payments resume (`action_required`).
public struct CustomerAction: Sendable, Equatable, WireObject {
  public enum Code: String, Sendable, WireEnum {
    /// The bank asks the customer to authenticate the payment (Stripe `authentication_required`).
    case authenticate
    /// The card can no longer be charged (expired, lost, detached from the customer): another card is needed.
    case updatePaymentMethod = "update_payment_method"
  }

  public var code = Code.updatePaymentMethod
  /// For the merchant's page (`applePay.managementURL`), written for the customer.
  public var message = ""

  public static let shape = ObjectShape<CustomerAction>(
    blank: { CustomerAction() },
    [.member("code", \.code), .member("message", \.message, .required, .string(), read: ParamReader.anyString)])
}

/// An agreement's Apple Pay merchant token (MPAN) as Apple last described it: what Wallet's
/// customer sees of the card, and whether the token still charges.
public struct MerchantTokenState: Sendable, Equatable, WireObject {
  public enum Status: String, Sendable, WireEnum, CaseIterable {
    /// The token charges.
    case active
    /// Unlinked by the customer or the card issuer (Apple's event), or by payservice when the
    /// agreement ended: it never charges again.
    case unlinked
  }

  /// Apple's merchant token identifier (a reference to the token, not a card number).
  public var identifier = ""
  public var status = Status.active
  /// unlinked: who ended it, as Apple's event said (the user or the issuer); `merchant` when the
  /// agreement ended here.
  public var reason: String?
  public var card: MerchantTokenCard?
  /// RFC 3339: when an event of Apple's last changed it.
  public var updatedAt: String?

  public static let shape = ObjectShape<MerchantTokenState>(
    "The Apple Pay merchant token the agreement's payments charge, as Apple last described it.",
    blank: { MerchantTokenState() },
    [
      .member("identifier", \.identifier, .required, .string("Apple's merchant token identifier; not a card number.")),
      .member(
        "status", \.status, .required,
        .string(
          "active, or unlinked (by the customer or the issuer, as reason says, or by the merchant): it never charges again.",
          values: Status.allCases.map(\.rawValue))),
      .member("reason", \.reason, .optional), .member("card", \.card, .optional),
      .member("updatedAt", \.updatedAt, .optional, Shapes.timestamp),
    ])
}
