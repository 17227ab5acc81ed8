#!/usr/bin/env python3
"""payservice's own benchmark: throughput, interactive latency, orders/s and memory, so regressions
show in review. Standard library only.

usage: Benchmarks/bench.py [--binary PATH] [--requests N] [--orders N] [--stripe-server PATH] [--quick] [--flat]
                           [--paths] [--path-sizes SMALL,LARGE] [--path-runs R] [--strict] [--postgres]

  --binary    the payservice to measure (default: .build/release/payservice; build it with
              `swift build -c release --product payservice`)
  --requests  pipelined computeSummaryItems requests (default 200,000)
  --orders    pipelined processOrder requests (default 5,000)
  --stripe-server  the Stripe test server process (default: .build/release/stripe-test-server;
              `swift build -c release --product stripe-test-server`); skipped when missing
  --flat      also run 10k, 100k and 1M requests and report cost per request and peak RSS, then the
              paths below
  --paths     only the paths below (not throughput, interactive, orders, stripe); about 5 minutes
  --path-sizes  the two sizes of the paths (default 10000,100000; 500,5000 with --quick)
  --path-runs  time each path and size R times and keep the fastest (default 1, and at least 3 for
              the tax-inclusive runs, which take a second or less; each run of refunds on its own copy
              of the placed orders, each Stripe run with a fresh server): steadier verdicts on a busy
              machine, R times as long
  --strict    exit 1 when a path is GROWING
  --quick     small sizes, for a smoke run (with --paths: 500 and 5,000 requests, about 12 s)
  --postgres  only the pg lines below (PAYSERVICE_BENCH_POSTGRES_URL must be set)

Reports:
  throughput      pipelined computeSummaryItems, requests/s (median of 3 runs) and peak RSS
  interactive     one request at a time, waiting for each answer: p50 and p99 round trip
  orders          pipelined processOrder on a store file (synchronous=FULL, WAL): orders/s with
                  group commit, with --no-group-commit (one fsync'ed transaction per order), the
                  ratio, and the p50 round trip of a lone order (an interactive client); the same
                  on PostgreSQL when PAYSERVICE_BENCH_POSTGRES_URL names a server (a user with
                  CREATEDB; psql must be installed), on databases created for the run and dropped
  pg              (with PAYSERVICE_BENCH_POSTGRES_URL) processOrder on PostgreSQL beside pgbench's write
                  transactions on the same server, in the same run, at loopback and with 0.5 ms added
                  (Benchmarks/pgdelay.c, compiled with cc): one process pipelined, a lone checkout and a
                  lone order, 8 processes on one sku and on their own skus, and the round trips of an
                  order and of getOrder, listOrders and listProducts (Benchmarks/postgres_bench.py)
  stripe          pipelined processOrder charged through the Stripe test server (TLS on loopback),
                  with 0 ms and with 50 ms added to each of its answers: orders/s, and at 50 ms the
                  multiple of what one call at a time allows (1 / 50 ms = 20 orders/s); fails under
                  10x, or when the server did not create exactly one PaymentIntent per order
  flat            (with --flat) microseconds per request and peak RSS at 10k, 100k, 1M requests
  path            (with --paths or --flat) the paths after pricing (issue 22), each pipelined at
                  10k and 100k requests: microseconds per request (the whole run, start-up included,
                  over the requests; the fastest run when there are several) and peak RSS, one line
                  per path and size:
                    tax-inclusive NAME  computeSummaryItems against examples/NAME.yaml (uk-vat,
                                        jp-shop) with its stock raised: a mix of carts from its
                                        catalog, its shipping methods and coupons, and contacts of
                                        its country; every answer a result with a taxBreakdown
                    refundOrder         on a store file of N orders placed first with --back-office
                                        and a pinned clock (not timed), one refund per order under
                                        its own refundId (a unit back on the shelf, a line never
                                        shipped, half the amount, the whole amount); all succeed
                    listOrders          N pages of that store afterwards (the setup collects every
                                        nextCursor, not timed): no status, partially_refunded or
                                        refunded, limits 1 to 100 or the default, from the top, a
                                        cursor anywhere or a creation window; all results
                    processOrder via Stripe  N orders through a fresh Stripe test server at 0 ms
                                        (the authorizations not timed), one PaymentIntent each;
                                        when the larger size would take over 3 minutes (projected
                                        from the smaller), half of it, and the line says so; the
                                        line adds the test server's own CPU time per order, to
                                        tell its share of a change from payservice's
                  then a verdict per path: the cost per request at the larger size over the smaller,
                  "flat" at most 1.25x, otherwise "GROWING" (exit 1 only with --strict). The bench
                  stops with the request and answer when an answer is not what it expects.
"""
import decimal
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import postgres_bench

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "bench-config.yaml")
NOW = "2026-11-21T12:00:00Z"
EXAMPLES = os.path.join(HERE, "..", "examples")
STOCK = 100000000  # quantityOnHand in the configs the bench writes: no run sells out
US_CONTACT = {"givenName": "Ada", "familyName": "Lovelace", "emailAddress": "ada@example.com",
              "addressLines": ["1 Infinite Loop"], "locality": "Cupertino", "administrativeArea": "CA",
              "postalCode": "95014", "countryCode": "US"}


