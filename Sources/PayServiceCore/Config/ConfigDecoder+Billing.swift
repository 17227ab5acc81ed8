import Foundation

extension ConfigDecoder {
  static let billingKeys = ["recurring", "automaticReload", "deferred"]

  /// A catalog entry's billing plan (`recurring`, `automaticReload` or `deferred`, at most one);
  /// `.some(nil)` when it has none, nil when one is invalid (reported).
  func decodeBilling(_ fields: YAMLFields, _ path: String, merchant: Merchant, price: Int64?) -> BillingPlan?? {
    let given = Self.billingKeys.filter { fields[$0] != nil }
    guard let key = given.first else { return .some(nil) }
    if given.count > 1 {
      reader.report(
        fields[given[1]], "\(path).\(given[1])",
        "a product is paid one way: \(given.joined(separator: " and ")) cannot both be set; make them separate products")
      return nil
    }
    let node = fields[key]!
    let keyPath = "\(path).\(key)"
    let digits = merchant.currency.minorDigits
    switch key {
    case "recurring":
      guard let f = reader.mapping(node, keyPath, allowed: ["interval", "intervalCount", "startDate", "endDate", "trial"])
      else { return nil }
      let interval = decodeInterval(f, node, keyPath)
      var startDate: Int64?? = .some(nil)
      var endDate: Int64?? = .some(nil)
      if let n = f["startDate"] { startDate = reader.timestamp(n, "\(keyPath).startDate").map { Optional($0) } }
      if let n = f["endDate"] { endDate = reader.timestamp(n, "\(keyPath).endDate").map { Optional($0) } }
      if let start = startDate ?? nil, let end = endDate ?? nil, end <= start {
        reader.report(f["endDate"], "\(keyPath).endDate", "must be after startDate \(RFC3339.format(start))")
        endDate = nil
      }
      var trial: BillingPlan.Trial?? = .some(nil)
      if let n = f["trial"] {
        let trialPath = "\(keyPath).trial"
        if let t = reader.mapping(n, trialPath, allowed: ["amount", "interval", "intervalCount"]) {
          let amount = reader.require(t, "amount", in: n, trialPath).flatMap {
            reader.amount($0, "\(trialPath).amount", digits: digits, allowZero: true)
          }
          let trialInterval = decodeInterval(t, n, trialPath)
          if let amount, let price, amount >= price {
            reader.report(
              t["amount"], "\(trialPath).amount",
              "must be less than the product's price \(MoneyText.format(price, digits: digits)): a trial costs less than the plan")
            trial = nil
          } else if let amount, let trialInterval {
            trial = .some(BillingPlan.Trial(amountMinor: amount, interval: trialInterval))
          } else {
            trial = nil
          }
        } else {
          trial = nil
        }
      }
      guard let interval, let startDate, let endDate, let trial else { return nil }
      return .some(BillingPlan(.recurring(interval: interval, startDate: startDate, endDate: endDate, trial: trial)))
    case "automaticReload":
      guard let f = reader.mapping(node, keyPath, allowed: ["thresholdAmount"]),
        let n = reader.require(f, "thresholdAmount", in: node, keyPath),
        let threshold = reader.amount(n, "\(keyPath).thresholdAmount", digits: digits, allowZero: false)
      else { return nil }
      return .some(BillingPlan(.automaticReload(thresholdMinor: threshold)))
    default:
      guard
        let f = reader.mapping(
          node, keyPath, allowed: ["paymentDate", "freeCancellationDate", "freeCancellationTimeZone"])
      else { return nil }
      let paymentDate = reader.require(f, "paymentDate", in: node, keyPath).flatMap {
        reader.timestamp($0, "\(keyPath).paymentDate")
      }
      var cancellation: Int64?? = .some(nil)
      if let n = f["freeCancellationDate"] {
        cancellation = reader.timestamp(n, "\(keyPath).freeCancellationDate").map { Optional($0) }
        if let date = cancellation ?? nil, let paymentDate, date > paymentDate {
          reader.report(n, "\(keyPath).freeCancellationDate", "must be on or before paymentDate \(RFC3339.format(paymentDate))")
          cancellation = nil
        }
      }
      var timeZone: String?? = .some(nil)
      if let n = f["freeCancellationTimeZone"], let name = reader.string(n, "\(keyPath).freeCancellationTimeZone") {
        if f["freeCancellationDate"] == nil {
          reader.report(n, "\(keyPath).freeCancellationTimeZone", "needs freeCancellationDate")
          timeZone = nil
        } else if TimeZone(identifier: name) == nil || !name.contains("/") && name != "UTC" {
          reader.report(n, "\(keyPath).freeCancellationTimeZone", "must be an IANA time zone like Europe/London, got \"\(name)\"")
          timeZone = nil
        } else {
          timeZone = .some(name)
        }
      }
      guard let paymentDate, let cancellation, let timeZone else { return nil }
      return .some(BillingPlan(.deferred(paymentDate: paymentDate, freeCancellationDate: cancellation, timeZone: timeZone)))
    }
  }

