import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// When an agreement's payments are due, and that a billing run at any time charges exactly the
/// payments due by then, each once.
@Suite("Agreement schedules")
struct AgreementScheduleTests {
  static func time(_ text: String) -> Int64 { RFC3339.parse(text)! }

  /// The due dates of periods 0..<count as text.
  static func dues(_ terms: AgreementTerms, _ periods: Range<Int>) -> [String?] {
    periods.map { terms.dueDate(period: $0).map(RFC3339.format) }
  }

  static func terms(_ plan: BillingPlan, pricedAt: String) -> (AgreementTerms, Int) {
    AgreementTerms.make(plan: plan, pricedAt: time(pricedAt), shippingMethod: "post", shippingContact: nil)
  }

  @Test("a month end stays a month end: January 31, February 28 (29 in a leap year), March 31")
  func monthEnds() {
    let plan = BillingPlan(.recurring(interval: .init(unit: .month, count: 1), startDate: nil, endDate: nil, trial: nil))
    let (terms, period) = Self.terms(plan, pricedAt: "2027-01-31T09:30:00Z")
    #expect(period == 1)
    #expect(
      Self.dues(terms, 0..<5) == [
        "2027-01-31T09:30:00Z", "2027-02-28T09:30:00Z", "2027-03-31T09:30:00Z", "2027-04-30T09:30:00Z",
        "2027-05-31T09:30:00Z",
      ])
    let (leap, _) = Self.terms(plan, pricedAt: "2027-12-31T00:00:00Z")
    #expect(Self.dues(leap, 1..<4) == ["2028-01-31T00:00:00Z", "2028-02-29T00:00:00Z", "2028-03-31T00:00:00Z"])
  }

  @Test("a yearly plan from February 29 falls on February 28 in common years and 29 in leap years")
  func leapYears() {
    let plan = BillingPlan(.recurring(interval: .init(unit: .year, count: 1), startDate: nil, endDate: nil, trial: nil))
    let (terms, period) = Self.terms(plan, pricedAt: "2028-02-29T12:00:00Z")
    #expect(period == 1)
    #expect(
      Self.dues(terms, 0..<5) == [
        "2028-02-29T12:00:00Z", "2029-02-28T12:00:00Z", "2030-02-28T12:00:00Z", "2031-02-28T12:00:00Z",
        "2032-02-29T12:00:00Z",
      ])
  }

  @Test("a trial then monthly: the checkout pays the trial, period 0 is due at its end")
  func trialThenMonthly() {
    let plan = BillingPlan(
      .recurring(
        interval: .init(unit: .month, count: 1), startDate: nil, endDate: nil,
        trial: .init(amountMinor: 500, interval: .init(unit: .day, count: 14))))
    let (terms, period) = Self.terms(plan, pricedAt: "2027-01-20T08:00:00Z")
    #expect(period == 0)
    #expect(terms.trialEnd.map { RFC3339.format(Int64($0)) } == "2027-02-03T08:00:00Z")
    #expect(Self.dues(terms, 0..<3) == ["2027-02-03T08:00:00Z", "2027-03-03T08:00:00Z", "2027-04-03T08:00:00Z"])
  }

  @Test("an end date: no period starting at or after it; a later start: period 0 on the start date")
  func endDateAndLaterStart() {
    let plan = BillingPlan(
      .recurring(
        interval: .init(unit: .month, count: 2), startDate: Self.time("2027-03-01T00:00:00Z"),
        endDate: Self.time("2027-09-01T00:00:00Z"), trial: nil))
    let (terms, period) = Self.terms(plan, pricedAt: "2027-01-10T00:00:00Z")
    #expect(period == 0)
    #expect(Self.dues(terms, 0..<5) == ["2027-03-01T00:00:00Z", "2027-05-01T00:00:00Z", "2027-07-01T00:00:00Z", nil, nil])
    // A start already passed: the checkout paid the period it fell in.
    let (started, current) = Self.terms(plan, pricedAt: "2027-06-15T00:00:00Z")
    #expect(current == 2)
    #expect(Self.dues(started, 2..<4) == ["2027-07-01T00:00:00Z", nil])
  }

  @Test("a pre-order has one payment, on its payment date; a reload has none on a schedule")
  func preOrderAndReload() {
    let preorder = BillingPlan(
      .deferred(paymentDate: Self.time("2027-02-01T17:00:00Z"), freeCancellationDate: nil, timeZone: nil))
    let (terms, period) = Self.terms(preorder, pricedAt: "2026-12-01T00:00:00Z")
    #expect(period == 0)
    #expect(Self.dues(terms, 0..<2) == ["2027-02-01T17:00:00Z", nil])
    let (reload, _) = Self.terms(BillingPlan(.automaticReload(thresholdMinor: 500)), pricedAt: "2026-12-01T00:00:00Z")
    #expect(Self.dues(reload, 0..<2) == [nil, nil])
    #expect(reload.thresholdMinor == 500)
  }

  // MARK: Property: a run at T charges exactly what is due by T, each once

  /// Foundation's Gregorian calendar in UTC: the oracle the schedule is checked against.
  static let calendar: Calendar = {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    return calendar
  }()

  static func add(_ unit: BillingPlan.IntervalUnit, _ count: Int, to seconds: Int64) -> Int64 {
    let component: Calendar.Component = unit == .day ? .day : unit == .month ? .month : .year
    let date = calendar.date(byAdding: component, value: count, to: Date(timeIntervalSince1970: TimeInterval(seconds)))!
    return Int64(date.timeIntervalSince1970)
  }

  struct RandomPlan: CustomStringConvertible {
    var unit: BillingPlan.IntervalUnit
    var count: Int
    var startOffsetDays: Int?
    var lengthDays: Int?
    var trial: (amount: Int, unit: BillingPlan.IntervalUnit, count: Int)?

    var description: String {
      "every \(count) \(unit) start \(startOffsetDays.map(String.init) ?? "-") length \(lengthDays.map(String.init) ?? "-") trial \(trial.map { "\($0.amount) \($0.count) \($0.unit)" } ?? "-")"
    }

    func yaml(checkout: Int64) -> String {
      var fields = ["interval: \(unit.rawValue)", "intervalCount: \(count)"]
      if let startOffsetDays {
        let start = checkout + Int64(startOffsetDays) * 86_400
        fields.append("startDate: \"\(RFC3339.format(start))\"")
        if let lengthDays { fields.append("endDate: \"\(RFC3339.format(start + Int64(lengthDays) * 86_400))\"") }
      }
      if let trial {
        fields.append("trial: {amount: \(trial.amount), interval: \(trial.unit.rawValue), intervalCount: \(trial.count)}")
      }
      return "{" + fields.joined(separator: ", ") + "}"
    }

    /// Every payment after the checkout's, by the oracle, as due dates (Unix seconds).
    func laterPayments(checkout: Int64, until: Int64) -> [Int64] {
      let start = startOffsetDays.map { checkout + Int64($0) * 86_400 } ?? checkout
      let end = lengthDays.map { start + Int64($0) * 86_400 }
      var anchor = start
      if let trial { anchor = AgreementScheduleTests.add(trial.unit, trial.count, to: start) }
      var dues: [Int64] = []
      var period = 0
      while true {
        let due = AgreementScheduleTests.add(unit, count * period, to: anchor)
        if let end, due >= end { break }
        if due > until { break }
        // Without a trial, the checkout paid the period it fell in (a start not yet come: none).
        if trial != nil || due > checkout { dues.append(due) }
        period += 1
      }
      return dues
    }
  }

  static func randomPlan(_ generator: inout SplitMix64) -> RandomPlan {
    let unit = [BillingPlan.IntervalUnit.day, .month, .year][Int(generator.next() % 3)]
    let count = unit == .day ? Int(generator.next() % 45) + 1 : Int(generator.next() % 3) + 1
    var plan = RandomPlan(unit: unit, count: count)
    if generator.next() % 2 == 0 {
      plan.startOffsetDays = Int(generator.next() % 121) - 60
      if generator.next() % 2 == 0 { plan.lengthDays = Int(generator.next() % 500) + 1 }
    }
    if generator.next() % 3 == 0 {
      plan.trial = (
        Int(generator.next() % 1200), [BillingPlan.IntervalUnit.day, .month][Int(generator.next() % 2)],
        Int(generator.next() % 30) + 1
      )
    }
    return plan
  }

  @Test("for random plans and random run times, after a run at T every payment due by T was charged exactly once, none after T")
  func runsChargeWhatIsDue() throws {
    var generator = SplitMix64(seed: 36)
    let checkout = TestConfig.now
    var charged = 0
    var withTrial = 0
    var ended = 0
    for index in 0..<24 {
      let plan = Self.randomPlan(&generator)
      let yaml = ConfigLoaderTests.minimal.replacingOccurrences(
        of: "{sku: tea, name: Tea, description: Green tea, price: 1200, quantityOnHand: 5}",
        with: "{sku: tea, name: Tea, description: Green tea, price: 1200, quantityOnHand: 100000, recurring: \(plan.yaml(checkout: checkout))}"
      ) + "\napplePay:\n  managementURL: https://tiny.example.com/account\n"
      let config = try ConfigLoader.parse(yaml: yaml)
      let context = try TestConfig.context(config: config)
      let handler = TestConfig.handler(context, backOffice: true)
      let authorized = handler.call(
        "authorizePayment",
        #"{"items":[{"sku":"tea"}],"shippingMethod":"post","payment":{"token":{"paymentData":"tok_visa","paymentMethod":{"displayName":"V","network":"visa","type":"credit"},"transactionIdentifier":"T\#(index)"},"shippingContact":{"countryCode":"JP"}}}"#
      )["result"]!
      let token = try #require(authorized["chargeToken"]?.stringValue, "\(authorized.compact)")
      let placed = handler.call(
        "processOrder",
        #"{"chargeToken":"\#(token)","items":[{"sku":"tea"}],"shippingMethod":"post","shippingContact":{"countryCode":"JP"},"amount":"\#(authorized["amount"]!.stringValue!)","currencyCode":"JPY"}"#
      )["result"]!
      let agreementId = try #require(placed["order"]?["agreement"]?["agreementId"]?.stringValue, "\(placed.compact)")
      var runAt = checkout
      for _ in 0..<4 {
        runAt += Int64(generator.next() % (200 * 86_400))
        let later = ServiceContext(config: config, store: try context.store, clock: ServiceClock(pinned: runAt))
        let run = TestConfig.handler(later, backOffice: true).call("runBilling")["result"]!
        #expect(run["failed"] == .number("0") && run["skipped"] == .number("0"), "\(plan): \(run.compact)")
        let stored = try #require(try context.store.agreement(id: agreementId))
        let paid = stored.events.filter { $0.kind == .paid }
        let expected = plan.laterPayments(checkout: checkout, until: runAt)
        // Each payment once, in order, and nothing due after the run's time.
        #expect(paid.map(\.period) == Array(stored.row.period - paid.count..<stored.row.period).map { Optional($0) }, "\(plan)")
        #expect(paid.count == expected.count, "\(plan) at \(RFC3339.format(runAt)): \(paid.count) paid, \(expected.map(RFC3339.format))")
        if let next = stored.row.nextPaymentAt { #expect(next > runAt, "\(plan)") }
        let orders = try context.store.orders(OrderQuery(limit: 1000)).filter { $0.agreementId == agreementId }
        #expect(orders.count == expected.count)
      }
      let stored = try #require(try context.store.agreement(id: agreementId))
      charged += stored.events.filter { $0.kind == .paid }.count
      if plan.trial != nil { withTrial += 1 }
      if stored.row.status == .completed { ended += 1 }
    }
    // The seed's plans: every kind of schedule met, and many payments charged.
    #expect([charged, withTrial, ended] as [Int] == [154, 10, 2])
  }
}

