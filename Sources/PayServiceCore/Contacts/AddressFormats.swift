/// How addresses are written in a country, from public postal facts (the national post offices'
/// published formats, as collected by the UPU and Google's libaddressinput): the postal code's
/// forms, whether the country uses postal codes at all, the administrative areas an address must
/// name, and what Apple Pay sends for a shipping contact before the payment is authorized (it
/// redacts the UK postcode to its outward code and the Canadian one to its first three characters).
///
/// A country not listed gets the generic checks: a postal code at authorization, nothing more.
public struct AddressFormat: Sendable {
  /// What the country calls its postal code, for messages ("postcode", "ZIP code").
  public var postalName: String
  /// The full forms: `9` a digit, `A` a letter, `X` a letter or a digit, a space optional, anything
  /// else itself. Empty: the country has no postal codes (none is asked for, any is ignored).
  public var postalForms: [String]
  /// The forms the sheet sends before authorization, when Apple Pay redacts the code.
  public var redactedForms: [String] = []
  /// A real code of the country, for messages.
  public var postalExample: String
  /// Overrides the postal code message ("Enter a postcode like SW1A 1AA.").
  public var postalMessage: String?
  /// The administrative areas an address must name (upper-cased codes and names), or nil.
  public var areas: Set<String>?
  public var areaMessage: String?
  /// The postal code and area are checked at every step, present or not (US and Canadian contacts
  /// have been since version 1). Elsewhere a field the sheet left out is asked for at authorization.
  public var checkedWhileRedacted = false

  /// Whether `code` (trimmed, upper-cased) is a full postal code, or, when `redactedAllowed`, the
  /// form the sheet sends before authorization.
  public func acceptsPostalCode(_ code: String, redactedAllowed: Bool) -> Bool {
    let forms = redactedAllowed ? postalForms + redactedForms : postalForms
    return forms.contains { Self.matches(Array(code.utf8), Array($0.utf8)) }
  }

  public var postalCodeMessage: String { postalMessage ?? "Enter a \(postalName) like \(postalExample)." }

  /// `code` against one form: a space in the form may be left out, every other character must match.
  static func matches(_ code: [UInt8], _ form: [UInt8]) -> Bool {
    var at = 0
    for symbol in form {
      if symbol == UInt8(ascii: " ") {
        if at < code.count && code[at] == symbol { at += 1 }
        continue
      }
      guard at < code.count else { return false }
      let byte = code[at]
      let digit = (0x30...0x39).contains(byte)
      let letter = (0x41...0x5A).contains(byte)
      switch symbol {
      case UInt8(ascii: "9"): guard digit else { return false }
      case UInt8(ascii: "A"): guard letter else { return false }
      case UInt8(ascii: "X"): guard digit || letter else { return false }
      default: guard byte == symbol else { return false }
      }
      at += 1
    }
    return at == code.count
  }