def option(name, default):
    args = sys.argv[1:]
    return args[args.index(name) + 1] if name in args else default


def pricing_requests(n, seed=42):
    """A deterministic mix of carts, contacts and shipping methods."""
    skus = ["clock", "lamp", "pen", "mug", "chair", "desk", "cable", "notebook"]
    contacts = [
        None,
        {"locality": "Beverly Hills", "administrativeArea": "CA", "postalCode": "90210", "countryCode": "US"},
        {"locality": "New York", "administrativeArea": "NY", "postalCode": "10001", "countryCode": "US"},
        {"locality": "Seattle", "administrativeArea": "WA", "postalCode": "98101", "countryCode": "US"},
        {"locality": "Toronto", "administrativeArea": "ON", "postalCode": "M5V", "countryCode": "CA"},
    ]
    return summary_requests(n, random.Random(seed), skus, ["free", "express", "overnight", "intl"], contacts)


def summary_requests(n, rng, skus, methods, contacts, coupons=None):
    """n computeSummaryItems lines: carts of one to three of `skus`, a contact and a method drawn
    from `contacts` and `methods` (or none), and, when `coupons` is given, sometimes a coupon."""
    lines = []
    for i in range(n):
        params = {"items": [{"sku": s, "quantity": rng.randint(1, 4)}
                            for s in rng.sample(skus, rng.randint(1, min(3, len(skus))))]}
        contact, method = rng.choice(contacts), rng.choice([None] + methods)
        coupon = rng.choice([None, None, None] + coupons) if coupons is not None else None
        if contact:
            params["shippingContact"] = contact
        if method:
            params["shippingMethod"] = method
        if coupon:
            params["couponCode"] = coupon
        lines.append(json.dumps({"jsonrpc": "2.0", "id": i, "method": "computeSummaryItems", "params": params},
                                separators=(",", ":")))
    return "\n".join(lines) + "\n"


def run(binary, args, stdin_path, stdout_path=os.devnull, env=None):
    """Runs payservice on a file; returns (seconds, peak RSS in MB, exit code).

    Peak RSS comes from /usr/bin/time: a child forked straight from this (large) Python process
    would count the parent's pages it shared before exec."""
    with open(stdin_path, "rb") as fin, open(stdout_path, "wb") as fout:
        start = time.perf_counter()
        process = subprocess.run(["/usr/bin/time", "-f", "MAXRSS %M", binary] + args, stdin=fin, stdout=fout,
                                 stderr=subprocess.PIPE, env=env)
        elapsed = time.perf_counter() - start
    rss = [line for line in process.stderr.decode(errors="replace").splitlines() if line.startswith("MAXRSS ")]
    return elapsed, int(rss[-1].split()[1]) / 1024 if rss else float("nan"), process.returncode


