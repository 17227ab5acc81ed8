#!/usr/bin/env python3
"""payservice's own benchmark: throughput, interactive latency, orders/s and memory, so regressions
show in review. Standard library only.

usage: Benchmarks/bench.py [--binary PATH] [--requests N] [--orders N] [--stripe-server PATH] [--quick] [--flat]

  --binary    the payservice to measure (default: .build/release/payservice; build it with
              `swift build -c release --product payservice`)
  --requests  pipelined computeSummaryItems requests (default 200,000)
  --orders    pipelined processOrder requests (default 5,000)
  --stripe-server  the Stripe test server process (default: .build/release/stripe-test-server;
              `swift build -c release --product stripe-test-server`); skipped when missing
  --flat      also run 10k, 100k and 1M requests and report cost per request and peak RSS
  --quick     small sizes, for a smoke run

Reports:
  throughput      pipelined computeSummaryItems, requests/s (median of 3 runs) and peak RSS
  interactive     one request at a time, waiting for each answer: p50 and p99 round trip
  orders          pipelined processOrder on a store file (synchronous=FULL, WAL): orders/s with
                  group commit, with --no-group-commit (one fsync'ed transaction per order), the
                  ratio, and the p50 round trip of a lone order (an interactive client); the same
                  on PostgreSQL when PAYSERVICE_BENCH_POSTGRES_URL names a server (a user with
                  CREATEDB; psql must be installed), on databases created for the run and dropped
  stripe          pipelined processOrder charged through the Stripe test server (TLS on loopback),
                  with 0 ms and with 50 ms added to each of its answers: orders/s, and at 50 ms the
                  multiple of what one call at a time allows (1 / 50 ms = 20 orders/s); fails under
                  10x, or when the server did not create exactly one PaymentIntent per order
  flat            (with --flat) microseconds per request and peak RSS at 10k, 100k, 1M requests
"""
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "bench-config.yaml")
NOW = "2026-11-21T12:00:00Z"


def option(name, default):
    args = sys.argv[1:]
    return args[args.index(name) + 1] if name in args else default


def pricing_requests(n, seed=42):
    """A deterministic mix of carts, contacts and shipping methods."""
    rng = random.Random(seed)
    skus = ["clock", "lamp", "pen", "mug", "chair", "desk", "cable", "notebook"]
    contacts = [
        None,
        {"locality": "Beverly Hills", "administrativeArea": "CA", "postalCode": "90210", "countryCode": "US"},
        {"locality": "New York", "administrativeArea": "NY", "postalCode": "10001", "countryCode": "US"},
        {"locality": "Seattle", "administrativeArea": "WA", "postalCode": "98101", "countryCode": "US"},
        {"locality": "Toronto", "administrativeArea": "ON", "postalCode": "M5V", "countryCode": "CA"},
    ]
    methods = [None, "free", "express", "overnight", "intl"]
    lines = []
    for i in range(n):
        params = {"items": [{"sku": s, "quantity": rng.randint(1, 4)} for s in rng.sample(skus, rng.randint(1, 3))]}
        contact, method = rng.choice(contacts), rng.choice(methods)
        if contact:
            params["shippingContact"] = contact
        if method:
            params["shippingMethod"] = method
        lines.append(json.dumps({"jsonrpc": "2.0", "id": i, "method": "computeSummaryItems", "params": params},
                                separators=(",", ":")))
    return "\n".join(lines) + "\n"


def run(binary, args, stdin_path, stdout_path=os.devnull):
    """Runs payservice on a file; returns (seconds, peak RSS in MB, exit code).

    Peak RSS comes from /usr/bin/time: a child forked straight from this (large) Python process
    would count the parent's pages it shared before exec."""
    with open(stdin_path, "rb") as fin, open(stdout_path, "wb") as fout:
        start = time.perf_counter()
        process = subprocess.run(["/usr/bin/time", "-f", "MAXRSS %M", binary] + args, stdin=fin, stdout=fout,
                                 stderr=subprocess.PIPE)
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


