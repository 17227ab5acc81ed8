import subprocess, json, os, re, sys, sqlite3, tempfile, time
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen import c, SHIP, BILL

BIN = os.path.abspath(sys.argv[1])
CWD = os.path.dirname(os.path.dirname(HERE))
WORK = tempfile.mkdtemp(prefix="payservice-doc-")
DB = os.path.join(WORK, "doc.sqlite")
NOW = "2026-11-21T12:00:00Z"

def fresh():
    for s in ("", "-wal", "-shm"):
        try: os.remove(DB + s)
        except FileNotFoundError: pass

class Proc:
    def __init__(self, config="config.yaml", now=NOW, extra=(), quiet=True, env=None):
        args = [BIN, "--config", config, "--database", DB, "--now", now] + list(extra)
        if quiet: args.append("--quiet")
        self.p = subprocess.Popen(args, cwd=CWD, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env)
    def send(self, raw: bytes, expect=True):
        self.p.stdin.write(raw); self.p.stdin.flush()
        if expect:
            return self.p.stdout.readline()
        return None
    def close(self):
        self.p.stdin.close()
        rest = self.p.stdout.read()
        err = self.p.stderr.read()
        rc = self.p.wait()
        return rest, err, rc

EX = {}   # name -> (request bytes, response bytes or None)
VARS = {}

def sub(line):
    for k, v in VARS.items():
        line = line.replace("$" + k, v)
    return line

def run(proc, name, obj_or_line, expect=True, raw=None):
    line = obj_or_line if isinstance(obj_or_line, str) else c(obj_or_line)
    line = sub(line)
    data = raw if raw is not None else (line + "\n").encode()
    resp = proc.send(data, expect)
    if expect:
        assert resp.endswith(b"\n"), (name, resp)
    EX[name] = (data, resp)
    return json.loads(resp) if expect and resp.strip() else None

def rq(id, method, params=None):
    o = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None: o["params"] = params
    return o

def sandbox_card(network, typ):
    """The sandbox test card for a network and type: tok_NETWORK (a credit card; privateLabel: store) or tok_NETWORK_TYPE."""
    default = "store" if network.lower() == "privatelabel" else "credit"
    return "tok_" + network + ("" if typ == default else "_" + typ)

def auth_params(items=[{"sku": "clock"}], method="express", pd=None, network="visa", typ="credit", ship=SHIP, bill=BILL, txn="txn-1"):
    # The sandbox's test card must be the claimed card (it decides the card's price).
    if pd is None: pd = sandbox_card(network, typ)
    pay = {"token": {"paymentData": pd, "paymentMethod": {"displayName": "Visa 1234", "network": network, "type": typ}, "transactionIdentifier": txn}}
    if ship is not None: pay["shippingContact"] = ship
    if bill is not None: pay["billingContact"] = bill
    return {"items": items, "shippingMethod": method, "payment": pay}

def order_params(tok, items=[{"sku": "clock"}], method="express", ship=SHIP, bill=None, amount="66.13", cur="USD"):
    p = {"chargeToken": tok, "items": items, "shippingMethod": method, "shippingContact": ship}
    if bill is not None: p["billingContact"] = bill
    p["amount"] = amount; p["currencyCode"] = cur
    return p

CUP = {"locality": "Cupertino", "administrativeArea": "CA", "postalCode": "95014", "countryCode": "US"}

