/// Prices a checkout from config: cart lines, coupon, payment-method adjustment, shipping, tax and
/// the grand total. Pure: the same inputs give the same quote.
public struct Pricer: Sendable {
  public let config: Config
  let rules: RuleIndex
  /// How each tax rule (by position) and the defaults tax, made once: a quote keeps a reference.
  let schemes: [TaxScheme]
  let defaultScheme: TaxScheme

  public init(config: Config) {
    self.config = config
    self.rules = RuleIndex(config: config)
    self.schemes = config.tax.rules.map { TaxScheme(rule: $0, tax: config.tax) }
    self.defaultScheme = TaxScheme(rule: nil, tax: config.tax)
  }

  /// A checkout's taxing: the rule that matched (nil: the default rates) and the tax config.
  final class TaxScheme: Sendable {
    let rule: TaxRule?
    let tax: Tax
    /// `tax.reportsBreakdown`, read once.
    let reportsBreakdown: Bool

    init(rule: TaxRule?, tax: Tax) {
      self.rule = rule
      self.tax = tax
      self.reportsBreakdown = tax.reportsBreakdown
    }

    /// The rate of `taxClass`; config validation ensures every class in use has one.
    func rate(of taxClass: String) -> Rate {
      guard let rate = rateIfConfigured(of: taxClass) else {
        preconditionFailure("tax class \(taxClass) has no rate: the config loader checks every class in use")
      }
      return rate
    }

    /// The rate of `taxClass`, nil when this scheme has none for it.
    func rateIfConfigured(of taxClass: String) -> Rate? {
      if taxClass == TaxClass.standard { return rule?.rate ?? tax.defaultRate }
      return rule.map({ $0.rate(for: taxClass) }) ?? tax.defaultRate(for: taxClass)
    }

    /// The tax on one amount, rounded alone: added to it, or contained in it.
    func tax(on minor: Int64, rate: Rate) -> Int64 {
      tax.pricesIncludeTax
        ? rate.extract(from: minor, rounding: tax.rounding) : rate.apply(to: minor, rounding: tax.rounding)
    }
  }

  /// A fully priced checkout.
  public struct Quote: Sendable {
    public var merchandise: Merchandise
    public var shippingMethod: ShippingMethod?
    public var shippingMinor: Int64
    public var taxMinor: Int64
    public var totalMinor: Int64
    public var summaryItems: [SummaryItem]
    /// How the total splits, for what refunds give back: the line amounts less their discounts,
    /// plus the line taxes, the shipping and its tax, sum to the total exactly.
    public var shippingTaxMinor: Int64
    /// The tax rule the checkout was taxed with (nil: the default rates), the tax config, and each
    /// line's share of the coupon and card adjustment (nil when they cancel out): kept rather than
    /// per-line tax arrays, so that pricing a sheet event allocates nothing for what only an order
    /// needs. Rounded once per rate group, the lines' taxes are kept (they cannot be recomputed alone).
    let scheme: TaxScheme
    let reductionShares: [Int64]?
    let groupedLineTaxes: [Int64]?

    /// Whether results and orders carry the breakdown (`Tax.reportsBreakdown`).
    var reportsBreakdown: Bool { scheme.reportsBreakdown }

    public var lines: [CartLine] { merchandise.lines }

    /// Whether the shipping was taxed (the matched rule taxes shipping and a method was priced).
    public var shippingTaxed: Bool { scheme.rule?.shippingTaxable == true && shippingMethod != nil }

    /// Whether the amounts include their tax (it is contained, not added).
    public var taxIncluded: Bool { scheme.tax.pricesIncludeTax }

    /// Line `index`'s share of the coupon and card adjustment: positive reduces it, negative is a
    /// surcharge.
    public func lineDiscountMinor(_ index: Int) -> Int64 { reductionShares?[index] ?? 0 }

    /// Line `index`'s tax, as the total counted it (contained in the line when prices include tax).
    public func lineTaxMinor(_ index: Int) -> Int64 {
      if let groupedLineTaxes { return groupedLineTaxes[index] }
      return scheme.tax(
        on: lines[index].amountMinor - lineDiscountMinor(index), rate: scheme.rate(of: lines[index].taxClass))
    }