def interactive(binary, args, lines, warmup=50):
    """Round trips of one request at a time; returns the list of seconds per round trip."""
    process = subprocess.Popen([binary] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    times = []
    for index, line in enumerate(lines):
        start = time.perf_counter()
        process.stdin.write(line.encode() + b"\n")
        process.stdin.flush()
        answer = process.stdout.readline()
        if not answer:
            raise SystemExit("payservice closed its output")
        if index >= warmup:
            times.append(time.perf_counter() - start)
    process.stdin.close()
    process.wait()
    return times


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


class SQLiteStores:
    """Store files in the work directory; a copy of a file is a copy of its store."""
    name = "SQLite"

    def __init__(self, work):
        self.work = work

    def fresh(self, name):
        return os.path.join(self.work, name + ".sqlite")

    def copy(self, source, name):
        path = self.fresh(name)
        for suffix in ["", "-wal", "-shm"]:
            if os.path.exists(source + suffix):
                shutil.copyfile(source + suffix, path + suffix)
        return path

    def close(self):
        pass


class PostgresStores:
    """Databases on a PostgreSQL server, created for the run (a copy is CREATE DATABASE ... TEMPLATE)."""
    name = "PostgreSQL"

    def __init__(self, url):
        self.server = url.rsplit("/", 1)[0]
        self.admin = url
        self.prefix = f"payservice_bench_{os.getpid()}_"
        self.created = []

    def sql(self, statement):
        subprocess.run(["psql", "--no-psqlrc", "--quiet", "-v", "ON_ERROR_STOP=1", self.admin, "-c", statement],
                       check=True, stdout=subprocess.DEVNULL)

    def fresh(self, name, template=None):
        database = self.prefix + name
        self.sql(f'CREATE DATABASE "{database}"' + (f' TEMPLATE "{template}"' if template else ""))
        self.created.append(database)
        return f"{self.server}/{database}"

    def copy(self, source, name):
        return self.fresh(name, template=source.rsplit("/", 1)[1])

    def close(self):
        for database in reversed(self.created):
            self.sql(f'DROP DATABASE IF EXISTS "{database}"')


def orders_benchmark(binary, work, count, stores):
    """Authorizes `count` carts, then charges them pipelined with and without group commit."""
    contact = {"givenName": "Ada", "familyName": "Lovelace", "emailAddress": "ada@example.com",
               "addressLines": ["1 Infinite Loop"], "locality": "Cupertino", "administrativeArea": "CA",
               "postalCode": "95014", "countryCode": "US"}
    rng = random.Random(7)
    carts = [[{"sku": s, "quantity": rng.randint(1, 3)} for s in rng.sample(["clock", "lamp", "mug", "pen"], 2)]
             for _ in range(count + 200)]
    authorize = os.path.join(work, "authorize.jsonl")
    with open(authorize, "w") as f:
        for i, items in enumerate(carts):
            f.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "authorizePayment", "params": {
                "items": items, "shippingMethod": "free", "payment": {"token": {
                    "paymentData": "tok_visa", "transactionIdentifier": f"T{i}",
                    "paymentMethod": {"displayName": "Visa 0492", "network": "visa", "type": "credit"}},
                    "shippingContact": contact, "billingContact": contact}}}, separators=(",", ":")) + "\n")
    base = stores.fresh("base")
    answers = os.path.join(work, "authorized.jsonl")
    common = ["--config", CONFIG, "--now", NOW, "--quiet"]
    run(binary, common + ["--database", base], authorize, answers)
    orders = []
    with open(answers) as f:
        for line, items in zip(f, carts):
            result = json.loads(line)["result"]
            orders.append(json.dumps({"jsonrpc": "2.0", "id": len(orders), "method": "processOrder", "params": {
                "chargeToken": result["chargeToken"], "items": items, "shippingMethod": "free",
                "shippingContact": contact, "amount": result["amount"], "currencyCode": "USD"}},
                separators=(",", ":")))
    pipelined = os.path.join(work, "orders.jsonl")
    with open(pipelined, "w") as f:
        f.write("\n".join(orders[:count]) + "\n")

    rates = {}
    for label, flag in [("grouped", "--group-commit"), ("alone", "--no-group-commit")]:
        database = stores.copy(base, label)
        out = os.path.join(work, f"{label}.out")
        seconds, _, code = run(binary, common + [flag, "--database", database], pipelined, out)
        with open(out) as f:
            succeeded = sum('"status":"succeeded"' in line for line in f)
        if code != 0 or succeeded != count:
            raise SystemExit(f"orders ({stores.name}, {label}): exit {code}, {succeeded} of {count} succeeded")
        rates[label] = count / seconds
    lone = interactive(binary, common + ["--database", stores.copy(base, "lone")], orders[count:count + 200], warmup=20)
    return rates, lone


def stocked(config_text):
    """A config's text with every product's quantityOnHand raised, so that no run sells out."""
    return re.sub(r"quantityOnHand:\s*\d+", "quantityOnHand: %d" % STOCK, config_text)


def start_stripe_server(server_binary, work, name="stripe-config.yaml"):
    """Starts the Stripe test server; returns (server process, a bench config charging through it, environment)."""
    server = subprocess.Popen([server_binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        info = json.loads(server.stdout.readline())
        with open(CONFIG) as f:
            config = stocked(f.read())
        sandbox = "gateway:\n  kind: sandbox\n"
        assert sandbox in config, "bench-config.yaml's gateway section changed"
        config = config.replace(sandbox, "gateway:\n  kind: stripe\n  apiBase: %s\n  trustRoots: %s\n"
                                "  maxConcurrentCalls: 64\n  maxRetries: 2\n" % (info["baseURL"], info["caFile"]))
        stripe_config = os.path.join(work, name)
        with open(stripe_config, "w") as f:
            f.write(config)
    except BaseException:
        stop_stripe_server(server)
        raise
    return server, stripe_config, dict(os.environ, STRIPE_SECRET_KEY=info["secretKey"])


def stop_stripe_server(server):
    server.stdin.close()
    server.wait()


def stripe_payment_intents(server):
    """How many PaymentIntents the test server has created."""
    server.stdin.write("count\n")
    server.stdin.flush()
    return json.loads(server.stdout.readline())["paymentIntents"]


def stripe_orders(binary, work, common, environment, count, label):
    """Authorizes `count` one-mug carts through a Stripe config (not timed); returns the path of their
    pipelined processOrder requests."""
    items = [{"sku": "mug", "quantity": 1}]
    authorize = os.path.join(work, f"stripe-authorize-{label}.jsonl")
    with open(authorize, "w") as f:
        for i in range(count):
            f.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "authorizePayment", "params": {
                "items": items, "shippingMethod": "free", "payment": {"token": {
                    "paymentData": "pm_card_visa", "transactionIdentifier": f"T{i}",
                    "paymentMethod": {"displayName": "Visa 0492", "network": "visa", "type": "credit"}},
                    "shippingContact": US_CONTACT, "billingContact": US_CONTACT}}}, separators=(",", ":")) + "\n")
    answers = os.path.join(work, f"stripe-authorized-{label}.jsonl")
    with open(authorize) as fin, open(answers, "w") as fout:
        subprocess.run([binary] + common, stdin=fin, stdout=fout, env=environment, check=True)
    pipelined = os.path.join(work, f"stripe-orders-{label}.jsonl")
    with open(answers) as f, open(pipelined, "w") as out:
        for i, line in enumerate(f):
            result = json.loads(line)["result"]
            out.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "processOrder", "params": {
                "chargeToken": result["chargeToken"], "items": items, "shippingMethod": "free",
                "shippingContact": US_CONTACT, "amount": result["amount"], "currencyCode": "USD"}},
                separators=(",", ":")) + "\n")
    os.remove(authorize)
    os.remove(answers)
    return pipelined


