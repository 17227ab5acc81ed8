import Foundation
@testable import PayServiceCore
import PayServicePostgres
import PayServiceTestSupport
import Testing

/// What every store backend must do alike, run on each (`StoreBackend.available`: SQLite, and
/// PostgreSQL when `PAYSERVICE_TEST_POSTGRES_URL` names a server).
@Suite("Store contract")
struct StoreContractTests {
  static let config = TestConfig.load()

  struct Rollback: Error {}

  /// Issues a token for one clock, shipped by the method named `binding` (what tells tokens apart).
  static func issue(_ transaction: any StoreTransaction, binding: String = "b", at issuedAt: Int64 = TestConfig.now) throws
    -> String
  {
    try #require(try transaction.issue(tokenIssue(binding: binding, at: issuedAt))).token
  }

  /// What `issue` issues, as `Store.issue` takes it, with `hold` if any.
  static func tokenIssue(binding: String = "b", at issuedAt: Int64 = TestConfig.now, hold: PaymentAuthorization? = nil)
    -> TokenIssue
  {
    TokenIssue(
      hold: hold, issuedAt: issuedAt,
      make: NewChargeToken.maker(
        identifiers: Identifiers(key: TestConfig.identifierKey), merchant: "merchant.test",
        binding: OrderBinding(
          items: [CartItem(sku: "clock", quantity: 1)], shippingMethod: binding, shippingContact: nil, couponCode: nil),
        billingContact: nil, paymentMethod: PaymentMethod(network: "visa", type: .credit), amountMinor: 5000,
        currencyCode: "USD", outcome: .approved, issuedAt: issuedAt, ttlSeconds: 600,
        authorizationId: hold?.authorizationId, gatewayPaymentData: nil, walletOrderToken: nil))
  }

  static func authorization(_ id: String, transaction: String) -> PaymentAuthorization {
    PaymentAuthorization(
      authorizationId: id, transactionId: transaction, network: "Visa", cardType: "credit", lastFour: "4242",
      amountMinor: 5000, currencyCode: "USD", status: .held)
  }

  @Test(
    "the PostgreSQL server of the tests takes a new database and records every migration in it",
    .enabled(if: StoreBackend.serverURL != nil, "\(StoreBackend.skipMessage)"))
  func postgresServer() throws {
    let database = try StoreBackend.postgres.freshDatabase()
    _ = try StoreBackend.postgres.open(database)
    let name = try #require(database.split(separator: "/").last.map(String.init))
    let applied = try TestPostgres.execute("SELECT identifier FROM payservice_migrations", database: name)
    #expect(applied.count == StoreSchema.migrations.count)
    #expect(Set(applied) == Set(StoreSchema.migrations))
  }