  /// The formats by ISO 3166-1 alpha-2 country code.
  public static let byCountry: [String: AddressFormat] = {
    var formats: [String: AddressFormat] = [:]
    func add(_ country: String, _ name: String, _ forms: [String], example: String, redacted: [String] = []) {
      formats[country] = AddressFormat(postalName: name, postalForms: forms, redactedForms: redacted, postalExample: example)
    }
    add("US", "ZIP code", ["99999", "99999-9999"], example: "95014")
    formats["US"]!.postalMessage = "Enter a 5-digit ZIP code or ZIP+4, like 95014 or 95014-2083."
    formats["US"]!.areas = usStates
    formats["US"]!.areaMessage = "Enter a US state or territory code, like CA."
    formats["US"]!.checkedWhileRedacted = true
    add("CA", "postal code", ["A9A 9A9"], example: "K1A 0B1", redacted: ["A9A"])
    formats["CA"]!.areas = canadianProvinces
    formats["CA"]!.areaMessage = "Enter a Canadian province or territory code, like ON."
    formats["CA"]!.checkedWhileRedacted = true
    let outward = ["A9", "A99", "AA9", "AA99", "A9A", "AA9A"]
    add("GB", "postcode", outward.map { $0 + " 9AA" }, example: "SW1A 1AA", redacted: outward)
    add("AU", "postcode", ["9999"], example: "2000")
    formats["AU"]!.areas = australianStates
    formats["AU"]!.areaMessage = "Enter an Australian state or territory, like NSW."
    add("CN", "postal code", ["999999"], example: "100000")
    formats["CN"]!.areas = chineseProvinces
    formats["CN"]!.areaMessage = "Enter a province, municipality or autonomous region, like 广东省 or Guangdong."
    // The sheet sends the first three digits; prefectures come as JIS codes (13 is Tokyo) or names.
    add("JP", "postal code", ["999-9999"], example: "100-0001", redacted: ["999"])
    formats["JP"]!.areas = japanesePrefectures
    formats["JP"]!.areaMessage = "Enter a prefecture, like 東京都 or Tokyo."
    add("IT", "CAP", ["99999"], example: "00184")
    formats["IT"]!.areas = italianProvinces
    formats["IT"]!.areaMessage = "Enter a province code, like RM."
    // Countries without postal codes.
    for country in ["HK", "MO", "AE", "QA"] {
      formats[country] = AddressFormat(postalName: "postal code", postalForms: [], postalExample: "")
    }
    add("IE", "Eircode", ["A99 XXXX", "D6W XXXX"], example: "D02 X285")
    add("DE", "Postleitzahl", ["99999"], example: "10117")
    add("FR", "code postal", ["99999"], example: "75008")
    add("ES", "código postal", ["99999"], example: "28013")
    add("PT", "código postal", ["9999-999"], example: "1100-148")
    add("NL", "postcode", ["9999 AA"], example: "1012 JS")
    add("BE", "postcode", ["9999"], example: "1000")
    add("LU", "code postal", ["9999", "L-9999"], example: "1009")
    add("CH", "postcode", ["9999"], example: "3003")
    add("AT", "Postleitzahl", ["9999"], example: "1010")
    add("DK", "postnummer", ["9999"], example: "1050")
    add("NO", "postnummer", ["9999"], example: "0150")
    add("SE", "postnummer", ["999 99"], example: "111 52")
    add("FI", "postinumero", ["99999"], example: "00100")
    add("IS", "póstnúmer", ["999"], example: "101")
    add("PL", "kod pocztowy", ["99-999"], example: "00-950")
    add("CZ", "PSČ", ["999 99"], example: "110 00")
    add("SK", "PSČ", ["999 99"], example: "811 01")
    add("HU", "irányítószám", ["9999"], example: "1051")
    add("GR", "postal code", ["999 99"], example: "105 57")
    add("NZ", "postcode", ["9999"], example: "6011")
    add("SG", "postal code", ["999999"], example: "018956")
    add("KR", "postal code", ["99999"], example: "03187")
    add("TW", "postal code", ["999", "999-99", "99999", "999999"], example: "100")
    add("IN", "PIN code", ["999999", "999 999"], example: "110001")
    add("BR", "CEP", ["99999-999", "99999999"], example: "01310-100")
    add("MX", "código postal", ["99999"], example: "06000")
    add("IL", "postal code", ["9999999"], example: "9103401")
    add("ZA", "postal code", ["9999"], example: "8001")
    add("MY", "postcode", ["99999"], example: "50450")
    add("TH", "postal code", ["99999"], example: "10200")
    add("SA", "postal code", ["99999", "99999-9999"], example: "11564")
    return formats
  }()

  static let usStates: Set<String> = [
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY",
    "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH",
    "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY",
    // Territories and military post offices.
    "AS", "GU", "MP", "PR", "VI", "UM", "AA", "AE", "AP",
  ]

  static let canadianProvinces: Set<String> = [
    "AB", "BC", "MB", "NB", "NL", "NS", "NT", "NU", "ON", "PE", "QC", "SK", "YT",
  ]

  static let australianStates: Set<String> = [
    "NSW", "VIC", "QLD", "WA", "SA", "TAS", "ACT", "NT",
    "NEW SOUTH WALES", "VICTORIA", "QUEENSLAND", "WESTERN AUSTRALIA", "SOUTH AUSTRALIA", "TASMANIA",
    "AUSTRALIAN CAPITAL TERRITORY", "NORTHERN TERRITORY",
  ]

