import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// `payservice call`: one request from a shell, its result on stdout and its status as the exit code.
@Suite("call command")
struct CallCommandTests {
  static let common = ["--config", TestConfig.yamlPath, "--database", ":memory:", "--now", "2026-11-21T12:00:00Z"]
  static let clockResult =
    #"{"currencyCode":"USD","shippingMethod":"free","summaryItems":[{"label":"Clock","amount":"50.00","type":"final"},{"label":"Shipping","amount":"0.00","type":"final"},{"label":"Tax","amount":"4.00","type":"final"},{"label":"Acme","amount":"54.00","type":"final"}]}"#

  @Test("a result prints its JSON on stdout, nothing on stderr, and exits 0")
  func result() throws {
    let call = try PayserviceProcess.run(["call", "computeSummaryItems", #"{"items":[{"sku":"clock"}]}"#] + Self.common)
    #expect(call.status == 0)
    #expect(call.stdoutText == Self.clockResult + "\n")
    #expect(call.stderr == "")
  }

  @Test("params from stdin with -")
  func paramsFromStdin() throws {
    let call = try PayserviceProcess.run(
      ["call", "computeSummaryItems", "-"] + Self.common, stdin: Data(#"{"items":[{"sku":"clock"}]}"#.utf8))
    #expect(call.status == 0)
    #expect(call.stdoutText == Self.clockResult + "\n")
  }

  @Test("invalid params: the error object on stdout, each problem with its path on stderr, exit 1")
  func invalidParams() throws {
    let call = try PayserviceProcess.run(
      ["call", "computeSummaryItems", #"{"items":[{"sku":"clock","quantity":0}]}"#] + Self.common)
    #expect(call.status == 1)
    #expect(
      call.stdoutText
        == #"{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"items[0].quantity","message":"must be an integer from 1 to 9999, got 0"}]}}"#
        + "\n")
    #expect(
      call.stderr == "payservice: Invalid params (-32602)\n  items[0].quantity: must be an integer from 1 to 9999, got 0\n")
  }

  @Test("an unknown method and params that are not JSON are errors too")
  func otherErrors() throws {
    let unknown = try PayserviceProcess.run(["call", "nope"] + Self.common)
    #expect(unknown.status == 1)
    #expect(unknown.stdoutText == #"{"code":-32601,"message":"Method not found: nope"}"# + "\n")
    #expect(unknown.stderr == "payservice: Method not found: nope (-32601)\n")
    let broken = try PayserviceProcess.run(["call", "computeSummaryItems", #"{"items":"#] + Self.common)
    #expect(broken.status == 1)
    #expect(
      broken.stdoutText
        == #"{"code":-32700,"message":"Parse error: the params are not JSON: unexpected end of input at byte 9"}"# + "\n")
  }

  @Test("--list prints the served methods; an invalid config exits 2 with nothing on stdout")
  func listAndConfig() throws {
    let list = try PayserviceProcess.run(["call", "--list"])
    #expect(list.status == 0)
    #expect(list.stdoutText == MethodRegistry.methods.map { $0.name + "\n" }.joined())
    #expect(list.stdoutText.hasPrefix("createPaymentRequest\nstartMerchantSession\ncomputeSummaryItems\n"))
    let backOffice = try PayserviceProcess.run(["call", "--list", "--back-office"])
    #expect(
      backOffice.stdoutText
        == list.stdoutText
        + "getOrder\ncaptureOrder\ncancelOrder\nrefundOrder\nlistOrders\nadjustStock\nlistStock\nerasePersonalData\nreloadConfig\n"
        + "reconcileStripe\nresolvePending\npayoutReport\nrunBilling\nreloadBalance\ngetAgreement\nlistAgreements\ncancelAgreement\n"
        + "syncAppStoreHistory\nrecoverAppStoreNotifications\nlistAppStoreNotifications\nshipOrder\n")
    // Without the flag the back office is not there: -32601, exit 1.
    let gated = try PayserviceProcess.run(
      ["call", "listOrders", "{}", "--config", TestConfig.yamlPath, "--database", ":memory:"])
    #expect(gated.status == 1)
    #expect(gated.stdoutText == #"{"code":-32601,"message":"Method not found: listOrders"}"# + "\n")
    let served = try PayserviceProcess.run(
      ["call", "listOrders", "{}", "--config", TestConfig.yamlPath, "--database", ":memory:", "--back-office"])
    #expect(served.status == 0)
    #expect(served.stdoutText == #"{"orders":[],"nextCursor":null}"# + "\n")
    let broken = try PayserviceProcess.run(["call", "listProducts", "--config", "/nonexistent/config.yaml"])
    #expect(broken.status == 2)
    #expect(broken.stdout.isEmpty)
    #expect(broken.stderr.contains("/nonexistent/config.yaml: cannot read the file"))
  }

  @Test("--pretty indents the same JSON")
  func pretty() throws {
    let call = try PayserviceProcess.run(
      ["call", "computeSummaryItems", #"{"items":[{"sku":"clock"}]}"#, "--pretty"] + Self.common)
    #expect(call.status == 0)
    #expect(
      call.stdoutText == """
        {
          "currencyCode": "USD",
          "shippingMethod": "free",
          "summaryItems": [
            {
              "label": "Clock",
              "amount": "50.00",
              "type": "final"
            },
            {
              "label": "Shipping",
              "amount": "0.00",
              "type": "final"
            },
            {
              "label": "Tax",
              "amount": "4.00",
              "type": "final"
            },
            {
              "label": "Acme",
              "amount": "54.00",
              "type": "final"
            }
          ]
        }

        """)
    #expect(try JSONParser.parse(call.stdoutText) == JSONParser.parse(Self.clockResult))
  }

  @Test("orders made with call are kept in the store file")
  func storeFile() throws {
    let store = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
    let args = ["--config", TestConfig.yamlPath, "--database", store, "--now", "2026-11-21T12:00:00Z"]
    let contact =
      #"{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}"#
    let authorized = try PayserviceProcess.run(
      ["call", "authorizePayment",
       #"{"items":[{"sku":"clock"}],"shippingMethod":"free","payment":{"token":{"paymentData":"tok_visa","paymentMethod":{"displayName":"Visa","network":"visa","type":"credit"},"transactionIdentifier":"T"},"shippingContact":\#(contact),"billingContact":\#(contact)}}"#]
        + args)
    #expect(authorized.status == 0)
    let result = try JSONParser.parse(authorized.stdoutText)
    let token = try #require(result["chargeToken"]?.stringValue)
    let order = try PayserviceProcess.run(
      ["call", "processOrder",
       #"{"chargeToken":"\#(token)","items":[{"sku":"clock"}],"shippingMethod":"free","shippingContact":\#(contact),"amount":"\#(result["amount"]!.stringValue!)","currencyCode":"USD"}"#]
        + args)
    #expect(order.status == 0)
    #expect(try JSONParser.parse(order.stdoutText)["status"] == .string("succeeded"))
    let products = try PayserviceProcess.run(["call", "listProducts"] + args)
    #expect(products.stdoutText.contains(#"{"sku":"clock","name":"Clock","description":"Wooden wall clock","price":"50.00","quantityOnHand":9,"#))
  }

  @Test("shell completion scripts name the call command")
  func completion() throws {
    let script = try PayserviceProcess.run(["--generate-completion-script", "bash"])
    #expect(script.status == 0)
    #expect(script.stdoutText.contains("call"))
    #expect(script.stdoutText.contains("--pretty"))
  }
}