# ---------------- main session
fresh(); P = Proc()
run(P, "listProducts", rq(1, "listProducts"))
run(P, "listShippingMethods", rq(2, "listShippingMethods"))
run(P, "csi_basic", rq(3, "computeSummaryItems", {"items": [{"sku": "clock", "quantity": 2}, {"sku": "mug"}]}))
run(P, "csi_ny", rq(4, "computeSummaryItems", {"items": [{"sku": "clock"}], "shippingMethod": "express", "shippingContact": {"administrativeArea": "NY", "postalCode": "10001", "countryCode": "US"}}))
run(P, "csi_fallback", rq(5, "computeSummaryItems", {"items": [{"sku": "clock"}], "shippingMethod": "free", "shippingContact": {"administrativeArea": "AK", "postalCode": "99501", "countryCode": "US"}}))
run(P, "csi_none", rq(6, "computeSummaryItems", {"items": [{"sku": "clock"}], "shippingContact": {"countryCode": "FR"}}))
run(P, "csi_pertax", rq(7, "computeSummaryItems", {"items": [{"sku": "notebook", "quantity": 4}, {"sku": "clock"}], "shippingContact": CUP}))
run(P, "ssc_ok", rq(10, "selectShippingContact", {"items": [{"sku": "clock"}], "shippingContact": CUP, "shippingMethod": "express"}))
run(P, "ssc_ca", rq(11, "selectShippingContact", {"items": [{"sku": "clock"}], "shippingContact": {"locality": "Ottawa", "administrativeArea": "ON", "postalCode": "K1A", "countryCode": "CA"}}))
run(P, "ssc_invalid", rq(12, "selectShippingContact", {"items": [{"sku": "clock"}], "shippingContact": {"locality": "Ottawa", "administrativeArea": "QQ", "postalCode": "K1A-0B1", "countryCode": "CA"}}))
run(P, "ssc_unserviceable", rq(13, "selectShippingContact", {"items": [{"sku": "clock"}], "shippingContact": {"locality": "Paris", "postalCode": "75001", "countryCode": "FR"}}))
r = run(P, "auth_ok", rq(20, "authorizePayment", auth_params()))
VARS["T1"] = r["result"]["chargeToken"]
r = run(P, "po_ok", rq(21, "processOrder", order_params("$T1")))
VARS["ORD1"] = r["result"]["orderId"]
run(P, "po_replay", rq(22, "processOrder", order_params("$T1", amount="66.130")))
run(P, "po_conflict", rq(23, "processOrder", order_params("$T1", items=[{"sku": "clock", "quantity": 2}], amount="132.26")))
OFFICE = Proc(extra=["--back-office"])
run(OFFICE, "getOrder", rq(24, "getOrder", {"orderId": "$ORD1"}))
run(OFFICE, "getOrder_missing", rq(25, "getOrder", {"orderId": "ord_doesnotexist"}))
run(OFFICE, "ship_order", rq(26, "shipOrder", {"orderId": "$ORD1", "shipmentId": "parcel-1", "carrier": "UPS", "trackingNumber": "1Z999AA10123456784", "trackingURL": "https://www.ups.com/track?tracknum=1Z999AA10123456784"}))
OFFICE.close()
run(P, "listProducts_after", rq(26, "listProducts"))
P.close()

# ---------------- authorize statuses
fresh(); P = Proc()
run(P, "auth_addr", rq(1, "authorizePayment", auth_params(ship={"givenName": "Ada", "emailAddress": "ada@example.com", "addressLines": ["1 Infinite Loop"], "locality": "Cupertino", "administrativeArea": "ZZ", "postalCode": "9501", "countryCode": "US"})))
run(P, "auth_unserviceable", rq(2, "authorizePayment", auth_params(method="free", ship=dict(SHIP, locality="Anchorage", administrativeArea="AK", postalCode="99501"))))
run(P, "auth_person", rq(3, "authorizePayment", auth_params(ship=dict(SHIP, givenName=None, familyName=" ", emailAddress="ada@example"))))
run(P, "auth_billing", rq(4, "authorizePayment", auth_params(bill={"addressLines": ["1 Infinite Loop"], "locality": "Cupertino", "postalCode": "95014"})))
run(P, "auth_network", rq(5, "authorizePayment", auth_params(network="jcb")))
P.close()

fresh(); P = Proc(config="docs/protocol/configs/credit-only.yaml")
run(P, "auth_type", rq(1, "authorizePayment", auth_params(typ="debit")))
run(P, "auth_store", rq(2, "authorizePayment", auth_params(typ="store")))
P.close()

# ---------------- sandbox declines
fresh(); P = Proc()
names = ["tok_visa_chargeDeclined", "tok_visa_chargeDeclinedInsufficientFunds", "tok_chargeDeclinedExpiredCard", "tok_chargeDeclinedProcessingError"]
for i, n in enumerate(names):
    r = run(P, "dauth_%d" % i, rq(i + 1, "authorizePayment", auth_params(pd=n)))
    VARS["D%d" % i] = r["result"]["chargeToken"]
for i, n in enumerate(names):
    run(P, "decl_%d" % i, rq(10 + i, "processOrder", order_params("$D%d" % i)))
run(P, "decl_stock", rq(20, "listProducts"))
P.close()

# ---------------- processOrder failures
fresh(); P = Proc()
r = run(P, "f_auth", rq(1, "authorizePayment", auth_params()))
VARS["F1"] = r["result"]["chargeToken"]
run(P, "f_unknown", rq(2, "processOrder", order_params("ctok_00000000000000000000000000000000")))
run(P, "f_mismatch", rq(3, "processOrder", order_params("$F1", amount="66.12")))
run(P, "f_different", rq(4, "processOrder", order_params("$F1", method="free", amount="53.63")))
run(P, "f_after", rq(5, "processOrder", order_params("$F1")))
I = [{"sku": "notebook", "quantity": 4}, {"sku": "clock"}]
r = run(P, "f_oos_auth", rq(6, "authorizePayment", auth_params(items=I)))
VARS["F2"] = r["result"]["chargeToken"]
run(P, "f_oos", rq(7, "processOrder", order_params("$F2", items=I, amount=r["result"]["amount"])))
P.close()

