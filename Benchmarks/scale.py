#!/usr/bin/env python3
"""How payservice's cost grows with a merchant's size: the work over many objects at 1k, 10k and
100k of them, on SQLite and (with PAYSERVICE_BENCH_POSTGRES_URL) on PostgreSQL. Standard library only.

usage: Benchmarks/scale.py [--binary PATH] [--stripe-server PATH] [--sizes 1000,10000,100000] [--quick]
                           [--concurrent-billing N] [--stores sqlite,postgres] [--only-concurrent]
                           [--delay-ms MS] [--repeat-small R]

  --binary         the payservice to measure (default .build/release/payservice)
  --stripe-server  the Stripe test server (default .build/release/stripe-test-server); the
                   reconciliation is skipped without it
  --sizes          the numbers of objects (default 1000,10000,100000; 200,1000 with --quick)
  --concurrent-billing N  also, on PostgreSQL at the largest size, N billing runs at once over the
                   same due agreements, each with its own --shard i/N, beside one run alone (default
                   0: not measured)
  --stores         the stores to measure (default sqlite,postgres; PostgreSQL only with
                   PAYSERVICE_BENCH_POSTGRES_URL)
  --only-concurrent  only the concurrent billing runs (with --concurrent-billing, on PostgreSQL)
  --delay-ms MS    the concurrent billing runs reach the server with MS added to each round trip
                   (Benchmarks/pgdelay.c), as across a network
  --repeat-small R each size up to 10,000 is measured R times, each on a fresh store, and each
                   method's median kept (default 3): a run of a few seconds moves with the
                   machine's noise more than with the code

For each store and size N, on a fresh store (the sandbox gateway, a pinned clock):
  processOrder   N subscription checkouts, 1,000 a minute from 2026-12-01T10:00Z: each minute's
                 carts authorized (not timed), then their orders pipelined in one process
  runBilling     `payservice billing run` one month later: N renewals, 500 a call; checks that it
                 exits 0, that every renewal succeeded once, that no line of its output is longer than
                 the line cap (8 MiB), and that a second run charges nothing
  listOrders     every page of the 2N orders, 100 a page, one request at a time (each page's cursor
                 from the answer before)
  retention      `payservice retention` 31 days after the checkouts: the personal data of the N
                 checkouts erased, 500 a call
  reconcile      (with the Stripe test server, its own store) N orders charged through the server (not
                 timed), then `payservice stripe reconcile`, 500 objects a call
Prints, per method and size, the seconds and the rate per 1,000 objects (seconds per 1k), then for
each method the ratio of its rate per 1k at the largest size to that at the smallest (linear: near
1.0), and the store's bytes per order. Exits 1 when a check fails.
"""

import argparse
import calendar
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the store helpers and the Stripe test server's start and stop)
import postgres_bench  # noqa: E402  (pgdelay, the added latency)

LINE_CAP = 8 * 1024 * 1024
SMALL = 10_000  # sizes up to this are measured --repeat-small times, their medians kept
TIMED = ("processOrder", "runBilling", "listOrders", "retention")
CHECKOUT = "2026-12-01T10:00:00Z"
RENEWAL = "2027-01-01T12:00:00Z"
RETENTION = "2027-01-01T12:00:01Z"
CONTACT = {"givenName": "Ada", "familyName": "Lovelace", "emailAddress": "ada@example.com",
           "addressLines": ["1 Infinite Loop"], "locality": "Cupertino", "administrativeArea": "CA",
           "postalCode": "95014", "countryCode": "US"}


def config(work, gateway=None):
    """The bench config with a monthly subscription, a 30-day retention and `gateway` (default sandbox)."""
    with open(bench.CONFIG) as f:
        text = f.read()
    text = text.replace("catalog:\n", "catalog:\n  - {sku: club, name: Club, description: A tin every month, "
                        "price: \"10.00\", quantityOnHand: 100000000, recurring: {interval: month}}\n", 1)
    text += "applePay:\n  managementURL: https://example.com/account\n  billingAgreement: Cancel at any time.\n"
    text += "privacy:\n  retainPersonalDataDays: 30\n"
    if gateway:
        text = text.replace("gateway:\n  kind: sandbox\n", gateway)
    path = os.path.join(work, "scale-config.yaml" if not gateway else "scale-stripe.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def jsonl(path, requests):
    with open(path, "w") as f:
        for i, (method, params) in enumerate(requests):
            f.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params},
                               separators=(",", ":")) + "\n")


