/// An Apple Pay line item (`ApplePayLineItem` / `PKPaymentSummaryItem`).
public struct SummaryItem: Equatable, Sendable, JSONRepresentable {
  public enum Kind: String, Sendable { case final, pending }

  public var label: String
  public var amount: String
  public var type: Kind

  public init(label: String, amount: String, type: Kind = .final) {
    self.label = label
    self.amount = amount
    self.type = type
  }

  public func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.member("label", label)
    writer.member("amount", amount)
    writer.member("type", type.rawValue)
    writer.endObject()
  }
}

/// An Apple Pay shipping method as offered to the sheet (`ApplePayShippingMethod`).
public struct ShippingMethodOffer: Sendable, JSONRepresentable {
  public var method: ShippingMethod
  /// What the method costs for this cart (freeOver applied).
  public var amount: String
  public var dateComponentsRange: DateComponentsRange

  public func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.member("identifier", method.identifier)
    writer.member("label", method.label)
    writer.member("detail", method.detail)
    writer.member("amount", amount)
    writer.member("dateComponentsRange", dateComponentsRange)
    writer.endObject()
  }
}
