import PayServiceCore

/// The stored procedures the optimistic path runs (`PostgresBatch`, `PostgresReads`), as the
/// migrations that created them shipped them (`PostgresMigrations`): each version stays as it
/// was, and a change is a new version in a new migration.
extension PostgresBatch {
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

  /// Migration v17: issues a charge token as `TokenBook.issue` does, in one statement:
  /// `{"sequence": n, "now": unix seconds, "purge": at most this many, "token": [the insert's
  /// values], "hold": [the authorization's values, or null]}`. Under the advisory lock that orders issuers
  /// (`PostgresTransaction.tokenSequenceLock`), it answers `next N` when `n` is not the next
  /// sequence number (another issuer took it), `replay` when the hold's transaction id was
  /// recorded before (nothing is written either way), and otherwise records the hold, purges as
  /// `StoreSQL.purgeExpiredChargeTokens` does, inserts the token, and answers `issued V`, where V is
  /// the version (`xmin`) of the rows it wrote: its transaction's id.
  static let issueFunction = """
    CREATE FUNCTION payservice_issue(issue jsonb) RETURNS text LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan AS $issue$
    DECLARE
      t jsonb := issue->'token';
      h jsonb := issue->'hold';
      next bigint;
    BEGIN
      PERFORM pg_advisory_xact_lock(\(PostgresTransaction.tokenSequenceLock));
      SELECT COALESCE(MAX(sequence), 0) + 1 INTO next FROM chargeToken;
      IF next <> (issue->>'sequence')::bigint THEN
        RETURN 'next ' || next;
      END IF;
      IF jsonb_typeof(h) = 'array' THEN
        INSERT INTO paymentAuthorization
          (authorizationId, transactionId, network, cardType, lastFour, amountMinor, currencyCode, status, createdAt)
        VALUES (h->>0, h->>1, h->>2, h->>3, h->>4, (h->>5)::bigint, h->>6, h->>7, h->>8)
        ON CONFLICT (transactionId) DO NOTHING;
        IF NOT FOUND THEN
          RETURN 'replay';
        END IF;
      END IF;
      DELETE FROM chargeToken WHERE token IN (
        SELECT token FROM chargeToken
        WHERE usedAt IS NULL AND expiresAt <= (issue->>'now')::bigint AND sequence < next - 1
        LIMIT (issue->>'purge')::int);
      INSERT INTO chargeToken
        (token, sequence, binding, billingContact, paymentMethod, amountMinor, currencyCode, sandboxOutcome,
         issuedAt, expiresAt, authorizationId, gatewayPaymentData, walletOrderToken)
      VALUES (t->>0, (t->>1)::bigint, t->>2, t->>3, t->>4, (t->>5)::bigint, t->>6, t->>7, t->>8, (t->>9)::bigint,
        t->>10, t->>11, t->>12);
      RETURN 'issued ' || (txid_current() % 4294967296);
    END
    $issue$
    """
}
