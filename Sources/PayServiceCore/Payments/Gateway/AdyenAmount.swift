/// Amounts as Adyen writes them: minor units by Adyen's own number of decimals for a currency,
/// which is ISO 4217's except for four ("Currency codes and minor units",
/// https://docs.adyen.com/development-resources/currency-codes): CLP and ISK have 2 at Adyen (0 in
/// ISO 4217), CVE and IDR have 0 (2 in ISO 4217). payservice keeps ISO 4217 minor units in its
/// store and converts at the gateway's edge, both ways.
public enum AdyenAmount {
  /// Adyen's decimals where they differ from ISO 4217's.
  static let adyenDigits: [String: Int] = ["CLP": 2, "ISK": 2, "CVE": 0, "IDR": 0]

  /// The number of decimals Adyen uses for `currency`.
  public static func digits(_ currency: Currency) -> Int { adyenDigits[currency.code] ?? currency.minorDigits }

  /// Adyen's `value` for `minor` ISO 4217 minor units of `currency`; nil when Adyen cannot write it
  /// (an IDR or CVE amount with a fraction of the major unit, which Adyen's whole units cannot hold).
  public static func value(ofMinor minor: Int64, _ currency: Currency) -> Int64? {
    let shift = digits(currency) - currency.minorDigits
    guard minor >= 0, minor <= MoneyText.maxMinorUnits else { return nil }
    if shift >= 0 { return minor * power(shift) }
    let divisor = power(-shift)
    return minor % divisor == 0 ? minor / divisor : nil
  }

  /// The ISO 4217 minor units of Adyen's `value` in `currency`; nil when it has a fraction of an
  /// ISO minor unit (a CLP or ISK value that is not a multiple of 100) or is out of range.
  public static func minor(ofValue value: Int64, _ currency: Currency) -> Int64? {
    let shift = digits(currency) - currency.minorDigits
    guard value >= 0 else { return nil }
    if shift <= 0 {
      let factor = power(-shift)
      guard value <= MoneyText.maxMinorUnits / factor else { return nil }
      return value * factor
    }
    let divisor = power(shift)
    guard value % divisor == 0, value / divisor <= MoneyText.maxMinorUnits else { return nil }
    return value / divisor
  }

  static func power(_ exponent: Int) -> Int64 {
    var result: Int64 = 1
    for _ in 0..<exponent { result *= 10 }
    return result
  }
}
