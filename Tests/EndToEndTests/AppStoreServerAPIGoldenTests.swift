import Crypto
import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// The App Store Server API through the built binary and the App Store Server API test server (TLS,
/// bearer tokens signed with Apple's test in-app purchase key): a customer's history fetched page
/// by page (Production first, then Sandbox, where Apple has it), the notifications Apple could not
/// deliver recovered once (and listed), an original StoreKit app receipt looked up, and the API's refusals.
///
/// A stepped golden case (Golden/appstore-api): the config is written for the test server's ports;
/// requests.jsonl and responses.jsonl are written by the run and compared byte for byte on every
/// store backend (re-record with `PAYSERVICE_RECORD_GOLDEN=1`). The signed items are the appstore
/// case's (Golden/appstore/items.json).
@Suite("Golden: the App Store Server API", .serialized)
struct AppStoreServerAPIGoldenTests {
  static let keyFile = TestPaths.path("Tests/PayServiceAppStoreTests/Fixtures/testSigningKey.p8")
  static let keyId = "2X9R4HXF34"
  static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"

  /// The signed transaction a notification carries.
  static func nested(_ notification: String) throws -> String {
    let part = String(notification.split(separator: ".")[1])
    var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    text += String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
    let payload = try JSONParser.parse(String(decoding: try #require(Data(base64Encoded: text)), as: UTF8.self))
    return try #require(payload["data"]?["signedTransactionInfo"]?.stringValue)
  }

  /// The appstore case's config (or `base`, a config's text ending in its `appStore` section) with an
  /// `api` section reaching `server`.
  static func config(_ server: AppStoreServerTestServer, in directory: URL, base: String? = nil) throws -> String {
    let trust = directory.appendingPathComponent("test-server-ca.pem")
    try server.caPEM.write(to: trust, atomically: true, encoding: .utf8)
    let base = try base
      ?? String(contentsOfFile: AppStoreGoldenTests.config, encoding: .utf8).replacingOccurrences(
        of: "rootCertificates: [test-root.der]",
        with: "rootCertificates: [\(AppStoreGoldenTests.folder.appendingPathComponent("test-root.der").path)]")
    let config = base + """
        api:
          keyFile: \(keyFile)
          keyId: \(keyId)
          issuerId: \(issuerId)
          productionURL: \(server.productionURL)
          sandboxURL: \(server.sandboxURL)
          trustRoots: \(trust.path)
          requestTimeoutSeconds: 5
          maxRetries: 1

      """
    let file = directory.appendingPathComponent("config.yaml")
    try config.write(to: file, atomically: true, encoding: .utf8)
    return file.path
  }

  /// The App Store Server API test server, taking bearer tokens signed with Apple's test key.
  static func server(historyPageSize: Int) throws -> AppStoreServerTestServer {
    try AppStoreServerTestServer(
      publicKey: try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOfFile: keyFile, encoding: .utf8))
        .publicKey, keyId: keyId, issuerId: issuerId, bundleId: AppStoreShop.bundleId, historyPageSize: historyPageSize)
  }

