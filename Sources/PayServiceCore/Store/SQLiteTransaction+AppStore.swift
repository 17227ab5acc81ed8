import GRDB

// MARK: The App Store ledger

extension SQLiteTransaction: AppStoreBook {
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
    try one(StoreSQL.appStoreChain, [.text(originalTransactionId)], Self.appStoreChain)
  }

  func appStoreTransaction(_ transactionId: String) throws -> AppStoreTransactionRow? {
    try one(StoreSQL.appStoreTransaction, [.text(transactionId)], Self.appStoreTransaction)
  }

  func appStoreTransactions(originalTransactionId: String) throws -> [AppStoreTransactionRow] {
    try all(StoreSQL.appStoreTransactionsOfChain, [.text(originalTransactionId)], Self.appStoreTransaction)
  }

  func appStoreEntitlementChains(account: String) throws -> [AppStoreChainRow] {
    try all(StoreSQL.appStoreEntitlementChains, [.text(account)], Self.appStoreChain)
  }

  func appStoreEntitlementTransactions(account: String) throws -> [AppStoreTransactionRow] {
    try all(StoreSQL.appStoreEntitlementTransactions, [.text(account)], Self.appStoreTransaction)
  }

  func appStoreCredits(account: String) throws -> [String: (purchased: Int64, refunded: Int64)] {
    var credits: [String: (purchased: Int64, refunded: Int64)] = [:]
    for (entitlement, purchased, refunded) in try all(StoreSQL.appStoreCredits, [.text(account)], {
      row -> (String, Int64, Int64) in (row[0], row[1], row[2])
    }) {
      credits[entitlement] = (purchased, refunded)
    }
    return credits
  }

  func appStoreNotifications(_ query: AppStoreNotificationQuery) throws -> [AppStoreNotificationRow] {
    let (statement, values) = StoreSQL.appStoreNotifications(query)
    return try all(statement, values) { row in
      AppStoreNotificationRow(
        notificationUUID: row[0], type: row[1], subtype: row[2], signedDate: row[3], environment: row[4],
        originalTransactionId: row[5], transactionId: row[6], effect: row[7], receivedAt: row[8])
    }
  }

  func appStoreConsumed(account: String) throws -> [String: Int64] {
    var consumed: [String: Int64] = [:]
    for (entitlement, units) in try all(StoreSQL.appStoreConsumed, [.text(account)], {
      row -> (String, Int64) in (row[0], row[1])
    }) {
      consumed[entitlement] = units
    }
    return consumed
  }

}
