import PayServiceCore
import PostgresNIO

extension PostgresTransaction {
  static func appStoreChain(_ row: PostgresRow) throws -> AppStoreChainRow {
    let (id, account, productId, kind, entitlement, environment, renewalSignedDate, renewal, createdAt, updatedAt) =
      try row.columns((String, String, String, String, String, String, Int64?, String?, String, String).self)
    guard let kind = AppStoreProduct.Kind(rawValue: kind) else {
      throw StoreError.unavailable(reason: "App Store chain \(id) has an unknown kind")
    }
    return AppStoreChainRow(
      originalTransactionId: id, account: account, productId: productId, kind: kind, entitlement: entitlement,
      environment: environment, renewalSignedDate: renewalSignedDate, renewal: renewal, createdAt: createdAt,
      updatedAt: updatedAt)
  }

  static func appStoreTransaction(_ row: PostgresRow) throws -> AppStoreTransactionRow {
    let (id, original, entitlement, units, revoked, signedDate, document, recordedAt, updatedAt) =
      try row.columns((String, String, String, Int64, Int64, Int64, String, String, String).self)
    return AppStoreTransactionRow(
      transactionId: id, originalTransactionId: original, entitlement: entitlement, units: units,
      revoked: revoked != 0, signedDate: signedDate, document: document, recordedAt: recordedAt, updatedAt: updatedAt)
  }

  func appStoreChain(_ originalTransactionId: String) throws -> AppStoreChainRow? {
    try session.run(
      "SELECT \(StoreSchema.appStoreChainColumns) FROM appStoreChain WHERE originalTransactionId = $1",
      binds { $0.append(originalTransactionId) }
    ).rows.first.map(Self.appStoreChain)
  }

