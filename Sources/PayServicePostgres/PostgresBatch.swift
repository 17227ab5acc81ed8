import PayServiceCore
import PostgresNIO

/// The writes of optimistic transactions (`Store.writeOptimistically`), kept in order to be
/// applied in one statement, `payservice_apply`, with what they were decided on: the row versions
/// read, and the rows to lock first. One batch serves one transaction, or every optimistic member
/// of a group commit, so that a group of orders costs one round trip to apply.
///
/// It also keeps what the batch read (charge tokens with their authorizations, stock counts), so
/// that members read ahead once, and the units its members took, so that a later member's stock
/// reads are what they would be had the earlier ones committed (an order short of stock in a group
/// says how many units are left after the orders before it, as on SQLite).
final class PostgresBatch {
  /// The SQLSTATE `payservice_apply` raises when a row changed since it was read.
  static let conflictState = "PS409"

  /// Migration v14: applies a batch (`{"tokens": [...], "skus": [...], "steps": [[...], ...]}`) in
  /// the statement's own transaction, or the one open. It locks the charge tokens, then the stock
  /// rows by sku, as every transaction locks them (a token, then its cart's stock in sku order),
  /// so that it never deadlocks with them; then runs each step, and raises `conflictState` when a
  /// step's condition no longer holds: a row read has another version, stock is short (to take, or
  /// as assumed unread), a token is used, an authorization is no longer held, a journal key is taken. Steps are positional
  /// arrays; their first element names them.
  static let applyFunction = """
    CREATE FUNCTION payservice_apply(batch jsonb) RETURNS void LANGUAGE plpgsql AS $apply$
    DECLARE
      step jsonb;
      held boolean;
    BEGIN
      PERFORM 1 FROM chargeToken WHERE token IN (SELECT jsonb_array_elements_text(batch->'tokens'))
        ORDER BY token FOR UPDATE;
      PERFORM 1 FROM stock WHERE sku IN (SELECT jsonb_array_elements_text(batch->'skus')) ORDER BY sku FOR UPDATE;
      FOR step IN SELECT value FROM jsonb_array_elements(batch->'steps') LOOP
        CASE step->>0
        WHEN 'token' THEN
          PERFORM 1 FROM chargeToken WHERE token = step->>1 AND xmin::text = step->>2;
          held := FOUND;
        WHEN 'authorization' THEN
          PERFORM 1 FROM paymentAuthorization WHERE authorizationId = step->>1 AND xmin::text = step->>2 FOR UPDATE;
          held := FOUND;
        WHEN 'operation' THEN
          PERFORM 1 FROM operation WHERE kind = step->>1 AND key = step->>2 AND xmin::text = step->>3 FOR UPDATE;
          held := FOUND;
        WHEN 'used' THEN
          UPDATE chargeToken SET usedAt = step->>2 WHERE token = step->>1 AND usedAt IS NULL;
          held := FOUND;
        WHEN 'enough' THEN
          PERFORM 1 FROM stock WHERE sku = step->>1 AND quantityOnHand >= (step->>2)::bigint;
          held := FOUND;
        WHEN 'take' THEN
          UPDATE stock SET quantityOnHand = quantityOnHand - (step->>2)::bigint, sold = sold + (step->>2)::bigint
          WHERE sku = step->>1 AND quantityOnHand >= (step->>2)::bigint;
          held := FOUND;
        WHEN 'captured' THEN
          UPDATE paymentAuthorization SET status = 'captured', chargeId = step->>2, capturedAt = step->>3
          WHERE authorizationId = step->>1 AND status = 'held';
          held := FOUND;
        WHEN 'charge' THEN
          INSERT INTO charge (chargeId, token, status, failureCode, declineCode, amountMinor, currencyCode, createdAt)
          VALUES (step->>1, step->>2, step->>3, step->>4, step->>5, (step->>6)::bigint, step->>7, step->>8);
          held := true;
        WHEN 'order' THEN
          INSERT INTO "order"
            (orderId, chargeId, createdAt, amountMinor, currencyCode, document, status, capturedMinor, shippingMinor,
             shippingTaxMinor, gatewayPaymentId, taxIncluded, agreementId)
          VALUES (step->>1, step->>2, step->>3, (step->>4)::bigint, step->>5, step->>6, step->>7, (step->>8)::bigint,
            (step->>9)::bigint, (step->>10)::bigint, step->>11, (step->>12)::boolean, step->>13);
          INSERT INTO orderItem (orderId, sku, quantity, unitPriceMinor, amountMinor, discountMinor, taxMinor)
          SELECT step->>1, line->>0, (line->>1)::bigint, (line->>2)::bigint, (line->>3)::bigint, (line->>4)::bigint,
            (line->>5)::bigint
          FROM jsonb_array_elements(step->14) WITH ORDINALITY AS l(line, n) ORDER BY n;
          held := true;
        WHEN 'journal' THEN
          INSERT INTO operation (kind, key, fingerprint, state, subject, request, result, created, settled)
          VALUES (step->>1, step->>2, step->>3, step->>4, step->>5, step->>6, step->>7, step->>8, step->>9)
          ON CONFLICT (kind, key) DO NOTHING;
          held := FOUND;
        ELSE
          RAISE EXCEPTION 'payservice_apply: unknown step %', step->>0;
        END CASE;
        IF NOT held THEN
          RAISE EXCEPTION USING ERRCODE = 'PS409',
            MESSAGE = 'payservice_apply: a row changed since it was read (' || (step->>0) || ')';
        END IF;
      END LOOP;
    END
    $apply$
    """

