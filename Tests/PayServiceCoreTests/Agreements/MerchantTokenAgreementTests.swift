import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Synchronization
import Testing

/// An agreement that ends gives up its Apple Pay merchant token: once per token, through the journal.
@Suite("Merchant tokens of agreements")
struct MerchantTokenAgreementTests {
  /// Apple's API as a list of what was asked of it, answering each unlink `reply`.
  final class FakeTokens: MerchantTokenService {
    let unlinked = Mutex<[String]>([])
    let reply: MerchantTokenUnlinkReply
    init(reply: MerchantTokenUnlinkReply = .unlinked) { self.reply = reply }
    func event(_ eventId: String) async -> MerchantTokenEventReply { .unavailable(reason: "not in this test") }
    func unlink(_ merchantTokenIdentifier: String) async -> MerchantTokenUnlinkReply {
      unlinked.withLock { $0.append(merchantTokenIdentifier) }
      return reply
    }
    func shutdown() {}
  }


  static func context(_ tokens: FakeTokens?) throws -> ServiceContext {
    var config = TestConfig.load()
    let issued = try TestMerchantIdentityAuthority().issue(merchantIdentifier: config.merchant.identifier)
    if tokens != nil {
      config.merchantTokens = MerchantTokenSettings(
        identity: try MerchantIdentity.load(
          certificatePEM: issued.certificatePEM, keyPEM: issued.keyPEM, merchantIdentifier: config.merchant.identifier))
    }
    let store = try SQLiteStore(path: ":memory:", newIdentifierKey: TestConfig.identifierKey)
    try store.seedStock(config.catalog)
    return ServiceContext(
      config: config, store: store, clock: ServiceClock(pinned: TestConfig.now),
      merchantTokens: tokens.map { MerchantTokenCalls(service: $0) }, backOffice: true)
  }

  /// A subscription past due on its last retry, charging `token`.
  static func agreement(_ id: String, token: String) -> AgreementRow {
    AgreementRow(
      agreementId: id, orderId: "ord_\(id)", kind: .recurring, sku: "clock", quantity: 1, currencyCode: "USD",
      createdAt: "2026-11-01T12:00:00Z", status: .pastDue, nextPaymentAt: TestConfig.now, period: 1, attempt: 3,
      cancelAtPeriodEnd: false, terms: "{}",
      credential: JSONWriter.string(
        AgreementCredential(gateway: "sandbox", merchantToken: MerchantTokenState(identifier: token))),
      sandboxOutcome: nil, customerAction: nil, updatedAt: "2026-11-01T12:00:00Z")
  }

  /// Declines `id`'s last retry (billing.retries spent: unpaid), as a billing run would.
  static func decline(_ id: String, context: ServiceContext) throws {
    try context.store.write { transaction in
      var agreement = try #require(try transaction.lockAgreement(id))
      var settings = context.config.billing
      settings.retries = [1, 3]
      settings.whenRetriesFail = .unpaid
      try Agreements.declined(
        &agreement, failureCode: "card_declined", declineCode: nil, action: nil, settings: settings,
        transaction: transaction, context: context, now: TestConfig.now)
    }
  }

  static func insert(_ rows: [AgreementRow], context: ServiceContext) throws {
    try context.store.write { transaction in
      for row in rows {
        try StoreContractTests.insertOrder(transaction, row.orderId)
        try transaction.insert(row)
        try transaction.setMerchantToken(agreementId: row.agreementId, identifier: "MT-1")
      }
    }
  }

  @Test("retries spent: the agreement is unpaid, its token unlinked by the merchant, and Apple asked once for two agreements")
  func dunningUnlinksOnce() throws {
    let tokens = FakeTokens()
    let context = try Self.context(tokens)
    try Self.insert([Self.agreement("agr_1", token: "MT-1"), Self.agreement("agr_2", token: "MT-1")], context: context)
    try Self.decline("agr_1", context: context)
    let stored = try #require(try context.store.agreement(id: "agr_1"))
    #expect(stored.row.status == .unpaid)
    let token = try #require(try Agreements.credential(of: stored.row).merchantToken)
    #expect(token == MerchantTokenState(identifier: "MT-1", status: .unlinked, reason: "merchant", updatedAt: "2026-11-21T12:00:00Z"))
    #expect(stored.events.map(\.kind).suffix(2) == [.statusChanged, .merchantTokenUnlinked])
    // Recorded pending with the decline; sent once it is durable.
    #expect(try context.store.write { try $0.operation(kind: "merchant_token_unlink", key: "MT-1") }?.state == .pending)
    #expect(tokens.unlinked.withLock { $0 }.isEmpty)
    try context.recordedCalls.sendRecorded(context: context)
    #expect(tokens.unlinked.withLock { $0 } == ["MT-1"])
    let entry = try #require(try context.store.write { try $0.operation(kind: "merchant_token_unlink", key: "MT-1") })
    #expect(entry.state == .settled && entry.result == #"{"outcome":"unlinked"}"#)

    // The second agreement on the same token ends too: the token's unlink is in the journal already.
    try Self.decline("agr_2", context: context)
    try context.recordedCalls.sendRecorded(context: context)
    #expect(tokens.unlinked.withLock { $0 } == ["MT-1"])
  }

  @Test("Apple unreachable: the unlink stays pending, and the sweep sends it; without applePay.merchantTokens nothing is recorded")
  func pendingAndNotConfigured() throws {
    let down = FakeTokens(reply: .unavailable(reason: "500"))
    let context = try Self.context(down)
    try Self.insert([Self.agreement("agr_1", token: "MT-1")], context: context)
    try Self.decline("agr_1", context: context)
    try context.recordedCalls.sendRecorded(context: context)
    #expect(down.unlinked.withLock { $0 } == ["MT-1"])
    #expect(try context.store.write { try $0.operation(kind: "merchant_token_unlink", key: "MT-1") }?.state == .pending)
    #expect(try OperationRunner.sweep(context: context) == OperationRunner.Sweep(resolved: 0, pending: 1))
    #expect(down.unlinked.withLock { $0 } == ["MT-1", "MT-1"])

    let plain = try Self.context(nil)
    try Self.insert([Self.agreement("agr_1", token: "MT-1")], context: plain)
    try Self.decline("agr_1", context: plain)
    let stored = try #require(try plain.store.agreement(id: "agr_1"))
    #expect(stored.row.status == .unpaid)
    #expect(try Agreements.credential(of: stored.row).merchantToken?.status == .active)
    #expect(try plain.store.write { try $0.operation(kind: "merchant_token_unlink", key: "MT-1") } == nil)
  }
}
