/// What in-app purchases grant, kept so that the order Apple's messages arrive in does not matter.
///
/// Each transaction is kept as its latest signed version (by `signedDate`; a tie goes to the
/// greater document text, so that either order keeps the same one), each subscription's renewal
/// info likewise, and entitlements are computed from what is kept, at the service clock. Merging by
/// "latest signed wins" is the same whatever order and however often items come, so a duplicate
/// changes nothing and an older item arriving after a newer one is recorded but overwrites nothing.
public enum AppStoreLedger {
  /// What recording an item changed, for the account it is about.
  public enum Effect: String, Sendable, WireEnum {
    /// Nothing: the item was known already (or carries nothing to keep: TEST, CONSUMPTION_REQUEST).
    case none
    /// Nothing: the item is older than what is kept (it is recorded, and overwrites nothing).
    case stale
    /// A consumable's units were added to the balance.
    case credited
    /// A consumable's units came off the balance (refunded or revoked).
    case debited
    /// The account gained the entitlement.
    case granted
    /// The entitlement lasts longer (a renewal, an extension).
    case extended
    /// The entitlement was taken back (a refund, a revocation).
    case revoked
    /// A revoked entitlement came back (a refund reversed).
    case restored
    /// The entitlement changed otherwise (renewal status, billing retry, grace period, expiry), or
    /// a purchase was recorded that gives no access now (a subscription already expired).
    case updated
  }

  /// Where an entitlement stands at the service clock.
  public enum Status: String, Sendable, WireEnum {
    /// In force: paid for and not expired (a non-consumable: bought and not refunded).
    case active
    /// The period ended, the App Store retries billing, and access continues until the grace
    /// period's end.
    case gracePeriod = "grace_period"
    /// The period ended and the App Store retries billing, with no access meanwhile.
    case billingRetry = "billing_retry"
    case expired
    /// Refunded or revoked.
    case revoked

    public var hasAccess: Bool { self == .active || self == .gracePeriod }
  }

  /// Why an item was not recorded.
  public struct Refusal: Error, Equatable {
    public enum Code: String, Sendable, WireEnum {
      case unknownProduct = "unknown_product"
      case wrongAccount = "wrong_account"
      /// The back office would move a purchase whose units the old account has spent.
      case unitsSpent = "units_spent"
    }
    public var code: Code
    public var message: String
  }

  /// The lock space of purchase chains (`StoreTransaction.lockKey`).
  static let chainLock = "appStoreChain"

  /// What recording changed, and the transaction as kept.
  struct Applied {
    var account: String
    var originalTransactionId: String
    var transaction: AppStoreTransaction?
    var effect: Effect
  }

