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

  public var json: JSONValue {
    var object = JSONObjectBuilder()
    object.set("label", label)
    object.set("amount", amount)
    object.set("type", type.rawValue)
    return object.value
  }
}

/// An Apple Pay shipping method as offered to the sheet (`ApplePayShippingMethod`).
public struct ShippingMethodOffer: Sendable, JSONRepresentable {
  public var method: ShippingMethod
  /// What the method costs for this cart (freeOver applied).
  public var amount: String
  public var dateComponentsRange: DateComponentsRange

  public var json: JSONValue {
    var object = JSONObjectBuilder()
    object.set("identifier", method.identifier)
    object.set("label", method.label)
    object.set("detail", method.detail)
    object.set("amount", amount)
    object.set("dateComponentsRange", dateComponentsRange.json)
    return object.value
  }
}
