import Crypto
import Foundation

/// One `NotificationRequestItem` of Adyen's Standard webhook ("Webhook structure",
/// https://docs.adyen.com/development-resources/webhooks/webhook-types; the `Webhooks` OpenAPI
/// description, https://github.com/Adyen/adyen-openapi, json/Webhooks-v1.json): the server queues
/// one for every payment and modification outcome and every dispute event, and releases them
/// together as one `NotificationRequest` (`AdyenTestServer.releaseNotifications`).
///
/// Written as Adyen's examples write it: members in alphabetical order, `amount` with `currency`
/// and `value`, `success` as the string `"true"` or `"false"`, `eventDate` ISO 8601 with the
/// offset of Adyen's Amsterdam platform (CET, +01:00, or CEST, +02:00), and `additionalData` (in
/// alphabetical order) carrying `hmacSignature`.
public struct AdyenNotificationItem: Sendable, Equatable {
  public var eventCode: String
  public var success: Bool
  /// The payment's (AUTHORISATION), the modification's, or the dispute's pspReference.
  public var pspReference: String
  /// For modifications and disputes: the payment's pspReference.
  public var originalReference: String?
  public var merchantAccountCode: String
  public var merchantReference: String
  public var currency: String
  public var value: Int64
  /// The card brand (`visa`, `mc`, …).
  public var paymentMethod: String?
  public var reason: String?
  /// AUTHORISATION only: the follow-up operations the payment allows.
  public var operations: [String]?
  /// Additional data other than `hmacSignature`, which is added when the item is written.
  public var additionalData: [String: String]
  public var eventDate: String

  public init(
    eventCode: String, success: Bool, pspReference: String, originalReference: String? = nil,
    merchantAccountCode: String, merchantReference: String, currency: String, value: Int64,
    paymentMethod: String? = nil, reason: String? = nil, operations: [String]? = nil,
    additionalData: [String: String] = [:], eventDate: String
  ) {
    self.eventCode = eventCode
    self.success = success
    self.pspReference = pspReference
    self.originalReference = originalReference
    self.merchantAccountCode = merchantAccountCode
    self.merchantReference = merchantReference
    self.currency = currency
    self.value = value
    self.paymentMethod = paymentMethod
    self.reason = reason
    self.operations = operations
    self.additionalData = additionalData
    self.eventDate = eventDate
  }

  /// The text Adyen signs ("Verify HMAC signatures",
  /// https://docs.adyen.com/development-resources/webhooks/secure-webhooks/verify-hmac-signatures):
  /// `pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success`,
  /// a missing field as the empty string.
  public var signedText: String {
    [
      pspReference, originalReference ?? "", merchantAccountCode, merchantReference, String(value), currency,
      eventCode, success ? "true" : "false",
    ].joined(separator: ":")
  }

  /// HMAC-SHA256 of `signedText` under the hex-decoded key, base64: `additionalData.hmacSignature`.
  /// Nil when `hmacKey` is not an even number of hex digits.
  public func signature(hmacKey: String) -> String? {
    guard let key = Self.bytes(hex: hmacKey) else { return nil }
    let mac = HMAC<SHA256>.authenticationCode(for: Array(signedText.utf8), using: SymmetricKey(data: key))
    return Data(mac).base64EncodedString()
  }

