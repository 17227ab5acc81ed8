/// Stripe's documented test cards (https://docs.stripe.com/testing), by the name they share as a
/// test token (`tok_<name>`) and a test PaymentMethod (`pm_card_<name>`). Stripe's testing page
/// lists PaymentMethods but no tokens for its "Authentication and setup" cards
/// (`authenticationRequiredOnSetup`, `authenticationRequired`,
/// `authenticationRequiredSetupForOffSession`, `authenticationRequiredChargeDeclinedInsufficientFunds`);
/// this server takes `tok_<name>` for them too, as for every card, so that a checkout (which
/// charges tokens) can keep one.
struct StripeTestCard: Sendable {
  enum Outcome: Sendable {
    case succeeds
    /// Declined with a card_error (HTTP 402).
    case declines(code: String, declineCode: String, message: String, param: String?)
    /// The charge succeeds; a refund starts `succeeded` and later becomes `failed`
    /// (https://docs.stripe.com/testing#refunds, card 4000 0000 0000 5126).
    case refundFails
    /// The charge succeeds; a refund starts `pending` and later becomes `succeeded`
    /// (card 4000 0000 0000 7726).
    case refundPending
    /// The card's bank asks for 3-D Secure on every payment, however the card was set up ("Always
    /// authenticate", Stripe's card 4000 0027 6000 3184, `pm_card_authenticationRequired`): a
    /// PaymentIntent confirmed with `error_on_requires_action=true` is declined with
    /// `authentication_required`; without it, it stays `requires_action`; confirmed with
    /// `off_session=true`, it is declined `authentication_required` (nobody is there to
    /// authenticate); a SetupIntent waits in `requires_action`.
    case authenticationRequired
    /// "Authenticate unless set up" (Stripe's card 4000 0025 0000 3155,
    /// `pm_card_authenticationRequiredOnSetup`): on-session payments always need the customer (as
    /// `authenticationRequired`); a SetupIntent waits in `requires_action` until the customer
    /// authenticates (`StripeTestServer.authenticateSetupIntent`); off-session payments are declined
    /// `authentication_required` unless the PaymentMethod was set up for off-session use (a
    /// SetupIntent with `usage=off_session` that succeeded, or a PaymentIntent with
    /// `setup_future_usage=off_session` that did), then they succeed.
    case authenticationRequiredOnSetup
    /// "Already set up" (Stripe's card 4000 0038 0000 0446,
    /// `pm_card_authenticationRequiredSetupForOffSession`): on-session payments need the customer;
    /// off-session payments succeed, and so does a SetupIntent.
    case authenticationRequiredSetUpForOffSession
    /// "Insufficient funds" (Stripe's card 4000 0082 6000 3178,
    /// `pm_card_authenticationRequiredChargeDeclinedInsufficientFunds`): on-session payments need the
    /// customer; a SetupIntent waits for them; every off-session payment is declined
    /// `card_declined`/`insufficient_funds`, set up or not.
    case authenticationRequiredThenDeclines
    /// "Decline after attaching" (Stripe's card 4000 0000 0000 0341, `pm_card_chargeCustomerFail`,
    /// `tok_chargeCustomerFail`, `tok_visa_chargeCustomerFail`, and `…LostCard`/`…StolenCard`):
    /// attaching it to a Customer (a SetupIntent, `POST /v1/payment_methods/{id}/attach`) succeeds,
    /// every charge of it is declined `card_declined` with `declineCode`. (Stripe's testing page
    /// does not give the decline code of the plain card; `generic_decline` is this server's choice.)
    case chargeCustomerFail(declineCode: String, message: String)
    /// This test server's own: the PaymentIntent answers `processing` and stays so until
    /// `StripeTestServer.settleProcessing` ends it (as a bank debit would, days later).
    case processing
    /// This test server's own refund outcomes, one per status Stripe's Refund object allows
    /// besides `succeeded` and `pending`: the refund answers `requires_action` (and stays so),
    /// `canceled`, a null `status` (then `succeeded`), or `failed` at once
    /// (`failure_reason` `declined`). A canceled or failed refund gives nothing back.
    case refundRequiresAction, refundCanceled, refundNoStatus, refundFailsAtOnce
  }

  let brand: String
  let last4: String
  let funding: String
  let outcome: Outcome

  static let genericDecline = Outcome.declines(
    code: "card_declined", declineCode: "generic_decline", message: "Your card was declined.", param: nil)

