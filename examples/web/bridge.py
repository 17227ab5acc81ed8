#!/usr/bin/env python3
"""HTTP bridge between the example Apple Pay page and one payservice process.

payservice speaks line-delimited JSON-RPC 2.0 on stdio. This bridge starts ONE payservice child,
keeps it running (it is started again on the next request if it dies) and serves:

  GET  /          index.html
  GET  /app.js    app.js
  POST /rpc       {"method": "...", "params": {...}}  ->  the JSON-RPC result (200) or {"error": ...}
  POST /webhooks/adyen   Adyen's notification body, passed on to processAdyenNotification as it came:
                         200 "[accepted]" once payservice took it in, else 500 (Adyen sends it again)

and Apple's Wallet order web service, under --wallet-orders-path (the path of the config's
walletOrders.webServiceURL, default /wallet-orders), each route one payservice method:

  GET    {prefix}/v1/orders/{orderTypeIdentifier}/{orderIdentifier}            getWalletOrder
  POST   {prefix}/v1/devices/{deviceLibraryIdentifier}/registrations/{orderTypeIdentifier}/{orderIdentifier}
                                                                                registerWalletDevice
  DELETE (the same route)                                                       unregisterWalletDevice
  GET    {prefix}/v1/devices/{deviceLibraryIdentifier}/registrations/{orderTypeIdentifier}
                                                                                listChangedWalletOrders
  POST   {prefix}/v1/log                                                        logWalletMessages

and Apple's merchant token notification, under --token-notification-path (the path of the config's
applePay.tokenNotificationURL, default /applepay):

  GET    {prefix}/notification/merchantToken/{eventId}                          processMerchantTokenNotification

The order and registration routes need "Authorization: AppleOrder {authenticationToken}" (401
without payservice asked otherwise); the method's result status is the HTTP status, and the
package of getWalletOrder is the body of its 200 (application/vnd.apple.finance.order).

Apple's token notification has no body and no signature: only {eventId} (percent-decoded once) is
passed on, never the query or a header. The result's reply (200 or 500) is the HTTP status, with an
empty body: the caller is not known, so nothing of what the event changed is said to it. payservice
refusing the eventId (-32602) is 400 with the error's code and message only; payservice not
answering, or any other error, is 500, so that Apple sends the notification again. Only GET (not
HEAD: the call changes agreements); another path under {prefix}/notification/ is 404, payservice
not asked.

Only the methods a shopper's page may call are forwarded (ALLOWED_METHODS). Requests to payservice
are written one at a time under a lock, each with the bridge's own increasing id; payservice answers
one line per request line, in order, so the next line is the answer. Request and response bodies
are never logged: they carry names, addresses and payment data; nor are Wallet's tokens, push tokens
or the identifiers in its routes, nor the eventId of Apple's token notification (the log line names
the route's pattern).

Every request must name an allowed host (--allowed-hosts) in its Host header, and a POST /rpc with
an Origin header must come from one (the webhook's, Wallet's and the token notification's callers
are servers and devices, not pages: those routes have no Origin check); each connection has
deadlines for its idle time, headers and body, and at most --max-connections are served at once.

Plain HTTP is for localhost development. Apple Pay on the web needs HTTPS on a domain verified with
Apple: run the bridge behind the merchant's TLS-terminating web server, or give --tls-cert/--tls-key.

Python 3 standard library only.

  python3 examples/web/bridge.py --config examples/web/shop.yaml --database shop.sqlite
  python3 examples/web/bridge.py --selftest --payservice .build/debug/payservice --config config.yaml
"""

import argparse
import base64
import binascii
import http.server
import io
import json
import math
import os
import queue
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
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
# Adyen's notification batches are passed on whole: as large as processAdyenNotification takes (1 MiB).
MAX_WEBHOOK_BYTES = 1 << 20
ADYEN_WEBHOOK_PATH = "/webhooks/adyen"
# A body the bridge does not use (a 404, a 413) is read and dropped up to this size, so the
# connection stays in step; a larger one closes the connection.
MAX_DRAIN_BYTES = 16 * MAX_BODY_BYTES
# Arrays and objects in a body may nest this deep (the body object is level 1). The page sends at
# most 6; payservice itself allows 512.
MAX_DEPTH = 64

