import AsyncHTTPClient
import Foundation
import NIOCore
import PayServiceTestSupport
import Testing

/// Modifications, stored payment methods, idempotency, faults and disputes.
extension AdyenTestServerTests {
  static let manual = #""additionalData":{"manualCapture":"true"}"#

  static func modification(amount: Int? = nil, currency: String = "USD", reference: String? = nil) -> String {
    var members = [#""merchantAccount":"\#(account)""#]
    if let amount { members.append(#""amount":{"currency":"\#(currency)","value":\#(amount)}"#) }
    if let reference { members.append(#""reference":"\#(reference)""#) }
    return "{" + members.joined(separator: ",") + "}"
  }

  @Test("manual capture: a partial capture releases the rest; refunds up to what was captured; no cancel after")
  func captureAndRefund() async throws {
    try await Self.withServer { server, client, factory in
      let paid = try await Self.send(
        client, server, "/v71/payments", Self.payment(Self.applePay(try Self.token(factory)), extra: Self.manual))
      #expect(paid.status == 200)
      #expect(server.payment("TEST000000000001")?["capturable"] == "1999")
      let capture = try await Self.send(
        client, server, "/v71/payments/TEST000000000001/captures", Self.modification(amount: 1500, reference: "cap-1"))
      #expect(capture.status == 201)
      #expect(
        capture.body
          == #"{"merchantAccount":"PayServiceECOM","paymentPspReference":"TEST000000000001","reference":"cap-1","pspReference":"TEST000000000002","status":"received","amount":{"currency":"USD","value":1500}}"#
      )
      #expect(capture.header("pspReference") == "TEST000000000002")
      let again = try await Self.send(
        client, server, "/v71/payments/TEST000000000001/captures", Self.modification(amount: 100))
      #expect(again.status == 201)
      let refund = try await Self.send(
        client, server, "/v71/payments/TEST000000000001/refunds", Self.modification(amount: 1000, reference: "ref-1"))
      #expect(
        refund.body
          == #"{"merchantAccount":"PayServiceECOM","paymentPspReference":"TEST000000000001","reference":"ref-1","pspReference":"TEST000000000004","status":"received","amount":{"currency":"USD","value":1000}}"#
      )
      _ = try await Self.send(client, server, "/v71/payments/TEST000000000001/refunds", Self.modification(amount: 501))
      _ = try await Self.send(
        client, server, "/v71/payments/TEST000000000001/refunds", Self.modification(amount: 10, currency: "EUR"))
      let cancel = try await Self.send(client, server, "/v71/payments/TEST000000000001/cancels", Self.modification())
      #expect(cancel.status == 201)
      #expect(
        cancel.body
          == #"{"merchantAccount":"PayServiceECOM","paymentPspReference":"TEST000000000001","pspReference":"TEST000000000007","status":"received"}"#
      )
      let unknown = try await Self.send(client, server, "/v71/payments/NOPE/captures", Self.modification(amount: 1))
      #expect(unknown.status == 422)
      #expect(
        unknown.body
          == #"{"status":422,"errorCode":"167","message":"Original pspReference required for this operation","errorType":"validation","pspReference":"TEST000000000008"}"#
      )
      let noAmount = try await Self.send(client, server, "/v71/payments/TEST000000000001/refunds", Self.modification())
      #expect(
        noAmount.body
          == #"{"status":422,"errorCode":"100","message":"Required object 'amount' is not provided","errorType":"validation","pspReference":"TEST000000000009"}"#
      )
      #expect((server.captureCount, server.refundCount, server.cancelCount) == (2, 3, 1))
      #expect(server.payment("TEST000000000001")?["captured"] == "1500")
      #expect(server.payment("TEST000000000001")?["refunded"] == "1000")
      let items = server.pendingNotifications
      #expect(
        items.map(\.eventCode) == ["AUTHORISATION", "CAPTURE", "CAPTURE", "REFUND", "REFUND", "REFUND", "CANCELLATION"])
      #expect(items.map(\.success) == [true, true, false, true, false, false, false])
      #expect(
        items.map { $0.reason ?? "" } == [
          "100001:1111:12/2030", "", "Insufficient balance on payment", "", "Insufficient balance on payment",
          "Insufficient balance on payment", "Transaction has been captured, cancel not possible",
        ])
      #expect(
        server.releaseNotifications()
          == #"{"live":"false","notificationItems":[{"NotificationRequestItem":{"additionalData":{"hmacSignature":"iFAesXpnUTDS+WWF7Ul7FuI6krIByF5SmlAoYaHFruk="},"amount":{"currency":"USD","value":1999},"eventCode":"AUTHORISATION","eventDate":"2026-11-21T13:00:00+01:00","merchantAccountCode":"PayServiceECOM","merchantReference":"order-1","operations":["CANCEL","CAPTURE","REFUND"],"paymentMethod":"visa","pspReference":"TEST000000000001","reason":"100001:1111:12/2030","success":"true"}},{"NotificationRequestItem":{"additionalData":{"hmacSignature":"VqrARVYuYCZRPT1XgkBpQNa9PcOK6LFCpFxsTPAu3jU="},"amount":{"currency":"USD","value":1500},"eventCode":"CAPTURE","eventDate":"2026-11-21T13:00:00+01:00","merchantAccountCode":"PayServiceECOM","merchantReference":"cap-1","originalReference":"TEST000000000001","paymentMethod":"visa","pspReference":"TEST000000000002","reason":"","success":"true"}},{"NotificationRequestItem":{"additionalData":{"hmacSignature":"vDEFgP8R6hkYjh3wFueVxLYZ+tIjGBxK6NsVVTcKcps="},"amount":{"currency":"USD","value":100},"eventCode":"CAPTURE","eventDate":"2026-11-21T13:00:00+01:00","merchantAccountCode":"PayServiceECOM","merchantReference":"order-1","originalReference":"TEST000000000001","paymentMethod":"visa","pspReference":"TEST000000000003","reason":"Insufficient balance on payment","success":"false"}},{"NotificationRequestItem":{"additionalData":{"hmacSignature":"d9qXiD6rknb3NWLeA6RJ6HzKw8347kLpp6ie17CbicA="},"amount":{"currency":"USD","value":1000},"eventCode":"REFUND","eventDate":"2026-11-21T13:00:00+01:00","merchantAccountCode":"PayServiceECOM","merchantReference":"ref-1","originalReference":"TEST000000000001","paymentMethod":"visa","pspReference":"TEST000000000004","reason":"","success":"true"}},{"NotificationRequestItem":{"additionalData":{"hmacSignature":"+um+iH0/O/nVtLVLjT1S541sh+ORrcJg/DjcKmBauCA="},"amount":{"currency":"USD","value":501},"eventCode":"REFUND","eventDate":"2026-11-21T13:00:00+01:00","merchantAccountCode":"PayServiceECOM","merchantReference":"order-1","originalReference":"TEST000000000001","paymentMethod":"visa","pspReference":"TEST000000000005","reason":"Insufficient balance on payment","success":"false"}},{"NotificationRequestItem":{"additionalData":{"hmacSignature":"u1rW1+kBP5CW+menKHu6pXinWuGd6lbeG9/TifkoyDA="},"amount":{"currency":"EUR","value":10},"eventCode":"REFUND","eventDate":"2026-11-21T13:00:00+01:00","merchantAccountCode":"PayServiceECOM","merchantReference":"order-1","originalReference":"TEST000000000001","paymentMethod":"visa","pspReference":"TEST000000000006","reason":"Insufficient balance on payment","success":"false"}},{"NotificationRequestItem":{"additionalData":{"hmacSignature":"YBSgGK9Hk8sVuNhDfEywqd3GPlpKOaonEwJK662ubX4="},"amount":{"currency":"USD","value":1999},"eventCode":"CANCELLATION","eventDate":"2026-11-21T13:00:00+01:00","merchantAccountCode":"PayServiceECOM","merchantReference":"order-1","originalReference":"TEST000000000001","paymentMethod":"visa","pspReference":"TEST000000000007","reason":"Transaction has been captured, cancel not possible","success":"false"}}]}"#
      )
    }
  }

  @Test("a cancel before capture succeeds; nothing can be captured or refunded after it")
  func cancel() async throws {
    try await Self.withServer { server, client, factory in
      _ = try await Self.send(
        client, server, "/v71/payments", Self.payment(Self.applePay(try Self.token(factory)), extra: Self.manual))
      _ = try await Self.send(client, server, "/v71/payments/TEST000000000001/refunds", Self.modification(amount: 100))
      _ = try await Self.send(
        client, server, "/v71/payments/TEST000000000001/cancels", Self.modification(reference: "c1"))
      _ = try await Self.send(client, server, "/v71/payments/TEST000000000001/captures", Self.modification(amount: 100))
      let items = server.pendingNotifications.dropFirst()
      #expect(items.map(\.eventCode) == ["REFUND", "CANCELLATION", "CAPTURE"])
      #expect(items.map(\.success) == [false, true, false])
      #expect(
        items.map { $0.reason ?? "" } == [
          "Transaction hasn't been captured, refund not possible", "", "Insufficient balance on payment",
        ])
      #expect(items.map(\.merchantReference) == ["order-1", "c1", "order-1"])
      #expect(items.map(\.value) == [100, 1999, 100])
      #expect(server.payment("TEST000000000001")?["cancelled"] == "true")
    }
  }

  @Test("a refund the scheme rejects later: REFUND_FAILED after its REFUND, the amount back")
  func refundFailsLater() async throws {
    try await Self.withServer { server, client, factory in
      _ = try await Self.send(client, server, "/v71/payments", Self.payment(Self.applePay(try Self.token(factory))))
      _ = try await Self.send(client, server, "/v71/payments/TEST000000000001/refunds", Self.modification(amount: 500))
      _ = try await Self.send(client, server, "/v71/payments/TEST000000000001/cancels", Self.modification())
      #expect(server.payment("TEST000000000001")?["refunded"] == "500")
      #expect(!server.failModification(pspReference: "TEST000000000003"))
      #expect(server.failModification(pspReference: "TEST000000000002"))
      #expect(!server.failModification(pspReference: "TEST000000000002"))
      #expect(server.payment("TEST000000000001")?["refunded"] == "0")
      let failed = try #require(server.pendingNotifications.last)
      #expect(
        failed
          == AdyenNotificationItem(
            eventCode: "REFUND_FAILED", success: true, pspReference: "TEST000000000002",
            originalReference: "TEST000000000001", merchantAccountCode: "PayServiceECOM", merchantReference: "order-1",
            currency: "USD", value: 500, paymentMethod: "visa", reason: "Refund Failed",
            eventDate: "2026-11-21T13:00:00+01:00"))
    }
  }

  static func stored(_ id: String, shopper: String = "shopper-1", model: String = "Subscription") -> String {
    payment(
      #"{"type":"scheme","storedPaymentMethodId":"\#(id)"}"#,
      extra: #""shopperReference":"\#(shopper)","shopperInteraction":"ContAuth","recurringProcessingModel":"\#(model)""#
    )
  }

  @Test("stored payment methods: tokenized on the first payment, charged later for the same shopper only")
  func storedPaymentMethods() async throws {
    try await Self.withServer { server, client, factory in
      let first = try await Self.send(
        client, server, "/v71/payments",
        Self.payment(
          Self.applePay(try Self.token(factory)),
          extra:
            #""storePaymentMethod":true,"shopperReference":"shopper-1","shopperInteraction":"Ecommerce","recurringProcessingModel":"Subscription""#
        ))
      #expect(
        first.body
          == #"{"additionalData":{"tokenization.shopperReference":"shopper-1","tokenization.store.operationType":"created","tokenization.storedPaymentMethodId":"TOKN000000000001"},"amount":{"currency":"USD","value":1999},"merchantReference":"order-1","paymentMethod":{"brand":"visa","type":"applepay"},"pspReference":"TEST000000000001","resultCode":"Authorised"}"#
      )
      #expect(
        server.pendingNotifications.first?.additionalData == [
          "tokenization.shopperReference": "shopper-1", "tokenization.store.operationType": "created",
          "tokenization.storedPaymentMethodId": "TOKN000000000001",
        ])
      let later = try await Self.send(client, server, "/v71/payments", Self.stored("TOKN000000000001"))
      #expect(
        later.body
          == #"{"amount":{"currency":"USD","value":1999},"merchantReference":"order-1","paymentMethod":{"brand":"visa","type":"scheme"},"pspReference":"TEST000000000002","resultCode":"Authorised"}"#
      )
      #expect(server.payment("TEST000000000002")?["shopperInteraction"] == "ContAuth")
      #expect(server.payment("TEST000000000002")?["recurringProcessingModel"] == "Subscription")
      #expect(server.payment("TEST000000000002")?["storedPaymentMethodId"] == "TOKN000000000001")
      let stranger = try await Self.send(
        client, server, "/v71/payments", Self.stored("TOKN000000000001", shopper: "shopper-2"))
      #expect(stranger.status == 422)
      #expect(
        stranger.body
          == #"{"status":422,"errorCode":"800","message":"Contract not found","errorType":"validation","pspReference":"TEST000000000003"}"#
      )
      #expect(server.refuseStoredPayments(storedPaymentMethodId: "TOKN000000000001", refusalReasonCode: 12, count: 1))
      #expect(!server.refuseStoredPayments(storedPaymentMethodId: "TOKN000000000009", refusalReasonCode: 12))
      #expect(!server.refuseStoredPayments(storedPaymentMethodId: "TOKN000000000001", refusalReasonCode: 13))
      let refused = try await Self.send(client, server, "/v71/payments", Self.stored("TOKN000000000001"))
      #expect(
        refused.body
          == #"{"amount":{"currency":"USD","value":1999},"merchantReference":"order-1","pspReference":"TEST000000000004","refusalReason":"Not enough balance","refusalReasonCode":"12","resultCode":"Refused"}"#
      )
      let again = try await Self.send(
        client, server, "/v71/payments", Self.stored("TOKN000000000001", model: "UnscheduledCardOnFile"))
      #expect(again.status == 200)
      #expect(server.payment("TEST000000000005")?["resultCode"] == "Authorised")
      #expect(server.disableStoredPaymentMethod("TOKN000000000001"))
      let disabled = try await Self.send(client, server, "/v71/payments", Self.stored("TOKN000000000001"))
      #expect(
        disabled.body
          == #"{"status":422,"errorCode":"800","message":"Contract not found","errorType":"validation","pspReference":"TEST000000000006"}"#
      )
      #expect(server.storedPaymentMethod("TOKN000000000001")?["disabled"] == "true")
      #expect(server.paymentCount == 4)
    }
  }

  @Test("a zero-value authorisation stores a card; the same card again is alreadyExisting")
  func zeroValueAuthorisation() async throws {
    try await Self.withServer { server, client, factory in
      server.setAdditionalData(["cardSummary", "expiryDate", "authCode", "unknownField"])
      let extra = #""storePaymentMethod":true,"shopperReference":"shopper-2","recurringProcessingModel":"CardOnFile""#
      let zero = try await Self.send(
        client, server, "/v71/payments",
        Self.payment(Self.applePay(try Self.token(factory, amount: 0)), value: 0, extra: extra))
      #expect(
        zero.body
          == #"{"additionalData":{"authCode":"100001","cardSummary":"1111","expiryDate":"12/2030","tokenization.shopperReference":"shopper-2","tokenization.store.operationType":"created","tokenization.storedPaymentMethodId":"TOKN000000000001"},"amount":{"currency":"USD","value":0},"merchantReference":"order-1","paymentMethod":{"brand":"visa","type":"applepay"},"pspReference":"TEST000000000001","resultCode":"Authorised"}"#
      )
      let item = try #require(server.pendingNotifications.first)
      #expect(item.value == 0)
      #expect(item.operations == nil)
      let twice = try await Self.send(
        client, server, "/v71/payments",
        Self.payment(Self.applePay(try Self.token(factory, amount: 0)), value: 0, extra: extra))
      #expect(
        twice.body
          == #"{"additionalData":{"authCode":"100002","cardSummary":"1111","expiryDate":"12/2030","tokenization.shopperReference":"shopper-2","tokenization.store.operationType":"alreadyExisting","tokenization.storedPaymentMethodId":"TOKN000000000001"},"amount":{"currency":"USD","value":0},"merchantReference":"order-1","paymentMethod":{"brand":"visa","type":"applepay"},"pspReference":"TEST000000000002","resultCode":"Authorised"}"#
      )
      #expect(
        server.storedPaymentMethod("TOKN000000000001") == [
          "id": "TOKN000000000001", "shopperReference": "shopper-2", "brand": "visa", "last4": "1111",
          "expiration": "301231", "disabled": "false", "pendingRefusals": "0", "recurringProcessingModel": "CardOnFile",
        ])
    }
  }

  @Test("a dispute through its stages, in summer time, each event signed")
  func dispute() async throws {
    try await Self.withServer { server, client, factory in
      _ = try await Self.send(client, server, "/v71/payments", Self.payment(Self.applePay(try Self.token(factory))))
      _ = server.releaseNotifications()
      server.setClock(1_782_907_200)
      #expect(server.openDispute(paymentPspReference: "TEST000000000009", value: 100) == nil)
      #expect(server.openDispute(paymentPspReference: "TEST000000000001", value: 2000) == nil)
      let id = try #require(server.openDispute(paymentPspReference: "TEST000000000001", value: 1000))
      #expect(id == "TEST000000000002")
      #expect(!server.advanceDispute(id, to: .chargebackReversed))
      #expect(server.advanceDispute(id, to: .chargeback))
      #expect(server.payment("TEST000000000001")?["chargedBack"] == "1000")
      #expect(server.advanceDispute(id, to: .chargebackReversed, disputeStatus: "Won"))
      #expect(server.payment("TEST000000000001")?["chargedBack"] == "0")
      #expect(
        server.releaseNotifications()
          == #"{"live":"false","notificationItems":[{"NotificationRequestItem":{"additionalData":{"chargebackReasonCode":"10.4","chargebackSchemeCode":"visa","disputeStatus":"Undefended","hmacSignature":"VJ78FIohSGiH/hrafm/gf2DpmiqJ3TWZ65ZE2ZkEfio="},"amount":{"currency":"USD","value":1000},"eventCode":"NOTIFICATION_OF_CHARGEBACK","eventDate":"2026-07-01T14:00:00+02:00","merchantAccountCode":"PayServiceECOM","merchantReference":"order-1","originalReference":"TEST000000000001","paymentMethod":"visa","pspReference":"TEST000000000002","reason":"Other Fraud-Card Absent Environment","success":"true"}},{"NotificationRequestItem":{"additionalData":{"chargebackReasonCode":"10.4","chargebackSchemeCode":"visa","disputeStatus":"Undefended","hmacSignature":"uCo5yad5KLrlbJMdcmtrtsWm5aO9RS7pGNfbfnQ8bZQ="},"amount":{"currency":"USD","value":1000},"eventCode":"CHARGEBACK","eventDate":"2026-07-01T14:00:00+02:00","merchantAccountCode":"PayServiceECOM","merchantReference":"order-1","originalReference":"TEST000000000001","paymentMethod":"visa","pspReference":"TEST000000000002","reason":"Other Fraud-Card Absent Environment","success":"true"}},{"NotificationRequestItem":{"additionalData":{"chargebackReasonCode":"10.4","chargebackSchemeCode":"visa","disputeStatus":"Won","hmacSignature":"UnMAhhSGBgkHVMadi1HTiNJeMqSXyhXMvmlUC/bdfE8="},"amount":{"currency":"USD","value":1000},"eventCode":"CHARGEBACK_REVERSED","eventDate":"2026-07-01T14:00:00+02:00","merchantAccountCode":"PayServiceECOM","merchantReference":"order-1","originalReference":"TEST000000000001","paymentMethod":"visa","pspReference":"TEST000000000002","reason":"Other Fraud-Card Absent Environment","success":"true"}}]}"#
      )
      #expect(server.advanceDispute(id, to: .secondChargeback))
      #expect(!server.advanceDispute(id, to: .chargeback))
      let rfi = try #require(
        server.openDispute(paymentPspReference: "TEST000000000001", value: 1999, event: .requestForInformation))
      #expect(server.pendingNotifications.last?.additionalData == ["disputeStatus": "Unresponded"])
      #expect(server.pendingNotifications.last?.eventCode == "REQUEST_FOR_INFORMATION")
      #expect(server.advanceDispute(rfi, to: .notificationOfChargeback))
    }
  }
}
