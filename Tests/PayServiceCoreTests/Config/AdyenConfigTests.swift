import PayServiceCore
import Testing

@Suite("Adyen gateway config")
struct AdyenConfigTests {
  func problems(_ yaml: String) -> [String] {
    ConfigLoaderTests().problems(yaml)
  }

  static let hmacKey = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"

  @Test("adyen with defaults, and every setting read")
  func settings() throws {
    let defaults = try ConfigLoader.parse(
      yaml: StripeConfigTests.yaml(gateway: "gateway:\n  kind: adyen\n  merchantAccount: PayserviceECOM"))
    #expect(defaults.gateway.kind == .adyen)
    #expect(defaults.gateway.stripe == nil)
    var expected = Gateway.Adyen()
    expected.merchantAccount = "PayserviceECOM"
    #expect(defaults.gateway.adyen == expected)
    #expect(expected.apiBase == "https://checkout-test.adyen.com")
    #expect(expected.apiKeyVariable == "ADYEN_API_KEY")
    #expect(expected.hmacKeyVariable == "ADYEN_HMAC_KEY")
    let all = try ConfigLoader.parse(
      yaml: StripeConfigTests.yaml(
        gateway: """
          gateway:
            kind: adyen
            capture: manual
            mode: live
            merchantAccount: Shop_EU-1.web
            apiKeyVariable: SHOP_ADYEN_KEY
            hmacKeyVariable: SHOP_ADYEN_HMAC
            apiBase: https://1797a841fbb37ca7-AdyenDemo-checkout-live.adyenpayments.com/checkout/
            connectTimeoutSeconds: 3
            requestTimeoutSeconds: 20
            maxRetries: 4
            maxConcurrentCalls: 8
          """))
    expected.mode = .live
    expected.merchantAccount = "Shop_EU-1.web"
    expected.apiKeyVariable = "SHOP_ADYEN_KEY"
    expected.hmacKeyVariable = "SHOP_ADYEN_HMAC"
    expected.apiBase = "https://1797a841fbb37ca7-AdyenDemo-checkout-live.adyenpayments.com/checkout"
    expected.connectTimeoutSeconds = 3
    expected.requestTimeoutSeconds = 20
    expected.maxRetries = 4
    expected.maxConcurrentCalls = 8
    #expect(all.gateway.adyen == expected)
    #expect(all.gateway.capture == .manual)
  }

