import Foundation

/// The store failed: it could not be opened, read or written. The reason is for the operator's log;
/// clients only ever see -32001.
public enum StoreError: Error, CustomStringConvertible, Sendable {
  /// `location` names the store for people: a file path, or a PostgreSQL URL without its password.
  case cannotOpen(location: String, reason: String)
  case newerSchema(location: String)
  case unavailable(reason: String)

  public var description: String {
    switch self {
    case .cannotOpen(let location, let reason): return "cannot open the store \(location): \(reason)"
    case .newerSchema(let location):
      return "the store \(location) was written by a newer payservice (unknown schema migrations); upgrade payservice"
    case .unavailable(let reason): return "store unavailable: \(reason)"
    }
  }
}

/// The order store: stock counts, charge tokens, Apple Pay authorization holds, charges and orders.
///
/// Two implementations with the same observable behaviour: `SQLiteStore` (one file, the default)
/// and `PostgresStore` (module PayServicePostgres, one server for many hosts). Both apply the same
/// named migrations (`StoreSchema.migrations`) and refuse a store written by a newer payservice; both make a write
/// all-or-nothing and durable before `write` returns; both serialize the same rows the same way,
/// so two processes (on one host or many) never sell the same unit or use a token twice.
public protocol Store: AnyObject, Sendable {
  /// Runs `body` in one transaction: all of it is committed (durably) or none of it. Errors thrown
  /// by `body` itself pass through unchanged after the rollback; failures of the store become
  /// `StoreError.unavailable`.
  ///
  /// Inside `groupCommit`, `body` runs instead in a savepoint of the group's transaction: its
  /// writes are undone alone if it throws, and made durable with the group's commit.
  func write<T>(_ body: (any StoreTransaction) throws -> T) throws -> T

  /// Runs `body` as `write` does, optimistically where the backend pays a network round trip per
  /// statement (`PostgresStore`; `SQLiteStore` runs `write`): the rows in `readAhead` are fetched
  /// in one round trip before `body` runs, its reads take no locks, and its writes are sent
  /// together in one statement at the end, which first checks under locks that what `body` read
  /// still holds (see `OptimisticReads`). When it no longer holds, or `body` asks for something
  /// an optimistic transaction cannot do (what `OrderTransaction.locked()` gives, or a read it
  /// cannot check), nothing was written and `body` runs again as `write` runs it. `body` may
  /// therefore run twice, and must decide only on what `OptimisticReads` says is checked.
  func writeOptimistically<T>(readAhead: ReadAhead, _ body: (any OrderTransaction) throws -> T) throws -> T

  /// Group commit: runs `body`, in which every `write` and `writeOptimistically` is a member of
  /// one transaction committed when `body` returns (its own savepoint, or its place in the batch
  /// sent at the end), so many orders cost one durable commit. `readAhead` is what the members
  /// will read, fetched once for all of them where that saves round trips. Throws when the
  /// transaction cannot begin or commit, and then nothing `body` wrote was kept. `body` must not
  /// call other store methods than `write` and `writeOptimistically`.
  func groupCommit(readAhead: ReadAhead, _ body: () -> Void) throws(StoreError)

  /// Issues a charge token as `TokenBook.issue` does, in a transaction of its own: one statement
  /// where each costs a network round trip (`PostgresStore`), by default `write`. Nil when the hold
  /// was declined; `ApplePayTokenFailure.replay` when its transaction id was recorded before.
  func issue(_ issue: TokenIssue) throws -> NewChargeToken?

  /// Adds catalog products the store has not seen with their configured stock. Existing counts win:
  /// after the first start the store's count is the truth.
  func seedStock(_ catalog: [Product]) throws(StoreError)

  /// Current stock by sku.
  func stock() throws(StoreError) -> [String: Int]

  /// Every sku the store has stock for (configured now or before), by sku.
  func stockLevels() throws(StoreError) -> [StockLevel]

  /// The stock changes made by hand to `sku`, newest first, at most `limit`.
  func stockEvents(sku: String, limit: Int) throws(StoreError) -> [StockEventRow]

  /// Returns when the store answers a query: a health check.
  func check() throws(StoreError)

  /// After an erasure: what the backend can do so that erased values leave its files (SQLite: the
  /// write-ahead log checkpointed and truncated; freed space is zeroed as it is written, see
  /// `SQLiteStore`). Best effort: a store busy with readers keeps the log until a later checkpoint.
  func scrubErased() throws(StoreError)

