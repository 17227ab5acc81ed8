/// Which amounts tax is rounded on: each taxed amount (a cart line after its share of the
/// discounts, the shipping), or each group of amounts with the same rate, once (as HMRC allows
/// for VAT invoices, and Vendure and commercetools offer).
public enum RoundingTarget: String, Sendable, CaseIterable {
  case perLine
  case perOrder
}

extension Rate {
  /// round(gross × rate / (1 + rate)): the tax contained in a tax-inclusive amount, exactly (rate
  /// n/d gives gross × n / (d + n)).
  public func extract(from gross: Int64, rounding: Rounding) -> Int64 {
    Int64(Rate.divide(Int128(gross) * Int128(numerator), by: denominator + Int128(numerator), rounding: rounding))
  }

  /// The rate's value as a number of 10^-14 units, equal for equal rates however they are written
  /// ("0.2" and "0.20"): what amounts are grouped by.
  var groupKey: Int128 {
    var key = Int128(numerator)
    for _ in scale..<14 { key *= 10 }
    return key
  }
}

/// Tax over a checkout's taxed amounts, added on top (exclusive prices) or contained in them
/// (inclusive prices), rounded per amount or per rate group. Pure.
public enum TaxEngine {
  /// One taxed amount: a cart line after its share of the discounts, or the shipping.
  public struct Amount: Equatable, Sendable {
    public var minor: Int64
    public var rate: Rate
  }

  /// The amounts with one rate, as a receipt lists them: net + tax = gross.
  public struct Group: Equatable, Sendable {
    public var rate: Rate
    public var netMinor: Int64
    public var taxMinor: Int64
    public var grossMinor: Int64
  }

  public struct Result: Equatable, Sendable {
    /// Each amount's tax, in the amounts' order. Per order, a group's tax is split over its amounts
    /// in proportion (largest remainder), so refunds of a line give back its part.
    public var taxes: [Int64]
    /// One group per rate, in the order the rates first appear.
    public var groups: [Group]

    public var totalTaxMinor: Int64 { taxes.reduce(0, +) }
  }

  /// The tax of `amounts` (each at least 0).
  /// - Parameters:
  ///   - inclusive: the amounts are gross (tax is extracted) rather than net (tax is added).
  public static func compute(_ amounts: [Amount], inclusive: Bool, target: RoundingTarget, rounding: Rounding)
    -> Result
  {
    precondition(amounts.allSatisfy { $0.minor >= 0 }, "taxed amounts are never negative")
    func tax(_ minor: Int64, _ rate: Rate) -> Int64 {
      inclusive ? rate.extract(from: minor, rounding: rounding) : rate.apply(to: minor, rounding: rounding)
    }
    // Group indices by rate, in order of first appearance.
    var keys: [Int128] = []
    var members: [[Int]] = []
    for (index, amount) in amounts.enumerated() {
      let key = amount.rate.groupKey
      if let group = keys.firstIndex(of: key) {
        members[group].append(index)
      } else {
        keys.append(key)
        members.append([index])
      }
    }
    var taxes = [Int64](repeating: 0, count: amounts.count)
    var groups: [Group] = []
    for indices in members {
      let rate = amounts[indices[0]].rate
      let sum = indices.reduce(Int64(0)) { $0 + amounts[$1].minor }
      switch target {
      case .perLine:
        for index in indices { taxes[index] = tax(amounts[index].minor, rate) }
      case .perOrder:
        let groupTax = tax(sum, rate)
        if sum > 0 {
          let shares = Allocation.largestRemainder(groupTax, weights: indices.map { amounts[$0].minor })
          for (index, share) in zip(indices, shares) { taxes[index] = share }
        }
      }
      let groupTax = indices.reduce(Int64(0)) { $0 + taxes[$1] }
      groups.append(
        inclusive
          ? Group(rate: rate, netMinor: sum - groupTax, taxMinor: groupTax, grossMinor: sum)
          : Group(rate: rate, netMinor: sum, taxMinor: groupTax, grossMinor: sum + groupTax))
    }
    return Result(taxes: taxes, groups: groups)
  }
}
