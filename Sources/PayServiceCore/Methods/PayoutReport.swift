/// The store's books: per currency and day, the money charged, refunded and disputed, and what is
/// left, from the store alone, to set beside the gateway's balance report (Stripe's balance
/// transactions) when closing a month. Back office only (`--back-office`).
public enum PayoutReport: RPCMethod {
  public static let name = "payoutReport"

  public static let documentation = MethodDocumentation(
    summary: "The books per currency and day: charged, refunded, disputed and net, from the store.",
    description: """
      Adds up, for each UTC day from from to to (both included, at most 366 days) and each currency, the \
      money the store recorded moving: charged (orders charged at once, on the day they were placed, and \
      captures), refunded (refunds by payservice and those made outside it that Stripe reported, less refunds \
      that failed later), disputed (funds chargebacks withdrew, less those reinstated when one was won) and \
      net = charged - refunded - disputed. A day counts what payservice recorded that day (its clock); a \
      movement Stripe reported late counts on the day it was heard, so take in Stripe's events (or run \
      reconcileStripe) before closing a month. Days with no money moved are left out; totals add up the \
      days per currency. Stripe's fees are not in the store: its balance report's amounts (before fees) \
      are what these compare with. Changes nothing.
      """,
    errors: [.storeUnavailable], readOnly: true, idempotent: true)
  public static let usesStore = true

  /// The longest span one report covers.
  public static let maxDays = 366

  public struct Params: Sendable {
    public var from = ""
    public var to = ""
  }

  static let dayPattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"

  /// A day as `YYYY-MM-DD`: its first second.
  static let readDay: MemberReader<String> = { value, path, reader in
    guard case .string(let text) = value, text.utf8.count == 10, RFC3339.parse(text + "T00:00:00Z") != nil else {
      reader.fail(path(), "must be a day like \"2026-11-21\" (YYYY-MM-DD)")
      return nil
    }
    return text
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member("from", \.from, .required, .string("The first day (UTC), YYYY-MM-DD.", pattern: dayPattern), read: readDay),
      .member("to", \.to, .required, .string("The last day (UTC), included.", pattern: dayPattern), read: readDay),
    ],
    check: { params, reader in
      guard let from = start(of: params.from), let to = start(of: params.to) else { return }
      if to < from {
        reader.fail("to", "must be \(params.from) or later")
      } else if (to - from) / 86_400 + 1 > Int64(maxDays) {
        reader.fail("to", "must be at most \(maxDays) days from from (both included)")
      }
    })

  static func start(of day: String) -> Int64? { RFC3339.parse(day + "T00:00:00Z") }

  /// The money of one currency, over a day or the whole span.
  public struct Money: Equatable, Sendable, WireObject {
    public var day: String?
    public var currencyCode = ""
    public var charged = ""
    public var refunded = ""
    public var disputed = ""
    public var net = ""

    public static let shape = ObjectShape<Money>(
      blank: { Money() },
      [
        .member("day", \.day, .optional, .string("The UTC day; absent in totals.", pattern: dayPattern)),
        .member("currencyCode", \.currencyCode, .required, Shapes.currencyCode),
        .member("charged", \.charged, .required, .string("Charged at once or captured.", pattern: MoneyText.pattern)),
        .member(
          "refunded", \.refunded, .required, .string("Refunded, less refunds that failed later.", pattern: MoneyText.pattern)),
        .member(
          "disputed", \.disputed, .required,
          .string("Withdrawn by chargebacks, less what won disputes reinstated.", pattern: MoneyText.pattern)),
        .member("net", \.net, .required, .string("charged - refunded - disputed.", pattern: MoneyText.pattern)),
      ])
  }

  public struct Result: MethodResult, WireObject {
    public var from = ""
    public var to = ""
    public var days: [Money] = []
    public var totals: [Money] = []

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member("from", \.from, .required, .string(pattern: dayPattern)),
        .member("to", \.to, .required, .string(pattern: dayPattern)),
        .member("days", \.days, .required, .array(Money.schema, "By day, then currency; days with no money moved left out.")),
        .member("totals", \.totals, .required, .array(Money.schema, "Per currency, over the span.")),
      ])
  }

  /// Sums of one day and currency, in minor units.
  struct Sums {
    var charged: Int64 = 0
    var refunded: Int64 = 0
    var disputed: Int64 = 0

    mutating func add(_ row: MoneyMovementRow) {
      switch row.kind {
      case .captured: charged += row.amountMinor
      case .captureFailed: charged -= row.amountMinor
      case .refunded: refunded += row.amountMinor
      case .refundFailed: refunded -= row.amountMinor
      case .disputeFundsWithdrawn: disputed += row.amountMinor
      case .disputeFundsReinstated: disputed -= row.amountMinor
      default: break
      }
    }

    func money(day: String?, currencyCode: String) -> Money {
      let digits = Currency(code: currencyCode)?.minorDigits ?? 2
      func text(_ minor: Int64) -> String { MoneyText.format(minor, digits: digits) }
      return Money(
        day: day, currencyCode: currencyCode, charged: text(charged), refunded: text(refunded),
        disputed: text(disputed), net: text(charged - refunded - disputed))
    }
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let from = start(of: params.from) ?? 0
    let to = (start(of: params.to) ?? 0) + 86_400
    let rows = try context.store.moneyMovements(from: RFC3339.format(from), to: RFC3339.format(to))
    var days: [String: [String: Sums]] = [:]
    var totals: [String: Sums] = [:]
    for row in rows {
      days[row.day, default: [:]][row.currencyCode, default: Sums()].add(row)
      totals[row.currencyCode, default: Sums()].add(row)
    }
    func sorted(_ keys: Dictionary<String, some Any>.Keys) -> [String] {
      keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
    var result = Result(from: params.from, to: params.to)
    for day in sorted(days.keys) {
      let currencies = days[day] ?? [:]
      for code in sorted(currencies.keys) { result.days.append(currencies[code]!.money(day: day, currencyCode: code)) }
    }
    for code in sorted(totals.keys) { result.totals.append(totals[code]!.money(day: nil, currencyCode: code)) }
    return result
  }
}
