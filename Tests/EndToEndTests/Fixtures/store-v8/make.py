#!/usr/bin/env python3
"""Writes the store-v8 upgrade fixture: store.sqlite (a store written by payservice at commit ae734a2,
schema v8), requests.jsonl and responses.jsonl (what that release answers to them on a copy of it),
and, given a PostgreSQL server, store.pg.sql (the same store made in PostgreSQL, as pg_dump wrote it).

    swift build -c release --product payservice
    swift build -c release --product stripe-test-server
    python3 Tests/EndToEndTests/Fixtures/store-v8/make.py            # writes the fixture
    python3 Tests/EndToEndTests/Fixtures/store-v8/make.py --check    # regenerates it in a temporary
                                                                     # directory, compares every byte
    PAYSERVICE_FIXTURE_POSTGRES_URL=postgres://user:password@host:port/db python3 …/make.py [--check]
                                                                     # store.pg.sql too

Run it only with the binaries of ae734a2 (the release the fixture stands for): a later release
would write a later schema. The store is built with the clock pinned (--now) and the identifier key
pinned (PAYSERVICE_ID_KEY, the tests' key), so the same binary writes the same bytes every time.
Three runs on one store file, each a payservice process with --back-office:

  1. config.yaml (sandbox, automatic capture), --now 2026-11-21T12:00:00Z: orders A to E and two
     declines (X1, X2), then refunds of B (by lines, restocked), C (goodwill amount), D (every line
     and the shipping: refunded) and E (refund_declined, kept under its refundId);
  2. config-manual.yaml (sandbox, gateway.capture: manual), --now 2026-11-21T13:00:00Z: orders F
     (left authorized), G (captured in part) and H (canceled);
  3. config-stripe.yaml.in (the same store with a Stripe gateway, pointed at stripe-test-server),
     --now 2026-11-21T14:00:00Z: order P, whose charge Stripe makes but whose answer is lost (the
     server resets the connection after executing; no retries): the store keeps its paymentAttempt
     row, the token's fingerprint and no result. The order is pending. Then a token U is authorized
     and never used (the store's last token: expired unused tokens are purged when a later one is
     issued).

Then the WAL is checkpointed (no -wal or -shm is left) and the file made 0600. The replay (the
README says what each request checks) runs the same binary on a copy of the store with config.yaml,
--now 2026-11-21T15:00:00Z and --back-office; without a remote gateway nothing resolves order P.
"""
import argparse
import filecmp
import hashlib
import hmac
import json
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
# The tests' identifier key (TestConfig.identifierKey = IdentifierKey.transcript).
ID_KEY = "7061797365727669636520746573747320706179736572766963652074657374"
NOW_AUTOMATIC = "2026-11-21T12:00:00Z"
NOW_MANUAL = "2026-11-21T13:00:00Z"
NOW_STRIPE = "2026-11-21T14:00:00Z"
NOW_REPLAY = "2026-11-21T15:00:00Z"

ALBANY = {"givenName": "Ada", "familyName": "Lovelace", "emailAddress": "ada@example.com",
          "addressLines": ["1 State St"], "locality": "Albany", "administrativeArea": "NY",
          "postalCode": "12207", "countryCode": "US"}
CUPERTINO = {"givenName": "Ada", "familyName": "Lovelace", "emailAddress": "ada@example.com",
             "addressLines": ["1 Infinite Loop"], "locality": "Cupertino", "administrativeArea": "CA",
             "postalCode": "95014", "countryCode": "US"}
BILLING_ONLY = {"addressLines": ["1 Infinite Loop"], "locality": "Cupertino", "administrativeArea": "CA",
                "postalCode": "95014", "countryCode": "US"}
VISA = {"displayName": "Visa 0492", "network": "visa", "type": "credit"}
VISA_DEBIT = {"displayName": "Visa 7000", "network": "visa", "type": "debit"}
AMEX = {"displayName": "Amex 1001", "network": "amex", "type": "credit"}
STORE_CARD = {"displayName": "Acme Card 0042", "network": "privateLabel", "type": "store"}