# Wallet's order web service, under --wallet-orders-path: Apple's routes. A request's log line names
# its route's pattern, never the path: its parts identify an order or a device.
WALLET_ORDER_ROUTE = "/v1/orders/{orderTypeIdentifier}/{orderIdentifier}"
WALLET_REGISTRATION_ROUTE = "/v1/devices/{deviceLibraryIdentifier}/registrations/{orderTypeIdentifier}/{orderIdentifier}"
WALLET_CHANGES_ROUTE = "/v1/devices/{deviceLibraryIdentifier}/registrations/{orderTypeIdentifier}"
WALLET_LOG_ROUTE = "/v1/log"
# The token payservice takes (WalletWebService.readToken): anything else cannot be an order's, and is
# 401 without payservice asked. The scheme is case-insensitive, as every HTTP auth scheme.
APPLE_ORDER_AUTHORIZATION = re.compile(r"AppleOrder +([\x21-\x7e]{16,255})", re.IGNORECASE)
# Each method's result status -> HTTP status; another status is 500.
WALLET_HTTP_STATUS = {
    "getWalletOrder": {"ok": 200, "notModified": 304, "unauthorized": 401, "notFound": 404},
    "registerWalletDevice": {"created": 201, "alreadyRegistered": 200, "unauthorized": 401, "notFound": 404,
                             "tooManyDevices": 403},
    "unregisterWalletDevice": {"unregistered": 200, "notRegistered": 200, "unauthorized": 401, "notFound": 404},
    "listChangedWalletOrders": {"ok": 200, "noContent": 204, "notFound": 404},
    "logWalletMessages": {"ok": 200},
}
ORDER_CONTENT_TYPE = "application/vnd.apple.finance.order"

# Apple's merchant token notification, under --token-notification-path: like Wallet's routes, its
# log line names the pattern, never the eventId (not personal data, but an identifier all the same).
TOKEN_NOTIFICATION_ROUTE = "/notification/merchantToken/{eventId}"
TOKEN_NOTIFICATION_METHOD = "processMerchantTokenNotification"

# Where Apple fetches the file that verifies the merchant's domain (--domain-association).
DOMAIN_ASSOCIATION_PATH = "/.well-known/apple-developer-merchantid-domain-association"

STATIC_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
}

# JSON-RPC error code -> HTTP status. Anything not listed is 500.
HTTP_STATUS_FOR_CODE = {
    -32700: 400,  # parse error (the bridge checks the body first; payservice may still refuse it)
    -32600: 400,  # invalid request (for example a line over payservice's --max-line-bytes)
    -32601: 400,  # method not found (an allowed method this payservice does not have yet)
    -32602: 400,  # invalid params
    -32002: 409,  # charge token already used for a different order
    -32003: 404,  # order not found
    -32004: 409,  # idempotency key conflict
    -32001: 503,  # store unavailable; nothing changed, the same request may be sent again
    -32603: 500,  # internal error
}

_BUSY_BODY = b'{"error":{"code":-32000,"message":"Too many connections; try again"}}'
# Sent, without reading the request, on a connection over --max-connections.
BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
    b"Content-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY)
)


def printable(text):
    """text with backslashes doubled and every control or non-printable character escaped (\\x1b)."""
    return "".join(c if c.isprintable() and c != "\\" else _escape(c) for c in text)


def _escape(c):
    if c == "\\":
        return "\\\\"
    n = ord(c)
    return "\\x%02x" % n if n < 0x100 else "\\u%04x" % n if n < 0x10000 else "\\U%08x" % n


def log(message):
    # Request paths and method names are the client's text: no terminal escapes reach the log.
    sys.stderr.write("bridge: %s\n" % printable(message))
    sys.stderr.flush()


# ---- the database URL: its password goes to payservice in PGPASSWORD, never on a command line


def split_password(database):
    """(the URL without its password, the password or None), a PostgreSQL URL read as payservice
    reads it (Sources/PayServiceCore/Store/PostgresURL.swift): the user info ends at the last @
    before the first / or ?, the password follows the first : in it and is percent-encoded."""
    if not database.startswith(("postgres://", "postgresql://")):
        return database, None
    scheme, rest = database.split("://", 1)
    end = min([i for i in (rest.find("/"), rest.find("?")) if i >= 0] + [len(rest)])
    authority, tail = rest[:end], rest[end:]
    userinfo, at, hostport = authority.rpartition("@")
    user, colon, password = userinfo.partition(":")
    if not at or not colon:
        return database, None
    if re.search(r"%(?![0-9A-Fa-f]{2})", password):
        raise ValueError("the password in --database is not valid percent-encoding")
    password = urllib.parse.unquote(password, errors="strict")  # UnicodeDecodeError is a ValueError
    return "%s://%s%s%s" % (scheme, user + "@" if user else "", hostport, tail), password


def without_userinfo(argument):
    """argument with the user info (user:password@) of any URL in it removed, for the log."""
    return re.sub(r"://[^/?]*@", "://", argument)


class PayserviceDied(Exception):
    """payservice exited or closed its stdout: answered with 502."""


class PayserviceTimeout(Exception):
    """payservice did not answer in time: answered with 504."""