  /// Records a verified transaction and/or renewal info of one chain, in `transaction`: the chain
  /// locked first. Its account is what Apple signed (the transaction's `appAccountToken`), else
  /// what the back office `assigns`, else the chain's own `originalTransactionId`; nothing a caller
  /// merely claims sets it. A chain under its own id moves to the account Apple's signed data or
  /// the back office names later, and what was spent from it moves along; a chain under an
  /// account stays there unless the back office moves it, and not when the account it leaves has
  /// spent more units than it would have left (`units_spent`).
  static func record(
    transaction item: AppStoreTransaction?, renewal: AppStoreRenewal?, assign: String?,
    settings: AppStoreSettings, _ transaction: any StoreTransaction, now: Int64
  ) throws -> Applied {
    guard let originalId = item?.originalTransactionId ?? renewal?.originalTransactionId else {
      preconditionFailure("record needs a transaction or a renewal info")
    }
    let stamp = RFC3339.format(now)
    var product: AppStoreProduct?
    if let item {
      guard let known = settings.products[item.productId] else {
        throw Refusal(
          code: .unknownProduct,
          message: "product \(item.productId) is not in appStore.products: nothing was granted; add it to the config to grant it")
      }
      product = known
    }
    var isNew = false
    var chain: AppStoreChainRow
    try transaction.lockKey(Self.chainLock, originalId)
    if let kept = try transaction.appStoreChain(originalId) {
      chain = kept
    } else {
      guard let item, let product else {
        // Renewal info of a chain not heard of: its transaction (which Apple sends with it) makes
        // the chain; alone it has no product or account to go on.
        return Applied(account: originalId, originalTransactionId: originalId, transaction: nil, effect: .none)
      }
      isNew = true
      chain = AppStoreChainRow(
        originalTransactionId: originalId, account: originalId,
        productId: item.productId, kind: product.kind, entitlement: product.entitlement, environment: item.environment,
        renewalSignedDate: nil, renewal: nil, createdAt: stamp, updatedAt: stamp)
    }
    var chainChanged = isNew
    if let signed = item?.appAccountToken, let assign, signed != assign {
      throw Refusal(
        code: .wrongAccount,
        message: "purchase \(originalId) is signed for another account than \(assign): nothing was recorded")
    }
    if let named = item?.appAccountToken ?? assign, named != chain.account {
      let left = chain.account
      if left == originalId {
        // An account named by the chain's own id holds this chain alone: its spending goes with it.
        if !isNew { try transaction.moveConsumptions(account: left, to: named) }
      } else {
        guard assign != nil, item?.appAccountToken == nil else {
          throw Refusal(
            code: .wrongAccount,
            message: "purchase \(originalId) belongs to another account than \(named): nothing was recorded")
        }
      }
      chain.account = named
      chainChanged = true
      if left != originalId {
        // The back office moves a chain between accounts: the account it leaves must still have bought
        // at least what it spent.
        try transaction.save(chain, isNew: false)
        chainChanged = false
        let credits = try transaction.appStoreCredits(account: left)
        for (entitlement, spent) in try transaction.appStoreConsumed(account: left)
        where spent > (credits[entitlement]?.purchased ?? 0) {
          throw Refusal(
            code: .unitsSpent,
            message:
              "purchase \(originalId) cannot move: the account it belongs to has spent \(spent) \(entitlement), more than it would have left: nothing was recorded")
        }
      }
    }
    let before = isNew ? nil : try state(of: chain, transaction, settings: settings, now: now)
    var stale = false
    var kept = item
    if let item, let product {
      let document = JSONWriter.string(item)
      let units = product.kind == .consumable ? (product.units ?? 0) * Int64(item.quantity) : 0
      let row = AppStoreTransactionRow(
        transactionId: item.transactionId, originalTransactionId: originalId, entitlement: product.entitlement,
        units: units, revoked: item.revocationDate != nil, signedDate: Int64(item.signedDate), document: document,
        recordedAt: stamp, updatedAt: stamp)
      if let existing = try transaction.appStoreTransaction(item.transactionId) {
        if Self.isNewer(row.signedDate, document, than: existing.signedDate, existing.document) {
          if isNew || chainChanged { try transaction.save(chain, isNew: isNew) }
          (isNew, chainChanged) = (false, false)
          var updated = row
          updated.recordedAt = existing.recordedAt
          try transaction.save(updated, isNew: false)
        } else {
          stale = stale || existing.signedDate > row.signedDate
          kept = try StoredJSON.read(existing.document, as: AppStoreTransaction.self, "App Store transaction")
        }
      } else {
        if isNew || chainChanged { try transaction.save(chain, isNew: isNew) }
        (isNew, chainChanged) = (false, false)
        try transaction.save(row, isNew: true)
      }
    }
    if let renewal {
      let document = JSONWriter.string(renewal)
      let signed = Int64(renewal.signedDate)
      if let keptDate = chain.renewalSignedDate, let keptDocument = chain.renewal,
        !Self.isNewer(signed, document, than: keptDate, keptDocument)
      {
        stale = stale || keptDate > signed
      } else {
        chain.renewalSignedDate = signed
        chain.renewal = document
        chain.updatedAt = stamp
        chainChanged = true
      }
    }
    if isNew || chainChanged { try transaction.save(chain, isNew: isNew) }
    let after = try state(of: chain, transaction, settings: settings, now: now)
    return Applied(
      account: chain.account, originalTransactionId: originalId, transaction: kept,
      effect: effect(from: before, to: after, stale: stale))
  }

  /// Whether a version signed at `date` with `document` replaces the kept one.
  static func isNewer(_ date: Int64, _ document: String, than keptDate: Int64, _ keptDocument: String) -> Bool {
    date != keptDate ? date > keptDate : document > keptDocument
  }

  /// A chain as its entitlement stands, for comparing before and after.
  struct ChainState: Equatable {
    var entitlement: Entitlement?
    var creditedUnits: Int64
  }

  static func state(
    of chain: AppStoreChainRow, _ transaction: any StoreTransaction, settings: AppStoreSettings, now: Int64
  ) throws -> ChainState {
    let rows = try transaction.appStoreTransactions(originalTransactionId: chain.originalTransactionId)
    let credited = rows.filter { !$0.revoked }.reduce(Int64(0)) { $0 + $1.units }
    return ChainState(
      entitlement: try entitlement(of: chain, rows, settings: settings, now: now), creditedUnits: credited)
  }

  static func effect(from before: ChainState?, to after: ChainState, stale: Bool) -> Effect {
    let was = before ?? ChainState(entitlement: nil, creditedUnits: 0)
    if after.creditedUnits > was.creditedUnits { return .credited }
    if after.creditedUnits < was.creditedUnits { return .debited }
    guard let now = after.entitlement, now != was.entitlement else { return stale ? .stale : .none }
    guard let then = was.entitlement else { return now.status.hasAccess ? .granted : .updated }
    if now.status == .revoked, then.status != .revoked { return .revoked }
    if then.status == .revoked, now.status != .revoked { return .restored }
    // RFC 3339 times of one form compare as text.
    if let expires = now.expiresDate, let previous = then.expiresDate, expires > previous { return .extended }
    if now.status == .active, !then.status.hasAccess { return .granted }
    return .updated
  }

