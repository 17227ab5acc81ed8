import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The config compiled for pricing a cart straight from a request's bytes (the borrowed request
/// path, `BorrowedRequest`): skus, shipping method identifiers and region codes are looked up
/// with the scanned slices, names and labels are JSON text already, rates are integers, and
/// everything is plain memory, so that pricing a sheet costs no allocation and no reference
/// counting on anything both server threads share.
///
/// It holds the config's facts, not its rules: which methods a region is offered and which tax
/// rules are its candidates come from `RuleIndex`, the rates of each rule and class from
/// `Pricer.TaxScheme`, and the arithmetic (`Rate.divide`) is the pricer's. It prices only what
/// needs none of the rest: no coupon, no card, no billing plan, tax rounded per line and no
/// tax breakdown. For anything else the caller declines and the general pricer answers;
/// `BorrowedRequestTests` check both give the same bytes for every config in the repository.
struct PricingTable: @unchecked Sendable {
  /// A run of bytes in `text`.
  struct Text {
    var offset: Int32
    var count: Int32
  }

  /// A run of entries in `lists`; `count < 0`: none at all (a lookup that found nothing).
  struct List {
    var start: Int32
    var count: Int32
  }

  struct ProductEntry {
    /// The name as JSON string contents.
    var name: Text
    var priceMinor: Int64
    var taxClass: Int32
    /// False for a product with a billing plan: its lines and amounts need the clock.
    var pricedPlainly: Bool
  }

  struct MethodEntry {
    var identifier: Text
    var amountMinor: Int64
    /// `Int64.max` when the method is never free.
    var freeOverMinor: Int64
  }

  /// What a region code ("US", "US-CA") is offered and taxed by.
  struct RegionEntry {
    /// Methods offered (indices into `methods`); count < 0 when the code has no entry of its own.
    var methods: List
    /// Candidate tax rules (positions in `tax.rules`).
    var rules: List
  }

  struct RuleEntry {
    /// The postal code prefixes (raw bytes, as `Text` entries in `prefixes`); count < 0: none.
    var prefixes: List
    var shippingTaxable: Bool
  }

  /// A rate as a fraction, the divisor already adjusted for extraction when prices include tax.
  struct RateEntry {
    var numerator: Int128
    var divisor: Int128
  }

  let products: UnsafePointer<ProductEntry>
  let skus: ByteKeyTable
  let methods: UnsafePointer<MethodEntry>
  let methodIdentifiers: ByteKeyTable
  let regionCodes: ByteKeyTable
  /// The other spellings the address data knows of the config's area codes (`US-CALIFORNIA` for
  /// `US-CA`, `JP-TOKYO` for `JP-13`), to the region they name, made at the first borrowed area
  /// that is no region code: priced as `RuleIndex` prices them on the general path.
  let areaKeys: AreaKeys
  let regions: UnsafePointer<RegionEntry>
  let lists: UnsafePointer<Int32>
  let rules: UnsafePointer<RuleEntry>
  let prefixes: UnsafePointer<Text>
  /// Rates by scheme (a rule's position; `ruleCount` for the defaults) and class.
  let rates: UnsafePointer<RateEntry>
  let classCount: Int
  let ruleCount: Int
  let shippingClass: Int
  let text: UnsafePointer<UInt8>
  let currencyCode: Text
  let displayName: Text
  /// The line that shows the tax inside inclusive prices; count < 0: none.
  let inclusiveLabel: Text
  let defaultCountry: Text
  let digits: Int
  let rounding: Rounding
  let pricesIncludeTax: Bool

  /// Owns the memory a table reads; the service context keeps it.
  final class Storage: @unchecked Sendable {
    fileprivate var allocations: [UnsafeMutableRawPointer] = []
    fileprivate var tables: [ByteKeyTable.Storage] = []

    deinit {
      for allocation in allocations { allocation.deallocate() }
    }

    fileprivate func keep<Element>(_ elements: [Element]) -> UnsafePointer<Element> {
      let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: max(elements.count, 1))
      _ = buffer.initialize(from: elements)
      allocations.append(UnsafeMutableRawPointer(buffer.baseAddress!))
      return UnsafePointer(buffer.baseAddress!)
    }

