/// HTTP's dates (RFC 9110, 5.6.7): `IMF-fixdate` ("Sun, 06 Nov 1994 08:49:37 GMT"), what servers
/// send, and the two obsolete forms a recipient must also read, `rfc850-date` ("Sunday,
/// 06-Nov-94 08:49:37 GMT") and `asctime-date` ("Sun Nov  6 08:49:37 1994"). Times are seconds
/// since 1970, UTC, as `RFC3339` counts them.
public enum HTTPDate {
  static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
  static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
  static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

  /// `text` in any of the three forms; nil for anything else (another zone than GMT, a day that
  /// the month does not have). The day name is not checked against the date. A two-digit year is
  /// the one, ending in those digits, at most 50 years after `now`'s.
  public static func parse(_ text: String, now: Int64 = ServiceClock().now()) -> Int64? {
    let fields = text.split(separator: " ")
    let named = fields.first.map { $0.hasSuffix(",") ? $0.dropLast() : $0 } ?? ""
    switch fields.count {
    case 6 where fields[0].hasSuffix(",") && dayNames.contains(String(named)) && fields[5] == "GMT":
      guard fields[1].count == 2, fields[3].count == 4, let year = number(fields[3]) else { return nil }
      return seconds(year: year, month: fields[2], day: fields[1], time: fields[4])
    case 4 where fields[0].hasSuffix(",") && longDayNames.contains(String(named)) && fields[3] == "GMT":
      let date = fields[1].split(separator: "-", omittingEmptySubsequences: false)
      guard date.count == 3, date[0].count == 2, date[2].count == 2, let twoDigits = number(date[2]) else { return nil }
      let (thisYear, _, _) = RFC3339.civilFromDays(Int(RFC3339.floorDiv(now, 86_400)))
      var year = thisYear - thisYear % 100 + twoDigits
      if year > thisYear + 50 { year -= 100 }
      return seconds(year: year, month: date[1], day: date[0], time: fields[2])
    case 5 where fields[0].count == 3 && dayNames.contains(String(fields[0])):
      guard fields[2].count <= 2, fields[4].count == 4, let year = number(fields[4]) else { return nil }
      return seconds(year: year, month: fields[1], day: fields[2], time: fields[3])
    default:
      return nil
    }
  }

  /// `seconds` as an `IMF-fixdate`.
  public static func format(_ seconds: Int64) -> String {
    let days = RFC3339.floorDiv(seconds, 86_400)
    let (year, month, day) = RFC3339.civilFromDays(Int(days))
    let secondOfDay = Int(seconds - days * 86_400)
    // 1970-01-01 was a Thursday.
    let weekday = Int((days % 7 + 7 + 3) % 7)
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
    let clock = "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))"
    return "\(dayNames[weekday]), \(two(day)) \(monthNames[month - 1]) \(year) \(clock) GMT"
  }

  private static func seconds(year: Int, month name: Substring, day: Substring, time: Substring) -> Int64? {
    let clock = time.split(separator: ":", omittingEmptySubsequences: false)
    guard let month = monthNames.firstIndex(of: String(name)).map({ $0 + 1 }), let day = number(day),
      (1...RFC3339.daysInMonth(year, month)).contains(day), clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
      let hour = number(clock[0]), let minute = number(clock[1]), let second = number(clock[2]),
      hour < 24, minute < 60, second <= 60
    else { return nil }
    let days = Int64(RFC3339.daysFromCivil(year, month, day))
    return days * 86_400 + Int64(hour * 3600 + minute * 60 + min(second, 59))
  }

  /// Decimal digits only (at most four, as every field here is).
  private static func number(_ text: Substring) -> Int? {
    guard !text.isEmpty, text.count <= 4, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
    return Int(text)
  }
}
