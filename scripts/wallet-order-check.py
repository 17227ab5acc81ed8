#!/usr/bin/env python3
"""Check a Wallet order package (.order) the way Apple documents it.

    python3 scripts/wallet-order-check.py PACKAGE.order --ca ROOT.pem [--expect-order-type ID]

Checks: the zip's entries (order.json, manifest.json, signature, plus the images and
*.lproj files the manifest lists); manifest.json (SHA-256 hex of every other file, nothing
else); signature (detached CMS/PKCS #7 over manifest.json whose signer chains to ROOT.pem
with the intermediate carried inside the signature, and a signing-time attribute);
order.json against the rule tables below. One line per problem, exit 1 on any problem.
Needs only the standard library and the `openssl` command.

Sources (Apple's stored pages give only titles; the property tables were read from a mirror
of Apple's pages, apple-docs.everest.mt, and enum values from the passkit Dart package,
which copies Apple's "Possible Values"):
  https://developer.apple.com/documentation/walletorders/building-a-distributable-order-package
  https://developer.apple.com/documentation/walletorders/creating-the-source-for-an-order
"""
import argparse, hashlib, json, os, re, subprocess, sys, tempfile, zipfile

DOC = "https://developer.apple.com/documentation/walletorders/"
# A rule is (type, required, extra). Types: str, num, int, date (RFC 3339), url, duration
# (ISO 8601), file (names a file in the package), enum (extra = values), obj (extra = table
# name), list (extra = element type: a rule without `required`), anyobj (object not checked).
DATE_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
DURATION_RE = re.compile(r"^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$")

