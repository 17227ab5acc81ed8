@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// `catalog[].recurring`, `automaticReload` and `deferred`, the `applePay` payment request and
/// merchant session keys, and `walletOrders`.
@Suite("Billing plans, payment request and Wallet order config")
struct BillingConfigTests {
  /// The minimal config with `products` in place of its catalog and `extra` sections appended.
  static func yaml(products: String, extra: String = "") -> String {
    ConfigLoaderTests.minimal.replacingOccurrences(
      of: "catalog:\n  - {sku: tea, name: Tea, description: Green tea, price: 1200, quantityOnHand: 5}",
      with: "catalog:\n" + products) + extra
  }

  static let managed = "\napplePay:\n  managementURL: https://tiny.example.com/account\n"

  func problems(_ yaml: String) -> [String] {
    ConfigLoaderTests().problems(yaml)
  }

  @Test("each plan is read with its dates, interval and trial")
  func plansRead() throws {
    let config = try ConfigLoader.parse(
      yaml: Self.yaml(
        products: """
            - sku: club
              name: Tea Club
              description: Tea every month
              price: 1500
              quantityOnHand: 100
              recurring:
                interval: month
                intervalCount: 2
                startDate: "2027-01-01T00:00:00Z"
                endDate: "2028-01-01T00:00:00Z"
                trial: {amount: 0, interval: day, intervalCount: 7}
            - {sku: card, name: Card, description: "", price: 3000, quantityOnHand: 9, automaticReload: {thresholdAmount: 500}}
            - sku: pot
              name: Teapot
              description: Cast iron teapot
              price: 9000
              quantityOnHand: 3
              deferred: {paymentDate: "2027-03-01T00:00:00Z", freeCancellationDate: "2027-02-20T00:00:00Z", freeCancellationTimeZone: Asia/Tokyo}
            - {sku: cup, name: Cup, description: Cup, price: 800, quantityOnHand: 9}
          """, extra: Self.managed))
    let plans = config.catalog.map { $0.billing?.schedule }
    #expect(
      plans == [
        .recurring(
          interval: .init(unit: .month, count: 2), startDate: RFC3339.parse("2027-01-01T00:00:00Z"),
          endDate: RFC3339.parse("2028-01-01T00:00:00Z"),
          trial: .init(amountMinor: 0, interval: .init(unit: .day, count: 7))),
        .automaticReload(thresholdMinor: 500),
        .deferred(
          paymentDate: RFC3339.parse("2027-03-01T00:00:00Z")!, freeCancellationDate: RFC3339.parse("2027-02-20T00:00:00Z"),
          timeZone: "Asia/Tokyo"),
        nil,
      ])
    #expect(config.hasBillingPlans)
    #expect(config.paymentRequest.managementURL == "https://tiny.example.com/account")
    #expect(config.paymentRequest.shippingType == .shipping)
    #expect(try !ConfigLoader.parse(yaml: ConfigLoaderTests.minimal).hasBillingPlans)
  }

  @Test("invalid plans are named with their places and what would be valid")
  func planProblems() {
    let product = "  - sku: club\n    name: Club\n    description: Club\n    price: 1500\n    quantityOnHand: 1\n"
    #expect(
      problems(Self.yaml(products: product + "    recurring: {interval: week}\n    deferred: {paymentDate: \"2027-01-01T00:00:00Z\"}\n", extra: Self.managed)) == [
        "c.yaml:15:15: catalog[0].deferred: a product is paid one way: recurring and deferred cannot both be set; make them separate products"
      ])
    #expect(
      problems(Self.yaml(products: product + "    recurring: {interval: week, intervalCount: 0}\n", extra: Self.managed)) == [
        "c.yaml:14:27: catalog[0].recurring.interval: must be day, month or year, got \"week\"",
        "c.yaml:14:48: catalog[0].recurring.intervalCount: must be a whole number from 1 to 999, got \"0\"",
      ])
    #expect(
      problems(
        Self.yaml(
          products: product
            + "    recurring: {interval: month, startDate: \"2027-01-01T00:00:00Z\", endDate: \"2026-01-01T00:00:00Z\", trial: {amount: 1500, interval: day}}\n",
          extra: Self.managed)) == [
            "c.yaml:14:78: catalog[0].recurring.endDate: must be after startDate 2027-01-01T00:00:00Z",
            "c.yaml:14:118: catalog[0].recurring.trial.amount: must be less than the product's price 1500: a trial costs less than the plan",
          ])
    #expect(
      problems(
        Self.yaml(
          products: product
            + "    deferred: {freeCancellationDate: \"2027-01-01T00:00:00Z\", freeCancellationTimeZone: Mars/Olympus}\n",
          extra: Self.managed)) == [
            "c.yaml:14:15: catalog[0].deferred.paymentDate: is required",
            "c.yaml:14:88: catalog[0].deferred.freeCancellationTimeZone: must be an IANA time zone like Europe/London, got \"Mars/Olympus\"",
          ])
    #expect(
      problems(
        Self.yaml(
          products: product
            + "    deferred: {paymentDate: \"2027-01-01T00:00:00Z\", freeCancellationDate: \"2027-02-01T00:00:00Z\"}\n",
          extra: Self.managed)) == [
            "c.yaml:14:75: catalog[0].deferred.freeCancellationDate: must be on or before paymentDate 2027-01-01T00:00:00Z"
          ])
  }

  @Test("a plan needs applePay.managementURL; with Stripe a plan may cost nothing today (a SetupIntent keeps the card)")
  func crossSectionProblems() {
    let club = "  - {sku: club, name: Club, description: Club, price: 1500, quantityOnHand: 1, recurring: {interval: month}}\n"
    #expect(
      problems(Self.yaml(products: club)) == [
        "c.yaml:9:5: applePay.managementURL: is required: catalog[0] (club) is paid again, and Apple Pay shows the buyer where to manage it"
      ])
    let preorder = "  - {sku: pot, name: Pot, description: Pot, price: 9000, quantityOnHand: 1, deferred: {paymentDate: \"2027-01-01T00:00:00Z\"}}\n"
    let stripe = Self.yaml(products: club + preorder, extra: Self.managed)
      .replacingOccurrences(of: "gateway:\n  kind: sandbox", with: "gateway:\n  kind: stripe")
    #expect(problems(stripe) == [])
  }

  @Test("billing: retries, whenRetriesFail and lateCancellation are read; defaults 1, 3, 5 days, unpaid, refuse")
  func billingSettings() throws {
    let club = "  - {sku: club, name: Club, description: Club, price: 1500, quantityOnHand: 1, recurring: {interval: month}}\n"
    let defaults = try ConfigLoader.parse(yaml: Self.yaml(products: club, extra: Self.managed), file: "c.yaml")
    #expect(defaults.billing == BillingSettings())
    #expect(defaults.billing.retries == [1, 3, 5])
    #expect(defaults.billing.whenRetriesFail == .unpaid)
    #expect(defaults.billing.lateCancellation == .refuse)
    let set = try ConfigLoader.parse(
      yaml: Self.yaml(
        products: club,
        extra: Self.managed + "billing:\n  retries: [2, 7]\n  whenRetriesFail: canceled\n  lateCancellation: allow\n"),
      file: "c.yaml")
    #expect(set.billing.retries == [2, 7])
    #expect(set.billing.whenRetriesFail == .canceled)
    #expect(set.billing.lateCancellation == .allow)
    #expect(
      problems(
        Self.yaml(
          products: club,
          extra: Self.managed + "billing:\n  retries: [0, 61]\n  whenRetriesFail: later\n  lateCancellation: maybe\n  grace: 3\n"))
        == [
          "c.yaml:24:3: billing.grace: unknown key; valid keys here: retries, whenRetriesFail, lateCancellation",
          "c.yaml:21:13: billing.retries[0]: must be a whole number from 1 to 60, got \"0\"",
          "c.yaml:21:16: billing.retries[1]: must be a whole number from 1 to 60, got \"61\"",
          "c.yaml:22:20: billing.whenRetriesFail: must be unpaid or canceled, got \"later\"",
          "c.yaml:23:21: billing.lateCancellation: must be refuse or allow, got \"maybe\"",
        ])
  }

  @Test("applePay request keys, merchant session keys and walletOrders: problems with their places")
  func applePayProblems() {
    #expect(
      problems(
        ConfigLoaderTests.minimal
          + "\napplePay:\n  shippingType: drone\n  managementURL: http://tiny.example.com\n  domains: [\"https://tiny.example.com\"]\n"
      ) == [
        "c.yaml:18:17: applePay.shippingType: must be one of shipping, delivery, storePickup, servicePickup, got \"drone\"",
        "c.yaml:19:18: applePay.managementURL: must be an https URL like https://shop.example.com/account, got \"http://tiny.example.com\"",
        "c.yaml:18:3: applePay.merchantIdentityCertificate: is required",
        "c.yaml:18:3: applePay.merchantIdentityKey: is required",
        "c.yaml:20:13: applePay.domains[0]: must be a domain name registered with Apple, like shop.example.com (no scheme, port or path), got \"https://tiny.example.com\"",
      ])
    #expect(
      problems(
        ConfigLoaderTests.minimal
          + "\nwalletOrders:\n  orderTypeIdentifier: com.example.orders\n  webServiceURL: https://tiny.example.com/wallet\n")
        == [
          "c.yaml:18:24: walletOrders.orderTypeIdentifier: must be an order type identifier like \"order.com.example.shop\", got \"com.example.orders\""
        ])
  }

  @Test("additional merchant session hosts are host names with an optional port, never addresses or URLs")
  func additionalHosts() {
    #expect(ConfigDecoder.additionalHostProblem("localhost:8443") == nil)
    #expect(ConfigDecoder.additionalHostProblem("gateway-proxy.example.com") == nil)
    let port = "has a port that is not a number from 1 to 65535"
    for (entry, problem) in [
      ("127.0.0.1:8443", "names an IP address; only DNS names such as apple-pay-gateway.apple.com are allowed"),
      ("[::1]:8443", "names an IP address ([…]); only DNS names such as apple-pay-gateway.apple.com are allowed"),
      ("https://localhost", port), ("localhost:0", port), ("localhost:99999", port), ("a:b:c", port),
      ("localhost/path", "has a host with characters a DNS name does not have (letters, digits, - and . only)"),
      ("user@localhost", "has userinfo (…@) before its host; a validation URL names only the gateway's host"),
      ("", "has no host; expected a DNS name such as apple-pay-gateway.apple.com"),
    ] {
      #expect(
        ConfigDecoder.additionalHostProblem(entry)
          == "\(problem); expected a host name or host:port like localhost:8443, got \"\(entry)\"")
    }
  }
}
