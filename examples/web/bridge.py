#!/usr/bin/env python3
"""HTTP bridge between the example Apple Pay page and one payservice process.

payservice speaks line-delimited JSON-RPC 2.0 on stdio. This bridge starts ONE payservice child,
keeps it running (it is started again on the next request if it dies) and serves:

  GET  /          index.html
  GET  /app.js    app.js
  POST /rpc       {"method": "...", "params": {...}}  ->  the JSON-RPC result (200) or {"error": ...}

Only the methods a shopper's page may call are forwarded (ALLOWED_METHODS). Requests to payservice
are written one at a time under a lock, each with the bridge's own increasing id, and the response
line with that id is returned. Request and response bodies are never logged: they carry names,
addresses and payment data.

Plain HTTP is for localhost development. Apple Pay on the web needs HTTPS on a domain verified with
Apple: run the bridge behind the merchant's TLS-terminating web server, or give --tls-cert/--tls-key.

Python 3 standard library only.

  python3 examples/web/bridge.py --config examples/web/shop.yaml --database /tmp/shop.sqlite
  python3 examples/web/bridge.py --selftest --payservice .build/debug/payservice --config config.yaml
"""

import argparse
import http.server
import json
import os
import queue
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))

# The methods a shopper's page may call. Everything else (listProducts, getOrder, the back office,
# MCP, rpc.discover) is refused by the bridge with 403 before payservice sees it.
ALLOWED_METHODS = frozenset(
    [
        "createPaymentRequest",
        "startMerchantSession",
        "computeSummaryItems",
        "selectShippingContact",
        "selectShippingMethod",
        "selectPaymentMethod",
        "changeCouponCode",
        "authorizePayment",
        "processOrder",
    ]
)

MAX_BODY_BYTES = 64 * 1024

STATIC_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
}

# JSON-RPC error code -> HTTP status. Anything not listed is 500.
HTTP_STATUS_FOR_CODE = {
    -32700: 400,  # parse error (cannot happen: the bridge writes the line)
    -32600: 400,  # invalid request
    -32601: 400,  # method not found (an allowed method this payservice does not have yet)
    -32602: 400,  # invalid params
    -32002: 409,  # charge token already used for a different order
    -32003: 404,  # order not found
    -32004: 409,  # idempotency key conflict
    -32001: 503,  # store unavailable; nothing changed, the same request may be sent again
    -32603: 500,  # internal error
}


def log(message):
    sys.stderr.write("bridge: %s\n" % message)
    sys.stderr.flush()


class PayserviceDied(Exception):
    """payservice exited or closed its stdout: answered with 502."""


class PayserviceTimeout(Exception):
    """payservice did not answer in time: answered with 504."""