  /// `billing:` (`retries`, `whenRetriesFail`, `lateCancellation`).
  func decodeBillingSettings(_ node: YAMLNode) -> BillingSettings? {
    guard let fields = reader.mapping(node, "billing", allowed: ["retries", "whenRetriesFail", "lateCancellation"])
    else { return nil }
    var settings = BillingSettings()
    var valid = true
    if let n = fields["retries"] {
      if let entries = reader.sequence(n, "billing.retries") {
        if entries.count > 10 {
          reader.report(n, "billing.retries", "may list at most 10 retries, got \(entries.count)")
          valid = false
        }
        let days = entries.enumerated().map { reader.int($0.element, "billing.retries[\($0.offset)]", range: 1...60) }
        if days.contains(nil) { valid = false } else { settings.retries = days.map { $0! } }
      } else {
        valid = false
      }
    }
    func choice<T: RawRepresentable & CaseIterable>(_ key: String, _: T.Type) -> T? where T.RawValue == String {
      guard let n = fields[key], let text = reader.string(n, "billing.\(key)") else { return nil }
      guard let value = T(rawValue: text) else {
        reader.report(
          n, "billing.\(key)", "must be \(T.allCases.map(\.rawValue).joined(separator: " or ")), got \"\(text)\"")
        valid = false
        return nil
      }
      return value
    }
    if fields["whenRetriesFail"] != nil {
      if let value = choice("whenRetriesFail", BillingSettings.WhenRetriesFail.self) { settings.whenRetriesFail = value }
    }
    if fields["lateCancellation"] != nil {
      if let value = choice("lateCancellation", BillingSettings.LateCancellation.self) { settings.lateCancellation = value }
    }
    return valid ? settings : nil
  }

  /// `interval` (day, month or year) and `intervalCount` (1–999, default 1).
  func decodeInterval(_ fields: YAMLFields, _ node: YAMLNode, _ path: String) -> BillingPlan.Interval? {
    var unit: BillingPlan.IntervalUnit?
    if let n = reader.require(fields, "interval", in: node, path), let text = reader.string(n, "\(path).interval") {
      unit = BillingPlan.IntervalUnit(rawValue: text)
      if unit == nil { reader.report(n, "\(path).interval", "must be day, month or year, got \"\(text)\"") }
    }
    var count: Int? = 1
    if let n = fields["intervalCount"] { count = reader.int(n, "\(path).intervalCount", range: 1...999) }
    guard let unit, let count else { return nil }
    return BillingPlan.Interval(unit: unit, count: count)
  }

  /// The checks across sections once each decoded: products with a billing plan need
  /// `applePay.managementURL`.
  func checkBilling(
    _ catalog: [Product], catalogNode: YAMLNode?, applePay: ApplePaySection?
  ) -> Bool {
    let billed = catalog.enumerated().filter { $0.element.billing != nil }
    guard let first = billed.first else { return true }
    var nodes: [YAMLNode] = []
    if case .sequence(let entries)? = catalogNode { nodes = entries.nodes }
    /// The catalog entry at `index` (its place in the file).
    func entry(_ index: Int) -> YAMLNode? {
      nodes.indices.contains(index) ? nodes[index] : catalogNode
    }
    var valid = true
    if applePay?.paymentRequest.managementURL == nil {
      reader.report(
        applePay?.node ?? entry(first.offset), "applePay.managementURL",
        "is required: catalog[\(first.offset)] (\(first.element.sku)) is paid \(first.element.billing!.kind.rawValue == "deferred" ? "later" : "again"), and Apple Pay shows the buyer where to manage it")
      valid = false
    }
    return valid
  }
}
