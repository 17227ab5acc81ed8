import PayServiceCore
import PostgresNIO

/// `StoreSchema.migrations` in PostgreSQL's SQL, applied in one transaction under an advisory lock
/// (so processes starting together against a new database take turns) and recorded by name in
/// `payservice_migrations`. Never edit one that has shipped: add a new one.
enum PostgresMigrations {
  /// The advisory lock key that serializes migrating (ASCII "paysvc.m").
  static let lockKey: Int64 = 0x7061_7973_7663_2E6D

  /// Each migration's statements, in `StoreSchema.migrations` order.
  static let statements: [[String]] = [
    [
      """
      CREATE TABLE stock (
        sku TEXT PRIMARY KEY NOT NULL,
        quantityOnHand BIGINT NOT NULL CHECK (quantityOnHand >= 0),
        sold BIGINT NOT NULL DEFAULT 0 CHECK (sold >= 0)
      )
      """,
      """
      CREATE TABLE chargeToken (
        token TEXT PRIMARY KEY NOT NULL,
        sequence BIGINT NOT NULL UNIQUE,
        binding TEXT NOT NULL,
        billingContact TEXT,
        amountMinor BIGINT NOT NULL,
        currencyCode TEXT NOT NULL,
        sandboxOutcome TEXT NOT NULL,
        issuedAt TEXT NOT NULL,
        expiresAt BIGINT NOT NULL,
        usedAt TEXT,
        requestFingerprint TEXT,
        result TEXT
      )
      """,
      """
      CREATE TABLE charge (
        chargeId TEXT PRIMARY KEY NOT NULL,
        token TEXT NOT NULL UNIQUE REFERENCES chargeToken(token),
        status TEXT NOT NULL CHECK (status IN ('succeeded', 'failed')),
        failureCode TEXT,
        declineCode TEXT,
        amountMinor BIGINT NOT NULL,
        currencyCode TEXT NOT NULL,
        createdAt TEXT NOT NULL
      )
      """,
      """
      CREATE TABLE "order" (
        orderId TEXT PRIMARY KEY NOT NULL,
        chargeId TEXT NOT NULL UNIQUE REFERENCES charge(chargeId),
        createdAt TEXT NOT NULL,
        amountMinor BIGINT NOT NULL,
        currencyCode TEXT NOT NULL,
        document TEXT NOT NULL
      )
      """,
      """
      CREATE TABLE orderItem (
        orderId TEXT NOT NULL REFERENCES "order"(orderId),
        sku TEXT NOT NULL,
        quantity BIGINT NOT NULL CHECK (quantity > 0),
        unitPriceMinor BIGINT NOT NULL,
        amountMinor BIGINT NOT NULL,
        PRIMARY KEY (orderId, sku)
      )
      """,
    ],
    ["ALTER TABLE chargeToken ADD COLUMN paymentMethod TEXT"],
    [
      // `position` keeps insertion order (SQLite's rowid) for `authorizations()`.
      """
      CREATE TABLE paymentAuthorization (
        authorizationId TEXT PRIMARY KEY NOT NULL,
        transactionId TEXT NOT NULL UNIQUE,
        network TEXT NOT NULL,
        cardType TEXT NOT NULL,
        lastFour TEXT NOT NULL CHECK (length(lastFour) = 4),
        amountMinor BIGINT NOT NULL,
        currencyCode TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('held', 'declined', 'captured')),
        createdAt TEXT NOT NULL,
        chargeId TEXT,
        capturedAt TEXT,
        position BIGINT GENERATED ALWAYS AS IDENTITY
      )
      """,
      "ALTER TABLE chargeToken ADD COLUMN authorizationId TEXT REFERENCES paymentAuthorization(authorizationId)",
    ],
    [
      // As SQLite's v4 (`SQLiteStore.backOfficeMigration`); orderItem's `position` keeps each
      // order's line order (SQLite's rowid).
      """
      ALTER TABLE "order"
        ADD COLUMN status TEXT NOT NULL DEFAULT 'paid'
          CHECK (status IN ('authorized', 'paid', 'partially_refunded', 'refunded', 'canceled')),
        ADD COLUMN capturedMinor BIGINT,
        ADD COLUMN refundedMinor BIGINT NOT NULL DEFAULT 0 CHECK (refundedMinor >= 0),
        ADD COLUMN shippingMinor BIGINT,
        ADD COLUMN shippingTaxMinor BIGINT,
        ADD COLUMN shippingRefunded BOOLEAN NOT NULL DEFAULT false
      """,
      #"UPDATE "order" SET capturedMinor = amountMinor"#,
      #"CREATE INDEX orderByCreation ON "order" (createdAt COLLATE "C", orderId COLLATE "C")"#,
      """
      ALTER TABLE orderItem
        ADD COLUMN discountMinor BIGINT,
        ADD COLUMN taxMinor BIGINT,
        ADD COLUMN refundedQuantity BIGINT NOT NULL DEFAULT 0 CHECK (refundedQuantity >= 0),
        ADD COLUMN position BIGINT GENERATED ALWAYS AS IDENTITY
      """,
      """
      CREATE TABLE orderEvent (
        orderId TEXT NOT NULL REFERENCES "order"(orderId),
        position BIGINT NOT NULL CHECK (position > 0),
        kind TEXT NOT NULL CHECK (kind IN ('placed', 'authorized', 'captured', 'canceled', 'refunded')),
        at TEXT NOT NULL,
        amountMinor BIGINT NOT NULL,
        reference TEXT NOT NULL,
        reason TEXT,
        PRIMARY KEY (orderId, position)
      )
      """,
      """
      CREATE TABLE refund (
        refundId TEXT PRIMARY KEY NOT NULL,
        orderId TEXT NOT NULL REFERENCES "order"(orderId),
        position BIGINT NOT NULL,
        createdAt TEXT NOT NULL,
        amountMinor BIGINT NOT NULL CHECK (amountMinor >= 0),
        document TEXT NOT NULL,
        UNIQUE (orderId, position)
      )
      """,
      """
      CREATE TABLE backOfficeRequest (
        kind TEXT NOT NULL CHECK (kind IN ('capture', 'cancel', 'refund')),
        key TEXT NOT NULL,
        orderId TEXT NOT NULL REFERENCES "order"(orderId),
        fingerprint TEXT NOT NULL,
        result TEXT NOT NULL,
        createdAt TEXT NOT NULL,
        PRIMARY KEY (kind, key)
      )
      """,
      "ALTER TABLE paymentAuthorization ADD COLUMN releasedAt TEXT",
    ],
    [
      "ALTER TABLE chargeToken ADD COLUMN gatewayPaymentData TEXT",
      #"ALTER TABLE "order" ADD COLUMN gatewayPaymentId TEXT"#,
      """
      CREATE TABLE paymentAttempt (
        orderId TEXT PRIMARY KEY NOT NULL,
        token TEXT NOT NULL UNIQUE REFERENCES chargeToken(token),
        idempotencyKey TEXT NOT NULL UNIQUE,
        paymentData TEXT NOT NULL,
        amountMinor BIGINT NOT NULL CHECK (amountMinor > 0),
        currencyCode TEXT NOT NULL,
        captureManually BOOLEAN NOT NULL,
        createdAt TEXT NOT NULL,
        itemCount BIGINT NOT NULL,
        prepared TEXT NOT NULL
      )
      """,
    ],
    [#"ALTER TABLE "order" ADD COLUMN taxIncluded BOOLEAN NOT NULL DEFAULT false"#],
    ["ALTER TABLE chargeToken ADD COLUMN walletOrderToken TEXT"],
    // The identifier key's row is inserted by `migrate`, with the key it is given.
    [StoreSchema.storeKeyTable, StoreSchema.unusedChargeTokenIndex],
    [
      StoreSchema.operationTable, StoreSchema.pendingOperationIndex,
      StoreSchema.usedChargeTokensToOperations(attemptObject: attemptObject),
      StoreSchema.backOfficeRequestsToOperations,
    ] + StoreSchema.supersededByOperations,
    StoreSchema.shopMigration,
    StoreSchema.gatewayMoneyTables + [
      "UPDATE refund SET gatewayRefundId = NULLIF((document::json)->>'gatewayRefundId', '')",
      StoreSchema.refundByGatewayRefundIndex,
      orderEventKinds,
    ],
    ["ALTER TABLE charge ALTER COLUMN token DROP NOT NULL"] + StoreSchema.agreementTables,
    StoreSchema.appStoreTables,
    [PostgresBatch.applyFunction, PostgresBatch.readFunction],
    [PostgresBatch.applyFunctionV15, PostgresBatch.readOrderFunction, PostgresBatch.readFunctionGeneric],
    [PostgresBatch.applyFunctionV16],
    [PostgresBatch.issueFunction],
    [StoreSchema.settledCallsCleared],
    [orderEventKinds],
    StoreSchema.walletOrderTables,
    StoreSchema.merchantTokenTables,
  ]

  /// Migrations v11 and v19: today's order event kinds in the check PostgreSQL named for
  /// orderEvent's kind column (v4).
  static let orderEventKinds =
    "ALTER TABLE orderEvent DROP CONSTRAINT orderevent_kind_check, ADD CONSTRAINT orderevent_kind_check "
    + StoreSchema.orderEventKindCheck

  /// A `paymentAttempt` row `a` as the JSON text of its pending charge (`ProcessOrder.Charge`), for
  /// migration v9.
  static let attemptObject = """
    json_build_object('orderId', a.orderId, 'token', a.token, 'idempotencyKey', a.idempotencyKey,
      'paymentData', a.paymentData, 'amountMinor', a.amountMinor, 'currencyCode', a.currencyCode,
      'captureManually', a.captureManually, 'createdAt', a.createdAt, 'itemCount', a.itemCount,
      'prepared', a.prepared)::text
    """

  /// Applies the missing migrations; false (and nothing changed) when the database has a migration
  /// this release does not know, i.e. it was written by a newer payservice.
  /// `newIdentifierKey` is the key migration v8 gives a store that has none.
  static func migrate(_ session: PostgresSession, newIdentifierKey: IdentifierKey) throws(PostgresFailure) -> Bool {
    precondition(statements.count == StoreSchema.migrations.count)
    try session.run("BEGIN")
    do throws(PostgresFailure) {
      var key = PostgresBindings()
      key.append(lockKey)
      try session.run("SELECT pg_advisory_xact_lock($1)", key)
      try session.run(
        """
        CREATE TABLE IF NOT EXISTS payservice_migrations (
          identifier TEXT PRIMARY KEY NOT NULL,
          appliedAt TIMESTAMPTZ NOT NULL DEFAULT now()
        )
        """)
      var applied: Set<String> = []
      for row in try session.run("SELECT identifier FROM payservice_migrations").rows {
        applied.insert(try row.columns(String.self))
      }
      guard applied.isSubset(of: StoreSchema.migrations) else {
        try session.run("ROLLBACK")
        return false
      }
      for (name, sql) in zip(StoreSchema.migrations, statements) where !applied.contains(name) {
        for statement in sql { try session.run(statement) }
        if name == StoreSchema.migrations[7] {
          var row = PostgresBindings()
          row.append(StoreSchema.identifierKeyPurpose)
          row.append(newIdentifierKey.hex)
          try session.run("INSERT INTO storeKey (purpose, keyHex) VALUES ($1, $2)", row)
        }
        var binds = PostgresBindings()
        binds.append(name)
        try session.run("INSERT INTO payservice_migrations (identifier) VALUES ($1)", binds)
      }
      try session.run("COMMIT")
      return true
    } catch {
      if !error.connectionLost { _ = try? session.run("ROLLBACK") }
      throw error
    }
  }
}
