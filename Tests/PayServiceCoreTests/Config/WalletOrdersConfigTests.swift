import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// `walletOrders`: the order details alone, the package keys (together, the certificate checked
/// against the order type and its intermediate), and `apns`.
@Suite("Wallet orders config")
struct WalletOrdersConfigTests {
  func problems(_ yaml: String) -> [String] {
    ConfigLoaderTests().problems(yaml)
  }

  static func file(_ name: String) -> String { WalletOrderFixtures.path(name) }

  static func yaml(_ walletOrders: String, merchantURL: Bool = true) -> String {
    ConfigLoaderTests.minimal.replacingOccurrences(
      of: "  displayName: Tiny\n", with: "  displayName: Tiny\n" + (merchantURL ? "  url: https://tiny.example.com\n" : ""))
      + "\nwalletOrders:\n  orderTypeIdentifier: order.com.example.coffee\n  webServiceURL: https://tiny.example.com/wallet\n"
      + walletOrders
  }

  static let package = """
      merchantIdentifier: merchant.com.example.tiny
      orderManagementURL: https://tiny.example.com/orders/{orderId}
      certificate: \(file("order_type_certificate.pem"))
      privateKey: \(file("order_type_key.pem"))
      intermediateCertificate: \(file("wwdr_certificate.pem"))

    """

  @Test("the package keys and apns are read: the signer checked, the merchant's url and name, APNs' base by environment")
  func read() throws {
    let config = try ConfigLoader.parse(
      yaml: Self.yaml(
        Self.package + "  apns: {keyFile: \(Self.file("apns_key.p8")), keyId: ABC123DEFG, teamId: TEAM123456, environment: development}\n"),
      file: "c.yaml")
    let orders = try #require(config.walletOrders)
    let package = try #require(orders.package)
    #expect(package.merchantIdentifier == "merchant.com.example.tiny")
    #expect(package.displayName == "Tiny" && package.merchantURL == "https://tiny.example.com")
    #expect(package.orderManagementURL(orderId: "ord_1") == "https://tiny.example.com/orders/ord_1")
    #expect(package.signer.orderTypeIdentifier == "order.com.example.coffee")
    #expect(package.signer.validity(at: RFC3339.parse("2026-12-03T00:00:00Z")!) == .valid)
    #expect(package.signer.validity(at: RFC3339.parse("2046-01-01T00:00:00Z")!) == .expired(since: "2045-12-31T00:00:00Z"))
    let apns = try #require(orders.apns)
    #expect(apns.apiBase == "https://api.sandbox.push.apple.com" && apns.keyId == "ABC123DEFG" && apns.teamId == "TEAM123456")
    // The two-key form still gives order details, and serves no packages.
    let details = try ConfigLoader.parse(yaml: Self.yaml(""), file: "c.yaml")
    #expect(details.walletOrders?.package == nil && details.walletOrders?.apns == nil)
  }

  @Test("problems with their places: a missing package key, no url, another order type's certificate, a foreign intermediate, apns without a package")
  func problems() {
    #expect(
      problems(Self.yaml("  merchantIdentifier: merchant.com.example.tiny\n", merchantURL: false)) == [
        "c.yaml:18:3: walletOrders.url: is required (or merchant.url): Wallet links the order to the merchant's website",
        "c.yaml:18:3: walletOrders.orderManagementURL: is required",
        "c.yaml:18:3: walletOrders.certificate: is required",
        "c.yaml:18:3: walletOrders.privateKey: is required",
        "c.yaml:18:3: walletOrders.intermediateCertificate: is required",
      ])
    let otherType = Self.yaml(Self.package).replacingOccurrences(
      of: "orderTypeIdentifier: order.com.example.coffee", with: "orderTypeIdentifier: order.com.example.tea")
    #expect(
      problems(otherType) == [
        "c.yaml:23:16: walletOrders.certificate: names order type identifier order.com.example.coffee, not order.com.example.tea; use the Order Type ID certificate Apple issued for order.com.example.tea"
      ])
    let foreign = Self.yaml(Self.package).replacingOccurrences(
      of: Self.file("wwdr_certificate.pem"), with: Self.file("root_certificate.pem"))
    #expect(
      problems(foreign) == [
        "c.yaml:25:28: walletOrders.intermediateCertificate: did not issue the certificate (its issuer is O=payservice tests,OU=G4,CN=payservice Test WWDR Intermediate); use the WWDR intermediate that did"
      ])
    let wrongKey = Self.yaml(Self.package).replacingOccurrences(
      of: Self.file("order_type_key.pem"), with: Self.file("apns_key.p8"))
    #expect(
      problems(wrongKey) == [
        "c.yaml:24:15: walletOrders.privateKey: does not match certificate: it is the private key of another public key"
      ])
    #expect(
      problems(Self.yaml("  apns: {keyFile: x.p8, keyId: ABC123DEFG, teamId: TEAM123456, environment: production}\n")) == [
        "c.yaml:21:9: walletOrders.apns: needs the order package keys (walletOrders.merchantIdentifier, walletOrders.url, walletOrders.orderManagementURL, walletOrders.certificate, walletOrders.privateKey, walletOrders.intermediateCertificate): a push makes Wallet fetch the order"
      ])
    #expect(
      problems(
        Self.yaml(
          Self.package + "  apns: {keyFile: \(Self.file("order_type_key.pem")), keyId: abc, teamId: TEAM123456, environment: staging}\n"
        )) == [
          "c.yaml:26:19: walletOrders.apns.keyFile: is not a PEM P-256 private key: use the .p8 file of the APNs key from your Apple Developer account, unchanged",
          "c.yaml:26:\(28 + Self.file("order_type_key.pem").count): walletOrders.apns.keyId: must be the APNs key's id (10 upper-case letters and digits, like 2X9R4HXF34), got \"abc\"",
          "c.yaml:26:\(66 + Self.file("order_type_key.pem").count): walletOrders.apns.environment: must be production or development, got \"staging\"",
        ])
  }
}
