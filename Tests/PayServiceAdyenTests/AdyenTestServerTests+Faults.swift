import AsyncHTTPClient
import Foundation
import NIOCore
import PayServiceTestSupport
import Testing

/// Idempotency keys, injected faults and answers that do not match their request.
extension AdyenTestServerTests {
  static let keyReused =
    #"{"status":422,"errorCode":"704","message":"request already processed or in progress","errorType":"validation"}"#

  @Test("the same key and body replays the first answer; another body under the key is 422 704")
  func idempotentReplay() async throws {
    try await Self.withServer { server, client, factory in
      let token = try Self.token(factory)
      let body = Self.payment(Self.applePay(token))
      let first = try await Self.send(client, server, "/v71/payments", body, idempotencyKey: "key-1")
      #expect(first.header("Idempotency-Key") == "key-1")
      // The same members in another order are the same request.
      let reordered =
        #"{"paymentMethod":\#(Self.applePay(token)),"merchantAccount":"\#(Self.account)","reference":"order-1","amount":{"value":1999,"currency":"USD"}}"#
      let second = try await Self.send(client, server, "/v71/payments", reordered, idempotencyKey: "key-1")
      #expect(second.status == 200)
      #expect(second.body == first.body)
      #expect(second.header("Idempotency-Key") == "key-1")
      #expect(server.requests.map(\.replayed) == [false, true])
      #expect(server.created(idempotencyKey: "key-1") == 1)
      #expect(server.paymentCount == 1)
      #expect(server.pendingNotifications.count == 1)
      let other = try await Self.send(
        client, server, "/v71/payments", Self.payment(Self.applePay(token), value: 2000), idempotencyKey: "key-1")
      #expect(other.status == 422)
      #expect(other.body == Self.keyReused)
      #expect(other.header("Transient-Error") == "false")
      let elsewhere = try await Self.send(
        client, server, "/v71/payments/TEST000000000001/refunds", Self.modification(amount: 1), idempotencyKey: "key-1")
      #expect(elsewhere.body == Self.keyReused)
      // A request that never began executing (403) is not saved: the corrected one executes.
      let wrong = try await Self.send(
        client, server, "/v71/payments", Self.payment(Self.applePay(token), account: "Other"), idempotencyKey: "key-2")
      #expect(wrong.status == 403)
      let right = try await Self.send(client, server, "/v71/payments", body, idempotencyKey: "key-2")
      #expect(right.status == 200)
      #expect(server.created(idempotencyKey: "key-2") == 1)
      // An executed refusal (an invalid token) is saved and replayed.
      let invalid = Self.payment(Self.applePay("bm90IGEgdG9rZW4="))
      let bad = try await Self.send(client, server, "/v71/payments", invalid, idempotencyKey: "key-3")
      let badAgain = try await Self.send(client, server, "/v71/payments", invalid, idempotencyKey: "key-3")
      #expect(bad.status == 422)
      #expect(badAgain.body == bad.body)
      #expect(server.requests.last?.replayed == true)
    }
  }

