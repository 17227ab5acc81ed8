/// A calendar date as Apple Pay JS `ApplePayDateComponents` spells it.
public struct DateComponents: Equatable, Sendable, JSONRepresentable {
  public var years: Int
  public var months: Int
  public var days: Int

  /// The UTC calendar date of `seconds` since the epoch plus `addingDays` days.
  public init(seconds: Int64, addingDays: Int) {
    let day = Int(RFC3339.floorDiv(seconds, 86400)) + addingDays
    (years, months, days) = RFC3339.civilFromDays(day)
  }

  public func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.member("years", years)
    writer.member("months", months)
    writer.member("days", days)
    writer.endObject()
  }
}

/// A shipping method's delivery window (`ApplePayDateComponentsRange`): the service clock's UTC date
/// plus `transitDays`, to plus `transitDaysMax` (or `transitDays` when that is not configured).
public struct DateComponentsRange: Equatable, Sendable, JSONRepresentable {
  public var start: DateComponents
  public var end: DateComponents

  public init(method: ShippingMethod, now: Int64) {
    start = DateComponents(seconds: now, addingDays: method.transitDays)
    end = DateComponents(seconds: now, addingDays: method.transitDaysMax ?? method.transitDays)
  }

  public func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.member("startDateComponents", start)
    writer.member("endDateComponents", end)
    writer.endObject()
  }
}