def stripe_benchmark(binary, server_binary, work, count):
    """Charges `count` pipelined orders through the Stripe test server at 0 and 50 ms latency."""
    server, stripe_config, environment = start_stripe_server(server_binary, work)
    try:
        rates = {}
        for latency, now in [(0, "2026-11-21T12:00:00Z"), (50, "2026-11-21T12:00:01Z")]:
            database = os.path.join(work, f"stripe-{latency}.sqlite")
            common = ["--config", stripe_config, "--now", now, "--quiet", "--database", database]
            pipelined = stripe_orders(binary, work, common, environment, count, str(latency))
            server.stdin.write(f"latency {latency}\n")
            server.stdin.flush()
            out = os.path.join(work, f"stripe-{latency}.out")
            started = time.perf_counter()
            with open(pipelined) as fin, open(out, "w") as fout:
                code = subprocess.run([binary] + common, stdin=fin, stdout=fout, env=environment).returncode
            seconds = time.perf_counter() - started
            with open(out) as f:
                succeeded = sum('"status":"succeeded"' in line for line in f)
            if code != 0 or succeeded != count:
                raise SystemExit(f"stripe orders at {latency} ms: exit {code}, {succeeded} of {count} succeeded")
            rates[latency] = count / seconds
        created = stripe_payment_intents(server)
        if created != 2 * count:
            raise SystemExit(f"stripe: the test server created {created} PaymentIntents for {2 * count} orders")
    finally:
        stop_stripe_server(server)
    return rates


# The example shops' countries: contacts as the payment sheet sends them before authorization (redacted:
# no name, street or full postcode), a bare country, no contact yet, and a full one.
INCLUSIVE_CONTACTS = {
    "GB": [None, {"countryCode": "GB"},
           {"locality": "London", "postalCode": "SW1A", "countryCode": "GB"},
           {"locality": "Manchester", "postalCode": "M1", "countryCode": "GB"},
           {"givenName": "Ada", "familyName": "Lovelace", "emailAddress": "ada@example.co.uk",
            "addressLines": ["10 Downing St"], "locality": "London", "postalCode": "SW1A 2AA", "countryCode": "GB"}],
    "JP": [None, {"countryCode": "JP"},
           {"locality": "Chiyoda-ku", "administrativeArea": "Tokyo", "postalCode": "100-0001", "countryCode": "JP"},
           {"locality": "Osaka-shi", "administrativeArea": "Osaka", "postalCode": "530-0001", "countryCode": "JP"},
           {"givenName": "Taro", "familyName": "Yamada", "emailAddress": "taro@example.jp",
            "addressLines": ["1-1 Chiyoda"], "locality": "Chiyoda-ku", "administrativeArea": "Tokyo",
            "postalCode": "100-0001", "countryCode": "JP"}],
}
INCLUSIVE_SHOPS = ["uk-vat", "jp-shop"]
GROWING_AT = 1.25  # cost per request at the larger size over the smaller one above which a path is GROWING
STRIPE_BUDGET = 180  # seconds the largest Stripe run may take (projected from the smaller one)


def config_sections(text):
    """A config's top-level sections, key to text: enough of YAML to read the example shops' skus,
    shipping methods and coupons (the bench runs without a YAML library)."""
    sections, key = {}, None
    for line in text.splitlines():
        match = re.match(r"([A-Za-z]\w*):", line)
        if match:
            key = match.group(1)
            sections[key] = line[match.end():] + "\n"
        elif key:
            sections[key] += line + "\n"
    return sections


