/// An Apple Pay line item (`ApplePayLineItem` / `PKPaymentSummaryItem`). A line of a product
/// with a billing plan also says when it is paid (`paymentTiming` and its dates, RFC 3339 strings
/// where Apple Pay JS takes a `Date`), written flat among the line's members; a line paid now has
/// none of them.
public struct SummaryItem: Equatable, Sendable, WireObject {
  public enum Kind: String, Sendable, WireEnum { case final, pending }

  /// When a line is paid, as `ApplePayLineItem` / `PKRecurringPaymentSummaryItem`,
  /// `PKDeferredPaymentSummaryItem` and `PKAutomaticReloadPaymentSummaryItem` describe it. One
  /// optional value: a line without it costs one check to copy.
  public struct Timing: Equatable, Sendable {
    public var paymentTiming = BillingPlan.Kind.recurring
    public var recurringPaymentStartDate: String?
    public var recurringPaymentIntervalUnit: BillingPlan.IntervalUnit?
    public var recurringPaymentIntervalCount: Int?
    public var recurringPaymentEndDate: String?
    public var deferredPaymentDate: String?
    public var automaticReloadPaymentThresholdAmount: String?

    public init() {}

    public static func recurring(start: String, unit: BillingPlan.IntervalUnit, count: Int, end: String?) -> Timing {
      var timing = Timing()
      timing.recurringPaymentStartDate = start
      timing.recurringPaymentIntervalUnit = unit
      timing.recurringPaymentIntervalCount = count
      timing.recurringPaymentEndDate = end
      return timing
    }

    public static func automaticReload(threshold: String) -> Timing {
      var timing = Timing()
      timing.paymentTiming = .automaticReload
      timing.automaticReloadPaymentThresholdAmount = threshold
      return timing
    }

    public static func deferred(date: String) -> Timing {
      var timing = Timing()
      timing.paymentTiming = .deferred
      timing.deferredPaymentDate = date
      return timing
    }
  }

  public var label: String
  public var amount: String
  public var type: Kind
  public var timing: Timing?

  public init(label: String, amount: String, type: Kind = .final) {
    self.label = label
    self.amount = amount
    self.type = type
  }

  public init(label: String, amount: String, timing: Timing) {
    self.init(label: label, amount: amount)
    self.timing = timing
  }

  static let dateSchema = JSONSchema.string(
    "An RFC 3339 time in UTC (JSON has no Date: revive it into one for Apple Pay JS).",
    pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")

  public static let shape = ObjectShape<SummaryItem>(
    "An ApplePayLineItem; the last one is the total.", blank: { SummaryItem(label: "", amount: "") },
    [
      .member("label", \.label, read: ParamReader.anyString),
      .member("amount", \.amount, Shapes.amount),
      .member("type", \.type, .constant("final")),
      .flattened(
        "paymentTiming", in: \.timing, blank: Timing.init, get: { $0.paymentTiming }, set: { $0.paymentTiming = $1 },
        .string(
          "When the line is paid; left out for a payment made now (immediate).",
          values: BillingPlan.Kind.allCases.map(\.rawValue))),
      .flattened(
        "recurringPaymentStartDate", in: \.timing, blank: Timing.init, get: { $0.recurringPaymentStartDate },
        set: { $0.recurringPaymentStartDate = $1 }, dateSchema),
      .flattened(
        "recurringPaymentIntervalUnit", in: \.timing, blank: Timing.init, get: { $0.recurringPaymentIntervalUnit },
        set: { $0.recurringPaymentIntervalUnit = $1 }),
      .flattened(
        "recurringPaymentIntervalCount", in: \.timing, blank: Timing.init, get: { $0.recurringPaymentIntervalCount },
        set: { $0.recurringPaymentIntervalCount = $1 }, .integer("How many units between payments.", minimum: 1, maximum: 999)),
      .flattened(
        "recurringPaymentEndDate", in: \.timing, blank: Timing.init, get: { $0.recurringPaymentEndDate },
        set: { $0.recurringPaymentEndDate = $1 }, dateSchema),
      .flattened(
        "deferredPaymentDate", in: \.timing, blank: Timing.init, get: { $0.deferredPaymentDate },
        set: { $0.deferredPaymentDate = $1 }, dateSchema),
      .flattened(
        "automaticReloadPaymentThresholdAmount", in: \.timing, blank: Timing.init,
        get: { $0.automaticReloadPaymentThresholdAmount }, set: { $0.automaticReloadPaymentThresholdAmount = $1 },
        Shapes.amount),
    ])
}

/// An Apple Pay shipping method as offered to the sheet (`ApplePayShippingMethod`).
public struct ShippingMethodOffer: Equatable, Sendable, WireObject {
  public var identifier: String
  public var label: String
  public var detail: String
  /// What the method costs for this cart (freeOver applied).
  public var amount: String
  public var dateComponentsRange: DateComponentsRange

  public init(
    identifier: String, label: String, detail: String, amount: String, dateComponentsRange: DateComponentsRange
  ) {
    self.identifier = identifier
    self.label = label
    self.detail = detail
    self.amount = amount
    self.dateComponentsRange = dateComponentsRange
  }

  public init(method: ShippingMethod, amount: String, dateComponentsRange: DateComponentsRange) {
    self.init(
      identifier: method.identifier, label: method.label, detail: method.detail, amount: amount,
      dateComponentsRange: dateComponentsRange)
  }

  public static let shape = ObjectShape<ShippingMethodOffer>(
    "An ApplePayShippingMethod priced for this cart.",
    blank: {
      ShippingMethodOffer(identifier: "", label: "", detail: "", amount: "", dateComponentsRange: DateComponentsRange())
    },
    [
      .member("identifier", \.identifier), .member("label", \.label, read: ParamReader.anyString),
      .member("detail", \.detail, read: ParamReader.anyString), .member("amount", \.amount, Shapes.amount),
      .member("dateComponentsRange", \.dateComponentsRange),
    ])
}
