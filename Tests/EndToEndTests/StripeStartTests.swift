import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Starting with `gateway.kind: stripe`: the key's checks at start, and check-config's summary.
@Suite("Stripe start-up")
struct StripeStartTests {
  @Test("no key, a publishable key, a live key in test mode: exit 2 naming the variable, never the key")
  func keyProblems() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let cases: [(String?, String)] = [
      (nil, "payservice: gateway.kind is stripe but the environment variable STRIPE_SECRET_KEY (gateway.secretKeyVariable) is not set\n"),
      ("pk_test_Zq81publishable", "payservice: STRIPE_SECRET_KEY does not hold a Stripe secret key (sk_… or rk_…; a publishable pk_… key cannot charge)\n"),
      // Assembled here: no tracked file holds anything shaped like a live key.
      ("sk" + "_live_" + "Zq81livelivelive", "payservice: STRIPE_SECRET_KEY holds a live key, which moves real money: set gateway.mode: live to use it\n"),
    ]
    for (key, message) in cases {
      var environment = ProcessInfo.processInfo.environment
      environment["STRIPE_SECRET_KEY"] = key
      for arguments in [
        ["--config", fixture.configPath, "--database", ":memory:"],
        ["call", "listProducts", "--config", fixture.configPath, "--database", ":memory:"],
      ] {
        let result = try PayserviceProcess.run(
          arguments, stdin: Data(#"{"jsonrpc":"2.0","id":1,"method":"listProducts"}"#.utf8), environment: environment)
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == message)
        #expect(!result.stderr.contains("Zq81"))
      }
    }
  }

  @Test("check-config says whether the key is set and which kind, never the key")
  func checkConfig() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    let result = try PayserviceProcess.run(["check-config", "--config", fixture.configPath], environment: fixture.environment)
    #expect(result.status == 0)
    let lines = result.stdoutText.split(separator: "\n").filter { $0.hasPrefix("gateway") || $0.hasPrefix("  stripe") }
    #expect(
      lines == [
        "gateway    stripe, charge tokens valid 3600 s, capture automatic",
        "  stripe   test mode, \(server.baseURL), key: STRIPE_SECRET_KEY set, a test key",
      ])
    #expect(!result.stdoutText.contains(server.secretKey))
  }

  @Test("check-config fails as serve would when the key is missing or does not fit the mode, naming why")
  func checkConfigFailsLikeServe() throws {
    let server = try StripeTestServer()
    defer { server.shutdown() }
    let fixture = try StripeFixture(server: server)
    var environment = fixture.environment
    environment["STRIPE_SECRET_KEY"] = nil
    let check = try PayserviceProcess.run(["check-config", "--config", fixture.configPath], environment: environment)
    #expect(check.status == 2)
    #expect(
      check.stderr
        == "payservice: serve would not start:\n  gateway.kind is stripe but the environment variable STRIPE_SECRET_KEY (gateway.secretKeyVariable) is not set\n")
    #expect(check.stdoutText.contains("key: STRIPE_SECRET_KEY not set"))
    let serve = try PayserviceProcess.run(["--config", fixture.configPath, "--database", ":memory:"], environment: environment)
    #expect(serve.status == 2)
    #expect(
      serve.stderr
        == "payservice: gateway.kind is stripe but the environment variable STRIPE_SECRET_KEY (gateway.secretKeyVariable) is not set\n")
  }
}
