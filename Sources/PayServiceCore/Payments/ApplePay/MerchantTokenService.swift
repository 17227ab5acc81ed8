/// Apple Pay's Merchant Token Management API, as payservice uses it: the details of a life-cycle
/// event Apple announced by its id alone, and the unlinking of a token whose agreement ended.
/// Apple's notification to the merchant carries no body and no signature, so an event is only ever
/// believed as Apple's own API gives it, over mutual TLS with the merchant identity certificate.
/// The `PayServiceApplePay` module makes the calls (`AppleMerchantTokenClient`); this core says
/// what they are and what came of them, so that it builds without SwiftNIO.
public protocol MerchantTokenService: Sendable {
  /// `GET {apiBase}/paymentservices/v1/merchantId/{merchantId}/merchantToken/event/{eventId}`.
  /// `eventId` has passed `MerchantTokenEventId.isValid`. Never throws.
  func event(_ eventId: String) async -> MerchantTokenEventReply
  /// `POST {apiBase}/paymentservices/v1/merchantId/{merchantId}/merchantToken/unlink` with
  /// `{"merchantTokenIdentifier": …}`. Never throws.
  func unlink(_ merchantTokenIdentifier: String) async -> MerchantTokenUnlinkReply
  /// Closes the connections; later calls are `.unavailable`. Idempotent.
  func shutdown()
}

/// What Apple's API said of one event.
public enum MerchantTokenEventReply: Sendable, Equatable {
  /// 200 with the event's details.
  case event(MerchantTokenEventDetails)
  /// 400 or 404: Apple knows no such event for this merchant (a forged or mistyped id, or one
  /// older than the seven days Apple keeps details). Apple's `errorMessage`, quoted and bounded.
  case notFound(status: Int, reason: String)
  /// 5xx, 429, another status, no answer, or an answer that is not an event: nothing is known yet;
  /// the notification is not acknowledged, so that Apple sends it again.
  case unavailable(reason: String)
}

/// What Apple's API said to an unlink.
public enum MerchantTokenUnlinkReply: Sendable, Equatable {
  /// 204: the token is unlinked (Apple answers so for a token unlinked before, too).
  case unlinked
  /// 400 (the token is not this merchant's) or another 4xx that sending again cannot mend.
  case refused(status: Int, reason: String)
  /// 5xx, 429, or no answer: sent again by the next start's sweep or `resolvePending`.
  case unavailable(reason: String)
}

/// A life-cycle event's details (`MerchantTokenEventResponse`), bounded as they were read.
public struct MerchantTokenEventDetails: Sendable, Equatable {
  /// Apple's `eventType`: `UNLINK` when the user or the issuer removed the token; other types
  /// (a card's metadata changing) leave the token usable.
  public var eventType: String
  public var merchantTokenIdentifier: String
  /// Who originated the event (Apple: the user or the card issuer), as Apple wrote it.
  public var reason: String
  /// The card's metadata when Apple gave it (`merchantTokenMetadata.cardMetadata`); never a card number.
  public var card: MerchantTokenCard?

  public init(eventType: String, merchantTokenIdentifier: String, reason: String, card: MerchantTokenCard? = nil) {
    self.eventType = eventType
    self.merchantTokenIdentifier = merchantTokenIdentifier
    self.reason = reason
    self.card = card
  }

  /// Whether the event ends the token: Apple's `UNLINK` (any case), or a type that says the token
  /// was deleted.
  public var endsToken: Bool {
    let type = eventType.uppercased()
    return type == "UNLINK" || type.contains("DELETE")
  }
}

/// The card behind a merchant token as Apple describes it (`cardMetadata`): no card number, only
/// what Wallet shows. Each field at most 128 characters.
public struct MerchantTokenCard: Sendable, Equatable, WireObject {
  public var cardCountry: String?
  /// As Apple gives it (`MM/YY` or `YYMMDD`-like text); not parsed.
  public var expirationDate: String?
  /// The card number's last digits as Wallet shows them.
  public var fpanSuffix: String?
  public var longDescription: String?
  public var shortDescription: String?

  public init(
    cardCountry: String? = nil, expirationDate: String? = nil, fpanSuffix: String? = nil, longDescription: String? = nil,
    shortDescription: String? = nil
  ) {
    self.cardCountry = cardCountry
    self.expirationDate = expirationDate
    self.fpanSuffix = fpanSuffix
    self.longDescription = longDescription
    self.shortDescription = shortDescription
  }

  public static let shape = ObjectShape<MerchantTokenCard>(
    "The card behind the merchant token as Apple describes it: no card number.", blank: { MerchantTokenCard() },
    [
      .member("cardCountry", \.cardCountry, .optional), .member("expirationDate", \.expirationDate, .optional),
      .member("fpanSuffix", \.fpanSuffix, .optional), .member("longDescription", \.longDescription, .optional),
      .member("shortDescription", \.shortDescription, .optional),
    ])

  /// The longest text kept of any field.
  public static let maxFieldLength = 128

  /// The card of `merchantTokenMetadata.cardMetadata` as JSON gives it (Apple's API, or the
  /// decrypted payment data): string fields of at most `maxFieldLength` characters of printable
  /// text are kept, anything else is dropped; nil when nothing is left.
  public static func read(_ metadata: JSONValue?) -> MerchantTokenCard? {
    guard case .object(let object)? = metadata, case .object(let card)? = object["cardMetadata"] else { return nil }
    func text(_ key: String) -> String? {
      guard case .string(let value)? = card[key], !value.isEmpty, value.count <= maxFieldLength,
        value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
      else { return nil }
      return value
    }
    let read = MerchantTokenCard(
      cardCountry: text("cardCountry"), expirationDate: text("expirationDate"), fpanSuffix: text("fpanSuffix"),
      longDescription: text("longDescription"), shortDescription: text("shortDescription"))
    return read == MerchantTokenCard() ? nil : read
  }
}

/// What may be put into Apple's URL as an event id, or sent as a merchant token identifier: a
/// plain identifier of 1 to 128 letters, digits, `-` and `_` (Apple's are UUIDs and hex strings).
/// Anything else (a slash, a dot, a percent sign, a space) never reaches a URL.
public enum MerchantTokenEventId {
  public static let maxLength = 128

  public static func isValid(_ text: String) -> Bool {
    let bytes = text.utf8
    return !bytes.isEmpty && bytes.count <= maxLength
      && bytes.allSatisfy { byte in
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D
          || byte == 0x5F
      }
  }
}

/// `applePay.merchantTokens`: where Apple's Merchant Token Management API is, and what to trust
/// there. The client identity is the merchant identity certificate (`applePay.merchantSession`).
public struct MerchantTokenSettings: Sendable {
  /// Apple's production gateway.
  public static let appleAPIBase = "https://apple-pay-gateway.apple.com"
  /// Scheme and host (and port) only; the API's paths are appended.
  public var apiBase = MerchantTokenSettings.appleAPIBase
  /// A PEM file's text of CA certificates trusted instead of the system's; nil: the system roots.
  public var trustRootsPEM: String?
  public var identity: MerchantIdentity
  public var connectTimeoutSeconds: Double = 5
  public var requestTimeoutSeconds: Double = 10

  public init(identity: MerchantIdentity, apiBase: String = MerchantTokenSettings.appleAPIBase, trustRootsPEM: String? = nil) {
    self.identity = identity
    self.apiBase = apiBase
    self.trustRootsPEM = trustRootsPEM
  }
}
