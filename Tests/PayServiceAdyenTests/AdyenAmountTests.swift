import PayServiceCore
import Testing

/// Adyen's minor units beside ISO 4217's (https://docs.adyen.com/development-resources/currency-codes).
@Suite("Adyen amounts")
struct AdyenAmountTests {
  static func currency(_ code: String) throws -> Currency { try #require(Currency(code: code)) }

  @Test("where Adyen's decimals are ISO 4217's, the value is the minor units")
  func sameDigits() throws {
    for (code, minor) in [("EUR", Int64(1130)), ("JPY", 500), ("KWD", 1_250), ("USD", 0), ("CLF", 12_345)] {
      let currency = try Self.currency(code)
      #expect(AdyenAmount.digits(currency) == currency.minorDigits)
      #expect(AdyenAmount.value(ofMinor: minor, currency) == minor)
      #expect(AdyenAmount.minor(ofValue: minor, currency) == minor)
    }
  }

  @Test("CLP and ISK: two decimals at Adyen, none in ISO 4217")
  func moreDigits() throws {
    for code in ["CLP", "ISK"] {
      let currency = try Self.currency(code)
      #expect(AdyenAmount.digits(currency) == 2)
      #expect(AdyenAmount.value(ofMinor: 2_790, currency) == 279_000)
      #expect(AdyenAmount.minor(ofValue: 279_000, currency) == 2_790)
      #expect(AdyenAmount.minor(ofValue: 279_050, currency) == nil)
      #expect(AdyenAmount.value(ofMinor: 1_000_000_000_000_000, currency) == 100_000_000_000_000_000)
      #expect(AdyenAmount.minor(ofValue: 100_000_000_000_000_100, currency) == nil)
    }
  }

  @Test("CVE and IDR: no decimals at Adyen, two in ISO 4217; a fraction of the unit cannot be sent")
  func fewerDigits() throws {
    for code in ["CVE", "IDR"] {
      let currency = try Self.currency(code)
      #expect(AdyenAmount.digits(currency) == 0)
      #expect(AdyenAmount.value(ofMinor: 1_500_000, currency) == 15_000)
      #expect(AdyenAmount.value(ofMinor: 1_500_050, currency) == nil)
      #expect(AdyenAmount.minor(ofValue: 15_000, currency) == 1_500_000)
      #expect(AdyenAmount.minor(ofValue: 10_000_000_000_001, currency) == nil)
    }
  }

  @Test("negative amounts and amounts past 10^15 minor units are never converted")
  func outOfRange() throws {
    let eur = try Self.currency("EUR")
    #expect(AdyenAmount.value(ofMinor: -1, eur) == nil)
    #expect(AdyenAmount.value(ofMinor: 1_000_000_000_000_001, eur) == nil)
    #expect(AdyenAmount.minor(ofValue: -1, eur) == nil)
    #expect(AdyenAmount.minor(ofValue: 1_000_000_000_000_001, eur) == nil)
    #expect(AdyenAmount.minor(ofValue: 1_000_000_000_000_000, eur) == 1_000_000_000_000_000)
  }
}
