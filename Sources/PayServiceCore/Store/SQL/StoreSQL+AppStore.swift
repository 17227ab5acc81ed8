// MARK: The App Store ledger (`AppStoreBook`)

extension StoreSQL {
  public static let appStoreChain = StoreStatement(
    "SELECT \(StoreSchema.appStoreChainColumns) FROM appStoreChain WHERE originalTransactionId = ?")

  public static let insertAppStoreChain = StoreStatement(
    "INSERT INTO appStoreChain (\(StoreSchema.appStoreChainColumns)) VALUES (\(StoreStatement.placeholders(10)))")

  public static func values(_ chain: AppStoreChainRow) -> [StoreValue] {
    [
      .text(chain.originalTransactionId), .text(chain.account), .text(chain.productId), .text(chain.kind.rawValue),
      .text(chain.entitlement), .text(chain.environment), .integer(chain.renewalSignedDate), .text(chain.renewal),
      .text(chain.createdAt), .text(chain.updatedAt),
    ]
  }

  public static let updateAppStoreChain = StoreStatement(
    """
    UPDATE appStoreChain SET account = ?, renewalSignedDate = ?, renewal = ?, updatedAt = ?
    WHERE originalTransactionId = ?
    """)

  public static func updatedValues(_ chain: AppStoreChainRow) -> [StoreValue] {
    [
      .text(chain.account), .integer(chain.renewalSignedDate), .text(chain.renewal), .text(chain.updatedAt),
      .text(chain.originalTransactionId),
    ]
  }

  public static let appStoreTransaction = StoreStatement(
    "SELECT \(StoreSchema.appStoreTransactionColumns) FROM appStoreTransaction WHERE transactionId = ?")

  public static let insertAppStoreTransaction = StoreStatement(
    """
    INSERT INTO appStoreTransaction (\(StoreSchema.appStoreTransactionColumns))
    VALUES (\(StoreStatement.placeholders(9)))
    """)

  public static func values(_ transaction: AppStoreTransactionRow) -> [StoreValue] {
    [
      .text(transaction.transactionId), .text(transaction.originalTransactionId), .text(transaction.entitlement),
      .integer(transaction.units), .integer(transaction.revoked ? 1 : 0), .integer(transaction.signedDate),
      .text(transaction.document), .text(transaction.recordedAt), .text(transaction.updatedAt),
    ]
  }

  public static let updateAppStoreTransaction = StoreStatement(
    """
    UPDATE appStoreTransaction SET units = ?, revoked = ?, signedDate = ?, document = ?, updatedAt = ?
    WHERE transactionId = ?
    """)

  public static func updatedValues(_ transaction: AppStoreTransactionRow) -> [StoreValue] {
    [
      .integer(transaction.units), .integer(transaction.revoked ? 1 : 0), .integer(transaction.signedDate),
      .text(transaction.document), .text(transaction.updatedAt), .text(transaction.transactionId),
    ]
  }

  /// (originalTransactionId) A chain's transactions, by transactionId.
  public static let appStoreTransactionsOfChain = StoreStatement { dialect in
    """
    SELECT \(StoreSchema.appStoreTransactionColumns) FROM appStoreTransaction WHERE originalTransactionId = ?
    ORDER BY transactionId\(dialect.collate)
    """
  }

  /// (account) The account's chains that grant an entitlement, by originalTransactionId.
  public static let appStoreEntitlementChains = StoreStatement { dialect in
    """
    SELECT \(StoreSchema.appStoreChainColumns) FROM appStoreChain WHERE account = ? AND kind <> 'consumable'
    ORDER BY originalTransactionId\(dialect.collate)
    """
  }

  public static let appStoreEntitlementTransactions = StoreStatement { dialect in
    StoreSchema.appStoreEntitlementTransactions(collate: dialect.collate, placeholder: "?")
  }

  public static let appStoreCredits = StoreStatement(StoreSchema.appStoreCredits(placeholder: "?"))

  public static let insertAppStoreNotification = StoreStatement(
    """
    INSERT INTO appStoreNotification (\(StoreSchema.appStoreNotificationColumns))
    VALUES (\(StoreStatement.placeholders(9))) ON CONFLICT (notificationUUID) DO NOTHING
    """)

  public static func values(_ notification: AppStoreNotificationRow) -> [StoreValue] {
    [
      .text(notification.notificationUUID), .text(notification.type), .text(notification.subtype),
      .integer(notification.signedDate), .text(notification.environment), .text(notification.originalTransactionId),
      .text(notification.transactionId), .text(notification.effect), .text(notification.receivedAt),
    ]
  }

  /// The notifications `query` asks for, and what they bind.
  public static func appStoreNotifications(_ query: AppStoreNotificationQuery) -> (StoreStatement, [StoreValue]) {
    var values: [StoreValue] = []
    if let type = query.type { values.append(.text(type)) }
    if let before = query.before {
      values += [.integer(before.signedDate), .integer(before.signedDate), .text(before.notificationUUID)]
    }
    values.append(.int(query.limit))
    return (StoreStatement { dialect in query.sql(collate: dialect.collate) { _ in "?" } }, values)
  }

  /// (account) The units it spent, by entitlement.
  public static let appStoreConsumed = StoreStatement(
    "SELECT entitlement, CAST(SUM(units) AS BIGINT) FROM appStoreConsumption WHERE account = ? GROUP BY entitlement")

  /// (newAccount, account)
  public static let moveAppStoreConsumptions = StoreStatement(
    "UPDATE appStoreConsumption SET account = ? WHERE account = ?")

  public static let insertAppStoreConsumption = StoreStatement(
    """
    INSERT INTO appStoreConsumption (consumptionId, account, entitlement, units, consumedAt)
    VALUES (\(StoreStatement.placeholders(5)))
    """)

  public static func values(_ consumption: AppStoreConsumptionRow) -> [StoreValue] {
    [
      .text(consumption.consumptionId), .text(consumption.account), .text(consumption.entitlement),
      .integer(consumption.units), .text(consumption.consumedAt),
    ]
  }
}

extension StatementRunner {
  public func save(_ chain: AppStoreChainRow, isNew: Bool) throws {
    if isNew {
      try execute(StoreSQL.insertAppStoreChain, StoreSQL.values(chain))
    } else {
      try execute(StoreSQL.updateAppStoreChain, StoreSQL.updatedValues(chain))
    }
  }

  public func save(_ transaction: AppStoreTransactionRow, isNew: Bool) throws {
    if isNew {
      try execute(StoreSQL.insertAppStoreTransaction, StoreSQL.values(transaction))
    } else {
      try execute(StoreSQL.updateAppStoreTransaction, StoreSQL.updatedValues(transaction))
    }
  }

  public func insert(_ notification: AppStoreNotificationRow) throws -> Bool {
    try execute(StoreSQL.insertAppStoreNotification, StoreSQL.values(notification)) > 0
  }

  public func moveConsumptions(account: String, to newAccount: String) throws {
    try execute(StoreSQL.moveAppStoreConsumptions, [.text(newAccount), .text(account)])
  }

  public func insert(_ consumption: AppStoreConsumptionRow) throws {
    try execute(StoreSQL.insertAppStoreConsumption, StoreSQL.values(consumption))
  }
}
