#!/usr/bin/env python3
"""Regression tests for bridge.py: the security review's findings (issue 30), end to end.

Each test starts the real bridge as a subprocess on a free loopback port, in front of a real
payservice binary (--config shop.yaml --database :memory:, or the config a route needs: Adyen's for
its webhook, one with Wallet order package keys for Wallet's order web service), and talks HTTP to
it, often byte by byte over a raw socket. Python 3 standard library only; Linux (/proc) for the thread count.

  PAYSERVICE_BINARY=.build/release/payservice python3 examples/web/test_bridge.py [-v]

PAYSERVICE_BINARY defaults to .build/release/payservice; BRIDGE_UNDER_TEST names another bridge.py
to test (the default is the one next to this file).
"""

import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHOP = os.path.join(HERE, "shop.yaml")
BRIDGE = os.path.abspath(os.environ.get("BRIDGE_UNDER_TEST", os.path.join(HERE, "bridge.py")))


def _payservice_binary():
    path = os.environ.get("PAYSERVICE_BINARY", ".build/release/payservice")
    for candidate in (path, os.path.join(REPO, path)):
        if os.path.isfile(candidate):
            return os.path.abspath(candidate)
    raise SystemExit("test_bridge: no payservice binary at %s (set PAYSERVICE_BINARY)" % path)


PAYSERVICE = _payservice_binary()

# The bridge's answers, as documented in examples/web/README.md.
NON_FINITE = {"error": {"code": -32700, "message": "The body has a number that is not finite (like 1e999, NaN or Infinity)"}}
NOT_UTF8 = {"error": {"code": -32700, "message": "The body is not UTF-8"}}
SURROGATE = {"error": {"code": -32700, "message": "The body has a \\u escape of a lone UTF-16 surrogate, which is not text"}}
TOO_DEEP = {"error": {"code": -32700, "message": "The body nests arrays and objects deeper than 64 levels"}}
TOO_LARGE = {"error": {"code": -32600, "message": "The body is larger than 65536 bytes"}}
NOT_FOUND = {"error": {"code": -32601, "message": "Not found"}}
BAD_HOST = {"error": {"code": -32600, "message": "The Host header does not name this bridge (--allowed-hosts)"}}
BAD_ORIGIN = {"error": {"code": -32600, "message": "The Origin header is not an allowed host (--allowed-hosts)"}}
BUSY = {"error": {"code": -32000, "message": "Too many connections; try again"}}
HEADERS_LATE = {"error": {"code": -32600, "message": "The request's headers did not arrive in time"}}
BODY_LATE = {"error": {"code": -32600, "message": "The request's body did not arrive in time"}}

CART = {"items": [{"sku": "grinder", "quantity": 2}]}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def payservice_call(method, params):
    """What payservice itself answers: (the result, None) or (None, the error object)."""
    done = subprocess.run([PAYSERVICE, "call", method, json.dumps(params), "--config", SHOP,
                           "--database", ":memory:"], capture_output=True, timeout=30)
    answer = json.loads(done.stdout)
    return (answer, None) if done.returncode == 0 else (None, answer)


def rpc_body(method, params):
    return json.dumps({"method": method, "params": params}).encode()


