"""What the browser suite runs the example shop with: payservice (the release binary) behind
bridge.py, Apple's merchant validation endpoint and Stripe as the project's test servers, a proxy
between the browser and the bridge that can lose or delay an answer, the Apple Pay JS stand-in
(applepay-standin.js) and a stand-in for Apple's SDK script (apple-pay-sdk-standin.js) served at its
real address, and headless Chromium driven by selenium.

Nothing here moves money or talks to Apple: the merchant session, the Stripe account and the
Apple Pay sheet are all test stand-ins, each speaking the real protocol it stands in for.
"""

import http.client
import http.server
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WEB = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(WEB))
BRIDGE = os.path.join(WEB, "bridge.py")
SHOP = os.path.join(WEB, "shop.yaml")
PAYSERVICE = os.environ.get("PAYSERVICE_BINARY", os.path.join(ROOT, ".build/release/payservice"))
# The test servers (apple-session-test-server, stripe-test-server): beside payservice unless
# PAYSERVICE_TEST_SERVERS names their directory (CI runs them from the debug build).
BIN = os.path.abspath(os.environ.get("PAYSERVICE_TEST_SERVERS", os.path.dirname(os.path.abspath(PAYSERVICE))))
MERCHANT = "merchant.com.example.coffee"
# The page's host: Chromium resolves every *.localhost name to loopback and treats it as a secure
# context, and payservice's applePay.domains takes it (a bare "localhost" is no registrable domain).
DOMAIN = "shop.localhost"
# The service clock of every payservice and the Apple session test server here: prices, trial
# dates and charge tokens do not depend on the day the suite runs.
NOW = "2026-11-20T17:00:00Z"
SDK_URL = "https://applepay.cdn-apple.com/jsapi/1.latest/apple-pay-sdk.js"
SDK_HOST = "applepay.cdn-apple.com"
# Dates are shown in the shopper's time zone: the browser's is pinned.
TIME_ZONE = "America/New_York"
DESKTOP = (1280, 1000)
PHONE = (390, 844)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout, what, interval=0.05):
    """predicate()'s first truthy value within `timeout` seconds, else AssertionError naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(interval)


class Announcing:
    """A test server process that prints one JSON line when it is ready and takes commands on stdin."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError("%s did not start" % argv[0])
        self.announcement = json.loads(line)

    def command(self, line, answer=False):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline()) if answer else None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()