def stripe_benchmark(binary, server_binary, work, count):
    """Charges `count` pipelined orders through the Stripe test server at 0 and 50 ms latency."""
    server = subprocess.Popen([server_binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        info = json.loads(server.stdout.readline())
        with open(CONFIG) as f:
            config = f.read()
        sandbox = "gateway:\n  kind: sandbox\n"
        assert sandbox in config, "bench-config.yaml's gateway section changed"
        config = config.replace(sandbox, "gateway:\n  kind: stripe\n  apiBase: %s\n  trustRoots: %s\n"
                                "  maxConcurrentCalls: 64\n  maxRetries: 2\n" % (info["baseURL"], info["caFile"]))
        stripe_config = os.path.join(work, "stripe-config.yaml")
        with open(stripe_config, "w") as f:
            f.write(config)
        environment = dict(os.environ, STRIPE_SECRET_KEY=info["secretKey"])
        contact = {"givenName": "Ada", "familyName": "Lovelace", "emailAddress": "ada@example.com",
                   "addressLines": ["1 Infinite Loop"], "locality": "Cupertino", "administrativeArea": "CA",
                   "postalCode": "95014", "countryCode": "US"}
        items = [{"sku": "mug", "quantity": 1}]
        rates = {}
        for latency, now in [(0, "2026-11-21T12:00:00Z"), (50, "2026-11-21T12:00:01Z")]:
            database = os.path.join(work, f"stripe-{latency}.sqlite")
            common = ["--config", stripe_config, "--now", now, "--quiet", "--database", database]
            authorize = os.path.join(work, f"stripe-authorize-{latency}.jsonl")
            with open(authorize, "w") as f:
                for i in range(count):
                    f.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "authorizePayment", "params": {
                        "items": items, "shippingMethod": "free", "payment": {"token": {
                            "paymentData": "pm_card_visa", "transactionIdentifier": f"T{i}",
                            "paymentMethod": {"displayName": "Visa 0492", "network": "visa", "type": "credit"}},
                            "shippingContact": contact, "billingContact": contact}}}, separators=(",", ":")) + "\n")
            answers = os.path.join(work, f"stripe-authorized-{latency}.jsonl")
            with open(authorize) as fin, open(answers, "w") as fout:
                subprocess.run([binary] + common, stdin=fin, stdout=fout, env=environment, check=True)
            pipelined = os.path.join(work, f"stripe-orders-{latency}.jsonl")
            with open(answers) as f, open(pipelined, "w") as out:
                for i, line in enumerate(f):
                    result = json.loads(line)["result"]
                    out.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "processOrder", "params": {
                        "chargeToken": result["chargeToken"], "items": items, "shippingMethod": "free",
                        "shippingContact": contact, "amount": result["amount"], "currencyCode": "USD"}},
                        separators=(",", ":")) + "\n")
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
        server.stdin.write("count\n")
        server.stdin.flush()
        created = json.loads(server.stdout.readline())["paymentIntents"]
        if created != 2 * count:
            raise SystemExit(f"stripe: the test server created {created} PaymentIntents for {2 * count} orders")
    finally:
        server.stdin.close()
        server.wait()
    return rates


def main():
    if "-h" in sys.argv or "--help" in sys.argv:
        print(__doc__)
        return
    binary = os.path.abspath(option("--binary", os.path.join(HERE, "..", ".build", "release", "payservice")))
    quick = "--quick" in sys.argv
    n = int(option("--requests", 20000 if quick else 200000))
    order_count = int(option("--orders", 500 if quick else 5000))
    work = tempfile.mkdtemp(prefix="payservice-bench-")
    try:
        memory = ["--config", CONFIG, "--database", ":memory:", "--now", NOW]
        requests = os.path.join(work, "requests.jsonl")
        with open(requests, "w") as f:
            f.write(pricing_requests(n))
        runs = [run(binary, memory, requests) for _ in range(3)]
        seconds = statistics.median(r[0] for r in runs)
        print(f"machine            {os.cpu_count()} CPUs, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB")
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

        server_binary = os.path.abspath(option("--stripe-server", os.path.join(HERE, "..", ".build", "release",
                                                                        "stripe-test-server")))
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

        if "--flat" in sys.argv:
            for size in ([10000, 100000] if quick else [10000, 100000, 1000000]):
                path = os.path.join(work, f"flat-{size}.jsonl")
                with open(path, "w") as f:
                    f.write(pricing_requests(size, seed=size))
                seconds, rss, _ = run(binary, memory, path)
                print(f"flat               {size:>9,} requests: {seconds / size * 1e6:.2f} us/request, peak RSS {rss:.1f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