def inclusive_shop(work, name):
    """examples/NAME.yaml with its stock raised, written to the work directory; returns (config, skus,
    shipping methods, coupon codes, contacts)."""
    with open(os.path.join(EXAMPLES, name + ".yaml")) as f:
        text = f.read()
    sections = config_sections(text)
    skus = re.findall(r"\bsku:\s*\"?([\w.-]+)", sections.get("catalog", ""))
    methods = re.findall(r"\bidentifier:\s*\"?([\w.-]+)", sections.get("shipping", ""))
    coupons = re.findall(r"\bcode:\s*\"?([\w.-]+)", sections.get("coupons", ""))
    country = re.search(r"\bcountryCode:\s*\"?([A-Z]{2})", sections.get("merchant", ""))
    if not skus or not country or country.group(1) not in INCLUSIVE_CONTACTS \
            or not re.search(r"pricesIncludeTax:\s*true", sections.get("tax", "")):
        raise SystemExit(f"paths: examples/{name}.yaml no longer reads as a tax-inclusive shop of "
                         f"{', '.join(INCLUSIVE_CONTACTS)} (skus {skus}, merchant country "
                         f"{country.group(1) if country else None}); update INCLUSIVE_SHOPS in bench.py")
    config = os.path.join(work, name + ".yaml")
    with open(config, "w") as f:
        f.write(stocked(text))
    return config, skus, methods, coupons, INCLUSIVE_CONTACTS[country.group(1)]


def inclusive_requests(n, shop, seed):
    """A deterministic mix of computeSummaryItems carts from a tax-inclusive shop's catalog."""
    _, skus, methods, coupons, contacts = shop
    return summary_requests(n, random.Random(seed), skus, methods, contacts, coupons)


def check_answers(what, requests_path, answers_path, code, count, good):
    """Stops the bench unless payservice exited 0 and answered `count` lines that all pass `good`."""
    answered = 0
    with open(answers_path) as f:
        for answered, line in enumerate(f, 1):
            if not good(line):
                with open(requests_path) as r:
                    request = next(l for index, l in enumerate(r, 1) if index == answered)
                raise SystemExit(f"paths, {what}: answer {answered} of {count} is not what the bench expects.\n"
                                 f"  request: {request.strip()[:600]}\n  answer:  {line.strip()[:600]}")
    if code != 0 or answered != count:
        raise SystemExit(f"paths, {what}: payservice exited {code} after {answered} of {count} answers")


def place_orders(binary, work, count, label):
    """Places `count` orders on a fresh store file, with the back office and a pinned clock (not timed);
    returns (config, database, [(orderId, items, amount)])."""
    config = os.path.join(work, "back-office-config.yaml")
    with open(CONFIG) as f, open(config, "w") as out:
        out.write(stocked(f.read()))
    rng = random.Random(count)
    skus = ["clock", "lamp", "pen", "mug", "cable", "notebook"]
    contacts = [US_CONTACT, dict(US_CONTACT, addressLines=["1 State St"], locality="Albany",
                                 administrativeArea="NY", postalCode="12207")]
    carts = []
    for _ in range(count):
        carts.append(([{"sku": s, "quantity": rng.randint(1, 3)} for s in rng.sample(skus, rng.randint(1, 3))],
                      rng.choice(["free", "express"]), rng.choice(contacts)))
    database = os.path.join(work, f"back-office-{label}.sqlite")
    common = ["--config", config, "--database", database, "--now", NOW, "--quiet", "--back-office"]
    authorize = os.path.join(work, f"back-office-authorize-{label}.jsonl")
    with open(authorize, "w") as f:
        for i, (items, method, contact) in enumerate(carts):
            f.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "authorizePayment", "params": {
                "items": items, "shippingMethod": method, "payment": {"token": {
                    "paymentData": "tok_visa", "transactionIdentifier": f"BO{label}-{i}",
                    "paymentMethod": {"displayName": "Visa 0492", "network": "visa", "type": "credit"}},
                    "shippingContact": contact, "billingContact": contact}}}, separators=(",", ":")) + "\n")
    answers = os.path.join(work, f"back-office-authorized-{label}.jsonl")
    _, _, code = run(binary, common, authorize, answers)
    check_answers("authorizePayment (setup)", authorize, answers, code, count, lambda l: '"chargeToken"' in l)
    place = os.path.join(work, f"back-office-orders-{label}.jsonl")
    with open(answers) as f, open(place, "w") as out:
        for i, (line, (items, method, contact)) in enumerate(zip(f, carts)):
            result = json.loads(line)["result"]
            out.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "processOrder", "params": {
                "chargeToken": result["chargeToken"], "items": items, "shippingMethod": method,
                "shippingContact": contact, "amount": result["amount"], "currencyCode": "USD"}},
                separators=(",", ":")) + "\n")
    placed = os.path.join(work, f"back-office-placed-{label}.jsonl")
    _, _, code = run(binary, common, place, placed)
    check_answers("processOrder (setup)", place, placed, code, count, lambda l: '"status":"succeeded"' in l)
    orders = []
    with open(placed) as f:
        for line, (items, _, _) in zip(f, carts):
            result = json.loads(line)["result"]
            orders.append((result["orderId"], items, result["amount"]))
    for path in [authorize, answers, place, placed]:
        os.remove(path)
    return config, database, orders


