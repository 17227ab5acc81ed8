/// An ISO 4217 currency and the number of digits of its minor unit.
public struct Currency: Equatable, Hashable, Sendable {
  public let code: String
  public let minorDigits: Int

  /// The active ISO 4217 currency with this alphabetic code, or nil.
  public init?(code: String) {
    guard code.utf8.count == 3, let digits = Currency.minorDigitsByCode[code] else { return nil }
    self.code = code
    self.minorDigits = digits
  }

  /// Minor-unit digits of the active ISO 4217 codes (list of 2024; funds codes included).
  static let minorDigitsByCode: [String: Int] = {
    var table: [String: Int] = [:]
    let twoDigit = """
      AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD \
      CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS \
      GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL \
      MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK \
      PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS \
      TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG
      """
    let zeroDigit = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF"
    let threeDigit = "BHD IQD JOD KWD LYD OMR TND"
    let fourDigit = "CLF UYW"
    for (list, digits) in [(twoDigit, 2), (zeroDigit, 0), (threeDigit, 3), (fourDigit, 4)] {
      for code in list.split(separator: " ") { table[String(code)] = digits }
    }
    return table
  }()
}
