import Synchronization

/// The shipping and tax rules arranged for lookup by region, built once from config so pricing a
/// request costs a few dictionary lookups however many rules the merchant configures.
struct RuleIndex: Sendable {
  /// Offered methods for each region code some method names ("US-AK"), and for each country.
  private let methodsByCode: [String: [ShippingMethod]]
  private let methodsByCountry: [String: [ShippingMethod]]
  /// Candidate tax rules, with their config position, for each country ("US") and each state code
  /// ("US-CA"). A region's candidates are its country's whole-country rules and its state's rules.
  private let taxRulesByCountry: [String: [(position: Int, rule: TaxRule)]]
  private let taxRulesByCode: [String: [(position: Int, rule: TaxRule)]]

  init(config: Config) {
    let methods = config.shipping.methods
    // Each method's lists as sets: what a region is offered costs a lookup or two per method,
    // however many regions the lists name (a generated config may name tens of thousands).
    func names(_ list: [String]) -> NameSet { list.reduce(into: NameSet()) { _ = $0.insert($1) } }
    let countries = names(config.shipping.shipsTo)
    let lists = methods.map { (regions: $0.regions.map(names), except: $0.exceptRegions.map(names)) }
    func offered(country: String, code: String) -> [ShippingMethod] {
      guard countries.contains(country) else { return [] }
      let isIn = { (names: NameSet) in names.contains(country) || names.contains(code) }
      return methods.indices.filter { index in
        (lists[index].regions.map(isIn) ?? true) && !(lists[index].except.map(isIn) ?? false)
      }.map { methods[$0] }
    }
    // A region whose code no method names is offered what its country is offered.
    var byCountry: [String: [ShippingMethod]] = [:]
    for country in config.shipping.shipsTo { byCountry[country] = offered(country: country, code: country) }
    var byCode: [String: [ShippingMethod]] = [:]
    for method in methods {
      for name in (method.regions ?? []) + (method.exceptRegions ?? []) where byCode[name] == nil {
        let parts = name.split(separator: "-", maxSplits: 1)
        if parts.count == 2 { byCode[name] = offered(country: String(parts[0]), code: name) }
      }
    }
    methodsByCountry = byCountry
    methodsByCode = byCode

    var rulesByCountry: [String: [(position: Int, rule: TaxRule)]] = [:]
    var rulesByCode: [String: [(position: Int, rule: TaxRule)]] = [:]
    for (position, rule) in config.tax.rules.enumerated() {
      if rule.region.utf8.contains(UInt8(ascii: "-")) {
        rulesByCode[rule.region, default: []].append((position, rule))
      } else {
        rulesByCountry[rule.region, default: []].append((position, rule))
      }
    }
    taxRulesByCountry = rulesByCountry
    taxRulesByCode = rulesByCode
    spellings = Spellings(codes: Array(byCode.keys) + rulesByCode.keys)
  }

  /// The other spellings of the config's area codes, for a region no code spells as given.
  let spellings: Spellings

  /// The other spellings the address data knows of the config's area codes (`US-CALIFORNIA` for
  /// `US-CA`; `JP-TOKYO` and `JP-東京都` for `JP-13`), as `Region.normalize` leaves them, to the
  /// config's code; made at the first area no config code spells as given. Where two config codes
  /// spell one area, the first in order has it. The borrowed path reads the same table
  /// (`PricingTable.AreaKeys`).
  final class Spellings: Sendable {
    private let codes: [String]
    /// Each other spelling to its config code's position in `codes`: an `Int32`, as in
    /// `AddressRules`' index, so that the table is this module's own specialization and its first
    /// growth does not make the runtime read every conformance record of the binary.
    private let table = Mutex<[String: Int32]?>(nil)

    init(codes: [String]) {
      self.codes = codes.sorted()
    }

    /// No config code names an area: there is nothing to spell otherwise.
    var isEmpty: Bool { codes.isEmpty }

