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

  public var json: JSONValue {
    var object = JSONObjectBuilder()
    object.set("years", years)
    object.set("months", months)
    object.set("days", days)
    return object.value
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

  public var json: JSONValue {
    var object = JSONObjectBuilder()
    object.set("startDateComponents", start.json)
    object.set("endDateComponents", end.json)
    return object.value
  }
}