TABLES = {
    # DOC + "order": required keys from the table; status/orderType/changeNotifications values
    # and authenticationToken "Minimum Length: 16" as Apple states them.
    "Order": {
        "createdAt": ("date", True, None), "merchant": ("obj", True, "Merchant"),
        "orderIdentifier": ("str", True, None), "orderManagementURL": ("url", True, None),
        "orderType": ("enum", True, ["ecommerce"]), "orderTypeIdentifier": ("str", True, None),
        "status": ("enum", True, ["open", "completed", "cancelled"]),
        "schemaVersion": ("enum", True, [1]), "updatedAt": ("date", True, None),
        "associatedApplications": ("list", False, ("anyobj", None)),
        "associatedApplicationIdentifiers": ("list", False, ("str", None)),
        "authenticationToken": ("str", False, {"min": 16}), "barcode": ("anyobj", False, None),
        "changeNotifications": ("enum", False, ["enabled", "disabledIfAppInstalled"]),
        "customer": ("obj", False, "Customer"),
        "fulfillments": ("list", False, ("fulfillment", None)),
        "lineItems": ("list", False, ("obj", "LineItem")), "orderNumber": ("str", False, None),
        "orderProvider": ("anyobj", False, None), "payment": ("obj", False, "Payment"),
        "returnInfo": ("anyobj", False, None), "returns": ("list", False, ("anyobj", None)),
        "statusDescription": ("str", False, None), "webServiceURL": ("url", False, {"https": True}),
    },
    # DOC + "merchant"
    "Merchant": {
        "displayName": ("str", True, None), "merchantIdentifier": ("str", True, None),
        "url": ("url", True, None), "address": ("obj", False, "Address"),
        "businessChatURL": ("url", False, None), "contactURL": ("url", False, None),
        "emailAddress": ("str", False, None), "logo": ("file", False, None),
        "phoneNumber": ("str", False, None),
    },
    # DOC + "payment" (status is marked Required there; values as Apple lists them)
    "Payment": {
        "total": ("obj", True, "CurrencyAmount"),
        "status": ("enum", True, ["pending", "authorized", "paid", "refunded", "declined", "voided"]),
        "summaryItems": ("list", False, ("obj", "SummaryItem")),
        "transactions": ("list", False, ("obj", "PaymentTransaction")),
        "paymentMethods": ("list", False, ("str", None)),
        "applePayTransactionIdentifiers": ("list", False, ("str", None)),
    },
    # DOC + "currencyamount": amount is a JSON number, currency ISO 4217 (length 3)
    "CurrencyAmount": {"amount": ("num", True, None), "currency": ("str", True, {"len": 3})},
    # DOC + "payment/summaryitems-data.dictionary"
    "SummaryItem": {"label": ("str", True, None), "value": ("obj", True, "CurrencyAmount")},
    # DOC + "paymenttransaction" (refunds are transactions with transactionType "refund")
    "PaymentTransaction": {
        "amount": ("obj", True, "CurrencyAmount"), "createdAt": ("date", True, None),
        "paymentMethod": ("obj", True, "PaymentMethod"),
        "status": ("enum", True, ["pending", "approved", "completed", "cancelled", "failed"]),
        "transactionType": ("enum", True, ["purchase", "refund"]),
        "applePayTransactionIdentifier": ("str", False, None), "receipt": ("file", False, None),
    },
    # DOC + "paymentmethod"
    "PaymentMethod": {"displayName": ("str", True, None)},
    # DOC + "lineitem"
    "LineItem": {
        "title": ("str", True, None), "quantity": ("num", True, None),
        "image": ("file", False, None), "price": ("obj", False, "CurrencyAmount"),
        "subtitle": ("str", False, None), "gtin": ("str", False, None), "sku": ("str", False, None),
    },
    # DOC + "shippingfulfillment"
    "ShippingFulfillment": {
        "fulfillmentIdentifier": ("str", True, None), "fulfillmentType": ("enum", True, ["shipping"]),
        "status": ("enum", True, ["open", "processing", "onTheWay", "outForDelivery",
                                  "delivered", "shipped", "issue", "cancelled"]),
        "carrier": ("str", False, None), "deliveredAt": ("date", False, None),
        "estimatedDeliveryAt": ("date", False, None),
        "estimatedDeliveryWindowDuration": ("duration", False, None),
        "lineItems": ("list", False, ("obj", "LineItem")), "notes": ("str", False, None),
        "recipient": ("obj", False, "Recipient"), "shippedAt": ("date", False, None),
        "shippingType": ("enum", False, ["shipping", "delivery"]),
        "statusDescription": ("str", False, None), "trackingNumber": ("str", False, None),
        "trackingURL": ("url", False, None),
    },
    # DOC + "pickupfulfillment"
    "PickupFulfillment": {
        "displayName": ("str", True, None), "fulfillmentIdentifier": ("str", True, None),
        "fulfillmentType": ("enum", True, ["pickup"]),
        "status": ("enum", True, ["open", "processing", "readyForPickup", "pickedUp", "issue", "cancelled"]),
        "address": ("obj", False, "Address"), "barcode": ("anyobj", False, None),
        "lineItems": ("list", False, ("obj", "LineItem")), "location": ("anyobj", False, None),
        "notes": ("str", False, None), "pickedUpAt": ("date", False, None),
        "pickupAt": ("date", False, None), "pickupWindowDuration": ("duration", False, None),
        "statusDescription": ("str", False, None),
    },
    # DOC + "shippingfulfillment/recipient-data.dictionary"
    "Recipient": {"address": ("obj", False, "Address"), "familyName": ("str", False, None),
                  "givenName": ("str", False, None), "organizationName": ("str", False, None)},
    # DOC + "customer"
    "Customer": {"emailAddress": ("str", False, None), "familyName": ("str", False, None),
                 "givenName": ("str", False, None), "organizationName": ("str", False, None),
                 "phoneNumber": ("str", False, None)},
    # DOC + "address" (countryCode: ISO 3166 two-letter)
    "Address": {"addressLines": ("list", False, ("str", None)), "administrativeArea": ("str", False, None),
                "countryCode": ("str", False, {"len": 2}), "locality": ("str", False, None),
                "postalCode": ("str", False, None), "subAdministrativeArea": ("str", False, None),
                "subLocality": ("str", False, None)},
}
REQUIRED_ENTRIES = ["order.json", "manifest.json", "signature"]


