/// Money of one currency added up: what a run over many objects says it moved.
public struct CurrencyTotal: Equatable, Sendable, WireObject {
  public var currencyCode = ""
  public var amount = ""

  public static let shape = ObjectShape<CurrencyTotal>(
    blank: { CurrencyTotal() },
    [
      .member("currencyCode", \.currencyCode, .required, Shapes.currencyCode),
      .member("amount", \.amount, .required, Shapes.amount),
    ])

  /// Sums in minor units by currency, written as one total per currency, by currency code.
  public struct Sums: Sendable {
    private var minor: [String: Int64] = [:]

    public init() {}

    /// Adds `amount` (decimal text) of `currencyCode`; text that is not an amount of it adds nothing.
    public mutating func add(_ amount: String, _ currencyCode: String) {
      guard let currency = Currency(code: currencyCode),
        case .success(let units) = MoneyText.minorUnits(amount, digits: currency.minorDigits)
      else { return }
      let (sum, overflow) = minor[currencyCode, default: 0].addingReportingOverflow(units)
      minor[currencyCode] = overflow ? .max : sum
    }

    public var totals: [CurrencyTotal] {
      minor.keys.sorted().map { code in
        CurrencyTotal(
          currencyCode: code,
          amount: MoneyText.format(minor[code] ?? 0, digits: Currency(code: code)?.minorDigits ?? 2))
      }
    }
  }
}
