/// A charge token as stored: what it was authorized for and, once used, the answer it produced.
public struct ChargeTokenRecord: Sendable {
  public var token: String
  public var binding: OrderBinding
  public var billingContact: Contact?
  /// The authorized card's network and type; nil for tokens issued before version 2 (migration
  /// v2), which were priced without a card adjustment.
  public var paymentMethod: PaymentMethod?
  public var issuedAt: Int64
  public var amountMinor: Int64
  public var currencyCode: String
  public var sandboxOutcome: SandboxOutcome
  public var expiresAt: Int64
  /// When the token was used; what the use asked and answered is the journal's `order` entry.
  public var usedAt: String?
  /// The Apple Pay authorization hold the token charges; nil for sandbox test tokens.
  public var authorizationId: String?
  /// What a remote gateway charges (a Stripe `tok_…` or `pm_…`); nil for the sandbox.
  public var gatewayPaymentData: String?

  /// A token from its columns as the store holds them; a column payservice cannot read is a store
  /// failure, never a default.
  public init(
    token: String, binding: String, billingContact: String?, paymentMethod: String?, issuedAt: String,
    amountMinor: Int64, currencyCode: String, sandboxOutcome: String, expiresAt: Int64, usedAt: String?,
    authorizationId: String?, gatewayPaymentData: String?
  ) throws(StoreError) {
    guard let issued = RFC3339.parse(issuedAt) else {
      throw StoreError.unavailable(reason: "charge token \(token) has an unreadable issuedAt")
    }
    guard let outcome = SandboxOutcome(rawValue: sandboxOutcome) else {
      throw StoreError.unavailable(reason: "charge token \(token) has an unknown sandboxOutcome")
    }
    self.token = token
    self.binding = try StoredJSON.read(binding, as: OrderBinding.self, "binding")
    self.billingContact = try billingContact.map { text throws(StoreError) in
      try StoredJSON.read(text, as: Contact.self, "billingContact")
    }
    self.paymentMethod = try paymentMethod.map { text throws(StoreError) in
      try StoredJSON.read(text, as: PaymentMethod.self, "paymentMethod")
    }
    self.issuedAt = issued
    self.amountMinor = amountMinor
    self.currencyCode = currencyCode
    self.sandboxOutcome = outcome
    self.expiresAt = expiresAt
    self.usedAt = usedAt
    self.authorizationId = authorizationId
    self.gatewayPaymentData = gatewayPaymentData
  }
}

extension ChargeTokenRecord {
  /// The token as `token` inserts it, unused.
  public init(issued token: NewChargeToken) throws(StoreError) {
    try self.init(
      token: token.token, binding: token.binding, billingContact: token.billingContact,
      paymentMethod: token.paymentMethod, issuedAt: token.issuedAt, amountMinor: token.amountMinor,
      currencyCode: token.currencyCode, sandboxOutcome: token.sandboxOutcome.rawValue, expiresAt: token.expiresAt,
      usedAt: nil, authorizationId: token.authorizationId, gatewayPaymentData: token.gatewayPaymentData)
  }
}

/// A charge token to issue (`Store.issue`): the Apple Pay authorization hold it charges, if any,
/// and the token as made from the sequence number it gets.
public struct TokenIssue {
  /// Expired tokens never used that one issue deletes at most, so that no request does unbounded work.
  public static let purgeLimit = 16

  /// Recorded first; a declined hold is recorded and issues no token.
  public var hold: PaymentAuthorization?
  /// When the token is issued (Unix seconds, its `issuedAt`).
  public var issuedAt: Int64
  /// The token for a sequence number. It may be asked for a number that is then not the next
  /// (another issuer took it first): only the token made from the number taken is stored.
  public var make: (_ sequence: Int64) -> NewChargeToken

  public init(hold: PaymentAuthorization?, issuedAt: Int64, make: @escaping (_ sequence: Int64) -> NewChargeToken) {
    self.hold = hold
    self.issuedAt = issuedAt
    self.make = make
  }
}

extension TokenBook {
  /// Issues `issue` in this transaction: the next sequence number (from here to the end of the
  /// transaction no one else issues), the hold recorded, tokens never used and expired by now
  /// purged (with the billing contact they kept, at most `TokenIssue.purgeLimit`), and the new
  /// token inserted. Nil when the hold was declined; `ApplePayTokenFailure.replay` when its
  /// transaction id was recorded before.
  public func issue(_ issue: TokenIssue) throws -> NewChargeToken? {
    let sequence = try nextChargeTokenSequence()
    if let hold = issue.hold {
      try record(hold, at: RFC3339.format(issue.issuedAt))
      if hold.status == .declined { return nil }
    }
    _ = try purgeExpiredChargeTokens(now: issue.issuedAt, limit: TokenIssue.purgeLimit)
    let token = issue.make(sequence)
    try insert(token)
    return token
  }
}

extension NewChargeToken {
  /// How a token bound to `binding` is made from its sequence number: the token is the store's
  /// identifier for (merchant, sequence, binding, issuedAt), and `walletOrderToken` (if any) is
  /// made from it.
  public static func maker(
    identifiers: Identifiers, merchant: String, binding: OrderBinding, billingContact: Contact?, paymentMethod: PaymentMethod,
    amountMinor: Int64, currencyCode: String, outcome: SandboxOutcome, issuedAt: Int64, ttlSeconds: Int,
    authorizationId: String?, gatewayPaymentData: String?, walletOrderToken: ((String) -> String)?
  ) -> (Int64) -> NewChargeToken {
    let bindingText = binding.canonical
    let billing = billingContact.map(JSONWriter.string)
    let card = JSONWriter.string(paymentMethod)
    let issued = RFC3339.format(issuedAt)
    return { sequence in
      let token = identifiers.chargeToken(merchant: merchant, sequence: sequence, binding: bindingText, issuedAt: issuedAt)
      return NewChargeToken(
        token: token, sequence: sequence, binding: bindingText, billingContact: billing, paymentMethod: card,
        amountMinor: amountMinor, currencyCode: currencyCode, sandboxOutcome: outcome, issuedAt: issued,
        expiresAt: issuedAt + Int64(ttlSeconds), authorizationId: authorizationId,
        gatewayPaymentData: gatewayPaymentData, walletOrderToken: walletOrderToken?(token))
    }
  }
}

extension OrderBook {
  /// Marks a token used; a token used meanwhile is a store failure (the caller's transaction read
  /// it unused and holds it locked, so this does not happen).
  func use(_ token: String, at now: String) throws {
    guard try markUsed(token: token, at: now) else {
      throw StoreError.unavailable(reason: "charge token changed concurrently")
    }
  }
}