class Checker:
    def __init__(self, files):
        self.files, self.problems = files, []

    def bad(self, where, msg):
        self.problems.append(f"{where}: {msg}")

    def value(self, path, v, kind, extra):
        show = json.dumps(v)[:60]
        if kind in ("str", "date", "url", "duration", "file") and not isinstance(v, str):
            return self.bad(path, f"{show} is not a string")
        if kind == "str" and isinstance(extra, dict):
            if "min" in extra and len(v) < extra["min"]:
                self.bad(path, f"is {len(v)} characters, Apple requires at least {extra['min']}")
            if "len" in extra and len(v) != extra["len"]:
                self.bad(path, f"{show} must be exactly {extra['len']} characters")
        elif kind == "date" and not DATE_RE.match(v):
            self.bad(path, f"{show} is not an RFC 3339 date-time (e.g. 2026-12-03T16:30:00Z)")
        elif kind == "duration" and not DURATION_RE.match(v):
            self.bad(path, f"{show} is not an ISO 8601 duration (e.g. PT4H)")
        elif kind == "url":
            scheme = "https://" if isinstance(extra, dict) and extra.get("https") else None
            if not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://\S+$", v):
                self.bad(path, f"{show} is not an absolute URL")
            elif scheme and not v.lower().startswith(scheme):
                self.bad(path, f"{show} must begin with https://")
        elif kind == "file" and v not in self.files and not any(f.endswith(".lproj/" + v) for f in self.files):
            self.bad(path, f"{show} names no file in the package")
        elif kind == "num" and (isinstance(v, bool) or not isinstance(v, (int, float))):
            self.bad(path, f"{show} is not a JSON number")
        elif kind == "enum" and (v not in extra or isinstance(v, bool)):
            self.bad(path, f"{show} is not one of " + ", ".join(json.dumps(e) for e in extra))
        elif kind == "anyobj" and not isinstance(v, dict):
            self.bad(path, f"{show} is not an object")
        elif kind == "obj":
            self.obj(path, v, extra)
        elif kind == "fulfillment":
            ftype = v.get("fulfillmentType") if isinstance(v, dict) else None
            table = {"shipping": "ShippingFulfillment", "pickup": "PickupFulfillment"}.get(ftype)
            if table:
                self.obj(path, v, table)
            else:
                self.bad(path + ".fulfillmentType", f"{json.dumps(ftype)} is not one of \"shipping\", \"pickup\"")
        elif kind == "list":
            if not isinstance(v, list):
                return self.bad(path, f"{show} is not an array")
            for i, item in enumerate(v):
                self.value(f"{path}[{i}]", item, *extra)

    def obj(self, path, v, table):
        if not isinstance(v, dict):
            return self.bad(path or "(top level)", f"is not an object ({table})")
        rules = TABLES[table]
        for key, (kind, required, extra) in rules.items():
            sub = f"{path}.{key}" if path else key
            if key in v:
                self.value(sub, v[key], kind, extra)
            elif required:
                self.bad(sub, f"is required in {table}")
        for key in v:
            if key not in rules:
                self.bad(f"{path}.{key}" if path else key, f"is not a documented {table} key")