def shop_config(directory, apple, stripe=None):
    """shop.yaml with the test merchant identity (issued by the Apple session test server) and, for
    Stripe, the gateway pointed at the Stripe test server. Written next to copies of the files it names."""
    text = open(SHOP, encoding="utf-8").read()
    a = apple.announcement
    for name in ("identityCertificate", "identityKey", "trustRoots"):
        shutil.copy(a[name], os.path.join(directory, name + ".pem"))
    identity = (
        "applePay:\n"
        "  merchantIdentityCertificate: identityCertificate.pem\n"
        "  merchantIdentityKey: identityKey.pem\n"
        "  domains: [%s]\n"
        "  merchantSession:\n"
        "    additionalHosts: [\"%s\"]\n"
        "    trustRoots: trustRoots.pem\n" % (DOMAIN, a["additionalHost"]))
    assert text.count("\napplePay:\n") == 1, "shop.yaml has one applePay section"
    text = text.replace("\napplePay:\n", "\n" + identity)
    if stripe is not None:
        s = stripe.announcement
        shutil.copy(s["caFile"], os.path.join(directory, "stripe-ca.pem"))
        assert "gateway:\n  kind: sandbox\n" in text
        # Stripe cannot take a payment of 0.00 today (a pre-order) until payservice makes
        # SetupIntents: the Stripe shop sells the rest.
        start, end = text.index("  - sku: espresso-machine\n"), text.index("\nshipping:\n")
        text = text[:start] + text[end + 1:]
        text = text.replace("gateway:\n  kind: sandbox\n", (
            "gateway:\n  kind: stripe\n  apiBase: %s\n  trustRoots: stripe-ca.pem\n" % s["baseURL"]))
    path = os.path.join(directory, "shop.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


class FaultProxy(http.server.ThreadingHTTPServer):
    """Between the browser and the bridge: passes every request on, records each POST /rpc's method
    and params (in memory, for the assertions), and applies the faults queued for a method, each to
    one request, in order:
    ("lose",): the request reaches payservice, its answer never reaches the page (the connection is
    closed); ("delay", seconds): the answer reaches the page that much later.
    hold(method, seconds) instead holds every answer to the method until that many seconds from now
    (a link that stops passing its answers, then recovers): each request still reaches payservice."""

    daemon_threads = True

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.calls = []
        self.faults = {}
        self.holds = {}
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), ProxyHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def port(self):
        return self.server_address[1]

    def queue(self, method, *fault):
        with self.lock:
            self.faults.setdefault(method, []).append(fault)

    def take(self, method):
        with self.lock:
            queued = self.faults.get(method) or []
            return queued.pop(0) if queued else None

    def hold(self, method, seconds):
        with self.lock:
            self.holds[method] = time.monotonic() + seconds

    def held_until(self, method):
        with self.lock:
            return self.holds.get(method, 0)

    def clear(self):
        """Drops the faults and holds a test left unused, so that none reaches the next test."""
        with self.lock:
            self.faults.clear()
            self.holds.clear()

    def methods(self):
        with self.lock:
            return [method for method, _ in self.calls]

    def params_of(self, method):
        with self.lock:
            return [params for m, params in self.calls if m == method]


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.forward(None)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.forward(body)

    def forward(self, body):
        fault = None
        method = None
        if body is not None and self.path == "/rpc":
            try:
                request = json.loads(body)
                method = request.get("method")
                with self.server.lock:
                    self.server.calls.append((method, request.get("params")))
                fault = self.server.take(method)
            except ValueError:
                pass
        upstream = http.client.HTTPConnection("127.0.0.1", self.server.upstream_port, timeout=120)
        headers = {k: v for k, v in self.headers.items() if k.lower() in ("host", "origin", "content-type", "content-length")}
        upstream.request(self.command, self.path, body=body, headers=headers)
        response = upstream.getresponse()
        payload = response.read()
        upstream.close()
        if fault and fault[0] == "lose":
            # The status line, the headers and half the body, then the connection closes: the
            # page's fetch fails, and the browser cannot resend the request on its own (it does so
            # only when nothing of an answer came back).
            self.send_response(response.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if fault and fault[0] == "delay":
            time.sleep(fault[1])
        if method is not None:
            time.sleep(max(0.0, self.server.held_until(method) - time.monotonic()))
        try:
            self.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() in ("content-type", "cache-control", "x-content-type-options"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            self.close_connection = True  # the page gave up on this answer (its own deadline)


class SDKServer(http.server.ThreadingHTTPServer):
    """https://applepay.cdn-apple.com/jsapi/1.latest/apple-pay-sdk.js, as far as the browser can
    tell: Chromium maps the host here (--host-resolver-rules) and accepts this self-signed
    certificate (--ignore-certificate-errors); the script is apple-pay-sdk-standin.js."""

    daemon_threads = True

    def __init__(self, directory):
        cert, key = os.path.join(directory, "sdk-cert.pem"), os.path.join(directory, "sdk-key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=" + SDK_HOST,
                        "-addext", "subjectAltName=DNS:" + SDK_HOST], check=True, capture_output=True)
        super().__init__(("127.0.0.1", 0), SDKHandler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.socket = context.wrap_socket(self.socket, server_side=True)
        self.script = open(os.path.join(HERE, "apple-pay-sdk-standin.js"), "rb").read()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def port(self):
        return self.server_address[1]


class SDKHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path != "/jsapi/1.latest/apple-pay-sdk.js":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/javascript; charset=utf-8")
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Content-Length", str(len(self.server.script)))
        self.end_headers()
        self.wfile.write(self.server.script)


class Shop:
    """One payservice behind one bridge (and the fault proxy): the shop a browser buys from."""

    def __init__(self, directory, config, env=None, name="shop"):
        self.config = config
        self.env = dict(os.environ, **(env or {}))
        self.database = os.path.join(directory, name + ".sqlite")
        self.bridge_port = free_port()
        self.log_path = os.path.join(directory, name + "-bridge.log")
        self.log_file = open(self.log_path, "wb")
        self.proxy = FaultProxy(self.bridge_port)
        argv = [sys.executable, BRIDGE, "--payservice", PAYSERVICE, "--config", config, "--database", self.database,
                "--listen", "127.0.0.1:%d" % self.bridge_port, "--allowed-hosts", "%s:%d" % (DOMAIN, self.proxy.port),
                "--", "--now", NOW]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=self.log_file, env=self.env)
        wait_for(lambda: b"bridge: serving" in open(self.log_path, "rb").read() or self.proc.poll() is not None,
                 30, "the bridge to start")
        if self.proc.poll() is not None:
            raise AssertionError("the bridge did not start:\n" + open(self.log_path, errors="replace").read())
        self.url = "http://%s:%d/" % (DOMAIN, self.proxy.port)

    def orders(self):
        """The store's orders, as the back office lists them (payservice call, its own process)."""
        done = subprocess.run([PAYSERVICE, "call", "listOrders", "{}", "--back-office", "--config", self.config,
                               "--database", self.database, "--now", NOW], capture_output=True, timeout=30,
                              env=self.env)
        if done.returncode != 0:
            raise AssertionError("listOrders: %s" % done.stderr.decode(errors="replace"))
        return json.loads(done.stdout)["orders"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proxy.shutdown()
        self.proxy.server_close()
        self.log_file.close()


def chromium(sdk_port):
    """Headless Chromium from Debian's packages, its console log kept (goog:loggingPrefs)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--no-first-run", "--disable-extensions", "--hide-scrollbars", "--font-render-hinting=none",
                     "--ignore-certificate-errors", "--lang=en-US",
                     "--host-resolver-rules=MAP %s 127.0.0.1:%d" % (SDK_HOST, sdk_port),
                     "--window-size=%d,%d" % DESKTOP):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": TIME_ZONE})
    return driver