class Payservice:
    """One payservice child process, used by one request at a time."""

    def __init__(self, argv, timeout):
        self.argv = argv
        self.timeout = timeout
        self.lock = threading.Lock()
        self.next_id = 1
        self.proc = None
        self.lines = None

    def start(self):
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,  # payservice's own log (never params or payment data) goes to ours
            bufsize=0,
        )
        self.lines = queue.Queue()
        reader = threading.Thread(target=self._read, args=(self.proc, self.lines), daemon=True)
        reader.start()
        log("started payservice (pid %d): %s" % (self.proc.pid, " ".join(self.argv)))

    @staticmethod
    def _read(proc, lines):
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)  # EOF: the process is gone

    def _ensure_running(self):
        if self.proc is not None and self.proc.poll() is None:
            return
        if self.proc is not None:
            log("payservice exited with status %s; starting it again" % self.proc.returncode)
        try:
            self.start()
        except OSError as error:
            self.proc = None
            raise PayserviceDied("cannot start payservice: %s" % error)

    def call(self, method, params):
        """Send one request and return the response object (with "result" or "error")."""
        with self.lock:
            self._ensure_running()
            request_id = self.next_id
            self.next_id += 1
            line = json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
                ensure_ascii=False,
                separators=(",", ":"),
            )
            try:
                self.proc.stdin.write(line.encode("utf-8") + b"\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                raise PayserviceDied("payservice is not running")
            deadline = time.monotonic() + self.timeout
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    # Its answer may still come: it is skipped by id on the next call.
                    raise PayserviceTimeout("payservice did not answer within %g s" % self.timeout)
                try:
                    raw = self.lines.get(timeout=remaining)
                except queue.Empty:
                    continue
                if raw is None:
                    self.lines.put(None)  # keep reporting EOF until restarted
                    raise PayserviceDied("payservice exited")
                try:
                    response = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(response, dict) and response.get("id") == request_id:
                    return response
                # A late answer to a request that timed out, or an id-less error: not ours.

    def stop(self):
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        try:
            proc.stdin.close()  # EOF: payservice answers what it has and exits 0
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "payservice-bridge"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    # ---- plumbing

    def log_message(self, format, *args):
        pass  # the default logs client addresses; log_rpc below logs method and status only

    def _send(self, status, body, content_type="application/json; charset=utf-8"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "same-origin")
        self.send_header("X-Frame-Options", "DENY")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error(self, status, code, message):
        self._send(status, {"error": {"code": code, "message": message}})

    # ---- GET: the page

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        entry = STATIC_FILES.get(path)
        if entry is None:
            self._error(404, -32601, "Not found")
            return
        name, content_type = entry
        try:
            with open(os.path.join(HERE, name), "rb") as f:
                body = f.read()
        except OSError:
            self._error(404, -32601, "Not found")
            return
        self._send(200, body, content_type)

    do_HEAD = do_GET

    # ---- POST /rpc

    def do_POST(self):
        started = time.monotonic()
        method = "-"
        status = 500
        try:
            status, method = self._rpc()
        finally:
            log("POST %s method=%s status=%d ms=%d"
                % (self.path.split("?", 1)[0], method, status, (time.monotonic() - started) * 1000))

    def _rpc(self):
        if self.path.split("?", 1)[0] != "/rpc":
            self._error(404, -32601, "Not found")
            return 404, "-"
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            self._error(411, -32600, "Send the body with a Content-Length")
            return 411, "-"
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self.close_connection = True
            self._error(411, -32600, "Content-Length is required")
            return 411, "-"
        if length < 0 or length > MAX_BODY_BYTES:
            if 0 < length <= 16 * MAX_BODY_BYTES:
                self.rfile.read(length)  # read and dropped, so the client sees the answer
            else:
                self.close_connection = True
            self._error(413, -32600, "The body is larger than %d bytes" % MAX_BODY_BYTES)
            return 413, "-"
        body = self.rfile.read(length)
        # A JSON content type makes a cross-site request a preflighted one, which this bridge never
        # approves (it sends no CORS headers): another site's page cannot drive the checkout.
        content_type = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        if content_type != "application/json":
            self._error(415, -32600, "Content-Type must be application/json")
            return 415, "-"
        try:
            request = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError):
            self._error(400, -32700, "The body is not JSON")
            return 400, "-"
        if not isinstance(request, dict):
            self._error(400, -32600, 'The body must be an object {"method": ..., "params": {...}}')
            return 400, "-"
        unknown = sorted(set(request) - {"method", "params"})
        if unknown:
            self._error(400, -32600, "Unknown members: %s; send only method and params" % ", ".join(unknown))
            return 400, "-"
        method = request.get("method")
        if not isinstance(method, str):
            self._error(400, -32600, '"method" must be a string')
            return 400, "-"
        if method not in ALLOWED_METHODS:
            self._error(403, -32601, "Method not allowed from the page: %s" % method[:64])
            return 403, json.dumps(_short(method))  # quoted: the name is the client's text
        params = request.get("params", {})
        if not isinstance(params, dict):
            self._error(400, -32602, '"params" must be an object')
            return 400, method
        try:
            response = self.server.payservice.call(method, params)
        except PayserviceDied as error:
            self._error(502, -32000, str(error))
            return 502, method
        except PayserviceTimeout as error:
            self._error(504, -32000, str(error))
            return 504, method
        if "result" in response:
            self._send(200, response["result"])
            return 200, method
        error = response.get("error")
        if not isinstance(error, dict):
            self._error(502, -32603, "payservice sent a response without result or error")
            return 502, method
        status = HTTP_STATUS_FOR_CODE.get(error.get("code"), 500)
        self._send(status, {"error": error})
        return status, method


