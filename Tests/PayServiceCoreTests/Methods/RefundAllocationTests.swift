import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// Refunds give back exactly what was paid: seeded generated orders (coupons, card adjustments,
/// tax rules, rounding, shipping) refunded a unit at a time in random order, with the shipping at a
/// random point.
@Suite("Refund allocation")
struct RefundAllocationTests {
  static func minor(_ text: String) -> Int64 {
    try! MoneyText.minorUnits(text, digits: 2).get()
  }

  @Test("cumulative shares: any batches of units sum to the total, each batch between ⌊⌋ and ⌈⌉ of its share")
  func cumulativeShares() {
    var generator = SplitMix64(seed: 18)
    for _ in 0..<2000 {
      let quantity = Int(generator.next() % 40) + 1
      let total = Int64(generator.next() % 100_000) - (generator.next() % 4 == 0 ? 50_000 : 0)
      var taken = 0
      var sum: Int64 = 0
      while taken < quantity {
        let taking = Int(generator.next() % UInt64(quantity - taken)) + 1
        let share = Allocation.unitsShare(total, taking: taking, taken: taken, of: quantity)
        let exact = Double(total) * Double(taking) / Double(quantity)
        #expect(Double(share) >= exact.rounded(.down) && Double(share) <= exact.rounded(.up), "\(total) \(taking)/\(quantity)")
        sum += share
        taken += taking
      }
      #expect(sum == total, "total \(total) over \(quantity) units")
    }
    #expect(Allocation.unitsShare(1000, taking: 1, taken: 0, of: 3) == 333)
    #expect(Allocation.unitsShare(1000, taking: 1, taken: 1, of: 3) == 333)
    #expect(Allocation.unitsShare(1000, taking: 1, taken: 2, of: 3) == 334)
    #expect(Allocation.unitsShare(-1000, taking: 1, taken: 0, of: 3) == -334)
  }

  @Test("refunding every unit one at a time in random order, plus shipping, returns exactly the order's amount")
  func everyUnit() throws {
    var generator = SplitMix64(seed: 2026_11_23)
    var orders = 0
    var refunds = 0
    for round in 0..<60 {
      let config = PropertyTests.generatedConfig(&generator)
      let handler = TestConfig.handler(try TestConfig.context(config: config), backOffice: true)
      let skus = ["clock", "lamp", "mug", "pen", "notebook"].shuffled(using: &generator)
      let cart = skus.prefix(Int(generator.next() % 4) + 1).map { sku in
        (sku, sku == "notebook" ? 1 : Int(generator.next() % 6) + 1)
      }
      let items = "[" + cart.map { #"{"sku":"\#($0.0)","quantity":\#($0.1)}"# }.joined(separator: ",") + "]"
      let coupon = [nil, "SAVE10", "FIVEOFF", "THIRD", "BIGBUCKS"][Int(generator.next() % 5)]
      guard
        let placed = BackOfficeFixture.place(
          handler, items: items, shippingMethod: ["standard", "express", "canada"][Int(generator.next() % 3)],
          contact: BackOfficeFixture.contacts[Int(generator.next() % 4)],
          card: BackOfficeFixture.cards[Int(generator.next() % 4)], couponCode: coupon)
      else { continue }
      orders += 1
      var units = cart.flatMap { line in Array(repeating: line.0, count: line.1) }
      units.shuffle(using: &generator)
      let shippingAt = Int(generator.next() % UInt64(units.count + 1))
      var refunded: Int64 = 0
      var taxRefunded: Int64 = 0
      var last = JSONValue.null
      for index in 0...units.count {
        var params: [String] = []
        if index < units.count {
          params.append(#""lines":[{"sku":"\#(units[index])","quantity":1,"restock":"return"}]"#)
        }
        if index == shippingAt { params.append(#""shipping":true"#) }
        if params.isEmpty { continue }
        let response = handler.call(
          "refundOrder", #"{"orderId":"\#(placed.orderId)","refundId":"r-\#(index)",\#(params.joined(separator: ","))}"#)
        // Once the whole amount is back the order is refunded and takes no more refunds: what is
        // left (free units, free shipping) is worth nothing, as the sums below check.
        if response["result"]?["failureCode"]?.stringValue == "order_not_refundable" && refunded == Self.minor(placed.amount) {
          break
        }
        guard let result = response["result"], result["status"]?.stringValue == "succeeded",
          let amount = result["refund"]?["amount"]?.stringValue, let tax = result["refund"]?["tax"]?.stringValue
        else {
          Issue.record("round \(round): refund \(index) of \(items) (coupon \(coupon ?? "none")): \(response.compact)")
          break
        }
        #expect(Self.minor(amount) >= 0 && Self.minor(tax) >= 0 && Self.minor(tax) <= Self.minor(amount))
        for line in result["refund"]?["lines"]?.arrayValue ?? [] {
          #expect(Self.minor(line["amount"]!.stringValue!) >= 0, "round \(round)")
        }
        refunded += Self.minor(amount)
        taxRefunded += Self.minor(tax)
        refunds += 1
        last = result
      }
      #expect(refunded == Self.minor(placed.amount), "round \(round): \(items), coupon \(coupon ?? "none")")
      #expect(taxRefunded == Self.minor(placed.tax), "round \(round): tax")
      #expect(last["orderStatus"]?.stringValue == "refunded" && last["amountRemaining"]?.stringValue == "0.00")
      // Nothing is left: not a cent more.
      let more = handler.call("refundOrder", #"{"orderId":"\#(placed.orderId)","refundId":"more","amount":"0.01"}"#)
      #expect(more["result"]?["failureCode"]?.stringValue == "order_not_refundable")
    }
    #expect(orders >= 30, "only \(orders) of 60 generated orders went through")
    #expect(refunds >= 100)
  }
}

@Suite("Refund keys")
struct RefundKeyTests {
  @Test("shipping false is the same params as shipping left out; another reason is not")
  func shippingFalse() throws {
    let handler = TestConfig.handler(try TestConfig.context(config: TestConfig.discounts()), backOffice: true)
    let placed = try #require(BackOfficeFixture.place(handler, items: #"[{"sku":"mug","quantity":2}]"#, shippingMethod: "standard"))
    let first = handler.call(
      "refundOrder", #"{"orderId":"\#(placed.orderId)","refundId":"k-1","lines":[{"sku":"mug","quantity":1,"restock":"none"}]}"#)
    #expect(first["result"]?["status"]?.stringValue == "succeeded")
    let same = handler.call(
      "refundOrder",
      #"{"orderId":"\#(placed.orderId)","refundId":"k-1","lines":[{"sku":"mug","quantity":1,"restock":"none"}],"shipping":false}"#)
    #expect(same["result"] == first["result"])
    let other = handler.call(
      "refundOrder",
      #"{"orderId":"\#(placed.orderId)","refundId":"k-1","lines":[{"sku":"mug","quantity":1,"restock":"none"}],"reason":"x"}"#)
    #expect(other["error"]?["code"] == .number("-32004"))
  }
}