  /// Mainland China's 31 provincial divisions: their names with and without the 省, 市 or 自治区
  /// suffix, and in pinyin.
  static let chineseProvinces: Set<String> = {
    let divisions: [(full: String, short: String, pinyin: [String])] = [
      ("北京市", "北京", ["BEIJING"]), ("天津市", "天津", ["TIANJIN"]), ("河北省", "河北", ["HEBEI"]),
      ("山西省", "山西", ["SHANXI"]), ("内蒙古自治区", "内蒙古", ["INNER MONGOLIA", "NEI MONGOL", "NEIMENGGU"]),
      ("辽宁省", "辽宁", ["LIAONING"]), ("吉林省", "吉林", ["JILIN"]), ("黑龙江省", "黑龙江", ["HEILONGJIANG"]),
      ("上海市", "上海", ["SHANGHAI"]), ("江苏省", "江苏", ["JIANGSU"]), ("浙江省", "浙江", ["ZHEJIANG"]),
      ("安徽省", "安徽", ["ANHUI"]), ("福建省", "福建", ["FUJIAN"]), ("江西省", "江西", ["JIANGXI"]),
      ("山东省", "山东", ["SHANDONG"]), ("河南省", "河南", ["HENAN"]), ("湖北省", "湖北", ["HUBEI"]),
      ("湖南省", "湖南", ["HUNAN"]), ("广东省", "广东", ["GUANGDONG"]), ("广西壮族自治区", "广西", ["GUANGXI"]),
      ("海南省", "海南", ["HAINAN"]), ("重庆市", "重庆", ["CHONGQING"]), ("四川省", "四川", ["SICHUAN"]),
      ("贵州省", "贵州", ["GUIZHOU"]), ("云南省", "云南", ["YUNNAN"]), ("西藏自治区", "西藏", ["TIBET", "XIZANG"]),
      ("陕西省", "陕西", ["SHAANXI"]), ("甘肃省", "甘肃", ["GANSU"]), ("青海省", "青海", ["QINGHAI"]),
      ("宁夏回族自治区", "宁夏", ["NINGXIA"]), ("新疆维吾尔自治区", "新疆", ["XINJIANG"]),
    ]
    return Set(divisions.flatMap { [$0.full, $0.short] + $0.pinyin })
  }()

  /// Japan's 47 prefectures, in kanji, in romaji, and as JIS X 0401 codes (01 to 47).
  static let japanesePrefectures: Set<String> = {
    let kanji = [
      "北海道", "青森県", "岩手県", "宮城県", "秋田県", "山形県", "福島県", "茨城県", "栃木県", "群馬県", "埼玉県", "千葉県",
      "東京都", "神奈川県", "新潟県", "富山県", "石川県", "福井県", "山梨県", "長野県", "岐阜県", "静岡県", "愛知県", "三重県",
      "滋賀県", "京都府", "大阪府", "兵庫県", "奈良県", "和歌山県", "鳥取県", "島根県", "岡山県", "広島県", "山口県", "徳島県",
      "香川県", "愛媛県", "高知県", "福岡県", "佐賀県", "長崎県", "熊本県", "大分県", "宮崎県", "鹿児島県", "沖縄県",
    ]
    let romaji = [
      "HOKKAIDO", "AOMORI", "IWATE", "MIYAGI", "AKITA", "YAMAGATA", "FUKUSHIMA", "IBARAKI", "TOCHIGI", "GUNMA",
      "SAITAMA", "CHIBA", "TOKYO", "KANAGAWA", "NIIGATA", "TOYAMA", "ISHIKAWA", "FUKUI", "YAMANASHI", "NAGANO",
      "GIFU", "SHIZUOKA", "AICHI", "MIE", "SHIGA", "KYOTO", "OSAKA", "HYOGO", "NARA", "WAKAYAMA", "TOTTORI",
      "SHIMANE", "OKAYAMA", "HIROSHIMA", "YAMAGUCHI", "TOKUSHIMA", "KAGAWA", "EHIME", "KOCHI", "FUKUOKA", "SAGA",
      "NAGASAKI", "KUMAMOTO", "OITA", "MIYAZAKI", "KAGOSHIMA", "OKINAWA",
    ]
    let codes = (1...47).flatMap { [String($0), $0 < 10 ? "0\($0)" : String($0)] }
    return Set(kanji + romaji + codes)
  }()

  /// Italy's province codes (sigle), as on number plates and addresses.
  static let italianProvinces: Set<String> = [
    "AG", "AL", "AN", "AO", "AP", "AQ", "AR", "AT", "AV", "BA", "BG", "BI", "BL", "BN", "BO", "BR", "BS", "BT",
    "BZ", "CA", "CB", "CE", "CH", "CL", "CN", "CO", "CR", "CS", "CT", "CZ", "EN", "FC", "FE", "FG", "FI", "FM",
    "FR", "GE", "GO", "GR", "IM", "IS", "KR", "LC", "LE", "LI", "LO", "LT", "LU", "MB", "MC", "ME", "MI", "MN",
    "MO", "MS", "MT", "NA", "NO", "NU", "OR", "PA", "PC", "PD", "PE", "PG", "PI", "PN", "PO", "PR", "PT", "PU",
    "PV", "PZ", "RA", "RC", "RE", "RG", "RI", "RM", "RN", "RO", "SA", "SI", "SO", "SP", "SR", "SS", "SU", "SV",
    "TA", "TE", "TN", "TO", "TP", "TR", "TS", "TV", "UD", "VA", "VB", "VC", "VE", "VI", "VR", "VT", "VV",
  ]
}
