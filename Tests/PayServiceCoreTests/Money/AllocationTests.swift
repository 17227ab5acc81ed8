import PayServiceCore
import PayServiceTestSupport
import Testing

@Suite("Largest-remainder allocation")
struct AllocationTests {
  @Test(
    "shares are exact, sum to the total, and leftovers go to the largest remainders",
    arguments: [
      // 900 over 50.00 and 39.98: 500.11 -> 500 (rem 1000), 399.88 -> 399 (rem 7998); the cent goes to line 2.
      (900, [5000, 3998], [500, 400]),
      // 476 over 1.05, 8.49, 4.75: floors 34, 282, 158 (remainders 1394, 1146, 318); two cents left.
      (476, [105, 849, 475], [35, 283, 158]),
      // A tie: equal weights, one cent left, it goes to the earlier line.
      (2217, [3325, 3325], [1109, 1108]),
      (1, [1, 1, 1], [1, 0, 0]),
      (2, [1, 1, 1], [1, 1, 0]),
      // Unequal weights with equal remainders (2 x 1 / 4 and 2 x 3 / 4 both leave 2): the earlier line wins.
      (2, [1, 3], [1, 1]),
      // Zero weights get nothing; the whole amount fits.
      (35, [35], [35]),
      (10, [0, 5, 0, 5], [0, 5, 0, 5]),
      (0, [100, 200], [0, 0]),
      // A negative total (a net surcharge) is split as its magnitude and negated.
      (-657, [5000, 3998], [-365, -292]),
    ] as [(Int64, [Int64], [Int64])])
  func shares(total: Int64, weights: [Int64], expected: [Int64]) {
    let shares = Allocation.largestRemainder(total, weights: weights)
    #expect(shares == expected)
    #expect(shares.reduce(0, +) == total)
  }

  @Test("no share exceeds its weight when the total is at most the weights' sum")
  func boundedShares() {
    var generator = SplitMix64(seed: 7)
    for _ in 0..<2_000 {
      let count = Int(generator.next() % 6) + 1
      let weights = (0..<count).map { _ in Int64(generator.next() % 100_000) + 1 }
      let total = Int64(generator.next() % UInt64(weights.reduce(0, +) + 1))
      let shares = Allocation.largestRemainder(total, weights: weights)
      #expect(shares.reduce(0, +) == total)
      for (share, weight) in zip(shares, weights) {
        #expect(share >= 0 && share <= weight)
        // Within one unit of the exact proportional share.
        let exact = Double(total) * Double(weight) / Double(weights.reduce(0, +))
        #expect(abs(Double(share) - exact) < 1)
      }
    }
  }
}
