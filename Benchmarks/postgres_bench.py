"""The PostgreSQL part of Benchmarks/bench.py: payservice's orders beside pgbench's write
transactions on the same server, in the same run, with and without added network latency, and
the round trips an order makes. Standard library only (pgbench and psql from PostgreSQL's client
packages).

Each payservice line has its pgbench anchor:
  hot sku, 1 process    1 process, N pipelined orders of one unit of one sku, vs pgbench's hot-row
                        script (BEGIN; UPDATE one pgbench_accounts row; INSERT a history row; END)
                        with 1 client
  checkout              one checkout at a time, as a web shop's server makes them (authorizePayment,
                        then processOrder): the two calls timed together, p50 and p99, vs the p50 of
                        the floor script with 1 client: the same two round trips of the same kinds,
                        each one statement (an insert committed asynchronously, as a charge token
                        is, then an update and an insert committed durably, as an order is)
  lone order            the processOrder of each such checkout timed alone, vs that script's latency
                        with 1 client
  lone order, token     the same with tokens another process issued (another host behind the same
                        load balancer): the token is read first
  hot sku, 8 processes  8 processes at once, each N/… orders of the same sku, vs the script with 8
                        clients
  own sku, 8 processes  8 processes at once, each its own sku, vs `pgbench -N` with 8 clients
Rates exclude start-up on both sides: pgbench reports tps without its connection time, and each
payservice process has answered a first store request before its orders are timed.

The loopback lines connect straight to the server. With added latency, every connection (pgbench's
too) goes through Benchmarks/pgdelay.c (compiled with the system's cc), which holds each chunk
half the delay each way (this kernel has no netem); what the proxy itself costs adds to the
delay, equally for both. A run through it at 0 ms counts round trips: an order's are the client's
sends that follow an answer from the server.
"""
import json
import os
import re
import subprocess
import threading
import time


class PgDelay:
    """Benchmarks/pgdelay.c, compiled into `work` with the system's C compiler and started in front of
    host:port: every chunk held half `delay_ms` each way; round trips counted."""

    def __init__(self, work, host, port, delay_ms=0.0):
        binary = os.path.join(work, "pgdelay")
        if not os.path.exists(binary):
            source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pgdelay.c")
            subprocess.run(["cc", "-O2", "-o", binary, source], check=True)
        self.process = subprocess.Popen([binary, host, str(port), str(int(delay_ms * 1000))], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        self.port = int(self.process.stdout.readline())

    def ask(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().strip()

    def round_trips(self):
        return int(self.ask("count"))

    def reset(self):
        self.ask("reset")

    def stop(self):
        self.process.stdin.close()
        self.process.wait()


FLOOR_SCRIPT = """\\set aid random(1, 100000)
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) SELECT 1, 1, :aid, 0, CURRENT_TIMESTAMP FROM set_config('synchronous_commit', 'off', true);
WITH charged AS (UPDATE pgbench_accounts SET abalance = abalance - 1 WHERE aid = :aid RETURNING aid) INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) SELECT 1, 1, aid, -1, CURRENT_TIMESTAMP FROM charged;
"""

HOT_SCRIPT = """BEGIN;
UPDATE pgbench_accounts SET abalance = abalance - 1 WHERE aid = 1;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, 1, -1, CURRENT_TIMESTAMP);
END;
"""

SKUS = ["clock", "lamp", "pen", "mug", "chair", "desk", "cable", "notebook"]
CONTACT = {"givenName": "Ada", "familyName": "Lovelace", "emailAddress": "ada@example.com",
           "addressLines": ["1 Infinite Loop"], "locality": "Cupertino", "administrativeArea": "CA",
           "postalCode": "95014", "countryCode": "US"}
WARM_UP = json.dumps({"jsonrpc": "2.0", "id": "warm-up", "method": "listProducts"})


def authorized_orders(binary, common, database, skus, work):
    """Authorizes one cart of one unit of each sku in `skus` on `database` (not timed); returns the
    processOrder lines that pay for them, in order."""
    path = os.path.join(work, "pg-authorize.jsonl")
    with open(path, "w") as f:
        for i, sku in enumerate(skus):
            f.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "authorizePayment", "params": {
                "items": [{"sku": sku, "quantity": 1}], "shippingMethod": "free", "payment": {"token": {
                    "paymentData": "tok_visa", "transactionIdentifier": f"P{i}",
                    "paymentMethod": {"displayName": "Visa 0492", "network": "visa", "type": "credit"}},
                    "shippingContact": CONTACT, "billingContact": CONTACT}}}, separators=(",", ":")) + "\n")
    answers = os.path.join(work, "pg-authorized.jsonl")
    with open(path, "rb") as fin, open(answers, "wb") as fout:
        subprocess.run([binary] + common + ["--database", database], stdin=fin, stdout=fout, check=True)
    orders = []
    with open(answers) as f:
        for line, sku in zip(f, skus):
            result = json.loads(line)["result"]
            orders.append(json.dumps({"jsonrpc": "2.0", "id": len(orders), "method": "processOrder", "params": {
                "chargeToken": result["chargeToken"], "items": [{"sku": sku, "quantity": 1}],
                "shippingMethod": "free", "shippingContact": CONTACT, "amount": result["amount"],
                "currencyCode": "USD"}}, separators=(",", ":")))
    if len(orders) != len(skus):
        raise SystemExit(f"postgres bench: {len(orders)} of {len(skus)} carts authorized")
    return orders


