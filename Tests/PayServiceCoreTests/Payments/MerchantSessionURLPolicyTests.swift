@testable import PayServiceCore
import Testing

/// Which validation URLs merchant validation may POST to: Apple's gateways on 443, the merchant's
/// additional hosts exactly, and nothing a lenient parser could read another way.
@Suite("Merchant session URL policy")
struct MerchantSessionURLPolicyTests {
  static let policy = MerchantSessionURLPolicy(additionalHosts: [])

  static func endpoint(_ url: String, _ policy: MerchantSessionURLPolicy = policy) -> MerchantSessionEndpoint? {
    if case .success(let endpoint) = policy.check(url) { return endpoint }
    return nil
  }

  static func problem(_ url: String, _ policy: MerchantSessionURLPolicy = policy) -> String? {
    if case .failure(let problem) = policy.check(url) { return problem.message }
    return nil
  }

  @Test("Apple's published hosts: production, sandbox, the nc/pr pods and their -dr twins, China")
  func hostList() {
    let hosts = MerchantSessionHosts.apple
    #expect(hosts.count == 36)
    #expect(Set(hosts).count == hosts.count)
    for host in [
      "apple-pay-gateway.apple.com", "apple-pay-gateway-cert.apple.com", "cn-apple-pay-gateway.apple.com",
      "cn-apple-pay-gateway-cert.apple.com", "apple-pay-gateway-nc-pod1.apple.com", "apple-pay-gateway-nc-pod5-dr.apple.com",
      "apple-pay-gateway-pr-pod3.apple.com", "apple-pay-gateway-pr-pod5-dr.apple.com", "cn-apple-pay-gateway-sh-pod1.apple.com",
      "cn-apple-pay-gateway-sh-pod3-dr.apple.com", "cn-apple-pay-gateway-tj-pod2.apple.com", "cn-apple-pay-gateway-tj-pod3-dr.apple.com",
    ] {
      #expect(hosts.contains(host), "\(host)")
    }
  }

