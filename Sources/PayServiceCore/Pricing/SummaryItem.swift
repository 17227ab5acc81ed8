/// An Apple Pay line item (`ApplePayLineItem` / `PKPaymentSummaryItem`). A line of a product
/// with a billing plan also says when it is paid (`paymentTiming` and its dates, RFC 3339 strings
/// where Apple Pay JS takes a `Date`); the members are left out for a line paid now.
public struct SummaryItem: Equatable, Sendable, WireObject {
  public enum Kind: String, Sendable, WireEnum { case final, pending }

  /// When a line is paid, as `ApplePayLineItem` / `PKRecurringPaymentSummaryItem`,
  /// `PKDeferredPaymentSummaryItem` and `PKAutomaticReloadPaymentSummaryItem` describe it.
  public enum Timing: Equatable, Sendable {
    case recurring(start: String, unit: BillingPlan.IntervalUnit, count: Int, end: String?)
    case automaticReload(threshold: String)
    case deferred(date: String)
  }

  public var label: String
  public var amount: String
  public var type: Kind
  public var paymentTiming: BillingPlan.Kind?
  public var recurringPaymentStartDate: String?
  public var recurringPaymentIntervalUnit: BillingPlan.IntervalUnit?
  public var recurringPaymentIntervalCount: Int?
  public var recurringPaymentEndDate: String?
  public var deferredPaymentDate: String?
  public var automaticReloadPaymentThresholdAmount: String?

  public init(label: String, amount: String, type: Kind = .final) {
    self.label = label
    self.amount = amount
    self.type = type
  }

  public init(label: String, amount: String, timing: Timing) {
    self.init(label: label, amount: amount)
    switch timing {
    case .recurring(let start, let unit, let count, let end):
      paymentTiming = .recurring
      recurringPaymentStartDate = start
      recurringPaymentIntervalUnit = unit
      recurringPaymentIntervalCount = count
      recurringPaymentEndDate = end
    case .automaticReload(let threshold):
      paymentTiming = .automaticReload
      automaticReloadPaymentThresholdAmount = threshold
    case .deferred(let date):
      paymentTiming = .deferred
      deferredPaymentDate = date
    }
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
      .member(
        "paymentTiming", \.paymentTiming, .optional,
        .string(
          "When the line is paid; left out for a payment made now (immediate).",
          values: BillingPlan.Kind.allCases.map(\.rawValue))),
      .member("recurringPaymentStartDate", \.recurringPaymentStartDate, .optional, dateSchema),
      .member("recurringPaymentIntervalUnit", \.recurringPaymentIntervalUnit, .optional),
      .member(
        "recurringPaymentIntervalCount", \.recurringPaymentIntervalCount, .optional,
        .integer("How many units between payments.", minimum: 1, maximum: 999)),
      .member("recurringPaymentEndDate", \.recurringPaymentEndDate, .optional, dateSchema),
      .member("deferredPaymentDate", \.deferredPaymentDate, .optional, dateSchema),
      .member("automaticReloadPaymentThresholdAmount", \.automaticReloadPaymentThresholdAmount, .optional, Shapes.amount),
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