  @Test(
    "expired unused tokens are purged as new ones are issued, never a used one, the newest, or more than 16 at once",
    arguments: StoreBackend.available, [false, true])
  func expiredTokensArePurged(backend: StoreBackend, onItsOwn: Bool) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    let old = try store.write { transaction in try (0..<20).map { try Self.issue(transaction, binding: "old\($0)") } }
    // One of them used: it is an order's record and stays.
    #expect(try store.write { try $0.markUsed(token: old[3], at: "2026-11-21T12:00:00Z") })
    func kept() throws -> Int { try store.write { transaction in try old.filter { try transaction.chargeToken($0) != nil }.count } }
    // In a transaction of its own (`Store.issue`), or in a write.
    func issue(_ binding: String, at issuedAt: Int64) throws -> String {
      guard onItsOwn else { return try store.write { try Self.issue($0, binding: binding, at: issuedAt) } }
      return try #require(try store.issue(Self.tokenIssue(binding: binding, at: issuedAt))).token
    }
    // Within the 600 s they are valid, nothing goes.
    _ = try issue("valid", at: TestConfig.now + 599)
    #expect(try kept() == 20)
    // Expired: 16 go with the next issue, then the other 3 unused ones; the used one stays.
    let fresh = try issue("new", at: TestConfig.now + 600)
    #expect(try kept() == 4)
    _ = try issue("newer", at: TestConfig.now + 601)
    #expect(try kept() == 1)
    #expect(try store.write { try $0.chargeToken(old[3]) } != nil)
    #expect(try store.write { try $0.chargeToken(fresh) } != nil)
  }

  @Test("seeding adds the catalog's new skus and keeps the counts of known ones", arguments: StoreBackend.available)
  func seeding(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    #expect(try store.stock()["clock"] == 10)
    #expect(try store.write { try $0.decrementStock("clock", by: 3) })
    try store.seedStock(Self.config.catalog)
    #expect(try store.stock()["clock"] == 7)
    #expect(try store.stockLedger()["clock"]! == (onHand: 7, sold: 3))
  }

  @Test("a write is all or nothing: an error thrown inside undoes everything it wrote, and passes through", arguments: StoreBackend.available)
  func allOrNothing(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    var issued = ""
    #expect(throws: Rollback.self) {
      try store.write { transaction in
        issued = try Self.issue(transaction)
        #expect(try transaction.decrementStock("clock", by: 2))
        throw Rollback()
      }
    }
    #expect(try store.stockLedger()["clock"]! == (onHand: 10, sold: 0))
    #expect(try store.write { try $0.chargeToken(issued) } == nil)
    // The same store state issues the same token again: the rolled-back one left no gap.
    #expect(try store.write { try Self.issue($0) } == issued)
  }

  @Test("stock decrements are conditional: never below zero, and a refused one changes nothing", arguments: StoreBackend.available)
  func conditionalDecrement(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    #expect(try store.write { try $0.decrementStock("clock", by: 11) } == false)
    #expect(try store.write { try $0.decrementStock("clock", by: 10) })
    #expect(try store.write { try $0.decrementStock("clock", by: 1) } == false)
    let lamps = try #require(try store.stock()["lamp"])
    #expect(try store.write { try $0.quantitiesOnHand(["lamp", "clock", "nope"]) } == [lamps, 0, 0])
    #expect(try store.stockLedger()["clock"]! == (onHand: 0, sold: 10))
  }

  @Test("charge tokens come from the store's sequence: two stores in the same state issue the same tokens", arguments: StoreBackend.available)
  func deterministicTokens(backend: StoreBackend) throws {
    let (first, _) = try backend.freshStore(config: Self.config)
    let (second, _) = try StoreBackend.sqlite.freshStore(config: Self.config)
    let tokens = try (0..<3).map { index in try first.write { try Self.issue($0, binding: "b\(index)") } }
    let reference = try (0..<3).map { index in try second.write { try Self.issue($0, binding: "b\(index)") } }
    #expect(tokens == reference)
    #expect(Set(tokens).count == 3)
    let record = try #require(try first.write { try $0.chargeToken(tokens[1]) })
    #expect(record.binding.shippingMethod == "b1" && record.amountMinor == 5000 && record.usedAt == nil)
    #expect(record.expiresAt == TestConfig.now + 600 && record.issuedAt == TestConfig.now)
  }

  @Test(
    "a token issued on its own (Store.issue): the tokens a transaction issues, numbers taken in turn by two stores on one database, a hold recorded with it, a replayed hold refused, a declined one issuing none",
    arguments: StoreBackend.available)
  func tokensIssuedOnTheirOwn(backend: StoreBackend) throws {
    let (first, database) = try backend.freshStore(config: Self.config)
    // Another host on the same store: each takes the next number, whoever took the one before.
    let second = try backend.open(database)
    let (reference, _) = try StoreBackend.sqlite.freshStore(config: Self.config)
    var tokens: [String] = []
    for (index, store) in [first, first, second, first, second, second].enumerated() {
      let issued = try #require(try store.issue(Self.tokenIssue(binding: "b\(index)")))
      #expect(issued.sequence == Int64(index + 1))
      tokens.append(issued.token)
    }
    #expect(tokens == (try (0..<6).map { index in try reference.write { try Self.issue($0, binding: "b\(index)") } }))
    #expect(try second.write { try $0.markUsed(token: tokens[1], at: "2026-11-21T12:00:01Z") })
    #expect(try first.write { try $0.markUsed(token: tokens[1], at: "2026-11-21T12:00:02Z") } == false)
    #expect(try first.write { try $0.chargeToken(tokens[4]) }?.binding.shippingMethod == "b4")

    let held = Self.authorization("auth_1", transaction: "aa")
    let withHold = try #require(try first.issue(Self.tokenIssue(binding: "h", hold: held)))
    #expect(withHold.sequence == 7 && withHold.authorizationId == "auth_1")
    #expect(try second.write { try $0.authorization("auth_1") } == held)
    for store in [first, second] {
      #expect(throws: ApplePayTokenFailure.self) {
        try store.issue(Self.tokenIssue(binding: "again", hold: Self.authorization("auth_2", transaction: "aa")))
      }
    }
    var declined = Self.authorization("auth_3", transaction: "dd")
    declined.status = .declined
    #expect(try first.issue(Self.tokenIssue(binding: "declined", hold: declined)) == nil)
    #expect(try first.write { try $0.authorization("auth_3") } == declined)
    #expect(try first.write { try $0.authorization("auth_2") } == nil)
    // Nothing else took a number.
    #expect(try second.issue(Self.tokenIssue(binding: "last"))?.sequence == 8)
    // On PostgreSQL each store issued its four tokens in one statement each (after a first
    // telling it the next number, when it knew none or another store took it), the replayed and
    // the declined hold in a transaction.
    if let first = first as? PostgresStore, let second = second as? PostgresStore {
      #expect(first.tokensIssuedInOneStatement == 4 && second.tokensIssuedInOneStatement == 4)
    }
  }

  @Test("a charge token is used once", arguments: StoreBackend.available)
  func tokenUsedOnce(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    let token = try store.write { try Self.issue($0) }
    #expect(try store.write { try $0.markUsed(token: token, at: "2026-11-21T12:00:01Z") })
    #expect(try store.write { try $0.markUsed(token: token, at: "2026-11-21T12:00:02Z") } == false)
    let record = try #require(try store.write { try $0.chargeToken(token) })
    #expect(record.usedAt == "2026-11-21T12:00:01Z")
  }

  @Test("an Apple Pay transaction id is accepted once, and only a held authorization is captured", arguments: StoreBackend.available)
  func authorizations(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    let first = Self.authorization("auth_1", transaction: "aa")
    try store.write { try $0.record(first, at: "2026-11-21T12:00:00Z") }
    #expect(throws: ApplePayTokenFailure.self) {
      try store.write { try $0.record(Self.authorization("auth_2", transaction: "aa"), at: "2026-11-21T12:00:01Z") }
    }
    try store.write { try $0.record(Self.authorization("auth_3", transaction: "bb"), at: "2026-11-21T12:00:02Z") }
    #expect(try store.write { try $0.markCaptured("auth_1", chargeId: "ch_1", at: "2026-11-21T12:00:03Z") })
    #expect(try store.write { try $0.markCaptured("auth_1", chargeId: "ch_2", at: "2026-11-21T12:00:04Z") } == false)
    #expect(try store.authorizations().map(\.authorizationId) == ["auth_1", "auth_3"])
    #expect(try store.authorizations().map(\.status) == [.captured, .held])
    #expect(try store.write { try $0.authorization("auth_3") } == Self.authorization("auth_3", transaction: "bb"))
  }

  @Test(
    "group commit: a member that throws, or whose statement fails, is undone alone; the others commit together",
    arguments: StoreBackend.available)
  func groupCommit(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    var outcomes: [String] = []
    try store.groupCommit {
      for quantity in [1, 2, 3, 4] {
        do {
          try store.write { transaction in
            #expect(try transaction.decrementStock("clock", by: quantity))
            if quantity == 2 { throw Rollback() }
            if quantity == 3 {
              // A CHECK constraint fails (four digits): a failed statement inside the group.
              var broken = Self.authorization("auth_x", transaction: "xx")
              broken.lastFour = "123"
              _ = try transaction.insertAuthorization(broken, at: "2026-11-21T12:00:00Z")
            }
          }
          outcomes.append("ok")
        } catch is StoreError {
          outcomes.append("store")
        } catch {
          outcomes.append("thrown")
        }
      }
    }
    #expect(outcomes == ["ok", "thrown", "store", "ok"])
    #expect(try store.stockLedger()["clock"]! == (onHand: 5, sold: 5))
    #expect(try store.authorizations().isEmpty)
  }

  /// Inserts a charge and an order of a clock (40.00, 1.00 off, 2.00 tax) and two lamps (10.00,
  /// 0.50 tax), 3.00 shipping with 0.24 tax, created at `createdAt`.
  static func insertOrder(
    _ transaction: any StoreTransaction, _ orderId: String, createdAt: String = "2026-11-21T12:00:00Z",
    status: OrderStatus = .paid
  ) throws {
    let token = try Self.issue(transaction)
    try transaction.insert(
      ChargeRow(
        chargeId: "ch_\(orderId)", token: token, succeeded: true, amountMinor: 5474, currencyCode: "USD",
        createdAt: createdAt))
    try transaction.insert(
      OrderRow(
        orderId: orderId, chargeId: "ch_\(orderId)", createdAt: createdAt, amountMinor: 5474,
        currencyCode: "USD", document: #"{"orderId":"\#(orderId)"}"#,
        items: [
          OrderRow.Item(sku: "clock", quantity: 1, unitPriceMinor: 4000, amountMinor: 4000, discountMinor: 100, taxMinor: 200),
          OrderRow.Item(sku: "lamp", quantity: 2, unitPriceMinor: 500, amountMinor: 1000, discountMinor: 0, taxMinor: 50),
        ],
        status: status, capturedMinor: status == .paid ? 5474 : nil, shippingMinor: 300, shippingTaxMinor: 24))
    try transaction.insert(
      OrderEventRow(orderId: orderId, position: 1, kind: .placed, at: createdAt, amountMinor: 5474, reference: orderId))
  }

  @Test("an order is stored with its lines, money and events, read locked, changed and found by id", arguments: StoreBackend.available)
  func orders(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    try store.write { try Self.insertOrder($0, "ord_1") }
    let state = try #require(try store.write { try $0.lockOrder("ord_1") })
    #expect(state.status == .paid && state.amountMinor == 5474 && state.capturedMinor == 5474 && state.refundedMinor == 0)
    #expect(state.shippingMinor == 300 && state.shippingTaxMinor == 24 && !state.shippingRefunded)
    #expect(state.lines.map(\.sku) == ["clock", "lamp"] && state.lines.map(\.discountMinor) == [100, 0])
    #expect(state.lines.map(\.taxMinor) == [200, 50] && state.lines.map(\.refundedQuantity) == [0, 0])
    #expect(state.sandboxOutcome == .approved && state.authorizationId == nil && state.nextEventPosition == 2)
    #expect(try store.write { try $0.lockOrder("ord_2") } == nil)

    try store.write { transaction in
      try transaction.setRefundedQuantity(orderId: "ord_1", sku: "lamp", to: 1)
      #expect(try transaction.restock("lamp", by: 1) == false)  // none sold through the store
      try transaction.updateOrder(
        "ord_1", status: .partiallyRefunded, capturedMinor: 5474, refundedMinor: 525, shippingRefunded: true)
      try transaction.insert(
        OrderEventRow(
          orderId: "ord_1", position: 2, kind: .refunded, at: "2026-11-21T12:05:00Z", amountMinor: 525, reference: "r-1",
          reason: "broken"))
      try transaction.insert(
        RefundRow(
          refundId: "r-1", orderId: "ord_1", position: 2, createdAt: "2026-11-21T12:05:00Z", amountMinor: 525,
          document: #"{"refundId":"r-1"}"#))
    }
    let changed = try #require(try store.write { try $0.lockOrder("ord_1") })
    #expect(changed.status == .partiallyRefunded && changed.refundedMinor == 525 && changed.shippingRefunded)
    #expect(changed.lines.map(\.refundedQuantity) == [0, 1] && changed.nextEventPosition == 3)

    let stored = try #require(try store.order(id: "ord_1"))
    #expect(stored.document == #"{"orderId":"ord_1"}"# && stored.status == .partiallyRefunded)
    #expect(stored.capturedMinor == 5474 && stored.refundedMinor == 525 && stored.refunds == [#"{"refundId":"r-1"}"#])
    #expect(stored.events.map(\.kind) == [.placed, .refunded] && stored.events[1].reason == "broken")
    #expect(try store.order(id: "ord_2") == nil)
    let totals = try store.orderTotals()
    #expect(totals.charges == 1 && totals.orders == 1 && totals.unitsBySKU == ["clock": 1, "lamp": 2])
  }

  @Test(
    "a journal key is recorded once; a pending entry is settled or removed once, and listed by subject until then",
    arguments: StoreBackend.available)
  func operationJournal(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    let settled = OperationRow(
      kind: "refund", key: "r 1", fingerprint: "{}", state: .settled, subject: "ord_1", request: nil,
      result: #"{"status":"succeeded"}"#, created: "2026-11-21T12:05:00Z", settled: "2026-11-21T12:05:00Z")
    #expect(try store.write { try $0.insert(settled) })
    var other = settled
    other.fingerprint = #"{"amount":"1.00"}"#
    #expect(try store.write { try $0.insert(other) } == false)
    #expect(try store.write { try $0.operation(kind: "refund", key: "r 1") } == settled)
    #expect(try store.write { try $0.operation(kind: "capture", key: "r 1") } == nil)

    let pending = { (kind: String, key: String, created: String) in
      OperationRow(
        kind: kind, key: key, fingerprint: "f", state: .pending, subject: "ord_1", request: #"{"call":1}"#, result: nil,
        created: created, settled: nil)
    }
    let (capture, refund, later) = (
      pending("capture", "c 1", "2026-11-21T12:06:00Z"), pending("refund", "r 2", "2026-11-21T12:06:00Z"),
      pending("cancel", "x 1", "2026-11-21T12:07:00Z")
    )
    for entry in [later, refund, capture] { #expect(try store.write { try $0.insert(entry) }) }
    #expect(try store.write { try $0.pendingOperations(subject: "ord_1") } == [capture, refund, later])
    #expect(try store.write { try $0.pendingOperations(subject: "ord_2") } == [])
    #expect(try store.pendingOperations() == [capture, refund, later])
    // A page: created at or before a time, after a position (created, kind, key), at most a limit.
    #expect(try store.pendingOperations(createdBy: "2026-11-21T12:06:00Z", after: nil, limit: 10) == [capture, refund])
    #expect(
      try store.pendingOperations(createdBy: "2026-11-21T12:07:00Z", after: OperationPosition(capture), limit: 10)
        == [refund, later])
    #expect(
      try store.pendingOperations(createdBy: "2026-11-21T12:07:00Z", after: OperationPosition(refund), limit: 10) == [later])
    #expect(try store.pendingOperations(createdBy: "2026-11-21T12:07:00Z", after: nil, limit: 1) == [capture])
    #expect(try store.pendingOperations(createdBy: "2026-11-21T12:05:59Z", after: nil, limit: 10) == [])

    try store.write { try $0.settleOperation(kind: "capture", key: "c 1", result: #"{"ok":true}"#, at: "2026-11-21T12:08:00Z") }
    var captured = capture
    // Settled, the entry keeps its answer and no longer its call.
    (captured.state, captured.request, captured.result, captured.settled) = (
      .settled, nil, #"{"ok":true}"#, "2026-11-21T12:08:00Z"
    )
    #expect(try store.write { try $0.operation(kind: "capture", key: "c 1") } == captured)
    try store.write { try $0.removeOperation(kind: "cancel", key: "x 1") }
    #expect(try store.write { try $0.operation(kind: "cancel", key: "x 1") } == nil)
    #expect(try store.pendingOperations() == [refund])
    // Only a pending entry is settled or removed: a second settlement or removal is a store failure.
    #expect(throws: StoreError.self) {
      try store.write { try $0.settleOperation(kind: "capture", key: "c 1", result: "{}", at: "2026-11-21T12:09:00Z") }
    }
    #expect(throws: StoreError.self) { try store.write { try $0.removeOperation(kind: "refund", key: "r 1") } }
    #expect(try store.write { try $0.operation(kind: "refund", key: "r 1") } == settled)
  }

  @Test(
    "a refund is read back by its refundId and its document replaced (where a gateway's later word on it is written); an order's document is read in the transaction",
    arguments: StoreBackend.available)
  func refundDocuments(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    try store.write { transaction in
      try Self.insertOrder(transaction, "ord_1")
      try transaction.insert(
        RefundRow(
          refundId: "r-1", orderId: "ord_1", position: 2, createdAt: "2026-11-21T12:05:00Z", amountMinor: 525,
          document: #"{"refundId":"r-1","status":"pending"}"#))
    }
    try store.write { transaction in
      let row = try #require(try transaction.refund("r-1"))
      #expect(row.refundId == "r-1" && row.orderId == "ord_1" && row.position == 2)
      #expect(row.createdAt == "2026-11-21T12:05:00Z" && row.amountMinor == 525)
      #expect(row.document == #"{"refundId":"r-1","status":"pending"}"#)
      #expect(try transaction.refund("r-2") == nil)
      try transaction.updateRefund("r-1", document: #"{"refundId":"r-1"}"#)
      #expect(try transaction.orderDocument("ord_1") == #"{"orderId":"ord_1"}"#)
      #expect(try transaction.orderDocument("ord_2") == nil)
    }
    #expect(try store.order(id: "ord_1")?.refunds == [#"{"refundId":"r-1"}"#])
    #expect(try store.write { try $0.refund("r-1")?.document } == #"{"refundId":"r-1"}"#)
  }

  @Test("orders are listed newest first by createdAt then orderId, filtered, after a position", arguments: StoreBackend.available)
  func listing(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    try store.write { transaction in
      try Self.insertOrder(transaction, "ord_b", createdAt: "2026-11-21T12:00:00Z")
      try Self.insertOrder(transaction, "ord_a", createdAt: "2026-11-21T12:00:00Z", status: .authorized)
      try Self.insertOrder(transaction, "ord_c", createdAt: "2026-11-20T09:00:00Z")
      try Self.insertOrder(transaction, "ord_d", createdAt: "2026-11-22T09:00:00Z")
    }
    func ids(_ query: OrderQuery) throws -> [String] { try store.orders(query).map(\.orderId) }
    #expect(try ids(OrderQuery(limit: 10)) == ["ord_d", "ord_b", "ord_a", "ord_c"])
    #expect(try ids(OrderQuery(limit: 2)) == ["ord_d", "ord_b"])
    #expect(try ids(OrderQuery(after: ("2026-11-21T12:00:00Z", "ord_b"), limit: 2)) == ["ord_a", "ord_c"])
    #expect(try ids(OrderQuery(status: .authorized, limit: 10)) == ["ord_a"])
    #expect(
      try ids(OrderQuery(createdFrom: "2026-11-21T00:00:00Z", createdTo: "2026-11-22T09:00:00Z", limit: 10))
        == ["ord_b", "ord_a"])
    let first = try #require(try store.orders(OrderQuery(limit: 1)).first)
    #expect(
      first
        == OrderSummaryRow(
          orderId: "ord_d", createdAt: "2026-11-22T09:00:00Z", status: .paid, amountMinor: 5474, refundedMinor: 0,
          currencyCode: "USD", itemCount: 3))
    // With the pending journal entries (one statement on PostgreSQL): the same page, entries oldest first.
    #expect(try store.write { transaction in
      try ["k2", "k1"].allSatisfy { key in
        try transaction.insert(
          OperationRow(
            kind: "order", key: key, fingerprint: "f", state: .pending, subject: "ord_\(key)", request: "{}",
            result: nil, created: "2026-11-21T12:00:00Z", settled: nil))
      }
    })
    for query in [OrderQuery(limit: 10), OrderQuery(after: ("2026-11-21T12:00:00Z", "ord_b"), limit: 2)] {
      let (orders, pending) = try store.ordersAndPending(query)
      #expect(orders == (try store.orders(query)))
      #expect(pending.map(\.key) == ["k1", "k2"])
      #expect(pending.map(\.subject) == ["ord_k1", "ord_k2"])
    }
  }

  @Test("a store written by a newer payservice is refused; reopening a current one applies nothing twice", arguments: StoreBackend.available)
  func migrations(backend: StoreBackend) throws {
    let (store, database) = try backend.freshStore(config: Self.config)
    _ = try store.write { try Self.issue($0) }
    let reopened = try backend.open(database)
    #expect(try reopened.stock()["clock"] == 10)
    try backend.addMigrationFromTheFuture(database)
    let password = backend == .postgres ? try TestPostgres.url().password : nil
    #expect {
      _ = try backend.open(database)
    } throws: { error in
      guard case .newerSchema(let location)? = error as? StoreError else { return false }
      return "\(error)".contains("was written by a newer payservice") && !location.contains(password ?? "\u{0}")
    }
  }

  @Test("stock by hand: a locked level, a set count and numbered events, newest first", arguments: StoreBackend.available)
  func stockEvents(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    try store.write { transaction in
      #expect(try transaction.stockLevel("teapot") == nil)
      #expect(try transaction.stockLevel("mug") == StockLevel(sku: "mug", quantityOnHand: 100, sold: 0))
      for (index, quantity) in [124, 120].enumerated() {
        try transaction.setQuantityOnHand("mug", to: quantity)
        #expect(try transaction.nextStockEventPosition("mug") == index + 1)
        try transaction.insert(
          StockEventRow(
            sku: "mug", position: index + 1, kind: index == 0 ? .adjusted : .set, at: "2026-11-21T12:00:0\(index)Z",
            delta: index == 0 ? 24 : -4, quantityOnHand: quantity, adjustmentId: "k\(index)", reason: "r\(index)"))
      }
    }
    #expect(try store.stockLevels().first { $0.sku == "mug" } == StockLevel(sku: "mug", quantityOnHand: 120, sold: 0))
    #expect(try store.stockLevels().map(\.sku) == Self.config.catalog.map(\.sku).sorted())
    #expect(
      try store.stockEvents(sku: "mug", limit: 10)
        == [
          StockEventRow(
            sku: "mug", position: 2, kind: .set, at: "2026-11-21T12:00:01Z", delta: -4, quantityOnHand: 120,
            adjustmentId: "k1", reason: "r1"),
          StockEventRow(
            sku: "mug", position: 1, kind: .adjusted, at: "2026-11-21T12:00:00Z", delta: 24, quantityOnHand: 124,
            adjustmentId: "k0", reason: "r0"),
        ])
    #expect(try store.stockEvents(sku: "mug", limit: 1).map(\.position) == [2])
    // The count never goes below zero, whatever a caller writes.
    #expect(throws: (any Error).self) { try store.write { try $0.setQuantityOnHand("mug", to: -1) } }
    try store.check()
  }

  @Test(
    "erasure selects tokens by email address with ASCII case folded alike, by order and by time, and marks them erased",
    arguments: StoreBackend.available)
  func erasureSelection(backend: StoreBackend) throws {
    let (store, _) = try backend.freshStore(config: Self.config)
    func contact(_ email: String) -> Contact {
      var contact = Contact()
      contact.emailAddress = email
      contact.countryCode = "US"
      return contact
    }
    let tokens = try store.write { transaction -> [String] in
      var tokens: [String] = []
      for (index, email) in ["Ada@Example.com", "ÉLISE@example.com", "grace@example.com"].enumerated() {
        let issuedAt = TestConfig.now + Int64(index) * 3600
        let make = NewChargeToken.maker(
          identifiers: Identifiers(key: TestConfig.identifierKey), merchant: "merchant.test",
          binding: OrderBinding(
            items: [CartItem(sku: "clock", quantity: 1)], shippingMethod: "m\(index)", shippingContact: contact(email),
            couponCode: nil),
          billingContact: index == 2 ? contact("billing@example.com") : nil,
          paymentMethod: PaymentMethod(network: "visa", type: .credit), amountMinor: 5000, currencyCode: "USD",
          outcome: .approved, issuedAt: issuedAt, ttlSeconds: 86_400, authorizationId: nil, gatewayPaymentData: nil,
          walletOrderToken: nil)
        let token = try #require(try transaction.issue(TokenIssue(hold: nil, issuedAt: issuedAt, make: make))).token
        tokens.append(token)
      }
      return tokens
    }
    try store.write { transaction in
      #expect(try transaction.tokensToErase(.emailAddress("ADA@EXAMPLE.COM"), limit: 10) == [tokens[0]])
      // Only ASCII letters fold, on both stores: É and é are different addresses.
      #expect(try transaction.tokensToErase(.emailAddress("élise@example.com"), limit: 10) == [])
      #expect(try transaction.tokensToErase(.emailAddress("ÉLISE@EXAMPLE.COM"), limit: 10) == [tokens[1]])
      #expect(try transaction.tokensToErase(.emailAddress("Billing@example.com"), limit: 10) == [tokens[2]])
      #expect(try transaction.tokensToErase(.issuedBefore("2026-11-21T13:00:01Z"), limit: 10) == [tokens[0], tokens[1]])
      #expect(try transaction.tokensToErase(.issuedBefore("2026-11-21T13:00:01Z"), limit: 1) == [tokens[0]])
      #expect(try transaction.tokensToErase(.orderId("ord_none"), limit: 10) == [])
      var row = try #require(try transaction.personalData(token: tokens[0]))
      #expect(row.orderId == nil && row.orderDocument == nil)
      row.binding = "{}"
      try transaction.erasePersonalData(row, at: "2026-11-22T00:00:00Z")
      #expect(try transaction.personalData(token: tokens[0])?.binding == "{}")
      // Erased once: no longer selected.
      #expect(try transaction.tokensToErase(.issuedBefore("2026-11-21T13:00:01Z"), limit: 10) == [tokens[1]])
    }
  }
}
