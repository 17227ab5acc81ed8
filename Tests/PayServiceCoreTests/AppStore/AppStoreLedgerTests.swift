import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// In-app purchases recorded, granted and spent through the App Store methods, on each backend.
@Suite("App Store ledger")
struct AppStoreLedgerTests {
  static let account = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
  static let coins = "com.example.beans.coins100"
  static let pro = "com.example.beans.pro.monthly"

  /// Calls `method` with `params` (JSON text) and answers its result as JSON text.
  static func call<M: RPCMethod>(_ method: M.Type, _ params: String, _ context: ServiceContext) throws -> String {
    var writer = JSONWriter()
    _ = try M.call(try JSONParser.parse(params), context: context, into: &writer)
    return String(decoding: writer.bytes, as: UTF8.self)
  }

  static func string(_ text: String) -> String { JSONWriter.string(text) }

  static func entitlements(_ context: ServiceContext, account: String = account) throws -> String {
    try call(GetEntitlements.self, #"{"appAccountToken":"\#(account)"}"#, context)
  }

  static func at(_ context: ServiceContext, _ time: String) -> ServiceContext {
    ServiceContext(
      config: context.config, storeSource: context.storeSource, clock: ServiceClock(pinned: RFC3339.parse(time)!),
      backOffice: context.backOffice)
  }

  @Test("a consumable credits its units once however often it is sent, is spent once, and a refund takes its units back", arguments: StoreBackend.available)
  func consumable(_ backend: StoreBackend) throws {
    let shop = try AppStoreShop()
    let context = try TestConfig.context(config: shop.config(), backend: backend)
    let signed = try shop.transaction(
      id: "2000000000000001", product: Self.coins, purchase: AppStoreShop.ms("2026-11-21T10:00:00Z"),
      signed: AppStoreShop.ms("2026-11-21T10:00:01Z"), appAccountToken: Self.account)
    let params = #"{"signedTransaction":\#(Self.string(signed))}"#
    let first = try Self.call(VerifyAppStoreTransaction.self, params, context)
    #expect(
      first
        == #"{"status":"succeeded","transaction":{"transactionId":"2000000000000001","originalTransactionId":"2000000000000001","productId":"com.example.beans.coins100","type":"consumable","entitlement":"coins","units":100,"quantity":1,"environment":"Sandbox","purchaseDate":"2026-11-21T10:00:00Z","appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138","signedDate":"2026-11-21T10:00:01Z"},"effect":"credited","entitlements":{"account":"7e3fb20b-4cdb-47cc-936d-99d65f608138","asOf":"2026-11-21T12:00:00Z","entitlements":[],"balances":[{"entitlement":"coins","units":100,"purchased":100,"refunded":0,"consumed":0}]}}"#
    )
    // Sent again, later: the journal's answer, and nothing more credited.
    #expect(try Self.call(VerifyAppStoreTransaction.self, params, Self.at(context, "2026-11-22T00:00:00Z")) == first)
    let spend = #"{"account":"\#(Self.account)","entitlement":"coins","units":30,"consumptionId":"level-7"}"#
    let spent = try Self.call(ConsumeUnits.self, spend, context)
    #expect(
      spent
        == #"{"status":"succeeded","consumptionId":"level-7","account":"7e3fb20b-4cdb-47cc-936d-99d65f608138","entitlement":"coins","units":30,"consumedAt":"2026-11-21T12:00:00Z","balance":{"entitlement":"coins","units":70,"purchased":100,"refunded":0,"consumed":30}}"#
    )
    #expect(try Self.call(ConsumeUnits.self, spend, context) == spent)
    #expect(throws: ServiceError.idempotencyKeyConflict("consumptionId")) {
      try Self.call(ConsumeUnits.self, spend.replacingOccurrences(of: "30", with: "31"), context)
    }
    let tooMany = #"{"account":"\#(Self.account)","entitlement":"coins","units":71,"consumptionId":"level-8"}"#
    #expect(
      try Self.call(ConsumeUnits.self, tooMany, context)
        == #"{"status":"failed","failureCode":"insufficient_units","message":"the balance of coins is 70, less than the 71 asked for: nothing was spent","balance":{"entitlement":"coins","units":70,"purchased":100,"refunded":0,"consumed":30}}"#
    )
    let other = #"{"account":"\#(Self.account)","entitlement":"gems","units":1,"consumptionId":"g-1"}"#
    #expect(
      try Self.call(ConsumeUnits.self, other, context)
        == #"{"status":"failed","failureCode":"unknown_entitlement","message":"no consumable product in appStore.products credits gems; those credited: coins"}"#
    )
    // Refunded: a REFUND notification carries the transaction with its revocationDate.
    let refunded = try shop.transaction(
      id: "2000000000000001", product: Self.coins, purchase: AppStoreShop.ms("2026-11-21T10:00:00Z"),
      signed: AppStoreShop.ms("2026-11-21T11:00:00Z"), revocation: AppStoreShop.ms("2026-11-21T11:00:00Z"),
      revocationReason: 0, appAccountToken: Self.account)
    let refund = try shop.notification(
      uuid: "a1b2c3d4-0000-4000-8000-000000000001", type: "REFUND", signed: AppStoreShop.ms("2026-11-21T11:00:00Z"),
      transaction: refunded)
    let heard = try Self.call(
      ProcessAppStoreNotification.self, #"{"signedPayload":\#(Self.string(refund))}"#, context)
    #expect(
      heard
        == #"{"status":"succeeded","notificationUUID":"a1b2c3d4-0000-4000-8000-000000000001","notificationType":"REFUND","environment":"Sandbox","signedDate":"2026-11-21T11:00:00Z","originalTransactionId":"2000000000000001","transactionId":"2000000000000001","account":"7e3fb20b-4cdb-47cc-936d-99d65f608138","effect":"debited","recordedAt":"2026-11-21T12:00:00Z"}"#
    )
    #expect(
      try Self.call(ProcessAppStoreNotification.self, #"{"signedPayload":\#(Self.string(refund))}"#, context) == heard)
    #expect(
      try Self.entitlements(context)
        == #"{"account":"7e3fb20b-4cdb-47cc-936d-99d65f608138","asOf":"2026-11-21T12:00:00Z","entitlements":[],"balances":[{"entitlement":"coins","units":-30,"purchased":100,"refunded":100,"consumed":30}]}"#
    )
    // The first version sent again (older than the refund): the journal answers it as before, and
    // the transaction stays refunded.
    #expect(try Self.call(VerifyAppStoreTransaction.self, params, context) == first)
    #expect(try Self.entitlements(context).contains(#""units":-30"#))
  }
}
