#if canImport(CBoringSSLDigest)
  import CBoringSSLDigest
#endif
import Crypto
import Foundation

/// Loads and validates `config.yaml`. Every problem found is reported, not just the first.
public enum ConfigLoader {
  /// Reads and validates the file at `path`; problems name `path` with line and column.
  public static func load(path: String) throws(ConfigError) -> Config {
    guard let bytes = readFile(path) else {
      throw ConfigError(problems: [
        .init(file: path, line: nil, column: nil, path: "", message: "cannot read the file (missing or unreadable)")
      ])
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw ConfigError(problems: [.init(file: path, line: nil, column: nil, path: "", message: "is not UTF-8 text")])
    }
    return try parse(yaml: text, file: path)
  }

  /// A config's identity in logs and `ping`: "sha256:" and the SHA-256 of its file's bytes, hex.
  public static func digest(of bytes: some Sequence<UInt8>) -> String {
    let bytes = Array(bytes)
    #if canImport(CBoringSSLDigest)
      var digest = [UInt8](repeating: 0, count: 32)
      _ = bytes.withUnsafeBufferPointer { data in CCryptoBoringSSL_SHA256(data.baseAddress, data.count, &digest) }
      return "sha256:" + Hex.encode(digest)
    #else
      return "sha256:" + Hex.encode(Array(SHA256.hash(data: bytes)))
    #endif
  }

  /// The bytes of the file at `path`, read with open and read: the start does not go through
  /// Foundation's file manager (its first use costs more than reading a config).
  static func readFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = 1 << 14
    while true {
      let start = bytes.count
      bytes.append(contentsOf: repeatElement(0, count: chunk))
      let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + start, chunk) }
      if count < 0 && errno == EINTR {
        bytes.removeLast(chunk)
        continue
      }
      guard count >= 0 else { return nil }
      bytes.removeLast(chunk - count)
      if count == 0 { return bytes }
      chunk = min(chunk * 2, 1 << 24)
    }
  }

  public static func parse(yaml text: String, file: String = "config.yaml") throws(ConfigError) -> Config {
    let root: YAMLNode?
    do {
      root = try YAMLNode.compose(text)
    } catch {
      throw ConfigError(
        problems: [.init(file: file, line: error.mark?.line, column: error.mark?.column, path: "", message: error.message)])
    }
    guard let root else {
      throw ConfigError(problems: [.init(file: file, line: nil, column: nil, path: "", message: "is empty")])
    }
    let reader = YAMLFieldReader(file: file)
    let config = ConfigDecoder(reader: reader).decode(root)
    if var config, reader.problems.isEmpty {
      config.sourceText = text
      return config
    }
    throw ConfigError(problems: reader.problems)
  }
}

/// Turns the YAML tree into a `Config`, checking each field where it stands.
struct ConfigDecoder {
  let reader: YAMLFieldReader

  static let identifierPattern = "[A-Za-z0-9._-]{1,64}"

  static func isIdentifier(_ text: String) -> Bool {
    (1...64).contains(text.utf8.count)
      && text.utf8.allSatisfy { byte in
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
          || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
      }
  }

  static func isCountryCode(_ text: String) -> Bool {
    text.utf8.count == 2 && text.utf8.allSatisfy { (0x41...0x5A).contains($0) }
  }

