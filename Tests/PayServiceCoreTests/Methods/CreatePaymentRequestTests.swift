import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// createPaymentRequest: what it builds is a valid ApplePayPaymentRequest at the minimumVersion it
/// states, and not at any lower version (Apple Pay JS's types, `ApplePayJSSchema`).
@Suite("createPaymentRequest")
struct CreatePaymentRequestTests {
  /// Every shipped and golden config.
  static let configs: [String] = {
    let root = TestPaths.packageRoot
    var paths = ["config.yaml", "examples/web/shop.yaml", "Tests/EndToEndTests/Golden/config.yaml"]
    for folder in ["examples", "Tests/EndToEndTests/Golden"] {
      let entries = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path)) ?? []
      for entry in entries.sorted() {
        if entry.hasSuffix(".yaml") && entry != "config.yaml" { paths.append("\(folder)/\(entry)") }
        let nested = "\(folder)/\(entry)/config.yaml"
        if FileManager.default.fileExists(atPath: root.appendingPathComponent(nested).path) { paths.append(nested) }
      }
    }
    return paths
  }()

  @Test("every config and cart: valid at minimumVersion, and minimumVersion is the lowest version that accepts it")
  func versions() throws {
    #expect(Self.configs.count >= 10)
    var seen: Set<Int> = []
    for path in Self.configs {
      let config = try ConfigLoader.load(path: TestPaths.path(path))
      let handler = TestConfig.handler(try TestConfig.context(config: config))
      let coupon = config.coupons.first.map { #","couponCode":"\#($0.code)""# } ?? ""
      // The merchant's own country, and one nothing ships to (no shipping methods).
      let contacts = ["", #","shippingContact":{"countryCode":"ZZ"}"#]
      for product in config.catalog {
        for (extra, contact) in [("", contacts[0]), (coupon, contacts[0]), ("", contacts[1]), (#","applicationData":"AQID""#, contacts[1])] {
          let params = #"{"items":[{"sku":"\#(product.sku)","quantity":2}]\#(extra)\#(contact)}"#
          let response = handler.call("createPaymentRequest", params)
          guard let request = response["result"]?["paymentRequest"],
            case .number(let text)? = response["result"]?["minimumVersion"], let version = Int(text)
          else {
            Issue.record("\(path) \(params): \(response.compact)")
            continue
          }
          seen.insert(version)
          let problems = ApplePayJSSchema.validate(request, version: version)
          #expect(problems.isEmpty, "\(path) \(params) at version \(version): \(problems)")
          #expect(
            ApplePayJSSchema.lowestAcceptingVersion(request) == version,
            "\(path) \(params): minimumVersion \(version)")
        }
      }
    }
    // Plain requests, coupons and delivery windows, and billing plans were all among them.
    #expect(seen == [3, 12, 14])
  }

  @Test("the web shop's subscription: the exact request, its recurring payment request and version 14")
  func subscription() throws {
    let config = try ConfigLoader.load(path: TestPaths.path("examples/web/shop.yaml"))
    let handler = TestConfig.handler(try TestConfig.context(config: config))
    let response = handler.call(
      "createPaymentRequest",
      #"{"items":[{"sku":"beans-club"}],"shippingContact":{"countryCode":"ZZ"},"couponCode":"nope","applicationData":"AQID"}"#)
    #expect(
      response.compact
        == #"{"jsonrpc":"2.0","id":1,"result":{"minimumVersion":14,"paymentRequest":{"countryCode":"US","currencyCode":"USD","merchantCapabilities":["supports3DS","supportsCredit","supportsDebit"],"supportedNetworks":["visa","masterCard","amex","discover"],"requiredShippingContactFields":["postalAddress","name","email"],"requiredBillingContactFields":["postalAddress"],"shippingType":"shipping","shippingMethods":[],"lineItems":[{"label":"Beans Club trial","amount":"5.00","type":"final","paymentTiming":"recurring","recurringPaymentStartDate":"2026-11-21T12:00:00Z","recurringPaymentIntervalUnit":"day","recurringPaymentIntervalCount":14,"recurringPaymentEndDate":"2026-12-05T12:00:00Z"},{"label":"Beans Club","amount":"18.00","type":"final","paymentTiming":"recurring","recurringPaymentStartDate":"2026-12-05T12:00:00Z","recurringPaymentIntervalUnit":"month","recurringPaymentIntervalCount":1},{"label":"Tax","amount":"0.40","type":"final"}],"total":{"label":"Example Coffee","amount":"5.40","type":"final"},"supportsCouponCode":true,"applicationData":"AQID","recurringPaymentRequest":{"paymentDescription":"A bag of fresh beans every month","regularBilling":{"label":"Beans Club","amount":"18.00","type":"final","paymentTiming":"recurring","recurringPaymentStartDate":"2026-12-05T12:00:00Z","recurringPaymentIntervalUnit":"month","recurringPaymentIntervalCount":1},"trialBilling":{"label":"Beans Club trial","amount":"5.00","type":"final","paymentTiming":"recurring","recurringPaymentStartDate":"2026-11-21T12:00:00Z","recurringPaymentIntervalUnit":"day","recurringPaymentIntervalCount":14,"recurringPaymentEndDate":"2026-12-05T12:00:00Z"},"billingAgreement":"You can cancel at any time on your account page.","managementURL":"https://coffee.example.com/account/payments","tokenNotificationURL":"https://coffee.example.com/apple-pay/token-notifications"}},"errors":[{"code":"couponCodeInvalid","message":"This coupon code isn't valid."}]}}"#
    )
  }
}
