import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

extension StoreContractTests {
  @Test(
    "merchant tokens: the token an authorization brought, kept once and marked unlinked; the agreements that charge a token",
    arguments: StoreBackend.available)
  func merchantTokenBooks(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    let card = #"{"fpanSuffix":"4242"}"#
    try store.write { transaction in
      try transaction.insertMerchantTokenHold(authorizationId: "auth_1", merchantTokenIdentifier: "MT-1", card: card)
      // The same authorization again (a replayed token's) writes nothing.
      try transaction.insertMerchantTokenHold(authorizationId: "auth_1", merchantTokenIdentifier: "MT-9", card: nil)
      try transaction.insertMerchantTokenHold(authorizationId: "auth_2", merchantTokenIdentifier: "MT-1", card: nil)
      try transaction.insertMerchantTokenHold(authorizationId: "auth_3", merchantTokenIdentifier: "MT-3", card: nil)
    }
    func hold(_ id: String) throws -> [String?] {
      try store.write { try $0.merchantTokenHold(authorizationId: id) }.map { [$0.identifier, $0.card, $0.unlinkedBy] }
        ?? []
    }
    #expect(try hold("auth_1") == ["MT-1", card, nil])
    #expect(try hold("auth_9") == [])
    // Apple's unlink marks every authorization that brought the token, once: a later one keeps the first reason.
    try store.write { try $0.markMerchantTokenHoldsUnlinked("MT-1", by: "user") }
    try store.write { try $0.markMerchantTokenHoldsUnlinked("MT-1", by: "issuer") }
    #expect(try hold("auth_1") == ["MT-1", card, "user"])
    #expect(try hold("auth_2") == ["MT-1", nil, "user"])
    #expect(try hold("auth_3") == ["MT-3", nil, nil])

    // Agreements by token, by agreementId in byte order on both backends.
    try store.write { transaction in
      for id in ["agr_b", "agr_a", "agr_C", "agr_d"] {
        try Self.insertOrder(transaction, "ord_\(id)")
        try transaction.insert(
          AgreementRow(
            agreementId: id, orderId: "ord_\(id)", kind: .recurring, sku: "clock", quantity: 1, currencyCode: "USD",
            createdAt: "2026-11-21T12:00:00Z", status: .active, nextPaymentAt: nil, period: 1, attempt: 0,
            cancelAtPeriodEnd: false, terms: "{}", credential: #"{"gateway":"sandbox"}"#, sandboxOutcome: nil,
            customerAction: nil, updatedAt: "2026-11-21T12:00:00Z"))
      }
      for id in ["agr_b", "agr_a", "agr_C"] { try transaction.setMerchantToken(agreementId: id, identifier: "MT-1") }
      try transaction.setMerchantToken(agreementId: "agr_d", identifier: "MT-3")
    }
    #expect(try store.write { try $0.agreementIds(merchantToken: "MT-1") } == ["agr_C", "agr_a", "agr_b"])
    #expect(try store.write { try $0.agreementIds(merchantToken: "MT-3") } == ["agr_d"])
    #expect(try store.write { try $0.agreementIds(merchantToken: "MT-9") } == [])
    #expect(throws: StoreError.self) { try store.write { try $0.setMerchantToken(agreementId: "agr_x", identifier: "MT-1") } }
  }
}
