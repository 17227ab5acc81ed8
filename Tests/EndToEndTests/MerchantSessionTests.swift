import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// startMerchantSession through the built binary against the Apple session test server: the
/// merchant identity's checks at start, what check-config flags, refused URLs that never connect,
/// and Apple's failures as failure results.
@Suite("Merchant sessions")
struct MerchantSessionTests {
  static let merchant = "merchant.com.example.coffee"
  static let now = "2026-11-21T12:00:00Z"
  static var pinned: Date { Date(timeIntervalSince1970: TimeInterval(RFC3339.parse(now)!)) }

  /// A web shop config whose merchant identity is `identity`, talking to `server`.
  struct Setup {
    let server: AppleSessionTestServer
    let directory: URL
    let config: String

    init(
      registrations: [String: [String]] = [MerchantSessionTests.merchant: ["coffee.example.com"]],
      identity: (TestMerchantIdentityAuthority) throws -> TestMerchantIdentity = {
        try $0.issue(merchantIdentifier: MerchantSessionTests.merchant, now: MerchantSessionTests.pinned)
      },
      domains: String = "[coffee.example.com]", requestTimeout: Int = 5
    ) throws {
      let pinned = RFC3339.parse(MerchantSessionTests.now)!
      server = try AppleSessionTestServer(registrations: registrations, now: { pinned })
      directory = TestPaths.temporaryDirectory()
      let files = try identity(server.identityAuthority).write(to: directory)
      let yaml = try String(contentsOfFile: TestPaths.path("examples/web/shop.yaml"), encoding: .utf8)
        .replacingOccurrences(
          of: "\napplePay:\n",
          with: """

            applePay:
              merchantIdentityCertificate: \(files.certificate)
              merchantIdentityKey: \(files.key)
              domains: \(domains)
              merchantSession:
                additionalHosts: ["\(server.additionalHost)"]
                trustRoots: \(try server.writeServerCA(to: directory))
                requestTimeoutSeconds: \(requestTimeout)

            """)
      config = directory.appendingPathComponent("config.yaml").path
      try yaml.write(toFile: config, atomically: true, encoding: .utf8)
    }

    func run(_ requests: [String], now: String = MerchantSessionTests.now) throws -> ProcessResult {
      try PayserviceProcess.run(
        ["--config", config, "--database", ":memory:", "--now", now], stdin: Data((requests.joined(separator: "\n") + "\n").utf8))
    }

    static func request(_ id: Int, url: String, domain: String = "coffee.example.com") -> String {
      #"{"jsonrpc":"2.0","id":\#(id),"method":"startMerchantSession","params":{"validationURL":"\#(url)","domain":"\#(domain)"}}"#
    }
  }

  @Test("an expired, not yet valid or another merchant's identity certificate stops the start (exit 2) with the reason")
  func identityProblems() throws {
    let expired = try Setup(identity: {
      try $0.issue(
        merchantIdentifier: Self.merchant, notValidBefore: Self.pinned.addingTimeInterval(-400 * 86_400),
        notValidAfter: Self.pinned.addingTimeInterval(-86_400))
    })
    defer { expired.server.shutdown() }
    let result = try expired.run([])
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(
      result.stderr
        == "payservice: applePay.merchantIdentityCertificate: expired at 2026-11-20T12:00:00Z; merchant sessions would fail. Renew it in the Apple developer account\n"
    )
    let early = try expired.run([], now: "2025-01-01T00:00:00Z")
    #expect(early.status == 2)
    #expect(
      early.stderr
        == "payservice: applePay.merchantIdentityCertificate: not valid before 2025-10-17T12:00:00Z; check the clock or use the current certificate\n"
    )

