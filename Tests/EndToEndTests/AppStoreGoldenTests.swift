import Foundation
import PayServiceCore
import PayServiceTestSupport
import SwiftASN1
import Testing

/// An app's in-app purchases through the built binary, one process per step with the clock moved
/// forward on one store: coins bought (sent twice) and spent (once, however often asked), a monthly
/// subscription subscribed, renewed (the renewal heard twice), failed to renew into a grace period,
/// recovered (with an older notification arriving after the recovery), refunded; entitlements
/// asked after each step.
///
/// A stepped golden case (Golden/appstore): requests.jsonl and responses.jsonl are written by the
/// run and compared byte for byte, the same bytes from every store backend (re-record with
/// `PAYSERVICE_RECORD_GOLDEN=1`). The signed items are fixed in items.json, signed by a test
/// authority whose root is test-root.der: ECDSA signatures differ each time they are made, so they
/// are made again only with `PAYSERVICE_RECORD_APPSTORE_ITEMS=1` (and the transcript re-recorded).
@Suite("Golden: App Store purchases", .serialized)
struct AppStoreGoldenTests {
  static let folder = GoldenTranscriptTests.goldenRoot.appendingPathComponent("appstore")
  static let config = folder.appendingPathComponent("config.yaml").path
  static let account = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
  static let coins = "com.example.beans.coins100"
  static let pro = "com.example.beans.pro.monthly"
  static let subscription = "2000000000000100"

  static func ms(_ text: String) -> Int { AppStoreShop.ms(text) }

  /// The signed items of the story, by name.
  static func makeItems(_ shop: AppStoreShop) throws -> [String: String] {
    var items: [String: String] = [:]
    items["coins"] = try shop.transaction(
      id: "2000000000000001", product: coins, purchase: ms("2026-12-01T09:59:00Z"), signed: ms("2026-12-01T09:59:01Z"),
      appAccountToken: account)
    items["coins-other-app"] = try shop.transaction(
      id: "2000000000000002", product: coins, purchase: ms("2026-12-01T09:59:00Z"), signed: ms("2026-12-01T09:59:01Z"),
      appAccountToken: account, bundleId: "com.example.other")
    func period(_ id: String, _ start: String, _ end: String, signed: String, revoked: Bool = false) throws -> String {
      try shop.transaction(
        id: id, original: subscription, product: pro, purchase: ms(start), expires: ms(end), signed: ms(signed),
        revocation: revoked ? ms(signed) : nil, revocationReason: revoked ? 0 : nil, appAccountToken: account)
    }
    func renewal(_ signed: String, autoRenew: Bool = true, retry: Bool? = nil, grace: String? = nil) throws -> String {
      try shop.renewal(
        original: subscription, autoRenew: autoRenew, signed: ms(signed), billingRetry: retry, graceUntil: grace.map(ms),
        expirationIntent: retry == true ? 2 : nil)
    }
    func note(_ uuid: String, _ type: String, _ subtype: String?, _ signed: String, _ transaction: String?, _ renewal: String?)
      throws -> String
    {
      try shop.notification(
        uuid: uuid, type: type, subtype: subtype, signed: ms(signed), transaction: transaction, renewal: renewal)
    }
    let first = try period("2000000000000100", "2026-12-05T08:00:00Z", "2027-01-05T08:00:00Z", signed: "2026-12-05T08:00:02Z")
    items["subscribed"] = try note(
      "6a1e0c9f-0b1d-4c7e-9f00-000000000001", "SUBSCRIBED", "INITIAL_BUY", "2026-12-05T08:00:02Z", first,
      try renewal("2026-12-05T08:00:02Z"))
    items["first-period"] = first
    let second = try period("2000000000000101", "2027-01-05T08:00:00Z", "2027-02-05T08:00:00Z", signed: "2027-01-05T08:00:03Z")
    items["renewed"] = try note(
      "6a1e0c9f-0b1d-4c7e-9f00-000000000002", "DID_RENEW", nil, "2027-01-05T08:00:03Z", second,
      try renewal("2027-01-05T08:00:03Z"))
    let secondAgain = try period("2000000000000101", "2027-01-05T08:00:00Z", "2027-02-05T08:00:00Z", signed: "2027-02-05T08:00:04Z")
    items["failed-to-renew"] = try note(
      "6a1e0c9f-0b1d-4c7e-9f00-000000000003", "DID_FAIL_TO_RENEW", "GRACE_PERIOD", "2027-02-05T08:00:04Z", secondAgain,
      try renewal("2027-02-05T08:00:04Z", retry: true, grace: "2027-02-11T08:00:00Z"))
    let secondLate = try period("2000000000000101", "2027-01-05T08:00:00Z", "2027-02-05T08:00:00Z", signed: "2027-02-07T08:00:00Z")
    items["still-failing"] = try note(
      "6a1e0c9f-0b1d-4c7e-9f00-000000000004", "DID_FAIL_TO_RENEW", "GRACE_PERIOD", "2027-02-07T08:00:00Z", secondLate,
      try renewal("2027-02-07T08:00:00Z", retry: true, grace: "2027-02-11T08:00:00Z"))
    let third = try period("2000000000000102", "2027-02-08T10:00:00Z", "2027-03-08T10:00:00Z", signed: "2027-02-08T10:00:01Z")
    items["recovered"] = try note(
      "6a1e0c9f-0b1d-4c7e-9f00-000000000005", "DID_RENEW", "BILLING_RECOVERY", "2027-02-08T10:00:01Z", third,
      try renewal("2027-02-08T10:00:01Z", retry: false))
    let refunded = try period(
      "2000000000000102", "2027-02-08T10:00:00Z", "2027-03-08T10:00:00Z", signed: "2027-02-20T15:00:00Z", revoked: true)
    items["refunded"] = try note(
      "6a1e0c9f-0b1d-4c7e-9f00-000000000006", "REFUND", nil, "2027-02-20T15:00:00Z", refunded,
      try renewal("2027-02-20T15:00:00Z", autoRenew: false))
    items["test"] = try note("6a1e0c9f-0b1d-4c7e-9f00-000000000007", "TEST", nil, "2027-02-21T09:00:00Z", nil, nil)
    return items
  }

