/// An Apple Pay line item (`ApplePayLineItem` / `PKPaymentSummaryItem`).
public struct SummaryItem: Equatable, Sendable, WireObject {
  public enum Kind: String, Sendable, WireEnum { case final, pending }

  public var label: String
  public var amount: String
  public var type: Kind

  public init(label: String, amount: String, type: Kind = .final) {
    self.label = label
    self.amount = amount
    self.type = type
  }

  public static let shape = ObjectShape<SummaryItem>(
    "An ApplePayLineItem; the last one is the total.", blank: { SummaryItem(label: "", amount: "") },
    [
      .member("label", \.label, read: ParamReader.anyString),
      .member("amount", \.amount, Shapes.amount),
      .member("type", \.type, .constant("final")),
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