  @Test("a key still in progress is 409 704 with Transient-Error: true; then the first answer replays")
  func keyInProgress() async throws {
    try await Self.withServer { server, client, factory in
      let gate = AdyenTestServer.Gate()
      server.inject(.holdBeforeExecuting(gate), on: .payments)
      let body = Self.payment(Self.applePay(try Self.token(factory)))
      // The held request waits for the gate: its deadline bounds a hang, not the machine's speed.
      let held = Task {
        try await Self.send(client, server, "/v71/payments", body, idempotencyKey: "key-held", timeout: .seconds(120))
      }
      #expect(await gate.waitUntilReachedAsync(timeout: 60))
      let concurrent = try await Self.send(client, server, "/v71/payments", body, idempotencyKey: "key-held")
      #expect(concurrent.status == 409)
      #expect(
        concurrent.body
          == #"{"status":409,"errorCode":"704","message":"request already processed or in progress","errorType":"validation"}"#
      )
      #expect(concurrent.header("Transient-Error") == "true")
      #expect(server.paymentCount == 0)
      gate.release()
      let first = try await held.value
      #expect(first.status == 200)
      let replay = try await Self.send(client, server, "/v71/payments", body, idempotencyKey: "key-held")
      #expect(replay.body == first.body)
      #expect(server.paymentCount == 1)
    }
  }

  @Test("faults: 500 and 429 before executing, a reset, a held answer and a delay after, each on its route")
  func faults() async throws {
    try await Self.withServer { server, client, factory in
      let body = Self.payment(Self.applePay(try Self.token(factory)))
      server.inject(.serverErrorBeforeExecuting, on: .payments)
      server.inject(.rateLimited, on: .payments)
      server.inject(.resetAfterExecuting, on: .refunds)
      let error = try await Self.send(client, server, "/v71/payments", body, idempotencyKey: "key-f")
      #expect(error.status == 500)
      #expect(
        error.body
          == #"{"status":500,"errorCode":"000","message":"An unknown error occurred","errorType":"internal","pspReference":"TEST000000000001"}"#
      )
      let limited = try await Self.send(client, server, "/v71/payments", body, idempotencyKey: "key-f")
      #expect(limited.status == 429)
      #expect(
        limited.body == #"{"status":429,"errorCode":"00_500","message":"too many requests","errorType":"internal"}"#)
      #expect(limited.header("Retry-After") == nil)
      #expect(server.paymentCount == 0)
      let paid = try await Self.send(client, server, "/v71/payments", body, idempotencyKey: "key-f")
      #expect(paid.status == 200)
      #expect(server.payment("TEST000000000002")?["resultCode"] == "Authorised")
      await #expect(throws: (any Error).self) {
        _ = try await Self.send(
          client, server, "/v71/payments/TEST000000000002/refunds", Self.modification(amount: 100),
          idempotencyKey: "r-1")
      }
      #expect(server.refundCount == 1)
      #expect(server.requests.last?.status == 0)
      let retried = try await Self.send(
        client, server, "/v71/payments/TEST000000000002/refunds", Self.modification(amount: 100), idempotencyKey: "r-1")
      #expect(retried.status == 201)
      #expect(
        retried.body
          == #"{"merchantAccount":"PayServiceECOM","paymentPspReference":"TEST000000000002","pspReference":"TEST000000000003","status":"received","amount":{"currency":"USD","value":100}}"#
      )
      #expect(server.refundCount == 1)
      // An answer held after executing: the client's deadline passes first whatever the machine's load,
      // since the server answers only once the gate opens.
      let gate = AdyenTestServer.Gate()
      server.inject(.holdAfterExecuting(gate), on: .captures)
      await #expect(throws: HTTPClientError.deadlineExceeded) {
        _ = try await Self.send(
          client, server, "/v71/payments/TEST000000000002/captures", Self.modification(amount: 100),
          timeout: .milliseconds(300))
      }
      #expect(server.captureCount == 1)
      gate.release()
      server.inject(.delayAfterExecuting(seconds: 0.5), on: .captures)
      let delayedFrom = Date()
      let delayed = try await Self.send(
        client, server, "/v71/payments/TEST000000000002/captures", Self.modification(amount: 100))
      #expect(delayed.status == 201)
      #expect(Date().timeIntervalSince(delayedFrom) >= 0.5)
      #expect(server.captureCount == 2)
      server.setLatency(milliseconds: 300)
      let started = Date()
      _ = try await Self.send(client, server, "/v71/payments/TEST000000000002/cancels", Self.modification())
      #expect(Date().timeIntervalSince(started) >= 0.3)
    }
  }

  @Test(
    "an answer can carry another amount, currency or reference than was sent; the saved answer is true",
    arguments: [
      (AdyenTestServer.Tamper.amount(1), #"{"currency":"USD","value":1}"#, "order-1"),
      (.currency("EUR"), #"{"currency":"EUR","value":1999}"#, "order-1"),
      (.reference("order-2"), #"{"currency":"USD","value":1999}"#, "order-2"),
    ])
  func tamper(change: AdyenTestServer.Tamper, amount: String, reference: String) async throws {
    try await Self.withServer { server, client, factory in
      server.inject(.tamper(change), on: .payments)
      let body = Self.payment(Self.applePay(try Self.token(factory)), extra: Self.manual)
      let answer = try await Self.send(client, server, "/v71/payments", body, idempotencyKey: "key-t")
      #expect(
        answer.body
          == #"{"amount":\#(amount),"merchantReference":"\#(reference)","paymentMethod":{"brand":"visa","type":"applepay"},"pspReference":"TEST000000000001","resultCode":"Authorised"}"#
      )
      let replay = try await Self.send(client, server, "/v71/payments", body, idempotencyKey: "key-t")
      #expect(
        replay.body
          == #"{"amount":{"currency":"USD","value":1999},"merchantReference":"order-1","paymentMethod":{"brand":"visa","type":"applepay"},"pspReference":"TEST000000000001","resultCode":"Authorised"}"#
      )
      #expect(server.payment("TEST000000000001")?["value"] == "1999")
      server.inject(.tamper(change), on: .captures)
      let capture = try await Self.send(
        client, server, "/v71/payments/TEST000000000001/captures", Self.modification(amount: 1999, reference: "order-1")
      )
      #expect(
        capture.body
          == #"{"merchantAccount":"PayServiceECOM","paymentPspReference":"TEST000000000001","reference":"\#(reference)","pspReference":"TEST000000000002","status":"received","amount":\#(amount)}"#
      )
      #expect(server.payment("TEST000000000001")?["captured"] == "1999")
    }
  }
}