  /// Migration v15: `applyFunction` again, with orders. It locks tokens, then orders, then stock
  /// (as a refund locks its order before the stock it puts back), each by key through its index
  /// (v14's `IN (SELECT ...)` let the planner scan every charge token). The stock steps run last,
  /// in their order, with the stock rows locked just before them: any failed step refuses the whole
  /// batch, so only their order among themselves matters, and a hot sku's row is held from there
  /// to the commit rather than through the batch's inserts. It knows a refund's steps:
  /// `orderv` (the order row is the version read), `undisputed` (it still has no dispute), `orderset`
  /// (its money and status), `linerefunded`, `restock` (only while that many units count as sold),
  /// `event` and `refund` (only where their keys are free), and a cancel's `released` (the hold,
  /// only while held). Its statements keep one plan each per
  /// connection (`force_generic_plan`), each key looked up through its index whatever the values,
  /// as `readFunctionGeneric` has `payservice_read` do.
  static let applyFunctionV15 = """
    CREATE OR REPLACE FUNCTION payservice_apply(batch jsonb) RETURNS void LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan AS $apply$
    DECLARE
      step jsonb;
      held boolean;
      tokens text[] := ARRAY(SELECT jsonb_array_elements_text(batch->'tokens'));
      orders text[] := ARRAY(SELECT jsonb_array_elements_text(COALESCE(batch->'orders', '[]')));
      skus text[] := ARRAY(SELECT jsonb_array_elements_text(batch->'skus'));
      pass int;
    BEGIN
      PERFORM 1 FROM chargeToken WHERE token = ANY(tokens) ORDER BY token FOR UPDATE;
      PERFORM 1 FROM "order" WHERE orderId = ANY(orders) ORDER BY orderId FOR UPDATE;
      FOR pass IN 1..2 LOOP
      IF pass = 2 THEN
        PERFORM 1 FROM stock WHERE sku = ANY(skus) ORDER BY sku FOR UPDATE;
      END IF;
      FOR step IN SELECT value FROM jsonb_array_elements(batch->'steps') LOOP
        CONTINUE WHEN (step->>0 IN ('enough', 'take', 'restock')) <> (pass = 2);
        CASE step->>0
        WHEN 'token' THEN
          PERFORM 1 FROM chargeToken WHERE token = step->>1 AND xmin::text = step->>2;
          held := FOUND;
        WHEN 'authorization' THEN
          PERFORM 1 FROM paymentAuthorization WHERE authorizationId = step->>1 AND xmin::text = step->>2 FOR UPDATE;
          held := FOUND;
        WHEN 'operation' THEN
          PERFORM 1 FROM operation WHERE kind = step->>1 AND key = step->>2 AND xmin::text = step->>3 FOR UPDATE;
          held := FOUND;
        WHEN 'orderv' THEN
          PERFORM 1 FROM "order" WHERE orderId = step->>1 AND xmin::text = step->>2;
          held := FOUND;
        WHEN 'undisputed' THEN
          PERFORM 1 FROM dispute WHERE orderId = step->>1;
          held := NOT FOUND;
        WHEN 'used' THEN
          UPDATE chargeToken SET usedAt = step->>2 WHERE token = step->>1 AND usedAt IS NULL;
          held := FOUND;
        WHEN 'enough' THEN
          PERFORM 1 FROM stock WHERE sku = step->>1 AND quantityOnHand >= (step->>2)::bigint;
          held := FOUND;
        WHEN 'take' THEN
          UPDATE stock SET quantityOnHand = quantityOnHand - (step->>2)::bigint, sold = sold + (step->>2)::bigint
          WHERE sku = step->>1 AND quantityOnHand >= (step->>2)::bigint;
          held := FOUND;
        WHEN 'restock' THEN
          UPDATE stock SET quantityOnHand = quantityOnHand + (step->>2)::bigint, sold = sold - (step->>2)::bigint
          WHERE sku = step->>1 AND sold >= (step->>2)::bigint;
          held := FOUND;
        WHEN 'captured' THEN
          UPDATE paymentAuthorization SET status = 'captured', chargeId = step->>2, capturedAt = step->>3
          WHERE authorizationId = step->>1 AND status = 'held';
          held := FOUND;
        WHEN 'released' THEN
          UPDATE paymentAuthorization SET releasedAt = step->>2
          WHERE authorizationId = step->>1 AND status = 'held' AND releasedAt IS NULL;
          held := FOUND;
        WHEN 'charge' THEN
          INSERT INTO charge (chargeId, token, status, failureCode, declineCode, amountMinor, currencyCode, createdAt)
          VALUES (step->>1, step->>2, step->>3, step->>4, step->>5, (step->>6)::bigint, step->>7, step->>8);
          held := true;
        WHEN 'order' THEN
          INSERT INTO "order"
            (orderId, chargeId, createdAt, amountMinor, currencyCode, document, status, capturedMinor, shippingMinor,
             shippingTaxMinor, gatewayPaymentId, taxIncluded, agreementId)
          VALUES (step->>1, step->>2, step->>3, (step->>4)::bigint, step->>5, step->>6, step->>7, (step->>8)::bigint,
            (step->>9)::bigint, (step->>10)::bigint, step->>11, (step->>12)::boolean, step->>13);
          INSERT INTO orderItem (orderId, sku, quantity, unitPriceMinor, amountMinor, discountMinor, taxMinor)
          SELECT step->>1, line->>0, (line->>1)::bigint, (line->>2)::bigint, (line->>3)::bigint, (line->>4)::bigint,
            (line->>5)::bigint
          FROM jsonb_array_elements(step->14) WITH ORDINALITY AS l(line, n) ORDER BY n;
          held := true;
        WHEN 'orderset' THEN
          UPDATE "order" SET status = step->>2, capturedMinor = (step->>3)::bigint, refundedMinor = (step->>4)::bigint,
            shippingRefunded = (step->>5)::boolean
          WHERE orderId = step->>1;
          held := FOUND;
        WHEN 'linerefunded' THEN
          UPDATE orderItem SET refundedQuantity = (step->>3)::bigint WHERE orderId = step->>1 AND sku = step->>2;
          held := FOUND;
        WHEN 'event' THEN
          INSERT INTO orderEvent (orderId, position, kind, at, amountMinor, reference, reason)
          VALUES (step->>1, (step->>2)::bigint, step->>3, step->>4, (step->>5)::bigint, step->>6, step->>7)
          ON CONFLICT DO NOTHING;
          held := FOUND;
        WHEN 'refund' THEN
          INSERT INTO refund (refundId, orderId, position, createdAt, amountMinor, document, gatewayRefundId)
          VALUES (step->>1, step->>2, (step->>3)::bigint, step->>4, (step->>5)::bigint, step->>6, step->>7)
          ON CONFLICT DO NOTHING;
          held := FOUND;
        WHEN 'journal' THEN
          INSERT INTO operation (kind, key, fingerprint, state, subject, request, result, created, settled)
          VALUES (step->>1, step->>2, step->>3, step->>4, step->>5, step->>6, step->>7, step->>8, step->>9)
          ON CONFLICT (kind, key) DO NOTHING;
          held := FOUND;
        ELSE
          RAISE EXCEPTION 'payservice_apply: unknown step %', step->>0;
        END CASE;
        IF NOT held THEN
          RAISE EXCEPTION USING ERRCODE = 'PS409',
            MESSAGE = 'payservice_apply: a row changed since it was read (' || (step->>0) || ')';
        END IF;
      END LOOP;
      END LOOP;
    END
    $apply$
    """

