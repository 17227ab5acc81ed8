/// A card type as Apple Pay reports it (`ApplePayPaymentMethodType` / `PKPaymentMethodType`).
public enum CardType: String, Sendable, CaseIterable {
  case debit, credit, prepaid, store, eMoney
}

/// The card the payment sheet shows (`ApplePayPaymentMethod`): what pricing and card checks need.
/// `displayName` ("Visa 1234") carries the last digits of the card: it is never stored or logged.
public struct PaymentMethod: Equatable, Sendable, JSONRepresentable {
  public var displayName: String?
  public var network: String
  public var type: CardType

  public init(displayName: String? = nil, network: String, type: CardType) {
    self.displayName = displayName
    self.network = network
    self.type = type
  }

  /// Network (lower-cased: networks match case-insensitively) and type only, in a fixed order:
  /// what a charge token records and compares.
  public func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.member("network", network.lowercased())
    writer.member("type", type.rawValue)
    writer.endObject()
  }

  /// Reads `{displayName?, network, type}`; other members (`paymentPass`, `billingContact`) are
  /// ignored, as Apple's shape grows. JSON null is absent.
  /// `displayNameRequired`: an authorized token's method always has one (it may be empty).
  static func read(
    _ value: JSONValue?, _ path: String, reader: ParamReader, required: Bool, displayNameRequired: Bool = false
  ) -> PaymentMethod? {
    if case .null? = value, !required { return nil }
    guard let object = reader.object(value, path, required: required) else { return nil }
    let displayName =
      displayNameRequired
      ? reader.string(object["displayName"], "\(path).displayName", nonEmpty: false)
      : reader.optionalString(object["displayName"], "\(path).displayName")
    let network = reader.string(object["network"], "\(path).network")
    var type: CardType?
    if let text = reader.string(object["type"], "\(path).type") {
      type = CardType(rawValue: text)
      if type == nil {
        reader.fail("\(path).type", "must be one of \(CardType.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text)\"")
      }
    }
    guard let network, let type else { return nil }
    return PaymentMethod(displayName: displayName, network: network, type: type)
  }

  /// The stored form (`{"network":…,"type":…}`) read back; nil when it is not one.
  static func stored(_ text: String?) -> PaymentMethod? {
    guard let text, case .object(let object)? = try? JSONParser.parse(text),
      case .string(let network)? = object["network"], case .string(let type)? = object["type"],
      let cardType = CardType(rawValue: type)
    else { return nil }
    return PaymentMethod(network: network, type: cardType)
  }
}