# ---------------- expiry (two processes, same store)
fresh(); P = Proc()
r = run(P, "e_auth", rq(1, "authorizePayment", auth_params()))
VARS["E1"] = r["result"]["chargeToken"]
P.close()
P = Proc(now="2026-11-21T13:00:00Z")
run(P, "e_expired", rq(2, "processOrder", order_params("$E1")))
P.close()

# ---------------- invalid params
fresh(); P = Proc()
run(P, "inv_items", rq(1, "computeSummaryItems", {"items": [{"sku": "clock", "quantity": 0}, {"sku": "lamp", "quantity": 2.5}, {"sku": "ghost"}, {"sku": "clock"}, {"sku": "mug", "qty": 1}], "shippingMethod": "drone", "coupon": "SAVE10"}))
run(P, "inv_positional", rq(2, "computeSummaryItems", [[{"sku": "clock"}]]))
run(P, "inv_amount_number", rq(3, "processOrder", order_params("ctok_x", amount=66.13)))
run(P, "inv_amount_digits", rq(4, "processOrder", order_params("ctok_x", amount="66.131")))
run(P, "amount_trailing_zero", rq(5, "processOrder", order_params("ctok_x", amount="66.130")))
run(P, "inv_auth", rq(6, "authorizePayment", {"items": [{"sku": "clock"}], "payment": {"token": {"paymentData": "", "paymentMethod": {"network": "visa", "type": "gift"}}, "shippingContact": {"givenName": 5, "addressLines": "1 Main St", "locality": None}}}))
run(P, "contact_lenient", rq(7, "computeSummaryItems", {"items": [{"sku": "clock"}], "shippingContact": {"administrativeArea": "ca", "postalCode": "95014", "givenName": None, "nickname": "home"}}))
run(P, "quantity_float", '{"jsonrpc":"2.0","id":8,"method":"computeSummaryItems","params":{"items":[{"sku":"mug","quantity":3e0}]}}')
run(P, "inv_nullcontact", rq(9, "computeSummaryItems", {"items": [{"sku": "clock"}], "shippingContact": None}))
P.close()

# ---------------- protocol (getOrder, a back-office method, is the request these examples read)
fresh(); P = Proc(extra=["--back-office"])
def raw(name, b, expect=True):
    resp = P.send(b, expect)
    EX[name] = (b, resp)
raw("parse", b'{"jsonrpc":"2.0","id":1,"method":"listProducts"\n')
raw("bad_version", b'{"jsonrpc":"1.0","id":2,"method":"listProducts"}\n')
raw("bad_method", b'{"jsonrpc":"2.0","id":3,"method":7}\n')
raw("bad_id", b'{"jsonrpc":"2.0","id":{"n":1},"method":"listProducts"}\n')
raw("bad_params", b'{"jsonrpc":"2.0","id":4,"method":"listProducts","params":"all"}\n')
raw("not_object", b'42\n')
raw("empty_batch", b'[]\n')
raw("no_method", b'{"jsonrpc":"2.0","id":5}\n')
SHOP = Proc()
EX["unknown_method"] = (b'{"jsonrpc":"2.0","id":6,"method":"refundOrder","params":{"orderId":"ord_1"}}\n', SHOP.send(b'{"jsonrpc":"2.0","id":6,"method":"refundOrder","params":{"orderId":"ord_1"}}\n'))
SHOP.close()
raw("big_id", b'{"jsonrpc":"2.0","id":9007199254740993,"method":"getOrder","params":{"orderId":"x"}}\n')
raw("frac_id", b'{"jsonrpc":"2.0","id":1.50,"method":"getOrder","params":{"orderId":"x"}}\n')
raw("surrogate", b'{"jsonrpc":"2.0","id":"a\\ud800b","method":"getOrder","params":{"orderId":"x"}}\n')
raw("dupkey", b'{"jsonrpc":"2.0","id":1,"id":"second","method":"getOrder","params":{"orderId":"x"},"trace":"abc"}\n')
raw("crlf", b'{"jsonrpc":"2.0","id":"crlf","method":"getOrder","params":{"orderId":"x"}}\r\n')
raw("notif", b'{"jsonrpc":"2.0","method":"computeSummaryItems","params":{"items":[{"sku":"clock"}]}}\n', expect=False)
raw("notif_pay", b'{"jsonrpc":"2.0","method":"processOrder","params":{}}\n', expect=False)
raw("batch", b'[{"jsonrpc":"2.0","id":"a","method":"getOrder","params":{"orderId":"x"}},{"jsonrpc":"2.0","method":"listShippingMethods"},7,{"jsonrpc":"2.0","id":"b","method":"nope"}]\n')
raw("batch_notif", b'[{"jsonrpc":"2.0","method":"listProducts"}]\n', expect=False)
raw("nest_ok", ('{"jsonrpc":"2.0","id":1,"method":"getOrder","params":{"orderId":"x","deep":' + '[' * 510 + ']' * 510 + '}}\n').encode())
raw("nest_bad", ('{"jsonrpc":"2.0","id":2,"method":"getOrder","params":{"orderId":"x","deep":' + '[' * 511 + ']' * 511 + '}}\n').encode())
raw("after", b'{"jsonrpc":"2.0","id":"after","method":"getOrder","params":{"orderId":"x"}}\n')
rest, err, rc = P.close()
assert rest == b"", rest
EX["_proto_stderr"] = (err, None)