    /// The config code `spelling` is another spelling of.
    func code(for spelling: String) -> String? {
      made[spelling].map { codes[Int($0)] }
    }

    /// Every other spelling with its config code.
    var others: [(spelling: String, code: String)] {
      made.map { ($0.key, codes[Int($0.value)]) }
    }

    private var made: [String: Int32] {
      guard !codes.isEmpty else { return [:] }
      return table.withLock { table in
        if let table { return table }
        let configured = Set(codes)
        var made: [String: Int32] = [:]
        for (position, code) in codes.enumerated() {
          let country = String(code.prefix { $0 != "-" })
          guard let rules = AddressRules.forCountry(country),
            let subdivision = rules.subdivision(named: String(code.dropFirst(country.count + 1)))
          else { continue }
          for spelling in rules.spellings(of: subdivision.key) {
            guard let area = Region.normalize(spelling) else { continue }
            let other = country + "-" + area
            if !configured.contains(other) && made[other] == nil { made[other] = Int32(position) }
          }
        }
        table = made
        return made
      }
    }
  }

  /// The entry of `region`'s own code, or of the config's code for another spelling of its area.
  private func byCode<Value>(_ table: [String: Value], _ region: Region) -> Value? {
    if let value = table[region.code] { return value }
    return spellings.code(for: region.code).flatMap { table[$0] }
  }

  /// Shipping methods offered for `region`, in config order.
  func offeredMethods(for region: Region) -> [ShippingMethod] {
    if region.administrativeArea != nil, let methods = byCode(methodsByCode, region) { return methods }
    return methodsByCountry[region.countryCode] ?? []
  }

  /// The most specific tax rule for the region: a rule with postal code prefixes that match (2) beats
  /// a state rule (1), which beats a whole-country rule (0); the first in config wins a tie. With its
  /// position in `tax.rules`.
  func taxRuleMatch(for region: Region) -> (position: Int, rule: TaxRule)? {
    var best: (score: Int, position: Int, rule: TaxRule)?
    func consider(_ candidates: [(position: Int, rule: TaxRule)]?, baseScore: Int) {
      for (position, rule) in candidates ?? [] {
        var score = baseScore
        if let prefixes = rule.postalCodePrefixes {
          guard let postal = region.postalCode, prefixes.contains(where: { postal.hasPrefix($0) }) else { continue }
          score = 2
        }
        if let current = best, current.score > score || (current.score == score && current.position < position) {
          continue
        }
        best = (score, position, rule)
      }
    }
    consider(taxRulesByCountry[region.countryCode], baseScore: 0)
    if region.administrativeArea != nil { consider(byCode(taxRulesByCode, region), baseScore: 1) }
    return best.map { ($0.position, $0.rule) }
  }

  /// Every code the index has an entry for: countries ("US") and region codes ("US-CA").
  /// (Sorted and deduplicated as an array: a `Set<String>` here would take another module's
  /// copy of the set code, whose first use scans every conformance record; see `NameSet`.)
  var regionCodes: [String] {
    var codes = Array(methodsByCode.keys) + methodsByCountry.keys + taxRulesByCountry.keys + taxRulesByCode.keys
    codes.sort()
    var unique: [String] = []
    unique.reserveCapacity(codes.count)
    for code in codes where unique.last != code { unique.append(code) }
    return unique
  }

  /// What the index holds for `code`: for a region code ("US-CA", with a "-") its own offered
  /// methods (nil when none of its own: its country's apply) and its state's tax rules; for a
  /// country its offered methods (nil: none) and its whole-country rules.
  func entry(_ code: String) -> (methods: [ShippingMethod]?, rules: [(position: Int, rule: TaxRule)]) {
    code.utf8.contains(UInt8(ascii: "-"))
      ? (methodsByCode[code], taxRulesByCode[code] ?? []) : (methodsByCountry[code], taxRulesByCountry[code] ?? [])
  }
}