  /// Migration v16: `applyFunctionV15` with each row locked by its own key, in key order, one
  /// statement per key (`WHERE token = k`), and nothing locked for an empty list. v15's
  /// `= ANY(array)` has a generic plan that assumes ten keys, so on a table of a few hundred rows
  /// to a few thousand (a young shop, or a table grown since it was last analyzed) it scanned the
  /// whole table: locking the empty list of orders of every order cost 0.048 ms on average (server
  /// time, pg_stat_statements) while the table grew from none to 1,000 orders. An equality on a
  /// unique key is estimated at one row, so it is looked up through the key's index in any table
  /// bigger than a page or two.
  static let applyFunctionV16 = """
    CREATE OR REPLACE FUNCTION payservice_apply(batch jsonb) RETURNS void LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan AS $apply$
    DECLARE
      step jsonb;
      held boolean;
      tokens text[] := ARRAY(SELECT DISTINCT t FROM jsonb_array_elements_text(batch->'tokens') t ORDER BY t);
      orders text[] := ARRAY(SELECT DISTINCT o FROM jsonb_array_elements_text(batch->'orders') o ORDER BY o);
      skus text[] := ARRAY(SELECT DISTINCT s FROM jsonb_array_elements_text(batch->'skus') s ORDER BY s);
      k text;
      pass int;
    BEGIN
      FOREACH k IN ARRAY tokens LOOP
        PERFORM 1 FROM chargeToken WHERE token = k FOR UPDATE;
      END LOOP;
      FOREACH k IN ARRAY orders LOOP
        PERFORM 1 FROM "order" WHERE orderId = k FOR UPDATE;
      END LOOP;
      FOR pass IN 1..2 LOOP
      IF pass = 2 THEN
        FOREACH k IN ARRAY skus LOOP
          PERFORM 1 FROM stock WHERE sku = k FOR UPDATE;
        END LOOP;
      END IF;
      FOR step IN SELECT value FROM jsonb_array_elements(batch->'steps') LOOP
        CONTINUE WHEN (step->>0 IN ('enough', 'take', 'restock')) <> (pass = 2);
        CASE step->>0
        WHEN 'token' THEN
          PERFORM 1 FROM chargeToken WHERE token = step->>1 AND xmin::text = step->>2;
          held := FOUND;
        WHEN 'authorization' THEN
          PERFORM 1 FROM paymentAuthorization WHERE authorizationId = step->>1 AND xmin::text = step->>2 FOR UPDATE;
          held := FOUND;
        WHEN 'operation' THEN
          PERFORM 1 FROM operation WHERE kind = step->>1 AND key = step->>2 AND xmin::text = step->>3 FOR UPDATE;
          held := FOUND;
        WHEN 'orderv' THEN
          PERFORM 1 FROM "order" WHERE orderId = step->>1 AND xmin::text = step->>2;
          held := FOUND;
        WHEN 'undisputed' THEN
          PERFORM 1 FROM dispute WHERE orderId = step->>1;
          held := NOT FOUND;
        WHEN 'used' THEN
          UPDATE chargeToken SET usedAt = step->>2 WHERE token = step->>1 AND usedAt IS NULL;
          held := FOUND;
        WHEN 'enough' THEN
          PERFORM 1 FROM stock WHERE sku = step->>1 AND quantityOnHand >= (step->>2)::bigint;
          held := FOUND;
        WHEN 'take' THEN
          UPDATE stock SET quantityOnHand = quantityOnHand - (step->>2)::bigint, sold = sold + (step->>2)::bigint
          WHERE sku = step->>1 AND quantityOnHand >= (step->>2)::bigint;
          held := FOUND;
        WHEN 'restock' THEN
          UPDATE stock SET quantityOnHand = quantityOnHand + (step->>2)::bigint, sold = sold - (step->>2)::bigint
          WHERE sku = step->>1 AND sold >= (step->>2)::bigint;
          held := FOUND;
        WHEN 'captured' THEN
          UPDATE paymentAuthorization SET status = 'captured', chargeId = step->>2, capturedAt = step->>3
          WHERE authorizationId = step->>1 AND status = 'held';
          held := FOUND;
        WHEN 'released' THEN
          UPDATE paymentAuthorization SET releasedAt = step->>2
          WHERE authorizationId = step->>1 AND status = 'held' AND releasedAt IS NULL;
          held := FOUND;
        WHEN 'charge' THEN
          INSERT INTO charge (chargeId, token, status, failureCode, declineCode, amountMinor, currencyCode, createdAt)
          VALUES (step->>1, step->>2, step->>3, step->>4, step->>5, (step->>6)::bigint, step->>7, step->>8);
          held := true;
        WHEN 'order' THEN
          INSERT INTO "order"
            (orderId, chargeId, createdAt, amountMinor, currencyCode, document, status, capturedMinor, shippingMinor,
             shippingTaxMinor, gatewayPaymentId, taxIncluded, agreementId)
          VALUES (step->>1, step->>2, step->>3, (step->>4)::bigint, step->>5, step->>6, step->>7, (step->>8)::bigint,
            (step->>9)::bigint, (step->>10)::bigint, step->>11, (step->>12)::boolean, step->>13);
          INSERT INTO orderItem (orderId, sku, quantity, unitPriceMinor, amountMinor, discountMinor, taxMinor)
          SELECT step->>1, line->>0, (line->>1)::bigint, (line->>2)::bigint, (line->>3)::bigint, (line->>4)::bigint,
            (line->>5)::bigint
          FROM jsonb_array_elements(step->14) WITH ORDINALITY AS l(line, n) ORDER BY n;
          held := true;
        WHEN 'orderset' THEN
          UPDATE "order" SET status = step->>2, capturedMinor = (step->>3)::bigint, refundedMinor = (step->>4)::bigint,
            shippingRefunded = (step->>5)::boolean
          WHERE orderId = step->>1;
          held := FOUND;
        WHEN 'linerefunded' THEN
          UPDATE orderItem SET refundedQuantity = (step->>3)::bigint WHERE orderId = step->>1 AND sku = step->>2;
          held := FOUND;
        WHEN 'event' THEN
          INSERT INTO orderEvent (orderId, position, kind, at, amountMinor, reference, reason)
          VALUES (step->>1, (step->>2)::bigint, step->>3, step->>4, (step->>5)::bigint, step->>6, step->>7)
          ON CONFLICT DO NOTHING;
          held := FOUND;
        WHEN 'refund' THEN
          INSERT INTO refund (refundId, orderId, position, createdAt, amountMinor, document, gatewayRefundId)
          VALUES (step->>1, step->>2, (step->>3)::bigint, step->>4, (step->>5)::bigint, step->>6, step->>7)
          ON CONFLICT DO NOTHING;
          held := FOUND;
        WHEN 'journal' THEN
          INSERT INTO operation (kind, key, fingerprint, state, subject, request, result, created, settled)
          VALUES (step->>1, step->>2, step->>3, step->>4, step->>5, step->>6, step->>7, step->>8, step->>9)
          ON CONFLICT (kind, key) DO NOTHING;
          held := FOUND;
        ELSE
          RAISE EXCEPTION 'payservice_apply: unknown step %', step->>0;
        END CASE;
        IF NOT held THEN
          RAISE EXCEPTION USING ERRCODE = 'PS409',
            MESSAGE = 'payservice_apply: a row changed since it was read (' || (step->>0) || ')';
        END IF;
      END LOOP;
      END LOOP;
    END
    $apply$
    """