  @Test("history synced page by page, notifications recovered once, a receipt looked up, the API's refusals", arguments: StoreBackend.available)
  func api(backend: StoreBackend) throws {
    let items = try AppStoreGoldenTests.items()
    func item(_ name: String) throws -> String { try #require(items[name], "\(name)") }
    let server = try Self.server(historyPageSize: 2)
    defer { server.shutdown() }
    let subscription = AppStoreGoldenTests.subscription
    server.addTransactions(
      [
        ("2000000000000100", subscription, try item("first-period")),
        ("2000000000000101", subscription, try Self.nested(try item("renewed"))),
        ("2000000000000102", subscription, try Self.nested(try item("recovered"))),
      ], environment: .sandbox)
    server.addNotification(
      signedPayload: try item("renewed"), signedDate: Int64(AppStoreShop.ms("2027-01-05T08:00:03Z")), delivered: true,
      environment: .sandbox)
    server.addNotification(
      signedPayload: try item("failed-to-renew"), signedDate: Int64(AppStoreShop.ms("2027-02-05T08:00:04Z")),
      delivered: false, environment: .sandbox)
    server.addNotification(
      signedPayload: try item("recovered"), signedDate: Int64(AppStoreShop.ms("2027-02-08T10:00:01Z")), delivered: false,
      environment: .sandbox)
    let directory = TestPaths.temporaryDirectory()
    let run = BillingYearGoldenTests.Year(
      database: try backend.freshDatabase(), config: try Self.config(server, in: directory), backOffice: true)
    defer { run.finish() }
    func effects(_ answer: JSONValue, _ list: String = "applied") -> [String] {
      (answer[list]?.arrayValue ?? []).map { $0["effect"]?.stringValue ?? "" }
    }

    try run.at("2027-02-10T00:00:00Z")
    // Not in Production: Sandbox, two pages of two.
    let synced = try run.ask("syncAppStoreHistory", #"{"transactionId":"2000000000000101"}"#)
    #expect(synced["environment"] == .string("Sandbox"), "\(synced.compact)")
    #expect(synced["pages"] == .number("2"))
    // The first period had expired by then: recorded, no access from it alone (updated).
    #expect(effects(synced) == ["updated", "extended", "extended"])
    #expect(synced["entitlements"]?["entitlements"]?.arrayValue?.first?["status"] == .string("active"))
    // Again: each transaction answered from the journal as the first time, nothing changed.
    let resynced = try run.ask("syncAppStoreHistory", #"{"transactionId":"2000000000000100"}"#)
    #expect(resynced == synced)
    let fetched = server.requests.map { "\($0.environment.rawValue) \($0.status)" }
    #expect(fetched == ["Production 404", "Sandbox 200", "Sandbox 200", "Production 404", "Sandbox 200", "Sandbox 200"])
    #expect(server.requests.allSatisfy { $0.tokenValid })

    // Apple could not deliver two notifications: recovered once, known the second time.
    let recovered = try run.ask("recoverAppStoreNotifications", #"{"since":"2027-01-01T00:00:00Z"}"#)
    #expect(recovered["recorded"]?.arrayValue?.map { $0["notificationType"]?.stringValue ?? "" } == ["DID_FAIL_TO_RENEW", "DID_RENEW"], "\(recovered.compact)")
    #expect(recovered["known"] == .number("0"))
    let again = try run.ask("recoverAppStoreNotifications", #"{"since":"2027-01-01T00:00:00Z","onlyFailures":false}"#)
    #expect(again["recorded"]?.arrayValue?.map { $0["notificationType"]?.stringValue ?? "" } == ["DID_RENEW"])
    #expect(again["known"] == .number("2"))

    // An app on original StoreKit sends its receipt: its transaction is looked up.
    let receipt = AppReceiptBuilder.receipt(
      bundleId: AppStoreShop.bundleId,
      purchases: [
        AppReceipt.InAppPurchase(
          transactionId: "2000000000000101", originalTransactionId: subscription, productId: AppStoreGoldenTests.pro,
          quantity: 1)
      ])
    let looked = try run.ask("verifyAppStoreTransaction", #"{"appReceipt":"\#(receipt)"}"#)
    #expect(looked["transaction"]?["transactionId"] == .string("2000000000000101"), "\(looked.compact)")
    #expect(
      try run.ask("verifyAppStoreTransaction", #"{"appReceipt":"bm90IGEgcmVjZWlwdA=="}"#)["failureCode"]
        == .string("invalid_receipt"))

    // The API's refusals: an unknown transaction, a token refused, a server down.
    #expect(try run.ask("syncAppStoreHistory", #"{"transactionId":"999"}"#)["failureCode"] == .string("not_found"))
    server.inject(.unauthorized)
    #expect(try run.ask("syncAppStoreHistory", #"{"transactionId":"2000000000000100"}"#)["failureCode"] == .string("unauthorized"))
    server.inject(.serviceUnavailable, times: 2)
    let down = try run.ask("recoverAppStoreNotifications", #"{"since":"2027-01-01T00:00:00Z"}"#)
    #expect(down["failureCode"] == .string("unavailable"), "\(down.compact)")
    #expect(try run.ask("getEntitlements", #"{"originalTransactionId":"\#(subscription)"}"#)["entitlements"]?.arrayValue?.count == 1)

    // The notifications heard, newest first, a page of two; then one type.
    let first = try run.ask("listAppStoreNotifications", #"{"limit":2}"#)
    #expect(first["notifications"]?.arrayValue?.map { $0["notificationType"]?.stringValue ?? "" } == ["DID_RENEW", "DID_FAIL_TO_RENEW"])
    let cursor = try #require(first["nextCursor"]?.stringValue)
    let second = try run.ask("listAppStoreNotifications", #"{"limit":2,"cursor":"\#(cursor)"}"#)
    #expect(second["notifications"]?.arrayValue?.map { $0["signedDate"]?.stringValue ?? "" } == ["2027-01-05T08:00:03Z"])
    #expect(second["nextCursor"] == .null)
    let renewals = try run.ask("listAppStoreNotifications", #"{"type":"DID_RENEW"}"#)
    #expect(renewals["notifications"]?.arrayValue?.count == 2)
    run.finish()

    try GoldenTranscriptTests.checkStepped("appstore-api", requests: run.requests, responses: run.responses, backend: backend)
  }
}
