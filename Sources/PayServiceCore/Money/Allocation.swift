/// Splits an amount of minor units across weights in proportion, exactly.
public enum Allocation {
  /// Largest-remainder allocation: each share is `total × weight / Σweights` rounded down, then the
  /// minor units left over go one each to the largest remainders, ties to the earlier weight. The
  /// shares always sum to `total`; a negative total is split as its magnitude and negated.
  /// Weights must be non-negative with a positive sum.
  public static func largestRemainder(_ total: Int64, weights: [Int64]) -> [Int64] {
    let sum = weights.reduce(Int128(0)) { $0 + Int128($1) }
    precondition(sum > 0 && weights.allSatisfy { $0 >= 0 }, "allocation needs non-negative weights with a positive sum")
    let magnitude = Int128(total.magnitude)
    var shares: [Int64] = []
    var remainders: [Int128] = []
    shares.reserveCapacity(weights.count)
    remainders.reserveCapacity(weights.count)
    var allocated: Int128 = 0
    for weight in weights {
      let product = magnitude * Int128(weight)
      let share = product / sum
      shares.append(Int64(share))
      remainders.append(product % sum)
      allocated += share
    }
    let leftover = Int(magnitude - allocated)
    if leftover > 0 {
      let order = weights.indices.sorted { a, b in
        remainders[a] != remainders[b] ? remainders[a] > remainders[b] : a < b
      }
      for index in order.prefix(leftover) { shares[index] += 1 }
    }
    return total < 0 ? shares.map { -$0 } : shares
  }

  /// What the first `units` of `quantity` equal units carry of `total`: ⌊total × units / quantity⌋.
  /// Taking units in any order and any batches, the differences of these cumulative shares are
  /// never negative (for a non-negative total) and sum to `total` once every unit is taken, so
  /// partial refunds of a line never give back a minor unit more or less than the line paid.
  public static func cumulativeShare(_ total: Int64, units: Int, of quantity: Int) -> Int64 {
    precondition(quantity > 0 && (0...quantity).contains(units), "units must be 0 to quantity")
    let product = Int128(total) * Int128(units)
    let quotient = product / Int128(quantity)
    // Rounded towards minus infinity, so that a negative total splits as exactly.
    return Int64(product % Int128(quantity) < 0 ? quotient - 1 : quotient)
  }

  /// The share of `total` that `taking` more units carry when `taken` of `quantity` were taken before.
  public static func unitsShare(_ total: Int64, taking: Int, taken: Int, of quantity: Int) -> Int64 {
    cumulativeShare(total, units: taken + taking, of: quantity) - cumulativeShare(total, units: taken, of: quantity)
  }
}
