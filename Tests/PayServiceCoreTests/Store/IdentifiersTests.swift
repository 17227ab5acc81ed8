import PayServiceTestSupport
import Testing

@testable import PayServiceCore

/// The identifiers' forms. The expected values were computed apart from this code, with Python's
/// `hmac` (HMAC-SHA256 under the transcript key of the parts joined with U+001F).
struct IdentifiersTests {
  let identifiers = Identifiers(key: TestConfig.identifierKey)
  /// 2026-11-21T12:00:00Z, 0x6b0187c0.
  let now = TestConfig.now

  @Test("a token starts with the second it was issued, and what is derived from it with the same digits")
  func timeOrdered() {
    let token = identifiers.chargeToken(merchant: "merchant.test", sequence: 1, binding: "{}", issuedAt: now)
    #expect(token == "ctok_6b0187c0091fafb631e892d29c4c950dc957ba8e499f8da5")
    let orderId = identifiers.orderId(token: token)
    #expect(orderId == "ord_6b0187c0274802b49df1bea25f4668ee4ae5f535")
    #expect(identifiers.chargeId(token: token) == "ch_6b0187c0c1347a3aecde75311b1eca004ca10b92")
    let agreementId = identifiers.agreementId(orderId: orderId)
    #expect(agreementId == "agr_6b0187c06a795d96c9357e2cdfcc850593061cc8")
    let renewal = identifiers.agreementOrderId(agreementId: agreementId, payment: "period-3")
    #expect(renewal == "ord_6b0187c030740afe06933bca2a0ba17963c48d82")
    #expect(identifiers.agreementChargeId(orderId: renewal, attempt: 2) == "ch_6b0187c0fe48ec66e5ece630905d90325ae48b7f")
    #expect(identifiers.gatewayRefundId(orderId: orderId, refundId: "rf-1") == "re_6b0187c054d49588f6663d92bce98342969ff2ba")
  }

  @Test("later tokens sort after earlier ones, whatever their MACs")
  func sortsByIssue() {
    let tokens = (0..<50).map { index in
      identifiers.chargeToken(merchant: "merchant.test", sequence: Int64(index), binding: "{}", issuedAt: now + Int64(index))
    }
    #expect(tokens.sorted() == tokens)
    #expect(tokens.map { identifiers.orderId(token: $0) }.sorted() == tokens.map { identifiers.orderId(token: $0) })
  }

  @Test("the second is clamped to what 8 hex digits hold")
  func moments() {
    #expect(Identifiers.moment(0) == "00000000")
    #expect(Identifiers.moment(-5) == "00000000")
    #expect(Identifiers.moment(Int64(UInt32.max)) == "ffffffff")
    #expect(Identifiers.moment(Int64.max) == "ffffffff")
  }

  @Test("what is derived from a keyed token without a time keeps that form's identifiers")
  func keyedWithoutTime() {
    let token = "ctok_091fafb631e892d29c4c950dc957ba8e499f8da5"
    let orderId = identifiers.orderId(token: token)
    #expect(orderId == "ord_936f9e5638e2be9255161a51da907fda")
    #expect(identifiers.chargeId(token: token) == "ch_0909fd123b6ce9fd1f0b9fdaa08bb387")
    #expect(identifiers.agreementId(orderId: orderId) == "agr_b3f48f08c5b5ddfcd8fbd4dda14bc602")
  }

  @Test("a token of the time-ordered length whose prefix is not lower-case hex gives no prefix")
  func notHex() {
    let token = "ctok_6B0187C0091fafb631e892d29c4c950dc957ba8e499f8da5"
    #expect(identifiers.orderId(token: token) == "ord_9b9a4c9f17eed860b5e403390f7098f9")
    #expect(Identifiers.moment(ofToken: "ctok_zz0187c0091fafb631e892d29c4c950dc957ba8e499f8da5") == "")
    #expect(Identifiers.moment(ofOrder: "ord_6b0187c0274802b49df1bea25f4668ee4ae5f535") == "6b0187c0")
  }
}
