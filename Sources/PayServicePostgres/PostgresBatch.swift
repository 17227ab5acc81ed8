import PayServiceCore
import PostgresNIO

/// The writes of optimistic transactions (`Store.writeOptimistically`), kept in order to be
/// applied in one statement, `payservice_apply`, with what they were decided on: the row versions
/// read, and the rows to lock first. One batch serves one transaction, or every optimistic member
/// of a group commit, so that a group of orders costs one round trip to apply.
///
/// It also keeps what its transactions read (`reads`), so that members read ahead once, and the
/// units its members took, so that a later member's stock reads are what they would be had the
/// earlier ones committed (an order short of stock in a group says how many units are left after
/// the orders before it, as on SQLite). The statements it runs are `PostgresBatch+Procedures`.
final class PostgresBatch {
  /// The SQLSTATE `payservice_apply` raises when a row changed since it was read.
  static let conflictState = "PS409"

  /// What the batch's transactions read, as it was read.
  let reads: PostgresReads

  init(issued: IssuedTokens) {
    reads = PostgresReads(issued: issued)
  }

  /// The steps so far, comma-separated arrays (the batch's `steps` without its brackets).
  private var steps = JSONWriter(capacity: 4096)
  private var tokensToLock: [String] = []
  private var ordersToLock: [String] = []
  private var skusToLock: [String] = []
  /// How many steps write (the others check versions): a batch without any is not applied.
  private(set) var writes = 0
  /// Version checks already in the batch ("t:token", "a:authorizationId", "o:kind key", "r:orderId",
  /// "d:orderId" for an order without disputes).
  private var checked: Set<String> = []
  /// Rows the batch writes: reading one again needs locks (its new state is not the server's yet).
  private var written: Set<String> = []
  /// Units each sku's stock gives up in this batch (negative: put back).
  private var taken: [String: Int] = [:]
  /// What was added to `checked`, `written` and `taken`, in order, so that a member is undone in
  /// time proportional to what it added (a group of n members stays linear).
  private var checkedLog: [String] = []
  private var writtenLog: [String] = []
  private var takenLog: [(sku: String, units: Int)] = []

  /// Where a member began, to undo it.
  struct Mark {
    fileprivate var steps: JSONWriter.Mark
    fileprivate var tokensToLock: Int
    fileprivate var ordersToLock: Int
    fileprivate var skusToLock: Int
    fileprivate var writes: Int
    fileprivate var checked: Int
    fileprivate var written: Int
    fileprivate var taken: Int
  }

  var mark: Mark {
    Mark(
      steps: steps.mark, tokensToLock: tokensToLock.count, ordersToLock: ordersToLock.count,
      skusToLock: skusToLock.count, writes: writes,
      checked: checkedLog.count, written: writtenLog.count, taken: takenLog.count)
  }

  /// Undoes what was added since `mark` (what was read stays known).
  func rewind(to mark: Mark) {
    steps.rewind(to: mark.steps)
    tokensToLock.removeSubrange(mark.tokensToLock...)
    ordersToLock.removeSubrange(mark.ordersToLock...)
    skusToLock.removeSubrange(mark.skusToLock...)
    writes = mark.writes
    for row in checkedLog[mark.checked...] { checked.remove(row) }
    checkedLog.removeSubrange(mark.checked...)
    for row in writtenLog[mark.written...] { written.remove(row) }
    writtenLog.removeSubrange(mark.written...)
    for change in takenLog[mark.taken...] { taken[change.sku, default: 0] -= change.units }
    takenLog.removeSubrange(mark.taken...)
  }

  /// Ends a member begun at `mark`: one that wrote nothing keeps no checks (nothing rests on them).
  func end(_ mark: Mark) {
    if writes == mark.writes { rewind(to: mark) }
  }

  /// Forgets everything, read or written.
  func reset() {
    steps.reset()
    tokensToLock = []
    ordersToLock = []
    skusToLock = []
    writes = 0
    checked = []
    written = []
    taken = [:]
    checkedLog = []
    writtenLog = []
    takenLog = []
    reads.reset()
  }

  /// Units of `sku` on hand as far as this batch knows (what was read, less what it took).
  func onHand(_ sku: String) -> Int? {
    reads.stock[sku].map { $0 - taken[sku, default: 0] }
  }

  func isWritten(_ row: String) -> Bool { written.contains(row) }

  /// Adds `row` to the checks made; false when it was checked already.
  private func firstCheck(_ row: String) -> Bool {
    guard checked.insert(row).inserted else { return false }
    checkedLog.append(row)
    return true
  }

  private func markWritten(_ row: String) {
    if written.insert(row).inserted { writtenLog.append(row) }
  }

  private func addTaken(_ sku: String, _ units: Int) {
    taken[sku, default: 0] += units
    takenLog.append((sku, units))
  }

  // MARK: Steps

  /// Checks, when applied, that a row read is still the version read (once per batch).
  func check(_ row: String, step: String, _ keys: [String], version: String, lockToken: String? = nil) {
    guard firstCheck(row) else { return }
    if let lockToken { tokensToLock.append(lockToken) }
    add(step, keys + [version], writes: false)
  }

  /// Checks, when applied, that `sku` still has `quantity` units on hand (a decision taken
  /// without reading the stock).
  func expect(_ sku: String, atLeast quantity: Int) {
    skusToLock.append(sku)
    steps.beginArray()
    steps.write("enough")
    steps.write(sku)
    steps.write(quantity)
    steps.endArray()
  }

  func use(token: String, at now: String) {
    tokensToLock.append(token)
    markWritten("t:" + token)
    add("used", [token, now])
  }

