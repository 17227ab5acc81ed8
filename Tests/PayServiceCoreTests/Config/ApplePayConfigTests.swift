import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The `applePay` section: its files, and the start-up checks of certificate against merchant and key.
@Suite("applePay config")
struct ApplePayConfigTests {
  static let file = "\(ApplePayVector.directory)/config.yaml"
  static let other = ApplePayVector.otherMerchantDirectory

  func problems(_ yaml: String) -> [String] {
    do {
      _ = try ConfigLoader.parse(yaml: yaml, file: Self.file)
      return []
    } catch {
      return error.problems.map(\.description)
    }
  }

  @Test("the vector's certificate and key load; maxTokenAgeSeconds defaults to 300; the root to Apple's G3")
  func loads() throws {
    let merchant = try #require(try ApplePayVector.config().applePay)
    #expect(merchant.maxTokenAgeSeconds == 300)
    #expect(merchant.rootCertificate.subject.description == "C=US,O=Apple Inc.,OU=Apple Certification Authority,CN=Apple Root CA - G3")
    // A PKCS#8 key loads as well as SEC1.
    let pkcs8 = try ApplePayVector.config(
      applePay: """
          merchantCertificate: \(Self.other)/merchant_certificate.pem
          merchantPrivateKey: \(Self.other)/merchant_private_key.pkcs8.pem
          maxTokenAgeSeconds: 60
        """)
    #expect(pkcs8.applePay?.maxTokenAgeSeconds == 60)
  }

  @Test("a certificate of another merchant identifier is refused with both identifiers")
  func otherMerchantIdentifier() {
    let yaml = ApplePayVector.configYAML(identifier: "merchant.com.example.acme")
    #expect(
      problems(yaml) == [
        """
        \(Self.file):21:24: applePay.merchantCertificate: belongs to merchant identifier merchant.com.seatgeek.SeatGeek \
        (extension 1.2.840.113635.100.6.32 is f938f4658ca2c1c9c38b8dfcb5dbb2a2245607dde2f114620e8468ef52d208ca), \
        not to merchant.identifier merchant.com.example.acme \
        (SHA-256 3c5ed469e88fc3eb84634acc9dfd2acf44672bea1355db7daec2e62c1e198647)
        """
      ])
  }

  @Test("a key that does not match the certificate, unreadable files and unknown keys are refused")
  func keyMismatchAndFiles() {
    #expect(
      problems(
        ApplePayVector.configYAML(
          applePay: """
              merchantCertificate: merchant_certificate.pem
              merchantPrivateKey: \(Self.other)/merchant_private_key.pem
            """))
        == [
          "\(Self.file):22:23: applePay.merchantPrivateKey: does not match merchantCertificate: it is the private key of another public key"
        ])
    #expect(
      problems(
        ApplePayVector.configYAML(
          applePay: """
              merchantCertificate: missing.pem
              merchantPrivateKey: token.json
              merchantKey: x
              maxTokenAgeSeconds: 0
            """))
        == [
          "\(Self.file):23:3: applePay.merchantKey: unknown key; valid keys here: merchantCertificate, merchantPrivateKey, rootCertificate, maxTokenAgeSeconds, merchantIdentityCertificate, merchantIdentityKey, domains, merchantSession, shippingType, managementURL, billingAgreement, tokenNotificationURL, merchantTokens",
          "\(Self.file):21:24: applePay.merchantCertificate: cannot read \(ApplePayVector.directory)/missing.pem (paths are relative to the config file)",
          "\(Self.file):24:23: applePay.maxTokenAgeSeconds: must be a whole number from 1 to 86400, got \"0\"",
        ])
    #expect(
      problems(
        ApplePayVector.configYAML(
          applePay: """
              merchantCertificate: token.json
              merchantPrivateKey: token.json
            """))
        == [
          "\(Self.file):21:24: applePay.merchantCertificate: is not a PEM X.509 certificate (-----BEGIN CERTIFICATE-----)"
        ])
    #expect(
      problems(
        ApplePayVector.configYAML(
          applePay: """
              merchantCertificate: merchant_certificate.pem
              merchantPrivateKey: AppleRootCA-G3.pem
            """))
        == [
          "\(Self.file):22:23: applePay.merchantPrivateKey: is not a PEM P-256 private key (SEC1 \"EC PRIVATE KEY\" or PKCS#8 \"PRIVATE KEY\")"
        ])
    #expect(
      problems(
        ApplePayVector.configYAML(
          applePay: """
              merchantCertificate: AppleRootCA-G3.pem
              merchantPrivateKey: merchant_private_key.pem
            """)).first?.contains("applePay.merchantCertificate: holds a") == true)
  }

  @Test("check-config's summary shows the certificate's validity, the token age and the root")
  func summary() throws {
    #expect(
      ConfigSummary.text(try ApplePayVector.config(), path: "config.yaml").hasSuffix(
        """
        applePay   EC_v1 tokens, certificate valid 2014-10-26 to 2016-11-24, signed up to 300 s from the clock
          root     C=US,O=Apple Inc.,OU=Apple Certification Authority,CN=Apple Root CA - G3
        request    shippingType shipping
        sessions   not configured: startMerchantSession answers not_configured

        """))
    #expect(
      ConfigSummary.text(TestConfig.load(), path: "config.yaml").hasSuffix(
        "\napplePay   not configured: test tokens only\nrequest    shippingType shipping\n"
          + "sessions   not configured: startMerchantSession answers not_configured\n"))
  }
}