    let other = try Setup(identity: { try $0.issue(merchantIdentifier: "merchant.com.example.other", now: Self.pinned) })
    defer { other.server.shutdown() }
    let mismatch = try other.run([])
    #expect(mismatch.status == 2)
    #expect(mismatch.stderr.hasPrefix("payservice: invalid config:\n\(other.config):"))
    #expect(mismatch.stderr.contains("applePay.merchantIdentityCertificate: belongs to merchant identifier merchant.com.example.other"))
  }

  @Test("a certificate expiring within 30 days starts with a warning; check-config flags the test host and trust roots")
  func warnings() throws {
    // Issued now, by the real clock: a session's TLS and check-config read the certificate at the
    // real time, whatever the service clock says.
    let now = Int64(Date().timeIntervalSince1970)
    let day = { (seconds: Int64) in String(RFC3339.format(seconds).prefix(10)) }
    let setup = try Setup(identity: {
      try $0.issue(merchantIdentifier: Self.merchant, now: Date(timeIntervalSince1970: TimeInterval(now)), days: 10)
    })
    defer { setup.server.shutdown() }
    let result = try setup.run([Setup.request(1, url: setup.server.validationURL)], now: RFC3339.format(now))
    #expect(result.status == 0)
    #expect(result.stderr.hasPrefix("payservice: warning: applePay.merchantIdentityCertificate expires in 10 days (\(RFC3339.format(now + 10 * 86_400))): renew it in the Apple developer account\n"))
    #expect(result.stdoutText.contains(#""status":"success","merchantSession":{"#))

    let check = try PayserviceProcess.run(["check-config", "--config", setup.config])
    #expect(check.status == 0)
    let lines = check.stdoutText.split(separator: "\n").filter { $0.hasPrefix("sessions") || $0.hasPrefix("  WARNING") }
    #expect(
      lines == [
        "sessions   merchant identity valid \(day(now - 86_400)) to \(day(now + 10 * 86_400)), domains coffee.example.com, connect 5 s, request 5 s",
        "  WARNING  validation URLs may also name \(setup.server.additionalHost) (applePay.merchantSession.additionalHosts): a test server or proxy, not Apple",
        "  WARNING  Apple's gateway is trusted through applePay.merchantSession.trustRoots, not the system roots",
      ])
  }

  @Test("validation URLs off the allow-list and unlisted domains are invalid params, and no connection is made")
  func refused() throws {
    let setup = try Setup()
    defer { setup.server.shutdown() }
    let port = setup.server.port
    let urls = [
      "https://127.0.0.1:\(port)/paymentservices/startSession",
      "http://localhost:\(port)/paymentservices/startSession",
      "https://localhost:\(port + 1)/paymentservices/startSession",
      "https://localhost/paymentservices/startSession",
      "https://apple-pay-gateway.apple.com@localhost:\(port)/paymentservices/startSession",
      "https://apple-pay-gateway.apple.com.localhost:\(port)/paymentservices/startSession",
      "https://[::1]:\(port)/paymentservices/startSession",
      "https://2130706433:\(port)/paymentservices/startSession",
      "https://localhost:\(port)/paymentservices/startSession?x=1",
      "https://evil.example.com/paymentservices/startSession",
    ]
    var requests = urls.enumerated().map { Setup.request($0.offset, url: $0.element) }
    requests.append(Setup.request(99, url: setup.server.validationURL, domain: "evil.example.com"))
    let result = try setup.run(requests)
    #expect(result.status == 0)
    let lines = result.stdoutText.split(separator: "\n")
    #expect(lines.count == requests.count)
    for line in lines {
      let response = try JSONParser.parse(String(line))
      #expect(response["error"]?["code"]?.compact == "-32602", "\(line)")
    }
    #expect(
      lines.last
        == #"{"jsonrpc":"2.0","id":99,"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"domain","message":"\"evil.example.com\" is not one of applePay.domains (coffee.example.com); register and verify the domain with Apple, then list it there"}]}}}"#
    )
    #expect(setup.server.connectionsAccepted == 0)
  }

  @Test("Apple's refusals and a hang are failure results naming the cause, within the timeout")
  func failures() throws {
    // The domain is in the config but not registered with "Apple".
    let setup = try Setup(
      registrations: [Self.merchant: ["coffee.example.com"]], domains: "[coffee.example.com, tea.example.com]",
      requestTimeout: 1)
    defer { setup.server.shutdown() }
    setup.server.inject(.hang)
    let started = Date()
    let result = try setup.run([
      Setup.request(1, url: setup.server.validationURL),
      Setup.request(2, url: setup.server.validationURL, domain: "tea.example.com"),
    ])
    #expect(Date().timeIntervalSince(started) < 8)
    let lines = result.stdoutText.split(separator: "\n").map(String.init)
    #expect(lines.count == 2)
    #expect(lines.first?.hasPrefix(#"{"jsonrpc":"2.0","id":1,"result":{"status":"failure","code":"timeout","message":"#) == true)
    #expect(lines.last?.hasPrefix(#"{"jsonrpc":"2.0","id":2,"result":{"status":"failure","code":"domain_not_registered","message":"#) == true)
    #expect(result.stderr.contains(#"method="startMerchantSession""#))
    // Nothing of the identity's key or certificate in any output.
    let keyText = try String(contentsOfFile: setup.directory.appendingPathComponent("merchant-identity.key").path, encoding: .utf8)
    let keyLine = keyText.split(separator: "\n")[1]
    #expect(!result.stdoutText.contains(keyLine) && !result.stderr.contains(keyLine))
    #expect(!result.stdoutText.contains("BEGIN") && !result.stderr.contains("BEGIN"))
  }
}