  /// What a chain grants at `now` (seconds); nil for a consumable's (which credits a balance).
  static func entitlement(
    of chain: AppStoreChainRow, _ rows: [AppStoreTransactionRow], settings: AppStoreSettings, now: Int64
  ) throws -> Entitlement?
  {
    guard chain.kind != .consumable else { return nil }
    var latest: AppStoreTransaction?
    var latestRow: AppStoreTransactionRow?
    for row in rows {
      let item = try StoredJSON.read(row.document, as: AppStoreTransaction.self, "App Store transaction")
      guard !item.isUpgraded else { continue }
      if let current = latest,
        (current.purchaseDate, current.transactionId) >= (item.purchaseDate, item.transactionId)
      {
        continue
      }
      (latest, latestRow) = (item, row)
    }
    guard let latest, let latestRow else { return nil }
    let renewal = try chain.renewal.map { try StoredJSON.read($0, as: AppStoreRenewal.self, "App Store renewal info") }
    let nowMs = Int(now) * 1000
    var entitlement = Entitlement(
      entitlement: latestRow.entitlement, status: .active, productId: latest.productId, type: chain.kind,
      originalTransactionId: chain.originalTransactionId, transactionId: latest.transactionId)
    var expires: Int?
    switch chain.kind {
    case .consumable:
      return nil
    case .nonConsumable:
      break
    case .nonRenewing:
      // The App Store dates no end for these: the config's duration from the purchase.
      let days = settings.products[latest.productId]?.durationDays ?? 0
      expires = latest.purchaseDate + days * 86_400_000
    case .autoRenewable:
      expires = latest.expiresDate
      entitlement.autoRenew = renewal?.autoRenewStatus
    }
    func date(_ milliseconds: Int) -> String { RFC3339.format(Int64(milliseconds / 1000)) }
    entitlement.expiresDate = expires.map(date)
    if latest.revocationDate != nil {
      entitlement.status = .revoked
    } else if let expires, expires <= nowMs {
      if chain.kind == .autoRenewable, let renewal, renewal.isInBillingRetryPeriod == true {
        if let grace = renewal.gracePeriodExpiresDate, grace > nowMs {
          entitlement.status = .gracePeriod
          entitlement.gracePeriodExpiresDate = date(grace)
        } else {
          entitlement.status = .billingRetry
        }
      } else {
        entitlement.status = .expired
      }
    }
    entitlement.active = entitlement.status.hasAccess
    return entitlement
  }
}

/// One entitlement of an account and the purchase it comes from.
public struct Entitlement: Sendable, Equatable, WireObject {
  public var entitlement = ""
  public var status = AppStoreLedger.Status.active
  /// Whether the account has the entitlement now (active or grace_period).
  public var active = true
  public var productId = ""
  public var type = AppStoreProduct.Kind.nonConsumable
  public var originalTransactionId = ""
  public var transactionId = ""
  public var expiresDate: String?
  public var gracePeriodExpiresDate: String?
  /// Whether the subscription renews at the end of its period (its latest renewal info).
  public var autoRenew: Bool?

  public init() {}

  init(
    entitlement: String, status: AppStoreLedger.Status, productId: String, type: AppStoreProduct.Kind,
    originalTransactionId: String, transactionId: String
  ) {
    self.entitlement = entitlement
    self.status = status
    self.productId = productId
    self.type = type
    self.originalTransactionId = originalTransactionId
    self.transactionId = transactionId
  }

  public static let shape = ObjectShape<Entitlement>(
    blank: { Entitlement() },
    [
      .member("entitlement", \.entitlement, .required, .string("The entitlement the config's product grants.")),
      .member(
        "status", \.status, .required,
        .string(
          "active, grace_period (billing retried, access continues), billing_retry (no access), expired or revoked.",
          values: AppStoreLedger.Status.allCases.map(\.rawValue))),
      .member(
        "active", \.active, .required, .boolean("Whether the account has the entitlement now (active or grace_period).")),
      .member("productId", \.productId), .member("type", \.type),
      .member("originalTransactionId", \.originalTransactionId), .member("transactionId", \.transactionId),
      .member("expiresDate", \.expiresDate, .optional, Shapes.timestamp),
      .member("gracePeriodExpiresDate", \.gracePeriodExpiresDate, .optional, Shapes.timestamp),
      .member("autoRenew", \.autoRenew, .optional),
    ])
}