    fileprivate func keep(_ entries: [(key: String, value: Int)]) -> ByteKeyTable {
      let (table, storage) = ByteKeyTable.make(entries)
      tables.append(storage)
      return table
    }
  }

  /// The table for `pricer`'s config, or nil when no request could be priced by it (tax rounded
  /// per order, or a tax breakdown in every result).
  static func make(_ pricer: Pricer) -> (PricingTable, Storage)? {
    let config = pricer.config
    let tax = config.tax
    guard tax.roundingTarget == .perLine, !tax.reportsBreakdown else { return nil }
    let storage = Storage()
    var text: [UInt8] = []
    func raw(_ string: String) -> Text {
      let start = text.count
      text.append(contentsOf: string.utf8)
      return Text(offset: Int32(start), count: Int32(text.count - start))
    }
    func json(_ string: String) -> Text {
      // Escaped exactly as the response writer escapes any string, without the quotes.
      var writer = JSONWriter(capacity: string.utf8.count + 8)
      writer.write(string)
      let start = text.count
      writer.withBytes { text.append(contentsOf: $0.dropFirst().dropLast()) }
      return Text(offset: Int32(start), count: Int32(text.count - start))
    }

    var classes: [String] = [TaxClass.standard]
    var classIndices = [TaxClass.standard: 0]
    func classIndex(_ name: String) -> Int {
      if let index = classIndices[name] { return index }
      classes.append(name)
      classIndices[name] = classes.count - 1
      return classes.count - 1
    }
    let products = config.catalog.map { product in
      ProductEntry(
        name: json(product.name), priceMinor: product.priceMinor, taxClass: Int32(classIndex(product.taxClass)),
        pricedPlainly: product.billing == nil)
    }
    let shippingClass = classIndex(tax.shippingTaxClass)
    let methods = config.shipping.methods.map { method in
      MethodEntry(
        identifier: json(method.identifier), amountMinor: method.amountMinor, freeOverMinor: method.freeOverMinor ?? .max)
    }
    let methodIndex = Dictionary(
      config.shipping.methods.enumerated().map { ($0.element.identifier, $0.offset) }, uniquingKeysWith: { first, _ in first })

    var lists: [Int32] = []
    func list(_ values: [Int]?) -> List {
      guard let values else { return List(start: 0, count: -1) }
      let start = lists.count
      lists.append(contentsOf: values.map(Int32.init))
      return List(start: Int32(start), count: Int32(values.count))
    }
    var regionEntries: [RegionEntry] = []
    var regionKeys: [(key: String, value: Int)] = []
    for code in pricer.rules.regionCodes {
      let entry = pricer.rules.entry(code)
      regionKeys.append((code, regionEntries.count))
      regionEntries.append(
        RegionEntry(
          methods: list(entry.methods.map { $0.map { methodIndex[$0.identifier]! } }),
          rules: list(entry.rules.map(\.position))))
    }


    var prefixTexts: [Text] = []
    let rules = tax.rules.map { rule in
      let start = prefixTexts.count
      for prefix in rule.postalCodePrefixes ?? [] { prefixTexts.append(raw(prefix)) }
      return RuleEntry(
        prefixes: rule.postalCodePrefixes == nil
          ? List(start: 0, count: -1) : List(start: Int32(start), count: Int32(prefixTexts.count - start)),
        shippingTaxable: rule.shippingTaxable)
    }
    var rates: [RateEntry] = []
    for scheme in pricer.schemes + [pricer.defaultScheme] {
      for name in classes {
        // Only classes in use are asked for; a class without a rate in this scheme is never priced.
        let rate = scheme.rateIfConfigured(of: name)
        let numerator = Int128(rate?.numerator ?? 0)
        let denominator = rate?.denominator ?? 1
        rates.append(RateEntry(numerator: numerator, divisor: tax.pricesIncludeTax ? denominator + numerator : denominator))
      }
    }

    let currencyCode = json(config.currency.code)
    let displayName = json(config.merchant.displayName)
    let inclusiveLabel = tax.inclusiveLabel.map(json) ?? Text(offset: 0, count: -1)
    let defaultCountry = raw(config.merchant.countryCode)
    let table = PricingTable(
      products: storage.keep(products),
      skus: storage.keep(config.catalog.enumerated().map { ($0.element.sku, $0.offset) }),
      methods: storage.keep(methods),
      methodIdentifiers: storage.keep(config.shipping.methods.enumerated().map { ($0.element.identifier, $0.offset) }),
      regionCodes: storage.keep(regionKeys),
      areaKeys: AreaKeys(
        spellings: pricer.rules.spellings, regions: Dictionary(regionKeys.map { ($0.key, $0.value) }) { first, _ in first }),
      regions: storage.keep(regionEntries), lists: storage.keep(lists),
      rules: storage.keep(rules), prefixes: storage.keep(prefixTexts), rates: storage.keep(rates),
      classCount: classes.count, ruleCount: tax.rules.count, shippingClass: shippingClass, text: storage.keep(text),
      currencyCode: currencyCode, displayName: displayName, inclusiveLabel: inclusiveLabel,
      defaultCountry: defaultCountry, digits: config.currency.minorDigits, rounding: tax.rounding,
      pricesIncludeTax: tax.pricesIncludeTax)
    return (table, storage)
  }

  @inline(__always)
  func bytes(_ text: Text) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: self.text + Int(text.offset), count: Int(text.count))
  }

  // MARK: Pricing

  /// One cart line as scanned: a catalog position and a quantity.
  struct Line {
    var product: Int32
    var quantity: Int32
  }

  /// A region as scanned: the country code (the merchant's when the contact has none), and the
  /// state and postal code when given; all normalized already (`Region.normalize` leaves them be).
  struct Place {
    var country: UnsafeRawBufferPointer
    var area: UnsafeRawBufferPointer?
    var postalCode: UnsafeRawBufferPointer?
  }

  /// `RuleIndex.Spellings`' table, as byte keys to the regions' positions, made once.
  final class AreaKeys: Sendable {
    private let spellings: RuleIndex.Spellings
    private let regions: [String: Int]
    private let table = Mutex<(ByteKeyTable, ByteKeyTable.Storage)?>(nil)

    init(spellings: RuleIndex.Spellings, regions: [String: Int]) {
      self.spellings = spellings
      self.regions = regions
    }

    func region(for key: UnsafeRawBufferPointer) -> Int? {
      guard !spellings.isEmpty else { return nil }
      return table.withLock { table in
        if table == nil {
          table = ByteKeyTable.make(spellings.others.compactMap { other in regions[other.code].map { (other.spelling, $0) } })
        }
        return table!.0.value(for: key)
      }
    }
  }

  /// The shipping method priced and the tax rule matched for `place`, as `Pricer.orderedMethods`
  /// and `RuleIndex.taxRuleMatch` find them: the preferred method when offered, else the first
  /// offered one (-1: none); the most specific rule (-1: the default rates).
  func route(_ place: Place, preferredMethod: Int) -> (method: Int, rule: Int) {
    var countryEntry: RegionEntry?
    var codeEntry: RegionEntry?
    if let index = regionCodes.value(for: place.country) { countryEntry = regions[index] }
    if let area = place.area {
      withUnsafeTemporaryAllocation(of: UInt8.self, capacity: place.country.count + 1 + area.count) { code in
        let base = UnsafeMutableRawPointer(code.baseAddress!)
        base.copyMemory(from: place.country.baseAddress!, byteCount: place.country.count)
        base.storeBytes(of: UInt8(ascii: "-"), toByteOffset: place.country.count, as: UInt8.self)
        (base + place.country.count + 1).copyMemory(from: area.baseAddress!, byteCount: area.count)
        let key = UnsafeRawBufferPointer(code)
        if let index = regionCodes.value(for: key) ?? areaKeys.region(for: key) { codeEntry = regions[index] }
      }
    }
    var offered = List(start: 0, count: 0)
    if let codeEntry, codeEntry.methods.count >= 0 {
      offered = codeEntry.methods
    } else if let countryEntry, countryEntry.methods.count >= 0 {
      offered = countryEntry.methods
    }
    var method = offered.count > 0 ? Int(lists[Int(offered.start)]) : -1
    if preferredMethod >= 0 {
      for position in 0..<Int(offered.count) where Int(lists[Int(offered.start) + position]) == preferredMethod {
        method = preferredMethod
        break
      }
    }

    var bestScore = -1
    var bestRule = -1
    func consider(_ candidates: List, baseScore: Int) {
      guard candidates.count > 0 else { return }
      for offset in 0..<Int(candidates.count) {
        let position = Int(lists[Int(candidates.start) + offset])
        var score = baseScore
        let prefixes = rules[position].prefixes
        if prefixes.count >= 0 {
          guard let postal = place.postalCode, hasPrefix(postal, in: prefixes) else { continue }
          score = 2
        }
        if bestRule >= 0 && (bestScore > score || (bestScore == score && bestRule < position)) { continue }
        bestScore = score
        bestRule = position
      }
    }
    if let countryEntry { consider(countryEntry.rules, baseScore: 0) }
    if place.area != nil, let codeEntry { consider(codeEntry.rules, baseScore: 1) }
    return (method, bestRule)
  }

  private func hasPrefix(_ postal: UnsafeRawBufferPointer, in prefixes: List) -> Bool {
    for offset in 0..<Int(prefixes.count) {
      let prefix = bytes(self.prefixes[Int(prefixes.start) + offset])
      if prefix.count <= postal.count,
        prefix.count == 0 || memcmp(postal.baseAddress!, prefix.baseAddress!, prefix.count) == 0
      {
        return true
      }
    }
    return false
  }

  /// The tax on `minor` at class `taxClass` of scheme `rule` (-1: the defaults), rounded alone:
  /// `Pricer.TaxScheme.tax(on:rate:)`.
  @inline(__always)
  func tax(on minor: Int64, rule: Int, taxClass: Int) -> Int64 {
    let rate = rates[(rule < 0 ? ruleCount : rule) * classCount + taxClass]
    return Int64(Rate.divide(Int128(minor) * rate.numerator, by: rate.divisor, rounding: rounding))
  }

  /// Writes a computeSummaryItems result for `lines`: `ComputeSummaryItems.run` for a sheet with
  /// no coupon and no card, priced as `Pricer.quote` prices it.
  func writeSummary(_ lines: UnsafeBufferPointer<Line>, method: Int, rule: Int, into writer: inout JSONWriter) {
    writer.raw("{\"currencyCode\":\"")
    writer.raw(bytes(currencyCode))
    writer.raw("\",\"shippingMethod\":")
    if method >= 0 {
      writer.raw(UInt8(ascii: "\""))
      writer.raw(bytes(methods[method].identifier))
      writer.raw(UInt8(ascii: "\""))
    } else {
      writer.raw("null")
    }
    writer.raw(",\"summaryItems\":[")
    var subtotal: Int64 = 0
    var taxTotal: Int64 = 0
    for line in lines {
      let product = products[Int(line.product)]
      let amount = product.priceMinor * Int64(line.quantity)
      subtotal += amount
      taxTotal += tax(on: amount, rule: rule, taxClass: Int(product.taxClass))
      writer.raw("{\"label\":\"")
      writer.raw(bytes(product.name))
      if line.quantity > 1 {
        writer.raw(" \u{00D7} ")
        writer.raw(decimal: Int64(line.quantity))
      }
      item(amount, into: &writer)
    }
    var shipping: Int64 = 0
    if method >= 0 {
      let entry = methods[method]
      shipping = subtotal >= entry.freeOverMinor ? 0 : entry.amountMinor
      writer.raw("{\"label\":\"Shipping")
      item(shipping, into: &writer)
      if rule >= 0 && rules[rule].shippingTaxable {
        taxTotal += tax(on: shipping, rule: rule, taxClass: shippingClass)
      }
    }
    let total: Int64
    if pricesIncludeTax {
      if inclusiveLabel.count >= 0 {
        writer.raw("{\"label\":\"")
        writer.raw(bytes(inclusiveLabel))
        item(taxTotal, into: &writer)
      }
      total = subtotal + shipping
    } else {
      writer.raw("{\"label\":\"Tax")
      item(taxTotal, into: &writer)
      total = subtotal + shipping + taxTotal
    }
    writer.raw("{\"label\":\"")
    writer.raw(bytes(displayName))
    writer.raw("\",\"amount\":\"")
    writer.raw(money: total, digits: digits)
    writer.raw("\",\"type\":\"final\"}]}")
  }

  /// The rest of a summary item after its label, and the comma before the next.
  @inline(__always)
  private func item(_ minor: Int64, into writer: inout JSONWriter) {
    writer.raw("\",\"amount\":\"")
    writer.raw(money: minor, digits: digits)
    writer.raw("\",\"type\":\"final\"},")
  }
}