  @Test("every Apple host is accepted, with or without :443, with the path kept")
  func everyAppleHost() {
    for host in MerchantSessionHosts.apple {
      #expect(
        Self.endpoint("https://\(host)/paymentservices/startSession")
          == MerchantSessionEndpoint(host: host, port: 443, path: "/paymentservices/startSession"))
      #expect(
        Self.endpoint("https://\(host):443/paymentservices/paymentSession")
          == MerchantSessionEndpoint(host: host, port: 443, path: "/paymentservices/paymentSession"))
    }
    let endpoint = Self.endpoint("HTTPS://Apple-Pay-Gateway.Apple.COM/paymentservices/startSession")
    #expect(endpoint?.host == "apple-pay-gateway.apple.com")
    #expect(endpoint?.url == "https://apple-pay-gateway.apple.com/paymentservices/startSession")
  }

  @Test("other hosts, suffix and prefix tricks are refused, naming the host and what is valid")
  func otherHosts() {
    let expected = """
      names host evil.com, which is not an Apple Pay gateway for merchant validation (such as \
      apple-pay-gateway.apple.com, apple-pay-gateway-cert.apple.com or cn-apple-pay-gateway.apple.com, \
      see https://developer.apple.com/documentation/applepayontheweb/setting-up-your-server) nor one of the \
      additional hosts
      """
    #expect(Self.problem("https://evil.com/paymentservices/startSession") == expected)
    for host in [
      "apple-pay-gateway.apple.com.evil.com", "evilapple-pay-gateway.apple.com", "evil.apple-pay-gateway.apple.com",
      "apple-pay-gateway.apple.co", "apple.com", "apple-pay-gateway-nc-pod6.apple.com", "localhost",
    ] {
      let message = Self.problem("https://\(host)/paymentservices/startSession")
      #expect(message?.hasPrefix("names host \(host), which is not an Apple Pay gateway") == true, "\(host): \(message ?? "accepted")")
    }
  }

  @Test("only https")
  func scheme() {
    #expect(
      Self.problem("http://apple-pay-gateway.apple.com/paymentservices/startSession")
        == "uses scheme http; only https is allowed; expected the validationURL Apple Pay JS gave onvalidatemerchant, such as https://apple-pay-gateway.apple.com/paymentservices/paymentSession"
    )
    #expect(Self.problem("ftp://apple-pay-gateway.apple.com/x")?.hasPrefix("uses scheme ftp; only https is allowed") == true)
    #expect(Self.problem("://apple-pay-gateway.apple.com/x")?.hasPrefix("uses no scheme; only https is allowed") == true)
    #expect(Self.problem("//apple-pay-gateway.apple.com/x")?.hasPrefix("is not an absolute https URL") == true)
    #expect(Self.problem("apple-pay-gateway.apple.com/paymentservices/startSession")?.hasPrefix("is not an absolute https URL") == true)
    #expect(Self.problem("https:apple-pay-gateway.apple.com/x")?.hasPrefix("is not an absolute https URL") == true)
  }

  @Test("IP literals in any notation are refused")
  func ipLiterals() {
    let ip = "names an IP address; only DNS names such as apple-pay-gateway.apple.com are allowed"
    for host in ["17.171.78.7", "127.0.0.1", "2130706433", "0x7f.1", "0x7f000001", "017.0.0.1", "1.2.3.0x4", "0x"] {
      #expect(Self.problem("https://\(host)/paymentservices/startSession") == ip, "\(host)")
    }
    #expect(
      Self.problem("https://[::1]/paymentservices/startSession")
        == "names an IP address ([…]); only DNS names such as apple-pay-gateway.apple.com are allowed")
    #expect(
      Self.problem("https://[::ffff:17.171.78.7]:443/paymentservices/startSession")
        == "names an IP address ([…]); only DNS names such as apple-pay-gateway.apple.com are allowed")
  }

  @Test("userinfo is refused, before or after the Apple host")
  func userinfo() {
    let message = "has userinfo (…@) before its host; a validation URL names only the gateway's host"
    #expect(Self.problem("https://apple-pay-gateway.apple.com@evil.com/paymentservices/startSession") == message)
    #expect(Self.problem("https://evil.com@apple-pay-gateway.apple.com/") == message)
    #expect(Self.problem("https://user:pass@apple-pay-gateway.apple.com/paymentservices/startSession") == message)
  }

  @Test("ports other than 443 are refused for Apple's hosts; malformed ports for any host")
  func ports() {
    #expect(
      Self.problem("https://apple-pay-gateway.apple.com:8443/paymentservices/startSession")
        == "names port 8443 of apple-pay-gateway.apple.com; Apple's gateways are reached on port 443 only")
    let malformed = "has a port that is not a number from 1 to 65535"
    for port in ["", "0", "65536", "443443", "+443", "-1", "0x1bb", "44a"] {
      #expect(Self.problem("https://apple-pay-gateway.apple.com:\(port)/paymentservices/startSession") == malformed, "\(port)")
    }
  }

  @Test("query, fragment, percent-escapes, backslashes, whitespace, non-ASCII and a trailing dot are refused")
  func characters() {
    let base = "https://apple-pay-gateway.apple.com/paymentservices/startSession"
    #expect(Self.problem(base + "?x=1")?.hasPrefix("has a query (?…)") == true)
    #expect(Self.problem(base + "?")?.hasPrefix("has a query (?…)") == true)
    #expect(Self.problem(base + "#top")?.hasPrefix("has a fragment (#…)") == true)
    #expect(Self.problem("https://apple-pay-gateway%2eapple.com/paymentservices/startSession")?.hasPrefix("contains a percent-escape") == true)
    #expect(Self.problem("https://apple-pay-gateway.apple.com/payment%73ervices/startSession")?.hasPrefix("contains a percent-escape") == true)
    #expect(Self.problem("https://apple-pay-gateway.apple.com\\@evil.com/")?.hasPrefix("contains a backslash") == true)
    #expect(Self.problem("https://apple-pay-gateway.apple.com\\paymentservices")?.hasPrefix("contains a backslash") == true)
    let hidden = "contains whitespace, a control character or non-ASCII text"
    for url in [
      " https://apple-pay-gateway.apple.com/x", "https://apple-pay-gateway.apple.com/x ", "https://apple-pay-gateway.apple.com\t/x",
      "https://apple-pay-gateway.apple.com\n/x", "https://apple-pay-gateway.apple.com\u{0}/x", "https://apple-pay-gateway.аpple.com/x",
      "https://apple-pay-gateway.apple.com\u{FF0F}x", "https://apple-pay-gateway.apple.com/x\u{7F}",
    ] {
      #expect(Self.problem(url)?.hasPrefix(hidden) == true, "\(url.debugDescription)")
    }
    #expect(
      Self.problem("https://apple-pay-gateway.apple.com./paymentservices/startSession")
        == "has a trailing dot in its host; give the host without it")
    #expect(
      Self.problem("https://apple-pay_gateway.apple.com/x")
        == "has a host with characters a DNS name does not have (letters, digits, - and . only)")
    #expect(Self.problem("https://apple-pay-gateway..apple.com/x") == "has a host with an empty or overlong label")
  }

  @Test("empty, too long, no host, no path")
  func shapes() {
    #expect(
      Self.problem("")
        == "is empty; expected the validationURL Apple Pay JS gave onvalidatemerchant, such as https://apple-pay-gateway.apple.com/paymentservices/paymentSession"
    )
    let long = "https://apple-pay-gateway.apple.com/" + String(repeating: "a", count: 2048 - 36)
    #expect(long.utf8.count == 2048)
    #expect(Self.endpoint(long) != nil)
    #expect(Self.problem(long + "a")?.hasPrefix("is 2049 bytes long, more than 2048;") == true)
    #expect(Self.problem("https:///paymentservices/startSession") == "has no host; expected a DNS name such as apple-pay-gateway.apple.com")
    #expect(Self.problem("https://:443/x") == "has no host; expected a DNS name such as apple-pay-gateway.apple.com")
    #expect(
      Self.problem("https://apple-pay-gateway.apple.com")
        == "has no path; expected the validationURL Apple Pay JS gave onvalidatemerchant, such as https://apple-pay-gateway.apple.com/paymentservices/paymentSession"
    )
    #expect(Self.endpoint("https://apple-pay-gateway.apple.com/")?.path == "/")
  }

  @Test("additional hosts match exactly, with their port (443 when none is given)")
  func additionalHosts() {
    let policy = MerchantSessionURLPolicy(additionalHosts: ["localhost:8443", "Proxy.Example.com", "bad host", "x:99999"])
    #expect(policy.additionalHosts == ["localhost:8443", "Proxy.Example.com", "bad host", "x:99999"])
    #expect(
      Self.endpoint("https://localhost:8443/paymentservices/startSession", policy)
        == MerchantSessionEndpoint(host: "localhost", port: 8443, path: "/paymentservices/startSession"))
    #expect(
      Self.endpoint("https://localhost:8443/paymentservices/startSession", policy)?.url
        == "https://localhost:8443/paymentservices/startSession")
    #expect(
      Self.problem("https://localhost/paymentservices/startSession", policy)
        == "names port 443 of localhost; the additional hosts allow localhost:8443")
    #expect(
      Self.problem("https://localhost:9443/paymentservices/startSession", policy)
        == "names port 9443 of localhost; the additional hosts allow localhost:8443")
    #expect(
      Self.endpoint("https://proxy.example.com/session", policy)
        == MerchantSessionEndpoint(host: "proxy.example.com", port: 443, path: "/session"))
    #expect(Self.endpoint("https://PROXY.example.com:443/session", policy)?.host == "proxy.example.com")
    #expect(Self.problem("https://proxy.example.com:8443/session", policy) == "names port 8443 of proxy.example.com; the additional hosts allow proxy.example.com:443")
    #expect(Self.problem("https://sub.proxy.example.com/session", policy)?.hasPrefix("names host sub.proxy.example.com, which is not") == true)
    #expect(Self.problem("https://localhost:8443@evil.com/", policy)?.hasPrefix("has userinfo") == true)
    // Apple's hosts stay on 443 even when an additional entry names one of them with another port.
    let odd = MerchantSessionURLPolicy(additionalHosts: ["apple-pay-gateway.apple.com:8443"])
    #expect(Self.problem("https://apple-pay-gateway.apple.com:8443/x", odd)?.hasPrefix("names port 8443 of apple-pay-gateway.apple.com") == true)
  }

  @Test("an additional host entry is checked like a URL's host")
  func additionalHostProblems() {
    #expect(MerchantSessionURLPolicy.problem(additionalHost: "localhost:8443") == nil)
    #expect(MerchantSessionURLPolicy.problem(additionalHost: "proxy.example.com") == nil)
    #expect(MerchantSessionURLPolicy.problem(additionalHost: "127.0.0.1:8443") == "names an IP address; only DNS names such as apple-pay-gateway.apple.com are allowed")
    #expect(MerchantSessionURLPolicy.problem(additionalHost: "localhost:") == "has a port that is not a number from 1 to 65535")
    #expect(MerchantSessionURLPolicy.problem(additionalHost: "a@b") == "has userinfo (…@) before its host; a validation URL names only the gateway's host")
    #expect(MerchantSessionURLPolicy.problem(additionalHost: "") == "has no host; expected a DNS name such as apple-pay-gateway.apple.com")
  }
}
