import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Items the App Store did not sign as the config expects: refused with the named cause, and
/// nothing granted.
@Suite("App Store refusals")
struct AppStoreRefusalTests {
  static let account = "5d0c1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f"

  static func refusal(_ signed: String, _ context: ServiceContext) throws -> String {
    try AppStoreLedgerTests.call(
      VerifyAppStoreTransaction.self, #"{"signedTransaction":\#(JSONWriter.string(signed))}"#, context)
  }

  /// `jws` with one byte changed: of its signature (part 2), or of its payload's JSON text (part 1:
  /// the first `from` in it becomes `to`, so that the payload stays JSON).
  static func tamper(_ jws: String, part: Int, offset: Int, from: String = "1", to: String = "2") -> String {
    var parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    if part == 1 {
      var text = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
      text += String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
      var payload = String(decoding: Data(base64Encoded: text)!, as: UTF8.self)
      let range = payload.range(of: from, range: payload.index(payload.startIndex, offsetBy: offset)..<payload.endIndex)!
      payload.replaceSubrange(range, with: to)
      parts[1] = AppStoreTestAuthority.base64URL(Array(payload.utf8))
    } else {
      var bytes = Array(parts[2].utf8)
      bytes[offset] = bytes[offset] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
      parts[2] = String(decoding: bytes, as: UTF8.self)
    }
    return parts.joined(separator: ".")
  }

  @Test("tampering, another root, a leaf or intermediate without Apple's marker, another bundle or environment, an unknown product: each refused by name, nothing granted", arguments: StoreBackend.available)
  func refused(_ backend: StoreBackend) throws {
    let shop = try AppStoreShop()
    let context = try TestConfig.context(config: shop.config(environments: ["Sandbox"]), backend: backend)
    func item(
      _ shop: AppStoreShop, product: String = "com.example.beans.darkmode", bundleId: String = AppStoreShop.bundleId,
      environment: String = "Sandbox"
    ) throws -> String {
      try shop.transaction(
        id: "4000000000000001", product: product, purchase: AppStoreShop.ms("2026-11-20T10:00:00Z"),
        signed: AppStoreShop.ms("2026-11-20T10:00:01Z"), appAccountToken: Self.account, environment: environment,
        bundleId: bundleId)
    }
    let good = try item(shop)
    let cases: [(String, String)] = [
      (Self.tamper(good, part: 1, offset: 40), "invalid_signature"),
      (Self.tamper(good, part: 2, offset: 10), "invalid_signature"),
      (try item(try AppStoreShop()), "invalid_certificate"),
      (try item(try AppStoreShop(authority: AppStoreTestAuthority(leafMarker: false))), "invalid_certificate"),
      (try item(try AppStoreShop(authority: AppStoreTestAuthority(intermediateMarker: false))), "invalid_certificate"),
      (try item(shop, bundleId: "com.example.other"), "wrong_bundle"),
      (try item(shop, environment: "Production"), "wrong_environment"),
      (try item(shop, environment: "Xcode"), "wrong_environment"),
      (try item(shop, product: "com.example.beans.unknown"), "unknown_product"),
      ("not.a-jws", "invalid_format"),
      (good.split(separator: ".").prefix(2).joined(separator: "."), "invalid_format"),
    ]
    for (signed, cause) in cases {
      let answer = try Self.refusal(signed, context)
      // Verification failures name the member; an unknown product names the product.
      let message = cause == "unknown_product" ? "product com.example.beans.unknown is not in appStore.products" : "signedTransaction: "
      #expect(answer.hasPrefix(#"{"status":"failed","failureCode":"\#(cause)","message":"\#(message)"#), "\(cause): \(answer)")
    }
    #expect(
      try AppStoreLedgerTests.entitlements(context, account: Self.account)
        == #"{"account":"5d0c1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f","asOf":"2026-11-21T12:00:00Z","entitlements":[],"balances":[]}"#
    )
    // The untampered item is granted.
    #expect(try Self.refusal(good, context).contains(#""effect":"granted""#))
    #expect(
      try AppStoreLedgerTests.call(
        ProcessAppStoreNotification.self,
        #"{"signedPayload":\#(JSONWriter.string(Self.tamper(try shop.notification(uuid: "n-1", type: "TEST", signed: AppStoreShop.ms("2026-11-21T00:00:00Z")), part: 1, offset: 20)))}"#,
        context)
        == #"{"status":"failed","failureCode":"invalid_signature","message":"signedPayload: the signature does not verify with the leaf certificate's key (payload or signature altered)"}"#
    )
  }

  @Test("a notification whose nested transaction is signed by another chain is refused whole")
  func nested() throws {
    let shop = try AppStoreShop()
    let stranger = try AppStoreShop()
    let context = try TestConfig.context(config: shop.config(), backOffice: true)
    let transaction = try stranger.transaction(
      id: "4000000000000002", product: "com.example.beans.darkmode", purchase: AppStoreShop.ms("2026-11-20T10:00:00Z"),
      signed: AppStoreShop.ms("2026-11-20T10:00:01Z"))
    let notification = try shop.notification(
      uuid: "n-2", type: "ONE_TIME_CHARGE", signed: AppStoreShop.ms("2026-11-20T10:00:02Z"), transaction: transaction)
    let answer = try AppStoreLedgerTests.call(
      ProcessAppStoreNotification.self, #"{"signedPayload":\#(JSONWriter.string(notification))}"#, context)
    #expect(answer.hasPrefix(#"{"status":"failed","failureCode":"invalid_certificate","message":"signedPayload.data.signedTransactionInfo: the certificates do not chain to a configured root"#))
    #expect(
      try AppStoreLedgerTests.call(GetEntitlements.self, #"{"originalTransactionId":"4000000000000002"}"#, context)
        == #"{"account":"4000000000000002","asOf":"2026-11-21T12:00:00Z","entitlements":[],"balances":[]}"#)
  }
}