def refund_requests(orders, label):
    """One refundOrder per order, each under its own refundId: a unit of a line back on the shelf, every
    unit of a line never shipped, half the amount as goodwill, or the whole amount (the order ends refunded)."""
    lines = []
    for i, (order_id, items, amount) in enumerate(orders):
        params = {"orderId": order_id, "refundId": f"rf-{label}-{i}"}
        kind = i % 4
        if kind == 0:
            params.update(lines=[{"sku": items[0]["sku"], "quantity": 1, "restock": "return"}], reason="Arrived broken")
        elif kind == 1:
            params.update(lines=[{"sku": items[-1]["sku"], "quantity": items[-1]["quantity"], "restock": "cancel"}])
        elif kind == 2:
            partial = (decimal.Decimal(amount) / 2).quantize(decimal.Decimal("0.01"), rounding=decimal.ROUND_DOWN)
            params.update(amount=str(partial), reason="Late delivery")
        else:
            params.update(amount=amount)
        lines.append(json.dumps({"jsonrpc": "2.0", "id": i, "method": "refundOrder", "params": params},
                                separators=(",", ":")))
    return "\n".join(lines) + "\n"


LIST_FILTERS = [{}, {"status": "partially_refunded"}, {"status": "refunded"}]


def list_cursors(binary, common):
    """Pages through the store 100 orders at a time under each of LIST_FILTERS (not timed); returns each
    filter's nextCursors with 100 orders or more after them, so that timed requests can start anywhere in
    the list and still get full pages."""
    process = subprocess.Popen([binary] + common, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    cursors = []
    try:
        for index, listed in enumerate(LIST_FILTERS):
            found, cursor = [], None
            while True:
                params = dict(listed, limit=100, **({"cursor": cursor} if cursor else {}))
                process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": index, "method": "listOrders",
                                                "params": params}).encode() + b"\n")
                process.stdin.flush()
                answer = json.loads(process.stdout.readline() or b"null")
                if not answer or "result" not in answer:
                    raise SystemExit(f"paths, listOrders (setup): {params} answered {answer}")
                cursor = answer["result"]["nextCursor"]
                if not cursor:
                    break
                found.append(cursor)
            # Not the last cursor: the page after it may be short, and a page's cost is its length.
            cursors.append(found[:-1])
    finally:
        process.stdin.close()
        process.wait()
    return cursors


def list_requests(n, cursors, seed):
    """A deterministic mix of listOrders pages: every status filter the refunds left, page sizes 1 to 100
    (or the default), from the top, from a cursor anywhere in the list, or within a creation window."""
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        which = rng.randrange(len(LIST_FILTERS))
        params = dict(LIST_FILTERS[which])
        limit = rng.choice([None, 1, 10, 20, 50, 100])
        if limit:
            params["limit"] = limit
        start = rng.random()
        if start < 0.5 and cursors[which]:
            params["cursor"] = rng.choice(cursors[which])
        elif start < 0.6:
            params.update(createdFrom=NOW, createdTo="2026-11-21T12:00:01Z")
        lines.append(json.dumps({"jsonrpc": "2.0", "id": i, "method": "listOrders", "params": params},
                                separators=(",", ":")))
    return "\n".join(lines) + "\n"


def stripe_path(binary, server_binary, work, count):
    """`count` pipelined orders through a fresh Stripe test server at 0 ms (the authorizations not timed);
    returns (seconds, peak RSS in MB, the test server's CPU seconds meanwhile)."""
    server, config, environment = start_stripe_server(server_binary, work, f"stripe-path-{count}.yaml")
    database = os.path.join(work, f"stripe-path-{count}.sqlite")
    try:
        common = ["--config", config, "--now", NOW, "--quiet", "--database", database]
        pipelined = stripe_orders(binary, work, common, environment, count, f"path-{count}")
        server.stdin.write("latency 0\n")
        server.stdin.flush()
        out = os.path.join(work, f"stripe-path-{count}.out")
        server_cpu = cpu_seconds(server.pid)
        seconds, rss, code = run(binary, common, pipelined, out, env=environment)
        server_cpu = cpu_seconds(server.pid) - server_cpu
        check_answers("processOrder through Stripe", pipelined, out, code, count,
                      lambda l: '"status":"succeeded"' in l)
        created = stripe_payment_intents(server)
        if created != count:
            raise SystemExit(f"paths, Stripe: the test server created {created} PaymentIntents for {count} orders")
        os.remove(out)
        os.remove(pipelined)
    finally:
        stop_stripe_server(server)
        remove_store(database)
    return seconds, rss, server_cpu