def _reject_constant(name):
    raise ValueError("%s is not JSON" % name)


def _short(text):
    return text if len(text) <= 64 else text[:61] + "..."


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


class Server6(Server):
    address_family = socket.AF_INET6


def payservice_argv(args):
    argv = [args.payservice]
    if args.config:
        argv += ["--config", args.config]
    database = args.database
    if database is None and args.selftest:
        database = ":memory:"  # the self-test leaves no store behind unless asked to
    if database:
        argv += ["--database", database]
    return argv + list(args.payservice_args)


def parse_listen(text):
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError("expected HOST:PORT, like 127.0.0.1:8080")
    return host.strip("[]") or "127.0.0.1", int(port)


def make_server(args, address):
    server = (Server6 if ":" in address[0] else Server)(address, Handler)
    server.payservice = Payservice(payservice_argv(args), args.timeout)
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.payservice.start()
    try:
        # Fails at once when payservice cannot start (a bad config or store exits 2 with the reason).
        server.payservice.call("listShippingMethods", {})
    except (PayserviceDied, PayserviceTimeout) as error:
        server.server_close()
        server.payservice.stop()
        raise OSError("%s (status %s); its reason is above" % (error, server.payservice.proc.returncode))
    return server


# ---- self-test: the bridge end to end without Safari