  /// A recorded order with its status, money, events and refunds, read in one snapshot; nil when unknown.
  func order(id: String) throws(StoreError) -> StoredOrder?

  /// Recorded orders newest first (`createdAt` then `orderId`, descending), filtered and paged by
  /// `query` (orders pending at a remote gateway are not recorded yet: see `pendingOperations()`).
  func orders(_ query: OrderQuery) throws(StoreError) -> [OrderSummaryRow]

  /// Every operation still pending (its network call's answer not recorded), oldest first.
  func pendingOperations() throws(StoreError) -> [OperationRow]

  /// The pending operations created at or before `createdBy` (RFC 3339 UTC text), oldest first
  /// (created, kind, key), the first after `after`, at most `limit`: what the janitor
  /// (`resolvePending`) pages through.
  func pendingOperations(createdBy: String, after: OperationPosition?, limit: Int) throws(StoreError) -> [OperationRow]

  /// `orders(query)` and `pendingOperations()` together, as a listing merges them: in one statement
  /// where each read costs a round trip (by default, one after the other).
  func ordersAndPending(_ query: OrderQuery) throws(StoreError) -> (orders: [OrderSummaryRow], pending: [OperationRow])

  /// The money orders' events moved from `from` (inclusive) to `to` (exclusive), RFC 3339 UTC
  /// text, added up by day, currency and kind, in one snapshot (see `MoneyMovementRow`).
  func moneyMovements(from: String, to: String) throws(StoreError) -> [MoneyMovementRow]

  /// An agreement with its events, read in one snapshot; nil when unknown.
  func agreement(id: String) throws(StoreError) -> StoredAgreement?

  /// Agreements by `query` (see `AgreementQuery`).
  func agreements(_ query: AgreementQuery) throws(StoreError) -> [AgreementRow]

  /// Agreements that still collect (`active`, `past_due`) with a payment due at or before `by`
  /// (Unix seconds), soonest first, after `after` (the listing's order), at most `limit`, only
  /// those of `shard` when given: what a billing run works through.
  func dueAgreements(by: Int64, after: AgreementCursor?, limit: Int, shard: AgreementShard?) throws(StoreError)
    -> [AgreementRow]

  /// Makes this store's identifiers under its own key (created with the store, see `Identifiers`).
  var identifiers: Identifiers { get }
}

extension Store {
  /// A store whose statements cost no round trip (SQLite) gains nothing by optimism.
  public func writeOptimistically<T>(readAhead: ReadAhead, _ body: (any OrderTransaction) throws -> T) throws -> T {
    try write(body)
  }

  public func groupCommit(_ body: () -> Void) throws(StoreError) {
    try groupCommit(readAhead: ReadAhead(), body)
  }

  public func issue(_ issue: TokenIssue) throws -> NewChargeToken? {
    try write { try $0.issue(issue) }
  }

  public func ordersAndPending(_ query: OrderQuery) throws(StoreError) -> (
    orders: [OrderSummaryRow], pending: [OperationRow]
  ) {
    (try orders(query), try pendingOperations())
  }
}

/// The rows a transaction is about to read by key, so that a store whose statements each cost a
/// network round trip can fetch them in one: charge tokens (with their Apple Pay authorizations),
/// stock counts, orders (as `lockOrder` reads them) and journal entries. A hint only: reads still
/// go through `StoreTransaction`, and a store may ignore it.
public struct ReadAhead: Sendable, Equatable {
  /// A journal entry's kind and key.
  public struct Entry: Sendable, Hashable {
    public var kind: String
    public var key: String

    public init(kind: String, key: String) {
      self.kind = kind
      self.key = key
    }
  }

  public var tokens: [String]
  public var skus: [String]
  public var orders: [String]
  public var entries: [Entry]

  public init(tokens: [String] = [], skus: [String] = [], orders: [String] = [], entries: [Entry] = []) {
    self.tokens = tokens
    self.skus = skus
    self.orders = orders
    self.entries = entries
  }

  public var isEmpty: Bool { tokens.isEmpty && skus.isEmpty && orders.isEmpty && entries.isEmpty }

  public mutating func add(_ other: ReadAhead) {
    tokens += other.tokens
    skus += other.skus
    orders += other.orders
    entries += other.entries
  }
}