  /// The cards, keyed by name. Stripe names declining test cards both `chargeDeclined…` and
  /// `visa_chargeDeclined…` (the newer form); both are accepted.
  static let byName: [String: StripeTestCard] = {
    var cards: [String: StripeTestCard] = [
      "visa": .init(brand: "visa", last4: "4242", funding: "credit", outcome: .succeeds),
      "visa_debit": .init(brand: "visa", last4: "5556", funding: "debit", outcome: .succeeds),
      "mastercard": .init(brand: "mastercard", last4: "4444", funding: "credit", outcome: .succeeds),
      "mastercard_debit": .init(brand: "mastercard", last4: "8210", funding: "debit", outcome: .succeeds),
      "mastercard_prepaid": .init(brand: "mastercard", last4: "5100", funding: "prepaid", outcome: .succeeds),
      "amex": .init(brand: "amex", last4: "8431", funding: "credit", outcome: .succeeds),
      "discover": .init(brand: "discover", last4: "1117", funding: "credit", outcome: .succeeds),
      "diners": .init(brand: "diners", last4: "0004", funding: "credit", outcome: .succeeds),
      "jcb": .init(brand: "jcb", last4: "0505", funding: "credit", outcome: .succeeds),
      "unionpay": .init(brand: "unionpay", last4: "0005", funding: "credit", outcome: .succeeds),
      "refundFail": .init(brand: "visa", last4: "5126", funding: "credit", outcome: .refundFails),
      "pendingRefund": .init(brand: "visa", last4: "7726", funding: "credit", outcome: .refundPending),
      "authenticationRequired": .init(brand: "visa", last4: "3184", funding: "credit", outcome: .authenticationRequired),
      "authenticationRequiredOnSetup": .init(
        brand: "visa", last4: "3155", funding: "credit", outcome: .authenticationRequiredOnSetup),
      "authenticationRequiredSetupForOffSession": .init(
        brand: "visa", last4: "0446", funding: "credit", outcome: .authenticationRequiredSetUpForOffSession),
      "authenticationRequiredChargeDeclinedInsufficientFunds": .init(
        brand: "visa", last4: "3178", funding: "credit", outcome: .authenticationRequiredThenDeclines),
      "processing": .init(brand: "visa", last4: "0950", funding: "credit", outcome: .processing),
      "refundRequiresAction": .init(brand: "visa", last4: "0951", funding: "credit", outcome: .refundRequiresAction),
      "refundCanceled": .init(brand: "visa", last4: "0952", funding: "credit", outcome: .refundCanceled),
      "refundNoStatus": .init(brand: "visa", last4: "0953", funding: "credit", outcome: .refundNoStatus),
      "refundFailsAtOnce": .init(brand: "visa", last4: "0954", funding: "credit", outcome: .refundFailsAtOnce),
      "chargeDeclinedExpiredCard": .init(
        brand: "visa", last4: "0069", funding: "credit",
        outcome: .declines(
          code: "expired_card", declineCode: "expired_card", message: "Your card has expired.", param: "exp_month")),
      "chargeDeclinedIncorrectCvc": .init(
        brand: "visa", last4: "0127", funding: "credit",
        outcome: .declines(
          code: "incorrect_cvc", declineCode: "incorrect_cvc", message: "Your card's security code is incorrect.",
          param: "cvc")),
      "chargeDeclinedProcessingError": .init(
        brand: "visa", last4: "0119", funding: "credit",
        outcome: .declines(
          code: "processing_error", declineCode: "processing_error",
          message: "An error occurred while processing your card. Try again in a little bit.", param: nil)),
    ]
    let declines: [(String, String, String, String)] = [
      ("chargeDeclined", "0002", "generic_decline", "Your card was declined."),
      ("chargeDeclinedInsufficientFunds", "9995", "insufficient_funds", "Your card has insufficient funds."),
      ("chargeDeclinedLostCard", "9987", "lost_card", "Your card was declined."),
      ("chargeDeclinedStolenCard", "9979", "stolen_card", "Your card was declined."),
      ("chargeDeclinedFraudulent", "0019", "fraudulent", "Your card was declined."),
      (
        "chargeDeclinedVelocityLimitExceeded", "6975", "card_velocity_exceeded",
        "Your card was declined for making repeated attempts too frequently or exceeding its amount limit."
      ),
    ]
    // Cards that attach and then decline every charge: Stripe documents `tok_chargeCustomerFail`,
    // `tok_visa_chargeCustomerFail`, `tok_visa_chargeCustomerFailLostCard`,
    // `tok_visa_chargeCustomerFailStolenCard` and `pm_card_chargeCustomerFail`.
    let customerFails: [(String, String, String)] = [
      ("chargeCustomerFail", "generic_decline", "Your card was declined."),
      ("visa_chargeCustomerFail", "generic_decline", "Your card was declined."),
      ("visa_chargeCustomerFailLostCard", "lost_card", "Your card was declined."),
      ("visa_chargeCustomerFailStolenCard", "stolen_card", "Your card was declined."),
    ]
    for (name, declineCode, message) in customerFails {
      cards[name] = StripeTestCard(
        brand: "visa", last4: "0341", funding: "credit",
        outcome: .chargeCustomerFail(declineCode: declineCode, message: message))
    }
    for (name, last4, declineCode, message) in declines {
      let card = StripeTestCard(
        brand: "visa", last4: last4, funding: "credit",
        outcome: .declines(code: "card_declined", declineCode: declineCode, message: message, param: nil))
      cards[name] = card
      cards["visa_" + name] = card
    }
    return cards
  }()