  /// Migration v15: v14's `readFunction` planned once per connection: PostgreSQL planned its join
  /// again at every call (about 0.09 ms), since a custom plan looked cheaper than the generic one.
  static let readFunctionGeneric =
    "ALTER FUNCTION payservice_read(text[], text[]) SET plan_cache_mode = force_generic_plan"

  /// Migration v15: what a back-office operation reads first, in one statement: the order (as
  /// `PostgresTransaction.lockOrder` reads it, with its row version, whether it has disputes and
  /// its next event position), one row per line, and the journal's entry for `op_kind`/`op_key`
  /// with its version. One row of nulls for the order when there is none. Planned once per
  /// connection, as `applyFunctionV15` is.
  static let readOrderFunction = """
    CREATE FUNCTION payservice_read_order(order_id text, op_kind text, op_key text) RETURNS TABLE (
      r_chargeId text, r_currencyCode text, r_status text, r_amountMinor bigint, r_capturedMinor bigint,
      r_refundedMinor bigint, r_shippingMinor bigint, r_shippingTaxMinor bigint, r_shippingRefunded boolean,
      r_sandboxOutcome text, r_authorizationId text, r_gatewayPaymentId text, r_taxIncluded boolean,
      r_orderVersion text, r_disputed boolean, r_nextPosition bigint,
      r_sku text, r_quantity bigint, r_lineAmountMinor bigint, r_discountMinor bigint, r_taxMinor bigint,
      r_refundedQuantity bigint,
      r_kind text, r_key text, r_fingerprint text, r_state text, r_subject text, r_request text, r_result text,
      r_created text, r_settled text, r_operationVersion text
    ) LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $read$
    BEGIN
      RETURN QUERY
      SELECT o.chargeId, o.currencyCode, o.status, o.amountMinor, o.capturedMinor, o.refundedMinor,
        o.shippingMinor, o.shippingTaxMinor, o.shippingRefunded,
        \(StoreSchema.orderSandboxOutcome),
        t.authorizationId, o.gatewayPaymentId, o.taxIncluded, o.xmin::text,
        EXISTS (SELECT 1 FROM dispute d WHERE d.orderId = o.orderId),
        (SELECT COALESCE(MAX(e.position), 0) + 1 FROM orderEvent e WHERE e.orderId = o.orderId),
        i.sku, i.quantity, i.amountMinor, i.discountMinor, i.taxMinor, i.refundedQuantity,
        p.kind, p.key, p.fingerprint, p.state, p.subject, p.request, p.result, p.created, p.settled, p.xmin::text
      FROM (SELECT 1) one
      LEFT JOIN ("order" o JOIN charge c ON c.chargeId = o.chargeId LEFT JOIN chargeToken t ON t.token = c.token)
        ON o.orderId = order_id
      LEFT JOIN orderItem i ON i.orderId = o.orderId
      LEFT JOIN operation p ON p.kind = op_kind AND p.key = op_key
      ORDER BY i.position;
    END
    $read$
    """