# A shop's checkouts arrive over time: the N checkouts come in rounds of this many, each round a
# minute after the one before (its own process, clock pinned to its minute), so that the ids of a
# large store span its hours as a real one's do rather than all sharing one second.
ROUND = 1000


def checkouts(binary, work, shop, database, n, answers=os.devnull, env=None, payment="tok_visa"):
    """n checkouts of one subscription, ROUND a minute: each minute's carts authorized (not timed),
    then their orders pipelined in one process (timed); returns (seconds, worst exit code, orders
    placed, the last minute's clock). A minute's tokens are used within it, as a shop's are within
    their lifetime (an expired unused token is deleted by later authorizations)."""
    items = [{"sku": "club", "quantity": 1}]
    start = calendar.timegm(time.strptime(CHECKOUT, "%Y-%m-%dT%H:%M:%SZ"))
    seconds, worst, placed, now = 0.0, 0, 0, CHECKOUT
    for first in range(0, n, ROUND):
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + 60 * (first // ROUND)))
        common = ["--config", shop, "--database", database, "--now", now, "--quiet"]
        authorize = os.path.join(work, "authorize.jsonl")
        jsonl(authorize, [("authorizePayment", {
            "items": items, "shippingMethod": "free", "payment": {"token": {
                "paymentData": payment, "transactionIdentifier": f"T{i}",
                "paymentMethod": {"displayName": "Visa 0492", "network": "visa", "type": "credit"}},
                "shippingContact": CONTACT, "billingContact": CONTACT}}) for i in range(first, min(n, first + ROUND))])
        authorized = os.path.join(work, "authorized.jsonl")
        _, _, code = bench.run(binary, common, authorize, authorized, env=env)
        if code != 0:
            raise SystemExit(f"authorizePayment exited {code}")
        orders = []
        with open(authorized) as f:
            for line in f:
                result = json.loads(line)["result"]
                orders.append(("processOrder", {"chargeToken": result["chargeToken"], "items": items,
                                                "shippingMethod": "free", "shippingContact": CONTACT,
                                                "amount": result["amount"], "currencyCode": "USD"}))
        path = os.path.join(work, "orders.jsonl")
        jsonl(path, orders)
        elapsed, _, code = bench.run(binary, common, path, answers, env=env)
        seconds += elapsed
        worst = worst or code
        if answers != os.devnull:
            with open(answers) as f:
                placed += sum('"status":"succeeded"' in line for line in f)
    return seconds, worst, placed, now


def timed(command, env=None):
    """Runs a one-shot; returns (seconds, exit code, stdout lines, stderr text)."""
    start = time.perf_counter()
    process = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    return time.perf_counter() - start, process.returncode, process.stdout.split(b"\n")[:-1], process.stderr.decode()


def check(what, ok, detail=""):
    if not ok:
        print(f"FAIL {what} {detail}", flush=True)
        check.failed = True
    return ok


check.failed = False


def page_orders(binary, shop, database, expected):
    """listOrders page after page, 100 a page, each from the cursor before; returns seconds."""
    process = subprocess.Popen([binary, "--config", shop, "--database", database, "--now", RETENTION,
                                "--back-office", "--quiet"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    start = time.perf_counter()
    cursor, seen, index = None, 0, 0
    while True:
        params = {"limit": 100}
        if cursor:
            params["cursor"] = cursor
        process.stdin.write((json.dumps({"jsonrpc": "2.0", "id": index, "method": "listOrders", "params": params})
                             + "\n").encode())
        process.stdin.flush()
        result = json.loads(process.stdout.readline())["result"]
        seen += len(result["orders"])
        index += 1
        cursor = result["nextCursor"]
        if not cursor:
            break
    elapsed = time.perf_counter() - start
    process.stdin.close()
    process.wait()
    check("listOrders", seen == expected, f"{seen} orders listed of {expected}")
    return elapsed


def store_bytes(stores, database):
    if isinstance(stores, bench.SQLiteStores):
        return sum(os.path.getsize(database + s) for s in ["", "-wal"] if os.path.exists(database + s))
    name = database.rsplit("/", 1)[1]
    out = subprocess.run(["psql", "--no-psqlrc", "-At", stores.admin, "-c", f"SELECT pg_database_size('{name}')"],
                         capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def one_size(binary, work, stores, n, results, run=0):
    shop = config(work)
    database = stores.fresh(f"scale{n}" + (f"r{run}" if run else ""))
    seconds, code, placed, _ = checkouts(binary, work, shop, database, n, os.path.join(work, "placed.jsonl"))
    common = ["--config", shop, "--database", database]
    check(f"processOrder {n}", code == 0 and placed == n, f"exit {code}, {placed} placed")
    results.setdefault("processOrder", {})[n] = seconds

    seconds, code, lines, err = timed([binary, "billing", "run"] + common + ["--now", RENEWAL])
    succeeded = sum(json.loads(line)["succeeded"] for line in lines)
    longest = max((len(line) for line in lines), default=0)
    check(f"runBilling {n}", code == 0 and succeeded == n and longest <= LINE_CAP,
          f"exit {code}, {succeeded} succeeded, longest line {longest} bytes: {err[-300:]}")
    results.setdefault("runBilling", {})[n] = seconds
    results.setdefault("runBilling lines", {})[n] = (len(lines), longest)
    _, code, lines, _ = timed([binary, "billing", "run"] + common + ["--now", RENEWAL])
    check(f"runBilling {n} again", code == 0 and [json.loads(l)["payments"] for l in lines] == [[]])

    results.setdefault("listOrders", {})[n] = page_orders(binary, shop, database, 2 * n)
    size = store_bytes(stores, database)
    results.setdefault("bytes per order", {})[n] = size / (2 * n)

    seconds, code, lines, err = timed([binary, "retention"] + common + ["--now", RETENTION])
    erased = sum(len(json.loads(line)["orders"]) for line in lines)
    check(f"retention {n}", code == 0 and erased == n, f"exit {code}, {erased} erased: {err[-300:]}")
    results.setdefault("retention", {})[n] = seconds


def reconcile_size(binary, server_binary, work, stores, n, results):
    server, stripe_config, env = bench.start_stripe_server(server_binary, work, "stripe-scale.yaml")
    try:
        with open(stripe_config) as f:
            gateway = f.read().split("gateway:\n", 1)[1]
        shop = config(work, "gateway:\n" + gateway)
        database = stores.fresh(f"reconcile{n}")
        _, code, _, last = checkouts(binary, work, shop, database, n, env=env, payment="pm_card_visa")
        common = ["--config", shop, "--database", database, "--now", last]
        check(f"reconcile {n}: orders", code == 0 and bench.stripe_payment_intents(server) == n)
        seconds, code, lines, err = timed([binary, "stripe", "reconcile", "--since", "2026-01-01T00:00:00Z"] + common,
                                          env=env)
        listed = sum(json.loads(line)["listed"]["paymentIntents"] for line in lines)
        check(f"reconcile {n}", code == 0 and listed == n, f"exit {code}, {listed} listed: {err[-300:]}")
        results.setdefault("reconcile", {})[n] = seconds
    finally:
        bench.stop_stripe_server(server)


def cpu_times():
    """The machine's busy and total CPU time so far (/proc/stat, in clock ticks)."""
    with open("/proc/stat") as f:
        ticks = [int(field) for field in f.readline().split()[1:]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)


def concurrent_billing(binary, work, stores, n, runners, delay_ms=None):
    """On one store of n due agreements, one run alone; on a copy, `runners` runs at once, each with
    its own shard (`--shard i/runners`). With `delay_ms`, the runs reach the server through
    Benchmarks/pgdelay.c, which adds that much to each round trip (the checkouts do not)."""
    shop = config(work)
    base = stores.fresh(f"billing{n}")
    _, code, _, _ = checkouts(binary, work, shop, base, n)
    check("concurrent billing: checkouts", code == 0)
    times = {}
    proxy = None
    if delay_ms is not None:
        host, port = postgres_bench.server_of(base)
        proxy = postgres_bench.PgDelay(work, host, port, delay_ms=delay_ms)
    for count in [1, runners]:
        database = stores.copy(base, f"billing{n}x{count}")
        if proxy:
            database = postgres_bench.through(database, proxy.port)
        command = [binary, "billing", "run", "--config", shop, "--database", database, "--now", RENEWAL]
        shards = [[] if count == 1 else ["--shard", f"{i}/{count}"] for i in range(count)]
        cpu = cpu_times()
        start = time.perf_counter()
        processes = [subprocess.Popen(command + shard, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                     for shard in shards]
        outputs = [p.communicate()[0] for p in processes]
        times[count] = time.perf_counter() - start
        busy, total = (after - before for after, before in zip(cpu_times(), cpu))
        print(f"  billing {n:,} due, {count} run(s) at once: {times[count]:.1f} s, the machine's CPUs "
              f"{100 * busy / total:.0f}% busy", flush=True)
        succeeded = sum(json.loads(line)["succeeded"] for out in outputs for line in out.split(b"\n")[:-1])
        check(f"{count} billing runs", all(p.returncode == 0 for p in processes) and succeeded == n,
              f"{succeeded} succeeded of {n}")
    if proxy:
        proxy.stop()
    return times


def report(name, results, sizes):
    print(f"\n{name}")
    print(f"  {'method':<14}" + "".join(f"{size:>22,}" for size in sizes) + "   largest/smallest")
    for method in ["processOrder", "runBilling", "listOrders", "retention", "reconcile"]:
        if method not in results:
            continue
        cells = "".join(f"{results[method][s]:>9.2f} s {1000 * results[method][s] / s:>6.3f}/1k"
                        for s in sizes if s in results[method])
        per = [results[method][s] / s for s in sizes if s in results[method]]
        print(f"  {method:<14}{cells}   {per[-1] / per[0]:.2f}x")
    if "bytes per order" in results:
        print(f"  {'bytes/order':<14}" + "".join(f"{results['bytes per order'][s]:>22,.0f}" for s in sizes))
    if "runBilling lines" in results:
        print(f"  {'billing lines':<14}" + "".join(
            f"{results['runBilling lines'][s][0]:>10} of <={results['runBilling lines'][s][1]:>8,}B" for s in sizes))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(HERE, "..", ".build", "release", "payservice"))
    parser.add_argument("--stripe-server", default=os.path.join(HERE, "..", ".build", "release", "stripe-test-server"))
    parser.add_argument("--sizes")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--concurrent-billing", type=int, default=0)
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("--only-concurrent", action="store_true")
    parser.add_argument("--delay-ms", type=float)
    parser.add_argument("--repeat-small", type=int, default=3)
    args = parser.parse_args()
    wanted = args.stores.split(",")
    if args.only_concurrent and not args.concurrent_billing:
        parser.error("--only-concurrent needs --concurrent-billing N")
    sizes = [int(s) for s in (args.sizes or ("200,1000" if args.quick else "1000,10000,100000")).split(",")]
    binary = os.path.abspath(args.binary)
    server = os.path.abspath(args.stripe_server) if os.path.exists(args.stripe_server) else None
    work = tempfile.mkdtemp(prefix="payservice-scale-")
    all_stores = [bench.SQLiteStores(work)] if "sqlite" in wanted and not args.only_concurrent else []
    if os.environ.get("PAYSERVICE_BENCH_POSTGRES_URL") and "postgres" in wanted:
        all_stores.append(bench.PostgresStores(os.environ["PAYSERVICE_BENCH_POSTGRES_URL"]))
    try:
        for stores in all_stores:
            results = {}
            for n in ([] if args.only_concurrent else sizes):
                # A size that runs in seconds is measured `repeat` times on fresh stores and each
                # method's median kept: one short run moves with the machine's noise.
                repeat = max(1, args.repeat_small) if n <= SMALL else 1
                runs = []
                for run in range(repeat):
                    runs.append({})
                    one_size(binary, work, stores, n, runs[-1], run)
                for method in runs[-1]:
                    values = [r[method][n] for r in runs]
                    timed = method in TIMED and repeat > 1
                    results.setdefault(method, {})[n] = statistics.median(values) if timed else values[-1]
                if server:
                    reconcile_size(binary, server, work, stores, n, results)
                print(f"{stores.name} {n:,}: " + ", ".join(
                    f"{m} {results[m][n]:.2f} s" for m in ["processOrder", "runBilling", "listOrders", "retention",
                                                           "reconcile"] if n in results.get(m, {})), flush=True)
            if results:
                report(stores.name, results, sizes)
            if args.concurrent_billing and isinstance(stores, bench.PostgresStores):
                times = concurrent_billing(binary, work, stores, sizes[-1], args.concurrent_billing, args.delay_ms)
                print(f"  billing {sizes[-1]:,} due: 1 run {times[1]:.1f} s, {args.concurrent_billing} runs at once "
                      f"{times[args.concurrent_billing]:.1f} s ({times[args.concurrent_billing] / times[1]:.2f} of one)")
            stores.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if check.failed else 0)


if __name__ == "__main__":
    main()