  /// The card behind a magic test token (`tok_visa`).
  static func token(_ id: String) -> StripeTestCard? {
    id.hasPrefix("tok_") ? byName[String(id.dropFirst(4))] : nil
  }

  /// The card of a token made from an Apple Pay token (`POST /v1/tokens` with `pk_token`): the test
  /// card `instrumentName` names exactly (`visa_debit`, `chargeDeclined`, …), else the credit card
  /// of `network` (Apple Pay's network names, any case: `visa`, `masterCard`, `amex`, `discover`,
  /// `JCB`, `chinaUnionPay`). Nil for a network without a test card.
  static func applePay(network: String, instrumentName: String?) -> StripeTestCard? {
    if let name = instrumentName, let card = byName[name] { return card }
    return applePayNetworks[network.lowercased()].flatMap { byName[$0] }
  }

  /// Apple Pay's networks (lower-cased) that have a test card, and its name.
  static let applePayNetworks = [
    "visa": "visa", "mastercard": "mastercard", "amex": "amex", "discover": "discover", "jcb": "jcb",
    "chinaunionpay": "unionpay",
  ]

  /// The card behind a magic test PaymentMethod (`pm_card_visa`).
  static func paymentMethod(_ id: String) -> StripeTestCard? {
    id.hasPrefix("pm_card_") ? byName[String(id.dropFirst(8))] : nil
  }
}

/// ISO 4217 currencies as Stripe takes them (lowercase), with their minor-unit exponents and
/// the minimum charge amounts Stripe documents (https://docs.stripe.com/currencies).
enum StripeCurrency {
  static let supported: [String] = [
    "usd", "aed", "afn", "all", "amd", "ang", "aoa", "ars", "aud", "awg", "azn", "bam", "bbd", "bdt", "bgn", "bhd",
    "bif", "bmd", "bnd", "bob", "brl", "bsd", "bwp", "byn", "bzd", "cad", "cdf", "chf", "clp", "cny", "cop", "crc",
    "cve", "czk", "djf", "dkk", "dop", "dzd", "egp", "etb", "eur", "fjd", "fkp", "gbp", "gel", "gip", "gmd", "gnf",
    "gtq", "gyd", "hkd", "hnl", "htg", "huf", "idr", "ils", "inr", "isk", "jmd", "jod", "jpy", "kes", "kgs", "khr",
    "kmf", "krw", "kwd", "kyd", "kzt", "lak", "lbp", "lkr", "lrd", "lsl", "mad", "mdl", "mga", "mkd", "mmk", "mnt",
    "mop", "mur", "mvr", "mwk", "mxn", "myr", "mzn", "nad", "ngn", "nio", "nok", "npr", "nzd", "omr", "pab", "pen",
    "pgk", "php", "pkr", "pln", "pyg", "qar", "ron", "rsd", "rub", "rwf", "sar", "sbd", "scr", "sek", "sgd", "shp",
    "sle", "sos", "srd", "szl", "thb", "tjs", "tnd", "top", "try", "ttd", "twd", "tzs", "uah", "ugx", "uyu", "uzs",
    "vnd", "vuv", "wst", "xaf", "xcd", "xof", "xpf", "yer", "zar", "zmw",
  ]
  static let supportedSet = Set(supported)
  static let zeroDecimal: Set<String> = [
    "bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv", "xaf", "xof", "xpf",
  ]
  static let threeDecimal: Set<String> = ["bhd", "jod", "kwd", "omr", "tnd"]
  static let minimumCharge: [String: Int64] = [
    "usd": 50, "aed": 200, "aud": 50, "bgn": 100, "brl": 50, "cad": 50, "chf": 50, "czk": 1_500, "dkk": 250,
    "eur": 50, "gbp": 30, "hkd": 400, "huf": 17_500, "inr": 50, "jpy": 50, "mxn": 1_000, "myr": 200, "nok": 300,
    "nzd": 50, "pln": 200, "ron": 200, "sek": 300, "sgd": 50, "thb": 1_000,
  ]
  static let symbols: [String: String] = ["usd": "$", "eur": "€", "gbp": "£", "jpy": "¥", "inr": "₹"]

  /// `amount` minor units as Stripe's messages show money: "$0.50", "$999,999.99", "¥50".
  static func format(_ amount: Int64, _ currency: String) -> String {
    let exponent = zeroDecimal.contains(currency) ? 0 : threeDecimal.contains(currency) ? 3 : 2
    var divisor: Int64 = 1
    for _ in 0..<exponent { divisor *= 10 }
    let major = amount / divisor
    let minor = amount % divisor
    var digits = String(major)
    var grouped = ""
    while digits.count > 3 {
      grouped = "," + digits.suffix(3) + grouped
      digits = String(digits.dropLast(3))
    }
    grouped = digits + grouped
    let minorDigits = String(minor)
    let fraction = exponent == 0 ? "" : "." + String(repeating: "0", count: exponent - minorDigits.count) + minorDigits
    let symbol = symbols[currency] ?? (currency.uppercased() + " ")
    return symbol + grouped + fraction
  }
}
