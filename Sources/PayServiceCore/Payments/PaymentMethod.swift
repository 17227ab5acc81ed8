/// A card type as Apple Pay reports it (`ApplePayPaymentMethodType` / `PKPaymentMethodType`).
public enum CardType: String, Sendable, WireEnum {
  case debit, credit, prepaid, store, eMoney
}

/// The card the payment sheet shows (`ApplePayPaymentMethod`): what pricing and card checks need.
/// `displayName` ("Visa 1234") carries the last digits of the card: it is read, never written,
/// stored or logged. Written, a card is its network (lower-cased: networks match
/// case-insensitively) and type only: what a charge token records and compares.
public struct PaymentMethod: Equatable, Sendable, WireObject {
  public var displayName: String?
  public var network: String
  public var type: CardType

  /// The card as a charge token records it: network lower-cased, type, no display name.
  public var recorded: PaymentMethod { PaymentMethod(network: network.lowercased(), type: type) }

  /// The card as the sheet's events send it; other members (`paymentPass`, `billingContact`) are
  /// ignored, as Apple's shape grows.
  public static let shape = makeShape(displayNameRequired: false)
  /// The card inside an authorized token, which always has a `displayName` (it may be empty).
  public static let authorizedShape = makeShape(displayNameRequired: true)

  private static func makeShape(displayNameRequired: Bool) -> ObjectShape<PaymentMethod> {
    ObjectShape(
      "An ApplePayPaymentMethod: the card the buyer picked. Other members are ignored.", closed: false,
      blank: { PaymentMethod(network: "", type: .credit) },
      [
        .member(
          "displayName", \.displayName, displayNameRequired ? .required : .optional,
          .string("As the sheet shows it; never stored or logged."),
          read: { value, path, reader in
            // Null reads as none when the member is optional.
            if case .null = value, !displayNameRequired { return nil }
            return reader.string(value, path(), nonEmpty: false)
          }, written: false),
        .member(
          "network", \.network, .required,
          .string("The card network, for example \"visa\" (compared case-insensitively).", minLength: 1),
          write: { network, writer in writer.write(network.lowercased()) }),
        .member("type", \.type, .required, .string("The card type.", values: CardType.allCases.map(\.rawValue))),
      ])
  }
}
