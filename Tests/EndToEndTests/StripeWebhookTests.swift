import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// processStripeEvent through the binary where the golden transcript cannot show it: a process with
/// no webhook secret, and what check-config says of the secret (never the secret itself).
@Suite("Stripe webhooks")
struct StripeWebhookTests {
  static let golden = GoldenTranscriptTests.goldenRoot
  static let stripeConfig = golden.appendingPathComponent("stripe-events/config.yaml").path
  static let params = #"{"payload":"{}","signature":"t=1795262400,v1=00"}"#

  @Test("without a webhook secret every delivery is refused as not_configured, saying why")
  func notConfigured() throws {
    let sandbox = try PayserviceProcess.run(
      ["call", "processStripeEvent", Self.params, "--config", Self.golden.appendingPathComponent("config.yaml").path,
       "--database", ":memory:"])
    #expect(sandbox.status == 0)
    #expect(
      sandbox.stdoutText
        == #"{"status":"failed","failureCode":"not_configured","message":"this payservice's gateway is not Stripe: it takes no Stripe webhooks"}"#
        + "\n")
    var environment = ProcessInfo.processInfo.environment
    environment["STRIPE_SECRET_KEY"] = "sk_test_golden"
    environment["STRIPE_WEBHOOK_SECRET"] = nil
    let unset = try PayserviceProcess.run(
      ["call", "processStripeEvent", Self.params, "--config", Self.stripeConfig, "--database", ":memory:"],
      environment: environment)
    #expect(
      unset.stdoutText
        == #"{"status":"failed","failureCode":"not_configured","message":"the environment variable STRIPE_WEBHOOK_SECRET (gateway.webhookSecretVariable) is not set"}"#
        + "\n")
  }

  @Test("check-config says whether the webhook secret is set and how many, never what")
  func checkConfig() throws {
    var environment = ProcessInfo.processInfo.environment
    environment["STRIPE_SECRET_KEY"] = "sk_test_golden"
    environment["STRIPE_WEBHOOK_SECRET"] = nil
    let unset = try PayserviceProcess.run(["check-config", "--config", Self.stripeConfig], environment: environment)
    #expect(unset.status == 0)
    #expect(
      unset.stdoutText.split(separator: "\n").filter { $0.hasPrefix("  webhooks") }
        == ["  webhooks STRIPE_WEBHOOK_SECRET not set: processStripeEvent answers not_configured"])
    environment["STRIPE_WEBHOOK_SECRET"] = "whsec_golden_old, whsec_golden_new"
    let set = try PayserviceProcess.run(["check-config", "--config", Self.stripeConfig], environment: environment)
    #expect(
      set.stdoutText.split(separator: "\n").filter { $0.hasPrefix("  webhooks") }
        == ["  webhooks STRIPE_WEBHOOK_SECRET set, 2 secrets"])
    #expect(!set.stdoutText.contains("whsec_") && !set.stderr.contains("whsec_"))
  }
}