class Bridge:
    """bridge.py as a subprocess; its stderr (its log and payservice's) is kept in a file."""

    def __init__(self, *args, payservice=PAYSERVICE, database=":memory:", env=None, scheme="http", config=SHOP):
        self.port = free_port()
        self.scheme = scheme
        self.log_file = tempfile.TemporaryFile()
        argv = [sys.executable, BRIDGE, "--payservice", payservice, "--config", config, "--database", database,
                "--listen", "127.0.0.1:%d" % self.port, "--timeout", "5"] + list(args)
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=self.log_file,
                                     env=dict(os.environ, **(env or {})))
        deadline = time.monotonic() + 20
        while b"bridge: serving" not in self.log():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError("the bridge did not start:\n" + self.log().decode(errors="replace"))
            time.sleep(0.02)

    def log(self):
        if self.log_file.closed:
            return self.final_log
        self.log_file.seek(0)
        return self.log_file.read()

    def stop(self):
        """Stops the bridge (SIGTERM) and returns its whole log."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self.log_file.closed:
            self.final_log = self.log()
            self.log_file.close()
        return self.final_log

    def threads(self):
        return len(os.listdir("/proc/%d/task" % self.proc.pid))

    def connection(self, timeout=5):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, conn=None):
        """(status, decoded JSON body or raw bytes, headers) over conn or a new connection."""
        own = conn is None
        conn = conn or self.connection()
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            data = response.read()
        finally:
            if own:
                conn.close()
        try:
            data = json.loads(data)
        except ValueError:
            pass
        return response.status, data, response

    def post(self, body, headers=None, conn=None):
        return self.request("POST", "/rpc", body, dict({"Content-Type": "application/json"}, **(headers or {})),
                            conn)[:2]

    def raw(self):
        return socket.create_connection(("127.0.0.1", self.port), timeout=5)

    def host(self):
        return "127.0.0.1:%d" % self.port


def read_responses(sock, head=False, timeout=3.0):
    """Every HTTP response on sock until the server closes it or nothing comes for `timeout`:
    ([(status, headers, body)], whether the server closed the connection). `head`: the first
    response answers a HEAD (it has no body)."""
    sock.settimeout(timeout)
    stream = sock.makefile("rb")
    responses = []
    try:
        while True:
            status_line = stream.readline()
            if not status_line:
                return responses, True
            headers = {}
            while True:
                line = stream.readline().rstrip(b"\r\n")
                if not line:
                    break
                name, _, value = line.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            length = 0 if head and not responses else int(headers.get("content-length", "0"))
            body = stream.read(length)
            try:
                body = json.loads(body)
            except ValueError:
                pass
            responses.append((int(status_line.split()[1]), headers, body))
    except (socket.timeout, ConnectionError):
        return responses, False


class SharedBridge(unittest.TestCase):
    """Tests against one bridge with the default limits."""

    @classmethod
    def setUpClass(cls):
        cls.bridge = Bridge()

    @classmethod
    def tearDownClass(cls):
        cls.bridge.stop()

    # ---- finding: 1e999 became Infinity, payservice answered id null, the bridge waited 60 s

    def test_non_finite_numbers_are_400_at_once(self):
        conn = self.bridge.connection()
        for number in ("1e999", "-1e999", "NaN", "Infinity", "-Infinity"):
            with self.subTest(number=number):
                body = b'{"method":"computeSummaryItems","params":{"items":[{"sku":"grinder","quantity":%s}]}}' \
                    % number.encode()
                started = time.monotonic()
                self.assertEqual(self.bridge.post(body, conn=conn), (400, NON_FINITE))
                self.assertLess(time.monotonic() - started, 2.0)
        # payservice is in step: the next call gets its own answer at once.
        started = time.monotonic()
        self.assertEqual(self.bridge.post(rpc_body("computeSummaryItems", CART), conn=conn),
                         (200, payservice_call("computeSummaryItems", CART)[0]))
        self.assertLess(time.monotonic() - started, 2.0)
        conn.close()

    # ---- finding: lone surrogates and deep nesting dropped the connection with a traceback

    def test_text_that_is_not_unicode_is_400_on_a_live_connection(self):
        conn = self.bridge.connection()
        cases = [
            (b'{"method":"computeSummaryItems","params":{"items":[{"sku":"\\ud800"}]}}', SURROGATE),
            (b'{"method":"computeSummaryItems","params":{"items":[{"sku":"a\\udfffb"}]}}', SURROGATE),
            (b'{"method":"computeSummaryItems","params":{"\\udc00":1}}', SURROGATE),
            (b'{"method":"computeSummaryItems","params":{"items":[{"sku":"\xff"}]}}', NOT_UTF8),
            (b'{"method":"computeSummaryItems","params":{"items":[{"sku":"\xed\xa0\x80"}]}}', NOT_UTF8),
        ]
        for body, expected in cases:
            with self.subTest(body=body):
                self.assertEqual(self.bridge.post(body, conn=conn), (400, expected))
        # A valid surrogate pair is text: it reaches payservice, which answers for itself.
        params = {"items": [{"sku": "\U0001F600"}]}
        self.assertEqual(self.bridge.post(rpc_body("computeSummaryItems", params), conn=conn),
                         (400, {"error": payservice_call("computeSummaryItems", params)[1]}))
        conn.close()
        self.assertNotIn(b"Traceback", self.bridge.log())

    def test_nesting_deeper_than_64_is_400(self):
        def nested(depth, closed=True):  # the body object and params are levels 1 and 2
            k = depth - 2
            return b'{"method":"computeSummaryItems","params":{"items":' + b"[" * k + (b"]" * k + b"}}" if closed else b"")

        conn = self.bridge.connection()
        self.assertEqual(self.bridge.post(nested(60000, closed=False), conn=conn), (400, TOO_DEEP))
        self.assertEqual(self.bridge.post(nested(30000), conn=conn), (400, TOO_DEEP))
        self.assertEqual(self.bridge.post(nested(65), conn=conn), (400, TOO_DEEP))
        # Brackets inside strings are text, not nesting: payservice answers for itself.
        params = {"items": [{"sku": "[{" * 20000}]}
        self.assertEqual(self.bridge.post(rpc_body("computeSummaryItems", params), conn=conn),
                         (400, {"error": payservice_call("computeSummaryItems", params)[1]}))
        # 64 levels are forwarded: payservice's own answer comes back.
        params = json.loads(nested(64))["params"]
        self.assertEqual(self.bridge.post(nested(64), conn=conn),
                         (400, {"error": payservice_call("computeSummaryItems", params)[1]}))
        self.assertEqual(self.bridge.post(b"[" * 100000, conn=conn), (413, TOO_LARGE))
        conn.close()
        self.assertNotIn(b"Traceback", self.bridge.log())

    # ---- finding: bodies of GETs and of other paths were parsed as the next request

    def test_get_or_head_with_a_body_is_400_and_closed(self):
        smuggled = b"GET /app.js HTTP/1.1\r\nHost: %s\r\n\r\n" % self.bridge.host().encode()
        host = self.bridge.host().encode()
        cases = [
            (b"GET", b"Content-Length: %d\r\n\r\n" % len(smuggled) + smuggled),
            (b"HEAD", b"Content-Length: %d\r\n\r\n" % len(smuggled) + smuggled),
            (b"GET", b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(smuggled), smuggled)),
        ]
        for verb, rest in cases:
            with self.subTest(verb=verb, rest=rest[:30]):
                with self.bridge.raw() as sock:
                    sock.sendall(verb + b" / HTTP/1.1\r\nHost: " + host + b"\r\n" + rest)
                    responses, closed = read_responses(sock, head=verb == b"HEAD")
                self.assertEqual([status for status, _, _ in responses], [400])
                self.assertEqual(responses[0][1].get("connection"), "close")
                if verb == b"GET":
                    self.assertEqual(responses[0][2], {"error": {"code": -32600, "message": "A GET request has no body"}})
                self.assertTrue(closed)

    def test_unused_bodies_are_read_not_answered(self):
        host = self.bridge.host().encode()
        smuggled = b"GET /app.js HTTP/1.1\r\nHost: %s\r\n\r\n" % host
        last = b"GET /missing HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % host
        for verb, path, status, body in [(b"POST", b"/nope", 404, NOT_FOUND),
                                         (b"PUT", b"/rpc", 405, {"error": {"code": -32601, "message": "Method not allowed"}}),
                                         (b"POST", b"/rpc", 413, TOO_LARGE)]:
            with self.subTest(verb=verb, path=path):
                padding = b" " * 70000 if status == 413 else b""
                request = b"%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (
                    verb, path, host, len(smuggled) + len(padding))
                with self.bridge.raw() as sock:
                    sock.sendall(request + smuggled + padding + last)
                    responses, closed = read_responses(sock)
                self.assertEqual([(s, b) for s, _, b in responses], [(status, body), (404, NOT_FOUND)])
                self.assertNotIn("connection", responses[0][1])  # kept alive: the body was read
                self.assertTrue(closed)

    # ---- finding: no Host or Origin check (DNS rebinding)

    def test_host_header_must_name_the_bridge(self):
        port = self.bridge.port
        for host in ("127.0.0.1:%d" % port, "localhost:%d" % port, "LOCALHOST:%d" % port, "[::1]:%d" % port):
            with self.subTest(host=host):
                self.assertEqual(self.bridge.request("GET", "/", headers={"Host": host})[0], 200)
        for host in ("evil.example:%d" % port, "evil.example", "localhost:%d" % (port + 1), "127.0.0.1",
                     "127.0.0.1:%d@evil.example" % port):
            with self.subTest(host=host):
                self.assertEqual(self.bridge.request("GET", "/", headers={"Host": host})[:2], (421, BAD_HOST))
                status, answer = self.bridge.post(rpc_body("computeSummaryItems", CART), headers={"Host": host})
                self.assertEqual((status, answer), (421, BAD_HOST))
        with self.bridge.raw() as sock:  # HTTP/1.0 without a Host header
            sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
            responses, _ = read_responses(sock)
        self.assertEqual([(s, b) for s, _, b in responses], [(421, BAD_HOST)])

    def test_post_origin_must_be_an_allowed_host(self):
        port = self.bridge.port
        expected = payservice_call("computeSummaryItems", CART)[0]
        for origin in (None, "http://127.0.0.1:%d" % port, "http://localhost:%d" % port, "http://[::1]:%d" % port):
            with self.subTest(origin=origin):
                headers = {"Origin": origin} if origin else {}
                self.assertEqual(self.bridge.post(rpc_body("computeSummaryItems", CART), headers=headers),
                                 (200, expected))
        for origin in ("http://evil.example", "http://evil.example:%d" % port, "null",
                       "http://localhost:%d" % (port + 1), "http://localhost", "ftp://localhost:%d" % port):
            with self.subTest(origin=origin):
                self.assertEqual(self.bridge.post(rpc_body("computeSummaryItems", CART), headers={"Origin": origin}),
                                 (403, BAD_ORIGIN))

    # ---- finding: raw terminal escapes from request paths reached the log

    def test_log_lines_escape_control_characters(self):
        host = self.bridge.host().encode()
        with self.bridge.raw() as sock:
            sock.sendall(b"POST /\x1b]0;pwned\x07 HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n"
                         b"GET /\x1b[31mred\x9b HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (host, host))
            responses, _ = read_responses(sock)
        self.assertEqual([(s, b) for s, _, b in responses], [(404, NOT_FOUND), (404, NOT_FOUND)])
        log = self.bridge.log()
        self.assertIn(b"bridge: POST /\\x1b]0;pwned\\x07 method=- status=404 ms=", log)
        self.assertIn(b"bridge: GET /\\x1b[31mred\\x9b status=404 ms=", log)
        for byte in range(32):
            if byte != 10:
                self.assertNotIn(bytes([byte]), log)
        self.assertNotIn(b"\x7f", log)
        self.assertNotIn("\x9b".encode(), log)


class PayserviceAnswersWithIdNull(unittest.TestCase):
    """An id-null error line is the answer to the line just written."""

    def test_a_line_payservice_cannot_take_is_answered_at_once(self):
        # With --max-line-bytes 256, payservice answers a longer line -32600 with id null.
        bridge = Bridge("--", "--max-line-bytes", "256")
        try:
            conn = bridge.connection(timeout=10)
            started = time.monotonic()
            answer = bridge.post(rpc_body("computeSummaryItems", {"items": [{"sku": "x" * 300}]}), conn=conn)
            elapsed = time.monotonic() - started
            self.assertEqual(answer, (400, {"error": {"code": -32600, "message":
                             "Invalid Request: line exceeds the limit of 256 bytes (--max-line-bytes)"}}))
            self.assertLess(elapsed, 2.0)
            self.assertEqual(bridge.post(rpc_body("computeSummaryItems", CART), conn=conn),
                             (200, payservice_call("computeSummaryItems", CART)[0]))
            conn.close()
        finally:
            bridge.stop()


class ConnectionLimits(unittest.TestCase):
    """--max-connections and the idle, header and body deadlines."""

    CAP = 8

    @classmethod
    def setUpClass(cls):
        cls.bridge = Bridge("--max-connections", str(cls.CAP), "--idle-timeout", "1", "--header-timeout", "1",
                            "--body-timeout", "1")
        cls.idle_threads = cls.bridge.threads()  # before any connection

    @classmethod
    def tearDownClass(cls):
        cls.bridge.stop()

    def wait_for_threads(self, count, within=3.0):
        deadline = time.monotonic() + within
        while self.bridge.threads() != count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.bridge.threads()

    @unittest.skipUnless(os.path.isdir("/proc/self/task"), "counts threads in /proc")
    def test_half_open_requests_hold_at_most_max_connections_threads(self):
        idle = self.idle_threads
        self.assertEqual(self.wait_for_threads(idle), idle)  # earlier tests' connections are gone
        half_open = []
        try:
            for _ in range(self.CAP):
                sock = self.bridge.raw()
                sock.sendall(b"POST /rpc HTTP/1.1\r\nHost: ")
                half_open.append((sock, time.monotonic()))
            self.assertEqual(self.wait_for_threads(idle + self.CAP), idle + self.CAP)
            # Over the cap: 503 at once, without a thread.
            for _ in range(4):
                with self.bridge.raw() as sock:
                    started = time.monotonic()
                    responses, closed = read_responses(sock)
                    self.assertLess(time.monotonic() - started, 1.0)
                self.assertEqual([(s, b) for s, _, b in responses], [(503, BUSY)])
                self.assertTrue(closed)
            self.assertEqual(self.bridge.threads(), idle + self.CAP)
            # The half-open ones get 408 once --header-timeout has passed, and are closed.
            for sock, opened in half_open:
                responses, closed = read_responses(sock, timeout=4)
                self.assertEqual([(s, b) for s, _, b in responses], [(408, HEADERS_LATE)])
                self.assertTrue(closed)
                self.assertLess(time.monotonic() - opened, 3.0)
        finally:
            for sock, _ in half_open:
                sock.close()
        self.assertEqual(self.wait_for_threads(idle), idle)
        self.assertEqual(self.bridge.post(rpc_body("computeSummaryItems", CART))[0], 200)

    def test_idle_connections_are_closed(self):
        with self.bridge.raw() as sock:
            started = time.monotonic()
            responses, closed = read_responses(sock, timeout=4)
            elapsed = time.monotonic() - started
        self.assertEqual((responses, closed), ([], True))
        self.assertGreater(elapsed, 0.8)
        self.assertLess(elapsed, 3.0)
        # After an answer, the kept-alive connection is closed after --idle-timeout too.
        with self.bridge.raw() as sock:
            sock.sendall(b"GET /nothing HTTP/1.1\r\nHost: %s\r\n\r\n" % self.bridge.host().encode())
            started = time.monotonic()
            responses, closed = read_responses(sock, timeout=4)
            elapsed = time.monotonic() - started
        self.assertEqual(([(s, b) for s, _, b in responses], closed), ([(404, NOT_FOUND)], True))
        self.assertLess(elapsed, 3.0)

    def test_a_slow_body_is_408(self):
        with self.bridge.raw() as sock:
            sock.sendall(b"POST /rpc HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100\r\n\r\n{\"method\":" % self.bridge.host().encode())
            started = time.monotonic()
            responses, closed = read_responses(sock, timeout=4)
            elapsed = time.monotonic() - started
        self.assertEqual(([(s, b) for s, _, b in responses], closed), ([(408, BODY_LATE)], True))
        self.assertLess(elapsed, 3.0)


class AllowedHostsFlag(unittest.TestCase):
    def test_allowed_hosts_replaces_the_default(self):
        bridge = Bridge("--allowed-hosts", "shop.example.com, 10.0.0.5:8443")
        try:
            expected = payservice_call("computeSummaryItems", CART)[0]
            body = rpc_body("computeSummaryItems", CART)
            # A name without a port allows any port (a proxy forwards Host: shop.example.com).
            for host in ("shop.example.com", "shop.example.com:443", "10.0.0.5:8443"):
                with self.subTest(host=host):
                    self.assertEqual(bridge.request("GET", "/app.js", headers={"Host": host})[0], 200)
            for host in (bridge.host(), "localhost:%d" % bridge.port, "10.0.0.5", "www.shop.example.com"):
                with self.subTest(host=host):
                    self.assertEqual(bridge.request("GET", "/", headers={"Host": host})[:2], (421, BAD_HOST))
            headers = {"Host": "shop.example.com"}
            for origin in ("https://shop.example.com", "http://shop.example.com:8080", "https://10.0.0.5:8443"):
                with self.subTest(origin=origin):
                    self.assertEqual(bridge.post(body, headers=dict(headers, Origin=origin)), (200, expected))
            for origin in ("https://evil.example", "https://10.0.0.5", "http://127.0.0.1:%d" % bridge.port):
                with self.subTest(origin=origin):
                    self.assertEqual(bridge.post(body, headers=dict(headers, Origin=origin)), (403, BAD_ORIGIN))
        finally:
            bridge.stop()


class DomainAssociationFlag(unittest.TestCase):
    def test_apples_domain_file_is_served_where_apple_fetches_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "apple-developer-merchantid-domain-association")
            with open(path, "wb") as f:
                f.write(b"7b2270737049...\n")
            bridge = Bridge("--domain-association", path)
            try:
                status, body, headers = bridge.request("GET", "/.well-known/apple-developer-merchantid-domain-association")
                self.assertEqual((status, body, headers.getheader("Content-Type")), (200, b"7b2270737049...\n", "text/plain"))
            finally:
                bridge.stop()
        # Without the flag the path is an unknown one.
        bridge = Bridge()
        try:
            self.assertEqual(bridge.request("GET", "/.well-known/apple-developer-merchantid-domain-association")[:2],
                             (404, NOT_FOUND))
        finally:
            bridge.stop()


class Tls(unittest.TestCase):
    @unittest.skipUnless(shutil.which("openssl"), "needs the openssl command to make a throwaway certificate")
    def test_a_silent_connection_does_not_block_the_others(self):
        with tempfile.TemporaryDirectory() as tmp:
            cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                            "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
                            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                           check=True, capture_output=True, timeout=60)
            bridge = Bridge("--tls-cert", cert, "--tls-key", key, "--header-timeout", "2")
            try:
                context = ssl.create_default_context(cafile=cert)
                silent = bridge.raw()  # connects, never sends a ClientHello
                opened = time.monotonic()
                time.sleep(0.2)  # the bridge has accepted it
                started = time.monotonic()
                conn = http.client.HTTPSConnection("127.0.0.1", bridge.port, timeout=5, context=context)
                try:
                    conn.request("GET", "/app.js")
                    response = conn.getresponse()
                    self.assertEqual(response.status, 200)
                    self.assertIn(b"ApplePaySession", response.read())
                finally:
                    conn.close()
                elapsed = time.monotonic() - started
                self.assertLess(elapsed, 2.0)
                # The silent connection is closed once --header-timeout has passed.
                silent.settimeout(5)
                self.assertEqual(silent.recv(100), b"")
                self.assertLess(time.monotonic() - opened, 4.0)
                silent.close()
            finally:
                log = bridge.stop()
            self.assertIn(b"bridge: closed a connection: TLS handshake failed:", log)


class LogAndDatabaseURL(unittest.TestCase):
    """The database password reaches payservice in PGPASSWORD, never its command line or the log."""

    def test_password_goes_in_the_environment_and_no_userinfo_is_logged(self):
        with tempfile.TemporaryDirectory() as tmp:
            record = os.path.join(tmp, "record.json")
            # Stands in for payservice: records what it was given, then runs the real one on :memory:.
            wrapper = os.path.join(tmp, "payservice")
            with open(wrapper, "w") as f:
                f.write("#!%s\nimport json, os, sys\n"
                        "json.dump({'argv': sys.argv[1:], 'PGPASSWORD': os.environ.get('PGPASSWORD')}, open(%r, 'w'))\n"
                        "argv = sys.argv[1:]\nargv[argv.index('--database') + 1] = ':memory:'\n"
                        "os.execv(%r, [%r] + argv)\n" % (sys.executable, record, PAYSERVICE, PAYSERVICE))
            os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IXUSR)
            url = "postgres://shopper:s3%20cr%40t@db.internal:5433/shop?sslmode=require"
            bridge = Bridge(payservice=wrapper, database=url, env={"PGPASSWORD": "not-this-one"})
            log = bridge.stop()
            with open(record) as f:
                given = json.load(f)
        self.assertEqual(given, {"argv": ["--config", SHOP, "--database",
                                          "postgres://shopper@db.internal:5433/shop?sslmode=require"],
                                 "PGPASSWORD": "s3 cr@t"})
        self.assertIn(b" --database postgres://db.internal:5433/shop?sslmode=require", log)
        for secret in (b"s3 cr@t", b"s3%20cr%40t", b"shopper", b"cr%40t", b"cr@t"):
            self.assertNotIn(secret, log)


class AdyenWebhook(unittest.TestCase):
    """POST /webhooks/adyen in front of a payservice configured for Adyen (the golden case's config
    and keys): the body passed on whole, "[accepted]" once taken in, 500 otherwise, nothing of it logged."""

    GOLDEN = os.path.join(REPO, "Tests", "EndToEndTests", "Golden", "adyen-notifications")

    @classmethod
    def setUpClass(cls):
        with open(os.path.join(cls.GOLDEN, "env")) as f:
            env = dict(line.strip().split("=", 1) for line in f if line.strip())
        with open(os.path.join(cls.GOLDEN, "requests.jsonl")) as f:
            cls.payload = json.loads(f.readline())["params"]["payload"]
        cls.bridge = Bridge(config=os.path.join(cls.GOLDEN, "config.yaml"), env=env)

    @classmethod
    def tearDownClass(cls):
        cls.bridge.stop()

    def notify(self, body):
        return self.bridge.request("POST", "/webhooks/adyen", body, {"Content-Type": "application/json"})

    def test_a_signed_batch_is_accepted_once_and_again(self):
        for _ in range(2):
            status, body, response = self.notify(self.payload.encode())
            self.assertEqual((status, body), (200, b"[accepted]"))
            self.assertEqual(response.getheader("Content-Type"), "text/plain; charset=utf-8")

    def test_what_is_not_a_notification_is_500_so_that_adyen_sends_it_again(self):
        status, body, _ = self.notify(b"{}")
        self.assertEqual(status, 500)
        self.assertEqual(body["status"], "failed")
        self.assertEqual(body["failureCode"], "not_a_notification")

    def test_a_body_over_a_mebibyte_is_413(self):
        status, body, _ = self.notify(b" " * ((1 << 20) + 1))
        self.assertEqual((status, body), (413, {"error": {"code": -32600, "message": "The body is larger than 1048576 bytes"}}))

    def test_the_log_names_the_route_and_never_the_body(self):
        self.notify(self.payload.encode())
        log = self.bridge.log()
        self.assertIn(b"POST /webhooks/adyen method=processAdyenNotification status=200", log)
        signature = json.loads(self.payload)["notificationItems"][0]["NotificationRequestItem"]["additionalData"]["hmacSignature"]
        self.assertNotIn(signature.encode(), log)
        self.assertNotIn(b"NC6HT9CRT65ZGN82", log)


class WalletOrders(unittest.TestCase):
    """Apple's Wallet order web service under --wallet-orders-path, in front of a payservice with the
    walletOrders package keys (the test Order Type ID certificate): an order placed through /rpc as
    the page places it, then each route as Wallet calls it, and a log that holds no token."""

    FIXTURES = os.path.join(REPO, "Tests", "PayServiceCoreTests", "Fixtures", "wallet-orders")
    GOLDEN = os.path.join(REPO, "Tests", "EndToEndTests", "Golden", "wallet-orders")
    ORDER_TYPE = "order.com.example.coffee"
    DEVICE = "phone-6b7a9ad0"
    PUSH_TOKEN = "c0ffee" * 10 + "beef"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        with open(os.path.join(cls.GOLDEN, "config.template.yaml")) as f:
            template = f.read()
        # The golden config without its apns section: no pushes are sent.
        config = template.split("\n  apns:\n", 1)[0] + "\n"
        for placeholder, name in (("CERTIFICATE", "order_type_certificate.pem"), ("PRIVATE_KEY", "order_type_key.pem"),
                                  ("INTERMEDIATE", "wwdr_certificate.pem")):
            config = config.replace("{{%s}}" % placeholder, os.path.join(cls.FIXTURES, name))
        cls.config = os.path.join(cls.tmp.name, "config.yaml")
        with open(cls.config, "w") as f:
            f.write(config)
        cls.bridge = Bridge(config=cls.config)
        try:
            with open(os.path.join(cls.GOLDEN, "requests.jsonl")) as f:
                requests = [json.loads(line) for line in f][:2]
            authorize, order = requests[0]["params"], requests[1]["params"]
            status, answer = cls.bridge.post(rpc_body("authorizePayment", authorize))
            assert status == 200 and answer["status"] == "success", (status, answer)
            cls.details = answer["orderDetails"]
            status, answer = cls.bridge.post(rpc_body("processOrder", dict(order, chargeToken=answer["chargeToken"])))
            assert status == 200 and answer["status"] == "succeeded", (status, answer)
            assert answer["orderId"] == cls.details["orderIdentifier"], answer
        except BaseException:
            cls.bridge.stop()
            cls.tmp.cleanup()
            raise
        cls.token = cls.details["authenticationToken"]
        cls.order_id = cls.details["orderIdentifier"]

    @classmethod
    def tearDownClass(cls):
        cls.bridge.stop()
        cls.tmp.cleanup()

    def order_path(self, order_type=None):
        return "/wallet-orders/v1/orders/%s/%s" % (order_type or self.ORDER_TYPE, self.order_id)

    def registration_path(self, device=None, order_type=None):
        return "/wallet-orders/v1/devices/%s/registrations/%s/%s" % (
            device or self.DEVICE, order_type or self.ORDER_TYPE, self.order_id)

    def auth(self, token=None, **headers):
        return dict({"Authorization": "AppleOrder " + (token or self.token)}, **headers)

    def register(self, device=None, headers=None, push_token=None, order_type=None):
        body = json.dumps({"pushToken": push_token or self.PUSH_TOKEN}).encode()
        return self.bridge.request("POST", self.registration_path(device, order_type), body,
                                   self.auth() if headers is None else headers)[:2]

    def test_the_order_web_service_from_registration_to_unregistration(self):
        # Registered, then the same registration again.
        self.assertEqual(self.register(), (201, {"status": "created"}))
        self.assertEqual(self.register(), (200, {"status": "alreadyRegistered"}))
        # Another order's token, and none: 401 (the latter without payservice asked).
        wrong = "0" * 32
        self.assertEqual(self.register("tablet-99", self.auth(wrong))[0], 401)
        for headers in ({}, {"Authorization": self.token}, {"Authorization": "Bearer " + self.token},
                        {"Authorization": "AppleOrder "}, {"Authorization": "AppleOrder short"}):
            with self.subTest(headers=headers):
                status, body = self.register("tablet-99", headers)
                self.assertEqual(status, 401)
                self.assertEqual(body["error"]["code"], -32600)

        # The order's package: a zip, with when it last changed.
        status, package, response = self.bridge.request("GET", self.order_path(), headers=self.auth())
        self.assertEqual(status, 200)
        self.assertTrue(package.startswith(b"PK\x03\x04"), package[:16])
        self.assertEqual(response.getheader("Content-Type"), "application/vnd.apple.finance.order")
        last_modified = response.getheader("Last-Modified")
        self.assertRegex(last_modified, r"^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} GMT$")
        status, body, response = self.bridge.request("GET", self.order_path(),
                                                     headers=self.auth(**{"If-Modified-Since": last_modified}))
        self.assertEqual((status, body), (304, b""))
        self.assertEqual(response.getheader("Last-Modified"), last_modified)
        self.assertIsNone(response.getheader("Content-Length"))
        self.assertEqual(self.bridge.request("GET", self.order_path(), headers=self.auth(wrong))[0], 401)
        self.assertEqual(self.bridge.request("GET", self.order_path(), headers={})[0], 401)
        # Wallet is not a page: an Origin header is not checked.
        self.assertEqual(self.bridge.request("GET", self.order_path(),
                                             headers=self.auth(Origin="https://evil.example"))[0], 200)

        # The orders the device follows that changed: this one, then none after a time to come.
        changes = "/wallet-orders/v1/devices/%s/registrations/%s" % (self.DEVICE, self.ORDER_TYPE)
        status, body, response = self.bridge.request("GET", changes)
        self.assertEqual(status, 200)
        self.assertEqual(response.getheader("Content-Type"), "application/json; charset=utf-8")
        self.assertEqual(body["orderIdentifiers"], [self.order_id])
        self.assertRegex(body["lastModified"], r"^[0-9]{1,12}$")
        self.assertEqual(set(body), {"orderIdentifiers", "lastModified"})
        status, body, response = self.bridge.request("GET", changes + "?ordersModifiedSince=99999999999")
        self.assertEqual((status, body), (204, b""))
        self.assertEqual(self.bridge.request("GET", changes + "?ordersModifiedSince=yesterday")[0], 400)

        # What devices report, for the operator.
        status, body, _ = self.bridge.request("POST", "/wallet-orders/v1/log",
                                              json.dumps({"logs": ["could not refresh the order"]}).encode(),
                                              {"Content-Type": "application/json"})
        self.assertEqual((status, body), (200, {"status": "ok"}))

        # Unregistered, then not registered: 200 both times.
        delete = lambda: self.bridge.request("DELETE", self.registration_path(), headers=self.auth())[:2]
        self.assertEqual(delete(), (200, {"status": "unregistered"}))
        self.assertEqual(delete(), (200, {"status": "notRegistered"}))
        self.assertEqual(self.bridge.request("DELETE", self.registration_path(), headers={})[0], 401)

        log = self.bridge.log()
        for route, method, status in [
                ("POST /wallet-orders/v1/devices/{deviceLibraryIdentifier}/registrations/{orderTypeIdentifier}/"
                 "{orderIdentifier}", "registerWalletDevice", 201),
                ("GET /wallet-orders/v1/orders/{orderTypeIdentifier}/{orderIdentifier}", "getWalletOrder", 304),
                ("GET /wallet-orders/v1/devices/{deviceLibraryIdentifier}/registrations/{orderTypeIdentifier}",
                 "listChangedWalletOrders", 204),
                ("POST /wallet-orders/v1/log", "logWalletMessages", 200),
                ("DELETE /wallet-orders/v1/devices/{deviceLibraryIdentifier}/registrations/{orderTypeIdentifier}/"
                 "{orderIdentifier}", "unregisterWalletDevice", 200)]:
            self.assertIn(("bridge: %s method=%s status=%d " % (route, method, status)).encode(), log)
        for secret in (self.token, wrong, self.PUSH_TOKEN, '"pushToken"', self.DEVICE):
            self.assertNotIn(secret.encode(), log)
        # payservice writes what devices report to its own log, as a warning it has redacted; the
        # bridge's lines never hold it.
        bridge_lines = b"\n".join(line for line in log.splitlines() if line.startswith(b"bridge: "))
        self.assertNotIn(b"could not refresh", bridge_lines)

    def test_another_order_type_is_404(self):
        other = "order.com.example.tea"
        self.assertEqual(self.bridge.request("GET", self.order_path(other), headers=self.auth())[0], 404)
        self.assertEqual(self.register(order_type=other)[0], 404)
        self.assertEqual(self.bridge.request("DELETE", self.registration_path(order_type=other),
                                             headers=self.auth())[0], 404)
        self.assertEqual(self.bridge.request("GET", "/wallet-orders/v1/devices/%s/registrations/%s"
                                             % (self.DEVICE, other))[0], 404)

    def test_route_parts_are_percent_decoded_once_and_checked_by_payservice(self):
        # a%2Fb is the identifier "a/b", which payservice refuses: -32602, 400.
        status, body = self.register("a%2Fb")
        self.assertEqual(status, 400)
        self.assertEqual(body["error"]["code"], -32602)
        self.assertEqual([e["path"] for e in body["error"]["data"]["errors"]], ["deviceLibraryIdentifier"])
        # %2E is ".": the order's own type. Decoded once only: %252E is "%2E", another type.
        status, _, _ = self.bridge.request("GET", self.order_path("order%2Ecom%2Eexample%2Ecoffee"), headers=self.auth())
        self.assertEqual(status, 200)
        status, _, _ = self.bridge.request("GET", self.order_path("order%252Ecom.example.coffee"), headers=self.auth())
        self.assertEqual(status, 404)
        # Not UTF-8 once decoded: the bridge refuses it.
        self.assertEqual(self.bridge.request("GET", self.order_path("%ff"), headers=self.auth())[0], 400)

    def test_bodies_are_json_objects_of_at_most_64_kib(self):
        path = self.registration_path("watch-0c1d2e3f")
        for body, status in ((b"not json", 400), (b"[]", 400), (b"{}", 400), (b'{"pushToken": 7}', 400),
                             (b'{"pushToken": "' + b"a" * 70000 + b'"}', 413)):
            with self.subTest(body=body[:20]):
                self.assertEqual(self.bridge.request("POST", path, body, self.auth())[0], status)
        self.assertEqual(self.bridge.request("POST", "/wallet-orders/v1/log", b'{"logs": "x"}')[0], 400)
        self.assertEqual(self.bridge.request("POST", "/wallet-orders/v1/log", b" " * 70000)[:2], (413, TOO_LARGE))
        self.assertNotIn(b"Traceback", self.bridge.log())

    def test_other_methods_and_paths(self):
        status, _, response = self.bridge.request("PUT", self.order_path(), b"{}", self.auth())
        self.assertEqual((status, response.getheader("Allow")), (405, "GET, HEAD"))
        status, _, response = self.bridge.request("GET", self.registration_path(), headers=self.auth())
        self.assertEqual((status, response.getheader("Allow")), (405, "DELETE, POST"))
        self.assertEqual(self.bridge.request("GET", "/wallet-orders/v1/log")[0], 405)
        for path in ("/wallet-orders/v1/orders/%s" % self.ORDER_TYPE, "/wallet-orders/v2/log", "/wallet-orders/v1/",
                     "/wallet-orders/v1/passes/x/y"):
            with self.subTest(path=path):
                self.assertEqual(self.bridge.request("GET", path, headers=self.auth())[:2], (404, NOT_FOUND))
        # The Host check holds here as everywhere.
        self.assertEqual(self.bridge.request("GET", self.order_path(), headers=self.auth(Host="evil.example"))[:2],
                         (421, BAD_HOST))

    def test_the_path_prefix_is_configurable(self):
        bridge = Bridge("--wallet-orders-path", "/shop/wallet/", config=self.config)
        try:
            path = "/shop/wallet/v1/orders/%s/%s" % (self.ORDER_TYPE, self.order_id)
            # Another store (:memory:): the order is not there, and an unknown order is 401.
            self.assertEqual(bridge.request("GET", path, headers=self.auth())[0], 401)
            self.assertEqual(bridge.request("GET", self.order_path(), headers=self.auth())[:2], (404, NOT_FOUND))
            status, body, _ = bridge.request("POST", "/shop/wallet/v1/log", b'{"logs": []}')
            self.assertEqual((status, body), (200, {"status": "ok"}))
        finally:
            log = bridge.stop()
        self.assertIn(b"bridge: GET /shop/wallet/v1/orders/{orderTypeIdentifier}/{orderIdentifier} "
                      b"method=getWalletOrder status=401 ", log)

class WalletOrdersWhenPayserviceFails(unittest.TestCase):
    """What Wallet's routes answer when payservice cannot: a stand-in payservice answers each method
    with an error or an answer the route does not have, or exits."""

    STAND_IN = """#!%s
