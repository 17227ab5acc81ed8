/// What a payment itself shows about the card it pays with, as opposed to what the request claims
/// (`payment.token.paymentMethod`, which a client may set to anything). Card adjustments are priced
/// from the claim only when the evidence agrees with it (`AuthorizePayment.claimProblem`).
public struct CardEvidence: Sendable, Equatable {
  /// The network, lower-cased (as a charge token records it).
  public var network: String
  /// The card type, or nil when the payment does not say (an EC_v1 token: Apple signs no type).
  public var type: CardType?
  /// Where the evidence comes from, for messages: `the sandbox test card "tok_amex"`.
  public var source: String
  /// Whether a domestic network that rides on this brand's card numbers may be claimed instead
  /// (an EC_v1 token's card number shows the global brand only; see `CardNetworks.coBadged`).
  public var allowsCoBadges: Bool

  public init(network: String, type: CardType?, source: String, allowsCoBadges: Bool = false) {
    self.network = network.lowercased()
    self.type = type
    self.source = source
    self.allowsCoBadges = allowsCoBadges
  }

  /// The evidence as a card, for pricing: the claim's type where the payment gives none.
  func card(claimedType: CardType) -> PaymentMethod {
    PaymentMethod(network: network, type: type ?? claimedType)
  }
}

/// Card networks as the payment shows them: the sandbox's test card names, and the brands of card
/// numbers (issuer identification number ranges, ISO/IEC 7812, as the networks publish them).
public enum CardNetworks {
  /// The card a sandbox test name stands for: Stripe's test tokens (`tok_visa`, `tok_visa_debit`,
  /// `tok_mastercard_prepaid`, `tok_amex`, `tok_unionpay`, …) and their declining cards (Visa
  /// credit cards at Stripe), and for every Apple Pay network `tok_NETWORK` (a credit card; for
  /// `privateLabel` a store card) or `tok_NETWORK_TYPE` (`tok_privateLabel_store`,
  /// `tok_cartesBancaires_debit`). nil for any other name.
  public static func sandboxCard(_ name: String) -> PaymentMethod? {
    if SandboxOutcome(paymentData: .string(name)) != .approved { return PaymentMethod(network: "visa", type: .credit) }
    guard name.hasPrefix("tok_") else { return nil }
    let parts = name.dropFirst(4).split(separator: "_", omittingEmptySubsequences: false)
    guard parts.count == 1 || parts.count == 2, let network = network(named: String(parts[0])) else { return nil }
    if parts.count == 1 {
      return PaymentMethod(network: network, type: network == "privatelabel" ? .store : .credit)
    }
    guard let type = CardType.allCases.first(where: { $0.rawValue.lowercased() == parts[1].lowercased() }) else {
      return nil
    }
    return PaymentMethod(network: network, type: type)
  }

  /// Examples of sandbox test card names, for messages.
  public static let sandboxExamples = "tok_visa, tok_visa_debit, tok_mastercard, tok_amex, tok_privateLabel_store"

  /// An Apple Pay network by name, lower-cased (Stripe's `mastercard` and `unionpay` included).
  static func network(named name: String) -> String? {
    let lowered = name.lowercased()
    if lowered == "unionpay" { return "chinaunionpay" }
    return ApplePayNetworks.all.first { $0.lowercased() == lowered }?.lowercased()
  }

  /// The global brand of a card number (a PAN or a device account number, whose ranges are the
  /// brand's too), lower-cased as Apple Pay names it; nil for a number in no listed range.
  public static func brand(ofCardNumber number: String) -> String? {
    let digits = Array(number.utf8.prefix(6)).map { Int($0) - 0x30 }
    guard digits.count == 6, digits.allSatisfy({ (0...9).contains($0) }) else { return nil }
    func prefix(_ count: Int) -> Int { digits.prefix(count).reduce(0) { $0 * 10 + $1 } }
    let (two, three, four) = (prefix(2), prefix(3), prefix(4))
    switch true {
    case digits[0] == 4: return "visa"
    case (51...55).contains(two), (2221...2720).contains(four): return "mastercard"
    case two == 34, two == 37: return "amex"
    case four == 6011, (644...649).contains(three), two == 65: return "discover"
    case (3528...3589).contains(four): return "jcb"
    case two == 62: return "chinaunionpay"
    case (2200...2204).contains(four): return "mir"
    case two == 50, (56...58).contains(two), two == 63, two == 67: return "maestro"
    default: return nil
    }
  }

  /// Domestic and debit networks whose cards carry a global brand's numbers (co-badged), by brand.
  static let coBadged: [String: Set<String>] = [
    "visa": ["cartesbancaires", "mada", "eftpos", "girocard", "dankort", "interac", "vpay", "electron", "bancomat"],
    "mastercard": ["cartesbancaires", "mada", "eftpos", "girocard", "bancontact", "bancomat", "maestro"],
    "maestro": ["girocard", "bancontact", "bancomat"],
  ]
}
