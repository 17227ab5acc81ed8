/// Prices a cart for a region from config: cart lines, shipping, tax and the grand total.
public struct Pricer: Sendable {
  public let config: Config

  public init(config: Config) {
    self.config = config
  }

  /// A fully priced checkout.
  public struct Quote: Sendable {
    public var lines: [CartLine]
    public var shippingMethod: ShippingMethod?
    public var shippingMinor: Int64
    public var taxMinor: Int64
    public var totalMinor: Int64
    public var summaryItems: [SummaryItem]
  }

  public func region(of contact: Contact?) -> Region {
    Region(contact: contact, defaultCountry: config.merchant.countryCode)
  }

  /// Shipping methods offered for `region`, in config order.
  public func offeredMethods(for region: Region) -> [ShippingMethod] {
    guard config.shipping.shipsTo.contains(region.countryCode) else { return [] }
    return config.shipping.methods.filter { method in
      (method.regions.map(region.isIn) ?? true) && !(method.exceptRegions.map(region.isIn) ?? false)
    }
  }

  /// The offered methods with `preferred` moved to the front when it is offered.
  public func orderedMethods(for region: Region, preferred: String?) -> [ShippingMethod] {
    var methods = offeredMethods(for: region)
    if let preferred, let index = methods.firstIndex(where: { $0.identifier == preferred }) {
      methods.insert(methods.remove(at: index), at: 0)
    }
    return methods
  }

  /// The most specific tax rule for the region: postal prefix > state > country; first in config on ties.
  public func taxRule(for region: Region) -> TaxRule? {
    var best: TaxRule?
    var bestScore = -1
    for rule in config.tax.rules {
      let parts = rule.region.split(separator: "-", maxSplits: 1)
      guard parts[0] == region.countryCode else { continue }
      var score = 0
      if parts.count == 2 {
        guard rule.region == region.code else { continue }
        score = 1
      }
      if let prefixes = rule.postalCodePrefixes {
        guard let postal = region.postalCode, prefixes.contains(where: { postal.hasPrefix($0) }) else { continue }
        score = 2
      }
      if score > bestScore {
        best = rule
        bestScore = score
      }
    }
    return best
  }

  public func lines(for items: [CartItem]) -> [CartLine] {
    items.map { item in
      let product = config.productsBySKU[item.sku]!
      return CartLine(sku: item.sku, name: product.name, quantity: item.quantity, unitPriceMinor: product.priceMinor)
    }
  }

  /// Prices `items` shipped with `method` (nil: no shipping line) to `region`.
  public func quote(items: [CartItem], method: ShippingMethod?, region: Region) -> Quote {
    let lines = lines(for: items)
    let rule = taxRule(for: region)
    let rate = rule?.rate ?? config.tax.defaultRate
    let rounding = config.tax.rounding
    var summary: [SummaryItem] = []
    summary.reserveCapacity(lines.count + 3)
    var subtotal: Int64 = 0
    var tax: Int64 = 0
    for line in lines {
      subtotal += line.amountMinor
      tax += rate.apply(to: line.amountMinor, rounding: rounding)
      summary.append(SummaryItem(label: line.label, amount: config.format(line.amountMinor)))
    }
    var shipping: Int64 = 0
    if let method {
      shipping = method.amountMinor
      summary.append(SummaryItem(label: "Shipping", amount: config.format(shipping)))
      if rule?.shippingTaxable == true { tax += rate.apply(to: shipping, rounding: rounding) }
    }
    summary.append(SummaryItem(label: "Tax", amount: config.format(tax)))
    let total = subtotal + shipping + tax
    summary.append(SummaryItem(label: config.merchant.displayName, amount: config.format(total)))
    return Quote(
      lines: lines, shippingMethod: method, shippingMinor: shipping, taxMinor: tax, totalMinor: total,
      summaryItems: summary)
  }

  public func offer(_ method: ShippingMethod) -> ShippingMethodOffer {
    ShippingMethodOffer(method: method, amount: config.format(method.amountMinor))
  }
}
