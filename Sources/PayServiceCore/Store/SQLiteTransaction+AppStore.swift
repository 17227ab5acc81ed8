import GRDB

extension SQLiteTransaction {
  static func appStoreChain(_ row: Row) throws(StoreError) -> AppStoreChainRow {
    let id: String = row[0]
    guard let kind = AppStoreProduct.Kind(rawValue: row[3]) else {
      throw StoreError.unavailable(reason: "App Store chain \(id) has an unknown kind")
    }
    return AppStoreChainRow(
      originalTransactionId: id, account: row[1], productId: row[2], kind: kind, entitlement: row[4],
      environment: row[5], renewalSignedDate: row[6], renewal: row[7], createdAt: row[8], updatedAt: row[9])
  }

  static func appStoreTransaction(_ row: Row) -> AppStoreTransactionRow {
    AppStoreTransactionRow(
      transactionId: row[0], originalTransactionId: row[1], entitlement: row[2], units: row[3],
      revoked: (row[4] as Int64) != 0, signedDate: row[5], document: row[6], recordedAt: row[7], updatedAt: row[8])
  }

  func appStoreChain(_ originalTransactionId: String) throws -> AppStoreChainRow? {
    try Row.fetchOne(
      db.cachedStatement(
        sql: "SELECT \(StoreSchema.appStoreChainColumns) FROM appStoreChain WHERE originalTransactionId = ?"),
      arguments: [originalTransactionId]
    ).map(Self.appStoreChain)
  }

  func save(_ chain: AppStoreChainRow, isNew: Bool) throws {
    if isNew {
      try db.cachedStatement(
        sql: "INSERT INTO appStoreChain (\(StoreSchema.appStoreChainColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
      ).execute(arguments: [
        chain.originalTransactionId, chain.account, chain.productId, chain.kind.rawValue, chain.entitlement,
        chain.environment, chain.renewalSignedDate, chain.renewal, chain.createdAt, chain.updatedAt,
      ])
    } else {
      try db.cachedStatement(
        sql: """
          UPDATE appStoreChain SET account = ?, renewalSignedDate = ?, renewal = ?, updatedAt = ?
          WHERE originalTransactionId = ?
          """
      ).execute(arguments: [
        chain.account, chain.renewalSignedDate, chain.renewal, chain.updatedAt, chain.originalTransactionId,
      ])
    }
  }

  func appStoreTransaction(_ transactionId: String) throws -> AppStoreTransactionRow? {
    try Row.fetchOne(
      db.cachedStatement(
        sql: "SELECT \(StoreSchema.appStoreTransactionColumns) FROM appStoreTransaction WHERE transactionId = ?"),
      arguments: [transactionId]
    ).map(Self.appStoreTransaction)
  }

  func save(_ transaction: AppStoreTransactionRow, isNew: Bool) throws {
    if isNew {
      try db.cachedStatement(
        sql: "INSERT INTO appStoreTransaction (\(StoreSchema.appStoreTransactionColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
      ).execute(arguments: [
        transaction.transactionId, transaction.originalTransactionId, transaction.entitlement,
        transaction.units, transaction.revoked ? 1 : 0, transaction.signedDate, transaction.document,
        transaction.recordedAt, transaction.updatedAt,
      ])
    } else {
      try db.cachedStatement(
        sql: """
          UPDATE appStoreTransaction SET units = ?, revoked = ?, signedDate = ?, document = ?, updatedAt = ?
          WHERE transactionId = ?
          """
      ).execute(arguments: [
        transaction.units, transaction.revoked ? 1 : 0, transaction.signedDate, transaction.document,
        transaction.updatedAt, transaction.transactionId,
      ])
    }
  }

