import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// `payservice pending resolve` through the binary, as a timer runs it: a charge whose answer was
/// lost a day ago (too old for the start-up sweep to send again) is looked up at Stripe and settled,
/// exit 0; with Stripe unreachable, what is left pending makes it exit 1.
@Suite("payservice pending resolve", .serialized)
struct PendingResolveCommandTests {
  @Test("a day-old lost charge looked up and settled (exit 0); Stripe down: left pending (exit 1); bad options: exit 64")
  func command() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    server.setSingleUseTokens(false)
    let fixture = try StripeFixture(server: server, requestTimeoutSeconds: 1)
    let database = try StoreBackend.sqlite.freshDatabase()
    let common = ["--config", fixture.configPath, "--database", database]
    func lostCharge() throws -> (key: String, orderId: String) {
      let session = try StripeBooksGoldenTests.Session(
        common + ["--now", StripeBooksGoldenTests.now, "--quiet"], environment: fixture.environment)
      defer { session.running.finish() }
      server.inject(.resetAfterExecuting, on: .createPaymentIntent)
      let placed = try session.order("tok_visa").result
      #expect(placed["failureCode"] == .string("gateway_unavailable"), "\(placed.compact)")
      let entry = try #require(try StoreBackend.sqlite.open(database).pendingOperations().last)
      return (entry.key, try #require(entry.subject))
    }
    let (key, orderId) = try lostCharge()
    let resolve = ["pending", "resolve", "--older-than", "60"] + common + ["--now", "2026-11-22T13:00:00Z"]
    let settled = try PayserviceProcess.run(resolve, environment: fixture.environment)
    #expect(settled.status == 0, "\(settled.stderr)")
    #expect(
      settled.stdoutText
        == #"{"createdBy":"2026-11-22T12:00:00Z","items":[{"kind":"order","key":"\#(key)","orderId":"\#(orderId)","createdAt":"2026-11-21T12:00:00Z","outcome":"settled","answer":"succeeded"}],"settled":1,"released":0,"pending":0,"toCheck":0,"cursor":null}"#
        + "\n")
    #expect(
      settled.stderr.contains("payservice pending resolve: 1 call, 1 entry looked up: 1 settled, 0 released, 0 pending, 0 to check; "),
      "\(settled.stderr)")
    #expect(settled.stderr.hasSuffix(" s; done\n"), "\(settled.stderr)")
    #expect(try StoreBackend.sqlite.open(database).order(id: orderId)?.status == .paid)
    #expect(server.paymentIntentCount == 1)

    let second = try lostCharge().key
    server.shutdown()
    let down = try PayserviceProcess.run(resolve, environment: fixture.environment)
    #expect(down.status == 1, "\(down.stderr)")
    let result = try JSONParser.parse(down.stdoutText)
    #expect(result["items"]?[0]?["key"] == .string(second))
    #expect(result["items"]?[0]?["outcome"] == .string("pending"), "\(down.stdoutText)")
    #expect(result["pending"] == .number("1"))
    #expect(try StoreBackend.sqlite.open(database).pendingOperations().map(\.key) == [second])

    let bad = try PayserviceProcess.run(["pending", "resolve", "--older-than", "4"] + common)
    #expect(bad.status == 64)
    #expect(bad.stderr.contains("--older-than must be 5 to 43200 minutes"), "\(bad.stderr)")
  }
}
