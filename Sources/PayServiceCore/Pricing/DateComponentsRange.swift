/// A calendar date as Apple Pay JS `ApplePayDateComponents` spells it.
public struct DateComponents: Equatable, Sendable, WireObject {
  public var years: Int
  public var months: Int
  public var days: Int

  public static let shape = ObjectShape<DateComponents>(
    blank: { DateComponents(years: 0, months: 1, days: 1) },
    [
      .member("years", \.years),
      .member("months", \.months, .required, .integer(minimum: 1, maximum: 12)),
      .member("days", \.days, .required, .integer(minimum: 1, maximum: 31)),
    ])
}

extension DateComponents {
  /// The UTC calendar date of `seconds` since the epoch plus `addingDays` days.
  public init(seconds: Int64, addingDays: Int) {
    let day = Int(RFC3339.floorDiv(seconds, 86400)) + addingDays
    (years, months, days) = RFC3339.civilFromDays(day)
  }
}

/// A shipping method's delivery window (`ApplePayDateComponentsRange`): the service clock's UTC date
/// plus `transitDays`, to plus `transitDaysMax` (or `transitDays` when that is not configured).
public struct DateComponentsRange: Equatable, Sendable, WireObject {
  public var start: DateComponents
  public var end: DateComponents

  public init(start: DateComponents = DateComponents(seconds: 0, addingDays: 0), end: DateComponents? = nil) {
    self.start = start
    self.end = end ?? start
  }

  public init(method: ShippingMethod, now: Int64) {
    start = DateComponents(seconds: now, addingDays: method.transitDays)
    end = DateComponents(seconds: now, addingDays: method.transitDaysMax ?? method.transitDays)
  }

  public static let shape = ObjectShape<DateComponentsRange>(
    "The delivery window as UTC calendar dates.", blank: { DateComponentsRange() },
    [.member("startDateComponents", \.start), .member("endDateComponents", \.end)])
}