/// What an optimistic transaction (`Store.writeOptimistically`) checks when it writes, so that a
/// decision taken on reads without locks is still the one a locked transaction would take:
/// - a charge token, an Apple Pay authorization, an order (`lockOrder`, with its lines) or a
///   journal entry read is unchanged (the same row version), or the whole transaction runs again
///   with locks; an order read without disputes still has none;
/// - stock counts are not checked as read: each `decrementStock` takes its units only if they
///   are still on hand, and a decision that takes no stock stands as of the read; `shortages` of
///   a sku not read is checked as a bound (the units are still on hand);
/// - a journal key read as unused is checked by `insert(_ operation:)`, which records it only if
///   it is still unused;
/// - `markUsed`, `markCaptured`, `restock` and the other writes answering a Bool are assumed to
///   succeed and checked when the batch is applied; so are the keys of the order events and
///   refunds it inserts.
/// Anything else is asked for through `OrderTransaction.locked()`, and makes the transaction run
/// with locks instead. Reading a row the same batch wrote does too (except stock counts, which a
/// batch keeps up to date itself), and so does reading the disputes of an order not read ahead
/// or read with some.
public enum OptimisticReads {}

/// The statements of one write transaction, the same on every backend, grouped by what they keep
/// (each group a protocol, implemented once per backend). The methods' logic (what to check, what
/// to write) lives with the methods; a transaction only reads and writes rows.
///
/// Rows that decide a later write are read locked where the backend needs it: on PostgreSQL
/// `chargeToken(_:)` and `quantitiesOnHand(_:)` lock their rows until the transaction ends (SQLite
/// holds the whole store's write lock from the start), so a decision never rests on a stale read.
public protocol StoreTransaction: OrderTransaction, TokenBook, JournalUpkeep, GatewayBook, AgreementBook, AppStoreBook,
  StockBook, PersonalDataBook, WalletOrderBook, MerchantTokenBook
{}

extension StoreTransaction {
  /// A transaction that keeps every book takes its locks as it reads already.
  public func locked() -> any StoreTransaction { self }
}

/// What placing an order and the back office's capture, cancel and refund read and write: the
/// books an optimistic transaction (`Store.writeOptimistically`) keeps, checking what it read when
/// its writes are applied (`OptimisticReads`). Anything else is asked for through `locked()`.
public protocol OrderTransaction: OrderBook, Journal, BackOfficeBook {
  /// This transaction with every book, its rows locked as they are read. An optimistic
  /// transaction cannot give it: it throws, nothing it wrote is kept, and the body runs again
  /// with locks (`Store.writeOptimistically`), where this is the transaction itself.
  func locked() throws -> any StoreTransaction
}

// MARK: Orders and tokens

/// Placing an order: its charge token (used once), the stock it takes, its charge and order rows,
/// and the Apple Pay authorization hold the token charges.
public protocol OrderBook {
  /// The charge token, locked for this transaction; nil when unknown.
  func chargeToken(_ token: String) throws -> ChargeTokenRecord?
  /// Marks a token used (its use and answer are the journal's `order` entry); false when it was
  /// used meanwhile (nothing written).
  func markUsed(token: String, at now: String) throws -> Bool
  /// Stock on hand of each sku (0 for unknown ones), locked for this transaction, in the order given.
  func quantitiesOnHand(_ skus: [String]) throws -> [Int]
  /// For each line of `demand`, the units on hand when the stock cannot fill it, nil when it can
  /// (by default from `quantitiesOnHand`). An optimistic transaction that has not read a sku
  /// answers nil and checks, when applied, that the units are still there.
  func shortages(_ demand: [(sku: String, quantity: Int)]) throws -> [Int?]
  /// Takes `quantity` off the stock of `sku`; false (and nothing changed) when there is not enough.
  func decrementStock(_ sku: String, by quantity: Int) throws -> Bool
  func insert(_ charge: ChargeRow) throws
  func insert(_ order: OrderRow) throws
  func authorization(_ authorizationId: String) throws -> PaymentAuthorization?
  /// Settles a held authorization; false when it is not held (nothing written).
  func markCaptured(_ authorizationId: String, chargeId: String, at now: String) throws -> Bool
  /// Releases a held authorization (the order was canceled); false when it is not held.
  func markReleased(_ authorizationId: String, at now: String) throws -> Bool
}

