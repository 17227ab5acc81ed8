import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

@Suite("MCP endpoint")
struct MCPEndpointTests {
  /// A back-office process's handler: its tools include getOrder, which reads the store.
  static func handler() throws -> RequestHandler { TestConfig.handler(try TestConfig.context(), backOffice: true) }

  static func result(_ response: JSONValue) -> JSONObject {
    if case .object(let object) = response, case .object(let result)? = object["result"] { return result }
    Issue.record("no result in \(JSONWriter.string(response))")
    return JSONObject()
  }

  @Test("initialize answers the client's revision when payservice speaks it, else the newest")
  func negotiation() throws {
    #expect(MCPEndpoint.negotiate("2025-11-25") == "2025-11-25")
    #expect(MCPEndpoint.negotiate("2025-06-18") == "2025-06-18")
    #expect(MCPEndpoint.negotiate("2024-11-05") == "2025-11-25")
    #expect(MCPEndpoint.negotiate("2026-07-28") == "2025-11-25")
    let handler = TestConfig.handler(try TestConfig.context())
    let answer = handler.respond(
      #"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
    #expect(
      answer
        == #"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"payservice","title":"payservice: Apple Pay checkout","version":"\#(PayServiceVersion.current)"},"instructions":"payservice prices Apple Pay carts, answers the payment sheet's events, authorizes payments and records orders for one configured shop. Start with listProducts and listShippingMethods to learn the skus and shipping method identifiers. Amounts are decimal strings in the merchant currency. To buy: authorizePayment gives a chargeToken, then processOrder with the same cart and the amount."}}"#)
    #expect(
      handler.respond(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":7}}"#)
        == #"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"protocolVersion","message":"must be a string, got a number"}]}}}"#)
  }

  static func object(_ value: JSONValue?, _ what: String) throws -> JSONObject {
    try #require(value.flatMap { if case .object(let object) = $0 { object } else { nil } }, "\(what) is an object")
  }

  static func array(_ value: JSONValue?, _ what: String) throws -> [JSONValue] {
    try #require(value.flatMap { if case .array(let elements) = $0 { elements } else { nil } }, "\(what) is an array")
  }

  @Test("tools/list has one tool per method, with the OpenRPC schemas and the hints", arguments: [false, true])
  func toolsList(backOffice: Bool) throws {
    let handler = TestConfig.handler(try TestConfig.context(), backOffice: backOffice)
    let served = MethodRegistry.methods(backOffice: backOffice)
    let tools = try Self.array(Self.result(handler.call("tools/list"))["tools"], "tools")
    let document = backOffice ? OpenRPCDocument.backOfficeJSON : OpenRPCDocument.json
    let methods = try Self.array(try Self.object(document, "the document")["methods"], "methods")
    #expect(tools.count == served.count)
    #expect(methods.count == served.count)
    #expect(served.count == (backOffice ? 45 : 24))
    let readOnly: Set = [
      "createPaymentRequest", "startMerchantSession", "computeSummaryItems", "selectShippingContact", "selectShippingMethod", "selectPaymentMethod", "changeCouponCode",
      "listProducts", "listShippingMethods", "health", "getOrder", "listOrders", "listStock", "payoutReport",
      "getAgreement", "listAgreements", "getEntitlements", "listAppStoreNotifications", "getWalletOrder",
      "listChangedWalletOrders",
    ]
    // A merchant session is read-only for payservice, but each validation URL is good for one session.
    let idempotent = readOnly.subtracting(["startMerchantSession"]).union([
      "processOrder", "captureOrder", "cancelOrder", "refundOrder", "adjustStock", "erasePersonalData", "reloadConfig",
      "processStripeEvent", "processAdyenNotification", "processMerchantTokenNotification", "reconcileStripe", "resolvePending", "runBilling", "reloadBalance", "cancelAgreement",
      "verifyAppStoreTransaction", "processAppStoreNotification", "consumeUnits", "syncAppStoreHistory",
      "recoverAppStoreNotifications", "registerWalletDevice", "unregisterWalletDevice", "shipOrder",
    ])
    let destructive: Set = ["cancelOrder", "refundOrder", "erasePersonalData", "cancelAgreement", "consumeUnits"]
    for (index, method) in served.enumerated() {
      let tool = try Self.object(tools[index], "tool \(index)")
      let described = try Self.object(methods[index], "method \(index)")
      #expect(tool.keys == ["name", "description", "inputSchema", "outputSchema", "annotations"])
      #expect(tool["name"] == .string(method.name))
      #expect(tool["inputSchema"] == method.description.paramsSchema.json)
      #expect(tool["outputSchema"] == method.description.result.json)
      // The same schemas as OpenRPC: each param's schema and the result's.
      let properties = try Self.object(try Self.object(tool["inputSchema"], "inputSchema")["properties"], "properties")
      let params = try Self.array(described["params"], "params").map { try Self.object($0, "param") }
      #expect(properties.keys == params.map { $0["name"] }.map { if case .string(let name)? = $0 { name } else { "?" } })
      for param in params {
        let name = try #require(param["name"].flatMap { if case .string(let name) = $0 { name } else { nil } })
        #expect(properties[name] == param["schema"], "\(method.name).\(name)")
      }
      #expect(tool["outputSchema"] == (try Self.object(described["result"], "result"))["schema"])
      #expect(
        tool["annotations"]
          == .object(
            JSONObject([
              ("readOnlyHint", .bool(readOnly.contains(method.name))),
              ("destructiveHint", .bool(destructive.contains(method.name))),
              ("idempotentHint", .bool(idempotent.contains(method.name))),
            ])), "\(method.name)")
      let text = try #require(tool["description"].flatMap { if case .string(let text) = $0 { text } else { nil } })
      #expect(text.hasPrefix(method.description.summary + "\n\n"))
      #expect(text.count > 150, "\(method.name)'s description says enough to act on")
      for (name, schema) in [("inputSchema", tool["inputSchema"]), ("outputSchema", tool["outputSchema"])] {
        #expect(JSONSchemaValidator.schemaProblems(schema ?? .null, at: method.name) == [])
        #expect(try Self.object(schema, name)["type"] == .string("object"))
      }
    }
  }

  @Test("tools/call gives the method's result as structuredContent and as a text block")
  func toolCall() throws {
    let handler = try Self.handler()
    let params = #"{"items":[{"sku":"clock","quantity":2}],"couponCode":"nope"}"#
    let direct = Self.result(handler.call("computeSummaryItems", params))
    let tool = Self.result(handler.call("tools/call", #"{"name":"computeSummaryItems","arguments":\#(params)}"#))
    #expect(tool.keys == ["content", "structuredContent", "isError"])
    #expect(tool["structuredContent"] == .object(direct))
    #expect(tool["content"] == .array([.object(JSONObject([("type", .string("text")), ("text", .string(JSONWriter.string(JSONValue.object(direct))))]))]))
    #expect(tool["isError"] == .bool(false))
    // The result fits the tool's outputSchema.
    let output = JSONSchemaValidator(schema: ComputeSummaryItems.description.result.json)
    #expect(output.validate(.object(direct)) == [])
  }

  @Test("invalid arguments, method errors and failed payments are tool results with isError and a readable message")
  func toolErrors() throws {
    let handler = try Self.handler()
    #expect(
      handler.respond(#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getOrder","arguments":{"orderId":""}}}"#)
        == #"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"getOrder: Invalid params (-32602)\n  orderId: must not be empty"}],"isError":true}}"#)
    #expect(
      handler.respond(#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"getOrder","arguments":{"orderId":"ord_x"}}}"#)
        == #"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"getOrder: Order not found: ord_x (-32003)"}],"isError":true}}"#)
    let declined = Self.result(
      handler.call(
        "tools/call",
        #"{"name":"processOrder","arguments":{"chargeToken":"ctok_none","items":[{"sku":"clock"}],"shippingMethod":"express","shippingContact":{},"amount":"1.00","currencyCode":"USD"}}"#
      ))
    #expect(declined["isError"] == .bool(true))
    #expect(
      declined["content"]
        == .array([
          .object(JSONObject([("type", .string("text")), ("text", .string("processOrder: status failed (invalid_charge_token): The charge token is unknown. Authorize the payment again."))])),
          .object(JSONObject([("type", .string("text")), ("text", .string(#"{"status":"failed","failureCode":"invalid_charge_token","message":"The charge token is unknown. Authorize the payment again."}"#))])),
        ]))
    #expect(
      handler.respond(#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"refund","arguments":{}}}"#)
        == #"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params","data":{"errors":[{"path":"name","message":"unknown tool \"refund\"; tools/list lists the tools"}]}}}"#)
  }

  @Test("MCP notifications, and a tools/call sent as a notification, are not answered")
  func notifications() throws {
    let handler = try Self.handler()
    #expect(handler.respond(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#) == nil)
    #expect(handler.respond(#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#) == nil)
    #expect(handler.respond(#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"listProducts"}}"#) == nil)
    #expect(handler.respond(#"{"jsonrpc":"2.0","id":"p","method":"ping","params":{"_meta":{"progressToken":1}}}"#) == #"{"jsonrpc":"2.0","id":"p","result":{}}"#)
  }

  @Test("a tools/call of a store method stays with the ordered lines; other tools may be answered by the helper thread")
  func storeToolCallsKeepTheirPlace() throws {
    let handler = try Self.handler()
    func needsStore(_ line: String) -> Bool {
      Array(line.utf8).withUnsafeBytes { handler.needsStore(handler.parse($0)) }
    }
    for tool in ["authorizePayment", "processOrder", "listProducts", "getOrder"] {
      #expect(needsStore(#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\#(tool)","arguments":{}}}"#), "\(tool)")
    }
    for tool in ["computeSummaryItems", "listShippingMethods", "unknownTool"] {
      #expect(!needsStore(#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\#(tool)","arguments":{}}}"#), "\(tool)")
    }
    #expect(!needsStore(#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#))
  }
}