def openssl(*args):
    r = subprocess.run(["openssl", *args], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def check_signature(tmp, ca, problems):
    sig, man = os.path.join(tmp, "signature"), os.path.join(tmp, "manifest.json")
    rc, out = openssl("cms", "-verify", "-binary", "-inform", "DER", "-in", sig, "-content", man,
                      "-CAfile", ca, "-purpose", "any", "-out", os.devnull)
    if rc != 0:
        last = [l for l in out.splitlines() if l.strip()][-3:]
        problems.append("signature: does not verify over manifest.json to --ca root: " + " | ".join(last))
    rc, dump = openssl("cms", "-cmsout", "-print", "-inform", "DER", "-in", sig)
    if rc != 0:
        problems.append("signature: not a DER CMS/PKCS #7 structure")
        return None
    if not re.search(r"eContent:\s*<ABSENT>", dump):
        problems.append("signature: is not detached (it embeds content)")
    m = re.search(r"signingTime.*?\n\s*set:\s*\n\s*(?:UTCTIME|GENERALIZEDTIME):(.+)", dump)
    if not m:
        problems.append("signature: has no signing-time attribute (S/MIME signingTime)")
    rc, certs = openssl("pkcs7", "-inform", "DER", "-in", sig, "-print_certs", "-noout")
    n = certs.count("subject=")
    if n < 2:
        problems.append(f"signature: carries {n} certificate(s); Apple wants the intermediate (WWDR) inside it too")
    uid = re.search(r"subject=.*?UID\s*=\s*([^,/\n]+)", certs)
    return (m.group(1).strip() if m else None), (uid.group(1).strip() if uid else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("package")
    ap.add_argument("--ca", required=True, help="root certificate (PEM) the signer must chain to")
    ap.add_argument("--expect-order-type", help="orderTypeIdentifier the package must carry")
    a = ap.parse_args()
    problems = []
    try:
        zf = zipfile.ZipFile(a.package)
    except (OSError, zipfile.BadZipFile) as e:
        print(f"{a.package}: not a zip archive ({e})")
        return 1
    names = [n for n in zf.namelist() if not n.endswith("/")]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"zip: entry {dup} appears more than once")
    for n in names:
        if n.startswith("/") or ".." in n.split("/") or "\\" in n:
            problems.append(f"zip: unsafe entry name {n!r}")
    missing = [r for r in REQUIRED_ENTRIES if r not in names]
    for r in missing:
        problems.append(f"zip: required entry {r} is missing (entries must be at the top level)")
    data = {n: zf.read(n) for n in set(names)}
    manifest = {}
    if "manifest.json" in data:
        try:
            manifest = json.loads(data["manifest.json"])
            if not isinstance(manifest, dict):
                raise ValueError("not an object")
        except ValueError as e:
            problems.append(f"manifest.json: not a JSON object ({e})")
            manifest = {}
        for path, digest in manifest.items():
            if path in ("manifest.json", "signature"):
                problems.append(f"manifest.json: {path}: must not be listed")
            elif path not in data:
                problems.append(f"manifest.json: {path}: listed but not in the package")
            elif not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
                problems.append(f"manifest.json: {path}: {json.dumps(digest)} is not a lowercase SHA-256 hex digest")
            elif hashlib.sha256(data[path]).hexdigest() != digest:
                problems.append(f"manifest.json: {path}: SHA-256 mismatch (file is {hashlib.sha256(data[path]).hexdigest()})")
        for n in sorted(data):
            if n not in ("manifest.json", "signature") and n not in manifest:
                problems.append(f"zip: {n} is not listed in manifest.json")
    signed = (None, None)
    if "signature" in data and "manifest.json" in data:
        with tempfile.TemporaryDirectory() as tmp:
            for n in ("signature", "manifest.json"):
                with open(os.path.join(tmp, n), "wb") as f:
                    f.write(data[n])
            signed = check_signature(tmp, a.ca, problems) or (None, None)
    order = None
    if "order.json" in data:
        try:
            order = json.loads(data["order.json"])
        except ValueError as e:
            problems.append(f"order.json: not valid JSON ({e})")
    if order is not None:
        c = Checker(set(data))
        c.obj("", order, "Order")
        if isinstance(order, dict):
            if ("webServiceURL" in order) != ("authenticationToken" in order):
                c.bad("authenticationToken", "and webServiceURL go together (the token is required with a web service)")
            if isinstance(order.get("createdAt"), str) and isinstance(order.get("updatedAt"), str) \
                    and DATE_RE.match(order["createdAt"]) and DATE_RE.match(order["updatedAt"]) \
                    and order["updatedAt"] < order["createdAt"] and order["updatedAt"][-1] == order["createdAt"][-1] == "Z":
                c.bad("updatedAt", "is earlier than createdAt")
            ot = order.get("orderTypeIdentifier")
            if a.expect_order_type and ot != a.expect_order_type:
                c.bad("orderTypeIdentifier", f"{json.dumps(ot)} is not the expected {a.expect_order_type!r}")
            if signed[1] and ot and signed[1] != ot:
                c.bad("orderTypeIdentifier", f"{json.dumps(ot)} differs from the signer certificate UID {signed[1]!r}")
        problems += ["order.json: " + p for p in c.problems]
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"OK {a.package}: {len(names)} entries, manifest covers {len(manifest)} file(s), signature verifies, "
          f"signed {signed[0]}, order {order.get('orderTypeIdentifier')}/{order.get('orderIdentifier')} "
          f"status {order.get('status')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