extension OrderBook {
  public func shortages(_ demand: [(sku: String, quantity: Int)]) throws -> [Int?] {
    let onHand = try quantitiesOnHand(demand.map(\.sku))
    return zip(demand, onHand).map { line, available in line.quantity <= available ? nil : available }
  }
}

/// Issuing charge tokens, and the Apple Pay authorizations they charge.
public protocol TokenBook {
  /// The sequence number of the next charge token; issuing tokens is serialized from here to the
  /// end of the transaction, so the same store state always issues the same token.
  func nextChargeTokenSequence() throws -> Int64
  func insert(_ token: NewChargeToken) throws
  /// Deletes up to `limit` charge tokens never used and expired at `now` (with the billing contact
  /// they kept), never the one with the highest sequence number, so that numbers are not reused;
  /// returns how many went.
  func purgeExpiredChargeTokens(now: Int64, limit: Int) throws -> Int
  /// Records an authorization; false when its transaction id was recorded before (nothing written).
  func insertAuthorization(_ authorization: PaymentAuthorization, at now: String) throws -> Bool
}

// MARK: The journal and key locks

/// The operation journal (`OperationRunner`): every piece of work that must happen once, by key.
public protocol Journal {
  /// The journal's entry for `key`, locked for this transaction (PostgreSQL: `FOR UPDATE`); nil
  /// when the key is unused.
  func operation(kind: String, key: String) throws -> OperationRow?
  /// Records a new entry; false when its key was recorded meanwhile (nothing written).
  func insert(_ operation: OperationRow) throws -> Bool
}

/// What becomes of the journal's entries after they are recorded, and the locks work takes by key.
public protocol JournalUpkeep {
  /// Records a pending entry's answer: it is settled.
  func settleOperation(kind: String, key: String, result: String, at now: String) throws
  /// Removes a pending entry whose call changed nothing: its key is unused again.
  func removeOperation(kind: String, key: String) throws
  /// The pending entries about `subject`, oldest first.
  func pendingOperations(subject: String) throws -> [OperationRow]
  /// Replaces a settled entry's fingerprint and answer (an erasure of the personal data in them).
  func rewriteOperation(kind: String, key: String, fingerprint: String, result: String?) throws
  /// Serializes, among processes and to the end of the transaction, the work on `key` in `space`
  /// (an operation kind and its key, an App Store chain or account): what work takes when no row
  /// orders it (an event id, a notification, a chain not recorded yet), so that a second process
  /// waits and reads what the first one wrote. SQLite's write lock serializes everything already.
  func lockKey(_ space: String, _ key: String) throws
}

// MARK: Back office and gateway books

/// An order after the sale as capture, cancel and refund change it: its state, locked, and what
/// they write.
public protocol BackOfficeBook {
  /// The order with its lines, locked for this transaction (PostgreSQL: `FOR UPDATE`), so that
  /// back-office calls on one order take turns; nil when unknown.
  func lockOrder(_ orderId: String) throws -> OrderState?
  /// The disputes of an order's payment, oldest first. Lock the order first.
  func disputes(orderId: String) throws -> [DisputeRow]
  /// Sets an order's status and money; the order is locked by `lockOrder` first.
  func updateOrder(
    _ orderId: String, status: OrderStatus, capturedMinor: Int64?, refundedMinor: Int64, shippingRefunded: Bool
  ) throws
  /// Sets how many units of an order line were refunded.
  func setRefundedQuantity(orderId: String, sku: String, to quantity: Int) throws
  /// Puts `quantity` units of `sku` back on hand (and off sold); false when the sku has no stock
  /// row or fewer units sold (nothing changed).
  func restock(_ sku: String, by quantity: Int) throws -> Bool
  func insert(_ event: OrderEventRow) throws
  func insert(_ refund: RefundRow) throws
}