# ---------------- line limit
fresh(); P = Proc(extra=["--max-line-bytes", "100", "--back-office"])
s = '{"jsonrpc":"2.0","id":%d,"method":"getOrder","params":{"orderId":"%s"}}'
def ln(i, n): return s % (i, 'x' * (n - len(s % (i, ''))))
raw("limit_ok", (ln(1, 100) + "\n").encode())
raw("limit_over", (ln(2, 101) + "\n").encode())
raw("limit_crlf", (ln(3, 100) + "\r\n").encode())
raw("limit_next", (ln(4, 60) + "\n").encode())
P.close()

# ---------------- currencies / rounding
for name, cfg in [("jpy", "docs/protocol/configs/jpy.yaml"), ("kwd", "docs/protocol/configs/kwd.yaml"), ("halfeven", "docs/protocol/configs/halfeven.yaml"), ("halfup", "config.yaml")]:
    fresh(); P = Proc(config=cfg)
    if name in ("jpy", "kwd"):
        run(P, "cur_" + name, rq(1, "computeSummaryItems", {"items": [{"sku": "clock", "quantity": 3}]}))
    else:
        run(P, "round_" + name, rq(1, "computeSummaryItems", {"items": [{"sku": "clock"}], "shippingContact": {"administrativeArea": "CA", "countryCode": "US"}}))
    P.close()

# ---------------- logging (not quiet)
fresh(); P = Proc(quiet=False, extra=["--back-office"])
raw("log1", b'{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{"items":[{"sku":"clock"}]}}\n')
raw("log2", b'{"jsonrpc":"2.0","id":"x-2","method":"getOrder","params":{"orderId":"ord_nope"}}\n')
raw("log3", b'{"jsonrpc":"2.0","method":"authorizePayment","params":{}}\n', expect=False)
raw("log4", b'not json\n')
rest, err, rc = P.close()
EX["_log_stderr"] = (err, None)

# ---------------- store unavailable
fresh(); P = Proc()
raw("busy_warm", b'{"jsonrpc":"2.0","id":0,"method":"listProducts"}\n')
db = sqlite3.connect(DB, isolation_level=None)
db.execute("BEGIN IMMEDIATE")
run(P, "busy", rq(1, "authorizePayment", auth_params()))
db.execute("ROLLBACK"); db.close()
rest, err, rc = P.close()
EX["_busy_stderr"] = (err, None)
fresh()

