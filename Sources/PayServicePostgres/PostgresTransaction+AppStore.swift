import PayServiceCore
import PostgresNIO

// MARK: The App Store ledger

extension PostgresTransaction: AppStoreBook {
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
    try one(StoreSQL.appStoreChain.postgres, [.text(originalTransactionId)], Self.appStoreChain)
  }

  func appStoreTransaction(_ transactionId: String) throws -> AppStoreTransactionRow? {
    try one(StoreSQL.appStoreTransaction.postgres, [.text(transactionId)], Self.appStoreTransaction)
  }

  func appStoreTransactions(originalTransactionId: String) throws -> [AppStoreTransactionRow] {
    try all(StoreSQL.appStoreTransactionsOfChain.postgres, [.text(originalTransactionId)], Self.appStoreTransaction)
  }

  func appStoreEntitlementChains(account: String) throws -> [AppStoreChainRow] {
    try all(StoreSQL.appStoreEntitlementChains.postgres, [.text(account)], Self.appStoreChain)
  }

  func appStoreEntitlementTransactions(account: String) throws -> [AppStoreTransactionRow] {
    try all(StoreSQL.appStoreEntitlementTransactions.postgres, [.text(account)], Self.appStoreTransaction)
  }

  func appStoreCredits(account: String) throws -> [String: (purchased: Int64, refunded: Int64)] {
    var credits: [String: (purchased: Int64, refunded: Int64)] = [:]
    for row in try rows(StoreSQL.appStoreCredits.postgres, [.text(account)]) {
      let (entitlement, purchased, refunded) = try row.columns((String, Int64, Int64).self)
      credits[entitlement] = (purchased, refunded)
    }
    return credits
  }

  func appStoreNotifications(_ query: AppStoreNotificationQuery) throws -> [AppStoreNotificationRow] {
    let (statement, values) = StoreSQL.appStoreNotifications(query)
    return try all(statement.postgres, values) { row in
      let (uuid, type, subtype, signedDate, environment, original, transactionId, effect, receivedAt) = try row.columns(
        (String, String, String?, Int64, String, String?, String?, String, String).self)
      return AppStoreNotificationRow(
        notificationUUID: uuid, type: type, subtype: subtype, signedDate: signedDate, environment: environment,
        originalTransactionId: original, transactionId: transactionId, effect: effect, receivedAt: receivedAt)
    }
  }

  func appStoreConsumed(account: String) throws -> [String: Int64] {
    var consumed: [String: Int64] = [:]
    for row in try rows(StoreSQL.appStoreConsumed.postgres, [.text(account)]) {
      let (entitlement, units) = try row.columns((String, Int64).self)
      consumed[entitlement] = units
    }
    return consumed
  }

}
