import Foundation
import PayServiceCore
import PostgresNIO

/// The order store on a PostgreSQL server: the same tables, migrations and semantics as
/// `SQLiteStore`, for services on several hosts that must share one stock and one order book.
///
/// One connection, used from whichever thread calls (one at a time, under a lock). A write is one
/// transaction (READ COMMITTED with explicit row locks: a charge token and the stock rows an order
/// decides on are locked `FOR UPDATE`, the stock rows in sku order so two orders never deadlock on
/// them; issuing a charge token takes a transaction-scoped advisory lock so the sequence stays
/// gapless). The session commits synchronously, so a commit is durable on the server before
/// anyone is answered. A lost connection fails the statement in flight (the server rolls back its
/// transaction); the next call connects again.
///
/// Unchecked Sendable: its mutable state (`session`, `sessionsOpened`, `group`) is only touched
/// with `lock` held (`enter` … `leave`); `liveSession` asserts it.
public final class PostgresStore: Store, @unchecked Sendable {
  /// How long a statement waits for another transaction's locks (`lock_timeout`), like SQLite's
  /// busy timeout.
  public static let lockTimeout: TimeInterval = 5
  /// A deadlock or lock timeout is retried this many times in all, each time in a new transaction.
  static let attempts = 3

  public let url: PostgresURL
  private let lockTimeout: TimeInterval
  private let eventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
  private let lock = NSRecursiveLock()  // `groupCommit`'s body calls `write`
  private var session: PostgresSession?
  private var sessionsOpened = 0

  /// Connects, applies the migrations this release knows (refusing a store with others) and keeps
  /// the connection. Throws `cannotOpen` naming the server (never the password) and the reason.
  /// Set once, at the end of `init`: optional so that an `init` failing before it still counts
  /// as fully initialized and its `deinit` closes the session and the event loop.
  private var storeIdentifiers: Identifiers?
  public var identifiers: Identifiers { storeIdentifiers! }

  /// - Parameter newIdentifierKey: the identifier key if this opening creates the store; by
  ///   default a random one, or the one `PAYSERVICE_ID_KEY` pins (`IdentifierKey.forNewStore`).
  public init(
    url: PostgresURL, lockTimeout: TimeInterval = PostgresStore.lockTimeout, newIdentifierKey: IdentifierKey? = nil
  ) throws(StoreError) {
    self.url = url
    self.lockTimeout = lockTimeout
    let candidateKey: IdentifierKey
    if let newIdentifierKey {
      candidateKey = newIdentifierKey
    } else {
      candidateKey = try IdentifierKey.forNewStore()
    }
    let migrated: Bool
    var keyHex: String?
    do throws(PostgresFailure) {
      let session = try connect()
      self.session = session
      migrated = try PostgresMigrations.migrate(session, newIdentifierKey: candidateKey)
      if migrated {
        var purpose = PostgresBindings()
        purpose.append(StoreSchema.identifierKeyPurpose)
        for row in try session.run("SELECT keyHex FROM storeKey WHERE purpose = $1", purpose).rows {
          keyHex = try row.columns(String.self)
        }
      }
    } catch {
      // deinit closes the session and the event loop (it runs when a fully initialized init throws).
      throw StoreError.cannotOpen(location: url.description, reason: error.reason)
    }
    if !migrated { throw StoreError.newerSchema(location: url.description) }
    guard let key = keyHex.flatMap(IdentifierKey.init(hex:)) else {
      throw StoreError.cannotOpen(
        location: url.description, reason: "its identifier key (table storeKey) is missing or unreadable")
    }
    storeIdentifiers = Identifiers(key: key)
  }

  deinit {
    session?.close()
    session = nil
    try? eventLoopGroup.syncShutdownGracefully()
  }

  private func connect() throws(PostgresFailure) -> PostgresSession {
    sessionsOpened += 1
    return try PostgresSession.connect(
      to: url, on: eventLoopGroup.next(), id: sessionsOpened, lockTimeout: lockTimeout)
  }

  /// The open session, connecting again when the last one was lost.
  /// How many times the current holder of `lock` has entered it (0 when no thread holds it).
  private var lockDepth = 0

  private func enter() {
    lock.lock()
    lockDepth += 1
  }

  private func leave() {
    lockDepth -= 1
    lock.unlock()
  }

