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

extension TokenBook {
  /// Inserts a new charge token and returns it; `authorizationId` names the Apple Pay authorization
  /// hold it charges. The token is derived from the next sequence number, so the same store state
  /// and clock issue the same token.
  func issueChargeToken(
    identifiers: Identifiers, merchant: String, binding: OrderBinding, billingContact: Contact?, paymentMethod: PaymentMethod,
    amountMinor: Int64, currencyCode: String, outcome: SandboxOutcome, issuedAt: Int64, ttlSeconds: Int,
    authorizationId: String?, gatewayPaymentData: String? = nil, walletOrderToken: ((String) -> String)? = nil
  ) throws -> (token: String, walletOrderToken: String?) {
    let sequence = try nextChargeTokenSequence()
    // Tokens never used are kept no longer than they are valid (with the billing contact they hold),
    // a bounded number per issue so that no request does unbounded work; after the sequence, whose
    // lock (PostgreSQL) orders issuers before they lock any token row.
    _ = try purgeExpiredChargeTokens(now: issuedAt, limit: 16)
    let bindingText = binding.canonical
    let token = identifiers.chargeToken(
      merchant: merchant, sequence: sequence, binding: bindingText, issuedAt: issuedAt)
    let walletToken = walletOrderToken?(token)
    try insert(
      NewChargeToken(
        token: token, sequence: sequence, binding: bindingText, billingContact: billingContact.map(JSONWriter.string),
        paymentMethod: JSONWriter.string(paymentMethod), amountMinor: amountMinor, currencyCode: currencyCode, sandboxOutcome: outcome,
        issuedAt: RFC3339.format(issuedAt), expiresAt: issuedAt + Int64(ttlSeconds), authorizationId: authorizationId,
        gatewayPaymentData: gatewayPaymentData, walletOrderToken: walletToken))
    return (token, walletToken)
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
