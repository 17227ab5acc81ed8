/// A refusal as Adyen reports one: `refusalReasonCode` and `refusalReason` from Adyen's "Refusal
/// reasons" table (https://docs.adyen.com/development-resources/refusal-reasons), and the
/// `resultCode` that goes with it in Adyen's "Testing result codes" table
/// (https://docs.adyen.com/development-resources/testing/result-codes): `Error` for 4 "Acquirer
/// Error", `Refused` for the others.
public struct AdyenRefusal: Sendable, Equatable {
  public let code: Int
  public let reason: String

  /// `Error` or `Refused`.
  public var resultCode: String { code == 4 ? "Error" : "Refused" }

  /// The reasons of Adyen's table this server gives, by `refusalReasonCode`.
  public static let byCode: [Int: AdyenRefusal] = {
    let table: [(Int, String)] = [
      (2, "Refused"), (3, "Referral"), (4, "Acquirer Error"), (5, "Blocked Card"), (6, "Expired Card"),
      (7, "Invalid Amount"), (8, "Invalid Card Number"), (9, "Issuer Unavailable"), (10, "Not supported"),
      (11, "3D Not Authenticated"), (12, "Not enough balance"), (14, "Acquirer Fraud"), (15, "Cancelled"),
      (16, "Shopper Cancelled"), (17, "Invalid Pin"), (18, "Pin tries exceeded"), (19, "Pin validation not possible"),
      (20, "FRAUD"), (21, "Not Submitted"), (22, "FRAUD-CANCELLED"),
    ]
    return Dictionary(uniqueKeysWithValues: table.map { ($0.0, AdyenRefusal(code: $0.0, reason: $0.1)) })
  }()

  public static let refused = byCode[2]!
  public static let acquirerError = byCode[4]!
  public static let expiredCard = byCode[6]!
  public static let invalidCardNumber = byCode[8]!
  public static let notEnoughBalance = byCode[12]!
  public static let blockedCard = byCode[5]!
}

/// The card inside a payment: what an Apple Pay token decrypts to (its device account number and
/// expiry), or what a stored payment method keeps.
struct AdyenTestCard: Sendable, Equatable {
  /// The account number (for Apple Pay, the device account number).
  var number: String
  /// `YYMMDD`, as Apple's `applicationExpirationDate`.
  var expiration: String

  var last4: String { String(number.suffix(4)) }
  var bin: String { String(number.prefix(6)) }

  /// Adyen's expiry as its `expiryDate` additional data and notification `reason` write it:
  /// `M/YYYY` in additional data ("6/2016"), `MM/YYYY` in a reason ("11/2012").
  var expiryMonth: Int { Int(expiration.dropFirst(2).prefix(2)) ?? 0 }
  var expiryYear: Int { 2000 + (Int(expiration.prefix(2)) ?? 0) }

  /// The brand as Adyen names it (`visa`, `mc`, `amex`, `discover`, `jcb`, `diners`, `cup`), from
  /// the number's issuer identification range; `visa` for a number no range matches.
  var brand: String {
    let digits = Array(number)
    func prefix(_ count: Int) -> Int { Int(String(digits.prefix(count))) ?? -1 }
    if digits.first == "4" { return "visa" }
    if (51...55).contains(prefix(2)) || (2221...2720).contains(prefix(4)) { return "mc" }
    if prefix(2) == 34 || prefix(2) == 37 { return "amex" }
    if prefix(4) == 6011 || prefix(2) == 65 || (644...649).contains(prefix(3)) { return "discover" }
    if (3528...3589).contains(prefix(4)) { return "jcb" }
    if prefix(2) == 36 || prefix(2) == 38 || prefix(2) == 39 || (300...305).contains(prefix(3)) { return "diners" }
    if prefix(2) == 62 { return "cup" }
    return "visa"
  }

  /// The Luhn (mod 10) check every card number passes.
  var passesLuhn: Bool {
    guard number.count >= 12, number.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
    var sum = 0
    for (position, character) in number.reversed().enumerated() {
      var digit = Int(String(character))!
      if position % 2 == 1 {
        digit *= 2
        if digit > 9 { digit -= 9 }
      }
      sum += digit
    }
    return sum % 10 == 0
  }

  /// Whether the card expired before `day` (`YYMMDD` as an integer `YYYYMMDD`): a card is good
  /// through its expiration date.
  func isExpired(onDay day: Int) -> Bool {
    guard expiration.count == 6, let value = Int(expiration) else { return true }
    return 20_000_000 + value < day
  }

  /// What an authorisation of the card does.
  enum Outcome: Sendable, Equatable {
    case authorised
    case refused(AdyenRefusal)
    /// `resultCode` `Received`: the outcome comes later, in an AUTHORISATION notification, once
    /// `AdyenTestServer.settle` decides it.
    case received
  }

  /// This server's test account numbers (Luhn-valid Visa numbers), each with a fixed outcome; any
  /// other number that passes Luhn and has not expired is authorised. Apple Pay tokens carry a
  /// device account number, and Adyen triggers its test outcomes by cardholder name or additional
  /// data instead, so these numbers are this server's own.
  ///
  /// | Number | Outcome |
  /// | --- | --- |
  /// | 4000 0000 0000 0002 | `Refused`, 2 "Refused" (the issuer's "do not honour") |
  /// | 4000 0000 0000 9995 | `Refused`, 12 "Not enough balance" |
  /// | 4000 0000 0000 9987 | `Refused`, 5 "Blocked Card" |
  /// | 4000 0000 0000 0119 | `Error`, 4 "Acquirer Error" |
  /// | 4000 0000 0000 0077 | `Received` (settled later) |
  static let testNumbers: [String: Outcome] = [
    "4000000000000002": .refused(.refused),
    "4000000000009995": .refused(.notEnoughBalance),
    "4000000000009987": .refused(.blockedCard),
    "4000000000000119": .refused(.acquirerError),
    "4000000000000077": .received,
  ]

  /// The outcome of authorising the card on `day` (`YYYYMMDD`): expired before that day is 6
  /// "Expired Card"; a number failing Luhn is 8 "Invalid Card Number"; then the test numbers.
  func outcome(onDay day: Int) -> Outcome {
    if isExpired(onDay: day) { return .refused(.expiredCard) }
    if !passesLuhn { return .refused(.invalidCardNumber) }
    return Self.testNumbers[number] ?? .authorised
  }
}