import json, sys
answers = {
    "listShippingMethods": {"result": {"shippingMethods": []}},
    "getWalletOrder": {"error": {"code": -32001, "message": "Store unavailable"}},
    "registerWalletDevice": {"result": {"status": "somethingElse"}},
    "unregisterWalletDevice": {"error": {"code": -32603, "message": "Internal error"}},
    "listChangedWalletOrders": {"result": {"status": "ok", "orderIdentifiers": ["ord_1"], "lastModified": "7"}},
}
for line in sys.stdin:
    request = json.loads(line)
    if request["method"] not in answers:
        sys.exit(0)
    sys.stdout.write(json.dumps(dict(answers[request["method"]], jsonrpc="2.0", id=request["id"])) + "\\n")
    sys.stdout.flush()
"""

    def test_store_unavailable_and_internal_errors_are_500_and_a_dead_payservice_502(self):
        token = {"Authorization": "AppleOrder " + "t" * 32}
        registration = "/wallet-orders/v1/devices/d/registrations/order.com.example.coffee/ord_1"
        with tempfile.TemporaryDirectory() as tmp:
            stand_in = os.path.join(tmp, "payservice")
            with open(stand_in, "w") as f:
                f.write(self.STAND_IN % sys.executable)
            os.chmod(stand_in, os.stat(stand_in).st_mode | stat.S_IXUSR)
            bridge = Bridge(payservice=stand_in)
            try:
                status, body, _ = bridge.request("GET", "/wallet-orders/v1/orders/order.com.example.coffee/ord_1",
                                                 headers=token)
                self.assertEqual((status, body), (500, {"error": {"code": -32001, "message": "Store unavailable"}}))
                self.assertEqual(bridge.request("POST", registration, b'{"pushToken": "00"}', token)[0], 500)
                self.assertEqual(bridge.request("DELETE", registration, headers=token)[0], 500)
                self.assertEqual(bridge.request("GET", "/wallet-orders/v1/devices/d/registrations/order.com.example.coffee")[:2],
                                 (200, {"orderIdentifiers": ["ord_1"], "lastModified": "7"}))
                # logWalletMessages: the stand-in exits without an answer.
                status, body, _ = bridge.request("POST", "/wallet-orders/v1/log", b'{"logs": []}')
                self.assertEqual((status, body["error"]["code"]), (502, -32000))
            finally:
                log = bridge.stop()
        self.assertNotIn(b"t" * 32, log)
        self.assertNotIn(b"Traceback", log)

class MerchantTokenNotifications(unittest.TestCase):
    """Apple's GET {tokenNotificationURL}/notification/merchantToken/{eventId} under
    --token-notification-path, in front of the real payservice on shop.yaml, which has no
    applePay.merchantTokens: every event it takes is not_configured, reply 500 (the 200 path needs
    Apple's mutual-TLS API; its test server is in the Swift tests)."""

    EVENT = "evt_5b1e9c0d7a2f"
    PATH = "/applepay/notification/merchantToken/"
    INVALID = {"error": {"code": -32602, "message": "Invalid params"}}
    NOT_ALLOWED = {"error": {"code": -32601, "message": "Method not allowed"}}

    @classmethod
    def setUpClass(cls):
        cls.bridge = Bridge()

    @classmethod
    def tearDownClass(cls):
        cls.bridge.stop()

    def calls(self, at_least=0):
        """How often payservice was asked processMerchantTokenNotification, as its own log says: its
        line may follow its answer, so once there are at_least (or 3 s have passed) and no more come."""
        deadline = time.monotonic() + 3
        count = lambda: self.bridge.log().count(b'method="processMerchantTokenNotification"')
        while count() < at_least and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        return count()

    def never_asked(self, before):
        """payservice was asked nothing since `before` calls: one call more, and its line is the next."""
        self.assertEqual(self.bridge.request("GET", self.PATH + "sentinel")[:2], (500, b""))
        self.assertEqual(self.calls(before + 1), before + 1)

    def test_not_configured_is_500_with_an_empty_body_so_that_apple_sends_it_again(self):
        result, _ = payservice_call("processMerchantTokenNotification", {"eventId": self.EVENT})
        self.assertEqual((result["status"], result["reply"]), ("not_configured", 500))
        before = self.calls()
        for path, headers in ((self.PATH + self.EVENT, {}),
                              # The query and headers are not passed on; Apple's server is not a page.
                              (self.PATH + self.EVENT + "?eventId=a.b", {"Authorization": "Bearer x",
                                                                         "Origin": "https://evil.example"}),
                              # Percent-decoded once: %2D is "-", %5F is "_".
                              (self.PATH + "evt%2D1%5Fb", {})):
            with self.subTest(path=path):
                status, body, response = self.bridge.request("GET", path, headers=headers)
                self.assertEqual((status, body), (500, b""))
                self.assertEqual(response.getheader("Content-Length"), "0")
                self.assertIsNone(response.getheader("Content-Type"))
        self.assertEqual(self.calls(before + 3), before + 3)
        # The Host check holds here as everywhere.
        self.assertEqual(self.bridge.request("GET", self.PATH + self.EVENT, headers={"Host": "evil.example"})[:2],
                         (421, BAD_HOST))
        log = self.bridge.log()
        self.assertIn(b"bridge: GET /applepay/notification/merchantToken/{eventId} "
                      b"method=processMerchantTokenNotification status=500 ", log)
        # Like Wallet's identifiers, the eventId is never logged: the line names the route's pattern.
        self.assertNotIn(self.EVENT.encode(), log)
        self.assertNotIn(b"evt%2D1", log)

    def test_an_event_id_payservice_refuses_is_400_with_its_message_only(self):
        before = self.calls()
        for segment in ("a.b", "x" * 129, "",
                        # %2F is "/" in the segment, not a separator: payservice refuses "a/b" before
                        # any URL to Apple is made.
                        "a%2Fb", "..%2F..%2Fevent", "%2F",
                        # Decoded once only: %252D is "%2D", which is not an eventId.
                        "evt%252D1"):
            with self.subTest(segment=segment[:20]):
                status, body, _ = self.bridge.request("GET", self.PATH + segment)
                self.assertEqual((status, body), (400, self.INVALID))  # no data: what was refused is not said
        self.assertEqual(self.calls(before + 7), before + 7)
        self.assertEqual(payservice_call("processMerchantTokenNotification", {"eventId": "a/b"})[1]["code"], -32602)
        # 128 characters are an eventId.
        self.assertEqual(self.bridge.request("GET", self.PATH + "x" * 128)[:2], (500, b""))
        # Not UTF-8 once decoded: the bridge refuses it, payservice not asked.
        before = self.calls()
        status, body, _ = self.bridge.request("GET", self.PATH + "%ff")
        self.assertEqual((status, body["error"]["code"]), (400, -32600))
        self.never_asked(before)

    def test_other_paths_are_404_and_never_reach_payservice(self):
        before = self.calls()
        for path in (self.PATH + self.EVENT + "/extra", self.PATH + self.EVENT + "/", self.PATH + "a/b",
                     self.PATH[:-1], "/applepay/notification/", "/applepay/notification/merchantTokens/" + self.EVENT,
                     "/applepay/notification/merchanttoken/" + self.EVENT, "/applepay/v1/notification/merchantToken/x",
                     "/notification/merchantToken/x", "/applepay%2Fnotification/merchantToken/x"):
            with self.subTest(path=path):
                self.assertEqual(self.bridge.request("GET", path)[:2], (404, NOT_FOUND))
        self.never_asked(before)
        log = self.bridge.log()
        self.assertIn(b"bridge: GET /applepay/notification/... status=404 ", log)
        self.assertNotIn(b"extra", log)

    def test_other_methods_are_405(self):
        before = self.calls()
        for method, body in (("POST", b""), ("POST", b'{"eventId": "x"}'), ("PUT", b"{}"), ("DELETE", None),
                             ("HEAD", None)):
            with self.subTest(method=method, body=body):
                status, answer, response = self.bridge.request(method, self.PATH + self.EVENT, body)
                self.assertEqual((status, response.getheader("Allow")), (405, "GET"))
                if method != "HEAD":
                    self.assertEqual(answer, self.NOT_ALLOWED)
        self.never_asked(before)
        self.assertIn(b"bridge: POST /applepay/notification/merchantToken/{eventId} method=- status=405 ",
                      self.bridge.log())

    def test_the_path_prefix_is_configurable(self):
        for prefix, path in (("/shop/apple-pay/", "/shop/apple-pay/notification/merchantToken/"),
                             ("/", "/notification/merchantToken/")):
            with self.subTest(prefix=prefix):
                bridge = Bridge("--token-notification-path", prefix)
                try:
                    self.assertEqual(bridge.request("GET", path + self.EVENT)[:2], (500, b""))
                    self.assertEqual(bridge.request("GET", path + "a.b")[:2], (400, self.INVALID))
                    if prefix != "/":
                        self.assertEqual(bridge.request("GET", self.PATH + self.EVENT)[:2], (404, NOT_FOUND))
                    # Wallet's routes keep their own prefix.
                    self.assertEqual(bridge.request("POST", "/wallet-orders/v1/log", b'{"logs": []}')[:2],
                                     (200, {"status": "ok"}))
                finally:
                    log = bridge.stop()
                self.assertIn(("bridge: GET %snotification/merchantToken/{eventId} "
                               "method=processMerchantTokenNotification status=500 " % prefix).encode(), log)
        for prefix in ("applepay", "/apple pay", "/applepay?x"):
            with self.subTest(prefix=prefix):
                done = subprocess.run([sys.executable, BRIDGE, "--payservice", PAYSERVICE, "--config", SHOP,
                                       "--token-notification-path", prefix], capture_output=True, timeout=30)
                self.assertEqual(done.returncode, 2)
                self.assertIn(b"--token-notification-path: expected a path that starts with /", done.stderr)


class MerchantTokenNotificationsWhenPayserviceFails(unittest.TestCase):
    """The token notification's answers for each answer payservice may give, from a stand-in that
    writes down the params it was given: reply 200 passed on without what the event changed, any
    other error or answer 500, payservice gone 500 (not 502: Apple sends it again on a 500)."""

    STAND_IN = """#!%s
import json, sys
answers = {
    "applied": {"result": {"status": "applied", "reply": 200, "eventId": "applied", "eventType": "UNLINK",
                           "merchantTokenIdentifier": "mtid-secret-4242", "agreements": ["agr_secret_1"]}},
    "unknown": {"result": {"status": "unknown_event", "reply": 200, "eventId": "unknown"}},
    "unavailable": {"result": {"status": "unavailable", "reply": 500, "eventId": "unavailable",
                               "message": "Apple answered 503"}},
    "odd-reply": {"result": {"status": "applied", "reply": 302, "eventId": "odd-reply"}},
    "string-reply": {"result": {"status": "applied", "reply": "200", "eventId": "string-reply"}},
    "store-down": {"error": {"code": -32001, "message": "Store unavailable"}},
    "refused": {"error": {"code": -32602, "message": "Invalid params",
                          "data": {"errors": [{"path": "eventId", "message": "secret detail"}]}}},
}
for line in sys.stdin:
    request = json.loads(line)
    if request["method"] == "listShippingMethods":
        answer = {"result": {"shippingMethods": []}}
    else:
        with open(%r, "a") as f:
            f.write(json.dumps([request["method"], request["params"]]) + "\\n")
        if request["params"].get("eventId") == "crash":
            sys.exit(1)
        answer = answers[request["params"]["eventId"]]
    sys.stdout.write(json.dumps(dict(answer, jsonrpc="2.0", id=request["id"])) + "\\n")
    sys.stdout.flush()
"""

    def test_reply_is_the_status_and_only_the_event_id_is_passed_on(self):
        path = "/applepay/notification/merchantToken/"
        with tempfile.TemporaryDirectory() as tmp:
            stand_in, record = os.path.join(tmp, "payservice"), os.path.join(tmp, "calls.jsonl")
            with open(stand_in, "w") as f:
                f.write(self.STAND_IN % (sys.executable, record))
            os.chmod(stand_in, os.stat(stand_in).st_mode | stat.S_IXUSR)
            bridge = Bridge(payservice=stand_in)
            try:
                self.assertEqual(bridge.request("GET", path + "applied?since=1&eventId=other",
                                                headers={"Authorization": "Bearer x", "X-Request-Id": "r1"})[:2],
                                 (200, b""))
                for event, expected in (("unknown", (200, b"")), ("unavailable", (500, b"")),
                                        ("odd-reply", (500, {"error": {"code": -32603, "message":
                                         "payservice sent an answer this route does not have"}})),
                                        ("string-reply", (500, {"error": {"code": -32603, "message":
                                         "payservice sent an answer this route does not have"}})),
                                        ("store-down", (500, {"error": {"code": -32001, "message": "Store unavailable"}})),
                                        ("refused", (400, {"error": {"code": -32602, "message": "Invalid params"}}))):
                    with self.subTest(event=event):
                        self.assertEqual(bridge.request("GET", path + event)[:2], expected)
                status, body, _ = bridge.request("GET", path + "crash")
                self.assertEqual((status, body["error"]["code"]), (500, -32000))
                # payservice is started again: on the next request, or (when the bridge has not yet seen
                # it exit) the one after, the first answered 500 as well.
                for _ in range(20):
                    status, body, _ = bridge.request("GET", path + "unknown")
                    if status != 500:
                        break
                    time.sleep(0.05)
                self.assertEqual((status, body), (200, b""))
                # Extra segments and other methods: the stand-in is never asked.
                self.assertEqual(bridge.request("GET", path + "applied/x")[0], 404)
                self.assertEqual(bridge.request("POST", path + "applied", b"{}")[0], 405)
            finally:
                log = bridge.stop()
            with open(record) as f:
                calls = [json.loads(line) for line in f]
        self.assertEqual(calls, [["processMerchantTokenNotification", {"eventId": event}] for event in
                                 ("applied", "unknown", "unavailable", "odd-reply", "string-reply", "store-down",
                                  "refused", "crash", "unknown")])
        for secret in (b"mtid-secret-4242", b"agr_secret_1", b"secret detail", b"Apple answered 503"):
            self.assertNotIn(secret, log)
        self.assertNotIn(b"Traceback", log)


class Docs(unittest.TestCase):
    def test_no_store_in_tmp(self):
        for path in (BRIDGE, os.path.join(HERE, "README.md")):
            with open(path) as f:
                text = f.read()
            with self.subTest(path=path):
                self.assertFalse("/tmp/" in text, "%s names a path in /tmp" % path)


if __name__ == "__main__":
    unittest.main()