  func take(_ sku: String, _ quantity: Int) {
    skusToLock.append(sku)
    addTaken(sku, quantity)
    steps.beginArray()
    steps.write("take")
    steps.write(sku)
    steps.write(quantity)
    steps.endArray()
    writes += 1
  }

  /// Checks, when applied, that the order is the version read (locking it first).
  func check(order orderId: String, version: String) {
    guard firstCheck("r:" + orderId) else { return }
    ordersToLock.append(orderId)
    add("orderv", [orderId, version], writes: false)
  }

  /// Checks, when applied, that the order still has no dispute.
  func expectUndisputed(_ orderId: String) {
    guard firstCheck("d:" + orderId) else { return }
    add("undisputed", [orderId], writes: false)
  }

  func update(
    order orderId: String, status: OrderStatus, capturedMinor: Int64?, refundedMinor: Int64, shippingRefunded: Bool
  ) {
    ordersToLock.append(orderId)
    markWritten("r:" + orderId)
    add(
      "orderset",
      [orderId, status.rawValue, capturedMinor.map { String($0) }, String(refundedMinor), shippingRefunded ? "true" : "false"])
  }

  func setRefundedQuantity(orderId: String, sku: String, to quantity: Int) {
    ordersToLock.append(orderId)
    markWritten("r:" + orderId)
    add("linerefunded", [orderId, sku, String(quantity)])
  }

  func restock(_ sku: String, _ quantity: Int) {
    skusToLock.append(sku)
    addTaken(sku, -quantity)
    add("restock", [sku, String(quantity)])
  }

  func insert(_ event: OrderEventRow) {
    markWritten("r:" + event.orderId)
    add(
      "event",
      [
        event.orderId, String(event.position), event.kind.rawValue, event.at, String(event.amountMinor),
        event.reference, event.reason,
      ])
  }

  func insert(_ refund: RefundRow) {
    add(
      "refund",
      [
        refund.refundId, refund.orderId, String(refund.position), refund.createdAt, String(refund.amountMinor),
        refund.document, refund.gatewayRefundId,
      ])
  }

  func capture(_ authorizationId: String, chargeId: String, at now: String) {
    markWritten("a:" + authorizationId)
    add("captured", [authorizationId, chargeId, now])
  }

  func release(_ authorizationId: String, at now: String) {
    markWritten("a:" + authorizationId)
    add("released", [authorizationId, now])
  }

  func insert(_ charge: ChargeRow) {
    add(
      "charge",
      [
        charge.chargeId, charge.token, charge.succeeded ? "succeeded" : "failed", charge.failureCode, charge.declineCode,
        String(charge.amountMinor), charge.currencyCode, charge.createdAt,
      ])
  }

  func insert(_ order: OrderRow) {
    steps.beginArray()
    for value in [
      "order", order.orderId, order.chargeId, order.createdAt, String(order.amountMinor), order.currencyCode,
      order.document, order.status.rawValue, order.capturedMinor.map { String($0) }, String(order.shippingMinor),
      String(order.shippingTaxMinor), order.gatewayPaymentId, order.taxIncluded ? "true" : "false", order.agreementId,
    ] {
      write(value)
    }
    steps.beginArray()
    for item in order.items {
      steps.beginArray()
      steps.write(item.sku)
      for number in [
        Int64(item.quantity), item.unitPriceMinor, item.amountMinor, item.discountMinor, item.taxMinor,
      ] {
        steps.write(Int(number))
      }
      steps.endArray()
    }
    steps.endArray()
    steps.endArray()
    writes += 1
  }

  func insert(_ operation: OperationRow) {
    markWritten("o:" + operation.kind + " " + operation.key)
    add(
      "journal",
      [
        operation.kind, operation.key, operation.fingerprint, operation.state.rawValue, operation.subject,
        operation.request, operation.result, operation.created, operation.settled,
      ])
  }

  private func add(_ name: String, _ values: [String?], writes: Bool = true) {
    steps.beginArray()
    steps.write(name)
    for value in values { write(value) }
    steps.endArray()
    if writes { self.writes += 1 }
  }

  private func write(_ value: String?) {
    if let value { steps.write(value) } else { steps.writeNull() }
  }

  // MARK: Applying

  /// The batch as `payservice_apply` reads it.
  var document: String {
    var head = JSONWriter(capacity: 256 + 40 * (tokensToLock.count + ordersToLock.count + skusToLock.count))
    head.beginObject()
    head.key("tokens")
    head.beginArray()
    for token in Set(tokensToLock).sorted() { head.write(token) }
    head.endArray()
    head.key("orders")
    head.beginArray()
    for orderId in Set(ordersToLock).sorted() { head.write(orderId) }
    head.endArray()
    head.key("skus")
    head.beginArray()
    for sku in Set(skusToLock).sorted() { head.write(sku) }
    head.endArray()
    head.key("steps")
    var text = String(decoding: head.bytes, as: UTF8.self)
    text += "["
    text += String(decoding: steps.bytes, as: UTF8.self)
    text += "]}"
    return text
  }

  /// Applies the batch in one statement (in the transaction open on `session`, if any) and forgets
  /// it. Throws a `PostgresFailure` with `conflict` when a row changed since it was read: then
  /// nothing of the batch was written.
  func apply(on session: PostgresSession) throws(PostgresFailure) {
    var binds = PostgresBindings()
    binds.append(document)
    defer { reset() }
    do {
      try session.run("SELECT payservice_apply($1::jsonb)", binds)
    } catch {
      // What was read may be stale: read it next time.
      reads.forgetIssued()
      throw error
    }
    // A token used has another version now.
    for row in written where row.hasPrefix("t:") { reads.issued.forget(String(row.dropFirst(2))) }
  }
}
