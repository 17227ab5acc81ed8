import PayServiceCore
import Testing

@Suite("Stripe gateway config")
struct StripeConfigTests {
  /// A live-mode key for the tests, assembled here: no tracked file holds anything shaped like one.
  static func live(_ kind: String, _ rest: String) -> String { kind + "_live_" + rest }

  static func yaml(gateway: String) -> String {
    ConfigLoaderTests.minimal.replacingOccurrences(of: "gateway:\n  kind: sandbox", with: gateway)
  }

  func problems(_ yaml: String) -> [String] {
    ConfigLoaderTests().problems(yaml)
  }

  @Test("stripe with defaults, and every setting read")
  func settings() throws {
    let defaults = try ConfigLoader.parse(yaml: Self.yaml(gateway: "gateway:\n  kind: stripe"))
    #expect(defaults.gateway.kind == .stripe)
    #expect(defaults.gateway.stripe == Gateway.Stripe())
    #expect(defaults.gateway.stripe?.apiBase == "https://api.stripe.com")
    #expect(defaults.gateway.stripe?.secretKeyVariable == "STRIPE_SECRET_KEY")
    #expect(defaults.gateway.stripe?.webhookSecretVariable == "STRIPE_WEBHOOK_SECRET")
    let all = try ConfigLoader.parse(
      yaml: Self.yaml(
        gateway: """
          gateway:
            kind: stripe
            mode: live
            secretKeyVariable: SHOP_STRIPE_KEY
            webhookSecretVariable: SHOP_WEBHOOK_SECRET
            apiBase: https://stripe.internal:8443/
            connectTimeoutSeconds: 3
            requestTimeoutSeconds: 20
            maxRetries: 4
            maxConcurrentCalls: 8
          """))
    var expected = Gateway.Stripe()
    expected.mode = .live
    expected.secretKeyVariable = "SHOP_STRIPE_KEY"
    expected.webhookSecretVariable = "SHOP_WEBHOOK_SECRET"
    expected.apiBase = "https://stripe.internal:8443"
    expected.connectTimeoutSeconds = 3
    expected.requestTimeoutSeconds = 20
    expected.maxRetries = 4
    expected.maxConcurrentCalls = 8
    #expect(all.gateway.stripe == expected)
  }