  /// The tokens this store issued, which the batch reads without a round trip.
  let issued: IssuedTokens

  init(issued: IssuedTokens) {
    self.issued = issued
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

  // What the batch read, as it was read (nil: no such row).
  private(set) var tokens: [String: (record: ChargeTokenRecord, version: String)?] = [:]
  private(set) var authorizations: [String: (authorization: PaymentAuthorization, version: String)?] = [:]
  private(set) var stock: [String: Int] = [:]
  private(set) var orders: [String: (state: OrderState, version: String, disputed: Bool)?] = [:]
  private(set) var entries: [ReadAhead.Entry: (row: OperationRow, version: String)?] = [:]

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
    tokens = [:]
    authorizations = [:]
    stock = [:]
    orders = [:]
    entries = [:]
  }

  // MARK: Reading

  /// Migration v14: what `readAhead` fetches, in a function so that the server plans it once per
  /// connection rather than at every order. One row per token found (with its authorization and
  /// the row versions), or one row of nulls when none is; every row carries the stock counts.
  static let readFunction = """
    CREATE FUNCTION payservice_read(tokens text[], skus text[]) RETURNS TABLE (
      r_skus text[], r_quantities bigint[], r_token text, r_binding text, r_billingContact text, r_paymentMethod text,
      r_issuedAt text, r_amountMinor bigint, r_currencyCode text, r_sandboxOutcome text, r_expiresAt bigint,
      r_usedAt text, r_authorizationId text, r_gatewayPaymentData text, r_tokenVersion text, r_heldId text,
      r_transactionId text, r_network text, r_cardType text, r_lastFour text, r_heldAmountMinor bigint,
      r_heldCurrencyCode text, r_status text, r_heldVersion text
    ) LANGUAGE plpgsql STABLE AS $read$
    BEGIN
      RETURN QUERY
      SELECT s.skus, s.quantities,
        t.token, t.binding, t.billingContact, t.paymentMethod, t.issuedAt, t.amountMinor, t.currencyCode,
        t.sandboxOutcome, t.expiresAt, t.usedAt, t.authorizationId, t.gatewayPaymentData, t.xmin::text,
        a.authorizationId, a.transactionId, a.network, a.cardType, a.lastFour, a.amountMinor, a.currencyCode,
        a.status, a.xmin::text
      FROM (SELECT array_agg(k.sku) AS skus, array_agg(k.quantityOnHand) AS quantities
            FROM stock k WHERE k.sku = ANY(payservice_read.skus)) s
      LEFT JOIN chargeToken t ON t.token = ANY(payservice_read.tokens)
      LEFT JOIN paymentAuthorization a ON a.authorizationId = t.authorizationId;
    END
    $read$
    """