# ---------------- version 2: coupons, card adjustments, freeOver, delivery windows, events
STORE_CARD = {"displayName": "Acme Card 0042", "network": "privateLabel", "type": "store"}
AMEX = {"displayName": "Amex 1005", "network": "amex", "type": "credit"}
JCB = {"displayName": "JCB 0005", "network": "jcb", "type": "credit"}
TORONTO = {"locality": "Toronto", "administrativeArea": "ON", "postalCode": "M5V", "countryCode": "CA"}
CART = [{"sku": "clock"}, {"sku": "lamp", "quantity": 2}]
fresh(); P = Proc()
run(P, "v2_coupon", rq(1, "computeSummaryItems", {"items": CART, "shippingMethod": "express", "shippingContact": CUP, "couponCode": "save10"}))
run(P, "v2_card", rq(2, "selectPaymentMethod", {"items": CART, "paymentMethod": STORE_CARD, "shippingMethod": "express", "shippingContact": CUP, "couponCode": "SAVE10"}))
run(P, "v2_surcharge", rq(3, "selectPaymentMethod", {"items": [{"sku": "clock"}], "paymentMethod": AMEX, "shippingContact": CUP}))
run(P, "v2_card_refused", rq(4, "selectPaymentMethod", {"items": [{"sku": "clock"}], "paymentMethod": JCB, "shippingContact": CUP}))
run(P, "v2_cc_unknown", rq(5, "changeCouponCode", {"items": [{"sku": "clock"}], "couponCode": "FREESTUFF", "shippingContact": CUP}))
run(P, "v2_cc_minimum", rq(6, "changeCouponCode", {"items": [{"sku": "mug", "quantity": 2}], "couponCode": "SAVE10", "shippingContact": CUP}))
run(P, "v2_cc_free", rq(7, "changeCouponCode", {"items": [{"sku": "clock", "quantity": 3}], "couponCode": "", "shippingMethod": "express", "shippingContact": CUP}))
run(P, "v2_cc_below", rq(8, "changeCouponCode", {"items": [{"sku": "clock", "quantity": 3}], "couponCode": "WELCOME5", "shippingMethod": "express", "shippingContact": CUP}))
run(P, "v2_csi_above", rq(9, "computeSummaryItems", {"items": [{"sku": "clock", "quantity": 3}, {"sku": "mug"}], "shippingMethod": "express", "shippingContact": CUP, "couponCode": "WELCOME5"}))
run(P, "v2_ssm_ok", rq(10, "selectShippingMethod", {"items": [{"sku": "clock", "quantity": 2}], "shippingMethod": "canada", "shippingContact": TORONTO}))
run(P, "v2_ssm_bad", rq(11, "selectShippingMethod", {"items": [{"sku": "clock", "quantity": 2}], "shippingMethod": "express", "shippingContact": TORONTO, "couponCode": "WELCOME5"}))
run(P, "v2_ssc_coupon", rq(12, "selectShippingContact", {"items": [{"sku": "clock", "quantity": 2}], "shippingContact": TORONTO, "couponCode": "NOPE"}))
def auth2(coupon, card, items=[{"sku": "clock"}], method="free"):
    p = auth_params(items=items, method=method, pd=sandbox_card(card["network"], card["type"]))
    p["payment"]["token"]["paymentMethod"] = card
    p["couponCode"] = coupon
    return p
r = run(P, "v2_auth", rq(20, "authorizePayment", auth2("save10", AMEX, items=CART)))
VARS["V1"] = r["result"]["chargeToken"]
op = order_params("$V1", items=CART, method="free", amount=r["result"]["amount"])
op["couponCode"] = "SAVE10"
r = run(P, "v2_order", rq(21, "processOrder", op))
op2 = dict(op); op2.pop("couponCode")
run(P, "v2_order_nocoupon", rq(22, "processOrder", op2))
run(P, "v2_auth_badcoupon", rq(23, "authorizePayment", auth2("SPRING", STORE_CARD)))
P.close()
fresh(); P = Proc(now="2027-01-02T09:00:00Z")
run(P, "v2_expired", rq(1, "computeSummaryItems", {"items": [{"sku": "clock"}], "couponCode": "HOLIDAY26"}))
P.close()
fresh(); P = Proc(now="2026-12-30T18:00:00Z")
run(P, "v2_dates_us", rq(1, "selectShippingContact", {"items": [{"sku": "clock"}], "shippingContact": CUP}))
run(P, "v2_dates_ca", rq(2, "selectShippingContact", {"items": [{"sku": "clock"}], "shippingContact": TORONTO}))
P.close()
fresh()

# ---------------- Apple Pay EC_v1: the real test vector, the clock a minute after its signing time
APCFG = "Tests/EndToEndTests/Golden/applepay/config.yaml"
TOKEN = json.load(open(os.path.join(CWD, "Tests/PayServiceCoreTests/Fixtures/applepay-ec-v1/token.json")))
def ap_params(pd=TOKEN, qty=1):
    card = {"displayName": "Visa 4320", "network": "Visa", "type": "debit"}
    return {"items": [{"sku": "ticket", "quantity": qty}], "shippingMethod": "mobile",
            "payment": {"token": {"paymentData": pd, "paymentMethod": card, "transactionIdentifier": TOKEN["header"]["transactionId"].upper()},
                        "shippingContact": {"emailAddress": "fan@example.com"}}}
