import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// `Store.writeOptimistically` and group commits of optimistic members: what a transaction that
/// reads without locks decides is what a locked one would decide. The races are made by a second
/// connection writing between a body's reads and its commit (PostgreSQL only: on SQLite the
/// transaction holds the store's write lock throughout, so there is no such moment); what a group
/// reads of its own writes is the same on both backends.
@Suite("Optimistic writes")
struct OptimisticWriteTests {
  static let config = TestConfig.load()
  static let postgres = StoreBackend.serverURL != nil

  /// A fresh store with `clock` set to `onHand` units, and a second connection to it.
  static func shop(_ backend: StoreBackend, clocks onHand: Int) throws -> (store: any Store, other: any Store) {
    let (store, database) = try backend.freshStore(config: config)
    try store.write { transaction in
      _ = try transaction.stockLevel("clock")
      try transaction.setQuantityOnHand("clock", to: onHand)
    }
    return (store, try backend.open(database))
  }

  static func entry(_ key: String, fingerprint: String) -> OperationRow {
    OperationRow(
      kind: "test", key: key, fingerprint: fingerprint, state: .settled, subject: nil, request: nil, result: "{}",
      created: "2026-11-21T12:00:00Z", settled: "2026-11-21T12:00:00Z")
  }

  @Test(
    "a token another connection uses between the read and the write: nothing of the first run is kept, the body runs again with locks and sees it used (issued by this store, and so not read, or by another)",
    .enabled(if: postgres, "\(StoreBackend.skipMessage)"), arguments: [true, false])
  func tokenUsedMeanwhile(issuedHere: Bool) throws {
    let (store, other) = try Self.shop(.postgres, clocks: 5)
    let token = try (issuedHere ? store : other).write { try StoreContractTests.issue($0) }
    let (seen, runs) = try Self.race(
      store, readAhead: ReadAhead(tokens: [token], skus: ["clock"]),
      meanwhile: {
        let used = try other.write { try $0.markUsed(token: token, at: "2026-11-21T12:00:01Z") }
        #expect(used)
      }
    ) { transaction, interleave in
      let record = try #require(try transaction.chargeToken(token))
      try interleave()
      if let usedAt = record.usedAt { return usedAt }
      #expect(try transaction.decrementStock("clock", by: 1))
      #expect(try transaction.markUsed(token: token, at: "2026-11-21T12:00:02Z"))
      return "placed"
    }
    #expect(runs == 2)
    #expect(seen == "2026-11-21T12:00:01Z")
    #expect(try store.stockLedger()["clock"]! == (onHand: 5, sold: 0))
  }