  func save(_ chain: AppStoreChainRow, isNew: Bool) throws {
    if isNew {
      try session.run(
        "INSERT INTO appStoreChain (\(StoreSchema.appStoreChainColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        binds {
          $0.append(chain.originalTransactionId)
          $0.append(chain.account)
          $0.append(chain.productId)
          $0.append(chain.kind.rawValue)
          $0.append(chain.entitlement)
          $0.append(chain.environment)
          $0.append(chain.renewalSignedDate)
          $0.append(chain.renewal)
          $0.append(chain.createdAt)
          $0.append(chain.updatedAt)
        })
    } else {
      try session.run(
        """
        UPDATE appStoreChain SET account = $1, renewalSignedDate = $2, renewal = $3, updatedAt = $4
        WHERE originalTransactionId = $5
        """,
        binds {
          $0.append(chain.account)
          $0.append(chain.renewalSignedDate)
          $0.append(chain.renewal)
          $0.append(chain.updatedAt)
          $0.append(chain.originalTransactionId)
        })
    }
  }

  func appStoreTransaction(_ transactionId: String) throws -> AppStoreTransactionRow? {
    try session.run(
      "SELECT \(StoreSchema.appStoreTransactionColumns) FROM appStoreTransaction WHERE transactionId = $1",
      binds { $0.append(transactionId) }
    ).rows.first.map(Self.appStoreTransaction)
  }

  func save(_ transaction: AppStoreTransactionRow, isNew: Bool) throws {
    if isNew {
      try session.run(
        """
        INSERT INTO appStoreTransaction (\(StoreSchema.appStoreTransactionColumns))
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
        """,
        binds {
          $0.append(transaction.transactionId)
          $0.append(transaction.originalTransactionId)
          $0.append(transaction.entitlement)
          $0.append(transaction.units)
          $0.append(Int64(transaction.revoked ? 1 : 0))
          $0.append(transaction.signedDate)
          $0.append(transaction.document)
          $0.append(transaction.recordedAt)
          $0.append(transaction.updatedAt)
        })
    } else {
      try session.run(
        """
        UPDATE appStoreTransaction SET units = $1, revoked = $2, signedDate = $3, document = $4, updatedAt = $5
        WHERE transactionId = $6
        """,
        binds {
          $0.append(transaction.units)
          $0.append(Int64(transaction.revoked ? 1 : 0))
          $0.append(transaction.signedDate)
          $0.append(transaction.document)
          $0.append(transaction.updatedAt)
          $0.append(transaction.transactionId)
        })
    }
  }

  func appStoreTransactions(originalTransactionId: String) throws -> [AppStoreTransactionRow] {
    try session.run(
      """
      SELECT \(StoreSchema.appStoreTransactionColumns) FROM appStoreTransaction WHERE originalTransactionId = $1
      ORDER BY transactionId COLLATE "C"
      """, binds { $0.append(originalTransactionId) }
    ).rows.map(Self.appStoreTransaction)
  }

  func appStoreEntitlementChains(account: String) throws -> [AppStoreChainRow] {
    try session.run(
      """
      SELECT \(StoreSchema.appStoreChainColumns) FROM appStoreChain WHERE account = $1 AND kind <> 'consumable'
      ORDER BY originalTransactionId COLLATE "C"
      """, binds { $0.append(account) }
    ).rows.map(Self.appStoreChain)
  }

  func appStoreEntitlementTransactions(account: String) throws -> [AppStoreTransactionRow] {
    try session.run(
      StoreSchema.appStoreEntitlementTransactions(collate: #" COLLATE "C""#, placeholder: "$1"),
      binds { $0.append(account) }
    ).rows.map(Self.appStoreTransaction)
  }

  func appStoreCredits(account: String) throws -> [String: (purchased: Int64, refunded: Int64)] {
    var credits: [String: (purchased: Int64, refunded: Int64)] = [:]
    for row in try session.run(StoreSchema.appStoreCredits(placeholder: "$1"), binds { $0.append(account) }).rows {
      let (entitlement, purchased, refunded) = try row.columns((String, Int64, Int64).self)
      credits[entitlement] = (purchased, refunded)
    }
    return credits
  }

  func insert(_ notification: AppStoreNotificationRow) throws -> Bool {
    try session.changes(
      """
      INSERT INTO appStoreNotification (\(StoreSchema.appStoreNotificationColumns))
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (notificationUUID) DO NOTHING
      """,
      binds {
        $0.append(notification.notificationUUID)
        $0.append(notification.type)
        $0.append(notification.subtype)
        $0.append(notification.signedDate)
        $0.append(notification.environment)
        $0.append(notification.originalTransactionId)
        $0.append(notification.transactionId)
        $0.append(notification.effect)
        $0.append(notification.receivedAt)
      }) > 0
  }

  func appStoreNotifications(_ query: AppStoreNotificationQuery) throws -> [AppStoreNotificationRow] {
    try session.run(
      query.sql(collate: #" COLLATE "C""#) { "$\($0 + 1)" },
      binds {
        if let type = query.type { $0.append(type) }
        if let before = query.before {
          $0.append(before.signedDate)
          $0.append(before.signedDate)
          $0.append(before.notificationUUID)
        }
        $0.append(Int64(query.limit))
      }
    ).rows.map { row in
      let (uuid, type, subtype, signedDate, environment, original, transactionId, effect, receivedAt) = try row.columns(
        (String, String, String?, Int64, String, String?, String?, String, String).self)
      return AppStoreNotificationRow(
        notificationUUID: uuid, type: type, subtype: subtype, signedDate: signedDate, environment: environment,
        originalTransactionId: original, transactionId: transactionId, effect: effect, receivedAt: receivedAt)
    }
  }

  func lockKey(_ space: String, _ key: String) throws {
    try session.run(
      "SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))",
      binds {
        $0.append(space)
        $0.append(key)
      })
  }

  func appStoreConsumed(account: String) throws -> [String: Int64] {
    var consumed: [String: Int64] = [:]
    for row in try session.run(
      "SELECT entitlement, SUM(units)::bigint FROM appStoreConsumption WHERE account = $1 GROUP BY entitlement",
      binds { $0.append(account) }
    ).rows {
      let (entitlement, units) = try row.columns((String, Int64).self)
      consumed[entitlement] = units
    }
    return consumed
  }

  func moveConsumptions(account: String, to newAccount: String) throws {
    try session.run(
      "UPDATE appStoreConsumption SET account = $1 WHERE account = $2",
      binds {
        $0.append(newAccount)
        $0.append(account)
      })
  }

  func insert(_ consumption: AppStoreConsumptionRow) throws {
    try session.run(
      "INSERT INTO appStoreConsumption (consumptionId, account, entitlement, units, consumedAt) VALUES ($1, $2, $3, $4, $5)",
      binds {
        $0.append(consumption.consumptionId)
        $0.append(consumption.account)
        $0.append(consumption.entitlement)
        $0.append(consumption.units)
        $0.append(consumption.consumedAt)
      })
  }
}