fresh(); P = Proc(config=APCFG, now="2014-10-27T19:52:00Z")
run(P, "ap_amount", rq(1, "authorizePayment", ap_params(qty=2)))
run(P, "ap_rsa", rq(2, "authorizePayment", ap_params(pd=dict(TOKEN, version="RSA_v1"))))
r = run(P, "ap_ok", rq(3, "authorizePayment", ap_params()))
VARS["APT"] = r["result"]["chargeToken"]
run(P, "ap_order", rq(4, "processOrder", {"chargeToken": "$APT", "items": [{"sku": "ticket"}], "shippingMethod": "mobile", "shippingContact": {"emailAddress": "fan@example.com"}, "amount": "1.00", "currencyCode": "USD"}))
run(P, "ap_replay", rq(5, "authorizePayment", ap_params()))
P.close()
fresh(); P = Proc(config=APCFG)
run(P, "ap_old", rq(1, "authorizePayment", ap_params()))
P.close()
fresh()

# Agents: MCP on the same stdio (handshake revision, then the 2026-07-28 envelope).
P = Proc()
run(P, "mcp_init", rq(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "agent", "version": "1.0"}}))
run(P, "mcp_initialized", {"jsonrpc": "2.0", "method": "notifications/initialized"}, expect=False)
run(P, "mcp_init_old", rq(2, "initialize", {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "old", "version": "0.1"}}))
run(P, "mcp_ping", rq(3, "ping"))
run(P, "mcp_call", rq(4, "tools/call", {"name": "computeSummaryItems", "arguments": {"items": [{"sku": "clock"}]}}))
run(P, "mcp_call_invalid", rq(5, "tools/call", {"name": "computeSummaryItems", "arguments": {"items": [{"sku": "clock", "quantity": 0}]}}))
run(P, "mcp_call_declined", rq(6, "tools/call", {"name": "authorizePayment", "arguments": auth_params(network="jcb")}))
run(P, "mcp_unknown_tool", rq(7, "tools/call", {"name": "refund", "arguments": {}}))
run(P, "mcp_cancelled", {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}, expect=False)
ENV = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
run(P, "mcp_discover", rq(8, "server/discover", {"_meta": ENV}))
run(P, "mcp_call_modern", rq(9, "tools/call", {"name": "computeSummaryItems", "arguments": {"items": [{"sku": "mug"}]}, "_meta": ENV}))
run(P, "mcp_unsupported", rq(10, "tools/call", {"name": "listProducts", "_meta": {**ENV, "io.modelcontextprotocol/protocolVersion": "2027-01-01"}}))
P.close()
fresh()

# Stripe: charged through the Stripe test server (the release build of stripe-test-server beside the
# binary), whose ids are deterministic: pi_test000001, ch_test000001, ... in creation order.
server = subprocess.Popen([os.path.join(os.path.dirname(BIN), "stripe-test-server")], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True)
info = json.loads(server.stdout.readline())
STRIPECFG = os.path.join(WORK, "stripe.yaml")
text = open(os.path.join(CWD, "config.yaml")).read()
assert "gateway:\n  kind: sandbox\n" in text
open(STRIPECFG, "w").write(text.replace("gateway:\n  kind: sandbox\n", "gateway:\n  kind: stripe\n  apiBase: %s\n  trustRoots: %s\n  requestTimeoutSeconds: 2\n  maxRetries: 0\n" % (info["baseURL"], info["caFile"])))
STRIPEENV = dict(os.environ, STRIPE_SECRET_KEY=info["secretKey"])
def fault(command):
    server.stdin.write(command + "\n"); server.stdin.flush()
fresh(); P = Proc(config=STRIPECFG, extra=["--back-office"], env=STRIPEENV)
VARS["ST1"] = run(P, "st_auth", rq(1, "authorizePayment", auth_params(pd="pm_card_visa")))["result"]["chargeToken"]
run(P, "st_auth_bad", rq(2, "authorizePayment", auth_params(pd="4242424242424242", txn="txn-0")))
VARS["STO"] = run(P, "st_order", rq(3, "processOrder", order_params("$ST1")))["result"]["orderId"]
run(P, "st_replay", rq(4, "processOrder", order_params("$ST1")))
VARS["ST2"] = run(P, "st_auth_decl", rq(5, "authorizePayment", auth_params(pd="pm_card_chargeDeclinedInsufficientFunds", txn="txn-2")))["result"]["chargeToken"]
run(P, "st_decline", rq(6, "processOrder", order_params("$ST2")))
VARS["ST3"] = run(P, "st_auth_lost", rq(7, "authorizePayment", auth_params(pd="pm_card_visa", txn="txn-3")))["result"]["chargeToken"]
fault("fault reset charge")
run(P, "st_lost", rq(8, "processOrder", order_params("$ST3")))
run(P, "st_pending", rq(9, "listOrders", {"status": "pending"}))
run(P, "st_refund", rq(10, "refundOrder", {"orderId": "$STO", "refundId": "rf-1", "amount": "10.00", "reason": "dented"}))
run(P, "st_refund_replay", rq(11, "refundOrder", {"orderId": "$STO", "refundId": "rf-1", "amount": "10.00", "reason": "dented"}))
# The Apple Pay token itself (the real EC_v1 vector), made a Stripe token and charged.
VECTOR = json.load(open(os.path.join(CWD, "Tests/PayServiceCoreTests/Fixtures/applepay-ec-v1/token.json")))
ap = auth_params(pd=VECTOR, txn=VECTOR["header"]["transactionId"].upper())
ap["payment"]["token"]["paymentMethod"]["displayName"] = "Visa 4320"
VARS["ST4"] = run(P, "st_auth_applepay", rq(14, "authorizePayment", ap))["result"]["chargeToken"]
run(P, "st_order_applepay", rq(15, "processOrder", order_params("$ST4")))
P.close()
# A new process: its start-up sweep sends the pending charge again under the same key.
P = Proc(config=STRIPECFG, extra=["--back-office"], env=STRIPEENV)
run(P, "st_recovered", rq(12, "processOrder", order_params("$ST3")))
run(P, "st_pending_after", rq(13, "listOrders", {"status": "pending"}))
rest, err, rc = P.close()
EX["_sweep_stderr"] = (err, None)
server.stdin.close(); server.wait()
fresh()