  @Test(
    "the last unit taken by another connection between the read and the write: the order is not kept, and the body runs again and finds none",
    .enabled(if: postgres, "\(StoreBackend.skipMessage)"))
  func stockTakenMeanwhile() throws {
    let (store, other) = try Self.shop(.postgres, clocks: 1)
    let (onHand, runs) = try Self.race(
      store, readAhead: ReadAhead(skus: ["clock"]), meanwhile: { try Self.takeOne(other) }
    ) { transaction, interleave in
      let onHand = try transaction.quantitiesOnHand(["clock"])[0]
      try interleave()
      if onHand >= 1 { #expect(try transaction.decrementStock("clock", by: 1)) }
      return onHand
    }
    #expect(runs == 2)
    #expect(onHand == 0)
    #expect(try store.stockLedger()["clock"]! == (onHand: 0, sold: 1))
  }

  @Test(
    "stock not read (the token was issued here) is checked as a bound: the last unit taken meanwhile makes the body run again and report it short",
    .enabled(if: postgres, "\(StoreBackend.skipMessage)"))
  func unreadStockIsABound() throws {
    let (store, other) = try Self.shop(.postgres, clocks: 1)
    let token = try store.write { try StoreContractTests.issue($0) }
    let (short, runs) = try Self.race(
      store, readAhead: ReadAhead(tokens: [token], skus: ["clock"]), meanwhile: { try Self.takeOne(other) }
    ) { transaction, interleave in
      #expect(try transaction.chargeToken(token)?.usedAt == nil)
      let short = try transaction.shortages([(sku: "clock", quantity: 1)])
      try interleave()
      // Declined, say: the token is used and no stock is taken.
      if short == [nil] { #expect(try transaction.markUsed(token: token, at: "2026-11-21T12:00:02Z")) }
      return short
    }
    #expect(runs == 2)
    #expect(short == [0])
    #expect(try store.write { try $0.chargeToken(token)?.usedAt } == nil)
  }

  @Test(
    "a journal key another connection records between the read and the write: the body runs again and finds its entry",
    .enabled(if: postgres, "\(StoreBackend.skipMessage)"))
  func journalKeyTakenMeanwhile() throws {
    let (store, other) = try Self.shop(.postgres, clocks: 5)
    let (fingerprint, runs) = try Self.race(
      store,
      meanwhile: {
        let inserted = try other.write { try $0.insert(Self.entry("k", fingerprint: "theirs")) }
        #expect(inserted)
      }
    ) { transaction, interleave in
      let found = try transaction.operation(kind: "test", key: "k")
      try interleave()
      if let found { return found.fingerprint }
      #expect(try transaction.decrementStock("clock", by: 1))
      #expect(try transaction.insert(Self.entry("k", fingerprint: "mine")))
      return "mine"
    }
    #expect(runs == 2)
    #expect(fingerprint == "theirs")
    #expect(try store.stockLedger()["clock"]! == (onHand: 5, sold: 0))
  }

  @Test(
    "what an optimistic transaction cannot do runs with locks, once, from the start",
    arguments: StoreBackend.available)
  func needsLocks(backend: StoreBackend) throws {
    let (store, _) = try Self.shop(backend, clocks: 5)
    var runs = 0
    let event = try store.writeOptimistically(readAhead: ReadAhead(skus: ["clock"])) { transaction in
      runs += 1
      #expect(try transaction.decrementStock("clock", by: 2))
      // Stock events by hand are not among the optimistic writes.
      return try transaction.locked().nextStockEventPosition("clock")
    }
    #expect(event == 1)
    #expect(runs == (backend == .postgres ? 2 : 1))
    #expect(try store.stockLedger()["clock"]! == (onHand: 3, sold: 2))
  }

  @Test(
    "in a group commit each member reads what the members before it wrote: stock they took, a token they used (the locked path), a journal entry",
    arguments: StoreBackend.available)
  func groupReadsItsOwnWrites(backend: StoreBackend) throws {
    let (store, _) = try Self.shop(backend, clocks: 3)
    let token = try store.write { try StoreContractTests.issue($0) }
    var seen: [String] = []
    func member(_ body: (any OrderTransaction) throws -> String) {
      do {
        seen.append(try store.writeOptimistically(readAhead: ReadAhead(tokens: [token], skus: ["clock"]), body))
      } catch {
        seen.append("error: \(error)")
      }
    }
    try store.groupCommit(readAhead: ReadAhead(tokens: [token], skus: ["clock"])) {
      member { (transaction: any OrderTransaction) throws -> String in
        let onHand = try transaction.quantitiesOnHand(["clock"])[0]
        #expect(try transaction.decrementStock("clock", by: 2))
        return "took 2 of \(onHand)"
      }
      member { transaction in "\(try transaction.quantitiesOnHand(["clock"])[0]) left" }
      member { transaction in "3 more: \(try transaction.decrementStock("clock", by: 3))" }
      member { (transaction: any OrderTransaction) throws -> String in
        #expect(try transaction.chargeToken(token)?.usedAt == nil)
        #expect(try transaction.markUsed(token: token, at: "2026-11-21T12:00:01Z"))
        #expect(try transaction.insert(Self.entry("k", fingerprint: "first")))
        return "used"
      }
      member { transaction in "used at \(try transaction.chargeToken(token)?.usedAt ?? "-")" }
      member { transaction in "entry \(try transaction.operation(kind: "test", key: "k")?.fingerprint ?? "-")" }
      member { (transaction: any OrderTransaction) throws -> String in
        #expect(try transaction.decrementStock("clock", by: 1))
        return "took the last"
      }
    }
    #expect(
      seen == [
        "took 2 of 3", "1 left", "3 more: false", "used", "used at 2026-11-21T12:00:01Z", "entry first", "took the last",
      ])
    #expect(try store.stockLedger()["clock"]! == (onHand: 0, sold: 3))
    #expect(try store.write { try $0.chargeToken(token)?.usedAt } == "2026-11-21T12:00:01Z")
  }

  @Test(
    "in a group commit a member that throws is undone alone, one that needs locks keeps its place, the rest commit together",
    arguments: StoreBackend.available)
  func groupMembers(backend: StoreBackend) throws {
    struct Refused: Error {}
    let (store, _) = try Self.shop(backend, clocks: 10)
    var outcomes: [String] = []
    try store.groupCommit(readAhead: ReadAhead(skus: ["clock"])) {
      outcomes.append(
        (try? store.writeOptimistically(readAhead: ReadAhead()) { try $0.decrementStock("clock", by: 1) }).map { "\($0)" }
          ?? "refused")
      outcomes.append(
        (try? store.writeOptimistically(readAhead: ReadAhead()) { transaction -> Bool in
          _ = try transaction.decrementStock("clock", by: 4)
          throw Refused()
        }).map { "\($0)" } ?? "refused")
      // A locked member between optimistic ones sees what the one before it took.
      outcomes.append(
        (try? store.write { transaction -> Int in
          let onHand = try transaction.quantitiesOnHand(["clock"])[0]
          _ = try transaction.decrementStock("clock", by: 2)
          return onHand
        }).map { "\($0)" } ?? "refused")
      outcomes.append(
        (try? store.writeOptimistically(readAhead: ReadAhead(skus: ["clock"])) { transaction -> Int in
          let onHand = try transaction.quantitiesOnHand(["clock"])[0]
          _ = try transaction.decrementStock("clock", by: 3)
          return onHand
        }).map { "\($0)" } ?? "refused")
    }
    #expect(outcomes == ["true", "refused", "9", "7"])
    #expect(try store.stockLedger()["clock"]! == (onHand: 4, sold: 6))
  }

  @Test("processOrder reads ahead its token and its cart's skus, once its params are read; nothing for params it refuses")
  func processOrderReadAhead() throws {
    let (context, lines) = try GroupCommitTests.orders(count: 1)
    func params(_ line: String) throws -> JSONValue? {
      guard case .object(let request) = try JSONParser.parse(line) else { return nil }
      return request["params"]
    }
    func readAhead(_ line: String) throws -> ReadAhead { try ProcessOrder.request(params(line), context: context).readAhead }
    guard case .object(let sent)? = try params(lines[0]), case .string(let token)? = sent["chargeToken"],
      case .array(let items)? = sent["items"]
    else {
      Issue.record("not a processOrder request: \(lines[0])")
      return
    }
    let skus = items.compactMap { item -> String? in
      guard case .object(let line) = item, case .string(let sku)? = line["sku"] else { return nil }
      return sku
    }
    #expect(skus.count == 1)
    #expect(try readAhead(lines[0]) == ReadAhead(tokens: [token], skus: skus))
    #expect(throws: ServiceError.self) { try readAhead(lines[0].replacingOccurrences(of: #""items":["#, with: #""items":7,"x":["#)) }
  }

  @Test(
    "a group whose batch finds a row changed when it is applied keeps nothing",
    .enabled(if: postgres, "\(StoreBackend.skipMessage)"))
  func groupConflict() throws {
    let (store, other) = try Self.shop(.postgres, clocks: 10)
    let token = try store.write { try StoreContractTests.issue($0) }
    var inside: [String] = []
    #expect(throws: StoreError.self) {
      try store.groupCommit(readAhead: ReadAhead(tokens: [token], skus: ["clock"])) {
        do {
          inside.append("\(try store.writeOptimistically(readAhead: ReadAhead()) { try $0.decrementStock("clock", by: 1) })")
          inside.append(
            try store.writeOptimistically(readAhead: ReadAhead()) { transaction in
              let usedAt = try transaction.chargeToken(token)?.usedAt
              _ = try transaction.markUsed(token: token, at: "2026-11-21T12:00:02Z")
              return usedAt ?? "unused"
            })
          // Another host uses the token before the group commits.
          inside.append("\(try other.write { try $0.markUsed(token: token, at: "2026-11-21T12:00:01Z") })")
        } catch {
          inside.append("error: \(error)")
        }
      }
    }
    #expect(inside == ["true", "unused", "true"])
    #expect(try store.stockLedger()["clock"]! == (onHand: 10, sold: 0))
    #expect(try store.write { try $0.chargeToken(token)?.usedAt } == "2026-11-21T12:00:01Z")
  }