  static func bytes(hex: String) -> [UInt8]? {
    let digits = Array(hex.utf8)
    guard digits.count % 2 == 0, !digits.isEmpty else { return nil }
    var bytes: [UInt8] = []
    for index in stride(from: 0, to: digits.count, by: 2) {
      guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16),
        digits[index] != UInt8(ascii: "+"), digits[index] != UInt8(ascii: "-")
      else { return nil }
      bytes.append(byte)
    }
    return bytes
  }

  /// The item as the body writes it, wrapped as `{"NotificationRequestItem": {…}}`.
  func json(hmacKey: String) -> AdyenJSON {
    var additional = additionalData
    additional["hmacSignature"] = signature(hmacKey: hmacKey) ?? ""
    var members: [(String, AdyenJSON)] = [
      ("additionalData", .object(additional.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
      ("amount", .object([("currency", .string(currency)), ("value", .int(value))])),
      ("eventCode", .string(eventCode)),
      ("eventDate", .string(eventDate)),
      ("merchantAccountCode", .string(merchantAccountCode)),
      ("merchantReference", .string(merchantReference)),
    ]
    if let operations { members.append(("operations", .array(operations.map { .string($0) }))) }
    if let originalReference { members.append(("originalReference", .string(originalReference))) }
    if let paymentMethod { members.append(("paymentMethod", .string(paymentMethod))) }
    members.append(("pspReference", .string(pspReference)))
    members.append(("reason", .string(reason ?? "")))
    members.append(("success", .string(success ? "true" : "false")))
    return .object([("NotificationRequestItem", .object(members))])
  }

  /// A `NotificationRequest` body: `{"live":"false","notificationItems":[…]}`, one line.
  static func body(_ items: [AdyenNotificationItem], hmacKey: String) -> String {
    AdyenJSON.object([
      ("live", .string("false")), ("notificationItems", .array(items.map { $0.json(hmacKey: hmacKey) })),
    ]).rendered
  }
}

/// Times as the server writes them, from Unix seconds, without the system's time zone data.
enum AdyenClock {
  /// The civil date and time (proleptic Gregorian) of `seconds` after the epoch, shifted by
  /// `offset` seconds.
  static func civil(_ seconds: Int64, offset: Int64 = 0) -> (
    year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
  ) {
    let shifted = seconds + offset
    let days = shifted >= 0 ? shifted / 86_400 : (shifted - 86_399) / 86_400
    let secondOfDay = Int(shifted - days * 86_400)
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
    let month = Int(mp < 10 ? mp + 3 : mp - 9)
    let year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
    return (year, month, day, secondOfDay / 3600, secondOfDay % 3600 / 60, secondOfDay % 60)
  }

  /// Unix seconds of a UTC civil time (Hinnant's days_from_civil).
  static func unix(year: Int, month: Int, day: Int, hour: Int = 0) -> Int64 {
    let y = Int64(month <= 2 ? year - 1 : year)
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let m = Int64(month)
    let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return (era * 146_097 + dayOfEra - 719_468) * 86_400 + Int64(hour) * 3600
  }

  /// The UTC day of `seconds` as `YYYYMMDD`.
  static func day(_ seconds: Int64) -> Int {
    let date = civil(seconds)
    return date.year * 10_000 + date.month * 100 + date.day
  }

  /// Amsterdam's offset from UTC at `seconds`: CEST (+2 h) from 01:00 UTC on the last Sunday of
  /// March to 01:00 UTC on the last Sunday of October, CET (+1 h) otherwise (the EU's rule).
  static func amsterdamOffset(_ seconds: Int64) -> Int64 {
    let year = civil(seconds).year
    func lastSunday(_ month: Int) -> Int64 {
      let lastDay = unix(year: year, month: month, day: 31, hour: 1)
      let weekday = ((lastDay / 86_400) % 7 + 11) % 7  // 0 = Sunday (1970-01-01 was a Thursday)
      return lastDay - weekday * 86_400
    }
    return seconds >= lastSunday(3) && seconds < lastSunday(10) ? 7200 : 3600
  }

  /// `YYYY-MM-DDThh:mm:ss+hh:mm` in Amsterdam time, as Adyen writes `eventDate`.
  static func eventDate(_ seconds: Int64) -> String {
    let offset = amsterdamOffset(seconds)
    let date = civil(seconds, offset: offset)
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
    return "\(date.year)-\(two(date.month))-\(two(date.day))T\(two(date.hour)):\(two(date.minute)):\(two(date.second))"
      + "+\(two(Int(offset / 3600))):00"
  }
}
