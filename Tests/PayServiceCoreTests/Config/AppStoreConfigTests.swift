import Crypto
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// `appStore:`: the app, its environments and roots, its products and the Server API key.
@Suite("App Store config")
struct AppStoreConfigTests {
  func problems(_ yaml: String) -> [String] {
    ConfigLoaderTests().problems(ConfigLoaderTests.minimal + "\n" + yaml)
  }

  @Test("a section is read with its defaults: Production and Sandbox, Apple Root CA - G3, no API")
  func read() throws {
    let config = try ConfigLoader.parse(
      yaml: ConfigLoaderTests.minimal + """

        appStore:
          bundleId: com.example.tiny
          appAppleId: 1234567890
          products:
            - {productId: com.example.tiny.coins, type: consumable, entitlement: coins, units: 100}
            - {productId: com.example.tiny.pro, type: autoRenewable, entitlement: pro}
            - {productId: com.example.tiny.pass, type: nonRenewing, entitlement: pass, durationDays: 30}
        """)
    let appStore = try #require(config.appStore)
    #expect(appStore.bundleId == "com.example.tiny")
    #expect(appStore.appAppleId == 1_234_567_890)
    #expect(appStore.environments == ["Production", "Sandbox"])
    #expect(appStore.roots == [AppStoreSignedDataVerifier.appleRoot])
    #expect(appStore.api == nil)
    #expect(
      appStore.products.values.sorted { $0.productId < $1.productId } == [
        AppStoreProduct(productId: "com.example.tiny.coins", kind: .consumable, entitlement: "coins", units: 100),
        AppStoreProduct(productId: "com.example.tiny.pass", kind: .nonRenewing, entitlement: "pass", durationDays: 30),
        AppStoreProduct(productId: "com.example.tiny.pro", kind: .autoRenewable, entitlement: "pro"),
      ])
  }

  @Test("each problem is named with its place and what is valid")
  func problems() {
    #expect(
      problems(
        """
        appStore:
          bundleId: "com example"
          environments: [Sandbox, Staging]
          products:
            - {productId: a, type: consumable, entitlement: coins}
            - {productId: b, type: subscription, entitlement: pro}
            - {productId: c, type: nonConsumable, entitlement: unlock, units: 5}
            - {productId: d, type: nonRenewing, entitlement: pass}
            - {productId: a, type: nonConsumable, entitlement: "two words"}
          api: {keyFile: missing.p8, keyId: abc, issuerId: nope}
        """) == [
          #"c.yaml:18:13: appStore.bundleId: must be a bundle id like com.example.app (letters, digits, dots, hyphens), got "com example""#,
          #"c.yaml:19:27: appStore.environments[1]: must be one of Production, Sandbox, Xcode, LocalTesting, got "Staging""#,
          "c.yaml:21:7: appStore.products[0].units: is required",
          #"c.yaml:22:28: appStore.products[1].type: must be consumable, nonConsumable, autoRenewable, nonRenewing, got "subscription""#,
          "c.yaml:23:71: appStore.products[2].units: only a consumable credits units; a nonConsumable grants its entitlement",
          "c.yaml:24:7: appStore.products[3].durationDays: is required",
          #"c.yaml:25:19: appStore.products[4].productId: "a" is listed twice"#,
          #"c.yaml:25:56: appStore.products[4].entitlement: must be a name matching [A-Za-z0-9._-]{1,64}, got "two words""#,
          "c.yaml:26:18: appStore.api.keyFile: cannot read missing.p8 (paths are relative to the config file)",
          #"c.yaml:26:37: appStore.api.keyId: must be the key's id from App Store Connect (upper-case letters and digits, like 2X9R4HXF34), got "abc""#,
          #"c.yaml:26:52: appStore.api.issuerId: must be the issuer id from App Store Connect's Keys page (a UUID), got "nope""#,
        ])
    #expect(
      problems(
        """
        appStore:
          bundleId: com.example.tiny
          products: [{productId: a, type: nonConsumable, entitlement: unlock}]
        """) == [
          "c.yaml:18:3: appStore.appAppleId: is required when Production is accepted (environments): the App Store's id of the app, from App Store Connect"
        ])
  }

  @Test("the key file must be a P-256 PKCS#8 key, and is never quoted")
  func keyFile() throws {
    let directory = TestPaths.temporaryDirectory()
    let p384 = directory.appendingPathComponent("p384.p8")
    try P384.Signing.PrivateKey().pemRepresentation.write(to: p384, atomically: true, encoding: .utf8)
    let certificate = directory.appendingPathComponent("cert.pem")
    try "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".write(to: certificate, atomically: true, encoding: .utf8)
    let good = TestPaths.path("Tests/PayServiceAppStoreTests/Fixtures/testSigningKey.p8")
    func api(_ file: String) -> String {
      """
      appStore:
        bundleId: com.example.tiny
        environments: [Sandbox]
        products: [{productId: a, type: nonConsumable, entitlement: unlock}]
        api: {keyFile: \(file), keyId: 2X9R4HXF34, issuerId: 57246542-96fe-1a63-e053-0824d011072a}
      """
    }
    #expect(problems(api(good)) == [])
    #expect(
      problems(api(p384.path)) == [
        "c.yaml:21:18: appStore.api.keyFile: is not a P-256 (ES256) private key: App Store Connect's in-app purchase keys are; download the .p8 again"
      ])
    #expect(
      problems(api(certificate.path)) == [
        "c.yaml:21:18: appStore.api.keyFile: holds no PKCS#8 key (-----BEGIN PRIVATE KEY-----), as App Store Connect's .p8 files do"
      ])
    let config = try ConfigLoader.parse(yaml: ConfigLoaderTests.minimal + "\n" + api(good))
    #expect(config.appStore?.api?.keyId == "2X9R4HXF34")
    #expect(config.appStore?.api?.issuerId == "57246542-96fe-1a63-e053-0824d011072a")
  }
}