  /// Runs `body` optimistically on `store`, and `meanwhile` once, where the first run calls
  /// `interleave` (between its reads and its writes); the result and how many times `body` ran.
  static func race<T>(
    _ store: any Store, readAhead: ReadAhead = ReadAhead(), meanwhile: @escaping () throws -> Void,
    _ body: (any OrderTransaction, _ interleave: () throws -> Void) throws -> T
  ) throws -> (result: T, runs: Int) {
    var runs = 0
    let result = try store.writeOptimistically(readAhead: readAhead) { transaction in
      runs += 1
      let first = runs == 1
      return try body(transaction) { if first { try meanwhile() } }
    }
    return (result, runs)
  }

  /// Another connection takes one clock.
  static func takeOne(_ other: any Store) throws {
    let taken = try other.write { try $0.decrementStock("clock", by: 1) }
    #expect(taken)
  }

  /// A refund of `amountMinor` as refundOrder records it, on the order as read: its money, event
  /// and refund row.
  static func refund(_ transaction: any OrderTransaction, _ orderId: String, _ refundId: String, _ amountMinor: Int64)
    throws -> Int64?
  {
    let order = try #require(try transaction.lockOrder(orderId))
    guard try transaction.disputes(orderId: orderId).isEmpty else { return nil }
    let refunded = order.refundedMinor + amountMinor
    try transaction.updateOrder(
      orderId, status: .partiallyRefunded, capturedMinor: order.capturedMinor, refundedMinor: refunded,
      shippingRefunded: false)
    try transaction.insert(
      OrderEventRow(
        orderId: orderId, position: order.nextEventPosition, kind: .refunded, at: "2026-11-21T12:00:02Z",
        amountMinor: amountMinor, reference: refundId))
    try transaction.insert(
      RefundRow(
        refundId: refundId, orderId: orderId, position: order.nextEventPosition, createdAt: "2026-11-21T12:00:02Z",
        amountMinor: amountMinor, document: "{}", gatewayRefundId: nil))
    return refunded
  }

