/// Exact decimal text <-> integer minor units. Money never passes through a binary float.
public enum MoneyText {
  /// A parsed decimal string `^-?[0-9]+(\.[0-9]+)?$`.
  public struct Decimal: Equatable, Sendable {
    public var negative: Bool
    public var integerDigits: Substring
    public var fractionDigits: Substring
  }

  /// The pattern every amount on the wire and in config must match.
  public static let pattern = "^-?[0-9]+(\\.[0-9]+)?$"

  public static func parseDecimal(_ text: String) -> Decimal? {
    var text = text
    guard let parts = text.withUTF8({ decimalParts(UnsafeRawBufferPointer($0)) }) else { return nil }
    // `pattern` is ASCII, so byte offsets fall on characters.
    func slice(_ range: Range<Int>) -> Substring {
      let utf8 = text.utf8
      return text[utf8.index(utf8.startIndex, offsetBy: range.lowerBound)..<utf8.index(utf8.startIndex, offsetBy: range.upperBound)]
    }
    return Decimal(negative: parts.negative, integerDigits: slice(parts.integer), fractionDigits: slice(parts.fraction))
  }

  /// Where the sign, integer digits and fraction digits of a `pattern` decimal lie in `bytes`
  /// (an empty fraction when there is none); nil when the bytes are not one.
  static func decimalParts(_ bytes: UnsafeRawBufferPointer) -> (negative: Bool, integer: Range<Int>, fraction: Range<Int>)? {
    func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
    let end = bytes.count
    var at = 0
    let negative = at < end && bytes[at] == UInt8(ascii: "-")
    if negative { at += 1 }
    let integerStart = at
    while at < end && isDigit(bytes[at]) { at += 1 }
    guard at > integerStart else { return nil }
    let integer = integerStart..<at
    guard at < end else { return (negative, integer, at..<at) }
    guard bytes[at] == UInt8(ascii: ".") else { return nil }
    at += 1
    let fractionStart = at
    while at < end && isDigit(bytes[at]) { at += 1 }
    guard at > fractionStart, at == end else { return nil }
    return (negative, integer, fractionStart..<at)
  }

  public enum AmountProblem: Error, Equatable, Sendable {
    case notADecimal
    case tooManyDecimals(allowed: Int)
    case tooLarge
  }

  /// The largest magnitude accepted for any amount, in minor units (10^15).
  public static let maxMinorUnits: Int64 = 1_000_000_000_000_000

  /// Converts decimal text to minor units. Extra fraction digits are allowed only when they are zeros.
  public static func minorUnits(_ text: String, digits: Int) -> Result<Int64, AmountProblem> {
    var text = text
    return text.withUTF8 { minorUnits(UnsafeRawBufferPointer($0), digits: digits) }
  }

  /// `minorUnits` on the text's UTF-8 bytes: `pattern` is ASCII, so any other byte is no decimal.
  static func minorUnits(_ bytes: UnsafeRawBufferPointer, digits: Int) -> Result<Int64, AmountProblem> {
    guard let (negative, integer, fraction) = decimalParts(bytes) else { return .failure(.notADecimal) }
    let fractionStart = fraction.lowerBound
    var fractionEnd = fraction.upperBound
    while fractionEnd - fractionStart > digits, bytes[fractionEnd - 1] == UInt8(ascii: "0") { fractionEnd -= 1 }
    guard fractionEnd - fractionStart <= digits else { return .failure(.tooManyDecimals(allowed: digits)) }
    var significant = integer.lowerBound
    while significant < integer.upperBound && bytes[significant] == UInt8(ascii: "0") { significant += 1 }
    guard integer.upperBound - significant <= 16 else { return .failure(.tooLarge) }
    var value: Int64 = 0
    for index in significant..<integer.upperBound { value = value * 10 + Int64(bytes[index] &- 0x30) }
    for index in 0..<digits {
      let digit = fractionStart + index < fractionEnd ? Int64(bytes[fractionStart + index] &- 0x30) : 0
      let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
      guard !overflow else { return .failure(.tooLarge) }
      value = shifted + digit
    }
    guard value <= maxMinorUnits else { return .failure(.tooLarge) }
    return .success(negative ? -value : value)
  }