class Payservice:
    """One payservice child process, used by one request at a time."""

    def __init__(self, argv, timeout, env=None):
        self.argv = argv
        self.timeout = timeout
        self.env = env
        self.lock = threading.Lock()
        self.next_id = 1
        self.owed = 0  # answers still to come for requests that timed out
        self.proc = None
        self.lines = None

    def start(self):
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,  # payservice's own log (never params or payment data) goes to ours
            bufsize=0,
            env=self.env,
        )
        self.lines = queue.Queue()
        self.owed = 0
        reader = threading.Thread(target=self._read, args=(self.proc, self.lines), daemon=True)
        reader.start()
        log("started payservice (pid %d): %s" % (self.proc.pid, " ".join(map(without_userinfo, self.argv))))

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
        """Send one request and return the response object (with "result" or "error").

        UnicodeEncodeError (before anything is sent) when params hold a lone surrogate."""
        params_json = json.dumps(params, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        params_bytes = params_json.encode("utf-8")
        with self.lock:
            self._ensure_running()
            request_id = self.next_id
            self.next_id += 1
            line = b'{"jsonrpc":"2.0","id":%d,"method":%s,"params":%s}\n' % (
                request_id, json.dumps(method).encode("ascii"), params_bytes)
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                raise PayserviceDied("payservice is not running")
            deadline = time.monotonic() + self.timeout
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.owed += 1  # its answer may still come; it is skipped then
                    raise PayserviceTimeout("payservice did not answer within %g s" % self.timeout)
                try:
                    raw = self.lines.get(timeout=remaining)
                except queue.Empty:
                    continue
                if raw is None:
                    self.lines.put(None)  # keep reporting EOF until restarted
                    raise PayserviceDied("payservice exited")
                if self.owed:
                    self.owed -= 1
                    continue
                # The next line is the answer to this request: with its id, or with id null when
                # payservice could not read the line (-32700, or -32600 for a line too long).
                try:
                    response = json.loads(raw)
                except ValueError:
                    response = None
                if isinstance(response, dict) and response.get("id") in (request_id, None):
                    return response
                self.stop()  # out of step: a fresh process is started on the next request
                raise PayserviceDied("payservice answered out of order; it is started again")

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


# ---- request bodies


class BadBody(ValueError):
    """The body cannot be forwarded: answered with 400 and this JSON-RPC code and message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


_NON_FINITE = "The body has a number that is not finite (like 1e999, NaN or Infinity)"
_JSON_NESTING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)  # strings (skipped) and brackets


def json_depth(text):
    """How deep arrays and objects nest in text, counted without recursion."""
    depth = deepest = 0
    for token in _JSON_NESTING.finditer(text):
        c = token.group()[0]
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(depth - 1, 0)
    return deepest


def _finite_float(text):
    number = float(text)
    if not math.isfinite(number):
        raise BadBody(-32700, _NON_FINITE)
    return number


def _reject_constant(name):
    raise BadBody(-32700, _NON_FINITE)  # NaN, Infinity, -Infinity


def parse_body(body):
    """The JSON value of body; BadBody when it is not UTF-8, nests too deep or is not JSON."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadBody(-32700, "The body is not UTF-8")
    if json_depth(text) > MAX_DEPTH:
        raise BadBody(-32700, "The body nests arrays and objects deeper than %d levels" % MAX_DEPTH)
    try:
        return json.loads(text, parse_float=_finite_float, parse_constant=_reject_constant)
    except BadBody:
        raise
    except (ValueError, RecursionError):
        raise BadBody(-32700, "The body is not JSON")


# ---- HTTP


class DeadlineReader(io.RawIOBase):
    """A socket's reading side; every read fails with TimeoutError once `deadline` has passed."""

    def __init__(self, sock):
        self.sock = sock
        self.deadline = time.monotonic()

    def readable(self):
        return True

    def readinto(self, buffer):
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("deadline passed")
        self.sock.settimeout(remaining)
        return self.sock.recv_into(buffer)


class SocketWriter(io.RawIOBase):
    def __init__(self, sock):
        self.sock = sock

    def writable(self):
        return True

    def write(self, data):
        self.sock.sendall(data)
        return len(data)


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "payservice-bridge"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    # ---- plumbing

    def setup(self):
        self.connection = self.request
        self.reader = DeadlineReader(self.connection)
        self.rfile = io.BufferedReader(self.reader)
        self.wfile = SocketWriter(self.connection)

    def log_message(self, format, *args):
        pass  # the default logs client addresses; handle_one_request logs path, method and status

    def handle_one_request(self):
        """One request, each phase within its deadline: the first byte within --idle-timeout (on a
        new or kept-alive connection), the request line and headers within --header-timeout, the
        body and the answer within --body-timeout."""
        options = self.server.options
        self.close_connection = True
        self.command, self.requestline, self.request_version = None, "", "HTTP/1.1"
        self.body_left = 0
        self.logged_path = None  # set by a route whose path is not for the log
        phase = "headers"
        self.reader.deadline = time.monotonic() + options.idle_timeout
        try:
            if not self.rfile.peek(1):
                return  # the client closed the connection
        except OSError:
            return  # idle for too long (or reset): closed without an answer
        self.reader.deadline = time.monotonic() + options.header_timeout
        try:
            self.raw_requestline = self.rfile.readline(65537)
            if len(self.raw_requestline) > 65536:
                self._error(414, -32600, "The request line is too long")
                return
            if not self.parse_request():
                return  # parse_request has answered (send_error)
            phase = "body"
            self.reader.deadline = time.monotonic() + options.body_timeout
            started = time.monotonic()
            status, method = self._route()
            log("%s %s%s status=%d ms=%d" % (
                self.command, self.logged_path or self.path.split("?", 1)[0][:200],
                " method=" + method if self.command == "POST" or method != "-" else "",
                status, (time.monotonic() - started) * 1000))
        except TimeoutError:
            self.close_connection = True
            self.body_left = 0
            log("closed a connection: its %s did not arrive in time" % phase)
            try:
                self._error(408, -32600, "The request's %s did not arrive in time" % phase)
            except OSError:
                pass
        except OSError:
            self.close_connection = True  # the client went away (reset, TLS error)

    def send_error(self, code, message=None, explain=None):
        # parse_request's refusals (a bad request line, too many headers), as JSON.
        self.close_connection = True
        self._error(code, -32600, message or self.responses.get(code, ("Error",))[0])

    def _send(self, status, body, content_type="application/json; charset=utf-8", headers=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        if self.body_left and not self.close_connection:
            if self.body_left <= MAX_DRAIN_BYTES:
                self._read_body()  # dropped: the next request starts after it
            else:
                self.close_connection = True
        self.send_response(status)
        if status in (204, 304):
            body = b""  # neither has a body, nor (RFC 9110) a Content-Length to say so
        else:
            if content_type is not None:  # None: an empty body, of no type
                self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "same-origin")
        self.send_header("X-Frame-Options", "DENY")
        for name, value in headers:
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.connection.settimeout(self.server.options.body_timeout)
        try:
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
        except TimeoutError:  # the client does not read: no 408 after half an answer
            raise ConnectionAbortedError("the answer was not taken within --body-timeout")

    def _error(self, status, code, message):
        self._send(status, {"error": {"code": code, "message": message}})

    def _refuse(self, status, message):
        """An answer after which the connection is closed: what follows cannot be delimited."""
        self.close_connection = True
        self._error(status, -32600, message)
        return status, "-"

    def _read_body(self):
        length, self.body_left = self.body_left, 0
        body = self.rfile.read(length)
        if len(body) < length:
            raise ConnectionResetError("the body ended early")
        return body

    # ---- every request: framing, Host, then the route

    def _route(self):
        path = self.path.split("?", 1)[0]
        # The identifiers in Apple's routes are not logged, whatever the answer (a 400, a 421).
        wallet, token = self.server.options.wallet_orders_path, self.server.options.token_notification_path
        if path.startswith(wallet + "/v1/"):
            self.logged_path = wallet + "/v1/..."
        elif path.startswith(token + "/notification/"):
            self.logged_path = token + "/notification/..."
        # A body the bridge cannot delimit exactly would be read as the next request.
        lengths = self.headers.get_all("Content-Length") or []
        if len(lengths) > 1 or (lengths and not re.fullmatch(r"[0-9]{1,12}", lengths[0].strip())):
            return self._refuse(400, "Send one Content-Length with a decimal number")
        chunked = self.headers.get("Transfer-Encoding") is not None
        self.body_left = int(lengths[0]) if lengths else 0
        if self.command in ("GET", "HEAD") and (self.body_left or chunked):
            return self._refuse(400, "A %s request has no body" % self.command)
        if chunked:
            return self._refuse(411, "Send the body with a Content-Length")
        # DNS rebinding: a page on another name that resolves to this address is not served.
        if not self.server.host_allowed(self.headers.get_all("Host") or []):
            self._error(421, -32600, "The Host header does not name this bridge (--allowed-hosts)")
            return 421, "-"
        if path.startswith(wallet + "/v1/"):
            return self._wallet_orders(wallet, path[len(wallet) + 1:])
        if path.startswith(token + "/notification/"):
            return self._token_notification(token, path[len(token) + 1:])
        if self.command in ("GET", "HEAD"):
            return self._static(path), "-"
        if self.command != "POST":
            self._send(405, {"error": {"code": -32601, "message": "Method not allowed"}},
                       headers=[("Allow", "GET, HEAD, POST")])
            return 405, "-"
        if path == ADYEN_WEBHOOK_PATH:
            return self._adyen_webhook()
        if path != "/rpc":
            self._error(404, -32601, "Not found")
            return 404, "-"
        return self._rpc()

    def _static(self, path):
        if path == DOMAIN_ASSOCIATION_PATH and self.server.domain_association is not None:
            self._send(200, self.server.domain_association, "text/plain")
            return 200
        entry = STATIC_FILES.get(path)
        if entry is None:
            self._error(404, -32601, "Not found")
            return 404
        name, content_type = entry
        try:
            with open(os.path.join(HERE, name), "rb") as f:
                body = f.read()
        except OSError:
            self._error(404, -32601, "Not found")
            return 404
        self._send(200, body, content_type)
        return 200

    # ---- POST /rpc

    def _rpc(self):
        if not self.headers.get("Content-Length"):
            return self._refuse(411, "Content-Length is required")
        if self.body_left > MAX_BODY_BYTES:
            self._error(413, -32600, "The body is larger than %d bytes" % MAX_BODY_BYTES)
            return 413, "-"
        origins = self.headers.get_all("Origin")
        if origins is not None and not self.server.origin_allowed(origins):
            self._error(403, -32600, "The Origin header is not an allowed host (--allowed-hosts)")
            return 403, "-"
        # A JSON content type makes a cross-site request a preflighted one, which this bridge never
        # approves (it sends no CORS headers): another site's page cannot drive the checkout.
        content_type = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        if content_type != "application/json":
            self._error(415, -32600, "Content-Type must be application/json")
            return 415, "-"
        try:
            request = parse_body(self._read_body())
        except BadBody as error:
            self._error(400, error.code, str(error))
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
        response, failed = self._call(method, params)
        if failed:
            return failed, method
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

    def _call(self, method, params):
        """payservice's response to one request: (the response, None), or (None, the HTTP status of
        the error already sent) when it could not be asked or did not answer."""
        try:
            return self.server.payservice.call(method, params), None
        except UnicodeEncodeError:
            self._error(400, -32700, "The body has a \\u escape of a lone UTF-16 surrogate, which is not text")
            return None, 400
        except PayserviceDied as error:
            self._error(502, -32000, str(error))
            return None, 502
        except PayserviceTimeout as error:
            self._error(504, -32000, str(error))
            return None, 504

    # ---- POST /webhooks/adyen

    def _adyen_webhook(self):
        """Adyen's server, not a page: no Origin to check. Each item's HMAC signature is what makes a
        notification Adyen's, and payservice checks it; the bridge passes the body on as it came and
        answers as Adyen's documentation asks: "[accepted]" when it was taken in (forged items among
        them are payservice's to refuse), an error status otherwise, so that Adyen sends it again."""
        method = "processAdyenNotification"
        if not self.headers.get("Content-Length"):
            return self._refuse(411, "Content-Length is required")
        if self.body_left > MAX_WEBHOOK_BYTES:
            self._error(413, -32600, "The body is larger than %d bytes" % MAX_WEBHOOK_BYTES)
            return 413, method
        try:
            payload = self._read_body().decode("utf-8")
        except UnicodeDecodeError:
            self._error(400, -32700, "The body is not UTF-8")
            return 400, method
        response, failed = self._call(method, {"payload": payload})
        if failed:
            return failed, method
        result = response.get("result")
        if isinstance(result, dict) and result.get("status") == "succeeded":
            self._send(200, result.get("reply", "[accepted]").encode("utf-8"), "text/plain; charset=utf-8")
            return 200, method
        # Not taken in (no HMAC key, not a notification, another mode's): said to the merchant's log
        # by payservice's answer, and to Adyen by the status.
        self._send(500, result if isinstance(result, dict) else {"error": response.get("error")})
        return 500, method

    # ---- Wallet's order web service: {prefix}/v1/...

    def _wallet_orders(self, prefix, route):
        """Apple's routes (route: the path after {prefix}/, still percent-encoded). Wallet is not a
        page: no Origin check. Each route's parts are percent-decoded once and passed as the method's
        params; payservice checks them (-32602 is 400), and its result status is the HTTP status."""
        try:
            parts = [urllib.parse.unquote(part, errors="strict") for part in route.split("/")]
        except UnicodeDecodeError:
            self._error(400, -32600, "The path's percent-encoding is not UTF-8")
            return 400, "-"
        if len(parts) == 4 and parts[:2] == ["v1", "orders"]:
            pattern, methods = WALLET_ORDER_ROUTE, {"GET": "getWalletOrder"}
        elif len(parts) == 6 and parts[:2] == ["v1", "devices"] and parts[3] == "registrations":
            pattern, methods = WALLET_REGISTRATION_ROUTE, {"POST": "registerWalletDevice",
                                                           "DELETE": "unregisterWalletDevice"}
        elif len(parts) == 5 and parts[:2] == ["v1", "devices"] and parts[3] == "registrations":
            pattern, methods = WALLET_CHANGES_ROUTE, {"GET": "listChangedWalletOrders"}
        elif parts == ["v1", "log"]:
            pattern, methods = WALLET_LOG_ROUTE, {"POST": "logWalletMessages"}
        else:
            self._error(404, -32601, "Not found")
            return 404, "-"
        self.logged_path = prefix + pattern
        method = methods.get("GET" if self.command == "HEAD" else self.command)
        if method is None:
            allow = sorted(methods) + (["HEAD"] if "GET" in methods else [])
            self._send(405, {"error": {"code": -32601, "message": "Method not allowed"}},
                       headers=[("Allow", ", ".join(allow))])
            return 405, "-"

        # A member missing from a body goes to payservice as null, and payservice names it (400).
        if method == "logWalletMessages":
            body, failed = self._wallet_body()
            if failed:
                return failed, method
            return self._wallet_call(method, {"logs": body.get("logs")}), method
        if method == "listChangedWalletOrders":
            params = {"deviceLibraryIdentifier": parts[2], "orderTypeIdentifier": parts[4]}
            query = urllib.parse.parse_qs(self.path.partition("?")[2], keep_blank_values=True)
            since = query.get("ordersModifiedSince")
            if since is not None:
                if len(since) > 1:
                    self._error(400, -32602, "Send ordersModifiedSince once")
                    return 400, method
                params["ordersModifiedSince"] = since[0]
            return self._wallet_call(method, params), method

        token = self._apple_order_token()
        if token is None:
            self._send(401, {"error": {"code": -32600, "message":
                                       "Authorization: AppleOrder <the order's authenticationToken> is required"}},
                       headers=[("WWW-Authenticate", "AppleOrder")])
            return 401, method
        if method == "getWalletOrder":
            params = {"orderTypeIdentifier": parts[2], "orderIdentifier": parts[3], "authenticationToken": token}
            since = self.headers.get_all("If-Modified-Since") or []
            # One that cannot be an HTTP date is ignored, as HTTP says (payservice takes 64 bytes).
            if len(since) == 1 and len(since[0]) <= 64 and since[0].isascii():
                params["ifModifiedSince"] = since[0].strip()
            return self._wallet_call(method, params), method
        params = {"deviceLibraryIdentifier": parts[2], "orderTypeIdentifier": parts[4],
                  "orderIdentifier": parts[5], "authenticationToken": token}
        if method == "registerWalletDevice":
            body, failed = self._wallet_body()
            if failed:
                return failed, method
            params["pushToken"] = body.get("pushToken")
        return self._wallet_call(method, params), method

    def _apple_order_token(self):
        """The token of the one Authorization header, "AppleOrder <token>"; None when there is none
        or it is not that."""
        values = self.headers.get_all("Authorization") or []
        match = APPLE_ORDER_AUTHORIZATION.fullmatch(values[0].strip()) if len(values) == 1 else None
        return match.group(1) if match else None

    def _wallet_body(self):
        """(the body's JSON object, None), or (None, the HTTP status of the refusal already sent)."""
        if not self.headers.get("Content-Length"):
            return None, self._refuse(411, "Content-Length is required")[0]
        if self.body_left > MAX_BODY_BYTES:
            self._error(413, -32600, "The body is larger than %d bytes" % MAX_BODY_BYTES)
            return None, 413
        try:
            body = parse_body(self._read_body())
        except BadBody as error:
            self._error(400, error.code, str(error))
            return None, 400
        if not isinstance(body, dict):
            self._error(400, -32600, "The body must be a JSON object")
            return None, 400
        return body, None

    def _wallet_call(self, method, params):
        """Asks payservice and answers as Apple's route does; returns the HTTP status."""
        response, failed = self._call(method, params)
        if failed:
            return failed
        result = response.get("result")
        status = WALLET_HTTP_STATUS[method].get(result.get("status")) if isinstance(result, dict) else None
        if status is None:
            # -32602 is a route part, header or body payservice refused (or no walletOrders package
            # keys); anything else (-32001, the store unavailable) is the server's: Wallet asks again.
            error = response.get("error")
            if not isinstance(error, dict):
                error = {"code": -32603, "message": "payservice sent an answer this route does not have"}
            status = 400 if error.get("code") == -32602 else 500
            self._send(status, {"error": error})
            return status
        headers = [("WWW-Authenticate", "AppleOrder")] if status == 401 else []
        last_modified = result.get("lastModified") if method == "getWalletOrder" else None
        if not isinstance(last_modified, str) or not re.fullmatch(r"[\x20-\x7e]{1,64}", last_modified):
            last_modified = None  # an HTTP date is printable ASCII: nothing else goes in a header
        else:
            headers.append(("Last-Modified", last_modified))
        if method == "getWalletOrder" and status == 200:
            try:
                package = base64.b64decode(result.get("package") or "", validate=True)
            except (binascii.Error, TypeError, ValueError):
                package = b""
            if not package or last_modified is None:
                self._error(500, -32603, "payservice sent an order without its package or lastModified")
                return 500
            self._send(200, package, ORDER_CONTENT_TYPE, headers=headers)
        elif method == "listChangedWalletOrders" and status == 200:
            self._send(200, {"orderIdentifiers": result.get("orderIdentifiers", []),
                             "lastModified": result.get("lastModified")})
        else:
            self._send(status, result, headers=headers)
        return status

    # ---- Apple's merchant token notification: GET {prefix}/notification/merchantToken/{eventId}

    def _token_notification(self, prefix, route):
        """Apple's server, not a page: no Origin check. The call has no body and no signature, so the
        eventId (route's last part, percent-decoded once) is all that is passed on; payservice checks
        it (-32602 is 400) and asks Apple what happened. result.reply is the HTTP status, with an
        empty body; payservice not answering, or another error, is 500, so that Apple sends it again."""
        method = TOKEN_NOTIFICATION_METHOD
        try:
            parts = [urllib.parse.unquote(part, errors="strict") for part in route.split("/")]
        except UnicodeDecodeError:
            self._error(400, -32600, "The path's percent-encoding is not UTF-8")
            return 400, "-"
        if len(parts) != 3 or parts[:2] != ["notification", "merchantToken"]:
            self._error(404, -32601, "Not found")
            return 404, "-"
        self.logged_path = prefix + TOKEN_NOTIFICATION_ROUTE
        if self.command != "GET":
            self._send(405, {"error": {"code": -32601, "message": "Method not allowed"}}, headers=[("Allow", "GET")])
            return 405, "-"
        try:
            response = self.server.payservice.call(method, {"eventId": parts[2]})
        except (PayserviceDied, PayserviceTimeout) as error:
            self._error(500, -32000, str(error))
            return 500, method
        result = response.get("result")
        reply = result.get("reply") if isinstance(result, dict) else None
        if reply in (200, 500) and type(reply) is int:
            self._send(reply, b"", None)
            return reply, method
        error = response.get("error")
        if not isinstance(error, dict) or "result" in response:
            error = {"code": -32603, "message": "payservice sent an answer this route does not have"}
        code = error.get("code")
        # The error's code and message only: its data names what was refused, for the merchant's log.
        status = 400 if code == -32602 else 500
        self._error(status, code if isinstance(code, int) else -32603, str(error.get("message", ""))[:200])
        return status, method


def _short(text):
    return text if len(text) <= 64 else text[:61] + "..."


# ---- hosts: --allowed-hosts entries, Host and Origin headers

_AUTHORITY = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[^\[\]:/@\s]+)(?::([0-9]{1,5}))?")