/// What a gateway is told of an agreement's payments: a subscription's follow a fixed schedule; an
/// automatic reload's, and a pre-order's payment, do not (Adyen's `UnscheduledCardOnFile`).
@Suite("Agreement payments' schedule at the gateway")
struct AgreementGatewayScheduleTests {
  @Test("the first payment by the agreement's kind; later ones: reloads and pre-orders unscheduled, renewals scheduled")
  func unscheduled() {
    for (kind, expected) in [(BillingPlan.Kind.recurring, false), (.automaticReload, true), (.deferred, true)] {
      var charge = ProcessOrder.Charge()
      charge.saveCard = true
      charge.prepared.agreement = PreparedOrder.Agreement()
      charge.prepared.agreement?.terms.kind = kind
      #expect(charge.gatewayCharge.unscheduled == expected, "\(kind)")
    }
    #expect(ProcessOrder.Charge().gatewayCharge.unscheduled == false)
    var renewal = AgreementPayment.Call()
    #expect(renewal.gatewayCharge.unscheduled == false)
    renewal.reloadId = "reload-1"
    #expect(renewal.gatewayCharge.unscheduled == true)
    var preOrder = AgreementPayment.Call()
    preOrder.takesStock = false
    #expect(preOrder.gatewayCharge.unscheduled == true)
  }
}