  func appStoreTransactions(originalTransactionId: String) throws -> [AppStoreTransactionRow] {
    try Row.fetchAll(
      db.cachedStatement(
        sql: """
          SELECT \(StoreSchema.appStoreTransactionColumns) FROM appStoreTransaction WHERE originalTransactionId = ?
          ORDER BY transactionId
          """), arguments: [originalTransactionId]
    ).map(Self.appStoreTransaction)
  }

  func appStoreEntitlementChains(account: String) throws -> [AppStoreChainRow] {
    try Row.fetchAll(
      db.cachedStatement(
        sql: """
          SELECT \(StoreSchema.appStoreChainColumns) FROM appStoreChain WHERE account = ? AND kind <> 'consumable'
          ORDER BY originalTransactionId
          """), arguments: [account]
    ).map(Self.appStoreChain)
  }

  func appStoreEntitlementTransactions(account: String) throws -> [AppStoreTransactionRow] {
    try Row.fetchAll(
      db.cachedStatement(sql: StoreSchema.appStoreEntitlementTransactions(collate: "", placeholder: "?")),
      arguments: [account]
    ).map(Self.appStoreTransaction)
  }

  func appStoreCredits(account: String) throws -> [String: (purchased: Int64, refunded: Int64)] {
    var credits: [String: (purchased: Int64, refunded: Int64)] = [:]
    for row in try Row.fetchAll(
      db.cachedStatement(sql: StoreSchema.appStoreCredits(placeholder: "?")), arguments: [account])
    {
      credits[row[0]] = (row[1], row[2])
    }
    return credits
  }

  func insert(_ notification: AppStoreNotificationRow) throws -> Bool {
    try db.cachedStatement(
      sql: """
        INSERT INTO appStoreNotification (\(StoreSchema.appStoreNotificationColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (notificationUUID) DO NOTHING
        """
    ).execute(arguments: [
      notification.notificationUUID, notification.type, notification.subtype, notification.signedDate,
      notification.environment, notification.originalTransactionId, notification.transactionId, notification.effect,
      notification.receivedAt,
    ])
    return db.changesCount > 0
  }

  func appStoreNotifications(_ query: AppStoreNotificationQuery) throws -> [AppStoreNotificationRow] {
    var arguments: [(any DatabaseValueConvertible)?] = []
    if let type = query.type { arguments.append(type) }
    if let before = query.before { arguments += [before.signedDate, before.signedDate, before.notificationUUID] }
    arguments.append(query.limit)
    return try Row.fetchAll(
      db.cachedStatement(sql: query.sql { _ in "?" }), arguments: StatementArguments(arguments)
    ).map { row in
      AppStoreNotificationRow(
        notificationUUID: row[0], type: row[1], subtype: row[2], signedDate: row[3], environment: row[4],
        originalTransactionId: row[5], transactionId: row[6], effect: row[7], receivedAt: row[8])
    }
  }

  func lockKey(_ space: String, _ key: String) throws {
    // The store's write lock is held already: one writer at a time.
  }

  func appStoreConsumed(account: String) throws -> [String: Int64] {
    var consumed: [String: Int64] = [:]
    for row in try Row.fetchAll(
      db.cachedStatement(
        sql: "SELECT entitlement, SUM(units) FROM appStoreConsumption WHERE account = ? GROUP BY entitlement"),
      arguments: [account])
    {
      consumed[row[0]] = row[1]
    }
    return consumed
  }

  func moveConsumptions(account: String, to newAccount: String) throws {
    try db.cachedStatement(sql: "UPDATE appStoreConsumption SET account = ? WHERE account = ?").execute(arguments: [
      newAccount, account,
    ])
  }

  func insert(_ consumption: AppStoreConsumptionRow) throws {
    try db.cachedStatement(
      sql: "INSERT INTO appStoreConsumption (consumptionId, account, entitlement, units, consumedAt) VALUES (?, ?, ?, ?, ?)"
    ).execute(arguments: [
      consumption.consumptionId, consumption.account, consumption.entitlement, consumption.units,
      consumption.consumedAt,
    ])
  }
}
