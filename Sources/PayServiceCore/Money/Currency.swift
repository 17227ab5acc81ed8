/// An ISO 4217 currency and the number of digits of its minor unit.
public struct Currency: Equatable, Hashable, Sendable {
  public let code: String
  public let minorDigits: Int

  /// The active ISO 4217 currency with this alphabetic code, or nil.
  public init?(code: String) {
    guard let digits = Currency.minorDigits(of: code) else { return nil }
    self.code = code
    self.minorDigits = digits
  }

  /// Active ISO 4217 codes (list of 2024; funds codes included) by the digits of their minor unit,
  /// each code followed by a space.
  private static let codesByMinorDigits: [(digits: Int, codes: StaticString)] = [
    (
      2,
      """
      AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD \
      CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS \
      GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL \
      MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK \
      PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS \
      TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG \

      """
    ),
    (0, "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF "),
    (3, "BHD IQD JOD KWD LYD OMR TND "),
    (4, "CLF UYW "),
  ]

  /// The minor-unit digits of an active code, found in the lists above: a start reads one
  /// currency, and building a dictionary of all of them cost more than the rest of its config.
  static func minorDigits(of code: String) -> Int? {
    var code = code
    return code.withUTF8 { wanted -> Int? in
      guard wanted.count == 3 else { return nil }
      for (digits, codes) in codesByMinorDigits {
        let text = UnsafeBufferPointer(start: codes.utf8Start, count: codes.utf8CodeUnitCount)
        var index = 0
        while index + 3 <= text.count {
          if text[index] == wanted[0] && text[index + 1] == wanted[1] && text[index + 2] == wanted[2] { return digits }
          index += 4
        }
      }
      return nil
    }
  }

  /// Every active code, for tests.
  static var allCodes: [String] {
    codesByMinorDigits.flatMap { entry in
      String(decoding: UnsafeBufferPointer(start: entry.codes.utf8Start, count: entry.codes.utf8CodeUnitCount), as: UTF8.self)
        .split(separator: " ").map(String.init)
    }
  }

  /// The ISO 4217 numeric code (three digits), as Apple Pay's decrypted payment data carries it;
  /// nil only for a code missing from the table below.
  public var numericCode: String? { Currency.numericCodes[code] }

  /// ISO 4217 numeric codes of the codes above (ANG and XCG share 532). Built on first use, so
  /// only a service that decrypts Apple Pay tokens pays for it.
  static let numericCodes: [String: String] = {
    let list = """
      AED784 AFN971 ALL008 AMD051 ANG532 AOA973 ARS032 AUD036 AWG533 AZN944 BAM977 BBD052 BDT050 BGN975 \
      BHD048 BIF108 BMD060 BND096 BOB068 BOV984 BRL986 BSD044 BTN064 BWP072 BYN933 BZD084 CAD124 CDF976 \
      CHE947 CHF756 CHW948 CLF990 CLP152 CNY156 COP170 COU970 CRC188 CUP192 CVE132 CZK203 DJF262 DKK208 \
      DOP214 DZD012 EGP818 ERN232 ETB230 EUR978 FJD242 FKP238 GBP826 GEL981 GHS936 GIP292 GMD270 GNF324 \
      GTQ320 GYD328 HKD344 HNL340 HTG332 HUF348 IDR360 ILS376 INR356 IQD368 IRR364 ISK352 JMD388 JOD400 \
      JPY392 KES404 KGS417 KHR116 KMF174 KPW408 KRW410 KWD414 KYD136 KZT398 LAK418 LBP422 LKR144 LRD430 \
      LSL426 LYD434 MAD504 MDL498 MGA969 MKD807 MMK104 MNT496 MOP446 MRU929 MUR480 MVR462 MWK454 MXN484 \
      MXV979 MYR458 MZN943 NAD516 NGN566 NIO558 NOK578 NPR524 NZD554 OMR512 PAB590 PEN604 PGK598 PHP608 \
      PKR586 PLN985 PYG600 QAR634 RON946 RSD941 RUB643 RWF646 SAR682 SBD090 SCR690 SDG938 SEK752 SGD702 \
      SHP654 SLE925 SOS706 SRD968 SSP728 STN930 SVC222 SYP760 SZL748 THB764 TJS972 TMT934 TND788 TOP776 \
      TRY949 TTD780 TWD901 TZS834 UAH980 UGX800 USD840 USN997 UYI940 UYU858 UYW927 UZS860 VED926 VES928 \
      VND704 VUV548 WST882 XAF950 XCD951 XCG532 XOF952 XPF953 YER886 ZAR710 ZMW967 ZWG924
      """
    var table: [String: String] = [:]
    for entry in list.split(separator: " ") {
      table[String(entry.prefix(3))] = String(entry.suffix(3))
    }
    return table
  }()
}
