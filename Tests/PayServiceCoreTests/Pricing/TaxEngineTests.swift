@testable import PayServiceCore
import PayServiceTestSupport
import Testing

@Suite("Tax engine: exclusive and inclusive, per line and per order")
struct TaxEngineTests {
  static func amount(_ minor: Int64, _ rate: String) -> TaxEngine.Amount {
    TaxEngine.Amount(minor: minor, rate: Rate(rate)!)
  }

  @Test("worked examples, checked by hand")
  func workedExamples() {
    // 12.00 gross at 20% holds 12.00 × 0.2 / 1.2 = 2.00 of VAT.
    let uk = TaxEngine.compute([Self.amount(1200, "0.20")], inclusive: true, target: .perLine, rounding: .halfUp)
    #expect(uk.taxes == [200])
    #expect(uk.groups == [TaxEngine.Group(rate: Rate("0.20")!, netMinor: 1000, taxMinor: 200, grossMinor: 1200)])

    // Three 0.99 lines at 20% inclusive: each holds 16.5 minor units (17 rounded half up, 51 in
    // all); rounded once per order, 2.97 holds 49.5 → 50, split 17 + 17 + 16.
    let lines = Array(repeating: Self.amount(99, "0.2"), count: 3)
    #expect(TaxEngine.compute(lines, inclusive: true, target: .perLine, rounding: .halfUp).taxes == [17, 17, 17])
    let perOrder = TaxEngine.compute(lines, inclusive: true, target: .perOrder, rounding: .halfUp)
    #expect(perOrder.taxes == [17, 17, 16])
    #expect(perOrder.groups == [TaxEngine.Group(rate: Rate("0.2")!, netMinor: 247, taxMinor: 50, grossMinor: 297)])
    // Half even: 16.5 → 16 per line; 49.5 → 50 per order.
    #expect(TaxEngine.compute(lines, inclusive: true, target: .perLine, rounding: .halfEven).taxes == [16, 16, 16])

    // Exclusive: two 1.05 lines at 10% are 0.105 each (0.11 per line, 0.22) or 0.21 on 2.10.
    let pair = [Self.amount(105, "0.10"), Self.amount(105, "0.1")]
    #expect(TaxEngine.compute(pair, inclusive: false, target: .perLine, rounding: .halfUp).totalTaxMinor == 22)
    let pairOrder = TaxEngine.compute(pair, inclusive: false, target: .perOrder, rounding: .halfUp)
    #expect(pairOrder.taxes == [11, 10])
    #expect(pairOrder.groups == [TaxEngine.Group(rate: Rate("0.10")!, netMinor: 210, taxMinor: 21, grossMinor: 231)])

    // Japan, yen: 1,080 at the 8% reduced rate holds 80; 1,100 at 10% holds 100; zero-rated books
    // hold nothing. Groups keep the order rates first appear in.
    let japan = TaxEngine.compute(
      [Self.amount(1100, "0.10"), Self.amount(1080, "0.08"), Self.amount(500, "0"), Self.amount(2200, "0.10")],
      inclusive: true, target: .perOrder, rounding: .halfUp)
    #expect(japan.taxes == [100, 80, 0, 200])
    #expect(
      japan.groups == [
        TaxEngine.Group(rate: Rate("0.10")!, netMinor: 3000, taxMinor: 300, grossMinor: 3300),
        TaxEngine.Group(rate: Rate("0.08")!, netMinor: 1000, taxMinor: 80, grossMinor: 1080),
        TaxEngine.Group(rate: Rate("0")!, netMinor: 500, taxMinor: 0, grossMinor: 500),
      ])
  }

  @Test("a group of zero amounts has no tax, and no amounts have no groups")
  func empty() {
    #expect(TaxEngine.compute([], inclusive: true, target: .perOrder, rounding: .halfUp) == TaxEngine.Result(taxes: [], groups: []))
    let zero = TaxEngine.compute([Self.amount(0, "0.2"), Self.amount(0, "0.2")], inclusive: false, target: .perOrder, rounding: .halfUp)
    #expect(zero.taxes == [0, 0])
    #expect(zero.groups == [TaxEngine.Group(rate: Rate("0.2")!, netMinor: 0, taxMinor: 0, grossMinor: 0)])
  }

  @Test("properties over 4,000 seeded checkouts: sums, net + tax = gross, rounding once per group, never negative")
  func properties() {
    var random = SplitMix64(seed: 20)
    let rates = ["0", "0.05", "0.08", "0.1", "0.10", "0.13", "0.2", "0.0825", "0.19", "0.25"]
    for run in 0..<4000 {
      let count = Int(random.next() % 6) + 1
      let amounts = (0..<count).map { _ in
        Self.amount(Int64(random.next() % 100_000), rates[Int(random.next() % UInt64(rates.count))])
      }
      let inclusive = run % 2 == 0
      let target: RoundingTarget = run % 4 < 2 ? .perLine : .perOrder
      let rounding: Rounding = run % 8 < 4 ? .halfUp : .halfEven
      let result = TaxEngine.compute(amounts, inclusive: inclusive, target: target, rounding: rounding)
      let context = "run \(run): \(amounts.map { "\($0.minor)@\($0.rate.text)" }) \(inclusive) \(target) \(rounding)"
      #expect(result.taxes.count == amounts.count, "\(context)")
      #expect(result.taxes.allSatisfy { $0 >= 0 }, "\(context)")
      #expect(result.groups.reduce(0) { $0 + $1.taxMinor } == result.totalTaxMinor, "\(context)")
      #expect(result.groups.allSatisfy { $0.netMinor + $0.taxMinor == $0.grossMinor }, "\(context)")
      let sum = amounts.reduce(Int64(0)) { $0 + $1.minor }
      let side = result.groups.reduce(Int64(0)) { $0 + (inclusive ? $1.grossMinor : $1.netMinor) }
      #expect(side == sum, "\(context)")
      if inclusive {
        // Tax inside an amount is never more than the amount.
        #expect(zip(amounts, result.taxes).allSatisfy { $1 <= $0.minor }, "\(context)")
      }
      for group in result.groups {
        let base = inclusive ? group.grossMinor : group.netMinor
        let once = inclusive
          ? group.rate.extract(from: base, rounding: rounding) : group.rate.apply(to: base, rounding: rounding)
        if target == .perOrder {
          #expect(group.taxMinor == once, "\(context)")
        } else {
          // Per line, rounding each amount moves the group's tax at most half a unit per amount.
          #expect(abs(group.taxMinor - once) <= Int64(amounts.count), "\(context)")
        }
      }
      if target == .perLine {
        for (amount, tax) in zip(amounts, result.taxes) {
          let alone = inclusive
            ? amount.rate.extract(from: amount.minor, rounding: rounding) : amount.rate.apply(to: amount.minor, rounding: rounding)
          #expect(tax == alone, "\(context)")
        }
      }
    }
  }
}
