import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Items Xcode's StoreKit testing signs on the developer's machine: recorded only where the config
/// lists the Xcode environment.
@Suite("App Store: Xcode's StoreKit testing")
struct AppStoreXcodeTests {
  static let bundleId = "com.example.naturelab.backyardbirds.example"

  static func config(environments: [String]) -> Config {
    var config = TestConfig.load()
    config.appStore = AppStoreSettings(
      bundleId: bundleId, appAppleId: nil, environments: environments, roots: [AppStoreSignedDataVerifier.appleRoot],
      products: [
        "pass.premium": AppStoreProduct(productId: "pass.premium", kind: .autoRenewable, entitlement: "premium")
      ])
    return config
  }

  @Test("Xcode's signed transaction, renewal info and app transaction: accepted with Xcode listed, wrong_environment without")
  func xcode() throws {
    let listed = AppStoreSignedDataVerifier(
      roots: [AppStoreSignedDataVerifier.appleRoot], bundleId: Self.bundleId, appAppleId: nil, environments: ["Xcode"])
    let transaction = try listed.verify(try AppStoreSignedDataTests.vector("xcode-signed-transaction"), as: .transaction, now: TestConfig.now)
    #expect(transaction["transactionId"] == .string("0"))
    #expect(transaction["productId"] == .string("pass.premium"))
    // Xcode writes fractions of a millisecond.
    #expect(transaction["expiresDate"] == .number("1700358336049.7297"))
    let renewal = try listed.verify(try AppStoreSignedDataTests.vector("xcode-signed-renewal-info"), as: .renewalInfo, now: TestConfig.now)
    #expect(renewal["environment"] == .string("Xcode"))
    let app = try listed.verify(try AppStoreSignedDataTests.vector("xcode-signed-app-transaction"), as: .appTransaction, now: TestConfig.now)
    #expect(app["bundleId"] == .string(Self.bundleId))
    let unlisted = AppStoreSignedDataVerifier(
      roots: [AppStoreSignedDataVerifier.appleRoot], bundleId: Self.bundleId, appAppleId: nil,
      environments: ["Production", "Sandbox"])
    for (name, kind) in [
      ("xcode-signed-transaction", AppStoreSignedKind.transaction), ("xcode-signed-renewal-info", .renewalInfo),
      ("xcode-signed-app-transaction", .appTransaction),
    ] {
      #expect(
        AppStoreSignedDataTests.cause { () throws(AppStoreVerificationFailure) in
          try unlisted.verify(try! AppStoreSignedDataTests.vector(name), as: kind, now: TestConfig.now)
        } == .wrongEnvironment, "\(name)")
    }
    // Through verifyAppStoreTransaction: recorded with Xcode listed; its subscription expired in 2023.
    let signed = JSONWriter.string(try AppStoreSignedDataTests.vector("xcode-signed-transaction"))
    let accepted = try AppStoreLedgerTests.call(
      VerifyAppStoreTransaction.self, #"{"signedTransaction":\#(signed)}"#,
      try TestConfig.context(config: Self.config(environments: ["Xcode"])))
    #expect(accepted.contains(#""transactionId":"0""#) && accepted.contains(#""expiresDate":"2023-11-19T01:45:36Z""#), "\(accepted)")
    #expect(accepted.contains(#""status":"expired","active":false"#), "\(accepted)")
    #expect(
      try AppStoreLedgerTests.call(
        VerifyAppStoreTransaction.self, #"{"signedTransaction":\#(signed)}"#,
        try TestConfig.context(config: Self.config(environments: ["Sandbox"])))
        == #"{"status":"failed","failureCode":"wrong_environment","message":"signedTransaction: signed in the Xcode environment, which Apple does not sign: accepted only where appStore.environments lists it"}"#
    )
  }
}