  @Test(
    "an order refunded by another connection between the read and the write: nothing of the first run is kept, and the body runs again on the order as refunded",
    .enabled(if: postgres, "\(StoreBackend.skipMessage)"))
  func orderRefundedMeanwhile() throws {
    let (store, other) = try Self.shop(.postgres, clocks: 5)
    try store.write { try StoreContractTests.insertOrder($0, "ord_1") }
    let (refunded, runs) = try Self.race(
      store, readAhead: ReadAhead(orders: ["ord_1"], entries: [ReadAhead.Entry(kind: "refund", key: "r2")]),
      meanwhile: {
        let refunded = try other.write { try Self.refund($0, "ord_1", "r1", 100) }
        #expect(refunded == 100)
      }
    ) { transaction, interleave in
      #expect(try transaction.operation(kind: "refund", key: "r2") == nil)
      _ = try transaction.lockOrder("ord_1")
      try interleave()
      return try Self.refund(transaction, "ord_1", "r2", 500)
    }
    #expect(runs == 2)
    #expect(refunded == 600)
    let order = try #require(try store.order(id: "ord_1"))
    #expect(order.refundedMinor == 600 && order.status == .partiallyRefunded)
    #expect(order.events.map(\.reference) == ["ord_1", "r1", "r2"])
  }