def selftest(args):
    args.tls_cert = args.tls_key = None  # the self-test speaks plain HTTP to itself
    try:
        server = make_server(args, ("127.0.0.1", 0))
    except OSError as error:
        print("FAIL cannot start: %s" % error)
        return 1
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = "http://127.0.0.1:%d" % server.server_address[1]
    failures = []

    def check(name, ok, detail=""):
        print("%s %s%s" % ("ok  " if ok else "FAIL", name, (": " + detail) if detail else ""))
        if not ok:
            failures.append(name)

    def post(method, params, content_type="application/json", raw=None):
        data = raw if raw is not None else json.dumps({"method": method, "params": params}).encode()
        req = urllib.request.Request(base + "/rpc", data=data, method="POST",
                                     headers={"Content-Type": content_type})
        try:
            with urllib.request.urlopen(req, timeout=args.timeout + 5) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            text = e.read()
            try:
                return e.code, json.loads(text)
            except ValueError:
                return e.code, text
        except (urllib.error.URLError, ConnectionError) as e:
            return 0, repr(e)

    try:
        with urllib.request.urlopen(base + "/", timeout=10) as r:
            page = r.read().decode("utf-8")
            check("GET / serves index.html", r.status == 200 and "<apple-pay-button" in page)
        if os.path.exists(os.path.join(HERE, "app.js")):
            with urllib.request.urlopen(base + "/app.js", timeout=10) as r:
                check("GET /app.js", r.status == 200 and "ApplePaySession" in r.read().decode("utf-8"))

        if args.selftest_items:
            items = json.loads(args.selftest_items)
        else:
            # The first product of the config, asked for directly (listProducts is not on the allow-list).
            products = server.payservice.call("listProducts", {}).get("result", {}).get("products", [])
            items = [{"sku": products[0]["sku"], "quantity": 2}] if products else [{"sku": "clock"}]
        status, answer = post("computeSummaryItems", {"items": items})
        summary = answer.get("summaryItems") if isinstance(answer, dict) else None
        check("POST /rpc computeSummaryItems %s" % json.dumps(items), status == 200 and bool(summary),
              "HTTP %d" % status)
        print("     " + json.dumps(answer, ensure_ascii=False))
        if summary:
            total = summary[-1]
            print("     total: %s %s %s" % (total.get("label"), total.get("amount"), answer.get("currencyCode")))

        status, answer = post("computeSummaryItems", {"items": []})
        check("invalid params are 400 with the JSON-RPC error", status == 400
              and isinstance(answer, dict) and answer.get("error", {}).get("code") == -32602, "HTTP %d" % status)
        status, answer = post("listProducts", {})
        check("a method off the allow-list is 403", status == 403, "HTTP %d" % status)
        status, answer = post("getOrder", {"orderId": "ord_x"})
        check("getOrder is refused too", status == 403, "HTTP %d" % status)
        status, _ = post(None, None, raw=b'{"method":"computeSummaryItems","params":{"items":[' + b" " * MAX_BODY_BYTES + b"]}}")
        check("a body over 64 KiB is 413", status == 413, "HTTP %d" % status)
        status, _ = post("computeSummaryItems", {"items": items}, content_type="text/plain")
        check("a non-JSON content type is 415", status == 415, "HTTP %d" % status)
        status, _ = post(None, None, raw=b"not json")
        check("a body that is not JSON is 400", status == 400, "HTTP %d" % status)

        status, answer = post("createPaymentRequest", {"items": items})
        ok = status == 200 and isinstance(answer, dict) and "paymentRequest" in answer
        check("POST /rpc createPaymentRequest", ok, "HTTP %d" % status)
        if ok:
            print("     minimumVersion %s, total %s" % (answer.get("minimumVersion"),
                  json.dumps(answer["paymentRequest"].get("total"), ensure_ascii=False)))
    except (OSError, ValueError, KeyError) as error:
        check("self-test ran", False, repr(error))
    finally:
        server.shutdown()
        server.server_close()
        server.payservice.stop()
    print("selftest: %s" % ("passed" if not failures else "FAILED (%d)" % len(failures)))
    return 0 if not failures else 1


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Serve the example Apple Pay page and forward its calls to one payservice process.",
        epilog="Arguments after -- go to payservice unchanged, for example: -- --quiet",
    )
    parser.add_argument("--payservice", default=".build/release/payservice", help="the payservice binary")
    parser.add_argument("--config", help="passed to payservice as --config")
    parser.add_argument("--database", help="passed to payservice as --database (self-test default: :memory:)")
    parser.add_argument("--listen", type=parse_listen, default=("127.0.0.1", 8080), metavar="HOST:PORT",
                        help="address to serve HTTP on (default 127.0.0.1:8080)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for an answer (504 after)")
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate chain")
    parser.add_argument("--tls-key", help="the PEM private key of --tls-cert")
    parser.add_argument("--selftest", "--check", action="store_true",
                        help="start on an ephemeral port, exercise /rpc, print the answers and exit")
    parser.add_argument("--selftest-items", metavar="JSON",
                        help='the self-test cart (default: 2 of the first product), like [{"sku":"clock"}]')
    argv = sys.argv[1:] if argv is None else argv
    passthrough = []
    if "--" in argv:
        split = argv.index("--")
        argv, passthrough = argv[:split], argv[split + 1:]
    args = parser.parse_args(argv)
    args.payservice_args = passthrough
    if any(a == "--back-office" or a.startswith("--back-office=") for a in passthrough):
        parser.error("--back-office is for the back office's own process, never the shopper's page")
    if bool(args.tls_cert) != bool(args.tls_key):
        parser.error("--tls-cert and --tls-key go together")
    if not os.path.exists(args.payservice):
        parser.error("no payservice binary at %s (swift build -c release, or give --payservice)" % args.payservice)

    if args.selftest:
        return selftest(args)

    try:
        server = make_server(args, args.listen)
    except (OSError, ssl.SSLError) as error:
        log("cannot start: %s" % error)
        return 1
    host, port = server.server_address[:2]
    scheme = "https" if args.tls_cert else "http"
    log("serving %s://%s:%d/ (Ctrl-C stops)" % (scheme, host if ":" not in host else "[%s]" % host, port))
    if scheme == "http" and host not in ("127.0.0.1", "localhost", "::1"):
        log("warning: plain HTTP on %s; put the bridge behind a TLS-terminating server" % host)
    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)  # stop payservice cleanly (EOF on its stdin) on SIGTERM too
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        server.payservice.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
