import PayServiceCore
import Testing

@Suite("Money")
struct MoneyTests {
  @Test("decimal text converts to minor units exactly", arguments: [
    ("50.00", 2, Int64(5000)), ("50", 2, 5000), ("0.35", 2, 35), ("19.990", 2, 1999), ("-4.5", 2, -450),
    ("5400", 0, 5400), ("1.25", 3, 1250), ("0", 2, 0), ("007.10", 2, 710),
  ])
  func minorUnits(text: String, digits: Int, expected: Int64) {
    #expect(MoneyText.minorUnits(text, digits: digits) == .success(expected))
  }

  @Test("text that is not an exact amount is refused with the reason")
  func refusals() {
    #expect(MoneyText.minorUnits("1.234", digits: 2) == .failure(.tooManyDecimals(allowed: 2)))
    #expect(MoneyText.minorUnits("1.5", digits: 0) == .failure(.tooManyDecimals(allowed: 0)))
    for bad in ["", "1.", ".5", "+1", "1e2", "1,00", " 1", "0x10", "١٢"] {
      #expect(MoneyText.minorUnits(bad, digits: 2) == .failure(.notADecimal), "\(bad)")
    }
    #expect(MoneyText.minorUnits("99999999999999999999", digits: 2) == .failure(.tooLarge))
  }

  /// The grapheme-based readings parseDecimal and minorUnits had before they read bytes: the
  /// references they must agree with.
  static func referenceParseDecimal(_ text: String) -> (negative: Bool, integer: Substring, fraction: Substring)? {
    var rest = Substring(text)
    var negative = false
    if rest.first == "-" {
      negative = true
      rest = rest.dropFirst()
    }
    let isDigit: (Character) -> Bool = { $0.isASCII && $0.isNumber }
    let parts = rest.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    guard let integer = parts.first, !integer.isEmpty, integer.allSatisfy(isDigit) else { return nil }
    var fraction: Substring = ""
    if parts.count == 2 {
      fraction = parts[1]
      guard !fraction.isEmpty, fraction.allSatisfy(isDigit) else { return nil }
    }
    return (negative, integer, fraction)
  }

  static func referenceMinorUnits(_ text: String, digits: Int) -> Result<Int64, MoneyText.AmountProblem> {
    guard let decimal = referenceParseDecimal(text) else { return .failure(.notADecimal) }
    var fraction = decimal.fraction
    while fraction.count > digits, fraction.last == "0" { fraction = fraction.dropLast() }
    guard fraction.count <= digits else { return .failure(.tooManyDecimals(allowed: digits)) }
    var integer = decimal.integer.drop { $0 == "0" }
    if integer.isEmpty { integer = "0" }
    guard integer.count <= 16 else { return .failure(.tooLarge) }
    var value: Int64 = 0
    for character in integer { value = value * 10 + Int64(character.wholeNumberValue!) }
    for index in 0..<digits {
      let digit = index < fraction.count ? fraction[fraction.index(fraction.startIndex, offsetBy: index)] : "0"
      let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
      guard !overflow else { return .failure(.tooLarge) }
      value = shifted + Int64(digit.wholeNumberValue!)
    }
    guard value <= MoneyText.maxMinorUnits else { return .failure(.tooLarge) }
    return .success(decimal.negative ? -value : value)
  }

  @Test("the byte readings of decimals and minor units agree with the grapheme readings on 50,000 texts")
  func minorUnitsAgreeWithReference() {
    var generator = SystemRandomNumberGenerator()
    let pieces = ["0", "1", "5", "9", "00", "12345678", ".", "-", "+", "e", " ", "\u{301}", "١", "9999999999"]
    var answered = 0
    for _ in 0..<50_000 {
      let text = (0..<Int.random(in: 0...7, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
        .joined()
      let digits = Int.random(in: 0...4, using: &generator)
      let ours = MoneyText.minorUnits(text, digits: digits)
      #expect(ours == Self.referenceMinorUnits(text, digits: digits), "\(text) with \(digits) digits")
      let decimal = MoneyText.parseDecimal(text)
      let reference = Self.referenceParseDecimal(text)
      #expect(decimal?.negative == reference?.negative, "\(text)")
      #expect(decimal?.integerDigits == reference?.integer, "\(text)")
      #expect(decimal?.fractionDigits == reference?.fraction, "\(text)")
      if case .success = ours { answered += 1 }
    }
    // The generator must reach amounts, not only refusals.
    #expect(answered > 2_000)
  }

  @Test("minor units format with the currency's digits", arguments: [
    (Int64(5400), 2, "54.00"), (5400, 0, "5400"), (1250, 3, "1.250"), (5, 2, "0.05"), (-5, 2, "-0.05"),
    (0, 2, "0.00"), (0, 0, "0"), (7, 4, "0.0007"),
  ])
  func format(minor: Int64, digits: Int, expected: String) {
    #expect(MoneyText.format(minor, digits: digits) == expected)
  }

  @Test("halfUp rounds ties away from zero; halfEven to the even neighbour")
  func rounding() {
    let tenth = Rate("0.1")!
    // 25 × 0.1 = 2.5; 35 × 0.1 = 3.5; 24 × 0.1 = 2.4; -25 × 0.1 = -2.5
    #expect(tenth.apply(to: 25, rounding: .halfUp) == 3)
    #expect(tenth.apply(to: 25, rounding: .halfEven) == 2)
    #expect(tenth.apply(to: 35, rounding: .halfUp) == 4)
    #expect(tenth.apply(to: 35, rounding: .halfEven) == 4)
    #expect(tenth.apply(to: 24, rounding: .halfUp) == 2)
    #expect(tenth.apply(to: 26, rounding: .halfEven) == 3)
    #expect(tenth.apply(to: -25, rounding: .halfUp) == -3)
    #expect(tenth.apply(to: -25, rounding: .halfEven) == -2)
    // 5000 × 0.0725 = 362.5 → 363 (the book's clock in California).
    #expect(Rate("0.0725")!.apply(to: 5000, rounding: .halfUp) == 363)
    #expect(Rate("0.0725")!.apply(to: 5000, rounding: .halfEven) == 362)
    // Large exact products do not overflow: 10^15 minor × 0.999999999999.
    #expect(Rate("0.999999999999")!.apply(to: 1_000_000_000_000_000, rounding: .halfUp) == 999_999_999_999_000)
  }

  @Test("rates are exact non-negative decimals")
  func rates() {
    #expect(Rate("0.08875")?.numerator == 8875)
    #expect(Rate("0.08875")?.scale == 5)
    #expect(Rate("1")?.isAtMostOne == true)
    #expect(Rate("1.01")?.isAtMostOne == false)
    #expect(Rate("-0.1") == nil)
    #expect(Rate("0.1234567890123") == nil)
    #expect(Rate("abc") == nil)
  }

  @Test("ISO 4217 minor digits")
  func currencies() {
    #expect(Currency(code: "USD")?.minorDigits == 2)
    #expect(Currency(code: "JPY")?.minorDigits == 0)
    #expect(Currency(code: "KWD")?.minorDigits == 3)
    #expect(Currency(code: "CLF")?.minorDigits == 4)
    #expect(Currency(code: "usd") == nil)
    #expect(Currency(code: "XYZ") == nil)
  }
}
