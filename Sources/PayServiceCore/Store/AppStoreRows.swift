import Foundation

/// Rows of in-app purchases (migration v13), the same on every backend: each purchase chain (an
/// `originalTransactionId`: one purchase, or a subscription with its renewals) and the account it
/// belongs to, each transaction as last signed, each notification heard, each spending of units.

/// A purchase chain: whose it is (the only place the account is kept, so that an app naming the
/// account of a chain first heard without one moves the whole chain), what it grants, and the subscription's renewal info as last
/// signed. Locked first by everything that changes the chain.
public struct AppStoreChainRow: Sendable, Equatable {
  public var originalTransactionId: String
  /// The `appAccountToken` (lower-case UUID) of the chain, or its `originalTransactionId` when the
  /// app set none: fixed when the chain is first recorded.
  public var account: String
  public var productId: String
  public var kind: AppStoreProduct.Kind
  public var entitlement: String
  public var environment: String
  /// The kept renewal info's `signedDate` (milliseconds); nil before any.
  public var renewalSignedDate: Int64?
  /// The kept renewal info as JSON text (`AppStoreRenewal`).
  public var renewal: String?
  public var createdAt: String
  public var updatedAt: String

  public init(
    originalTransactionId: String, account: String, productId: String, kind: AppStoreProduct.Kind, entitlement: String,
    environment: String, renewalSignedDate: Int64?, renewal: String?, createdAt: String, updatedAt: String
  ) {
    self.originalTransactionId = originalTransactionId
    self.account = account
    self.productId = productId
    self.kind = kind
    self.entitlement = entitlement
    self.environment = environment
    self.renewalSignedDate = renewalSignedDate
    self.renewal = renewal
    self.createdAt = createdAt
    self.updatedAt = updatedAt
  }
}

/// A transaction as last signed (its account is its chain's) (the version with the latest `signedDate` is kept), with what it
/// credits: a consumable's units, counted while it is not revoked.
public struct AppStoreTransactionRow: Sendable, Equatable {
  public var transactionId: String
  public var originalTransactionId: String
  public var entitlement: String
  /// A consumable's units (its product's units × quantity); 0 for other kinds.
  public var units: Int64
  public var revoked: Bool
  /// The kept version's `signedDate` (milliseconds).
  public var signedDate: Int64
  /// The kept version as JSON text (`AppStoreTransaction`).
  public var document: String
  public var recordedAt: String
  public var updatedAt: String

  public init(
    transactionId: String, originalTransactionId: String, entitlement: String, units: Int64,
    revoked: Bool, signedDate: Int64, document: String, recordedAt: String, updatedAt: String
  ) {
    self.transactionId = transactionId
    self.originalTransactionId = originalTransactionId
    self.entitlement = entitlement
    self.units = units
    self.revoked = revoked
    self.signedDate = signedDate
    self.document = document
    self.recordedAt = recordedAt
    self.updatedAt = updatedAt
  }
}

/// An App Store Server Notification heard, once by its `notificationUUID`.
public struct AppStoreNotificationRow: Sendable, Equatable {
  public var notificationUUID: String
  public var type: String
  public var subtype: String?
  public var signedDate: Int64
  public var environment: String
  public var originalTransactionId: String?
  public var transactionId: String?
  /// What it changed (`AppStoreLedger.Effect`).
  public var effect: String
  public var receivedAt: String

  public init(
    notificationUUID: String, type: String, subtype: String?, signedDate: Int64, environment: String,
    originalTransactionId: String?, transactionId: String?, effect: String, receivedAt: String
  ) {
    self.notificationUUID = notificationUUID
    self.type = type
    self.subtype = subtype
    self.signedDate = signedDate
    self.environment = environment
    self.originalTransactionId = originalTransactionId
    self.transactionId = transactionId
    self.effect = effect
    self.receivedAt = receivedAt
  }
}

/// Which notifications to list: newest `signedDate` first, then by uuid descending, after `before`.
public struct AppStoreNotificationQuery: Sendable, Equatable {
  public var type: String?
  /// The last notification of the page before (its signedDate and uuid).
  public var before: (signedDate: Int64, notificationUUID: String)?
  public var limit: Int

  public init(type: String?, before: (signedDate: Int64, notificationUUID: String)?, limit: Int) {
    self.type = type
    self.before = before
    self.limit = limit
  }

  public static func == (a: Self, b: Self) -> Bool {
    a.type == b.type && a.limit == b.limit && a.before?.signedDate == b.before?.signedDate
      && a.before?.notificationUUID == b.before?.notificationUUID
  }