def line(request):
    return json.dumps(request, ensure_ascii=False, separators=(",", ":"))


class Failure(Exception):
    pass


class Session:
    """A payservice process on the store, asked one request at a time."""

    def __init__(self, binary, config, database, now, scratch, environment=None):
        env = dict(os.environ if environment is None else environment)
        env["PAYSERVICE_ID_KEY"] = ID_KEY
        self.stderr_path = os.path.join(scratch, "stderr-%s" % now.replace(":", ""))
        self.stderr = open(self.stderr_path, "wb")
        self.process = subprocess.Popen(
            [binary, "--config", config, "--database", database, "--now", now, "--back-office", "--quiet"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        self.next_id = 1

    def raw(self, text):
        """Sends one request line; returns the response line as written (without its newline)."""
        self.process.stdin.write(text.encode() + b"\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer.endswith(b"\n"):
            raise Failure("no answer to %s" % text[:200])
        return answer[:-1].decode()

    def call(self, method, params=None):
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        self.next_id += 1
        if params is not None:
            request["params"] = params
        response = json.loads(self.raw(line(request)))
        if "result" not in response:
            raise Failure("%s failed: %s" % (method, response))
        return response["result"]

    def close(self):
        self.process.stdin.close()
        status = self.process.wait(timeout=60)
        self.stderr.close()
        with open(self.stderr_path, "rb") as log:
            text = log.read().decode(errors="replace")
        if status != 0:
            raise Failure("payservice exited %d: %s" % (status, text))
        return text


class Shop:
    """Places orders through a session, remembering each processOrder request for the replay."""

    def __init__(self, session):
        self.session = session

    def place(self, name, items, shipping_method, contact, card, payment_data, coupon=None, billing=None,
              send_billing=False, send_card=False, expect="succeeded", process_it=True):
        billing = billing or contact
        authorize = {"items": items, "shippingMethod": shipping_method}
        if coupon:
            authorize["couponCode"] = coupon
        authorize["payment"] = {
            "token": {"paymentData": payment_data, "paymentMethod": card,
                      "transactionIdentifier": "FIXTURE-V8-" + name},
            "shippingContact": contact, "billingContact": billing}
        authorized = self.session.call("authorizePayment", authorize)
        if authorized["status"] != "success":
            raise Failure("authorizePayment %s: %s" % (name, authorized))
        process = {"chargeToken": authorized["chargeToken"], "items": items, "shippingMethod": shipping_method,
                   "shippingContact": contact}
        if send_billing:
            process["billingContact"] = billing
        if coupon:
            process["couponCode"] = coupon
        if send_card:
            process["paymentMethod"] = card
        process["amount"] = authorized["amount"]
        process["currencyCode"] = authorized["currencyCode"]
        if not process_it:
            return {"name": name, "process": process, "orderId": order_id_of(authorized["chargeToken"])}
        result = self.session.call("processOrder", process)
        if result["status"] != expect and result.get("failureCode") != expect:
            raise Failure("processOrder %s: %s" % (name, result))
        order_id = result.get("orderId") or order_id_of(authorized["chargeToken"])
        return {"name": name, "process": process, "orderId": order_id, "result": result}

    def back_office(self, method, params, expect):
        result = self.session.call(method, params)
        if result["status"] != expect and result.get("failureCode") != expect:
            raise Failure("%s %s: %s" % (method, params, result))
        return params


def order_id_of(token):
    """The order id the store derives from a (keyed) charge token (Identifiers.orderId)."""
    mac = hmac.new(bytes.fromhex(ID_KEY), ("order\x1f" + token).encode(), hashlib.sha256).hexdigest()
    return "ord_" + mac[:32]


def automatic_run(binary, database, scratch):
    session = Session(binary, os.path.join(HERE, "config.yaml"), database, NOW_AUTOMATIC, scratch)
    shop = Shop(session)
    orders = {}
    # A: paid, left alone.
    orders["A"] = shop.place("A", [{"sku": "clock"}], "express", CUPERTINO, VISA, "tok_visa", billing=BILLING_ONLY)
    # B: a coupon and a store card discount; two of its three mugs come back and are restocked.
    orders["B"] = shop.place("B", [{"sku": "mug", "quantity": 3}, {"sku": "notebook"}], "standard", ALBANY,
                             STORE_CARD, "tok_privateLabel", coupon="SAVE10")
    # C: an Amex surcharge; processOrder sends the billing contact and the card again (both are part
    # of the stored fingerprint); then a goodwill refund.
    orders["C"] = shop.place("C", [{"sku": "lamp", "quantity": 2}], "express", ALBANY, AMEX, "tok_amex",
                             send_billing=True, send_card=True)
    # D: a debit card; every line and the shipping refunded: refunded.
    orders["D"] = shop.place("D", [{"sku": "pen", "quantity": 4}], "standard", ALBANY, VISA_DEBIT, "tok_visa_debit")
    # E: paid with the sandbox's tok_refundFail: its refunds are declined.
    orders["E"] = shop.place("E", [{"sku": "lamp"}], "standard", ALBANY, VISA, "tok_refundFail")
    # X1, X2: declines that consume their tokens (no order, the stock left alone).
    orders["X1"] = shop.place("X1", [{"sku": "mug"}], "standard", ALBANY, VISA,
                              "tok_visa_chargeDeclinedInsufficientFunds", expect="card_declined")
    orders["X2"] = shop.place("X2", [{"sku": "notebook"}], "standard", CUPERTINO, VISA,
                              "tok_chargeDeclinedExpiredCard", expect="expired_card")
    requests = {}
    requests["rf-b-1"] = ("refundOrder", shop.back_office("refundOrder", {
        "orderId": orders["B"]["orderId"], "refundId": "rf-b-1",
        "lines": [{"sku": "mug", "quantity": 2, "restock": "return"}], "reason": "Two mugs chipped"}, "succeeded"))
    requests["rf-c-1"] = ("refundOrder", shop.back_office("refundOrder", {
        "orderId": orders["C"]["orderId"], "refundId": "rf-c-1", "amount": "5.00", "reason": "Late delivery"},
        "succeeded"))
    requests["rf-d-1"] = ("refundOrder", shop.back_office("refundOrder", {
        "orderId": orders["D"]["orderId"], "refundId": "rf-d-1",
        "lines": [{"sku": "pen", "quantity": 4, "restock": "cancel"}], "shipping": True}, "succeeded"))
    requests["rf-e-1"] = ("refundOrder", shop.back_office("refundOrder", {
        "orderId": orders["E"]["orderId"], "refundId": "rf-e-1",
        "lines": [{"sku": "lamp", "quantity": 1, "restock": "return"}], "reason": "Wrong colour"}, "refund_declined"))
    stderr = session.close()
    return orders, requests, stderr


def manual_run(binary, database, scratch):
    session = Session(binary, os.path.join(HERE, "config-manual.yaml"), database, NOW_MANUAL, scratch)
    shop = Shop(session)
    orders = {}
    # F: authorized, never captured.
    orders["F"] = shop.place("F", [{"sku": "clock"}], "standard", ALBANY, VISA, "tok_visa")
    # G: captured in part at shipment (the rest released): paid.
    orders["G"] = shop.place("G", [{"sku": "mug", "quantity": 2}, {"sku": "lamp"}], "express", ALBANY, VISA, "tok_visa")
    # H: canceled: the hold released, both clocks back on hand.
    orders["H"] = shop.place("H", [{"sku": "clock", "quantity": 2}], "standard", CUPERTINO, VISA_DEBIT,
                             "tok_visa_debit")
    requests = {}
    requests["cap-g-1"] = ("captureOrder", shop.back_office("captureOrder", {
        "orderId": orders["G"]["orderId"], "captureId": "cap-g-1", "amount": "20.00"}, "succeeded"))
    requests["cancel-h-1"] = ("cancelOrder", shop.back_office("cancelOrder", {
        "orderId": orders["H"]["orderId"], "cancelId": "cancel-h-1", "reason": "Customer changed their mind"},
        "succeeded"))
    stderr = session.close()
    return orders, requests, stderr


def stripe_run(binary, stripe_server, database, scratch):
    """Order P, pending: Stripe charges it, and the answer is lost."""
    server = subprocess.Popen([stripe_server], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, cwd=scratch)
    try:
        hello = json.loads(server.stdout.readline().decode())
        with open(os.path.join(HERE, "config-stripe.yaml.in"), encoding="utf-8") as template:
            text = template.read()
        config = os.path.join(scratch, "config-stripe.yaml")
        with open(config, "w", encoding="utf-8") as out:
            out.write(text.replace("@API_BASE@", hello["baseURL"]).replace("@TRUST_ROOTS@", hello["caFile"]))
        environment = dict(os.environ)
        environment["STRIPE_SECRET_KEY"] = hello["secretKey"]
        session = Session(binary, config, database, NOW_STRIPE, scratch, environment=environment)
        shop = Shop(session)
        # The next charge is executed, then its connection reset before the answer.
        server.stdin.write(b"fault reset charge\n")
        server.stdin.write(b"count\n")
        server.stdin.flush()
        before = json.loads(server.stdout.readline().decode())
        order = shop.place("P", [{"sku": "mug", "quantity": 2}], "standard", ALBANY, VISA, "tok_visa",
                           expect="gateway_unavailable")
        server.stdin.write(b"count\n")
        server.stdin.flush()
        after = json.loads(server.stdout.readline().decode())
        if after["paymentIntents"] != before["paymentIntents"] + 1:
            raise Failure("Stripe did not execute order P's charge: %s then %s" % (before, after))
        # U: authorized and never processed: an unused token, the store's last (a token is purged
        # once expired when a later one is issued), expiring at 15:00.
        unused = shop.place("U", [{"sku": "notebook"}], "standard", ALBANY, VISA, "tok_visa", process_it=False)
        stderr = session.close()
        if hello["secretKey"] in stderr:
            raise Failure("the Stripe test key appeared in payservice's stderr")
        return {"P": order, "U": unused}, stderr
    finally:
        server.stdin.close()
        server.wait(timeout=60)


def checkpoint(database):
    connection = sqlite3.connect(database)
    try:
        busy, _, _ = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            raise Failure("the WAL checkpoint was blocked")
    finally:
        connection.close()
    for suffix in ("-wal", "-shm", "-journal"):
        if os.path.exists(database + suffix):
            raise Failure("%s%s is still there after the checkpoint" % (database, suffix))
    os.chmod(database, 0o600)


def replay_requests(orders, back_office, cursor=None):
    """The replay (README.md says what each checks). `cursor`: the first page's nextCursor, once known."""
    requests = []

    def add(method, params=None):
        request = {"jsonrpc": "2.0", "id": len(requests) + 1, "method": method}
        if params is not None:
            request["params"] = params
        requests.append(request)

    add("listProducts")
    for name in ["A", "B", "C", "D", "E", "X1", "X2", "F", "G", "H"]:
        add("processOrder", orders[name]["process"])
    # The unused token, expired by the replay's clock: invalid_charge_token ("expired", not "unknown").
    add("processOrder", orders["U"]["process"])
    # Used tokens (paid, declined, pending) with another request: -32002.
    add("processOrder", dict(orders["A"]["process"], items=[{"sku": "clock", "quantity": 2}], amount="120.00"))
    add("processOrder", dict(orders["X1"]["process"], shippingMethod="express"))
    add("processOrder", dict(orders["P"]["process"], amount="1.00"))
    add("processOrder", {k: v for k, v in orders["C"]["process"].items() if k != "billingContact"})
    for key in ["rf-b-1", "rf-c-1", "rf-d-1", "rf-e-1", "cap-g-1", "cancel-h-1"]:
        method, params = back_office[key]
        add(method, params)
    # The same keys with other params: -32004.
    add("refundOrder", dict(back_office["rf-b-1"][1], lines=[{"sku": "mug", "quantity": 1, "restock": "return"}]))
    add("refundOrder", dict(back_office["rf-e-1"][1], reason="Another reason"))
    add("refundOrder", dict(back_office["rf-c-1"][1], orderId=orders["A"]["orderId"]))
    add("captureOrder", dict(back_office["cap-g-1"][1], amount="25.00"))
    add("cancelOrder", dict(back_office["cancel-h-1"][1], reason="Another reason"))
    for name in ["A", "B", "C", "D", "E", "F", "G", "H", "P"]:
        add("getOrder", {"orderId": orders[name]["orderId"]})
    # A declined token made no order.
    add("getOrder", {"orderId": orders["X1"]["orderId"]})
    add("listOrders")
    add("listOrders", {"limit": 4})
    if cursor is not None:
        add("listOrders", {"limit": 4, "cursor": cursor})
    for status in ["pending", "authorized", "paid", "partially_refunded", "refunded", "canceled"]:
        add("listOrders", {"status": status})
    add("listOrders", {"createdFrom": NOW_MANUAL, "createdTo": NOW_STRIPE})
    add("listProducts")
    return "".join(line(request) + "\n" for request in requests)


def run_replay(binary, store, text, scratch, config="config.yaml"):
    """The binary's stdout on `text`, on a fresh copy of `store`."""
    directory = tempfile.mkdtemp(dir=scratch)
    copy = os.path.join(directory, "store.sqlite")
    shutil.copyfile(store, copy)
    os.chmod(copy, 0o600)
    return replay_on(binary, copy, text, config)


def replay_on(binary, database, text, config="config.yaml"):
    """The binary's stdout on `text`, on the store `database` (a file or a PostgreSQL URL)."""
    env = dict(os.environ)
    env["PAYSERVICE_ID_KEY"] = ID_KEY
    result = subprocess.run(
        [binary, "--config", os.path.join(HERE, config), "--database", database, "--now", NOW_REPLAY,
         "--back-office", "--quiet"], input=text.encode(), capture_output=True, env=env)
    if result.returncode != 0 or result.stderr:
        raise Failure("replay: exit %d, stderr %s" % (result.returncode, result.stderr.decode(errors="replace")))
    return result.stdout


def three_runs(binary, stripe_server, database, scratch):
    """Runs 1 to 3 on the store `database`; the orders placed and the back-office requests made."""
    orders, back_office, log1 = automatic_run(binary, database, scratch)
    manual_orders, manual_requests, log2 = manual_run(binary, database, scratch)
    orders.update(manual_orders)
    back_office.update(manual_requests)
    pending, log3 = stripe_run(binary, stripe_server, database, scratch)
    orders.update(pending)
    for log in (log1, log2, log3):
        if log:
            raise Failure("payservice wrote to stderr while generating: %s" % log)
    return orders, back_office


def generate(out, binary, stripe_server, scratch):
    database = os.path.join(scratch, "store.sqlite")
    orders, back_office = three_runs(binary, stripe_server, database, scratch)
    checkpoint(database)

    # The first page of listOrders gives the cursor of the second.
    first = run_replay(binary, database, replay_requests(orders, back_office), scratch)
    pages = [json.loads(l) for l in first.decode().splitlines()]
    cursor = [p for p in pages if p.get("result", {}).get("orders") is not None][1]["result"]["nextCursor"]
    requests = replay_requests(orders, back_office, cursor)
    responses = run_replay(binary, database, requests, scratch)
    # Asked again on another copy: the same bytes; and under the manual-capture config too.
    if run_replay(binary, database, requests, scratch) != responses:
        raise Failure("two replays on copies of the store answered differently")
    if run_replay(binary, database, requests, scratch, config="config-manual.yaml") != responses:
        raise Failure("the replay under config-manual.yaml answered differently")

    os.makedirs(out, exist_ok=True)
    shutil.copyfile(database, os.path.join(out, "store.sqlite"))
    os.chmod(os.path.join(out, "store.sqlite"), 0o600)
    with open(os.path.join(out, "requests.jsonl"), "w", encoding="utf-8") as f:
        f.write(requests)
    with open(os.path.join(out, "responses.jsonl"), "wb") as f:
        f.write(responses)
    return orders, back_office, cursor, requests, responses


class PostgresServer:
    """A PostgreSQL server whose user may create databases (a URL like PAYSERVICE_TEST_POSTGRES_URL).
    The password goes to psql, pg_dump and payservice in PGPASSWORD, never on a command line."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        self.user = urllib.parse.unquote(parts.username or "")
        self.password = urllib.parse.unquote(parts.password or "")
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 5432
        self.admin_database = parts.path.lstrip("/") or "postgres"

    def environment(self, database):
        env = dict(os.environ)
        env.update(PGHOST=self.host, PGPORT=str(self.port), PGUSER=self.user, PGPASSWORD=self.password,
                   PGDATABASE=database)
        return env

    def run(self, program, database, *arguments, input=None):
        result = subprocess.run([program] + list(arguments), env=self.environment(database), input=input,
                                capture_output=True)
        if result.returncode != 0:
            raise Failure("%s failed: %s" % (program, result.stderr.decode(errors="replace")))
        return result.stdout

    def psql(self, database, *arguments, input=None):
        return self.run("psql", database, "-X", "-q", "-v", "ON_ERROR_STOP=1", *arguments, input=input)

    def create(self, name):
        self.psql(self.admin_database, "-c", 'CREATE DATABASE "%s"' % name)

    def drop(self, name):
        self.psql(self.admin_database, "-c", 'DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)

    def url(self, name):
        """The --database URL of `name`, its password left to PGPASSWORD."""
        return "postgres://%s@%s:%d/%s" % (urllib.parse.quote(self.user, safe=""), self.host, self.port, name)


def generate_postgres(out, binary, stripe_server, scratch, server, sqlite_fixture):
    """The same three runs on a new PostgreSQL database, dumped as plain SQL (store.pg.sql); the dump,
    loaded into another new database, must answer the replay exactly as store.sqlite does."""
    sqlite_orders, sqlite_back_office, cursor, requests, responses = sqlite_fixture
    name = "payservice_fixture_v8_%d" % os.getpid()
    server.drop(name)
    server.create(name)
    try:
        orders, back_office = three_runs(binary, stripe_server, server.url(name), scratch)
        dump = server.run("pg_dump", name, "--inserts", "--no-owner", "--no-privileges").decode()
    finally:
        server.drop(name)
    if replay_requests(orders, back_office, cursor) != requests:
        raise Failure("the runs on PostgreSQL sent other requests than on SQLite")
    # pg_dump 15.14 and later guard the dump with \restrict and a random key; the fixture is ours,
    # and without them it is the same bytes every time (and loads with any psql).
    dump = "\n".join(l for l in dump.split("\n") if not l.startswith(("\\restrict ", "\\unrestrict ")))
    # The one thing the server stamps with its own clock, not --now: when each migration ran (nothing
    # reads it). Stamped with run 1's clock instead, so that the dump repeats.
    dump, stamped = re.subn(
        r"^(INSERT INTO public\.payservice_migrations VALUES \('(?:[^']|'')*', )'[^']*'\);$",
        r"\1'2026-11-21 12:00:00+00');", dump, flags=re.MULTILINE)
    if stamped != 8:
        raise Failure("expected 8 migrations in the dump, found %d" % stamped)
    loaded = name + "_replay"
    server.drop(loaded)
    server.create(loaded)
    try:
        server.psql(loaded, "-1", input=dump.encode())
        answered = replay_on(binary, server.url(loaded), requests)
        if answered != responses:
            raise Failure("the dump, loaded into PostgreSQL, answers the replay differently from store.sqlite")
        if replay_on(binary, server.url(loaded), requests) != responses:
            raise Failure("the loaded dump answers the replay differently the second time")
    finally:
        server.drop(loaded)
    with open(os.path.join(out, "store.pg.sql"), "w", encoding="utf-8") as f:
        f.write(dump)


def summary(database, scratch):
    # On a copy: a read-only connection to a WAL store leaves -wal and -shm beside it.
    copy = os.path.join(scratch, "summary.sqlite")
    shutil.copyfile(database, copy)
    connection = sqlite3.connect(copy)
    try:
        rows = {}
        for (table,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"):
            rows[table] = connection.execute('SELECT count(*) FROM "%s"' % table).fetchone()[0]
        migrations = [m for (m,) in connection.execute("SELECT identifier FROM grdb_migrations ORDER BY rowid")]
        tokens = connection.execute(
            "SELECT count(*) - count(usedAt), count(result), count(usedAt) - count(result) FROM chargeToken").fetchone()
        rows["chargeToken (unused, used with a result, used without one)"] = tokens
        rows["stock"] = connection.execute("SELECT group_concat(sku || ' ' || quantityOnHand, ', ') FROM stock").fetchone()[0]
        return rows, migrations
    finally:
        connection.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "payservice"))
    parser.add_argument("--stripe-server", default=os.path.join(ROOT, ".build", "release", "stripe-test-server"))
    parser.add_argument("--check", action="store_true",
                        help="regenerate in a temporary directory and compare with the committed files")
    parser.add_argument("--postgres", metavar="URL", default=os.environ.get("PAYSERVICE_FIXTURE_POSTGRES_URL"),
                        help="also write store.pg.sql from a PostgreSQL server (a user with CREATEDB); "
                             "default $PAYSERVICE_FIXTURE_POSTGRES_URL")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "out") if args.check else HERE
        binary = os.path.abspath(args.binary)
        stripe_server = os.path.abspath(args.stripe_server)
        fixture = generate(out, binary, stripe_server, scratch)
        orders = fixture[0]
        files = ["store.sqlite", "requests.jsonl", "responses.jsonl"]
        if args.postgres:
            server = PostgresServer(args.postgres)
            # payservice takes the password from PGPASSWORD too.
            os.environ["PGPASSWORD"] = server.password
            generate_postgres(out, binary, stripe_server, scratch, server, fixture)
            files.append("store.pg.sql")
        if args.check:
            differ = [name for name in files
                      if not filecmp.cmp(os.path.join(out, name), os.path.join(HERE, name), shallow=False)]
            if differ:
                print("differs from the committed fixture: " + ", ".join(differ), file=sys.stderr)
                sys.exit(1)
            print("the fixture regenerates byte for byte")
            return
        store = os.path.join(HERE, "store.sqlite")
        rows, migrations = summary(store, scratch)
    print("orders: " + ", ".join("%s %s" % (name, order["orderId"]) for name, order in orders.items()))
    print("migrations: %d, the last %r" % (len(migrations), migrations[-1]))
    print("rows: " + "; ".join("%s: %s" % item for item in rows.items()))
    print("store.sqlite mode %o, sha256 %s" % (
        stat.S_IMODE(os.stat(store).st_mode), hashlib.sha256(open(store, "rb").read()).hexdigest()))


if __name__ == "__main__":
    try:
        main()
    except Failure as failure:
        print("make.py: %s" % failure, file=sys.stderr)
        sys.exit(1)
