import Foundation
import PayServiceAdyen
import PayServiceCore
import PayServiceTestSupport
import Testing

/// An agreement's payments at Adyen, through the gateway itself: the first payment stores the card
/// for the agreement (the shopper present), later ones charge it with the shopper absent, and a
/// refused later payment is a decline in the shopper's words.
@Suite("Adyen stored cards")
struct AdyenStoredCardTests {
  @Test("the first payment stores the card; later ones charge it as ContAuth, under their own keys")
  func storedCard() async throws {
    let fixture = try AdyenFixture()
    defer { fixture.server.shutdown() }
    let config = try fixture.config()
    let gateway = fixture.gateway(config, clock: ServiceClock(pinned: TestConfig.now)).gateway
    let token = try fixture.applePayToken(amountMinor: 999)
    let tokenized = await gateway.tokenize(
      applePayToken: ApplePayTokenization(
        paymentData: token, displayName: "Visa 1111", network: "Visa", transactionIdentifier: "T1", idempotencyKey: "k0"))
    guard case .succeeded(let made) = tokenized else {
      Issue.record("tokenize: \(tokenized)")
      return
    }
    #expect(made.label == "(the Apple Pay token, which Adyen decrypts when it charges it)")
    let first = await gateway.charge(
      GatewayCharge(
        paymentData: made.id, amountMinor: 999, currencyCode: "USD", orderId: "ord-first", captureManually: false,
        idempotencyKey: "payservice-charge-ord-first", saveCard: true, agreementId: "agr-1"))
    guard case .succeeded(let paid) = first, let saved = paid.savedCard else {
      Issue.record("first payment: \(first)")
      return
    }
    #expect(paid.status == .captured)
    #expect(saved.customerId == "agr-1")
    #expect(saved.paymentMethodId.hasPrefix("TOKN"))
    let firstSent = try JSONParser.parse(try #require(fixture.server.requests.last?.body))
    #expect(firstSent["storePaymentMethod"] == .bool(true))
    #expect(firstSent["shopperReference"] == .string("agr-1"))
    #expect(firstSent["recurringProcessingModel"] == .string("Subscription"))
    #expect(firstSent["shopperInteraction"] == .string("Ecommerce"))

    let renewal = await gateway.charge(
      GatewayCharge(
        paymentData: "", amountMinor: 999, currencyCode: "USD", orderId: "ord-second", captureManually: false,
        idempotencyKey: "payservice-charge-ord-second", savedCard: saved, agreementId: "agr-1"))
    guard case .succeeded(let renewed) = renewal else {
      Issue.record("renewal: \(renewal)")
      return
    }
    #expect(renewed.status == .captured)
    #expect(renewed.savedCard == saved)
    let sent = try #require(fixture.server.requests.last?.body)
    #expect(
      sent
        == #"{"amount":{"currency":"USD","value":999},"reference":"ord-second","merchantAccount":"PayServiceECOM","paymentMethod":{"type":"scheme","storedPaymentMethodId":"\#(saved.paymentMethodId)"},"shopperReference":"agr-1","shopperInteraction":"ContAuth","recurringProcessingModel":"Subscription","metadata":{"agreementId":"agr-1"}}"#
    )

    #expect(fixture.server.refuseStoredPayments(storedPaymentMethodId: saved.paymentMethodId, refusalReasonCode: 12))
    let refused = await gateway.charge(
      GatewayCharge(
        paymentData: "", amountMinor: 999, currencyCode: "USD", orderId: "ord-third", captureManually: false,
        idempotencyKey: "payservice-charge-ord-third", savedCard: saved, agreementId: "agr-1"))
    guard case .declined(let decline) = refused else {
      Issue.record("refused renewal: \(refused)")
      return
    }
    #expect(decline.code == "card_declined")
    #expect(decline.declineCode == "Not enough balance (12)")
    #expect(decline.message == "Your card has insufficient funds. Use another card.")
    #expect(fixture.server.paymentCount == 3)
    await gateway.shutdown()
  }

  @Test("a reload's or pre-order's card is stored and charged as UnscheduledCardOnFile")
  func unscheduled() async throws {
    let fixture = try AdyenFixture()
    defer { fixture.server.shutdown() }
    let gateway = fixture.gateway(try fixture.config(), clock: ServiceClock(pinned: TestConfig.now)).gateway
    let tokenized = await gateway.tokenize(
      applePayToken: ApplePayTokenization(
        paymentData: try fixture.applePayToken(amountMinor: 2500), displayName: "Visa 1111", network: "Visa",
        transactionIdentifier: "T1", idempotencyKey: "k0"))
    guard case .succeeded(let made) = tokenized else {
      Issue.record("tokenize: \(tokenized)")
      return
    }
    let first = await gateway.charge(
      GatewayCharge(
        paymentData: made.id, amountMinor: 2500, currencyCode: "USD",
        orderId: "ord-first", captureManually: false, idempotencyKey: "payservice-charge-ord-first", saveCard: true,
        agreementId: "agr-reload", unscheduled: true))
    guard case .succeeded(let paid) = first, let saved = paid.savedCard else {
      Issue.record("first payment: \(first)")
      return
    }
    let firstSent = try JSONParser.parse(try #require(fixture.server.requests.last?.body))
    #expect(firstSent["recurringProcessingModel"] == .string("UnscheduledCardOnFile"))
    #expect(firstSent["storePaymentMethod"] == .bool(true))
    let reload = await gateway.charge(
      GatewayCharge(
        paymentData: "", amountMinor: 2500, currencyCode: "USD", orderId: "ord-reload", captureManually: false,
        idempotencyKey: "payservice-agreement-agr-reload-reload-ord-reload", savedCard: saved, agreementId: "agr-reload",
        unscheduled: true))
    guard case .succeeded = reload else {
      Issue.record("reload: \(reload)")
      return
    }
    #expect(
      fixture.server.requests.last?.body
        == #"{"amount":{"currency":"USD","value":2500},"reference":"ord-reload","merchantAccount":"PayServiceECOM","paymentMethod":{"type":"scheme","storedPaymentMethodId":"\#(saved.paymentMethodId)"},"shopperReference":"agr-reload","shopperInteraction":"ContAuth","recurringProcessingModel":"UnscheduledCardOnFile","metadata":{"agreementId":"agr-reload"}}"#
    )
    await gateway.shutdown()
  }

  @Test("an IDR amount with cents cannot be written in Adyen's whole rupiahs: refused before any call")
  func currencyExponents() async throws {
    let fixture = try AdyenFixture()
    defer { fixture.server.shutdown() }
    let gateway = fixture.gateway(try fixture.config(), clock: ServiceClock(pinned: TestConfig.now)).gateway
    let refused = await gateway.charge(
      GatewayCharge(
        paymentData: "adyen-applepay:e30=", amountMinor: 150_050, currencyCode: "IDR", orderId: "ord-idr",
        captureManually: false, idempotencyKey: "payservice-charge-ord-idr"))
    guard case .refused(let refusal) = refused else {
      Issue.record("an IDR amount with cents: \(refused)")
      return
    }
    #expect(refusal.final)
    #expect(refusal.message == "150050 minor units of IDR cannot be written in Adyen's minor units")
    #expect(fixture.server.requests.isEmpty)
    await gateway.shutdown()
  }
}