class Client:
    """A payservice process warmed up (its store connected, a first store request answered)."""

    def __init__(self, binary, args):
        self.process = subprocess.Popen([binary] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        self.ask(WARM_UP)

    def ask(self, line):
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise SystemExit("payservice closed its output")
        return answer

    def pipeline(self, lines, answers):
        """Sends `lines` at once (a writer thread) and reads every answer into `answers`."""
        def write():
            self.process.stdin.write(("\n".join(lines) + "\n").encode())
            self.process.stdin.flush()
        writer = threading.Thread(target=write)
        writer.start()
        for _ in lines:
            answers.append(self.process.stdout.readline())
        writer.join()

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def succeeded(answers, what):
    good = sum(b'"status":"succeeded"' in answer for answer in answers)
    if good != len(answers):
        raise SystemExit(f"postgres bench ({what}): {good} of {len(answers)} orders succeeded")


def pipelined_rate(binary, common, database, groups, what, proxy):
    """Orders/s of len(groups) processes at once, each pipelining its group of orders, and the
    round trips per order the proxy counted once they were warmed up."""
    clients = [Client(binary, common + ["--database", database]) for _ in groups]
    proxy.reset()
    answers = [[] for _ in groups]
    threads = [threading.Thread(target=client.pipeline, args=(group, out))
               for client, group, out in zip(clients, groups, answers)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - start
    for client in clients:
        client.close()
    succeeded([a for out in answers for a in out], what)
    count = sum(len(group) for group in groups)
    return count / seconds, proxy.round_trips() / count


def lone_times(binary, common, database, lines, warmup, proxy):
    """Seconds per order, one at a time, and the round trips per order (after the warm-up)."""
    client = Client(binary, common + ["--database", database])
    times = []
    for index, line in enumerate(lines):
        start = time.perf_counter()
        answer = client.ask(line)
        if index >= warmup:
            times.append(time.perf_counter() - start)
        if index + 1 == warmup:
            proxy.reset()
        if b'"status":"succeeded"' not in answer:
            raise SystemExit(f"postgres bench (lone order): {answer[:300]!r}")
    client.close()
    return times, proxy.round_trips() / len(times)


def authorize_line(index, sku="mug"):
    return json.dumps({"jsonrpc": "2.0", "id": f"a{index}", "method": "authorizePayment", "params": {
        "items": [{"sku": sku, "quantity": 1}], "shippingMethod": "free", "payment": {"token": {
            "paymentData": "tok_visa", "transactionIdentifier": f"C{index}",
            "paymentMethod": {"displayName": "Visa 0492", "network": "visa", "type": "credit"}},
            "shippingContact": CONTACT, "billingContact": CONTACT}}}, separators=(",", ":"))


def checkout_times(binary, common, database, count, warmup, proxy):
    """A checkout at a time in one process, as a web shop's server makes them: authorizePayment,
    then processOrder with its token. Seconds per checkout (both calls) and per processOrder, and
    the round trips of each call when `proxy` is given. Asking the proxy for its count takes a round
    trip to another process between the two calls, so the timed runs pass None and the counting run's
    times are not reported."""
    client = Client(binary, common + ["--database", database])
    checkouts, orders = [], []
    trips = {"authorize": 0, "order": 0}
    for index in range(count):
        timed = index >= warmup
        counted = timed and proxy is not None
        before = proxy.round_trips() if counted else 0
        start = time.perf_counter()
        answer = client.ask(authorize_line(index))
        if counted:
            trips["authorize"] += proxy.round_trips() - before
        result = json.loads(answer)["result"]
        order = json.dumps({"jsonrpc": "2.0", "id": index, "method": "processOrder", "params": {
            "chargeToken": result["chargeToken"], "items": [{"sku": "mug", "quantity": 1}], "shippingMethod": "free",
            "shippingContact": CONTACT, "amount": result["amount"], "currencyCode": "USD"}}, separators=(",", ":"))
        before = proxy.round_trips() if counted else 0
        ordered = time.perf_counter()
        answer = client.ask(order)
        end = time.perf_counter()
        if timed:
            checkouts.append(end - start)
            orders.append(end - ordered)
        if counted:
            trips["order"] += proxy.round_trips() - before
        if b'"status":"succeeded"' not in answer:
            raise SystemExit(f"postgres bench (checkout): {answer[:300]!r}")
    client.close()
    return checkouts, orders, {call: n / len(orders) for call, n in trips.items()}


def read_trips(binary, common, database, order, proxy):
    """The round trips of getOrder, listOrders, listProducts and refundOrder (a back-office process,
    after one order)."""
    client = Client(binary, common + ["--back-office", "--database", database])
    order_id = json.loads(client.ask(order))["result"]["orderId"]
    trips = {}
    for method, params in [("getOrder", {"orderId": order_id}), ("listOrders", {}), ("listProducts", None),
                           ("refundOrder", {"orderId": order_id, "refundId": "bench-refund", "lines": [{"sku": "mug", "quantity": 1, "restock": "return"}]})]:
        proxy.reset()
        request = {"jsonrpc": "2.0", "id": method, "method": method}
        if params is not None:
            request["params"] = params
        answer = client.ask(json.dumps(request))
        if b'"result"' not in answer or b'"status":"failed"' in answer:
            raise SystemExit(f"postgres bench ({method}): {answer[:300]!r}")
        trips[method] = proxy.round_trips()
    client.close()
    return trips


def settle(stores):
    """Writes out what copying a database left in the server's WAL and buffers (PostgreSQL 15 copies
    a template through the WAL), so that it is not flushed during the timed run that follows. Best
    effort: a user without the right to CHECKPOINT measures without it."""
    subprocess.run(["psql", "--no-psqlrc", "--quiet", stores.admin, "-c", "CHECKPOINT"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def pgbench(url, args, seconds):
    """tps and average latency (ms) of a pgbench run."""
    out = subprocess.run(["pgbench", "-n", "-T", str(seconds)] + args + [url], check=True, capture_output=True,
                         text=True).stdout
    tps = float(re.search(r"tps = ([0-9.]+)", out).group(1))
    latency = float(re.search(r"latency average = ([0-9.]+) ms", out).group(1))
    return tps, latency


def pgbench_p50(url, script, seconds, work, name):
    """The median latency in seconds of `script` run by one pgbench client (its per-transaction log)."""
    prefix = os.path.join(work, name)
    subprocess.run(["pgbench", "-n", "-T", str(seconds), "-f", script, "-c", "1", "-l", "--log-prefix", prefix, url],
                   check=True, capture_output=True, cwd=work)
    latencies = []
    for file in os.listdir(work):
        if file.startswith(name + "."):
            with open(os.path.join(work, file)) as log:
                latencies += [int(line.split()[2]) for line in log if line.strip()]
            os.remove(os.path.join(work, file))
    latencies.sort()
    return latencies[len(latencies) // 2] / 1e6


def through(url, port):
    """`url` with its host and port replaced by the proxy's."""
    return re.sub(r"@[^/]+/", f"@127.0.0.1:{port}/", url)


def server_of(url):
    match = re.search(r"@([^:/]+):(\d+)/", url)
    return match.group(1), int(match.group(2))


def measure(binary, stores, config, now, work, quick, percentile):
    """Runs every line at 0 ms and at 0.5 ms added latency; prints them and returns the figures."""
    common = ["--config", config, "--now", now, "--quiet"]
    per_process = 60 if quick else 300
    hot_count = 200 if quick else 1000
    lone_count = 120 if quick else 400
    seconds = 2 if quick else 10
    script = os.path.join(work, "hot-row.sql")
    with open(script, "w") as f:
        f.write(HOT_SCRIPT)
    floor_script = os.path.join(work, "floor.sql")
    with open(floor_script, "w") as f:
        f.write(FLOOR_SCRIPT)
    anchor = stores.fresh("pgbench")
    subprocess.run(["pgbench", "-i", "-q", "-s", "1", anchor], check=True, capture_output=True)

    # Every cart is authorized once, on one base database copied for each run.
    base = stores.fresh("pgbase")
    hot = ["mug"] * (hot_count + lone_count + 8 * per_process)
    own = [SKUS[i % 8] for i in range(8 * per_process)]
    orders = authorized_orders(binary, common, base, hot + own, work)
    settle(stores)
    hot_orders = orders[:hot_count]
    lone_orders = orders[hot_count:hot_count + lone_count]
    crowd = orders[hot_count + lone_count:len(hot)]
    crowd_hot = [crowd[i::8] for i in range(8)]
    own_orders = orders[len(hot):]
    crowd_own = [own_orders[i::8] for i in range(8)]

    host, port = server_of(base)
    figures = {}
    for delay in [None, 0.0, 0.5]:
        # None: straight to the server (the timings); 0.0: through the proxy, to count round trips.
        proxy = PgDelay(work, host, port, delay_ms=delay or 0.0)
        try:
            def copy(name):
                database = stores.copy(base, f"{name}{int((delay or 0) * 10)}{'' if delay is None else 'p'}")
                settle(stores)
                return database if delay is None else through(database, proxy.port)
            f = {}
            if delay == 0.0:
                _, f["trips pipelined"] = pipelined_rate(
                    binary, common, copy("hot"), [hot_orders[:200]], "round trips, pipelined", proxy)
                _, f["trips lone"] = lone_times(binary, common, copy("lone"), lone_orders[:70], 20, proxy)
                _, _, f["trips checkout"] = checkout_times(binary, common, copy("checkout"), 40, 10, proxy)
                f["trips reads"] = read_trips(binary, common, copy("reads"), lone_orders[0], proxy)
                figures["trips"] = f
                continue
            anchor_url = anchor if delay is None else through(anchor, proxy.port)
            f["pgbench hot 1"] = pgbench(anchor_url, ["-f", script, "-c", "1"], seconds)
            f["pgbench hot 8"] = pgbench(anchor_url, ["-f", script, "-c", "8", "-j", "2"], seconds)
            f["pgbench -N 8"] = pgbench(anchor_url, ["-N", "-c", "8", "-j", "2"], seconds)
            f["floor"] = pgbench_p50(anchor_url, floor_script, seconds, work, f"floor{int((delay or 0) * 10)}")
            f["hot 1"], _ = pipelined_rate(binary, common, copy("hot"), [hot_orders], "hot sku, 1 process", proxy)
            times, _ = lone_times(binary, common, copy("lone"), lone_orders, 20, proxy)
            f["lone"] = (percentile(times, 0.5), percentile(times, 0.99))
            checkouts, times, _ = checkout_times(binary, common, copy("checkout"), lone_count, 20, None)
            f["whole checkout"] = (percentile(checkouts, 0.5), percentile(checkouts, 0.99))
            f["checkout"] = (percentile(times, 0.5), percentile(times, 0.99))
            f["hot 8"], _ = pipelined_rate(binary, common, copy("crowd"), crowd_hot, "hot sku, 8 processes", proxy)
            f["own 8"], _ = pipelined_rate(binary, common, copy("own"), crowd_own, "own sku, 8 processes", proxy)
            figures[delay] = f
        finally:
            proxy.stop()
    return figures


def report(figures):
    """Prints each line beside its anchor, at both latencies."""
    for delay, f in figures.items():
        if delay == "trips":
            continue
        tag = f"+{delay:.1f} ms" if delay else "loopback"
        hot1, lat1 = f["pgbench hot 1"]
        print(f"pg {tag:<9} hot sku, 1 process    {f['hot 1']:>7,.0f} orders/s   pgbench hot row, 1 client "
              f"{hot1:>7,.0f} tps   ratio {f['hot 1'] / hot1:.2f}")
        p50, p99 = f["whole checkout"]
        print(f"pg {tag:<9} checkout (authorize + order) p50 {p50 * 1e3:5.2f} ms p99 {p99 * 1e3:5.2f} ms   "
              f"floor p50 {f['floor'] * 1e3:.2f} ms   {p50 / f['floor']:.2f}x")
        for key, label in [("checkout", "lone order        "), ("lone", "lone order, token  ")]:
            p50, p99 = f[key]
            print(f"pg {tag:<9} {label} p50 {p50 * 1e3:5.2f} ms p99 {p99 * 1e3:5.2f} ms   pgbench 1 client "
                  f"latency {lat1:.2f} ms   {p50 * 1e3 / lat1:.2f}x")
        hot8, _ = f["pgbench hot 8"]
        print(f"pg {tag:<9} hot sku, 8 processes  {f['hot 8']:>7,.0f} orders/s   pgbench hot row, 8 clients "
              f"{hot8:>7,.0f} tps   ratio {f['hot 8'] / hot8:.2f}   (vs 1 process {f['hot 8'] / f['hot 1']:.2f}x)")
        own8, _ = f["pgbench -N 8"]
        print(f"pg {tag:<9} own sku, 8 processes  {f['own 8']:>7,.0f} orders/s   pgbench -N, 8 clients "
              f"{own8:>7,.0f} tps   ratio {f['own 8'] / own8:.2f}")
    trips = figures["trips"]
    checkout = trips["trips checkout"]
    print(f"pg round trips      {checkout['authorize']:.2f} per authorizePayment, {checkout['order']:.2f} per lone order, "
          f"{trips['trips lone']:.2f} with a token "
          f"from another process, {trips['trips pipelined']:.2f} per pipelined order (200 in one read); "
          + ", ".join(f"{method} {count}" for method, count in trips["trips reads"].items()))
