import PayServiceCore

/// What an optimistic transaction cannot do: `body` runs again with locks.
struct NeedsLocks: Error {}

/// A transaction whose reads take no locks and whose writes go to a `PostgresBatch` (see
/// `OptimisticReads` for what is checked when it is applied). It keeps the books of an
/// `OrderTransaction`; anything else is asked for through `locked()`, which it answers with
/// `NeedsLocks`, so the store runs the transaction again as a `PostgresTransaction`. So does a
/// read it cannot check (a row the batch wrote, the disputes of an order not read ahead).
struct PostgresOptimisticTransaction: OrderTransaction {
  let session: PostgresSession
  let batch: PostgresBatch

  private var reads: PostgresReads { batch.reads }

  func readAhead(_ rows: ReadAhead) throws {
    try reads.readAhead(rows, on: session)
  }

  func locked() throws -> any StoreTransaction { throw NeedsLocks() }

  // MARK: Orders and tokens

  func chargeToken(_ token: String) throws -> ChargeTokenRecord? {
    if batch.isWritten("t:" + token) { throw NeedsLocks() }
    if reads.tokens[token] == nil { try readAhead(ReadAhead(tokens: [token])) }
    guard let read = reads.tokens[token], let entry = read else { return nil }
    batch.check("t:" + token, step: "token", [token], version: entry.version, lockToken: token)
    return entry.record
  }

  func markUsed(token: String, at now: String) throws -> Bool {
    batch.use(token: token, at: now)
    return true
  }

  func quantitiesOnHand(_ skus: [String]) throws -> [Int] {
    try readAhead(ReadAhead(skus: skus))
    return skus.map { batch.onHand($0) ?? 0 }
  }

  func shortages(_ demand: [(sku: String, quantity: Int)]) throws -> [Int?] {
    demand.map { line in
      if let onHand = batch.onHand(line.sku) { return line.quantity <= onHand ? nil : onHand }
      batch.expect(line.sku, atLeast: line.quantity)
      return nil
    }
  }

  func decrementStock(_ sku: String, by quantity: Int) throws -> Bool {
    if let onHand = batch.onHand(sku), onHand < quantity { return false }
    batch.take(sku, quantity)
    return true
  }

  func insert(_ charge: ChargeRow) throws { batch.insert(charge) }
  func insert(_ order: OrderRow) throws { batch.insert(order) }

  func authorization(_ authorizationId: String) throws -> PaymentAuthorization? {
    if batch.isWritten("a:" + authorizationId) { throw NeedsLocks() }
    if reads.authorizations[authorizationId] == nil { try reads.readAuthorization(authorizationId, on: session) }
    guard let read = reads.authorizations[authorizationId], let entry = read else { return nil }
    batch.check("a:" + authorizationId, step: "authorization", [authorizationId], version: entry.version)
    return entry.authorization
  }

  func markCaptured(_ authorizationId: String, chargeId: String, at now: String) throws -> Bool {
    batch.capture(authorizationId, chargeId: chargeId, at: now)
    return true
  }

  func markReleased(_ authorizationId: String, at now: String) throws -> Bool {
    batch.release(authorizationId, at: now)
    return true
  }

  // MARK: The journal

  func operation(kind: String, key: String) throws -> OperationRow? {
    let row = "o:" + kind + " " + key
    if batch.isWritten(row) { throw NeedsLocks() }
    let entry = ReadAhead.Entry(kind: kind, key: key)
    if reads.entries[entry] == nil { try reads.readEntry(entry, on: session) }
    guard let read = reads.entries[entry], let found = read else { return nil }
    batch.check(row, step: "operation", [kind, key], version: found.version)
    return found.row
  }

  func insert(_ operation: OperationRow) throws -> Bool {
    batch.insert(operation)
    return true
  }

  // MARK: The back office

  func lockOrder(_ orderId: String) throws -> OrderState? {
    if batch.isWritten("r:" + orderId) { throw NeedsLocks() }
    if reads.orders[orderId] == nil { try reads.readOrder(orderId, entry: nil, on: session) }
    guard let read = reads.orders[orderId], let found = read else { return nil }
    batch.check(order: orderId, version: found.version)
    return found.state
  }

  /// An order read without disputes has none when the batch is applied; one with disputes is
  /// read with locks.
  func disputes(orderId: String) throws -> [DisputeRow] {
    guard let read = reads.orders[orderId], let found = read, !found.disputed else { throw NeedsLocks() }
    batch.expectUndisputed(orderId)
    return []
  }

  func updateOrder(
    _ orderId: String, status: OrderStatus, capturedMinor: Int64?, refundedMinor: Int64, shippingRefunded: Bool
  ) throws {
    batch.update(
      order: orderId, status: status, capturedMinor: capturedMinor, refundedMinor: refundedMinor,
      shippingRefunded: shippingRefunded)
  }

  func setRefundedQuantity(orderId: String, sku: String, to quantity: Int) throws {
    batch.setRefundedQuantity(orderId: orderId, sku: sku, to: quantity)
  }

  func restock(_ sku: String, by quantity: Int) throws -> Bool {
    batch.restock(sku, quantity)
    return true
  }

  func insert(_ event: OrderEventRow) throws { batch.insert(event) }
  func insert(_ refund: RefundRow) throws { batch.insert(refund) }
}
