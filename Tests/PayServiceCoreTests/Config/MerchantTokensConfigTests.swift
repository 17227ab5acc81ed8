import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// `applePay.merchantTokens`: Apple's Merchant Token Management API, reached with the merchant
/// identity certificate.
@Suite("applePay.merchantTokens config")
struct MerchantTokensConfigTests {
  static let identity = try! TestMerchantIdentityAuthority().issue(merchantIdentifier: "merchant.com.example.tiny")

  /// The minimal config with an `applePay` section: the merchant identity (when `withIdentity`)
  /// and `merchantTokens` as given; the files in a directory of its own.
  static func yaml(_ merchantTokens: String, withIdentity: Bool = true) throws -> (yaml: String, directory: URL) {
    let directory = TestPaths.temporaryDirectory()
    let files = try identity.write(to: directory)
    try identity.caPEM.write(to: directory.appendingPathComponent("roots.pem"), atomically: true, encoding: .utf8)
    try "not a certificate\n".write(to: directory.appendingPathComponent("empty.pem"), atomically: true, encoding: .utf8)
    let identityKeys =
      withIdentity
      ? "  merchantIdentityCertificate: \(files.certificate)\n  merchantIdentityKey: \(files.key)\n  domains: [tiny.example.com]\n"
      : "  managementURL: https://tiny.example.com/account\n"
    return (ConfigLoaderTests.minimal + "\napplePay:\n" + identityKeys + merchantTokens, directory)
  }

  static func load(_ merchantTokens: String, withIdentity: Bool = true) throws -> Result<Config, ConfigError> {
    let (yaml, directory) = try yaml(merchantTokens, withIdentity: withIdentity)
    do {
      return .success(try ConfigLoader.parse(yaml: yaml, file: directory.appendingPathComponent("c.yaml").path))
    } catch {
      return .failure(error)
    }
  }

  static func problems(_ merchantTokens: String, withIdentity: Bool = true) throws -> [String] {
    guard case .failure(let error) = try load(merchantTokens, withIdentity: withIdentity) else { return [] }
    return error.problems.map { "\($0.line.map(String.init) ?? "?"):\($0.column.map(String.init) ?? "?") \($0.path): \($0.message)" }
  }

  @Test("apiBase defaults to Apple's gateway and the system roots; both can be set; the identity is the merchant session's")
  func read() throws {
    let plain = try Self.load("  merchantTokens: {}\n").get()
    let defaults = try #require(plain.merchantTokens)
    #expect(defaults.apiBase == "https://apple-pay-gateway.apple.com")
    #expect(defaults.trustRootsPEM == nil)
    #expect(defaults.identity.merchantIdentifier == "merchant.com.example.tiny")
    #expect(defaults.identity.certificate == plain.merchantSession?.identity.certificate)

    let set = try Self.load("  merchantTokens:\n    apiBase: https://127.0.0.1:8443/\n    trustRoots: roots.pem\n").get()
    let tokens = try #require(set.merchantTokens)
    #expect(tokens.apiBase == "https://127.0.0.1:8443")
    #expect(tokens.trustRootsPEM == Self.identity.caPEM)
    #expect(
      ConfigSummary.text(set, path: "c.yaml").contains(
        """
        tokens     merchant token events and unlinks at https://127.0.0.1:8443, with the merchant identity
          WARNING  Apple's token API is trusted through applePay.merchantTokens.trustRoots, not the system roots
        """))
    #expect(try Self.load("").get().merchantTokens == nil)
  }

  @Test("without the merchant identity, with an apiBase that is not an https origin, or roots that hold no certificate: the place and what is valid")
  func problems() throws {
    #expect(
      try Self.problems("  merchantTokens: {}\n", withIdentity: false) == [
        "19:19 applePay.merchantTokens: calls Apple with the merchant identity certificate: set merchantIdentityCertificate, merchantIdentityKey and domains too"
      ])
    #expect(
      try Self.problems("  merchantTokens: {apiBase: \"http://apple-pay-gateway.apple.com\"}\n") == [
        "21:29 applePay.merchantTokens.apiBase: must be an https origin like https://apple-pay-gateway.apple.com (no path, query or credentials), got \"http://apple-pay-gateway.apple.com\""
      ])
    #expect(
      try Self.problems("  merchantTokens: {apiBase: \"https://apple-pay-gateway.apple.com/paymentservices\"}\n") == [
        "21:29 applePay.merchantTokens.apiBase: must be an https origin like https://apple-pay-gateway.apple.com (no path, query or credentials), got \"https://apple-pay-gateway.apple.com/paymentservices\""
      ])
    #expect(
      try Self.problems("  merchantTokens: {trustRoots: empty.pem}\n") == [
        "21:32 applePay.merchantTokens.trustRoots: holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
      ])
    #expect(
      try Self.problems("  merchantTokens: {apiBase: https://a.example, retries: 3}\n") == [
        "21:48 applePay.merchantTokens.retries: unknown key; valid keys here: apiBase, trustRoots"
      ])
  }
}