  /// The query's SQL with `placeholder` (0-based) for each argument, in the order `type`, the
  /// cursor's date twice and uuid, the limit.
  public func sql(collate: String = "", placeholder: (Int) -> String) -> String {
    var conditions: [String] = []
    var count = 0
    func next() -> String {
      defer { count += 1 }
      return placeholder(count)
    }
    if type != nil { conditions.append("type = \(next())") }
    if before != nil {
      let (date, date2, uuid) = (next(), next(), next())
      conditions.append("(signedDate < \(date) OR (signedDate = \(date2) AND notificationUUID\(collate) < \(uuid)))")
    }
    let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ") + " "
    return """
      SELECT \(StoreSchema.appStoreNotificationColumns) FROM appStoreNotification \(whereClause)\
      ORDER BY signedDate DESC, notificationUUID\(collate) DESC LIMIT \(next())
      """
  }
}

/// Units of a consumable entitlement spent, once by the app's `consumptionId`.
public struct AppStoreConsumptionRow: Sendable, Equatable {
  public var consumptionId: String
  public var account: String
  public var entitlement: String
  public var units: Int64
  public var consumedAt: String
}

extension StoreSchema {
  /// Migration v13's tables, the same SQL on both backends.
  public static let appStoreTables = [
    """
    CREATE TABLE appStoreChain (
      originalTransactionId TEXT PRIMARY KEY NOT NULL,
      account TEXT NOT NULL,
      productId TEXT NOT NULL,
      kind TEXT NOT NULL,
      entitlement TEXT NOT NULL,
      environment TEXT NOT NULL,
      renewalSignedDate BIGINT,
      renewal TEXT,
      createdAt TEXT NOT NULL,
      updatedAt TEXT NOT NULL
    )
    """,
    "CREATE INDEX appStoreChainByAccount ON appStoreChain (account, originalTransactionId)",
    """
    CREATE TABLE appStoreTransaction (
      transactionId TEXT PRIMARY KEY NOT NULL,
      originalTransactionId TEXT NOT NULL REFERENCES appStoreChain(originalTransactionId),
      entitlement TEXT NOT NULL,
      units BIGINT NOT NULL CHECK (units >= 0),
      revoked BIGINT NOT NULL CHECK (revoked IN (0, 1)),
      signedDate BIGINT NOT NULL,
      document TEXT NOT NULL,
      recordedAt TEXT NOT NULL,
      updatedAt TEXT NOT NULL
    )
    """,
    "CREATE INDEX appStoreTransactionByChain ON appStoreTransaction (originalTransactionId, transactionId)",
    """
    CREATE TABLE appStoreNotification (
      notificationUUID TEXT PRIMARY KEY NOT NULL,
      type TEXT NOT NULL,
      subtype TEXT,
      signedDate BIGINT NOT NULL,
      environment TEXT NOT NULL,
      originalTransactionId TEXT,
      transactionId TEXT,
      effect TEXT NOT NULL,
      receivedAt TEXT NOT NULL
    )
    """,
    "CREATE INDEX appStoreNotificationByType ON appStoreNotification (type, signedDate, notificationUUID)",
    "CREATE INDEX appStoreNotificationBySignedDate ON appStoreNotification (signedDate, notificationUUID)",
    """
    CREATE TABLE appStoreConsumption (
      consumptionId TEXT PRIMARY KEY NOT NULL,
      account TEXT NOT NULL,
      entitlement TEXT NOT NULL,
      units BIGINT NOT NULL CHECK (units > 0),
      consumedAt TEXT NOT NULL
    )
    """,
    "CREATE INDEX appStoreConsumptionByAccount ON appStoreConsumption (account, entitlement)",
  ]

  public static let appStoreChainColumns = """
    originalTransactionId, account, productId, kind, entitlement, environment, renewalSignedDate, renewal, createdAt, \
    updatedAt
    """
  public static let appStoreTransactionColumns = """
    transactionId, originalTransactionId, entitlement, units, revoked, signedDate, document, recordedAt, updatedAt
    """
  /// The transactions of an account's chains that grant entitlements, `placeholder` its account.
  public static func appStoreEntitlementTransactions(collate: String, placeholder: String) -> String {
    """
    SELECT \(appStoreTransactionColumns.split(separator: ",").map { "t." + $0.trimmingCharacters(in: .whitespaces) }
      .joined(separator: ", "))
    FROM appStoreTransaction t JOIN appStoreChain c ON c.originalTransactionId = t.originalTransactionId
    WHERE c.account = \(placeholder) AND c.kind <> 'consumable'
    ORDER BY t.originalTransactionId\(collate), t.transactionId\(collate)
    """
  }

  /// An account's consumable credits by entitlement: all units and those refunded.
  public static func appStoreCredits(placeholder: String) -> String {
    """
    SELECT t.entitlement, CAST(SUM(t.units) AS BIGINT), CAST(SUM(CASE WHEN t.revoked = 1 THEN t.units ELSE 0 END) AS BIGINT)
    FROM appStoreTransaction t JOIN appStoreChain c ON c.originalTransactionId = t.originalTransactionId
    WHERE c.account = \(placeholder) AND c.kind = 'consumable'
    GROUP BY t.entitlement
    """
  }

  public static let appStoreNotificationColumns = """
    notificationUUID, type, subtype, signedDate, environment, originalTransactionId, transactionId, effect, receivedAt
    """
}