  @Test("keys in the config, a missing merchant account, live without its endpoint: each named with its place")
  func problems() {
    func gateway(_ lines: String) -> [String] { problems(StripeConfigTests.yaml(gateway: "gateway:\n  kind: adyen\n" + lines)) }
    #expect(
      gateway("  merchantAccount: M\n  apiKey: AQEyhmfxKo\n") == [
        "c.yaml:18:11: gateway.apiKey: a secret key is never written in the config: set it in the environment variable named by gateway.apiKeyVariable (default ADYEN_API_KEY)"
      ])
    #expect(
      gateway("  merchantAccount: M\n  hmacKey: \(Self.hmacKey)\n") == [
        "c.yaml:18:12: gateway.hmacKey: an HMAC key is never written in the config: set it in the environment variable named by gateway.hmacKeyVariable (default ADYEN_HMAC_KEY)"
      ])
    #expect(gateway("  mode: test\n") == ["c.yaml:16:3: gateway.merchantAccount: is required"])
    #expect(
      gateway("  merchantAccount: Shop EU\n") == [
        "c.yaml:17:20: gateway.merchantAccount: must be the merchant account's name as Adyen's Customer Area shows it (1 to 80 letters, digits, _ . -)"
      ])
    #expect(
      gateway("  merchantAccount: M\n  mode: live\n") == [
        "c.yaml:18:9: gateway.apiBase: is required with mode live: your live Checkout endpoint, https://{PREFIX}-checkout-live.adyenpayments.com/checkout (Customer Area, Developers > API URLs)"
      ])
    #expect(
      gateway("  merchantAccount: M\n  mode: live\n  apiBase: https://checkout-test.adyen.com\n") == [
        "c.yaml:19:12: gateway.apiBase: is Adyen's test platform, which mode live cannot use"
      ])
    #expect(
      gateway("  merchantAccount: M\n  apiBase: https://u:p@checkout-test.adyen.com?x=1\n") == [
        #"c.yaml:18:12: gateway.apiBase: must be an https URL like https://checkout-test.adyen.com or https://{PREFIX}-checkout-live.adyenpayments.com/checkout (no query or credentials), got "https://***@checkout-test.adyen.com?x=1""#
      ])
    #expect(
      gateway("  merchantAccount: M\n  secretKeyVariable: STRIPE_SECRET_KEY\n") == [
        "c.yaml:18:22: gateway.secretKeyVariable: applies to gateway.kind stripe only; this gateway is adyen"
      ])
    #expect(
      problems(StripeConfigTests.yaml(gateway: "gateway:\n  kind: stripe\n  merchantAccount: M")) == [
        "c.yaml:17:20: gateway.merchantAccount: applies to gateway.kind adyen only; this gateway is stripe"
      ])
  }

  @Test("card adjustments are refused with Adyen: it decrypts the token, so payservice sees no card to price by")
  func adjustments() {
    let yaml =
      StripeConfigTests.yaml(gateway: "gateway:\n  kind: adyen\n  merchantAccount: M")
      + "\npaymentMethodAdjustments:\n  - {label: JCB fee, network: jcb, percent: \"2\"}\n"
    #expect(
      problems(yaml) == [
        "c.yaml:19:3: paymentMethodAdjustments: cannot be used with gateway.kind adyen: Adyen decrypts the Apple Pay token when it charges it, so payservice cannot see the card it would price by"
      ])
  }

  @Test("the keys come from the environment, are checked, and are never in a message")
  func keys() {
    let settings = Gateway.Adyen()
    #expect(settings.apiKey(environment: ["ADYEN_API_KEY": "AQEyhmfxKo5"]) == .success("AQEyhmfxKo5"))
    #expect(settings.apiKey(environment: [:]) == .failure(.apiKeyNotSet(variable: "ADYEN_API_KEY")))
    #expect(
      Gateway.Adyen.KeyProblem.apiKeyNotSet(variable: "ADYEN_API_KEY").description
        == "gateway.kind is adyen but the environment variable ADYEN_API_KEY (gateway.apiKeyVariable) is not set")
    #expect(settings.apiKey(environment: ["ADYEN_API_KEY": "two words"]) == .failure(.apiKeyMalformed(variable: "ADYEN_API_KEY")))
    #expect(
      Gateway.Adyen.KeyProblem.apiKeyMalformed(variable: "ADYEN_API_KEY").description
        == "ADYEN_API_KEY does not hold an Adyen API key (one line of printable characters, as the Customer Area shows it)")
    #expect(
      settings.keySummary(environment: ["ADYEN_API_KEY": "AQEyhmfxKo5", "ADYEN_HMAC_KEY": "\(Self.hmacKey),\(Self.hmacKey)"])
        == "ADYEN_API_KEY set, ADYEN_HMAC_KEY set, 2 keys")
    #expect(settings.keySummary(environment: [:]) == "ADYEN_API_KEY not set, ADYEN_HMAC_KEY not set")
    #expect(
      settings.keySummary(environment: ["ADYEN_API_KEY": "a\tb", "ADYEN_HMAC_KEY": "xyz"])
        == "ADYEN_API_KEY set, not an API key: serving would stop, ADYEN_HMAC_KEY set, not an HMAC key: serving would stop")
    guard case .failure(let problem) = settings.hmacKeys(environment: ["ADYEN_HMAC_KEY": "0123"]) else {
      Issue.record("a short HMAC key was taken")
      return
    }
    #expect(
      problem.description
        == "ADYEN_HMAC_KEY's key 1 is not an HMAC key as Adyen's Customer Area shows it (32 to 128 hex digits)")
  }
}