/// What the gateway reports after the sale (`GatewayReport`): payments, refunds and disputes by
/// the gateway's ids, and the documents they change.
public protocol GatewayBook {
  /// The order a remote gateway's payment (Stripe's PaymentIntent) paid for; nil when none.
  func orderId(gatewayPaymentId: String) throws -> String?
  /// A recorded refund by its refundId; nil when unknown. Lock its order (`lockOrder`) first
  /// when the answer decides a write.
  func refund(_ refundId: String) throws -> RefundRow?
  /// The recorded refund with this gateway refund id; nil when none. Lock its order first when
  /// the answer decides a write.
  func refund(gatewayRefundId: String) throws -> RefundRow?
  /// Replaces a recorded refund's document (where the gateway's settling of it is written).
  func updateRefund(_ refundId: String, document: String) throws
  /// A dispute by its gateway id; nil when unknown. Lock its order first.
  func dispute(_ disputeId: String) throws -> DisputeRow?
  /// Records a dispute (`isNew`) or replaces what is known of it.
  func save(_ dispute: DisputeRow, isNew: Bool) throws
  /// A recorded order's document (the order as placed), read in this transaction; nil when unknown.
  func orderDocument(_ orderId: String) throws -> String?
}

// MARK: Agreements

/// Agreements (`Agreements`): what a buyer agreed to be charged later.
public protocol AgreementBook {
  /// The agreement, locked for this transaction (PostgreSQL: `FOR UPDATE`), so that billing runs,
  /// reloads and cancellations of one agreement take turns; nil when unknown.
  func lockAgreement(_ agreementId: String) throws -> AgreementRow?
  func insert(_ agreement: AgreementRow) throws
  /// Replaces what billing moves (status, next payment, period, attempt, cancellation, credential,
  /// customer action, updatedAt); the agreement is locked by `lockAgreement` first.
  func update(_ agreement: AgreementRow) throws
  /// Appends an event at the agreement's next position (its row is locked first); returns it.
  @discardableResult func append(_ event: AgreementEventRow) throws -> AgreementEventRow
}

// MARK: The App Store ledger

/// The App Store's purchases as `AppStoreLedger` keeps them: chains, transactions, notifications
/// and what accounts spent.
public protocol AppStoreBook {
  /// The purchase chain `originalTransactionId` (whoever changes it takes `lockKey("appStoreChain", id)`
  /// first, so that two processes recording the same new chain take turns).
  func appStoreChain(_ originalTransactionId: String) throws -> AppStoreChainRow?
  func save(_ chain: AppStoreChainRow, isNew: Bool) throws
  func appStoreTransaction(_ transactionId: String) throws -> AppStoreTransactionRow?
  func save(_ transaction: AppStoreTransactionRow, isNew: Bool) throws
  /// The chain's transactions, by transactionId.
  func appStoreTransactions(originalTransactionId: String) throws -> [AppStoreTransactionRow]
  /// The account's chains that grant an entitlement (not consumables), by originalTransactionId,
  /// and their transactions, by originalTransactionId and transactionId.
  func appStoreEntitlementChains(account: String) throws -> [AppStoreChainRow]
  func appStoreEntitlementTransactions(account: String) throws -> [AppStoreTransactionRow]
  /// The units the account's consumables credited, by entitlement: all, and those refunded.
  func appStoreCredits(account: String) throws -> [String: (purchased: Int64, refunded: Int64)]
  /// Records a notification; false when its uuid is recorded already.
  func insert(_ notification: AppStoreNotificationRow) throws -> Bool
  func appStoreNotifications(_ query: AppStoreNotificationQuery) throws -> [AppStoreNotificationRow]
  /// The units the account has spent, by entitlement.
  func appStoreConsumed(account: String) throws -> [String: Int64]
  func insert(_ consumption: AppStoreConsumptionRow) throws
  /// Puts what `account` spent on `newAccount` (a purchase chain moving from the account named by
  /// its own originalTransactionId takes its spending along).
  func moveConsumptions(account: String, to newAccount: String) throws
}

// MARK: Stock by hand and personal data

/// Stock changed by hand (`adjustStock`), with its events.
public protocol StockBook {
  /// A sku's stock, locked for this transaction; nil when the store has no stock row for it.
  func stockLevel(_ sku: String) throws -> StockLevel?
  /// Sets a sku's stock on hand (its row is locked by `stockLevel` first).
  func setQuantityOnHand(_ sku: String, to quantity: Int) throws
  /// The position the next stock event of `sku` takes.
  func nextStockEventPosition(_ sku: String) throws -> Int
  func insert(_ event: StockEventRow) throws
}

