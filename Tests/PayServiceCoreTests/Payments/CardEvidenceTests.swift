import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// What a payment shows about its card (`CardNetworks`), and when a claim about it is refused
/// (`AuthorizePayment.claimProblem`).
@Suite("Card evidence")
struct CardEvidenceTests {
  @Test("sandbox test card names stand for their card (network lower-cased, as recorded); any other name for none")
  func sandboxCards() {
    func card(_ name: String) -> String? {
      CardNetworks.sandboxCard(name).map { "\($0.network) \($0.type.rawValue)" }
    }
    #expect(card("tok_visa") == "visa credit")
    #expect(card("tok_visa_debit") == "visa debit")
    #expect(card("tok_mastercard") == "mastercard credit")
    #expect(card("tok_mastercard_prepaid") == "mastercard prepaid")
    #expect(card("tok_unionpay") == "chinaunionpay credit")
    #expect(card("tok_privateLabel") == "privatelabel store")
    #expect(card("tok_privatelabel_store") == "privatelabel store")
    #expect(card("tok_cartesBancaires_debit") == "cartesbancaires debit")
    #expect(card("tok_visa_chargeDeclined") == "visa credit")
    #expect(card("tok_refundFail") == "visa credit")
    for name in ["tok_", "tok_visa_debit_x", "tok_visa_gold", "tok_diners", "visa", "tok_anything", "pm_card_visa"] {
      #expect(card(name) == nil, "\(name)")
    }
  }

  @Test("card numbers show their global brand by their first digits")
  func brands() {
    let cases: [(String, String?)] = [
      ("4109370251004320", "visa"), ("5105105105105100", "mastercard"), ("2221000000000009", "mastercard"),
      ("2720990000000007", "mastercard"), ("2721000000000004", nil), ("378282246310005", "amex"),
      ("6011111111111117", "discover"), ("6445644564456445", "discover"), ("3530111333300000", "jcb"),
      ("6200000000000005", "chinaunionpay"), ("2200000000000004", "mir"), ("5018000000000009", "maestro"),
      ("1234567890123456", nil), ("41093", nil), ("4x09370251004320", nil),
    ]
    for (number, brand) in cases {
      #expect(CardNetworks.brand(ofCardNumber: number) == brand, "\(number)")
    }
  }

  static func params(network: String, type: String) throws -> AuthorizePayment.Params {
    let json = """
      {"items":[{"sku":"clock"}],"shippingMethod":"standard","payment":{"token":{"paymentData":"tok_visa",\
      "paymentMethod":{"displayName":"Card","network":"\(network)","type":"\(type)"},"transactionIdentifier":"T"}}}
      """
    return try AuthorizePayment.readParams(try JSONParser.parse(json), context: context)
  }

  /// The discounts store with a Cartes Bancaires discount first.
  static let context: ServiceContext = {
    let yaml = try! String(contentsOfFile: TestConfig.discountsPath, encoding: .utf8).replacingOccurrences(
      of: "paymentMethodAdjustments:\n",
      with: "paymentMethodAdjustments:\n  - label: CB discount\n    network: cartesBancaires\n    percent: \"-10\"\n"
    ).replacingOccurrences(
      of: "supportedNetworks: [visa, masterCard, amex, privateLabel]",
      with: "supportedNetworks: [visa, masterCard, amex, privateLabel, cartesBancaires, mada]")
    let config = try! ConfigLoader.parse(yaml: yaml)
    return try! TestConfig.context(config: config)
  }()

  @Test("a card number's brand must be the claimed network; a co-badged one only when it prices the same")
  func claimsAgainstACardNumber() throws {
    let visa = CardEvidence(network: "visa", type: nil, source: "the card number in the payment data", allowsCoBadges: true)
    func problem(_ network: String, _ type: String) throws -> String? {
      AuthorizePayment.claimProblem(
        try Self.params(network: network, type: type), evidence: visa, context: Self.context, now: TestConfig.now)
    }
    #expect(try problem("Visa", "debit") == nil)
    #expect(
      try problem("masterCard", "credit")
        == "the card's network is visa (by the card number in the payment data), but payment.token.paymentMethod says masterCard")
    // mada on a Visa number: no adjustment for either; a co-badge the number cannot show, taken.
    #expect(try problem("mada", "debit") == nil)
    // Cartes Bancaires on a Visa number would get the CB discount instead of the credit surcharge.
    #expect(
      try problem("cartesBancaires", "credit")
        == "the card's network is visa (by the card number in the payment data); payservice cannot confirm cartesBancaires from it, and cartesBancaires is priced differently")
    // privateLabel is no co-badge of Visa.
    #expect(
      try problem("privateLabel", "store")
        == "the card's network is visa (by the card number in the payment data), but payment.token.paymentMethod says privateLabel")
  }
}