# The web checkout (examples/web/shop.yaml): payment requests for each billing plan, and merchant
# sessions from the Apple session test server (the release build of apple-session-test-server
# beside the binary), which plays Apple's gateway with its own CA and merchant identity.
apple = subprocess.Popen([os.path.join(os.path.dirname(BIN), "apple-session-test-server"), "--merchant",
                          "merchant.com.example.coffee", "--domain", "coffee.example.com", "--now", NOW],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
ainfo = json.loads(apple.stdout.readline())
WEBCFG = os.path.join(WORK, "web.yaml")
text = open(os.path.join(CWD, "examples", "web", "shop.yaml")).read()
text = text.replace("\napplePay:\n", "\napplePay:\n  merchantIdentityCertificate: %s\n  merchantIdentityKey: %s\n  domains: [coffee.example.com, tea.example.com]\n  merchantSession:\n    additionalHosts: [\"%s\"]\n    trustRoots: %s\n    requestTimeoutSeconds: 2\n" % (ainfo["identityCertificate"], ainfo["identityKey"], ainfo["additionalHost"], ainfo["trustRoots"]))
text += "\nwalletOrders:\n  orderTypeIdentifier: order.com.example.coffee\n  webServiceURL: https://coffee.example.com/wallet-orders\n"
open(WEBCFG, "w").write(text)
VARS["VALIDATION_URL"] = ainfo["validationURL"]
fresh(); P = Proc(config=WEBCFG)
run(P, "web_oneoff", rq(1, "createPaymentRequest", {"items": [{"sku": "grinder"}], "couponCode": "firstcup", "shippingContact": CUP}))
run(P, "web_subscription", rq(2, "createPaymentRequest", {"items": [{"sku": "beans-club"}]}))
run(P, "web_reload", rq(3, "createPaymentRequest", {"items": [{"sku": "cafe-card", "quantity": 2}]}))
run(P, "web_preorder", rq(4, "createPaymentRequest", {"items": [{"sku": "espresso-machine"}]}))
run(P, "web_mixed", rq(5, "createPaymentRequest", {"items": [{"sku": "beans-club"}, {"sku": "espresso-machine"}]}))
run(P, "web_session", rq(6, "startMerchantSession", {"validationURL": "$VALIDATION_URL", "domain": "coffee.example.com"}))
run(P, "web_session_host", rq(7, "startMerchantSession", {"validationURL": "https://apple-pay-gateway.apple.com.evil.example/paymentservices/startSession", "domain": "coffee.example.com"}))
run(P, "web_session_domain", rq(8, "startMerchantSession", {"validationURL": "$VALIDATION_URL", "domain": "tea.example.com"}))
apple.stdin.write("fault hang\ncount\n"); apple.stdin.flush()
apple.stdout.readline()  # the count's answer: the fault is queued
run(P, "web_session_timeout", rq(9, "startMerchantSession", {"validationURL": "$VALIDATION_URL", "domain": "coffee.example.com"}))
run(P, "web_contact", rq(10, "selectShippingContact", {"items": [{"sku": "beans-club"}], "shippingContact": CUP}))
r = run(P, "web_auth", rq(11, "authorizePayment", auth_params(items=[{"sku": "espresso-machine"}], method="standard")))
VARS["W1"] = r["result"]["chargeToken"]
run(P, "web_order", rq(12, "processOrder", order_params("$W1", items=[{"sku": "espresso-machine"}], method="standard", amount=r["result"]["amount"])))
P.close()
apple.stdin.close(); apple.wait()
# The test server's port changes from run to run: the examples show it as 8443.
for name in [n for n in EX if n.startswith("web_")]:
    request, response = EX[name]
    EX[name] = (request.replace(ainfo["additionalHost"].encode(), b"localhost:8443"),
                response.replace(ainfo["additionalHost"].encode(), b"localhost:8443") if response else response)
fresh()

# Addresses of every country (Google's address metadata), shipping to eight countries.
fresh(); P = Proc(config="docs/protocol/configs/worldwide.yaml")
GH = {"locality": "Accra", "countryCode": "GH"}
GH_FULL = dict(GH, addressLines=["12 Independence Avenue"], givenName="Ama", familyName="Mensah", emailAddress="ama@example.com")
run(P, "world_gh_sheet", rq(1, "selectShippingContact", {"items": [{"sku": "clock"}], "shippingContact": GH}))
run(P, "world_gh_auth", rq(2, "authorizePayment", auth_params(method="world", ship=GH_FULL, txn="txn-gh")))
run(P, "world_gb_gir", rq(3, "selectShippingContact", {"items": [{"sku": "clock"}], "shippingContact": {"locality": "London", "postalCode": "GIR", "countryCode": "GB"}}))
run(P, "world_gb_bad", rq(4, "selectShippingContact", {"items": [{"sku": "clock"}], "shippingContact": {"locality": "London", "postalCode": "QQ1", "countryCode": "GB"}}))
run(P, "world_fr_bad", rq(5, "selectShippingContact", {"items": [{"sku": "clock"}], "shippingContact": {"locality": "Paris", "postalCode": "7508", "countryCode": "FR"}}))
run(P, "world_cn_area", rq(6, "selectShippingContact", {"items": [{"sku": "clock"}], "shippingContact": {"locality": "广州市", "administrativeArea": "guangdong sheng", "postalCode": "510620", "countryCode": "CN"}}))
run(P, "world_cn_unknown", rq(7, "selectShippingContact", {"items": [{"sku": "clock"}], "shippingContact": {"locality": "广州市", "administrativeArea": "Gotham", "postalCode": "510620", "countryCode": "CN"}}))
run(P, "world_au_jbt", rq(8, "selectShippingContact", {"items": [{"sku": "clock"}], "shippingContact": {"locality": "Jervis Bay", "administrativeArea": "Jervis Bay Territory", "postalCode": "2540", "countryCode": "AU"}}))
run(P, "world_us_zip_state", rq(9, "selectShippingContact", {"items": [{"sku": "clock"}], "shippingContact": {"locality": "Albany", "administrativeArea": "CA", "postalCode": "12207", "countryCode": "US"}}))
JP_FULL = {"givenName": "Taro", "familyName": "Yamada", "emailAddress": "taro@example.jp", "addressLines": ["2-1 Shinsei"], "locality": "Setagaya-ku", "administrativeArea": "Tokyo", "postalCode": "1540023", "countryCode": "JP"}
tok = run(P, "world_jp_auth", rq(10, "authorizePayment", auth_params(method="world", ship=JP_FULL, txn="txn-jp")))["result"]
run(P, "world_jp_order", rq(11, "processOrder", order_params(tok["chargeToken"], method="world", ship=JP_FULL, amount=tok["amount"])))
P.close()
fresh()

# The example shops, as their sessions in examples/ run them.
for shop, names in [("uk-vat", ["uk_cart", "uk_coupon", "uk_method", "uk_pay", "uk_order"]), ("jp-shop", ["jp_cart", "jp_pay", "jp_order"]), ("cn-shop", ["cn_contact", "cn_province", "cn_pay", "cn_order"])]:
    fresh(); P = Proc(config="examples/%s.yaml" % shop)
    for name, line in zip(names, open(os.path.join(CWD, "examples", shop + ".jsonl")).read().splitlines()):
        run(P, name, line)
    P.close()
fresh()

# The reload transcript's log, as the golden test records and checks it.
EX["_reload_log"] = (open(os.path.join(CWD, "Tests", "EndToEndTests", "Golden", "reload", "log.txt"), "rb").read(), None)

out = {k: [v[0].decode("utf-8", "replace") if v[0] is not None else None, v[1].decode("utf-8") if v[1] is not None else None] for k, v in EX.items()}
json.dump(out, open(sys.argv[2], "w"), ensure_ascii=False, indent=1)
print("ok", len(out))
