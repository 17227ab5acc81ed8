import Foundation
/// The one-screen summary `payservice check-config` prints for a valid config.
public enum ConfigSummary {
  /// `environment` tells whether the gateway's secret key is set (never what it is).
  public static func text(
    _ config: Config, path: String, environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> String {
    let merchant = config.merchant
    var lines: [String] = []
    lines.append("\(path): valid")
    lines.append("merchant   \(merchant.displayName) (\(merchant.identifier)), \(merchant.countryCode), \(merchant.currency.code)")
    lines.append("networks   \(merchant.supportedNetworks.joined(separator: ", "))")
    lines.append("capability \(merchant.merchantCapabilities.joined(separator: ", "))")
    lines.append(
      "contacts   shipping: \(list(merchant.requiredShippingContactFields.map(\.rawValue)))"
        + "; billing: \(list(merchant.requiredBillingContactFields.map(\.rawValue)))")
    lines.append("catalog    \(config.catalog.count) product\(config.catalog.count == 1 ? "" : "s")")
    for product in config.catalog {
      lines.append(
        "  \(product.sku)  \(product.name)  \(config.format(product.priceMinor))  seed stock \(product.quantityOnHand)"
          + (product.billing.map { "  " + billing($0, config) } ?? ""))
    }
    lines.append("shipping   ships to \(config.shipping.shipsTo.joined(separator: ", "))")
    for method in config.shipping.methods {
      var where_ = method.regions.map { "regions " + $0.joined(separator: ", ") } ?? "all of shipsTo"
      if let except = method.exceptRegions { where_ += " except " + except.joined(separator: ", ") }
      let days = method.transitDaysMax.map { "\(method.transitDays)-\($0)" } ?? "\(method.transitDays)"
      let free = method.freeOverMinor.map { "  free over \(config.format($0))" } ?? ""
      lines.append(
        "  \(method.identifier)  \(method.label)  \(config.format(method.amountMinor))\(free)  \(days) days  \(where_)")
    }
    let tax = config.tax
    /// A rule's (or the default's) rates: "0.20", or "standard 0.20, reduced 0.05" with classes.
    func rates(_ standard: Rate, _ others: [String: Rate]) -> String {
      others.isEmpty
        ? standard.text
        : (["standard \(standard.text)"] + others.keys.sorted().map { "\($0) \(others[$0]!.text)" }).joined(separator: ", ")
    }
    lines.append(
      "tax        default \(rates(tax.defaultRate, tax.defaultClassRates)), rounding \(tax.rounding.rawValue), "
        + "\(tax.rules.count) rule\(tax.rules.count == 1 ? "" : "s")")
    if tax.reportsBreakdown {
      lines.append(
        "  prices   \(tax.pricesIncludeTax ? "include tax" : "exclude tax"), rounded \(tax.roundingTarget == .perLine ? "per line" : "once per rate"), "
          + "shipping taxed as \(tax.shippingTaxClass)" + (tax.inclusiveLabel.map { ", shown as \"\($0)\"" } ?? ""))
    }
    for rule in tax.rules {
      let prefixes = rule.postalCodePrefixes.map { " postal " + $0.joined(separator: ",") } ?? ""
      lines.append("  \(rule.region)\(prefixes)  \(rates(rule.rate, rule.classRates))\(rule.shippingTaxable ? "  shipping taxable" : "")")
    }
    if !config.coupons.isEmpty {
      lines.append("coupons    \(config.coupons.count)")
      for coupon in config.coupons {
        var text = "  \(coupon.code)  \(coupon.label)  "
        switch coupon.discount {
        case .percentOff(let rate): text += "\(rate.text)% off"
        case .amountOff(let amount): text += "\(config.format(amount)) off"
        }
        if let minimum = coupon.minimumSubtotalMinor { text += ", from \(config.format(minimum))" }
        if let expires = coupon.expires { text += ", until \(RFC3339.format(expires))" }
        lines.append(text)
      }
    }
    if !config.paymentMethodAdjustments.isEmpty {
      lines.append("cards      \(config.paymentMethodAdjustments.count) adjustment\(config.paymentMethodAdjustments.count == 1 ? "" : "s")")
      for adjustment in config.paymentMethodAdjustments {
        let match = [adjustment.network, adjustment.type?.rawValue].compactMap { $0 }.joined(separator: " ")
        lines.append("  \(adjustment.label)  \(adjustment.percent.text)%  \(match.isEmpty ? "every card" : match)")
      }
    }
    lines.append(
      "gateway    \(config.gateway.kind.rawValue), charge tokens valid \(config.gateway.chargeTokenTTLSeconds) s, "
        + "capture \(config.gateway.capture.rawValue)")
    if let stripe = config.gateway.stripe {
      lines.append("  stripe   \(stripe.mode.rawValue) mode, \(stripe.apiBase), key: \(stripe.keySummary(environment: environment))")
      lines.append(callsLine(stripe))
      let secrets = StripeWebhookSignature.secrets(in: environment[stripe.webhookSecretVariable] ?? "")
      lines.append(
        "  webhooks "
          + (secrets.isEmpty
            ? "\(stripe.webhookSecretVariable) not set: processStripeEvent answers not_configured"
            : "\(stripe.webhookSecretVariable) set, \(secrets.count) secret\(secrets.count == 1 ? "" : "s")"))
    }
    if let adyen = config.gateway.adyen {
      lines.append(
        "  adyen    \(adyen.mode.rawValue) mode, \(adyen.apiBase), merchant account \(adyen.merchantAccount), keys: "
          + adyen.keySummary(environment: environment))
      lines.append(callsLine(adyen))
    }
    if let applePay = config.applePay {
      let certificate = applePay.certificate
      let day = { (date: Date) in String(RFC3339.format(Int64(date.timeIntervalSince1970)).prefix(10)) }
      lines.append(
        "applePay   EC_v1 tokens, certificate valid \(day(certificate.notValidBefore)) to \(day(certificate.notValidAfter)), "
          + "signed up to \(applePay.maxTokenAgeSeconds) s from the clock")
      lines.append("  root     \(applePay.rootCertificate.subject)")
    } else {
      lines.append("applePay   not configured: test tokens only")
    }
    let request = config.paymentRequest
    lines.append(
      "request    shippingType \(request.shippingType.rawValue)"
        + (request.managementURL.map { ", managed at \($0)" } ?? "")
        + (request.tokenNotificationURL.map { ", token notifications to \($0)" } ?? ""))
    if let session = config.merchantSession {
      let identity = session.identity
      lines.append(
        "sessions   merchant identity valid \(RFC3339.format(identity.notValidBefore).prefix(10)) to "
          + "\(RFC3339.format(identity.notValidAfter).prefix(10)), domains \(session.domains.joined(separator: ", ")), "
          + "connect \(Int(session.connectTimeoutSeconds)) s, request \(Int(session.requestTimeoutSeconds)) s")
      if !session.urlPolicy.additionalHosts.isEmpty {
        lines.append(
          "  WARNING  validation URLs may also name \(session.urlPolicy.additionalHosts.joined(separator: ", ")) "
            + "(applePay.merchantSession.additionalHosts): a test server or proxy, not Apple")
      }
      if session.trustRootsPEM != nil {
        lines.append("  WARNING  Apple's gateway is trusted through applePay.merchantSession.trustRoots, not the system roots")
      }
    } else {
      lines.append("sessions   not configured: startMerchantSession answers not_configured")
    }
    if let tokens = config.merchantTokens {
      lines.append("tokens     merchant token events and unlinks at \(tokens.apiBase), with the merchant identity")
      if tokens.trustRootsPEM != nil {
        lines.append("  WARNING  Apple's token API is trusted through applePay.merchantTokens.trustRoots, not the system roots")
      }
    }
    if let wallet = config.walletOrders {
      lines.append("wallet     orders \(wallet.orderTypeIdentifier) at \(wallet.webServiceURL)")
      if let package = wallet.package {
        lines.append(
          "  packages signed by \(package.signer.orderTypeIdentifier)'s certificate, valid to \(RFC3339.format(package.signer.notValidAfter))")
      } else {
        lines.append("  no package keys: payservice answers none of Wallet's requests for these orders; your own web service must")
      }
      if let apns = wallet.apns {
        lines.append("  pushes to \(apns.apiBase), key \(apns.keyId) of team \(apns.teamId)")
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// A billing plan in a line: "recurring every 1 month, trial 5.00 for 14 days".
  static func billing(_ plan: BillingPlan, _ config: Config) -> String {
    func every(_ interval: BillingPlan.Interval) -> String { "\(interval.count) \(interval.unit.rawValue)\(interval.count == 1 ? "" : "s")" }
    switch plan.schedule {
    case .recurring(let interval, let start, let end, let trial):
      return "recurring every \(every(interval))"
        + (start.map { " from \(RFC3339.format($0))" } ?? "") + (end.map { " until \(RFC3339.format($0))" } ?? "")
        + (trial.map { ", trial \(config.format($0.amountMinor)) for \(every($0.interval))" } ?? "")
    case .automaticReload(let threshold): return "automatic reload below \(config.format(threshold))"
    case .deferred(let date, let cancellation, let zone):
      return "deferred to \(RFC3339.format(date))"
        + (cancellation.map { ", free cancellation until \(RFC3339.format($0)) \(zone ?? "UTC")" } ?? "")
    }
  }

  /// How a remote gateway's calls are made: timeouts, retries, concurrency and trust.
  static func callsLine(_ settings: some RemoteGatewaySettings) -> String {
    "  calls    connect \(Int(settings.connectTimeoutSeconds)) s, request \(Int(settings.requestTimeoutSeconds)) s, "
      + "\(settings.maxRetries) retries, \(settings.maxConcurrentCalls) at once"
      + (settings.trustRoots.map { ", trusting \($0)" } ?? "")
  }

  static func list(_ items: [String]) -> String { items.isEmpty ? "none" : items.joined(separator: ", ") }

  /// The store's stock beside the config's seed counts (`check-config --database`): the store's
  /// counts are the truth once it has seen a product.
  public static func stockText(_ config: Config, levels: [StockLevel], store: String) -> String {
    var lines = ["store      \(store): stock of \(levels.count) sku\(levels.count == 1 ? "" : "s")"]
    let configured = config.catalog.compactMap { product in levels.first { $0.sku == product.sku } }
    let others = levels.filter { config.productsBySKU[$0.sku] == nil }
    for level in configured + others {
      let seed = config.productsBySKU[level.sku].map { "seed \($0.quantityOnHand)" } ?? "not in the config: not sold"
      lines.append("  \(level.sku)  on hand \(level.quantityOnHand)  sold \(level.sold)  \(seed)")
    }
    for product in config.catalog where !levels.contains(where: { $0.sku == product.sku }) {
      lines.append("  \(product.sku)  not in the store yet: a start gives it its seed \(product.quantityOnHand)")
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