  @Test("a key in the config, a wrong origin, a sandbox with Stripe settings: each named with its place")
  func problems() {
    #expect(
      problems(Self.yaml(gateway: "gateway:\n  kind: stripe\n  secretKey: sk_test_abc123")) == [
        "c.yaml:17:14: gateway.secretKey: a secret key is never written in the config: set it in the environment variable named by gateway.secretKeyVariable (default STRIPE_SECRET_KEY)"
      ])
    // A key under any name is refused the same way, and never repeated in the message.
    let hidden = problems(Self.yaml(gateway: "gateway:\n  kind: stripe\n  apiBase: \(Self.live("rk", "zzz999"))"))
    #expect(hidden.count == 1 && hidden[0].hasPrefix("c.yaml:17:12: gateway.apiBase: a secret key is never written"))
    #expect(!hidden[0].contains("zzz999"))
    #expect(
      problems(Self.yaml(gateway: "gateway:\n  kind: stripe\n  apiBase: http://api.stripe.com")) == [
        #"c.yaml:17:12: gateway.apiBase: must be an https origin like https://api.stripe.com (no path, query or credentials), got "http://api.stripe.com""#
      ])
    #expect(
      problems(Self.yaml(gateway: "gateway:\n  kind: sandbox\n  maxRetries: 3")) == [
        "c.yaml:17:15: gateway.maxRetries: applies to gateway.kind stripe or adyen only; this gateway is sandbox"
      ])
    #expect(
      problems(Self.yaml(gateway: "gateway:\n  kind: paypal")) == [
        #"c.yaml:16:9: gateway.kind: must be sandbox, stripe or adyen, got "paypal""#
      ])
    #expect(
      problems(Self.yaml(gateway: "gateway:\n  kind: stripe\n  mode: production\n  secretKeyVariable: 1KEY")) == [
        #"c.yaml:17:9: gateway.mode: must be test or live, got "production""#,
        "c.yaml:18:22: gateway.secretKeyVariable: must be an environment variable name like STRIPE_SECRET_KEY (letters, digits, _)",
      ])
    // A webhook secret in the config, under its name or any other, is refused without repeating it.
    let webhook = problems(Self.yaml(gateway: "gateway:\n  kind: stripe\n  webhookSecret: whsec_abc123"))
    #expect(
      webhook == [
        "c.yaml:17:18: gateway.webhookSecret: a webhook signing secret is never written in the config: set it in the environment variable named by gateway.webhookSecretVariable (default STRIPE_WEBHOOK_SECRET)"
      ])
    let renamed = problems(Self.yaml(gateway: "gateway:\n  kind: stripe\n  webhookSecretVariable: whsec_abc123"))
    #expect(renamed.count == 1 && renamed[0].hasPrefix("c.yaml:17:26: gateway.webhookSecretVariable: a webhook signing secret is never written"))
    #expect(!renamed[0].contains("abc123"))
    #expect(
      problems(Self.yaml(gateway: "gateway:\n  kind: stripe\n  secretKeyVariable: \"\"\n  webhookSecretVariable: 9X")) == [
        "c.yaml:17:22: gateway.secretKeyVariable: must not be empty",
        "c.yaml:18:26: gateway.webhookSecretVariable: must be an environment variable name like STRIPE_WEBHOOK_SECRET (letters, digits, _)",
      ])
  }

  @Test("an apiBase with credentials is quoted without them, whatever its password holds")
  func apiBaseCredentials() {
    let valid = "must be an https origin like https://api.stripe.com (no path, query or credentials)"
    let cases = [
      ("https://user:s3cr3t@stripe.internal", "https://***@stripe.internal"),
      ("https://user:s3/cr3t@stripe.internal:8443", "https://***@stripe.internal:8443"),
      ("https://user:s3?cr#3t@stripe.internal", "https://***@stripe.internal"),
      ("https://user:s3@cr3t@stripe.internal", "https://***@stripe.internal"),
      ("https://user:s3%zzcr3t@stripe.internal", "https://***@stripe.internal"),
      ("http://:s3:cr3t@stripe.internal", "http://***@stripe.internal"),
    ]
    for (apiBase, quoted) in cases {
      #expect(
        problems(Self.yaml(gateway: "gateway:\n  kind: stripe\n  apiBase: \"\(apiBase)\"")) == [
          #"c.yaml:17:12: gateway.apiBase: \#(valid), got "\#(quoted)""#
        ], "\(apiBase)")
    }
  }

  @Test("the key from the environment: set, a secret key, and live only in live mode; never in a message")
  func key() throws {
    var test = Gateway.Stripe()
    test.secretKeyVariable = "K"
    var live = test
    live.mode = .live
    #expect(try test.secretKey(environment: ["K": "sk_test_1"]).get() == "sk_test_1")
    #expect(try test.secretKey(environment: ["K": "rk_test_1"]).get() == "rk_test_1")
    #expect(try live.secretKey(environment: ["K": Self.live("sk", "1")]).get() == Self.live("sk", "1"))
    #expect(test.secretKey(environment: [:]) == .failure(.notSet(variable: "K")))
    #expect(test.secretKey(environment: ["K": "pk_test_1"]) == .failure(.notASecretKey(variable: "K")))
    #expect(test.secretKey(environment: ["K": Self.live("sk", "1")]) == .failure(.liveKeyInTestMode(variable: "K")))
    #expect(live.secretKey(environment: ["K": "rk_test_1"]) == .failure(.testKeyInLiveMode(variable: "K")))
    #expect(
      "\(Gateway.Stripe.KeyProblem.liveKeyInTestMode(variable: "K"))"
        == "K holds a live key, which moves real money: set gateway.mode: live to use it")
    #expect(test.keySummary(environment: [:]) == "K not set")
    #expect(test.keySummary(environment: ["K": "sk_test_1"]) == "K set, a test key")
    #expect(test.keySummary(environment: ["K": Self.live("sk", "1")]) == "K set, a live key, not for test mode: serving would stop")
    #expect(test.keySummary(environment: ["K": "hello"]) == "K set, not a Stripe secret key: serving would stop")
  }
}