  /// items.json and test-root.der: made again with `PAYSERVICE_RECORD_APPSTORE_ITEMS=1`, else read.
  static func items() throws -> [String: String] {
    let file = folder.appendingPathComponent("items.json")
    if ProcessInfo.processInfo.environment["PAYSERVICE_RECORD_APPSTORE_ITEMS"] == "1" {
      let shop = try AppStoreShop()
      let items = try makeItems(shop)
      var writer = JSONWriter()
      writer.beginObject()
      for name in items.keys.sorted() {
        writer.key(name)
        writer.write(items[name]!)
      }
      writer.endObject()
      try Data(writer.bytes + [UInt8(ascii: "\n")]).write(to: file)
      var serializer = DER.Serializer()
      try serializer.serialize(shop.authority.root)
      try Data(serializer.serializedBytes).write(to: folder.appendingPathComponent("test-root.der"))
      return items
    }
    guard case .object(let object) = try JSONParser.parse(String(contentsOf: file, encoding: .utf8)) else {
      throw CocoaError(.fileReadCorruptFile)
    }
    var items: [String: String] = [:]
    for name in object.keys {
      if case .string(let text)? = object[name] { items[name] = text }
    }
    return items
  }

  @Test("coins bought and spent; a subscription subscribed, renewed, in its grace period, recovered, refunded", arguments: StoreBackend.available)
  func story(backend: StoreBackend) throws {
    let items = try Self.items()
    let run = BillingYearGoldenTests.Year(database: try backend.freshDatabase(), config: Self.config, backOffice: false)
    defer { run.finish() }
    func signed(_ name: String) throws -> String { JSONWriter.string(try #require(items[name], "\(name)")) }
    func verify(_ name: String, _ extra: String = "") throws -> JSONValue {
      try run.ask("verifyAppStoreTransaction", #"{"signedTransaction":\#(try signed(name))\#(extra)}"#)
    }
    func notify(_ name: String) throws -> JSONValue {
      try run.ask("processAppStoreNotification", #"{"signedPayload":\#(try signed(name))}"#)
    }
    func entitlements() throws -> JSONValue {
      try run.ask("getEntitlements", #"{"appAccountToken":"\#(Self.account)"}"#)
    }
    func effect(_ answer: JSONValue) -> String? { answer["effect"]?.stringValue ?? answer["failureCode"]?.stringValue }
    func status(_ answer: JSONValue) -> [String] {
      (answer["entitlements"]?.arrayValue ?? []).map { "\($0["entitlement"]?.stringValue ?? "") \($0["status"]?.stringValue ?? "")" }
    }
    func units(_ answer: JSONValue) -> Int? {
      answer["balances"]?.arrayValue?.first?["units"].flatMap { Int($0.compact) }
    }

    // Coins: bought, sent again, spent once however often asked; one from another app refused.
    try run.at("2026-12-01T10:00:00Z")
    let bought = try verify("coins")
    #expect(effect(bought) == "credited")
    #expect(try verify("coins") == bought)
    #expect(effect(try verify("coins-other-app")) == "wrong_bundle")
    let spend = #"{"account":"\#(Self.account)","entitlement":"coins","units":30,"consumptionId":"level-7"}"#
    let spent = try run.ask("consumeUnits", spend)
    #expect(spent["balance"]?["units"] == .number("70"), "\(spent.compact)")
    #expect(try run.ask("consumeUnits", spend) == spent)
    #expect(
      try run.ask("consumeUnits", #"{"account":"\#(Self.account)","entitlement":"coins","units":71,"consumptionId":"level-8"}"#)["failureCode"]
        == .string("insufficient_units"))
    #expect(units(try entitlements()) == 70)

    // The subscription: the app sends the purchase, and Apple's SUBSCRIBED comes too.
    try run.at("2026-12-05T08:01:00Z")
    #expect(effect(try verify("first-period")) == "granted")
    #expect(effect(try notify("subscribed")) == "updated")
    #expect(status(try entitlements()) == ["pro active"])

    // Renewed; the renewal heard twice.
    try run.at("2027-01-05T08:05:00Z")
    let renewed = try notify("renewed")
    #expect(effect(renewed) == "extended")
    #expect(try notify("renewed") == renewed)
    #expect(status(try entitlements()) == ["pro active"])

    // The card fails: billing retry with a grace period.
    try run.at("2027-02-05T09:00:00Z")
    #expect(effect(try notify("failed-to-renew")) == "updated")
    #expect(status(try entitlements()) == ["pro grace_period"])

    // Recovered; then an older notification, delayed, arrives after the recovery.
    try run.at("2027-02-08T10:05:00Z")
    #expect(effect(try notify("recovered")) == "extended")
    #expect(effect(try notify("still-failing")) == "stale")
    #expect(status(try entitlements()) == ["pro active"])
    // A shopper-facing process names an account by its appAccountToken only: a transaction id, which
    // anyone may come to know, is -32602 there (the back office may use it).
    #expect(
      try run.send("getEntitlements", #"{"originalTransactionId":"\#(Self.subscription)"}"#)["error"]?["data"]?["errors"]?[0]?["path"]
        == .string("originalTransactionId"))

    // Refunded: the entitlement is revoked. Apple's TEST notification is acknowledged.
    try run.at("2027-02-20T15:05:00Z")
    #expect(effect(try notify("refunded")) == "revoked")
    #expect(status(try entitlements()) == ["pro revoked"])
    try run.at("2027-02-21T09:00:00Z")
    #expect(effect(try notify("test")) == "none")
    #expect(status(try entitlements()) == ["pro revoked"])
    #expect(units(try entitlements()) == 70)
    run.finish()

    try GoldenTranscriptTests.checkStepped("appstore", requests: run.requests, responses: run.responses, backend: backend)
  }
}