  /// "US" or "US-CA": an upper-case country code, optionally a dash and 1 to 3 upper-case letters or digits.
  static func isRegionCode(_ text: String) -> Bool {
    var text = text
    return text.withUTF8 { bytes in
      func isUpper(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "A") < 26 }
      func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
      guard bytes.count == 2 || (4...6).contains(bytes.count), isUpper(bytes[0]), isUpper(bytes[1]) else { return false }
      guard bytes.count > 2 else { return true }
      return bytes[2] == UInt8(ascii: "-") && bytes[3...].allSatisfy { isUpper($0) || isDigit($0) }
    }
  }

  func decode(_ root: YAMLNode) -> Config? {
    let keys = [
      "merchant", "catalog", "shipping", "tax", "gateway", "coupons", "paymentMethodAdjustments", "applePay",
      "walletOrders", "privacy", "billing", "appStore",
    ]
    guard let top = reader.mapping(root, "", allowed: keys) else { return nil }
    let merchantNode = reader.require(top, "merchant", in: root, "")
    let merchant = merchantNode.flatMap { decodeMerchant($0) }
    guard let merchant else {
      // The other sections are not checked: their amounts and regions depend on the merchant's
      // currency and country, so errors there would be guesses. Fix the merchant first.
      return nil
    }
    let catalog = reader.require(top, "catalog", in: root, "").flatMap { decodeCatalog($0, merchant: merchant) }
    let shipping = reader.require(top, "shipping", in: root, "").flatMap { decodeShipping($0, merchant: merchant) }
    let tax = reader.require(top, "tax", in: root, "").flatMap { decodeTax($0, catalog: catalog) }
    let gateway = reader.require(top, "gateway", in: root, "").flatMap { decodeGateway($0) }
    let coupons = top["coupons"].map { decodeCoupons($0, merchant: merchant) } ?? []
    let adjustments = top["paymentMethodAdjustments"].map { decodeAdjustments($0, merchant: merchant) } ?? []
    let applePay = top["applePay"].map { decodeApplePay($0, merchant: merchant) } ?? .some(nil)
    let walletOrders = top["walletOrders"].map { decodeWalletOrders($0, merchant: merchant) } ?? .some(nil)
    let privacy = top["privacy"].map { decodePrivacy($0) } ?? Privacy()
    let billing = top["billing"].map { decodeBillingSettings($0) } ?? BillingSettings()
    let appStore = top["appStore"].map { decodeAppStore($0) } ?? .some(nil)
    guard let catalog, let shipping, let tax, let gateway, let coupons, let adjustments, let applePay, let walletOrders,
      let privacy, let billing, let appStore
    else {
      return nil
    }
    // Across sections, once each is known valid (a failed applePay section has no managementURL).
    guard reader.problems.isEmpty, checkBilling(catalog, catalogNode: top["catalog"], applePay: applePay)
    else { return nil }
    // Adyen decrypts the Apple Pay token when it charges it: payservice sees no card before, so an
    // adjustment would be priced by the card the device claims, a hint.
    if gateway.kind == .adyen, !adjustments.isEmpty {
      reader.report(
        top["paymentMethodAdjustments"], "paymentMethodAdjustments",
        "cannot be used with gateway.kind adyen: Adyen decrypts the Apple Pay token when it charges it, so payservice cannot see the card it would price by")
      return nil
    }
    var config = Config(
      merchant: merchant, catalog: catalog, shipping: shipping, tax: tax, gateway: gateway, coupons: coupons,
      paymentMethodAdjustments: adjustments, applePay: applePay?.processing)
    if let applePay {
      config.paymentRequest = applePay.paymentRequest
      config.merchantSession = applePay.merchantSession
      config.merchantTokens = applePay.merchantTokens
    }
    config.walletOrders = walletOrders
    config.privacy = privacy
    config.billing = billing
    config.appStore = appStore
    return config
  }

  /// `privacy:`: how long orders keep their buyers' personal data.
  func decodePrivacy(_ node: YAMLNode) -> Privacy? {
    guard let fields = reader.mapping(node, "privacy", allowed: ["retainPersonalDataDays"]) else { return nil }
    var privacy = Privacy()
    if let n = fields["retainPersonalDataDays"] {
      guard let days = reader.int(n, "privacy.retainPersonalDataDays", range: 1...36_500) else { return nil }
      privacy.retainPersonalDataDays = days
    }
    return privacy
  }

  /// A required `[A-Za-z0-9._-]{1,64}` key (a sku or method identifier) not used by an earlier entry.
  func uniqueIdentifier(
    _ fields: YAMLFields, _ key: String, in entry: YAMLNode, _ path: String, seen: inout NameSet, owner: String
  ) -> String? {
    guard let node = reader.require(fields, key, in: entry, path), let text = reader.string(node, "\(path).\(key)")
    else { return nil }
    if !Self.isIdentifier(text) {
      reader.report(node, "\(path).\(key)", "must match \(Self.identifierPattern), got \"\(text)\"")
      return nil
    }
    if !seen.insert(text) {
      reader.report(node, "\(path).\(key)", "\(key) \"\(text)\" is used by an earlier \(owner); it must be unique")
      return nil
    }
    return text
  }

  func decodeMerchant(_ node: YAMLNode) -> Merchant? {
    let path = "merchant"
    let keys = [
      "identifier", "displayName", "countryCode", "currencyCode", "supportedNetworks", "merchantCapabilities",
      "requiredShippingContactFields", "requiredBillingContactFields", "url",
    ]
    guard let fields = reader.mapping(node, path, allowed: keys) else { return nil }
    func field(_ key: String) -> (YAMLNode, String)? {
      reader.require(fields, key, in: node, path).map { ($0, "\(path).\(key)") }
    }
    var identifier: String?
    if let (n, p) = field("identifier"), let text = reader.string(n, p) {
      if text.hasPrefix("merchant.") && text.count > "merchant.".count && !text.utf8.contains(UInt8(ascii: " ")) {
        identifier = text
      } else {
        reader.report(n, p, "must be an Apple Pay merchant identifier like \"merchant.com.example.shop\"")
      }
    }
    let displayName = field("displayName").flatMap { reader.string($0.0, $0.1) }
    var countryCode: String?
    if let (n, p) = field("countryCode"), let text = reader.string(n, p) {
      if Self.isCountryCode(text) {
        countryCode = text
      } else {
        reader.report(n, p, "must be an upper-case ISO 3166-1 alpha-2 code like \"US\", got \"\(text)\"")
      }
    }
    var currency: Currency?
    if let (n, p) = field("currencyCode"), let text = reader.string(n, p) {
      currency = Currency(code: text)
      if currency == nil { reader.report(n, p, "must be an ISO 4217 currency code like \"USD\", got \"\(text)\"") }
    }
    let networks = field("supportedNetworks").flatMap { n, p in
      reader.stringList(n, p) { name in
        ApplePayNetworks.all.contains(name)
          ? nil : "unknown network \"\(name)\"; Apple Pay names are \(ApplePayNetworks.all.joined(separator: ", "))"
      }
    }
    var capabilities: [String]?
    if let (n, p) = field("merchantCapabilities") {
      capabilities = reader.stringList(n, p) { name in
        MerchantCapability.all.contains(name)
          ? nil : "unknown capability \"\(name)\"; valid: \(MerchantCapability.all.joined(separator: ", "))"
      }
      if let list = capabilities, !list.contains("supports3DS") {
        reader.report(n, p, "must include supports3DS (Apple Pay requires it)")
        capabilities = nil
      }
    }
    func contactFields(_ key: String) -> [ContactField]? {
      guard let n = fields[key] else { return [] }
      let valid = ContactField.allCases.map(\.rawValue)
      return reader.stringList(n, "\(path).\(key)", allowEmpty: true) { name in
        valid.contains(name) ? nil : "unknown contact field \"\(name)\"; valid: \(valid.joined(separator: ", "))"
      }?.compactMap(ContactField.init(rawValue:))
    }
    let shippingFields = contactFields("requiredShippingContactFields")
    let billingFields = contactFields("requiredBillingContactFields")
    var url: String?
    var urlValid = true
    if let n = fields["url"], let text = reader.string(n, "\(path).url") {
      if Self.isHTTPSURL(text) {
        url = text
      } else {
        reader.report(n, "\(path).url", "must be an https URL like https://shop.example.com, got \"\(text)\"")
        urlValid = false
      }
    }
    guard let identifier, let displayName, let countryCode, let currency, let networks, let capabilities,
      let shippingFields, let billingFields, urlValid
    else { return nil }
    return Merchant(
      identifier: identifier, displayName: displayName, url: url, countryCode: countryCode, currency: currency,
      supportedNetworks: networks, merchantCapabilities: capabilities,
      requiredShippingContactFields: shippingFields, requiredBillingContactFields: billingFields)
  }

  func decodeCatalog(_ node: YAMLNode, merchant: Merchant) -> [Product]? {
    guard let entries = reader.sequence(node, "catalog") else { return nil }
    if entries.isEmpty {
      reader.report(node, "catalog", "must list at least one product")
      return nil
    }
    var products: [Product] = []
    var ok = true
    var seen = NameSet()
    for (index, entry) in entries.enumerated() {
      let path = "catalog[\(index)]"
      let keys = ["sku", "name", "description", "price", "quantityOnHand", "imageURI", "taxClass"] + Self.billingKeys
      guard let fields = reader.mapping(entry, path, allowed: keys) else {
        ok = false
        continue
      }
      let sku = uniqueIdentifier(fields, "sku", in: entry, path, seen: &seen, owner: "product")
      let name = reader.require(fields, "name", in: entry, path).flatMap { reader.string($0, "\(path).name") }
      let description = reader.require(fields, "description", in: entry, path).flatMap {
        reader.string($0, "\(path).description", nonEmpty: false)
      }
      let price = reader.require(fields, "price", in: entry, path).flatMap {
        reader.amount(
          $0, "\(path).price", digits: merchant.currency.minorDigits, allowZero: false, cap: Config.maxPriceMinor)
      }
      let quantity = reader.require(fields, "quantityOnHand", in: entry, path).flatMap {
        reader.int($0, "\(path).quantityOnHand", range: 0...1_000_000_000)
      }
      var imageURI: String?
      var imageOK = true
      if let n = fields["imageURI"] {
        imageURI = reader.string(n, "\(path).imageURI")
        if let uri = imageURI, !(uri.hasPrefix("https://") || uri.hasPrefix("http://")) {
          reader.report(n, "\(path).imageURI", "must be an http(s) URL, got \"\(uri)\"")
          imageURI = nil
        }
        imageOK = imageURI != nil
      }
      var taxClass: String? = TaxClass.standard
      if let n = fields["taxClass"] { taxClass = reader.string(n, "\(path).taxClass").flatMap { checkedClass($0, n, "\(path).taxClass") } }
      let billing = decodeBilling(fields, path, merchant: merchant, price: price)
      guard let sku, let name, let description, let price, let quantity, imageOK, let taxClass, let billing else {
        ok = false
        continue
      }
      products.append(
        Product(
          sku: sku, name: name, description: description, priceMinor: price, quantityOnHand: quantity,
          imageURI: imageURI, taxClass: taxClass, billing: billing))
    }
    return ok ? products : nil
  }

  func decodeShipping(_ node: YAMLNode, merchant: Merchant) -> Shipping? {
    guard let fields = reader.mapping(node, "shipping", allowed: ["shipsTo", "methods"]) else { return nil }
    var shipsTo: [String]? = [merchant.countryCode]
    if let n = fields["shipsTo"] {
      shipsTo = reader.stringList(n, "shipping.shipsTo") { code in
        Self.isCountryCode(code) ? nil : "must be an upper-case ISO 3166-1 alpha-2 country code, got \"\(code)\""
      }
    }
    guard let methodsNode = reader.require(fields, "methods", in: node, "shipping"),
      let entries = reader.sequence(methodsNode, "shipping.methods")
    else { return nil }
    if entries.isEmpty {
      reader.report(methodsNode, "shipping.methods", "must list at least one shipping method")
      return nil
    }
    var seen = NameSet()
    let countries = shipsTo.map { list in list.reduce(into: NameSet()) { _ = $0.insert($1) } }
    // Every entry is decoded (each reports its own problems) before any failure counts.
    let methods = entries.enumerated().map { index, entry in
      decodeShippingMethod(
        entry, "shipping.methods[\(index)]", merchant: merchant, shipsTo: shipsTo, countries: countries, seen: &seen)
    }
    guard let shipsTo, methods.allSatisfy({ $0 != nil }) else { return nil }
    return Shipping(shipsTo: shipsTo, methods: methods.compactMap { $0 })
  }

  /// One entry of `shipping.methods`; its identifier must not be in `seen` (and is added to it).
  /// `countries` holds the codes of `shipsTo`.
  func decodeShippingMethod(
    _ entry: YAMLNode, _ path: String, merchant: Merchant, shipsTo: [String]?, countries: NameSet?, seen: inout NameSet
  ) -> ShippingMethod? {
    let keys = [
      "identifier", "label", "detail", "transitDays", "transitDaysMax", "amount", "freeOver", "regions",
      "exceptRegions",
    ]
    guard let f = reader.mapping(entry, path, allowed: keys) else { return nil }
    let identifier = uniqueIdentifier(f, "identifier", in: entry, path, seen: &seen, owner: "shipping method")
    let label = reader.require(f, "label", in: entry, path).flatMap { reader.string($0, "\(path).label") }
    let detail = reader.require(f, "detail", in: entry, path).flatMap {
      reader.string($0, "\(path).detail", nonEmpty: false)
    }
    let transitDays = reader.require(f, "transitDays", in: entry, path).flatMap {
      reader.int($0, "\(path).transitDays", range: 0...365)
    }
    let amount = reader.require(f, "amount", in: entry, path).flatMap {
      reader.amount(
        $0, "\(path).amount", digits: merchant.currency.minorDigits, allowZero: true, cap: Config.maxPriceMinor)
    }
    var transitDaysMax: Int?
    var transitDaysMaxOK = true
    if let n = f["transitDaysMax"] {
      transitDaysMax = reader.int(n, "\(path).transitDaysMax", range: 0...365)
      if let last = transitDaysMax, let first = transitDays, last < first {
        reader.report(n, "\(path).transitDaysMax", "must be at least transitDays (\(first)), got \(last)")
        transitDaysMax = nil
      }
      transitDaysMaxOK = transitDaysMax != nil
    }
    var freeOver: Int64?
    var freeOverOK = true
    if let n = f["freeOver"] {
      freeOver = reader.amount(n, "\(path).freeOver", digits: merchant.currency.minorDigits, allowZero: false)
      freeOverOK = freeOver != nil
    }
    let (regions, regionsOK) = regionList(f["regions"], "\(path).regions", shipsTo: shipsTo, countries: countries)
    let (exceptRegions, exceptOK) = regionList(
      f["exceptRegions"], "\(path).exceptRegions", shipsTo: shipsTo, countries: countries)
    guard let identifier, let label, let detail, let transitDays, let amount, regionsOK, exceptOK,
      transitDaysMaxOK, freeOverOK
    else { return nil }
    return ShippingMethod(
      identifier: identifier, label: label, detail: detail, transitDays: transitDays, transitDaysMax: transitDaysMax,
      amountMinor: amount, freeOverMinor: freeOver, regions: regions, exceptRegions: exceptRegions)
  }

  /// A list of region codes ("US", "US-CA") within `shipsTo` (whose codes `countries` holds); (nil,
  /// true) when absent, (nil, false) when invalid.
  func regionList(_ node: YAMLNode?, _ path: String, shipsTo: [String]?, countries: NameSet?) -> ([String]?, Bool) {
    guard let node else { return (nil, true) }
    let list = reader.stringList(node, path) { code in
      guard Self.isRegionCode(code) else {
        return "must be a region code like \"US\" or \"US-CA\", got \"\(code)\""
      }
      let country = String(code.prefix(2))
      if let shipsTo, let countries, !countries.contains(country) {
        return "\"\(code)\" is outside shipping.shipsTo (\(shipsTo.joined(separator: ", ")))"
      }
      return nil
    }
    return (list, list != nil)
  }

  /// - Parameter catalog: the products, when valid: every tax class they use needs a rate by default
  ///   and in every rule.
  func decodeTax(_ node: YAMLNode, catalog: [Product]?) -> Tax? {
    let allowed = [
      "rounding", "defaultRate", "defaultRates", "rules", "pricesIncludeTax", "roundingTarget", "shippingTaxClass",
      "inclusiveLabel",
    ]
    guard let fields = reader.mapping(node, "tax", allowed: allowed) else { return nil }
    var rounding: Rounding? = .halfUp
    if let n = fields["rounding"], let text = reader.string(n, "tax.rounding") {
      rounding = Rounding(rawValue: text)
      if rounding == nil { reader.report(n, "tax.rounding", "must be halfUp or halfEven, got \"\(text)\"") }
    } else if fields["rounding"] != nil {
      rounding = nil
    }
    var defaultRate: Rate?
    var defaultClassRates: [String: Rate]? = [:]
    switch (fields["defaultRate"], fields["defaultRates"]) {
    case (let n?, nil): defaultRate = reader.rate(n, "tax.defaultRate")
    case (nil, let n?): (defaultRate, defaultClassRates) = decodeClassRates(n, "tax.defaultRates")
    case (_?, let n?): reader.report(n, "tax.defaultRates", "give defaultRate or defaultRates, not both")
    case (nil, nil):
      reader.report(node, "tax", "needs defaultRate (one rate) or defaultRates (a rate per tax class, standard among them)")
    }
    var pricesIncludeTax: Bool? = false
    if let n = fields["pricesIncludeTax"] { pricesIncludeTax = reader.bool(n, "tax.pricesIncludeTax") }
    var roundingTarget: RoundingTarget? = .perLine
    if let n = fields["roundingTarget"], let text = reader.string(n, "tax.roundingTarget") {
      roundingTarget = RoundingTarget(rawValue: text)
      if roundingTarget == nil { reader.report(n, "tax.roundingTarget", "must be perLine or perOrder, got \"\(text)\"") }
    }
    var shippingTaxClass: String? = TaxClass.standard
    if let n = fields["shippingTaxClass"] {
      shippingTaxClass = reader.string(n, "tax.shippingTaxClass").flatMap { checkedClass($0, n, "tax.shippingTaxClass") }
    }
    var inclusiveLabel: String?
    var labelOK = true
    if let n = fields["inclusiveLabel"] {
      inclusiveLabel = reader.string(n, "tax.inclusiveLabel")
      labelOK = inclusiveLabel != nil
    }
    var rules: [TaxRule]? = []
    if let n = fields["rules"], let entries = reader.sequence(n, "tax.rules") {
      for (index, entry) in entries.enumerated() {
        let path = "tax.rules[\(index)]"
        guard let f = reader.mapping(entry, path, allowed: ["region", "postalCodePrefixes", "rate", "rates", "shippingTaxable"])
        else {
          rules = nil
          continue
        }
        var region: String?
        if let rn = reader.require(f, "region", in: entry, path), let text = reader.string(rn, "\(path).region") {
          if Self.isRegionCode(text) {
            region = text
          } else {
            reader.report(rn, "\(path).region", "must be a region code like \"US\" or \"US-CA\", got \"\(text)\"")
          }
        }
        var prefixes: [String]?
        var prefixesOK = true
        if let pn = f["postalCodePrefixes"] {
          prefixes = reader.stringList(pn, "\(path).postalCodePrefixes") { prefix in
            prefix.isEmpty || prefix.utf8.contains(UInt8(ascii: " ")) ? "must be a non-empty postal code prefix without spaces" : nil
          }
          prefixesOK = prefixes != nil
        }
        var rate: Rate?
        var classRates: [String: Rate]? = [:]
        switch (f["rate"], f["rates"]) {
        case (let n?, nil): rate = reader.rate(n, "\(path).rate")
        case (nil, let n?):
          (rate, classRates) = decodeClassRates(n, "\(path).rates")
        case (_?, let n?):
          reader.report(n, "\(path).rates", "give rate or rates, not both")
        case (nil, nil):
          reader.report(entry, path, "needs rate (one rate) or rates (a rate per tax class, standard among them)")
        }
        var shippingTaxable: Bool? = false
        if let sn = f["shippingTaxable"] { shippingTaxable = reader.bool(sn, "\(path).shippingTaxable") }
        guard let region, prefixesOK, let rate, let classRates, let shippingTaxable else {
          rules = nil
          continue
        }
        rules?.append(
          TaxRule(
            region: region, postalCodePrefixes: prefixes?.map { $0.uppercased() }, rate: rate,
            shippingTaxable: shippingTaxable, classRates: classRates))
      }
    } else if fields["rules"] != nil {
      rules = nil
    }
    guard let rounding, let defaultRate, let defaultClassRates, let rules, let pricesIncludeTax, let roundingTarget,
      let shippingTaxClass, labelOK
    else { return nil }
    if inclusiveLabel != nil && !pricesIncludeTax {
      reader.report(fields["inclusiveLabel"], "tax.inclusiveLabel", "applies only with pricesIncludeTax: true")
      return nil
    }
    // Every class in use has a rate wherever a checkout can be taxed. Each class is checked once,
    // named by its first user: rules × classes, not rules × products.
    var used: [(taxClass: String, user: String)] = [(shippingTaxClass, "tax.shippingTaxClass")]
    var usedClasses = NameSet()
    _ = usedClasses.insert(shippingTaxClass)
    for (index, product) in (catalog ?? []).enumerated()
    where product.taxClass != TaxClass.standard && usedClasses.insert(product.taxClass) {
      used.append((product.taxClass, "catalog[\(index)] \(product.sku)"))
    }
    var covered = true
    func check(_ rates: (String) -> Rate?, _ where: String, _ at: YAMLNode?) {
      for (taxClass, user) in used where rates(taxClass) == nil {
        reader.report(at, `where`, "has no rate for tax class \(taxClass) (used by \(user)); add it to its rates")
        covered = false
      }
    }
    let defaults = { (taxClass: String) in taxClass == TaxClass.standard ? defaultRate : defaultClassRates[taxClass] }
    check(defaults, fields["defaultRates"] == nil ? "tax.defaultRate" : "tax.defaultRates", fields["defaultRates"] ?? fields["defaultRate"])
    let ruleNodes = fields["rules"].flatMap { node -> [YAMLNode]? in
      if case .sequence(let sequence) = node { return Array(sequence) }
      return nil
    } ?? []
    for (index, rule) in rules.enumerated() {
      let at = index < ruleNodes.count ? ruleNodes[index] : nil
      check({ rule.rate(for: $0) }, "tax.rules[\(index)]", at)
    }
    guard covered else { return nil }
    var tax = Tax(rounding: rounding, defaultRate: defaultRate, rules: rules)
    tax.defaultClassRates = defaultClassRates
    tax.pricesIncludeTax = pricesIncludeTax
    tax.roundingTarget = roundingTarget
    tax.shippingTaxClass = shippingTaxClass
    tax.inclusiveLabel = inclusiveLabel
    return tax
  }

  /// A tax class name: letters, digits, - and _.
  func checkedClass(_ name: String, _ node: YAMLNode, _ path: String) -> String? {
    guard name.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) else {
      reader.report(node, path, "must be a tax class name like standard or reduced (letters, digits, - and _)")
      return nil
    }
    return name
  }

  /// `{standard: "0.20", reduced: "0.05", …}`: the standard rate and the others; nils (with the
  /// problems reported) when it is not valid.
  func decodeClassRates(_ node: YAMLNode, _ path: String) -> (Rate?, [String: Rate]?) {
    guard case .mapping(let mapping) = node else {
      reader.report(node, path, "must be a mapping of tax class to rate, like {standard: \"0.20\", reduced: \"0.05\"}")
      return (nil, nil)
    }
    var standard: Rate?
    var others: [String: Rate] = [:]
    var ok = true
    for (keyNode, value) in mapping {
      guard case .scalar(let key) = keyNode, let name = checkedClass(key.string, keyNode, path) else {
        ok = false
        continue
      }
      guard let rate = reader.rate(value, FieldPath.join(path, name)) else {
        ok = false
        continue
      }
      if name == TaxClass.standard { standard = rate } else { others[name] = rate }
    }
    if standard == nil && ok {
      reader.report(node, path, "needs a standard rate besides the others")
      ok = false
    }
    return ok ? (standard, others) : (nil, nil)
  }
}
