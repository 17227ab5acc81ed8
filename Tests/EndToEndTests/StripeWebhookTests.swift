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

/// A webhook through the running binary (the server's overlapping path): a payment left
/// `processing` at Stripe is settled in the same process when Stripe's event arrives.
@Suite("Stripe webhooks settle a pending order", .serialized)
struct StripeWebhookOrderTests {
  @Test("payment_intent.succeeded resumes the processing order in the running process: paid, once; the event again sends nothing")
  func processingOrderResumed() throws {
    var shop = try StripeCrashTests.Shop(backend: .sqlite)
    defer { shop.server.shutdown() }
    let line = try shop.authorize(paymentData: "tok_processing")
    let token = try #require(try JSONParser.parse(line)["params"]?["chargeToken"]?.stringValue)
    let running = try RunningPayservice(shop.arguments, environment: shop.fixture.environment)
    defer { running.finish() }
    let first = try JSONParser.parse(try running.ask(line))
    #expect(first["result"]?["failureCode"] == .string("payment_processing"), "\(first.compact)")
    let orderId = try shop.backend.open(shop.database).identifiers.orderId(token: token)
    #expect(shop.server.settleProcessing(paymentIntent: "pi_test000001", succeeded: true))
    let intent =
      #"{"id":"pi_test000001","object":"payment_intent","status":"succeeded","metadata":{"order_id":"\#(orderId)"}}"#
    let event = #"{"jsonrpc":"2.0","id":"e1","method":"processStripeEvent","params":\#(StripeFixture.webhook(id: "evt_pi1", type: "payment_intent.succeeded", object: intent, now: StripeWebhookOrderTests.now))}"#
    let answer =
      #"{"jsonrpc":"2.0","id":"e1","result":{"status":"succeeded","eventId":"evt_pi1","type":"payment_intent.succeeded","livemode":false,"created":"2026-11-21T12:04:55Z","orderId":"\#(orderId)","effect":"order_resumed","recordedAt":"2026-11-21T12:05:00Z"}}"#
    #expect(try running.ask(event) == answer)
    let order = try JSONParser.parse(try running.ask(#"{"jsonrpc":"2.0","id":"o","method":"getOrder","params":{"orderId":"\#(orderId)"}}"#))
    #expect(order["result"]?["order"]?["status"] == .string("paid"), "\(order.compact)")
    let requests = shop.server.requests.count
    #expect(try running.ask(event) == answer)
    #expect(shop.server.requests.count == requests)
    #expect(shop.server.paymentIntentCount == 1)
  }

  /// The Shop's pinned clock (`--now 2026-11-21T12:05:00Z`).
  static let now = RFC3339.parse("2026-11-21T12:05:00Z")!
}