    /// The tax per rate, as a receipt lists it: net + tax = gross for each, their taxes sum to the
    /// quote's tax.
    public func taxBreakdown() -> [TaxEngine.Group] {
      let tax = scheme.tax
      var amounts = lines.indices.map { index in
        TaxEngine.Amount(
          minor: lines[index].amountMinor - lineDiscountMinor(index), rate: scheme.rate(of: lines[index].taxClass))
      }
      if shippingTaxed {
        amounts.append(TaxEngine.Amount(minor: shippingMinor, rate: scheme.rate(of: tax.shippingTaxClass)))
      }
      return TaxEngine.compute(amounts, inclusive: tax.pricesIncludeTax, target: tax.roundingTarget, rounding: tax.rounding)
        .groups
    }
  }

  public func region(of contact: Contact?) -> Region {
    Region(contact: contact, defaultCountry: config.merchant.countryCode)
  }

  /// Shipping methods offered for `region`, in config order.
  public func offeredMethods(for region: Region) -> [ShippingMethod] {
    rules.offeredMethods(for: region)
  }

  /// The offered methods with `preferred` moved to the front when it is offered.
  public func orderedMethods(for region: Region, preferred: String?) -> [ShippingMethod] {
    var methods = offeredMethods(for: region)
    if let preferred, methods.first?.identifier != preferred,
      let index = methods.firstIndex(where: { $0.identifier == preferred })
    {
      methods.insert(methods.remove(at: index), at: 0)
    }
    return methods
  }

  /// The cart's lines priced at `now`: a product with a billing plan at what it costs today.
  public func lines(for items: [CartItem], now: Int64) -> [CartLine] {
    items.map { item in
      let product = config.productsBySKU[item.sku]!
      return CartLine(
        sku: item.sku, name: product.name, quantity: item.quantity,
        unitPriceMinor: product.billing?.dueTodayMinor(price: product.priceMinor, now: now) ?? product.priceMinor,
        taxClass: product.taxClass, billing: product.billing)
    }
  }

  // MARK: Merchandise: cart lines, coupon and payment-method adjustment

  /// Prices the cart lines and applies the coupon and the card's adjustment. `now` decides coupon
  /// expiry. An unusable coupon or card is left out of the prices and reported in the result.
  public func merchandise(items: [CartItem], couponCode: String?, paymentMethod: PaymentMethod?, now: Int64)
    -> Merchandise
  {
    var merchandise = Merchandise(lines: lines(for: items, now: now))
    merchandise.pricedAt = now
    let subtotal = merchandise.subtotalMinor
    let rounding = config.tax.rounding
    switch coupon(couponCode, subtotal: subtotal, now: now) {
    case .none: break
    case .rejected(let error): merchandise.couponError = error
    case .applies(let coupon):
      let discount: Int64
      switch coupon.discount {
      case .percentOff(let rate): discount = rate.apply(to: subtotal, rounding: rounding)
      case .amountOff(let amount): discount = amount
      }
      merchandise.coupon = coupon
      merchandise.couponMinor = min(discount, subtotal)
    }
    if let paymentMethod {
      if let problem = cardProblem(paymentMethod) {
        merchandise.cardError = ApplePayError(.unknown, nil, problem)
      } else if let adjustment = config.paymentMethodAdjustments.first(where: { $0.matches(paymentMethod) }) {
        let base = subtotal - merchandise.couponMinor
        merchandise.adjustment = adjustment
        merchandise.adjustmentMinor = max(adjustment.percent.apply(to: base, rounding: rounding), -base)
      }
    }
    return merchandise
  }

  enum CouponCheck {
    case none
    case applies(Coupon)
    case rejected(ApplePayError)
  }

  /// Whether the typed `code` gives a discount on a cart whose merchandise subtotal is `subtotal`.
  func coupon(_ code: String?, subtotal: Int64, now: Int64) -> CouponCheck {
    guard let code else { return .none }
    let normalized = Coupon.normalize(code)
    if normalized.isEmpty { return .none }
    guard let coupon = config.couponsByCode[normalized] else {
      return .rejected(ApplePayError(.couponCodeInvalid, nil, "This coupon code isn't valid."))
    }
    if let expires = coupon.expires, now > expires {
      return .rejected(
        ApplePayError(.couponCodeExpired, nil, "The code \(coupon.code) expired on \(RFC3339.format(expires))."))
    }
    if let minimum = coupon.minimumSubtotalMinor, subtotal < minimum {
      let currency = config.currency.code
      return .rejected(
        ApplePayError(
          .couponCodeInvalid, nil,
          "The code \(coupon.code) needs a merchandise subtotal of at least \(config.format(minimum)) \(currency); "
            + "this cart's is \(config.format(subtotal)) \(currency)."))
    }
    return .applies(coupon)
  }