def cpu_seconds(pid):
    """User and system CPU seconds of a running process so far (Linux /proc; NaN elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def remove_store(database):
    for suffix in ["", "-wal", "-shm"]:
        if os.path.exists(database + suffix):
            os.remove(database + suffix)


def paths_benchmark(binary, server_binary, work, sizes, runs=1):
    """Cost per request of the paths after pricing at two sizes (issue 22), each the fastest of `runs`
    runs; returns the paths that grew."""
    small, large = sizes
    costs = {}

    def report(path, size, results, note=""):
        seconds, rss = min(seconds for seconds, _ in results), max(rss for _, rss in results)
        costs.setdefault(path, {})[size] = seconds / size
        fastest = f", fastest of {len(results)}" if len(results) > 1 else ""
        print(f"path {path:<26} {size:>9,} requests: {seconds / size * 1e6:8.2f} us/request, "
              f"peak RSS {rss:6.1f} MB{fastest}{note}", flush=True)
        return seconds

    def timed(path, size, args, requests, good):
        answers = os.path.join(work, "path-answers.jsonl")
        seconds, rss, code = run(binary, args, requests, answers)
        check_answers(f"{path} at {size:,}", requests, answers, code, size, good)
        os.remove(answers)
        return seconds, rss

    for name in INCLUSIVE_SHOPS:
        shop = inclusive_shop(work, name)
        for size in sizes:
            requests = os.path.join(work, f"inclusive-{name}-{size}.jsonl")
            with open(requests, "w") as f:
                f.write(inclusive_requests(size, shop, seed=size))
            args = ["--config", shop[0], "--database", ":memory:", "--now", NOW, "--quiet"]
            report(f"tax-inclusive {name}", size, [timed(
                f"tax-inclusive {name}", size, args, requests,
                lambda l: '"result":{' in l and '"taxBreakdown":[' in l and '"errors":[{' not in l)
                for _ in range(max(runs, 3))])  # a second or less each: three runs, as for throughput
            os.remove(requests)

    for size in sizes:
        config, placed, orders = place_orders(binary, work, size, str(size))
        requests = os.path.join(work, f"refunds-{size}.jsonl")
        with open(requests, "w") as f:
            f.write(refund_requests(orders, str(size)))
        results, stores = [], []
        for attempt in range(runs):  # each run refunds a copy of the placed orders
            stores.append(SQLiteStores(work).copy(placed, f"refunds-{size}-{attempt}"))
            results.append(timed("refundOrder", size, ["--config", config, "--database", stores[-1], "--now", NOW,
                                                       "--quiet", "--back-office"], requests,
                                 lambda l: '"result":{"status":"succeeded"' in l))
            if attempt:
                remove_store(stores[-1])
        report("refundOrder", size, results)
        remove_store(placed)
        common = ["--config", config, "--database", stores[0], "--now", NOW, "--quiet", "--back-office"]
        requests = os.path.join(work, f"list-{size}.jsonl")
        with open(requests, "w") as f:
            f.write(list_requests(size, list_cursors(binary, common), seed=size))
        report("listOrders", size, [timed("listOrders", size, common, requests,
                                          lambda l: '"result":{"orders":[' in l) for _ in range(runs)])
        remove_store(stores[0])

    def stripe(count, note=""):
        results = [stripe_path(binary, server_binary, work, count) for _ in range(runs)]
        server_cpu = min(results)[2]  # the fastest run's
        return report("processOrder via Stripe", count, [result[:2] for result in results],
                      f", test server CPU {server_cpu / count * 1e6:.0f} us/order{note}")

    if os.path.exists(server_binary):
        seconds = stripe(small)
        if seconds * large / small > STRIPE_BUDGET:
            stripe(large // 2, f" ({large // 2:,}, not {large:,}: {large:,} would take about "
                               f"{seconds * large / small:.0f} s, over the {STRIPE_BUDGET} s budget)")
        else:
            stripe(large)
    else:
        print("path processOrder via Stripe: skipped (swift build -c release --product stripe-test-server, "
              "or --stripe-server PATH)")

    growing = []
    for path, cost in costs.items():
        (first, a), (last, b) = sorted(cost.items())[0], sorted(cost.items())[-1]
        ratio = b / a
        verdict = "flat" if ratio <= GROWING_AT else "GROWING"
        if verdict == "GROWING":
            growing.append(path)
        print(f"verdict {path:<23} {verdict}: {ratio:.3f}x the cost per request at {last:,} as at {first:,} "
              f"({'over' if ratio > GROWING_AT else 'at most'} {GROWING_AT:.2f}x)")
    return growing


def main():
    if "-h" in sys.argv or "--help" in sys.argv:
        print(__doc__)
        return
    binary = os.path.abspath(option("--binary", os.path.join(HERE, "..", ".build", "release", "payservice")))
    server_binary = os.path.abspath(option("--stripe-server", os.path.join(HERE, "..", ".build", "release",
                                                                    "stripe-test-server")))
    quick = "--quick" in sys.argv
    paths_only = "--paths" in sys.argv
    n = int(option("--requests", 20000 if quick else 200000))
    order_count = int(option("--orders", 500 if quick else 5000))
    path_sizes = [int(size) for size in option("--path-sizes", "500,5000" if quick else "10000,100000").split(",")]
    path_runs = int(option("--path-runs", 1))
    if len(path_sizes) != 2 or not 0 < path_sizes[0] < path_sizes[1]:
        raise SystemExit("--path-sizes takes two sizes, the smaller first: --path-sizes 10000,100000")
    growing = []
    work = tempfile.mkdtemp(prefix="payservice-bench-")
    try:
        memory = ["--config", CONFIG, "--database", ":memory:", "--now", NOW]
        print(f"machine            {os.cpu_count()} CPUs, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB")
        if "--postgres" in sys.argv:
            if not os.environ.get("PAYSERVICE_BENCH_POSTGRES_URL"):
                raise SystemExit("--postgres needs PAYSERVICE_BENCH_POSTGRES_URL")
            stores = PostgresStores(os.environ["PAYSERVICE_BENCH_POSTGRES_URL"])
            try:
                postgres_bench.report(postgres_bench.measure(binary, stores, CONFIG, NOW, work, quick, percentile))
            finally:
                stores.close()
        elif not paths_only:
            measure_all(binary, server_binary, work, quick, n, order_count, memory)

        if "--flat" in sys.argv:
            for size in ([10000, 100000] if quick else [10000, 100000, 1000000]):
                path = os.path.join(work, f"flat-{size}.jsonl")
                with open(path, "w") as f:
                    f.write(pricing_requests(size, seed=size))
                seconds, rss, _ = run(binary, memory, path)
                print(f"flat               {size:>9,} requests: {seconds / size * 1e6:.2f} us/request, peak RSS {rss:.1f} MB")
        if paths_only or "--flat" in sys.argv:
            growing = paths_benchmark(binary, server_binary, work, path_sizes, path_runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if growing and "--strict" in sys.argv:
        raise SystemExit(f"paths GROWING (over {GROWING_AT:.2f}x): {', '.join(growing)}")


def measure_all(binary, server_binary, work, quick, n, order_count, memory):
    """Throughput, interactive round trips, orders and orders through Stripe."""
    requests = os.path.join(work, "requests.jsonl")
    with open(requests, "w") as f:
        f.write(pricing_requests(n))
    runs = [run(binary, memory, requests) for _ in range(3)]
    seconds = statistics.median(r[0] for r in runs)
    print(f"throughput         {n / seconds:,.0f} computeSummaryItems/s pipelined ({n:,} requests, median of 3), "
          f"peak RSS {max(r[1] for r in runs):.1f} MB")

    lines = pricing_requests(2000 if quick else 5000, seed=9).splitlines()
    times = interactive(binary, memory, lines)
    print(f"interactive        p50 {percentile(times, 0.5) * 1e6:.0f} us, p99 {percentile(times, 0.99) * 1e6:.0f} us "
          f"per round trip ({len(times):,} requests, one at a time)")

    backends = [SQLiteStores(work)]
    if os.environ.get("PAYSERVICE_BENCH_POSTGRES_URL"):
        backends.append(PostgresStores(os.environ["PAYSERVICE_BENCH_POSTGRES_URL"]))
    else:
        print("orders on PostgreSQL: skipped (set PAYSERVICE_BENCH_POSTGRES_URL to measure them)")
    for stores in backends:
        try:
            rates, lone = orders_benchmark(binary, work, order_count, stores)
        finally:
            stores.close()
        print(f"orders {stores.name:<11} {rates['grouped']:,.0f}/s with group commit, {rates['alone']:,.0f}/s with "
              f"one durable transaction each: {rates['grouped'] / rates['alone']:.1f}x ({order_count:,} pipelined)")
        print(f"lone order {stores.name:<7} p50 {percentile(lone, 0.5) * 1e3:.2f} ms, p99 "
              f"{percentile(lone, 0.99) * 1e3:.2f} ms per round trip (one order at a time, committed before each "
              f"answer)")
    if os.environ.get("PAYSERVICE_BENCH_POSTGRES_URL"):
        stores = PostgresStores(os.environ["PAYSERVICE_BENCH_POSTGRES_URL"])
        try:
            postgres_bench.report(postgres_bench.measure(binary, stores, CONFIG, NOW, work, quick, percentile))
        finally:
            stores.close()

    if os.path.exists(server_binary):
        stripe_count = 200 if quick else 1000
        rates = stripe_benchmark(binary, server_binary, work, stripe_count)
        overlap = rates[50] / 20
        print(f"orders stripe      {rates[0]:,.0f}/s with 0 ms to the test server, {rates[50]:,.0f}/s with 50 ms: "
              f"{overlap:.1f}x one call at a time ({stripe_count:,} pipelined, one PaymentIntent each)")
        if overlap < 10:
            raise SystemExit(f"stripe: {overlap:.1f}x one call at a time at 50 ms; gateway calls do not overlap")
    else:
        print("orders stripe: skipped (swift build -c release --product stripe-test-server to measure them)")


if __name__ == "__main__":
    main()
