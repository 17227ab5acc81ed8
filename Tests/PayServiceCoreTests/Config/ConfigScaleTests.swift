import PayServiceCore
import Testing

/// Config checks take time in proportion to the config: repeated keys, list entries, regions and
/// tax classes are found with sets, not by comparing each entry with every other, and so are the
/// regions a shipping method is offered in. (Compared pairwise, this config takes about a minute
/// in a debug build.)
@Suite("Config scale")
struct ConfigScaleTests {
  static let count = 20_000

  /// `count` of everything that was compared pairwise: keys in one mapping, entries in one list,
  /// regions of one method, products of a tax class and tax rules that must each rate it.
  static let yaml: String = {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    let regions = (0..<count).map { (index: Int) -> String in
      let letters: [Character] = [alphabet[index / 1296 % 36], alphabet[index / 36 % 36], alphabet[index % 36]]
      return "US-" + String(letters)
    }
    var lines = [
      "merchant:", "  identifier: merchant.com.example.scale", "  displayName: Scale", "  countryCode: US",
      "  currencyCode: USD", "  supportedNetworks: [visa]", "  merchantCapabilities: [supports3DS]", "catalog:",
    ]
    for index in 0..<count {
      lines.append(#"  - {sku: p\#(index), name: P, description: D, price: "1.00", quantityOnHand: 1, taxClass: c0}"#)
    }
    lines += [
      "shipping:", "  shipsTo: [US]", "  methods:",
      #"    - {identifier: std, label: Std, detail: Soon, transitDays: 3, amount: "5.00", regions: [\#(regions.joined(separator: ", "))]}"#,
      "tax:", "  defaultRates:", #"    standard: "0.08""#,
    ]
    for index in 0..<count { lines.append(#"    c\#(index): "0.05""#) }
    lines.append("  rules:")
    lines.append(#"    - {region: US, rates: {standard: "0.08", c0: "0.05"}, postalCodePrefixes: [\#((0..<count).map { #""\#($0)""# }.joined(separator: ", "))]}"#)
    for _ in 1..<count { lines.append(#"    - {region: US, rates: {standard: "0.08", c0: "0.05"}}"#) }
    lines += ["gateway:", "  kind: sandbox"]
    return lines.joined(separator: "\n") + "\n"
  }()

  @Test("20,000 keys, list entries, regions, products and tax rules load in seconds, not minutes")
  func linear() throws {
    let yaml = Self.yaml
    let clock = ContinuousClock()
    let start = clock.now
    let config = try ConfigLoader.parse(yaml: yaml)
    let pricer = Pricer(config: config)
    let elapsed = clock.now - start
    #expect(pricer.offeredMethods(for: pricer.region(of: nil)).isEmpty)
    #expect(config.catalog.count == Self.count && config.tax.rules.count == Self.count)
    #expect(config.shipping.methods[0].regions?.count == Self.count)
    #expect(config.tax.rules[0].postalCodePrefixes?.count == Self.count)
    #expect(elapsed < .seconds(15), "\(elapsed)")
  }
}