  /// Why the merchant cannot take this card, or nil: its network is not in `supportedNetworks`, or
  /// the merchant filters card types (supportsCredit/supportsDebit) and this type is not among them.
  /// Credit needs supportsCredit; debit and prepaid need supportsDebit; store and eMoney cards pass.
  public func cardProblem(_ method: PaymentMethod) -> String? {
    let merchant = config.merchant
    if !merchant.supportedNetworks.contains(where: { $0.lowercased() == method.network.lowercased() }) {
      return "The \(method.network) network is not accepted. Use another card."
    }
    let filtersTypes = merchant.merchantCapabilities.contains { $0 == "supportsCredit" || $0 == "supportsDebit" }
    let needed: String?
    switch method.type {
    case .credit: needed = "supportsCredit"
    case .debit, .prepaid: needed = "supportsDebit"
    case .store, .eMoney: needed = nil
    }
    if filtersTypes, let needed, !merchant.merchantCapabilities.contains(needed) {
      return "\(method.type.rawValue) cards are not accepted. Use another card."
    }
    return nil
  }

  // MARK: Shipping, tax and total

  /// What `method` costs for this merchandise: nothing once the subtotal after discounts reaches freeOver.
  public func shippingMinor(for method: ShippingMethod, _ merchandise: Merchandise) -> Int64 {
    if let threshold = method.freeOverMinor, merchandise.afterDiscountsMinor >= threshold { return 0 }
    return method.amountMinor
  }

  /// Prices `merchandise` shipped with `method` (nil: no shipping line) to `region`.
  ///
  /// Tax is per cart line: the coupon and the adjustment together (their net reduction) are allocated
  /// to the lines in proportion to line amounts by largest remainder, and each line is taxed on its
  /// amount less its share, at its tax class's rate: round((line - share) × rate) added, or, when
  /// prices include tax, round((line - share) × rate / (1 + rate)) contained. Shipping is taxed on
  /// its amount after freeOver where the rule says so. With `roundingTarget: perOrder` the amounts
  /// of one rate are rounded once together (TaxEngine).
  public func quote(_ merchandise: Merchandise, method: ShippingMethod?, region: Region) -> Quote {
    let lines = merchandise.lines
    let scheme = rules.taxRuleMatch(for: region).map { schemes[$0.position] } ?? defaultScheme
    let tax = scheme.tax
    var summary: [SummaryItem] = []
    summary.reserveCapacity(lines.count + 5)
    let reduction = merchandise.couponMinor - merchandise.adjustmentMinor
    let shares = reduction == 0 ? nil : Allocation.largestRemainder(reduction, weights: lines.map(\.amountMinor))
    for line in lines {
      if let billing = line.billing {
        summary += billing.summaryItems(
          for: line, priceMinor: config.productsBySKU[line.sku]!.priceMinor, now: merchandise.pricedAt, format: config.format)
      } else {
        summary.append(SummaryItem(label: line.label, amount: config.format(line.amountMinor)))
      }
    }
    if let coupon = merchandise.coupon {
      summary.append(SummaryItem(label: coupon.label, amount: config.format(-merchandise.couponMinor)))
    }
    if let adjustment = merchandise.adjustment {
      summary.append(SummaryItem(label: adjustment.label, amount: config.format(merchandise.adjustmentMinor)))
    }
    var shipping: Int64 = 0
    let shippingTaxed = method != nil && scheme.rule?.shippingTaxable == true
    if let method {
      shipping = shippingMinor(for: method, merchandise)
      summary.append(SummaryItem(label: "Shipping", amount: config.format(shipping)))
    }
    var taxTotal: Int64 = 0
    var shippingTax: Int64 = 0
    var groupedLineTaxes: [Int64]?
    switch tax.roundingTarget {
    case .perLine:
      for (index, line) in lines.enumerated() {
        taxTotal += scheme.tax(on: line.amountMinor - (shares?[index] ?? 0), rate: scheme.rate(of: line.taxClass))
      }
      if shippingTaxed {
        shippingTax = scheme.tax(on: shipping, rate: scheme.rate(of: tax.shippingTaxClass))
      }
    case .perOrder:
      var amounts = lines.indices.map { index in
        TaxEngine.Amount(
          minor: lines[index].amountMinor - (shares?[index] ?? 0), rate: scheme.rate(of: lines[index].taxClass))
      }
      if shippingTaxed {
        amounts.append(TaxEngine.Amount(minor: shipping, rate: scheme.rate(of: tax.shippingTaxClass)))
      }
      let result = TaxEngine.compute(amounts, inclusive: tax.pricesIncludeTax, target: .perOrder, rounding: tax.rounding)
      groupedLineTaxes = Array(result.taxes.prefix(lines.count))
      shippingTax = shippingTaxed ? result.taxes[lines.count] : 0
      taxTotal = result.totalTaxMinor - shippingTax
    }
    taxTotal += shippingTax
    // Never negative: the net merchandise is capped at zero and shipping and tax are not negative.
    let total: Int64
    if tax.pricesIncludeTax {
      // The tax is inside the amounts: shown (when configured) but not added.
      if let label = tax.inclusiveLabel { summary.append(SummaryItem(label: label, amount: config.format(taxTotal))) }
      total = merchandise.netMinor + shipping
    } else {
      summary.append(SummaryItem(label: "Tax", amount: config.format(taxTotal)))
      total = merchandise.netMinor + shipping + taxTotal
    }
    summary.append(SummaryItem(label: config.merchant.displayName, amount: config.format(total)))
    return Quote(
      merchandise: merchandise, shippingMethod: method, shippingMinor: shipping, taxMinor: taxTotal, totalMinor: total,
      summaryItems: summary, shippingTaxMinor: shippingTax, scheme: scheme, reductionShares: shares,
      groupedLineTaxes: groupedLineTaxes)
  }