def split_authority(text):
    """(host, port or None) of "host", "host:port", "[v6]" or "[v6]:port"; None when malformed."""
    match = _AUTHORITY.fullmatch(text.strip())
    if not match:
        return None
    return match.group(1).lower(), int(match.group(2)) if match.group(2) else None


def parse_allowed_hosts(text):
    entries = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        entry = split_authority(item)
        if entry is None:
            raise argparse.ArgumentTypeError("expected HOST[:PORT],...; %r is not one" % item)
        entries.append(entry)
    return entries


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # stopping does not wait for idle keep-alive connections
    request_queue_size = 128  # the listen backlog: socketserver's 5 drops a burst of new connections
    domain_association = None  # the bytes of --domain-association, served at DOMAIN_ASSOCIATION_PATH

    # After an answer that closes the connection with a body left unread (a 413), what the client
    # still sends is read and dropped for at most this long and this much before the socket closes:
    # closed with unread data, the kernel would reset it, and a client still sending could lose the
    # answer (a lingering close, as HTTP servers do).
    LINGER_SECONDS = 2.0
    LINGER_BYTES = 4 * MAX_WEBHOOK_BYTES

    def shutdown_request(self, request):
        try:
            request.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + self.LINGER_SECONDS
            dropped = 0
            while dropped < self.LINGER_BYTES:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                request.settimeout(left)
                chunk = request.recv(65536)
                if not chunk:
                    break
                dropped += len(chunk)
        except (OSError, ValueError):
            pass  # the client is gone, or a TLS socket refused the half-close: closed as it is
        self.close_request(request)

    def configure(self, options, payservice, tls_context):
        self.options = options
        self.payservice = payservice
        self.tls_context = tls_context
        self.connections = 0
        self.connections_lock = threading.Lock()
        port = self.server_address[1]
        if options.allowed_hosts:
            self.allowed_hosts = options.allowed_hosts
        else:
            listen = self.server_address[0]
            names = [listen if ":" not in listen else "[%s]" % listen, "localhost", "127.0.0.1", "[::1]"]
            self.allowed_hosts = [(name.lower(), port) for name in dict.fromkeys(names)]

    def _allowed(self, host, port):
        return any(h == host and p in (None, port) for h, p in self.allowed_hosts)

    def host_allowed(self, values):
        entry = split_authority(values[0]) if len(values) == 1 else None
        if entry is None:
            return False
        host, port = entry
        return self._allowed(host, port or (443 if self.tls_context else 80))

    def origin_allowed(self, values):
        """One Origin, scheme://host[:port], of an allowed host; https only when the bridge is."""
        match = re.fullmatch(r"(https?)://(.+)", values[0].strip()) if len(values) == 1 else None
        if not match or (self.tls_context and match.group(1) != "https"):
            return False
        entry = split_authority(match.group(2))
        if entry is None:
            return False
        host, port = entry
        return self._allowed(host, port or (443 if match.group(1) == "https" else 80))

    # ---- connections: at most --max-connections threads; TLS handshakes in them, not in accept

    def verify_request(self, request, client_address):
        with self.connections_lock:
            if self.connections < self.options.max_connections:
                self.connections += 1
                return True
        if not self.tls_context:
            try:
                request.setblocking(False)
                request.send(BUSY_RESPONSE)
            except OSError:
                pass
        log("refused a connection: %d are open (--max-connections)" % self.options.max_connections)
        return False  # closed by the caller

    def process_request_thread(self, request, client_address):
        try:
            if self.tls_context:
                request.settimeout(self.options.header_timeout)
                try:
                    request = self.tls_context.wrap_socket(request, server_side=True)
                except OSError as error:  # ssl.SSLError, TimeoutError: wrap_socket has closed it
                    log("closed a connection: TLS handshake failed: %s" % error)
                    return
            super().process_request_thread(request, client_address)
        finally:
            with self.connections_lock:
                self.connections -= 1

    def process_request(self, request, client_address):
        try:
            super().process_request(request, client_address)
        except BaseException:
            with self.connections_lock:
                self.connections -= 1  # no thread started
            raise

    def handle_error(self, request, client_address):
        error = sys.exc_info()[1]
        log("error on a connection: %s: %s" % (type(error).__name__, error))