  /// Formats minor units with exactly `digits` fraction digits: 5400 -> "54.00" (2), "5400" (0).
  public static func format(_ minor: Int64, digits: Int) -> String {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer in
      let start = write(minor, digits: digits, endingIn: buffer)
      return String(decoding: UnsafeMutableBufferPointer(rebasing: buffer[start...]), as: UTF8.self)
    }
  }

  /// Writes what `format` gives at the end of `buffer` (32 bytes or more), right to left; returns
  /// where the text starts. The response writer formats amounts with it straight into its bytes.
  @inline(__always)
  static func write(_ minor: Int64, digits: Int, endingIn buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
    // An Int64 has at most 19 digits, plus a sign, a point and the zeros that pad a small amount
    // ("0.05"). ISO 4217 uses at most 4 decimals.
    precondition((0...8).contains(digits) && buffer.count >= 32)
    var magnitude = minor.magnitude
    var position = buffer.count
    var produced = 0
    while magnitude > 0 || produced <= digits {
      if digits > 0 && produced == digits {
        position -= 1
        buffer[position] = UInt8(ascii: ".")
      }
      position -= 1
      buffer[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
      magnitude /= 10
      produced += 1
    }
    if minor < 0 {
      position -= 1
      buffer[position] = UInt8(ascii: "-")
    }
    return position
  }
}

/// How a product of an amount and a rate is rounded to minor units.
public enum Rounding: String, Sendable, CaseIterable {
  /// Ties away from zero.
  case halfUp
  /// Ties to the even neighbour (banker's rounding).
  case halfEven
}

/// An exact decimal rate such as "0.08875", kept as numerator / 10^scale.
public struct Rate: Equatable, Sendable {
  public let numerator: Int64
  public let scale: Int
  public let text: String

  /// 10^scale, computed once: `apply` runs for every cart line.
  let denominator: Int128

  /// Parses a non-negative decimal with at most 12 fraction digits.
  public init?(_ text: String) {
    guard let decimal = MoneyText.parseDecimal(text), !decimal.negative, decimal.fractionDigits.count <= 12 else {
      return nil
    }
    self.init(decimal, extraScale: 0, text: text)
  }

  /// Parses a percentage ("10", "-5", "7.5") into the fraction it stands for (0.10, -0.05, 0.075).
  /// At most 10 fraction digits; negative only when `allowNegative`. `text` keeps the percentage.
  public init?(percent text: String, allowNegative: Bool) {
    guard let decimal = MoneyText.parseDecimal(text), allowNegative || !decimal.negative,
      decimal.fractionDigits.count <= 10
    else { return nil }
    self.init(decimal, extraScale: 2, text: text)
  }

  private init?(_ decimal: MoneyText.Decimal, extraScale: Int, text: String) {
    guard decimal.integerDigits.count <= 6 else { return nil }
    var value: Int64 = 0
    for digits in [decimal.integerDigits, decimal.fractionDigits] {
      for character in digits { value = value * 10 + Int64(character.asciiDigitValue) }
    }
    self.numerator = decimal.negative ? -value : value
    self.scale = decimal.fractionDigits.count + extraScale
    var denominator: Int128 = 1
    for _ in 0..<scale { denominator *= 10 }
    self.denominator = denominator
    self.text = text
  }

  /// Compares the rate with `numerator / denominator` exactly: -1, 0 or 1.
  public func compare(_ numerator: Int64, over denominator: Int64) -> Int {
    let left = Int128(self.numerator) * Int128(denominator)
    let right = Int128(numerator) * self.denominator
    return left < right ? -1 : (left == right ? 0 : 1)
  }

  /// True when the rate is at most 1 (100%).
  public var isAtMostOne: Bool { Int128(numerator) <= denominator }

  /// round(minor × rate) to whole minor units.
  public func apply(to minor: Int64, rounding: Rounding) -> Int64 {
    Int64(Rate.divide(Int128(minor) * Int128(numerator), by: denominator, rounding: rounding))
  }

  static func divide(_ value: Int128, by denominator: Int128, rounding: Rounding) -> Int128 {
    let quotient = value / denominator
    let remainder = value % denominator
    if remainder == 0 { return quotient }
    let twice = remainder.magnitude * 2
    let away: Bool
    if twice > denominator.magnitude {
      away = true
    } else if twice < denominator.magnitude {
      away = false
    } else {
      switch rounding {
      case .halfUp: away = true
      case .halfEven: away = quotient % 2 != 0
      }
    }
    guard away else { return quotient }
    return value < 0 ? quotient - 1 : quotient + 1
  }
}

extension Character {
  var isASCIIDigit: Bool { isASCII && isNumber }
  var asciiDigitValue: Int { Int(asciiValue! - 48) }
}