/// Personal data and its erasure (`erasePersonalData`).
public protocol PersonalDataBook {
  /// Up to `limit` charge tokens the selector covers whose personal data is not erased yet and
  /// whose order is not pending at a gateway, oldest first.
  func tokensToErase(_ selector: ErasureSelector, limit: Int) throws -> [String]
  /// What a token and its order hold of the buyer, locked for this transaction; nil when unknown.
  func personalData(token: String) throws -> PersonalDataRow?
  /// Writes the token's and order's erased forms (`row`), marking both erased at `now`.
  func erasePersonalData(_ row: PersonalDataRow, at now: String) throws
  /// Replaces the reasons staff wrote on an order's refunds and cancel (`refunded` and `canceled`
  /// events) with `marker`, and answers each reason replaced with its event's kind and reference
  /// (the refundId or cancelId), so that the caller erases it where else it is kept.
  func eraseStaffReasons(orderId: String, marker: String) throws -> [OrderEventRow]
}

/// Where `--database` points: a SQLite file (or `:memory:`), or a PostgreSQL server.
public enum StoreLocation: Equatable, Sendable {
  case sqlite(path: String)
  case postgres(PostgresURL)

  /// `postgres://` and `postgresql://` URLs name a server; anything else is a SQLite path.
  /// `environment` supplies what the URL leaves out (`PGUSER`, `PGPASSWORD`, `PGHOST`, `PGPORT`,
  /// `PGDATABASE`; see `PostgresURL`).
  /// (The process environment when nil, read only for a server: Foundation's copy of it is
  /// work a SQLite start does not need.)
  public static func parse(_ argument: String, environment: [String: String]? = nil)
    throws(PostgresURL.Problem) -> StoreLocation
  {
    guard PostgresURL.isPostgres(argument) else { return .sqlite(path: argument) }
    return .postgres(try PostgresURL(argument, environment: environment ?? ProcessInfo.processInfo.environment))
  }
}

/// The schema's named migrations, in order: every backend applies these (each in its own SQL) and
/// records their names, and a store holding a name not listed here was written by a newer payservice.
/// Never rename or edit one that has shipped: add a new one.
public enum StoreSchema {
  public static let migrations = [
    "v1: stock, charge tokens, charges, orders",
    "v2: the authorized card on charge tokens",
    "v3: Apple Pay authorization holds",
    "v4: order status, per-line amounts, events, refunds and back-office requests",
    "v5: remote gateway payments and pending payment attempts",
    "v6: orders priced with tax included",
    "v7: Wallet order tracking tokens",
    "v8: the store's identifier key; unused charge tokens by expiry",
    "v9: one operation journal for exactly-once work",
    "v10: stock changes by hand; erased personal data",
    "v11: disputes; refunds by the gateway's id; gateway report order events",
    "v12: agreements, their events and the orders that pay them",
    "v13: App Store purchase chains, transactions, notifications and consumption",
    "v14: a transaction's writes applied in one statement (PostgreSQL's payservice_apply)",
    "v15: back-office calls applied in one statement, and locks taken by key (PostgreSQL's payservice_apply, payservice_read_order)",
    "v16: rows locked one key at a time (PostgreSQL's payservice_apply)",
    "v17: a charge token issued in one statement (PostgreSQL's payservice_issue)",
    "v18: answered journal entries keep no call (no payment data once the work is done)",
    "v19: order events of captures that failed later",
    "v20: Wallet orders: shipments, registered devices and when each package changed",
    "v21: Apple Pay merchant tokens: the token an authorization brought, and the agreements that charge it",
  ]

  /// Migration v18, the same on both backends: a settled entry's call (what was sent: for a
  /// charge, the payment data) is never read again, and is not kept. Settling clears it from then on
  /// (`StoreSQL.settleOperation`).
  public static let settledCallsCleared = "UPDATE operation SET request = NULL WHERE state = 'settled'"

  /// Migration v8's table, the same on both backends: keys the store makes its identifiers with.
  public static let storeKeyTable = """
    CREATE TABLE storeKey (
      purpose TEXT PRIMARY KEY NOT NULL,
      keyHex TEXT NOT NULL CHECK (length(keyHex) = 64)
    )
    """

  /// Migration v8's index of the tokens never used, by expiry: what `purgeExpiredChargeTokens` reads.
  public static let unusedChargeTokenIndex =
    "CREATE INDEX chargeTokenUnusedByExpiry ON chargeToken (expiresAt) WHERE usedAt IS NULL"

  /// The name of the identifier key's row in `storeKey` (migration v8).
  public static let identifierKeyPurpose = "identifiers"
}