  private func liveSession() throws(StoreError) -> PostgresSession {
    // Only with the lock held: the session is this store's one connection.
    assert(lockDepth > 0, "the session is used without the store's lock")
    if let session, !session.isClosed { return session }
    session?.close()
    session = nil
    do {
      let fresh = try connect()
      session = fresh
      return fresh
    } catch {
      throw StoreError.unavailable(reason: "cannot reach the PostgreSQL server \(url.host):\(url.port): \(error.reason)")
    }
  }

  /// Forgets a session whose connection failed.
  private func drop(_ failed: PostgresSession) {
    failed.close()
    if session === failed { session = nil }
  }

  private func unavailable(_ failure: PostgresFailure, _ session: PostgresSession) -> StoreError {
    if failure.connectionLost { drop(session) }
    return .unavailable(reason: failure.reason)
  }

  public func write<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
    enter()
    defer { leave() }
    if let group { return try writeInGroup(group, body) }
    var attempt = 1
    // Stock is taken just before the commit, unless taking it there found it short: then the
    // transaction runs again taking it at once, and answers the shortage.
    var takeAtCommit = true
    while true {
      let session = try liveSession()
      do {
        let issued = IssuedRows()
        let transaction = PostgresTransaction(
          session: session, issued: issued, takenAtCommit: takeAtCommit ? TakenAtCommit() : nil)
        let result = try inTransaction(session, "BEGIN") {
          let result = try body(transaction)
          try transaction.takenAtCommit?.apply(transaction)
          return result
        }
        for (record, version) in issued.tokens { issuedTokens.add(record, version: version) }
        for (authorization, version) in issued.authorizations { issuedTokens.add(authorization, version: version) }
        if let next = issued.nextSequence { issuedTokens.nextSequence = next }
        return result
      } catch is TakenAtCommit.Short where takeAtCommit {
        takeAtCommit = false
        continue
      } catch let failure as PostgresFailure {
        // A lost COMMIT may or may not have committed: the caller is told the store failed, and a
        // processOrder sent again finds its token used and replays the stored answer.
        if failure.retryable && !failure.connectionLost && attempt < Self.attempts {
          attempt += 1
          continue
        }
        throw unavailable(failure, session)
      }
    }
  }

  /// Two round trips: the rows `readAhead` names, read without locks, then the writes in one
  /// statement, `payservice_apply`, which checks what the reads decided on (`OptimisticReads`)
  /// and commits. When a check fails, or `body` needs locks, `body` runs again in `write`.
  public func writeOptimistically<T>(readAhead: ReadAhead, _ body: (any OrderTransaction) throws -> T) throws -> T {
    enter()
    defer { leave() }
    if let group { return try optimisticMember(of: group, readAhead, body) }
    let session = try liveSession()
    let batch = PostgresBatch(issued: issuedTokens)
    do {
      let transaction = PostgresOptimisticTransaction(session: session, batch: batch)
      try transaction.readAhead(readAhead)
      let result = try body(transaction)
      if batch.writes > 0 { try batch.apply(on: session) }
      return result
    } catch is NeedsLocks {
      return try write { try body($0) }
    } catch let failure as PostgresFailure {
      if failure.conflict || (failure.retryable && !failure.connectionLost) { return try write { try body($0) } }
      throw unavailable(failure, session)
    }
  }

  /// One statement, `payservice_issue`, with the token made from the sequence number this store
  /// expects to be next. When another issuer took that number, the server answers the next one
  /// and the token is made again (a few times at most); a declined hold, a replayed one, a group
  /// commit in progress or a failure the transaction could retry go through `write` instead.
  public func issue(_ issue: TokenIssue) throws -> NewChargeToken? {
    enter()
    defer { leave() }
    guard group == nil, issue.hold?.status != .declined else { return try write { try $0.issue(issue) } }
    let session = try liveSession()
    // Sequence numbers start at 1: before this store knows one, the server says which is next.
    var sequence = issuedTokens.nextSequence ?? 0
    attempts: for _ in 0..<3 {
      let token = issue.make(sequence)
      var document = JSONWriter(capacity: 1024)
      document.beginObject()
      document.member("sequence", Int(sequence))
      document.member("now", Int(issue.issuedAt))
      document.member("purge", TokenIssue.purgeLimit)
      document.key("token")
      Self.write(StoreSQL.values(token), to: &document)
      document.key("hold")
      if let hold = issue.hold {
        Self.write(StoreSQL.values(hold, at: RFC3339.format(issue.issuedAt)), to: &document)
      } else {
        document.writeNull()
      }
      document.endObject()
      var binds = PostgresBindings()
      binds.append(String(decoding: document.bytes, as: UTF8.self))
      let answer: String
      do throws(PostgresFailure) {
        answer = try session.run(Self.issueStatement, binds).rows.first?.columns(String.self) ?? ""
      } catch {
        if error.retryable && !error.connectionLost { break attempts }
        throw unavailable(error, session)
      }
      let parts = answer.split(separator: " ", maxSplits: 1).map(String.init)
      switch (parts.first, parts.count == 2 ? parts[1] : nil) {
      case ("issued", let version?):
        issuedTokens.add(try ChargeTokenRecord(issued: token), version: version)
        if let hold = issue.hold { issuedTokens.add(hold, version: version) }
        issuedTokens.nextSequence = sequence + 1
        tokensIssuedInOneStatement += 1
        return token
      case ("next", let next?) where Int64(next) != nil:
        sequence = Int64(next)!
      case ("replay", nil):
        break attempts
      default:
        throw StoreError.unavailable(reason: "payservice_issue answered \(answer.prefix(100))")
      }
    }
    return try write { try $0.issue(issue) }
  }

  /// `payservice_issue` in a transaction that commits without waiting for the server to flush its
  /// log (`synchronous_commit = off` for that transaction alone). Nothing outside the store depends
  /// on an issued token until an order uses it, and that order's commit, which waits for the flush,
  /// flushes the log up to itself and so the token's commit before it: an acknowledged order never
  /// rests on a token a crash could lose. A crash of the server within a moment of an authorization
  /// can lose the token (and the Apple Pay transaction id recorded with it); its processOrder is then
  /// refused as an unknown token, and the shopper authorizes again. A checkout waits for one flush
  /// instead of two.
  static let issueStatement =
    "SELECT payservice_issue($1::jsonb) FROM set_config('synchronous_commit', 'off', true) AS durability"

  /// `values` as a JSON array, for the server to read back with `->>`.
  private static func write(_ values: [StoreValue], to document: inout JSONWriter) {
    document.beginArray()
    for value in values {
      switch value {
      case .text(let text?): document.write(text)
      case .integer(let number?): document.write(Int(number))
      case .bool(let flag): document.write(flag)
      case .text(nil), .integer(nil): document.writeNull()
      }
    }
    document.endArray()
  }

  /// A group commit in progress: the batch its optimistic members add to, and the transaction a
  /// member that needs locks opens (the batch so far is applied in it first, so that members stay
  /// in order). A lost connection or a lock conflict dooms the whole group (its transaction cannot
  /// commit as it stands): every later member fails at once, and `groupCommit` rolls back and
  /// throws, so that each order is answered again on its own.
  private final class Group {
    let session: PostgresSession
    let batch: PostgresBatch
    var transactionOpen = false
    var failure: PostgresFailure?

    init(session: PostgresSession, batch: PostgresBatch) {
      self.session = session
      self.batch = batch
    }
  }

  /// Tokens `issue` issued in its one statement (statistics for tests and benchmarks).
  public private(set) var tokensIssuedInOneStatement = 0

  /// The tokens this store issued (see `IssuedTokens`).
  private let issuedTokens = IssuedTokens()

  /// The open group commit, if any.
  private var group: Group?

  private func optimisticMember<T>(
    of group: Group, _ readAhead: ReadAhead, _ body: (any OrderTransaction) throws -> T
  ) throws -> T {
    if let failure = group.failure { throw StoreError.unavailable(reason: failure.reason) }
    let mark = group.batch.mark
    do {
      let transaction = PostgresOptimisticTransaction(session: group.session, batch: group.batch)
      try group.batch.reads.readAhead(readAhead, on: group.session, stock: true)
      let result = try body(transaction)
      group.batch.end(mark)
      return result
    } catch is NeedsLocks {
      group.batch.rewind(to: mark)
      return try writeInGroup(group) { try body($0) }
    } catch let failure as PostgresFailure {
      group.batch.rewind(to: mark)
      throw doom(group, failure)
    } catch {
      group.batch.rewind(to: mark)
      throw error
    }
  }

  /// Runs `body` with locks in a savepoint of the group's transaction (opened here the first time,
  /// with the batch so far applied in it). This member alone is undone if `body` throws.
  private func writeInGroup<T>(_ group: Group, _ body: (any StoreTransaction) throws -> T) throws -> T {
    if let failure = group.failure { throw StoreError.unavailable(reason: failure.reason) }
    let session = group.session
    do throws(PostgresFailure) {
      if !group.transactionOpen {
        try session.run("BEGIN")
        group.transactionOpen = true
      }
      // This member may write anything: what the batch read is read again, in the transaction.
      if group.batch.writes > 0 { try group.batch.apply(on: session) } else { group.batch.reset() }
      try session.run("SAVEPOINT member")
    } catch {
      throw doom(group, error)
    }
    let result: T
    do {
      result = try body(PostgresTransaction(session: session))
    } catch {
      do throws(PostgresFailure) {
        try session.run("ROLLBACK TO SAVEPOINT member")
        try session.run("RELEASE SAVEPOINT member")
      } catch {
        throw doom(group, error)
      }
      guard let failure = error as? PostgresFailure else { throw error }
      if failure.connectionLost || failure.retryable { throw doom(group, failure) }
      throw StoreError.unavailable(reason: failure.reason)
    }
    do throws(PostgresFailure) {
      try session.run("RELEASE SAVEPOINT member")
    } catch {
      throw doom(group, error)
    }
    return result
  }

  /// Marks the group as failed and returns the member's error.
  private func doom(_ group: Group, _ failure: PostgresFailure) -> StoreError {
    group.failure = failure
    return .unavailable(reason: failure.reason)
  }

  /// The group's reads ahead in one round trip; its optimistic members' writes in one more
  /// (`payservice_apply`), which is also its commit unless a member needed locks.
  public func groupCommit(readAhead: ReadAhead, _ body: () -> Void) throws(StoreError) {
    enter()
    defer { leave() }
    let session = try liveSession()
    let open = Group(session: session, batch: PostgresBatch(issued: issuedTokens))
    if !readAhead.isEmpty {
      do {
        try open.batch.reads.readAhead(readAhead, on: session, stock: true)
      } catch let failure as PostgresFailure {
        throw unavailable(failure, session)
      } catch {
        throw StoreError.unavailable(reason: "\(error)")
      }
    }
    group = open
    body()
    group = nil
    if let failure = open.failure {
      if open.transactionOpen { rollback(session) }
      throw unavailable(failure, session)
    }
    do throws(PostgresFailure) {
      if open.batch.writes > 0 { try open.batch.apply(on: session) }
      if open.transactionOpen { try session.run("COMMIT") }
    } catch {
      if open.transactionOpen { rollback(session) }
      throw unavailable(error, session)
    }
  }

  private func rollback(_ session: PostgresSession) {
    do throws(PostgresFailure) {
      try session.run("ROLLBACK")
    } catch {
      drop(session)  // the server rolls back what was open on a closed connection
    }
  }

  /// Runs one statement on its own, in the server's implicit transaction.
  private func statement(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws(StoreError) -> [PostgresRow] {
    enter()
    defer { leave() }
    let session = try liveSession()
    do throws(PostgresFailure) {
      return try session.run(sql, binds).rows
    } catch {
      throw unavailable(error, session)
    }
  }

  /// `rows` each made into a row of the store by `make`; a failure is the store's.
  private static func rows<Row>(_ rows: [PostgresRow], as make: (PostgresRow) throws -> Row) throws(StoreError) -> [Row] {
    try storeFailure { try rows.map(make) }
  }

  /// What `body` returns; what it throws as the store's failure (a row that does not read names
  /// its column, never its value).
  private static func storeFailure<T>(_ body: () throws -> T) throws(StoreError) -> T {
    do {
      return try body()
    } catch let error as StoreError {
      throw error
    } catch let failure as PostgresFailure {
      throw StoreError.unavailable(reason: failure.reason)
    } catch {
      throw StoreError.unavailable(reason: "\(error)")
    }
  }

  private func decoded<each Column: PostgresDecodable>(
    _ rows: [PostgresRow], as types: (repeat each Column).Type
  ) throws(StoreError) -> [(repeat each Column)] {
    do throws(PostgresFailure) {
      return try rows.map { row throws(PostgresFailure) in try row.columns(types) }
    } catch {
      throw StoreError.unavailable(reason: error.reason)
    }
  }

  public func seedStock(_ catalog: [Product]) throws(StoreError) {
    var binds = PostgresBindings()
    binds.append(catalog.map(\.sku))
    binds.append(catalog.map { Int64($0.quantityOnHand) })
    _ = try statement(
      """
      INSERT INTO stock (sku, quantityOnHand) SELECT * FROM UNNEST($1::text[], $2::bigint[])
      ON CONFLICT (sku) DO NOTHING
      """, binds)
  }

  public func stock() throws(StoreError) -> [String: Int] {
    let rows = try decoded(try statement("SELECT sku, quantityOnHand FROM stock"), as: (String, Int).self)
    return Dictionary(rows.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
  }

  public func stockLevels() throws(StoreError) -> [StockLevel] {
    let rows = try decoded(
      try statement(StoreSQL.stockLevels.postgres), as: (String, Int, Int).self)
    return rows.map { StockLevel(sku: $0.0, quantityOnHand: $0.1, sold: $0.2) }
  }

  public func stockEvents(sku: String, limit: Int) throws(StoreError) -> [StockEventRow] {
    let rows = try statement(StoreSQL.stockEvents.postgres, PostgresTransaction.bindings([.text(sku), .int(limit)]))
    return try Self.rows(rows, as: PostgresTransaction.stockEvent)
  }

  /// PostgreSQL keeps an updated row's old version until VACUUM reclaims it (autovacuum does, in
  /// time); nothing to do here.
  public func scrubErased() throws(StoreError) {}

  public func check() throws(StoreError) {
    _ = try statement("SELECT COUNT(*) FROM storeKey")
  }

  /// Runs `body` between `begin` and COMMIT on `session`; when it throws, the transaction is rolled
  /// back and its error passes through.
  private func inTransaction<T>(_ session: PostgresSession, _ begin: String, _ body: () throws -> T) throws -> T {
    try session.run(begin)
    let result: T
    do {
      result = try body()
    } catch {
      rollback(session)
      throw error
    }
    try session.run("COMMIT")
    return result
  }

  /// Runs `body` in a read-only REPEATABLE READ transaction: its statements see one snapshot.
  private func snapshot<T>(_ body: (PostgresSession) throws -> T) throws(StoreError) -> T {
    enter()
    defer { leave() }
    let session = try liveSession()
    do {
      return try inTransaction(session, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { try body(session) }
    } catch let failure as PostgresFailure {
      throw unavailable(failure, session)
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError.unavailable(reason: "\(error)")
    }
  }

  /// An order with its events and refunds in one statement (one snapshot): one round trip. An
  /// order with disputes is read again with them, in a snapshot of several statements.
  private static let orderSQL = """
    SELECT o.document, o.status, o.capturedMinor, o.refundedMinor,
      EXISTS (SELECT 1 FROM dispute d WHERE d.orderId = o.orderId),
      COALESCE(e.positions, '{}'), COALESCE(e.kinds, '{}'), COALESCE(e.ats, '{}'), COALESCE(e.amounts, '{}'),
      COALESCE(e.refs, '{}'), COALESCE(e.reasons, '{}'), COALESCE(e.reasonless, '{}'), COALESCE(r.documents, '{}')
    FROM "order" o
    LEFT JOIN LATERAL (
      SELECT array_agg(position ORDER BY position) AS positions, array_agg(kind ORDER BY position) AS kinds,
        array_agg(at ORDER BY position) AS ats, array_agg(amountMinor ORDER BY position) AS amounts,
        array_agg(reference ORDER BY position) AS refs, array_agg(COALESCE(reason, '') ORDER BY position) AS reasons,
        array_agg(reason IS NULL ORDER BY position) AS reasonless
      FROM orderEvent WHERE orderId = o.orderId) e ON true
    LEFT JOIN LATERAL (
      SELECT array_agg(document ORDER BY createdAt COLLATE "C", position) AS documents
      FROM refund WHERE orderId = o.orderId) r ON true
    WHERE o.orderId = $1
    """

  /// `orderSQL`'s row as an order; nil when it has disputes (read them in a snapshot).
  private static func orderWithoutDisputes(_ row: PostgresRow, id: String) throws -> StoredOrder? {
    let (document, status, captured, refunded, disputed, positions, kinds, ats, amounts, references, reasons, reasonless,
      refunds) = try row.columns(
        (String, String, Int64?, Int64, Bool, [Int64], [String], [String], [Int64], [String], [String], [Bool],
          [String]).self)
    if disputed { return nil }
    var events: [OrderEventRow] = []
    for index in positions.indices {
      guard let kind = OrderEventRow.Kind(rawValue: kinds[index]) else {
        throw StoreError.unavailable(reason: "order \(id) has an event of unknown kind")
      }
      events.append(
        OrderEventRow(
          orderId: id, position: Int(positions[index]), kind: kind, at: ats[index], amountMinor: amounts[index],
          reference: references[index], reason: reasonless[index] ? nil : reasons[index]))
    }
    return StoredOrder(
      document: document, status: try OrderStatus(stored: status), capturedMinor: captured, refundedMinor: refunded,
      events: events, refunds: refunds, disputes: [])
  }

  public func order(id: String) throws(StoreError) -> StoredOrder? {
    var key = PostgresBindings()
    key.append(id)
    guard let row = try statement(Self.orderSQL, key).first else { return nil }
    if let read = try Self.storeFailure({ try Self.orderWithoutDisputes(row, id: id) }) { return read }
    return try snapshot { session -> StoredOrder? in
      let rows = try session.run(StoreSQL.storedOrder.postgres, key).rows
      guard let row = rows.first else { return nil }
      let (document, status, captured, refunded) = try row.columns((String, String, Int64?, Int64).self)
      var events: [OrderEventRow] = []
      for event in try session.run(StoreSQL.orderEvents.postgres, key).rows {
        let (position, kind, at, eventAmount, reference, reason) = try event.columns(
          (Int, String, String, Int64, String, String?).self)
        guard let kind = OrderEventRow.Kind(rawValue: kind) else {
          throw StoreError.unavailable(reason: "order \(id) has an event of unknown kind")
        }
        events.append(
          OrderEventRow(
            orderId: id, position: position, kind: kind, at: at, amountMinor: eventAmount, reference: reference,
            reason: reason))
      }
      let refunds = try session.run(StoreSQL.refundDocuments.postgres, key).rows.map { try $0.columns(String.self) }
      let disputes = try session.run(StoreSQL.disputesOfOrder.postgres, key).rows.map(PostgresTransaction.dispute)
      return StoredOrder(
        document: document, status: try OrderStatus(stored: status), capturedMinor: captured,
        refundedMinor: refunded, events: events, refunds: refunds, disputes: disputes)
    }
  }

  /// The listing's statement and its binds.
  private static func ordersStatement(_ query: OrderQuery) -> (sql: String, binds: PostgresBindings) {
    let (sql, values) = StoreSQL.orders(query, in: .postgres)
    return (sql, PostgresTransaction.bindings(values))
  }

  private static func summary(_ row: (String, String, String, Int64, Int64, String, Int, String?)) throws(StoreError)
    -> OrderSummaryRow
  {
    OrderSummaryRow(
      orderId: row.0, createdAt: row.1, status: try OrderStatus(stored: row.2), amountMinor: row.3,
      refundedMinor: row.4, currencyCode: row.5, itemCount: row.6, agreementId: row.7)
  }

  public func orders(_ query: OrderQuery) throws(StoreError) -> [OrderSummaryRow] {
    let (sql, binds) = Self.ordersStatement(query)
    let rows = try decoded(
      try statement(sql, binds), as: (String, String, String, Int64, Int64, String, Int, String?).self)
    return try rows.map { row throws(StoreError) in try Self.summary(row) }
  }

  /// The page and the pending entries in one statement (one snapshot): one round trip.
  public func ordersAndPending(_ query: OrderQuery) throws(StoreError) -> (
    orders: [OrderSummaryRow], pending: [OperationRow]
  ) {
    let (page, binds) = Self.ordersStatement(query)
    let sql = """
      SELECT 0, p.*, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text,
        NULL::text
      FROM (\(page)) p
      UNION ALL
      SELECT 1, NULL::text, NULL::text, NULL::text, NULL::bigint, NULL::bigint, NULL::text, NULL::bigint, NULL::text,
        \(StoreSQL.operationColumns)
      FROM operation WHERE state = 'pending'
      """
    var orders: [OrderSummaryRow] = []
    var pending: [OperationRow] = []
    for row in try statement(sql, binds) {
      try Self.storeFailure {
        let columns = try row.columns(
          (Int, String?, String?, String?, Int64?, Int64?, String?, Int?, String?, String?, String?, String?, String?,
            String?, String?, String?, String?, String?).self)
        if columns.0 == 0 {
          guard let id = columns.1, let createdAt = columns.2, let status = columns.3, let amount = columns.4,
            let refunded = columns.5, let currency = columns.6
          else { throw StoreError.unavailable(reason: "a listed order lacks a column") }
          orders.append(
            try Self.summary((id, createdAt, status, amount, refunded, currency, columns.7 ?? 0, columns.8)))
        } else {
          guard let kind = columns.9, let key = columns.10, let fingerprint = columns.11, let state = columns.12,
            let created = columns.16
          else { throw StoreError.unavailable(reason: "a pending entry lacks a column") }
          pending.append(
            OperationRow(
              kind: kind, key: key, fingerprint: fingerprint, state: try OperationRow.State(stored: state),
              subject: columns.13, request: columns.14, result: columns.15, created: created, settled: columns.17))
        }
      }
    }
    // Each part in its own order (byte-wise: the texts are ASCII), whatever order the union kept.
    orders.sort { ($0.createdAt, $0.orderId) > ($1.createdAt, $1.orderId) }
    pending.sort { ($0.created, $0.kind, $0.key) < ($1.created, $1.kind, $1.key) }
    return (orders, pending)
  }

  public func agreement(id: String) throws(StoreError) -> StoredAgreement? {
    var key = PostgresBindings()
    key.append(id)
    return try snapshot { session -> StoredAgreement? in
      guard let row = try session.run(StoreSQL.agreement.postgres, key).rows.first else { return nil }
      let events = try session.run(StoreSQL.agreementEvents.postgres, key).rows.map(PostgresTransaction.agreementEvent)
      return StoredAgreement(row: try PostgresTransaction.agreement(row), events: events)
    }
  }

  public func agreements(_ query: AgreementQuery) throws(StoreError) -> [AgreementRow] {
    let (sql, values) = StoreSQL.agreements(query, in: .postgres)
    let rows = try statement(sql, PostgresTransaction.bindings(values))
    return try Self.rows(rows, as: PostgresTransaction.agreement)
  }

  public func dueAgreements(by: Int64, after: AgreementCursor?, limit: Int, shard: AgreementShard?) throws(StoreError)
    -> [AgreementRow]
  {
    let (dueAgreements, values) = StoreSQL.dueAgreements(by: by, after: after, limit: limit, shard: shard)
    let rows = try statement(dueAgreements.postgres, PostgresTransaction.bindings(values))
    return try Self.rows(rows, as: PostgresTransaction.agreement)
  }

  public func moneyMovements(from: String, to: String) throws(StoreError) -> [MoneyMovementRow] {
    var binds = PostgresBindings()
    binds.append(from)
    binds.append(to)
    let rows = try decoded(
      try statement(
        StoreSchema.moneyMovementsQuery(placeholders: ["$1", "$2", "$1", "$2"], collate: #" COLLATE "C""#), binds),
      as: (String, String, String, Int64).self)
    return try rows.map { row throws(StoreError) in
      guard let kind = OrderEventRow.Kind(rawValue: row.2) else {
        throw StoreError.unavailable(reason: "an order event has an unknown kind")
      }
      return MoneyMovementRow(day: row.0, currencyCode: row.1, kind: kind, amountMinor: row.3)
    }
  }

  /// One statement (one snapshot): one round trip.
  public func pendingOperations() throws(StoreError) -> [OperationRow] {
    try Self.rows(try statement(StoreSQL.pendingOperations.postgres), as: PostgresTransaction.operation)
  }

  public func pendingOperations(createdBy: String, after: OperationPosition?, limit: Int) throws(StoreError)
    -> [OperationRow]
  {
    let values = StoreSQL.pendingOperationsPage(createdBy: createdBy, after: after, limit: limit)
    let rows = try statement(StoreSQL.pendingOperationsPage.postgres, PostgresTransaction.bindings(values))
    return try Self.rows(rows, as: PostgresTransaction.operation)
  }
}
