/// How a product is paid when it is not paid once, today: a subscription (`catalog[].recurring`),
/// an automatic reload of a stored balance (`automaticReload`) or a pre-order paid on a later date
/// (`deferred`). Apple Pay asks the card network for a merchant token for these (a recurring,
/// automatic reload or deferred payment request), which the merchant charges later.
///
/// What a cart line of such a product costs today, which is what the total, the tax and the order
/// count:
/// - recurring: the trial's amount during a trial; else the price when the subscription starts
///   today (no `startDate`, or one already reached); nothing when it starts later;
/// - automatic reload: the price (the first load);
/// - deferred: nothing (the payment is made on `paymentDate`).
/// The later payments appear as line items with their `paymentTiming` and dates, at the catalog price.
public final class BillingPlan: Sendable, Equatable {
  public static func == (a: BillingPlan, b: BillingPlan) -> Bool { a.schedule == b.schedule }

  /// `ApplePayLineItem.paymentTiming`, without `immediate` (a product without a plan).
  public enum Kind: String, Sendable, WireEnum {
    case recurring, automaticReload, deferred
  }

  /// `recurringPaymentIntervalUnit` as configured: Apple Pay also knows hour and minute, which a
  /// shop's catalog has no use for.
  public enum IntervalUnit: String, Sendable, CaseIterable, WireEnum {
    case day, month, year
  }

  /// Every `count` days, months or years.
  public struct Interval: Sendable, Equatable {
    public var unit: IntervalUnit
    public var count: Int

    /// `seconds` advanced by this interval in UTC; a month end is kept within the target month
    /// (January 31 + 1 month is February 28 or 29).
    public func advance(_ seconds: Int64) -> Int64 {
      let days = Int(RFC3339.floorDiv(seconds, 86_400))
      let secondOfDay = seconds - Int64(days) * 86_400
      switch unit {
      case .day: return seconds + Int64(count) * 86_400
      case .month, .year:
        let (year, month, day) = RFC3339.civilFromDays(days)
        let months = year * 12 + (month - 1) + (unit == .month ? count : count * 12)
        let (newYear, newMonth) = (months / 12, months % 12 + 1)
        let newDay = min(day, RFC3339.daysInMonth(newYear, newMonth))
        return Int64(RFC3339.daysFromCivil(newYear, newMonth, newDay)) * 86_400 + secondOfDay
      }
    }
  }

  /// A subscription's introductory period, charged `amountMinor` per unit for one `interval`.
  public struct Trial: Sendable, Equatable {
    public var amountMinor: Int64
    public var interval: Interval
  }

  public enum Schedule: Sendable, Equatable {
    /// Charged every `interval`, from `startDate` (nil: the day of the order, or the end of the
    /// trial) until `endDate` (nil: until cancelled).
    case recurring(interval: Interval, startDate: Int64?, endDate: Int64?, trial: Trial?)
    /// The price is loaded again whenever the balance falls below the threshold.
    case automaticReload(thresholdMinor: Int64)
    /// Paid on `paymentDate`; free to cancel until `freeCancellationDate` (in `timeZone`, an IANA name).
    case deferred(paymentDate: Int64, freeCancellationDate: Int64?, timeZone: String?)
  }

  public let schedule: Schedule

  public init(_ schedule: Schedule) {
    self.schedule = schedule
  }

  public var kind: Kind {
    switch schedule {
    case .recurring: return .recurring
    case .automaticReload: return .automaticReload
    case .deferred: return .deferred
    }
  }

  /// What one unit costs today at `price` per period (see the type's documentation).
  public func dueTodayMinor(price: Int64, now: Int64) -> Int64 {
    switch schedule {
    case .recurring(_, let startDate, _, let trial):
      if let trial { return trial.amountMinor }
      if let startDate, startDate > now { return 0 }
      return price
    case .automaticReload: return price
    case .deferred: return 0
    }
  }

  /// The line items describing `line`'s payments, ordered as they happen: a trial's line first.
  /// `format` writes minor units in the merchant currency.
  func summaryItems(for line: CartLine, priceMinor: Int64, now: Int64, format: (Int64) -> String) -> [SummaryItem] {
    let quantity = Int64(line.quantity)
    let regularAmount = format(priceMinor * quantity)
    switch schedule {
    case .recurring(let interval, let startDate, let endDate, let trial):
      var items: [SummaryItem] = []
      var start = startDate ?? now
      if let trial {
        let trialEnd = trial.interval.advance(start)
        items.append(
          SummaryItem(
            label: line.quantity > 1 ? "\(line.name) trial × \(line.quantity)" : "\(line.name) trial", amount: format(trial.amountMinor * quantity),
            timing: .recurring(
              start: RFC3339.format(start), unit: trial.interval.unit, count: trial.interval.count,
              end: RFC3339.format(trialEnd))))
        start = trialEnd
      }
      items.append(
        SummaryItem(
          label: line.label, amount: regularAmount,
          timing: .recurring(
            start: RFC3339.format(start), unit: interval.unit, count: interval.count, end: endDate.map(RFC3339.format))))
      return items
    case .automaticReload(let threshold):
      return [SummaryItem(label: line.label, amount: regularAmount, timing: .automaticReload(threshold: format(threshold)))]
    case .deferred(let paymentDate, _, _):
      return [SummaryItem(label: line.label, amount: regularAmount, timing: .deferred(date: RFC3339.format(paymentDate)))]
    }
  }
}
