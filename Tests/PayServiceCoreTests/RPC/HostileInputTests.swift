import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Hostile bytes on stdin, through the whole server: each kind has an exact expectation, and the
/// fuzzer's corpus and crashers are replayed through the same oracle the fuzzer uses.
@Suite("Hostile input")
struct HostileInputTests {
  static let fuzzRoot = TestPaths.packageRoot.appendingPathComponent("Fuzz")

  static func fuzzFiles(_ folder: String) -> [String] {
    let directory = fuzzRoot.appendingPathComponent(folder).path
    return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
      .filter { !$0.hasPrefix(".") }.sorted().map { "\(folder)/\($0)" }
  }

  /// Counted exactly, so a corpus that loses files fails here; update the count when adding inputs
  /// to Fuzz/corpus on purpose (Fuzz/run.sh keeps what it finds in a scratch directory).
  @Test("the fuzz corpus holds its 123 inputs") func corpusExists() {
    #expect(Self.fuzzFiles("corpus").count == 123)
  }

  @Test("every fuzz corpus and crasher file satisfies both targets' oracles", arguments: fuzzFiles("corpus") + fuzzFiles("crashers"))
  func replay(file: String) throws {
    let bytes = try Array(Data(contentsOf: Self.fuzzRoot.appendingPathComponent(file)))
    #expect(FuzzOracle().check(bytes) == nil)
    #expect(try RequestFuzzOracle().check(bytes) == nil)
  }

  @Test("the signed corpus holds its 11 seeds and the year-10000 input the fuzzer found, and each is answered by the signed target's oracle", arguments: fuzzFiles("corpus-signed"))
  func replaySigned(file: String) throws {
    #expect(Self.fuzzFiles("corpus-signed").count == 12)
    let bytes = try Array(Data(contentsOf: Self.fuzzRoot.appendingPathComponent(file)))
    let oracle = try SignedPayloadOracle()
    #expect(oracle.request(bytes) != nil)
    #expect(oracle.check(bytes) == nil)
  }

