import Foundation

/// The service clock: pinned by `--now` for tests and replays, else the system clock.
public struct ServiceClock: Sendable {
  public let pinned: Int64?

  public init(pinned: Int64? = nil) {
    self.pinned = pinned
  }

  /// Seconds since the Unix epoch.
  public func now() -> Int64 {
    pinned ?? Int64(Date().timeIntervalSince1970)
  }
}

/// RFC 3339 timestamps: parses any offset and fraction, formats UTC to the second ("2026-11-21T12:00:00Z").
public enum RFC3339 {
  public static func parse(_ text: String) -> Int64? {
    let b = Array(text.utf8)
    func num(_ start: Int, _ count: Int) -> Int? {
      guard start + count <= b.count else { return nil }
      var value = 0
      for i in start..<(start + count) {
        guard (0x30...0x39).contains(b[i]) else { return nil }
        value = value * 10 + Int(b[i] - 0x30)
      }
      return value
    }
    guard b.count >= 20, let year = num(0, 4), b[4] == UInt8(ascii: "-"), let month = num(5, 2),
      b[7] == UInt8(ascii: "-"), let day = num(8, 2), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
      let hour = num(11, 2), b[13] == UInt8(ascii: ":"), let minute = num(14, 2), b[16] == UInt8(ascii: ":"),
      let second = num(17, 2)
    else { return nil }
    guard (1...12).contains(month), (1...daysInMonth(year, month)).contains(day), hour < 24, minute < 60,
      second < 61
    else { return nil }
    var index = 19
    if index < b.count, b[index] == UInt8(ascii: ".") {
      index += 1
      let start = index
      while index < b.count, (0x30...0x39).contains(b[index]) { index += 1 }
      guard index > start else { return nil }
    }
    guard index < b.count else { return nil }
    var offset = 0
    if b[index] == UInt8(ascii: "Z") || b[index] == UInt8(ascii: "z") {
      index += 1
    } else if b[index] == UInt8(ascii: "+") || b[index] == UInt8(ascii: "-") {
      guard let oh = num(index + 1, 2), index + 3 < b.count, b[index + 3] == UInt8(ascii: ":"),
        let om = num(index + 4, 2), oh < 24, om < 60
      else { return nil }
      offset = (oh * 60 + om) * 60 * (b[index] == UInt8(ascii: "-") ? -1 : 1)
      index += 6
    } else {
      return nil
    }
    guard index == b.count else { return nil }
    let days = daysFromCivil(year, month, day)
    return Int64(days) * 86400 + Int64(hour * 3600 + minute * 60 + min(second, 59)) - Int64(offset)
  }

  public static func format(_ seconds: Int64) -> String {
    let days = Int(floorDiv(seconds, 86400))
    let secondOfDay = Int(seconds - Int64(days) * 86400)
    let (year, month, day) = civilFromDays(days)
    func pad(_ value: Int, _ width: Int) -> String {
      let text = String(value)
      return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
      + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))Z"
  }

  static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
  }

  static func daysInMonth(_ year: Int, _ month: Int) -> Int {
    switch month {
    case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  /// Howard Hinnant's days_from_civil.
  static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
    let y = m <= 2 ? y0 - 1 : y0
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146097 + doe - 719468
  }

  static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
    let z = z0 + 719468
    let era = (z >= 0 ? z : z - 146096) / 146097
    let doe = z - era * 146097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
    let y = yoe + era * 400
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (m <= 2 ? y + 1 : y, m, d)
  }
}
