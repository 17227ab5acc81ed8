/// One rate's part of a checkout's tax, for receipts (`taxBreakdown` in results and orders): the
/// taxable net, the tax and the gross at that rate, where net + tax = gross and the taxes sum to
/// the tax the total holds.
public struct TaxBreakdownItem: Equatable, Sendable, WireObject {
  /// The rate as configured, a decimal string like "0.20".
  public var rate = ""
  public var net = ""
  public var tax = ""
  public var gross = ""

  public static let shape = ObjectShape<TaxBreakdownItem>(
    "One rate's part of the tax: net + tax = gross.", blank: { TaxBreakdownItem() },
    [
      .member("rate", \.rate, .required, .string("The rate as configured, like \"0.20\".", minLength: 1)),
      .member("net", \.net, .required, Shapes.amount), .member("tax", \.tax, .required, Shapes.amount),
      .member("gross", \.gross, .required, Shapes.amount),
    ])

  /// The schema of a `taxBreakdown` member.
  static let listSchema = JSONSchema.array(
    TaxBreakdownItem.schema,
    """
    Per rate, the taxable net, the tax and the gross, for receipts. Present when the config uses tax \
    classes, prices that include tax or rounding per order.
    """)
}

extension Tax {
  /// Whether results and orders carry a `taxBreakdown`: when the config uses what issue 20 added
  /// (tax-inclusive prices, classes other than standard, rounding per order). A config without
  /// them answers as before.
  public var reportsBreakdown: Bool {
    pricesIncludeTax || roundingTarget == .perOrder || !defaultClassRates.isEmpty
      || rules.contains { !$0.classRates.isEmpty } || shippingTaxClass != TaxClass.standard
  }
}

extension Pricer.Quote {
  /// The breakdown as results and orders carry it; nil when the config does not report one.
  public func taxBreakdownItems(_ config: Config) -> [TaxBreakdownItem]? {
    guard reportsBreakdown else { return nil }
    return taxBreakdown().map {
      TaxBreakdownItem(
        rate: $0.rate.text, net: config.format($0.netMinor), tax: config.format($0.taxMinor),
        gross: config.format($0.grossMinor))
    }
  }
}