  /// Fetches, in one statement and without locks, the tokens (with their authorizations) and
  /// stock counts of `rows` the batch does not know yet. Tokens this store issued are known
  /// already (`IssuedTokens`): when every token is, nothing is read unless `stock` (a group, whose
  /// one read serves all its orders), and the stock is checked when the batch is applied instead
  /// (`shortages`, `decrementStock`).
  func readAhead(_ rows: ReadAhead, on session: PostgresSession, stock readStock: Bool = false) throws {
    // Read from requests before their params are checked: sets, so a hostile cart costs linear time.
    var seen: Set<String> = []
    let wantedOrders = rows.orders.filter { orders[$0] == nil && seen.insert($0).inserted }
    var seenEntries: Set<ReadAhead.Entry> = []
    let wantedEntries = rows.entries.filter { entries[$0] == nil && seenEntries.insert($0).inserted }
    // Each order's statement reads one journal entry as well.
    for (index, orderId) in wantedOrders.enumerated() {
      try readOrder(orderId, entry: index < wantedEntries.count ? wantedEntries[index] : nil, on: session)
    }
    for entry in wantedEntries.dropFirst(wantedOrders.count) { try readEntry(entry, on: session) }
    var wantedTokens: [String] = []
    seen = []
    for token in rows.tokens where tokens[token] == nil && seen.insert(token).inserted {
      if let known = issued.token(token) {
        tokens[token] = known
        if let authorizationId = known.record.authorizationId, authorizations[authorizationId] == nil,
          let authorization = issued.authorization(authorizationId)
        {
          authorizations[authorizationId] = authorization
        }
      } else {
        wantedTokens.append(token)
      }
    }
    if wantedTokens.isEmpty && !rows.tokens.isEmpty && !readStock { return }
    var wantedSkus: [String] = []
    seen = []
    for sku in rows.skus where stock[sku] == nil && seen.insert(sku).inserted { wantedSkus.append(sku) }
    guard !wantedTokens.isEmpty || !wantedSkus.isEmpty else { return }
    var binds = PostgresBindings()
    binds.append(wantedTokens)
    binds.append(wantedSkus)
    let rows = try session.run("SELECT * FROM payservice_read($1, $2)", binds).rows
    for token in wantedTokens { tokens[token] = .some(nil) }
    for sku in wantedSkus { stock[sku] = 0 }
    for (index, row) in rows.enumerated() {
      let (
        skus, quantities, token, binding, billing, card, issuedAt, amount, currency, outcome, expiresAt, usedAt,
        authorizationId, gatewayPaymentData, tokenVersion, heldId, transactionId, network, cardType, lastFour,
        heldAmount, heldCurrency, status, heldVersion
      ) = try row.columns(
        ([String]?, [Int64]?, String?, String?, String?, String?, String?, Int64?, String?, String?, Int64?, String?,
          String?, String?, String?, String?, String?, String?, String?, String?, Int64?, String?, String?, String?)
          .self)
      if index == 0, let skus, let quantities {
        for (sku, quantity) in zip(skus, quantities) { stock[sku] = Int(quantity) }
      }
      guard let token, let binding, let issuedAt, let amount, let currency, let outcome, let expiresAt,
        let tokenVersion
      else { continue }
      tokens[token] = (
        try ChargeTokenRecord(
          token: token, binding: binding, billingContact: billing, paymentMethod: card, issuedAt: issuedAt,
          amountMinor: amount, currencyCode: currency, sandboxOutcome: outcome, expiresAt: expiresAt,
          usedAt: usedAt, authorizationId: authorizationId, gatewayPaymentData: gatewayPaymentData),
        tokenVersion
      )
      if let authorizationId {
        if let heldId, let transactionId, let network, let cardType, let lastFour, let heldAmount, let heldCurrency,
          let status, let heldVersion
        {
          authorizations[heldId] = (
            PaymentAuthorization(
              authorizationId: heldId, transactionId: transactionId, network: network, cardType: cardType,
              lastFour: lastFour, amountMinor: heldAmount, currencyCode: heldCurrency,
              status: try PaymentAuthorization.Status(stored: status)),
            heldVersion
          )
        } else {
          authorizations[authorizationId] = .some(nil)
        }
      }
    }
  }

  /// Reads an authorization the batch does not know (one no token it read names).
  func readAuthorization(_ authorizationId: String, on session: PostgresSession) throws {
    var binds = PostgresBindings()
    binds.append(authorizationId)
    let row = try session.run(
      """
      SELECT \(PostgresTransaction.authorizationColumns), xmin::text FROM paymentAuthorization WHERE authorizationId = $1
      """, binds
    ).rows.first
    guard let row else {
      authorizations[authorizationId] = .some(nil)
      return
    }
    let (id, transactionId, network, cardType, lastFour, amount, currency, status, version) = try row.columns(
      (String, String, String, String, String, Int64, String, String, String).self)
    authorizations[authorizationId] = (
      PaymentAuthorization(
        authorizationId: id, transactionId: transactionId, network: network, cardType: cardType, lastFour: lastFour,
        amountMinor: amount, currencyCode: currency, status: try PaymentAuthorization.Status(stored: status)),
      version
    )
  }

  /// Reads an order as `lockOrder` does, without a lock, and the journal's `entry` (if any) in the
  /// same statement (`readOrderFunction`).
  func readOrder(_ orderId: String, entry: ReadAhead.Entry?, on session: PostgresSession) throws {
    var binds = PostgresBindings()
    binds.append(orderId)
    binds.append(entry?.kind)
    binds.append(entry?.key)
    let rows = try session.run("SELECT * FROM payservice_read_order($1, $2, $3)", binds).rows
    var read: (state: OrderState, version: String, disputed: Bool)?
    var lines: [OrderState.Line] = []
    var journal: (row: OperationRow, version: String)?
    for (index, row) in rows.enumerated() {
      let (
        chargeId, currency, status, amount, captured, refunded, shipping, shippingTax, shippingRefunded, outcome,
        authorizationId, gatewayPaymentId, taxIncluded, version, disputed, next, sku, quantity, lineAmount, discount,
        tax, refundedQuantity, kind, key, fingerprint, state, subject, request, result, created, settled, entryVersion
      ) = try row.columns(
        (String?, String?, String?, Int64?, Int64?, Int64?, Int64?, Int64?, Bool?, String?, String?, String?, Bool?,
          String?, Bool?, Int?, String?, Int?, Int64?, Int64?, Int64?, Int?, String?, String?, String?, String?,
          String?, String?, String?, String?, String?, String?).self)
      if index == 0 {
        if let kind, let key, let fingerprint, let state, let created, let entryVersion {
          journal = (
            OperationRow(
              kind: kind, key: key, fingerprint: fingerprint, state: try OperationRow.state(stored: state),
              subject: subject, request: request, result: result, created: created, settled: settled),
            entryVersion
          )
        }
        if let chargeId, let currency, let status, let amount, let refunded, let shippingRefunded, let outcome,
          let taxIncluded, let version, let disputed, let next
        {
          guard let sandboxOutcome = SandboxOutcome(rawValue: outcome) else {
            throw StoreError.unavailable(reason: "order \(orderId) was paid with a token of unknown sandboxOutcome")
          }
          read = (
            OrderState(
              orderId: orderId, chargeId: chargeId, currencyCode: currency, status: try OrderStatus(stored: status),
              amountMinor: amount, capturedMinor: captured, refundedMinor: refunded, shippingMinor: shipping,
              shippingTaxMinor: shippingTax, shippingRefunded: shippingRefunded, lines: [],
              sandboxOutcome: sandboxOutcome, authorizationId: authorizationId, nextEventPosition: next,
              gatewayPaymentId: gatewayPaymentId, taxIncluded: taxIncluded),
            version, disputed
          )
        }
      }
      if read != nil, let sku, let quantity, let lineAmount, let refundedQuantity {
        lines.append(
          OrderState.Line(
            sku: sku, quantity: quantity, amountMinor: lineAmount, discountMinor: discount, taxMinor: tax,
            refundedQuantity: refundedQuantity))
      }
    }
    read?.state.lines = lines
    orders[orderId] = .some(read)
    if let entry { entries[entry] = .some(journal) }
  }