class Server6(Server):
    address_family = socket.AF_INET6


def payservice_argv(args):
    """payservice's command line, and its environment when the database URL has a password."""
    argv = [args.payservice]
    if args.config:
        argv += ["--config", args.config]
    database = args.database
    if database is None and args.selftest:
        database = ":memory:"  # the self-test leaves no store behind unless asked to
    env = None
    if database:
        database, password = split_password(database)
        if password is not None:
            env = dict(os.environ, PGPASSWORD=password)
        argv += ["--database", database]
    return argv + list(args.payservice_args), env


def parse_path_prefix(text):
    """The path without its trailing /; "" for the root."""
    if not text.startswith("/") or re.search(r"[?#\s\x00-\x1f\x7f]", text):
        raise argparse.ArgumentTypeError("expected a path that starts with /, like /wallet-orders or /applepay")
    return text.rstrip("/")


def parse_listen(text):
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError("expected HOST:PORT, like 127.0.0.1:8080")
    return host.strip("[]") or "127.0.0.1", int(port)


def make_server(args, address):
    server = (Server6 if ":" in address[0] else Server)(address, Handler)
    tls_context = None
    if args.tls_cert:
        tls_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls_context.minimum_version = ssl.TLSVersion.TLSv1_2
        tls_context.load_cert_chain(args.tls_cert, args.tls_key)
    argv, env = payservice_argv(args)
    server.configure(args, Payservice(argv, args.timeout, env), tls_context)
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
    parser.add_argument("--database", help="passed to payservice as --database (self-test default: :memory:); "
                        "a PostgreSQL URL's password is passed in PGPASSWORD instead")
    parser.add_argument("--listen", type=parse_listen, default=("127.0.0.1", 8080), metavar="HOST:PORT",
                        help="address to serve HTTP on (default 127.0.0.1:8080)")
    parser.add_argument("--allowed-hosts", type=parse_allowed_hosts, metavar="HOST[:PORT],...",
                        help="the names the Host header (and a POST's Origin) may give; a name without a "
                        "port allows any port (default: the --listen host, localhost, 127.0.0.1 and [::1], "
                        "each with the listening port)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for an answer (504 after)")
    parser.add_argument("--idle-timeout", type=float, default=15.0, metavar="SECONDS",
                        help="close a connection that sends no request for this long (default 15)")
    parser.add_argument("--header-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="the TLS handshake, and the request line and headers once begun, within this "
                        "(408 after; default 10)")
    parser.add_argument("--body-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="the body within this after the headers, and the answer sent (408 after; default 10)")
    parser.add_argument("--max-connections", type=int, default=64, metavar="N",
                        help="connections served at once; more get 503 and are closed (default 64)")
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate chain")
    parser.add_argument("--tls-key", help="the PEM private key of --tls-cert")
    parser.add_argument("--domain-association", metavar="FILE",
                        help="serve this file (Apple's, from the merchant id's domain registration) at "
                        + DOMAIN_ASSOCIATION_PATH)
    parser.add_argument("--wallet-orders-path", type=parse_path_prefix, default="/wallet-orders",
                        metavar="PATH", help="where Wallet's order web service is served: the path of the "
                        "config's walletOrders.webServiceURL (default /wallet-orders; / for the root)")
    parser.add_argument("--token-notification-path", type=parse_path_prefix, default="/applepay",
                        metavar="PATH", help="where Apple's merchant token notification is served: the path of "
                        "the config's applePay.tokenNotificationURL (default /applepay; / for the root)")
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
    if min(args.idle_timeout, args.header_timeout, args.body_timeout) <= 0 or args.max_connections < 1:
        parser.error("the timeouts must be positive and --max-connections at least 1")
    if not os.path.exists(args.payservice):
        parser.error("no payservice binary at %s (swift build -c release, or give --payservice)" % args.payservice)
    try:
        split_password(args.database or "")
    except ValueError as error:
        parser.error(str(error))

    domain_association = None
    if args.domain_association:
        try:
            with open(args.domain_association, "rb") as f:
                domain_association = f.read()
        except OSError as error:
            parser.error("--domain-association: %s" % error)
    if args.selftest:
        return selftest(args)

    try:
        server = make_server(args, args.listen)
        server.domain_association = domain_association
    except (OSError, ssl.SSLError) as error:
        log("cannot start: %s" % error)
        return 1
    host, port = server.server_address[:2]
    scheme = "https" if args.tls_cert else "http"
    log("serving %s://%s:%d/ for %s (Ctrl-C stops)" % (
        scheme, host if ":" not in host else "[%s]" % host, port,
        ", ".join(h if p is None else "%s:%d" % (h, p) for h, p in server.allowed_hosts)))
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