  @Test("the signed target signs Adyen items so that they verify, whatever they claim")
  func adyenSigned() throws {
    let bytes = try Array(Data(contentsOf: Self.fuzzRoot.appendingPathComponent("corpus-signed/adyen-authorisation-refund")))
    let oracle = try SignedPayloadOracle()
    #expect(
      oracle.answer(bytes)
        == #"{"jsonrpc":"2.0","id":1,"result":{"status":"succeeded","reply":"[accepted]","items":[{"pspReference":"NC6HT9CRT65ZGN82","eventCode":"AUTHORISATION","success":true,"effect":"none"},{"pspReference":"QFQTPCQ8HXSKGK82","eventCode":"REFUND_FAILED","success":false,"effect":"none"}],"refused":[]}}"#
    )
  }

  @Test("the signed target encrypts Apple Pay claims so that they decrypt and authorize, whatever merchant token they claim")
  func applePaySigned() throws {
    let oracle = try SignedPayloadOracle()
    func answer(_ name: String) throws -> JSONValue {
      let bytes = try Array(Data(contentsOf: Self.fuzzRoot.appendingPathComponent("corpus-signed/\(name)")))
      return try JSONParser.parse(try #require(oracle.answer(bytes)))
    }
    #expect(try answer("applepay-device-token")["result"]?["status"]?.stringValue == "success")
    #expect(try answer("applepay-merchant-token")["result"]?["status"]?.stringValue == "success")
    #expect(try answer("applepay-hostile-metadata")["result"]?["status"]?.stringValue == "success")
    // The same claims again are the same transaction id: a replay.
    #expect(
      try answer("applepay-merchant-token")["result"]?["errors"]?[0]?["message"]?.stringValue?
        .hasPrefix("this payment token was already used") == true)
    #expect(
      try answer("applepay-identifier-129")["result"]?["errors"]?[0]?["message"]?.stringValue
        == "the decrypted payment data is invalid: merchantTokenIdentifier must be 1 to 128 letters, digits, - and _ when present")
  }

  @Test("the signed target's oracle knows the card number, cryptogram and EMV data an answer must not hold")
  func applePaySecrets() {
    func secrets(_ claims: String) -> [String] {
      SignedPayloadOracle.secrets(in: Array(claims.utf8)).map { "\($0.name)=\($0.value)" }
    }
    #expect(
      secrets(#"{"applicationPrimaryAccountNumber":"4109370251004320","paymentData":{"onlinePaymentCryptogram":"Af9x/QwAA/DjmU65oyc1MAABAAA="}}"#)
        == ["card number=4109370251004320", "onlinePaymentCryptogram=Af9x/QwAA/DjmU65oyc1MAABAAA="])
    #expect(
      secrets(#"{"applicationPrimaryAccountNumber":"4109370251004320","paymentData":{"emvData":"ZmFrZS1lbXYtZGF0YQ==","encryptedPINData":"short"}}"#)
        == ["card number=4109370251004320", "emvData=ZmFrZS1lbXYtZGF0YQ=="])
    // Held elsewhere in the claims (the card's metadata is not secret), too short, or not digits: not checked.
    #expect(
      secrets(#"{"applicationPrimaryAccountNumber":"4109370251004320","merchantTokenMetadata":{"cardMetadata":{"longDescription":"4109370251004320"}}}"#)
        == [])
    #expect(secrets(#"{"applicationPrimaryAccountNumber":"41093702510"}"#) == [])
    #expect(secrets(#"{"applicationPrimaryAccountNumber":"4109-3702-5100-4320"}"#) == [])
    #expect(secrets("not JSON") == [])
  }

  @Test("the oracle rejects broken answers (it can fail)")
  func oracleCanFail() {
    let line = Array(#"{"jsonrpc":"2.0","id":1,"method":"listProducts"}"#.utf8) + [0x0A]
    #expect(FuzzOracle.verify(input: line, output: Array("{}\n".utf8)) != nil)
    #expect(FuzzOracle.verify(input: line, output: Array(#"{"jsonrpc":"2.0","id":1}"#.utf8) + [0x0A]) != nil)
    #expect(FuzzOracle.verify(input: line, output: Array(#"{"jsonrpc":"2.0","id":1,"result":1}"#.utf8)) != nil)
    let two = Array(#"{"jsonrpc":"2.0","id":1,"result":1}"#.utf8) + [0x0A]
    #expect(FuzzOracle.verify(input: line, output: two + two) != nil)
    #expect(FuzzOracle.verify(input: line, output: two) == nil)
  }

  /// `method` with `params` (JSON text) as request `id`, answered by the back office.
  func call(_ id: Int, _ method: String, _ params: String) -> String {
    answer(Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#.utf8))
  }

  /// The -32602 answer to request `id` listing `errors` (path, message).
  func invalid(_ id: Int, _ errors: [(String, String)]) -> String {
    let list = errors.map { #"{"path":"\#($0.0)","message":"\#($0.1)"}"# }.joined(separator: ",")
    return #"{"jsonrpc":"2.0","id":\#(id),"error":{"code":-32602,"message":"Invalid params","data":{"errors":[\#(list)]}}}"#
  }

  func answer(_ line: [UInt8]) -> String {
    let handler = TestConfig.handler(try! TestConfig.context(backOffice: true), backOffice: true)
    return handler.handle(line: line).map { String(decoding: $0, as: UTF8.self) } ?? "<none>"
  }

  @Test("huge numbers: ids echo digit for digit, quantities are range-checked, amounts are strings")
  func hugeNumbers() {
    let digits = String(repeating: "9", count: 5_000)
    #expect(
      answer(Array(#"{"jsonrpc":"2.0","id":\#(digits),"method":"getOrder","params":{"orderId":"x"}}"#.utf8))
        == #"{"jsonrpc":"2.0","id":\#(digits),"error":{"code":-32003,"message":"Order not found: x"}}"#)
    #expect(
      answer(Array(#"{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{"items":[{"sku":"clock","quantity":1e400}]}}"#.utf8))
        == #"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"items[0].quantity","message":"must be an integer from 1 to 9999, got 1e400"}]}}}"#)
    #expect(
      answer(Array(#"{"jsonrpc":"2.0","id":2,"method":"processOrder","params":{"chargeToken":"t","items":[{"sku":"clock"}],"shippingMethod":"free","shippingContact":{},"amount":"\#(digits)","currencyCode":"USD"}}"#.utf8))
        == #"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"amount","message":"\"\#(digits)\" is too large"}]}}}"#)
  }

  @Test("stock and erasure integers at their extremes: in range a result that says why not, out of range -32602")
  func stockAndErasureExtremes() {
    let handler = TestConfig.handler(try! TestConfig.context(), backOffice: true)
    func adjust(_ id: Int, _ member: String) -> String {
      let line = #"{"jsonrpc":"2.0","id":\#(id),"method":"adjustStock","params":{"adjustmentId":"k\#(id)","sku":"mug",\#(member),"reason":"r"}}"#
      return handler.handle(line: Array(line.utf8)).map { String(decoding: $0, as: UTF8.self) } ?? "<none>"
    }
    func invalid(_ id: Int, _ path: String, _ message: String) -> String {
      #"{"jsonrpc":"2.0","id":\#(id),"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"\#(path)","message":"\#(message)"}]}}}"#
    }
    #expect(
      adjust(1, #""delta":1000000000"#)
        == #"{"jsonrpc":"2.0","id":1,"result":{"status":"failed","failureCode":"insufficient_stock","message":"mug would have 1000000100 on hand; the store holds at most 1000000000 of a sku."}}"#)
    #expect(adjust(2, #""delta":1000000001"#) == invalid(2, "delta", "must be an integer from -1000000000 to 1000000000, got 1000000001"))
    #expect(
      adjust(3, #""delta":-1000000000"#)
        == #"{"jsonrpc":"2.0","id":3,"result":{"status":"failed","failureCode":"insufficient_stock","message":"mug has 100 on hand; at most 100 can be taken off."}}"#)
    #expect(
      adjust(4, #""delta":-9223372036854775809"#)
        == invalid(4, "delta", "must be an integer from -1000000000 to 1000000000, got -9223372036854775809"))
    #expect(adjust(5, #""set":-1"#) == invalid(5, "set", "must be an integer from 0 to 1000000000, got -1"))
    #expect(adjust(6, #""set":1e400"#) == invalid(6, "set", "must be an integer from 0 to 1000000000, got 1e400"))
    #expect(
      adjust(7, #""set":1000000000"#)
        == #"{"jsonrpc":"2.0","id":7,"result":{"status":"succeeded","adjustmentId":"k7","sku":"mug","delta":999999900,"quantityBefore":100,"quantityOnHand":1000000000,"at":"2026-11-21T12:00:00Z"}}"#)
    #expect(
      adjust(8, #""delta":1"#)
        == #"{"jsonrpc":"2.0","id":8,"result":{"status":"failed","failureCode":"insufficient_stock","message":"mug would have 1000000001 on hand; the store holds at most 1000000000 of a sku."}}"#)
    for (id, limit) in [(9, "0"), (10, "5001"), (11, "18446744073709551616")] {
      let line = #"{"jsonrpc":"2.0","id":\#(id),"method":"erasePersonalData","params":{"erasureId":"e","orderId":"o","limit":\#(limit)}}"#
      #expect(
        handler.handle(line: Array(line.utf8)).map { String(decoding: $0, as: UTF8.self) }
          == invalid(id, "limit", "must be an integer from 1 to 5000, got \(limit)"))
    }
    let line = #"{"jsonrpc":"2.0","id":12,"method":"erasePersonalData","params":{"erasureId":"e","orderId":"o","limit":5000}}"#
    #expect(
      handler.handle(line: Array(line.utf8)).map { String(decoding: $0, as: UTF8.self) }
        == #"{"jsonrpc":"2.0","id":12,"error":{"code":-32003,"message":"Order not found: o"}}"#)
  }

  @Test("a Stripe webhook's payload and signature at their limits: within them a result that says why not, past them -32602")
  func stripeWebhookExtremes() {
    func deliver(_ id: Int, payload: String, signature: String) -> String? {
      let params = JSONWriter.string(JSONValue.object(JSONObject([("payload", .string(payload)), ("signature", .string(signature))])))
      return answer(Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"processStripeEvent","params":\#(params)}"#.utf8))
    }
    func invalid(_ id: Int, _ path: String, _ message: String) -> String {
      #"{"jsonrpc":"2.0","id":\#(id),"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"\#(path)","message":"\#(message)"}]}}}"#
    }
    // This config's gateway is the sandbox: a delivery within the limits is answered not_configured.
    let notConfigured = #""result":{"status":"failed","failureCode":"not_configured","message":"this payservice's gateway is not Stripe: it takes no Stripe webhooks"}}"#
    let maxPayload = String(repeating: "x", count: ProcessStripeEvent.maxPayloadBytes)
    let maxSignature = "t=" + String(repeating: "9", count: 4094)
    #expect(deliver(1, payload: maxPayload, signature: maxSignature) == #"{"jsonrpc":"2.0","id":1,"# + notConfigured)
    #expect(deliver(2, payload: maxPayload + "x", signature: "") == invalid(2, "payload", "must be at most 1048576 bytes, got 1048577"))
    #expect(deliver(3, payload: "{}", signature: maxSignature + "9") == invalid(3, "signature", "must be at most 4096 bytes, got 4097"))
    #expect(deliver(4, payload: "", signature: "") == invalid(4, "payload", "must not be empty"))
  }

  @Test("the books' days and a reconciliation's time at their extremes: within them a result, past them -32602 naming the member")
  func booksExtremes() {
    let day = #"must be a day like \"2026-11-21\" (YYYY-MM-DD)"#
    #expect(
      call(1, "payoutReport", #"{"from":"9999-12-31","to":"9999-12-31"}"#)
        == #"{"jsonrpc":"2.0","id":1,"result":{"from":"9999-12-31","to":"9999-12-31","days":[],"totals":[]}}"#)
    #expect(
      call(2, "payoutReport", #"{"from":"2025-11-21","to":"2026-11-21"}"#)
        == #"{"jsonrpc":"2.0","id":2,"result":{"from":"2025-11-21","to":"2026-11-21","days":[],"totals":[]}}"#)
    #expect(
      call(3, "payoutReport", #"{"from":"2025-11-20","to":"2026-11-21"}"#)
        == invalid(3, [("to", "must be at most 366 days from from (both included)")]))
    #expect(call(4, "payoutReport", #"{"from":"2026-11-21","to":"2026-11-20"}"#) == invalid(4, [("to", "must be 2026-11-21 or later")]))
    #expect(call(5, "payoutReport", #"{"from":"2026-02-30","to":"2026-03-01"}"#) == invalid(5, [("from", day)]))
    #expect(call(6, "payoutReport", #"{"from":1e400,"to":"2026-11-21T00:00:00Z"}"#) == invalid(6, [("from", day), ("to", day)]))
    #expect(
      call(7, "reconcileStripe", #"{"since":"9999-12-31T23:59:59.5Z"}"#)
        == #"{"jsonrpc":"2.0","id":7,"result":{"status":"failed","failureCode":"not_configured","message":"This payservice's gateway is not Stripe: there is nothing to reconcile."}}"#)
    #expect(
      call(8, "reconcileStripe", #"{"since":"\#(String(repeating: "9", count: 100_000))"}"#)
        == invalid(8, [("since", #"must be an RFC 3339 time like \"2026-11-21T12:00:00Z\""#)]))
    #expect(
      call(9, "reconcileStripe", #"{"limit":2001,"cursor":"rc1_\#(Array("1\u{1F}charges\u{1F}".utf8).map { String(format: "%02x", $0) }.joined())"}"#)
        == invalid(9, [
          ("limit", "must be an integer from 1 to 2000, got 2001"), ("cursor", "must be a cursor reconcileStripe returned"),
        ]))
    #expect(call(10, "reconcileStripe", "{}") == invalid(10, [("since", "is required without cursor")]))
  }

  @Test("agreements' times, ids, balances and cursors at their extremes: within them a result, past them -32602 or -32005")
  func agreementExtremes() {
    let big = String(repeating: "x", count: 100_000)
    let time = #"must be an RFC 3339 time like \"2026-11-21T12:00:00Z\""#
    #expect(
      call(1, "runBilling", #"{"until":"9999-12-31T23:59:59Z"}"#)
        == invalid(1, [("until", "must not be after the service clock 2026-11-21T12:00:00Z")]))
    #expect(
      call(2, "runBilling", #"{"until":"0001-01-01T00:00:00Z"}"#)
        == #"{"jsonrpc":"2.0","id":2,"result":{"until":"0001-01-01T00:00:00Z","payments":[],"succeeded":0,"failed":0,"pending":0,"skipped":0,"ended":0,"charged":[],"cursor":null}}"#)
    #expect(call(3, "runBilling", #"{"until":1e400}"#) == invalid(3, [("until", time)]))
    // A limit past its bounds, a cursor of another method, one whose dates are past Int64 or whose
    // until is not the one given: refused, never trapped on.
    let billingCursor = "must be a cursor runBilling returned"
    func hex(_ text: String) -> String { Array(text.utf8).map { String(format: "%02x", $0) }.joined() }
    #expect(
      call(3, "runBilling", #"{"limit":0,"cursor":"ac1_00"}"#)
        == invalid(3, [("limit", "must be an integer from 1 to 2000, got 0"), ("cursor", billingCursor)]))
    #expect(call(3, "runBilling", #"{"limit":2001}"#) == invalid(3, [("limit", "must be an integer from 1 to 2000, got 2001")]))
    #expect(
      call(3, "runBilling", #"{"cursor":"bc1_\#(hex("99999999999999999999\u{1F}1\u{1F}agr_x\u{1F}"))"}"#)
        == invalid(3, [("cursor", billingCursor)]))
    #expect(
      call(3, "runBilling", #"{"cursor":"bc1_\#(hex("0\u{1F}1\u{1F}\u{1F}"))"}"#) == invalid(3, [("cursor", billingCursor)]))
    #expect(
      call(3, "runBilling", #"{"until":"2026-11-21T00:00:00Z","cursor":"bc1_\#(hex("0\u{1F}\u{1F}\u{1F}"))"}"#)
        == invalid(3, [
          ("until", "must be the cursor's until 1970-01-01T00:00:00Z, or left out to go on from the cursor")
        ]))
    #expect(
      call(3, "runBilling", #"{"cursor":"bc1_\#(hex("0\u{1F}\u{1F}\u{1F}agr_a agr_b"))"}"#)
        == #"{"jsonrpc":"2.0","id":3,"result":{"until":"1970-01-01T00:00:00Z","payments":[],"succeeded":0,"failed":0,"pending":0,"skipped":0,"ended":0,"charged":[],"cursor":null}}"#)
    // Shards past their bounds, or not the cursor's: refused; a cursor's shard within them goes on.
    #expect(
      call(3, "runBilling", #"{"shard":{"index":16,"of":17}}"#)
        == invalid(3, [
          ("shard.index", "must be an integer from 0 to 15, got 16"), ("shard.of", "must be an integer from 1 to 16, got 17"),
        ]))
    #expect(call(3, "runBilling", #"{"shard":{"index":4,"of":4}}"#) == invalid(3, [("shard.index", "must be below shard.of (4): 0 to 3")]))
    #expect(call(3, "runBilling", #"{"shard":{"index":0}}"#) == invalid(3, [("shard.of", "is required")]))
    #expect(
      call(3, "runBilling", #"{"cursor":"bc1_\#(hex("0\u{1F}\u{1F}\u{1F}\u{1F}4\u{1F}4"))"}"#) == invalid(3, [("cursor", billingCursor)]))
    #expect(
      call(3, "runBilling", #"{"shard":{"index":1,"of":4},"cursor":"bc1_\#(hex("0\u{1F}\u{1F}\u{1F}\u{1F}3\u{1F}4"))"}"#)
        == invalid(3, [("shard", "must be the cursor's shard, or left out to go on from the cursor")]))
    #expect(
      call(3, "runBilling", #"{"shard":{"index":3,"of":4},"cursor":"bc1_\#(hex("0\u{1F}\u{1F}\u{1F}\u{1F}3\u{1F}4"))"}"#)
        == #"{"jsonrpc":"2.0","id":3,"result":{"until":"1970-01-01T00:00:00Z","payments":[],"succeeded":0,"failed":0,"pending":0,"skipped":0,"ended":0,"charged":[],"cursor":null}}"#)
    #expect(
      call(4, "getAgreement", #"{"agreementId":"\#(big)"}"#)
        == #"{"jsonrpc":"2.0","id":4,"error":{"code":-32005,"message":"Agreement not found: \#(big)"}}"#)
    #expect(
      call(5, "reloadBalance", #"{"agreementId":"agr_x","balance":"99999999999999999999.99","reloadId":"r"}"#)
        == invalid(5, [("balance", #"\"99999999999999999999.99\" is too large"#)]))
    #expect(
      call(6, "reloadBalance", #"{"agreementId":"agr_x","balance":"-0.01","reloadId":"r"}"#)
        == #"{"jsonrpc":"2.0","id":6,"error":{"code":-32005,"message":"Agreement not found: agr_x"}}"#)
    #expect(
      call(7, "reloadBalance", #"{"agreementId":"agr_x","balance":"1.00","reloadId":"\#(String(repeating: "r", count: 256))"}"#)
        == invalid(7, [("reloadId", #"must be 1 to 255 printable ASCII characters (space to ~), like \"refund-1001-a\""#)]))
    #expect(
      call(8, "listAgreements", #"{"cursor":"ac1_zz","limit":101,"status":"late","dueBy":"never"}"#)
        == invalid(8, [
          ("status", #"must be one of active, past_due, action_required, unpaid, canceled, completed, got \"late\""#),
          ("dueBy", time), ("limit", "must be an integer from 1 to 100, got 101"),
          ("cursor", "must be a nextCursor listAgreements returned"),
        ]))
    // A cursor whose date is past Int64: refused, never trapped on.
    #expect(
      call(9, "listAgreements", #"{"cursor":"ac1_\#(Array("9999999999999999999999\u{1F}a".utf8).map { String(format: "%02x", $0) }.joined())"}"#)
        == invalid(9, [("cursor", "must be a nextCursor listAgreements returned")]))
    // One longer than any listAgreements writes: refused before it is decoded.
    #expect(
      call(9, "listAgreements", #"{"cursor":"ac1_311f\#(String(repeating: "61", count: 1100))"}"#)
        == invalid(9, [("cursor", "must be a nextCursor listAgreements returned")]))
    #expect(
      call(10, "cancelAgreement", #"{"agreementId":"agr_x","cancelId":"c","atPeriodEnd":"yes"}"#)
        == invalid(10, [("atPeriodEnd", "must be a boolean, got a string")]))
    #expect(
      call(11, "cancelAgreement", #"{"agreementId":"agr_x","cancelId":"c"}"#)
        == #"{"jsonrpc":"2.0","id":11,"error":{"code":-32005,"message":"Agreement not found: agr_x"}}"#)
    #expect(
      call(12, "listAgreements", #"{"dueBy":"9999-12-31T23:59:59Z","limit":100}"#)
        == #"{"jsonrpc":"2.0","id":12,"result":{"agreements":[],"nextCursor":null}}"#)
  }

  @Test("App Store items, accounts, units and times at their extremes: within them a result that says why not, past them -32602")
  func appStoreExtremes() throws {
    let shop = try AppStoreShop()
    let handler = TestConfig.handler(try TestConfig.context(config: shop.config(), backOffice: true), backOffice: true)
    func ask(_ id: Int, _ method: String, _ params: String) -> String {
      handler.handle(line: Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#.utf8))
        .map { String(decoding: $0, as: UTF8.self) } ?? "<none>"
    }
    let maxSigned = String(repeating: "x", count: VerifyAppStoreTransaction.maxSignedBytes)
    #expect(
      ask(1, "verifyAppStoreTransaction", #"{"signedTransaction":"\#(maxSigned)"}"#)
        == #"{"jsonrpc":"2.0","id":1,"result":{"status":"failed","failureCode":"invalid_format","message":"signedTransaction: not a compact JWS: three base64url parts joined by dots"}}"#)
    #expect(
      ask(2, "verifyAppStoreTransaction", #"{"signedTransaction":"\#(maxSigned)x"}"#)
        == invalid(2, [("signedTransaction", "must be at most 65536 bytes, got 65537")]))
    #expect(
      ask(3, "verifyAppStoreTransaction", #"{"signedTransaction":"a.b.c","appReceipt":"x"}"#)
        == invalid(3, [("", "give exactly one of signedTransaction (StoreKit 2) or appReceipt (original StoreKit)")]))
    #expect(
      ask(4, "verifyAppStoreTransaction", #"{"signedTransaction":"a.b.c","appAccountToken":"not-a-uuid"}"#)
        == invalid(4, [("appAccountToken", "must be a UUID like 7e3fb20b-4cdb-47cc-936d-99d65f608138")]))
    // A payload past Int64 in its dates is refused by name, never trapped on.
    let huge = try shop.authority.sign(
      #"{"transactionId":"1","originalTransactionId":"1","productId":"com.example.beans.coins100","type":"Consumable","purchaseDate":99999999999999999999999,"quantity":1,"environment":"Sandbox","bundleId":"com.example.beans","signedDate":1790000000000}"#)
    #expect(
      ask(5, "verifyAppStoreTransaction", #"{"signedTransaction":"\#(huge)"}"#)
        == #"{"jsonrpc":"2.0","id":5,"result":{"status":"failed","failureCode":"invalid_format","message":"signedTransaction: purchaseDate must be a whole number from 0 to 253402300799999"}}"#)
    #expect(
      ask(6, "consumeUnits", #"{"account":"a","entitlement":"coins","units":1000000001,"consumptionId":"c"}"#)
        == invalid(6, [("units", "must be an integer from 1 to 1000000000, got 1000000001")]))
    #expect(
      ask(7, "consumeUnits", #"{"account":"a","entitlement":"coins","units":1000000000,"consumptionId":"c"}"#)
        == #"{"jsonrpc":"2.0","id":7,"result":{"status":"failed","failureCode":"insufficient_units","message":"the balance of coins is 0, less than the 1000000000 asked for: nothing was spent","balance":{"entitlement":"coins","units":0,"purchased":0,"refunded":0,"consumed":0}}}"#)
    #expect(
      ask(8, "getEntitlements", #"{"originalTransactionId":"\#(String(repeating: "9", count: 65))"}"#)
        == invalid(8, [("originalTransactionId", #"must be an App Store transaction id: 1 to 64 printable ASCII characters, like \"2000000123456789\""#)]))
    #expect(
      ask(9, "getEntitlements", "{}")
        == invalid(9, [("", "name the account by exactly one of appAccountToken or originalTransactionId")]))
    #expect(
      ask(10, "recoverAppStoreNotifications", #"{"since":"2026-05-24T12:00:00Z"}"#)
        == invalid(10, [("since", "must be within Apple's 180 days of notification history: at or after 2026-05-25T12:00:00Z")]))
    #expect(
      ask(11, "recoverAppStoreNotifications", #"{"since":"2026-11-21T12:00:00Z"}"#)
        == invalid(11, [("since", "must be before until (2026-11-21T12:00:00Z)")]))
    #expect(
      ask(12, "recoverAppStoreNotifications", #"{"since":"2026-11-20T12:00:00Z"}"#)
        == #"{"jsonrpc":"2.0","id":12,"result":{"status":"failed","failureCode":"not_configured","message":"this payservice's config has no appStore.api key: it cannot ask the App Store Server API (add keyFile, keyId and issuerId)"}}"#)
    #expect(
      ask(13, "processAppStoreNotification", #"{"signedPayload":"\#(String(repeating: "x", count: ProcessAppStoreNotification.maxPayloadBytes + 1))"}"#)
        == invalid(13, [("signedPayload", "must be at most 262144 bytes, got 262145")]))
    #expect(
      ask(14, "listAppStoreNotifications", #"{"type":"refund","limit":0,"cursor":"an1_zz"}"#)
        == invalid(14, [
          ("type", "must be a notificationType like CONSUMPTION_REQUEST (upper-case letters and _)"),
          ("limit", "must be an integer from 1 to 100, got 0"),
          ("cursor", "must be a nextCursor listAppStoreNotifications returned"),
        ]))
    // A cursor whose date is past Int64: refused, never trapped on.
    #expect(
      ask(15, "listAppStoreNotifications", #"{"cursor":"an1_\#(Array("99999999999999999999\u{1F}u".utf8).map { String(format: "%02x", $0) }.joined())"}"#)
        == invalid(15, [("cursor", "must be a nextCursor listAppStoreNotifications returned")]))
    #expect(
      ask(17, "listAppStoreNotifications", #"{"limit":101}"#)
        == invalid(17, [("limit", "must be an integer from 1 to 100, got 101")]))
    #expect(
      ask(18, "consumeUnits", #"{"account":"a","entitlement":"coins","units":0,"consumptionId":"c"}"#)
        == invalid(18, [("units", "must be an integer from 1 to 1000000000, got 0")]))
    #expect(
      ask(19, "consumeUnits", #"{"account":"a","entitlement":"coins","units":1e400,"consumptionId":"c"}"#)
        == invalid(19, [("units", "must be an integer from 1 to 1000000000, got 1e400")]))
    #expect(
      ask(16, "listAppStoreNotifications", #"{"type":"CONSUMPTION_REQUEST","limit":100}"#)
        == #"{"jsonrpc":"2.0","id":16,"result":{"notifications":[],"nextCursor":null}}"#)
  }

  @Test("huge strings: coupon codes are capped at 256 bytes, a 500 KB order id is simply not found")
  func hugeStrings() {
    let big = String(repeating: "x", count: 500_000)
    #expect(
      answer(Array(#"{"jsonrpc":"2.0","id":1,"method":"changeCouponCode","params":{"items":[{"sku":"clock"}],"couponCode":"\#(big)"}}"#.utf8))
        == #"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"couponCode","message":"must be at most 256 bytes, got 500000"}]}}}"#)
    #expect(
      answer(Array(#"{"jsonrpc":"2.0","id":2,"method":"getOrder","params":{"orderId":"\#(big)"}}"#.utf8))
        == #"{"jsonrpc":"2.0","id":2,"error":{"code":-32003,"message":"Order not found: \#(big)"}}"#)
  }

  @Test("lone surrogates become U+FFFD; raw NUL bytes and invalid UTF-8 are parse errors")
  func surrogatesAndNUL() {
    #expect(
      answer(Array(#"{"jsonrpc":"2.0","id":"a\ud800b","method":"getOrder","params":{"orderId":"\udc00"}}"#.utf8))
        == "{\"jsonrpc\":\"2.0\",\"id\":\"a\u{FFFD}b\",\"error\":{\"code\":-32003,\"message\":\"Order not found: \u{FFFD}\"}}")
    var withNUL = Array(#"{"jsonrpc":"2.0","id":1,"method":"listProducts"}"#.utf8)
    withNUL.insert(0, at: 10)
    #expect(answer(withNUL).hasPrefix(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: "#))
    #expect(answer([0xFF, 0xFE, 0x7B, 0x7D]).hasPrefix(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#))
    // An escaped NUL is a valid character and is echoed escaped.
    #expect(
      answer(Array(#"{"jsonrpc":"2.0","id":"\u0000","method":"getOrder","params":{"orderId":"x"}}"#.utf8))
        == #"{"jsonrpc":"2.0","id":"\u0000","error":{"code":-32003,"message":"Order not found: x"}}"#)
  }

  @Test("deep nesting is one parse error; a batch of 100 entries answers each, one of 10,000 is one -32600")
  func nestingAndBatches() {
    let deep = Array((String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)).utf8)
    #expect(answer(deep).hasPrefix(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#))
    let entry = #"{"jsonrpc":"2.0","id":1,"method":"listShippingMethods"}"#
    let batch = Array(("[" + Array(repeating: entry, count: 100).joined(separator: ",") + "]").utf8)
    let reply = answer(batch)
    #expect(reply.hasPrefix("[") && reply.hasSuffix("]"))
    #expect(reply.components(separatedBy: #""jsonrpc":"2.0""#).count - 1 == 100)
    let long = Array(("[" + Array(repeating: entry, count: 10_000).joined(separator: ",") + "]").utf8)
    #expect(
      answer(long)
        == #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a batch holds at most 100 requests, this one 10000; none was run"}}"#
    )
  }
}