  /// Reads the journal's entry for `entry`, without a lock.
  func readEntry(_ entry: ReadAhead.Entry, on session: PostgresSession) throws {
    var binds = PostgresBindings()
    binds.append(entry.kind)
    binds.append(entry.key)
    guard
      let found = try session.run(
        "SELECT \(PostgresTransaction.operationColumns), xmin::text FROM operation WHERE kind = $1 AND key = $2", binds
      ).rows.first
    else {
      entries[entry] = .some(nil)
      return
    }
    let (kind, key, fingerprint, state, subject, request, result, created, settled, version) = try found.columns(
      (String, String, String, String, String?, String?, String?, String, String?, String).self)
    entries[entry] = (
      OperationRow(
        kind: kind, key: key, fingerprint: fingerprint, state: try OperationRow.state(stored: state), subject: subject,
        request: request, result: result, created: created, settled: settled),
      version
    )
  }

  /// Units of `sku` on hand as far as this batch knows (what was read, less what it took).
  func onHand(_ sku: String) -> Int? {
    stock[sku].map { $0 - taken[sku, default: 0] }
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
      for token in tokens.keys { issued.forget(token) }
      throw error
    }
    // A token used has another version now.
    for row in written where row.hasPrefix("t:") { issued.forget(String(row.dropFirst(2))) }
  }
}

/// What an optimistic transaction cannot do: `body` runs again with locks.
struct NeedsLocks: Error {}

/// A transaction whose reads take no locks and whose writes go to a `PostgresBatch` (see
/// `OptimisticReads` for what is checked when it is applied). Anything it does not support throws
/// `NeedsLocks`, so the store runs the transaction again as a `PostgresTransaction`: the safe
/// path is the default, and a method supports optimism only where its checks are written here.
struct OptimisticTransaction: StoreTransaction {
  let session: PostgresSession
  let batch: PostgresBatch

  func readAhead(_ rows: ReadAhead) throws {
    try batch.readAhead(rows, on: session)
  }