  @Test(
    "a dispute opened by another connection between the read and the write: the body runs again with locks and sees it",
    .enabled(if: postgres, "\(StoreBackend.skipMessage)"))
  func disputeOpenedMeanwhile() throws {
    let (store, other) = try Self.shop(.postgres, clocks: 5)
    try store.write { try StoreContractTests.insertOrder($0, "ord_1") }
    let dispute = DisputeRow(
      disputeId: "dp_1", orderId: "ord_1", createdAt: "2026-11-21T12:00:01Z", amountMinor: 5474, currencyCode: "USD",
      reason: "fraudulent", status: "needs_response", evidenceDueBy: nil, withdrawnMinor: 0, reinstatedMinor: 0,
      observed: DisputeRow.Observation(rank: 0, at: 0, by: "evt_1"))
    let (refunded, runs) = try Self.race(
      store, meanwhile: { try other.write { try $0.save(dispute, isNew: true) } }
    ) { transaction, interleave in
      _ = try transaction.lockOrder("ord_1")
      let disputes = try transaction.disputes(orderId: "ord_1")
      try interleave()
      return disputes.isEmpty ? try Self.refund(transaction, "ord_1", "r1", 500) : nil
    }
    #expect(runs == 2)
    #expect(refunded == nil)
    #expect(try store.order(id: "ord_1")?.refundedMinor == 0)
  }

  @Test(
    "units put back that the stock never sold: the batch is refused, and the body runs again with locks and is told",
    .enabled(if: postgres, "\(StoreBackend.skipMessage)"))
  func restockBeyondSold() throws {
    let (store, _) = try Self.shop(.postgres, clocks: 5)
    try store.write { try StoreContractTests.insertOrder($0, "ord_1") }
    let (restocked, runs) = try Self.race(store, meanwhile: {}) { transaction, _ in
      _ = try transaction.lockOrder("ord_1")
      try transaction.setRefundedQuantity(orderId: "ord_1", sku: "clock", to: 1)
      return try transaction.restock("clock", by: 1)
    }
    #expect(runs == 2)
    #expect(restocked == false)
  }

  @Test("refundOrder, captureOrder and cancelOrder read ahead their order and their journal entry")
  func backOfficeReadAhead() throws {
    let refund = RefundOrder.Refund(params: RefundOrder.Params(orderId: "ord_1", refundId: "r1"), fingerprint: "f")
    #expect(RefundOrder.Refund.isOptimistic)
    #expect(refund.readAhead == ReadAhead(orders: ["ord_1"], entries: [ReadAhead.Entry(kind: "refund", key: "r1")]))
    let capture = CaptureOrder.Capture(params: CaptureOrder.Params(orderId: "ord_2", captureId: "c1"), fingerprint: "f")
    #expect(CaptureOrder.Capture.isOptimistic)
    #expect(capture.readAhead == ReadAhead(orders: ["ord_2"], entries: [ReadAhead.Entry(kind: "capture", key: "c1")]))
    let cancel = CancelOrder.Cancellation(params: CancelOrder.Params(orderId: "ord_3", cancelId: "x1"), fingerprint: "f")
    #expect(CancelOrder.Cancellation.isOptimistic)
    #expect(cancel.readAhead == ReadAhead(orders: ["ord_3"], entries: [ReadAhead.Entry(kind: "cancel", key: "x1")]))
  }

  @Test(
    "a hold released by another connection between the read and the write: nothing of the first run is kept, and the body runs again and is told",
    .enabled(if: postgres, "\(StoreBackend.skipMessage)"))
  func holdReleasedMeanwhile() throws {
    let (store, other) = try Self.shop(.postgres, clocks: 5)
    let inserted = try store.write { transaction in
      try transaction.insertAuthorization(
        StoreContractTests.authorization("auth_1", transaction: "T1"), at: "2026-11-21T12:00:00Z")
    }
    #expect(inserted)
    let (released, runs) = try Self.race(
      store,
      meanwhile: {
        let released = try other.write { try $0.markReleased("auth_1", at: "2026-11-21T12:00:01Z") }
        #expect(released)
      }
    ) { transaction, interleave in
      try interleave()
      // The body writes only once the hold is released; the unit it takes shows whether the first
      // run was undone.
      let released = try transaction.markReleased("auth_1", at: "2026-11-21T12:00:02Z")
      if released { #expect(try transaction.decrementStock("clock", by: 1)) }
      return released
    }
    #expect(runs == 2)
    #expect(released == false)
    #expect(try store.stockLedger()["clock"]! == (onHand: 5, sold: 0))
  }
}
