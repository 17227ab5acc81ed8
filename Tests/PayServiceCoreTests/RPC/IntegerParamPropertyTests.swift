import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// Random integers, digit runs and exponents at every integer param: each is answered (a result,
/// or -32602 naming the param), never a trap, on the borrowed path and the general one alike.
@Suite("Integer params under random numbers")
struct IntegerParamPropertyTests {
  /// Every integer a request can carry, as a line with `NUMBER` where the integer goes.
  static let templates: [(path: String, line: String)] = [
    ("items[0].quantity", #"{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{"items":[{"sku":"clock","quantity":NUMBER}]}}"#),
    ("items[0].quantity", #"{"jsonrpc":"2.0","id":1,"method":"selectShippingMethod","params":{"items":[{"sku":"clock","quantity":NUMBER}],"shippingMethod":"free"}}"#),
    ("items[0].quantity", #"{"jsonrpc":"2.0","id":1,"method":"createPaymentRequest","params":{"items":[{"sku":"clock","quantity":NUMBER}]}}"#),
    ("items[0].quantity", #"{"jsonrpc":"2.0","id":1,"method":"changeCouponCode","params":{"items":[{"sku":"clock","quantity":NUMBER}],"couponCode":"X"}}"#),
    ("items[0].quantity", #"{"jsonrpc":"2.0","id":1,"method":"processOrder","params":{"chargeToken":"t","items":[{"sku":"clock","quantity":NUMBER}],"shippingMethod":"free","shippingContact":{},"amount":"1.00","currencyCode":"USD"}}"#),
    ("lines[0].quantity", #"{"jsonrpc":"2.0","id":1,"method":"refundOrder","params":{"orderId":"o","refundId":"r","lines":[{"sku":"clock","quantity":NUMBER,"restock":"none"}]}}"#),
    ("limit", #"{"jsonrpc":"2.0","id":1,"method":"listOrders","params":{"limit":NUMBER}}"#),
    // An unknown sku: a number read well is answered unknown_sku, and nothing is recorded.
    ("delta", #"{"jsonrpc":"2.0","id":1,"method":"adjustStock","params":{"adjustmentId":"a","sku":"teapot","delta":NUMBER,"reason":"r"}}"#),
    ("set", #"{"jsonrpc":"2.0","id":1,"method":"adjustStock","params":{"adjustmentId":"a","sku":"teapot","set":NUMBER,"reason":"r"}}"#),
    ("limit", #"{"jsonrpc":"2.0","id":1,"method":"erasePersonalData","params":{"erasureId":"e","orderId":"o","limit":NUMBER}}"#),
  ]

  /// A JSON number: digit runs up to 400 long, signs, fractions, and exponents from small to
  /// Int64's bounds and beyond.
  static func number(_ generator: inout SplitMix64) -> String {
    func digits(_ count: Int) -> String {
      var text = String(Int.random(in: 1...9, using: &generator))
      for _ in 1..<max(count, 1) { text += String(Int.random(in: 0...9, using: &generator)) }
      return text
    }
    let lengths = [1, 2, 4, 9, 10, 18, 19, 20, 39, 400]
    var text = Bool.random(using: &generator) ? "-" : ""
    text += Int.random(in: 0..<5, using: &generator) == 0 ? "0" : digits(lengths.randomElement(using: &generator)!)
    if Bool.random(using: &generator) { text += "." + digits(lengths.randomElement(using: &generator)!) }
    if Bool.random(using: &generator) {
      let exponents = [
        "0", "1", "-1", "39", "40", "-40", "400", "9223372036854775807", "-9223372036854775808",
        "9223372036854775808", "-9223372036854775809", digits(30),
      ]
      text += (Bool.random(using: &generator) ? "e" : "E") + ["", "+"].randomElement(using: &generator)!
        + exponents.randomElement(using: &generator)!
    }
    return text.replacingOccurrences(of: "+-", with: "-")
  }

  @Test("2,000 random numbers at every integer param are each answered, by both paths the same")
  func randomNumbers() throws {
    let handler = TestConfig.handler(try TestConfig.context(), backOffice: true)
    var generator = SplitMix64(seed: 3030)
    var results = 0
    var refused = 0
    for (path, template) in Self.templates {
      for _ in 0..<2_000 {
        let number = Self.number(&generator)
        let line = Array(template.replacingOccurrences(of: "NUMBER", with: number).utf8)
        let answer = String(decoding: try #require(handler.handle(line: line)), as: UTF8.self)
        // A refund's quantity or an erasure's limit read well reaches the order lookup: this store
        // has no order "o".
        if answer.contains(#""result":"#) || answer.contains(#""error":{"code":-32003,"message":"Order not found: o"}"#) {
          results += 1
        } else if path == "delta" && answer.contains(#"{"path":"delta","message":"must not be 0; to record a count, send set"}"#) {
          refused += 1
        } else {
          #expect(answer.contains(#"{"path":"\#(path)","message":"must be an integer from "#), "\(answer)")
          refused += 1
        }
        #expect(FuzzOracle.borrowedAgrees(input: line, handler: handler) == nil, "\(number)")
      }
    }
    // Both outcomes happen: numbers in range are read, the rest refused.
    #expect(results > 100 && refused > 10_000, "\(results) results, \(refused) refused")
  }
}
