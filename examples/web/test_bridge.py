#!/usr/bin/env python3
"""Regression tests for bridge.py: the security review's findings (issue 30), end to end.

Each test starts the real bridge as a subprocess on a free loopback port, in front of a real
payservice binary (--config shop.yaml --database :memory:), and talks HTTP to it, often byte by byte
over a raw socket. Python 3 standard library only; Linux (/proc) for the thread count.

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


class Docs(unittest.TestCase):
    def test_no_store_in_tmp(self):
        for path in (BRIDGE, os.path.join(HERE, "README.md")):
            with open(path) as f:
                text = f.read()
            with self.subTest(path=path):
                self.assertFalse("/tmp/" in text, "%s names a path in /tmp" % path)


if __name__ == "__main__":
    unittest.main()