  func chargeToken(_ token: String) throws -> ChargeTokenRecord? {
    if batch.isWritten("t:" + token) { throw NeedsLocks() }
    if batch.tokens[token] == nil { try readAhead(ReadAhead(tokens: [token])) }
    guard let read = batch.tokens[token], let entry = read else { return nil }
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
    if batch.authorizations[authorizationId] == nil { try batch.readAuthorization(authorizationId, on: session) }
    guard let read = batch.authorizations[authorizationId], let entry = read else { return nil }
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

  func operation(kind: String, key: String) throws -> OperationRow? {
    let row = "o:" + kind + " " + key
    if batch.isWritten(row) { throw NeedsLocks() }
    let entry = ReadAhead.Entry(kind: kind, key: key)
    if batch.entries[entry] == nil { try batch.readEntry(entry, on: session) }
    guard let read = batch.entries[entry], let found = read else { return nil }
    batch.check(row, step: "operation", [kind, key], version: found.version)
    return found.row
  }

  func lockOrder(_ orderId: String) throws -> OrderState? {
    if batch.isWritten("r:" + orderId) { throw NeedsLocks() }
    if batch.orders[orderId] == nil { try batch.readOrder(orderId, entry: nil, on: session) }
    guard let read = batch.orders[orderId], let found = read else { return nil }
    batch.check(order: orderId, version: found.version)
    return found.state
  }

  /// An order read without disputes has none when the batch is applied; one with disputes is
  /// read with locks.
  func disputes(orderId: String) throws -> [DisputeRow] {
    guard let read = batch.orders[orderId], let found = read, !found.disputed else { throw NeedsLocks() }
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

  func insert(_ operation: OperationRow) throws -> Bool {
    batch.insert(operation)
    return true
  }

  // Everything else takes locks.

  func nextChargeTokenSequence() throws -> Int64 { throw NeedsLocks() }
  func insert(_ token: NewChargeToken) throws { throw NeedsLocks() }
  func purgeExpiredChargeTokens(now: Int64, limit: Int) throws -> Int { throw NeedsLocks() }
  func insertAuthorization(_ authorization: PaymentAuthorization, at now: String) throws -> Bool { throw NeedsLocks() }
  func refund(_ refundId: String) throws -> RefundRow? { throw NeedsLocks() }
  func eraseStaffReasons(orderId: String, marker: String) throws -> [OrderEventRow] { throw NeedsLocks() }
  func updateRefund(_ refundId: String, document: String) throws { throw NeedsLocks() }
  func orderDocument(_ orderId: String) throws -> String? { throw NeedsLocks() }
  func orderId(gatewayPaymentId: String) throws -> String? { throw NeedsLocks() }
  func refund(gatewayRefundId: String) throws -> RefundRow? { throw NeedsLocks() }
  func dispute(_ disputeId: String) throws -> DisputeRow? { throw NeedsLocks() }
  func save(_ dispute: DisputeRow, isNew: Bool) throws { throw NeedsLocks() }
  func appStoreChain(_ originalTransactionId: String) throws -> AppStoreChainRow? { throw NeedsLocks() }
  func save(_ chain: AppStoreChainRow, isNew: Bool) throws { throw NeedsLocks() }
  func appStoreTransaction(_ transactionId: String) throws -> AppStoreTransactionRow? { throw NeedsLocks() }
  func save(_ transaction: AppStoreTransactionRow, isNew: Bool) throws { throw NeedsLocks() }
  func appStoreTransactions(originalTransactionId: String) throws -> [AppStoreTransactionRow] { throw NeedsLocks() }
  func appStoreEntitlementChains(account: String) throws -> [AppStoreChainRow] { throw NeedsLocks() }
  func appStoreEntitlementTransactions(account: String) throws -> [AppStoreTransactionRow] { throw NeedsLocks() }
  func appStoreCredits(account: String) throws -> [String: (purchased: Int64, refunded: Int64)] { throw NeedsLocks() }
  func insert(_ notification: AppStoreNotificationRow) throws -> Bool { throw NeedsLocks() }
  func appStoreNotifications(_ query: AppStoreNotificationQuery) throws -> [AppStoreNotificationRow] {
    throw NeedsLocks()
  }
  func appStoreConsumed(account: String) throws -> [String: Int64] { throw NeedsLocks() }
  func insert(_ consumption: AppStoreConsumptionRow) throws { throw NeedsLocks() }
  func moveConsumptions(account: String, to newAccount: String) throws { throw NeedsLocks() }
  func lockAgreement(_ agreementId: String) throws -> AgreementRow? { throw NeedsLocks() }
  func insert(_ agreement: AgreementRow) throws { throw NeedsLocks() }
  func update(_ agreement: AgreementRow) throws { throw NeedsLocks() }
  func append(_ event: AgreementEventRow) throws -> AgreementEventRow { throw NeedsLocks() }
  func lockKey(_ space: String, _ key: String) throws { throw NeedsLocks() }
  func settleOperation(kind: String, key: String, result: String, at now: String) throws { throw NeedsLocks() }
  func removeOperation(kind: String, key: String) throws { throw NeedsLocks() }
  func pendingOperations(subject: String) throws -> [OperationRow] { throw NeedsLocks() }
  func rewriteOperation(kind: String, key: String, fingerprint: String, result: String?) throws { throw NeedsLocks() }
  func stockLevel(_ sku: String) throws -> StockLevel? { throw NeedsLocks() }
  func setQuantityOnHand(_ sku: String, to quantity: Int) throws { throw NeedsLocks() }
  func nextStockEventPosition(_ sku: String) throws -> Int { throw NeedsLocks() }
  func insert(_ event: StockEventRow) throws { throw NeedsLocks() }
  func tokensToErase(_ selector: ErasureSelector, limit: Int) throws -> [String] { throw NeedsLocks() }
  func personalData(token: String) throws -> PersonalDataRow? { throw NeedsLocks() }
  func erasePersonalData(_ row: PersonalDataRow, at now: String) throws { throw NeedsLocks() }
}

/// The charge tokens (with their Apple Pay authorizations) this store issued, as committed, with
/// their row versions, so that an order paid with one reads nothing first: its batch checks the
/// version when applied. A token used, erased or purged since has another version (or none), the
/// batch is refused, and the order runs again as if the token were unknown here; so an entry can
/// be stale without harm. Bounded: the oldest go first. Used only with the store's lock held.
final class IssuedTokens {
  static let capacity = 4096

  private var tokens: [String: (record: ChargeTokenRecord, version: String)] = [:]
  private var authorizations: [String: (authorization: PaymentAuthorization, version: String)] = [:]
  private var order: [String] = []
  private var first = 0

  func token(_ token: String) -> (record: ChargeTokenRecord, version: String)? { tokens[token] }

  func authorization(_ id: String) -> (authorization: PaymentAuthorization, version: String)? { authorizations[id] }

  func add(_ record: ChargeTokenRecord, version: String) {
    if tokens.updateValue((record, version), forKey: record.token) == nil { order.append(record.token) }
    while order.count - first > Self.capacity {
      forget(order[first])
      first += 1
    }
    if first > Self.capacity {
      order.removeFirst(first)
      first = 0
    }
  }

  func add(_ authorization: PaymentAuthorization, version: String) {
    authorizations[authorization.authorizationId] = (authorization, version)
  }

  func forget(_ token: String) {
    if let authorizationId = tokens.removeValue(forKey: token)?.record.authorizationId {
      authorizations[authorizationId] = nil
    }
  }
}

/// What a transaction issued, kept for `IssuedTokens` once it commits.
final class IssuedRows {
  var tokens: [(record: ChargeTokenRecord, version: String)] = []
  var authorizations: [(authorization: PaymentAuthorization, version: String)] = []
}