  /// `method` as offered to the sheet for this merchandise (freeOver applied), with its delivery window.
  public func offer(_ method: ShippingMethod, for merchandise: Merchandise, now: Int64) -> ShippingMethodOffer {
    ShippingMethodOffer(
      method: method, amount: config.format(shippingMinor(for: method, merchandise)),
      dateComponentsRange: DateComponentsRange(method: method, now: now))
  }
}

/// The priced cart before shipping and tax: its lines, the coupon and the card's adjustment.
public struct Merchandise: Sendable {
  public var lines: [CartLine]
  public var subtotalMinor: Int64
  /// The applied coupon; nil when none was given or it was rejected.
  public var coupon: Coupon?
  /// The coupon's discount, a non-negative amount at most the subtotal.
  public var couponMinor: Int64 = 0
  /// The matched payment-method adjustment, if any.
  public var adjustment: PaymentMethodAdjustment?
  /// Signed: negative is a discount, positive a surcharge; never below -(subtotal - coupon).
  public var adjustmentMinor: Int64 = 0
  /// Why a given coupon code was not applied.
  public var couponError: ApplePayError?
  /// Why the given card cannot be used (its adjustment is then not applied).
  public var cardError: ApplePayError?
  /// The service clock's time the lines were priced at (billing plans' dates count from it).
  public var pricedAt: Int64 = 0

  public init(lines: [CartLine]) {
    self.lines = lines
    self.subtotalMinor = lines.reduce(0) { $0 + $1.amountMinor }
  }

  /// The subtotal after the coupon and any payment-method discount (surcharges do not count): what
  /// a shipping method's freeOver is compared with.
  public var afterDiscountsMinor: Int64 { subtotalMinor - couponMinor + min(adjustmentMinor, 0) }

  /// The merchandise amount charged: subtotal - coupon + adjustment.
  public var netMinor: Int64 { subtotalMinor - couponMinor + adjustmentMinor }

  /// The coupon and card problems, in that order.
  public var errors: [ApplePayError] { [couponError, cardError].compactMap { $0 } }
}
