#!/usr/bin/env python3
"""Writes the requests of the back-office golden cases (Tests/EndToEndTests/Golden/back-office*) and
examples/back-office.jsonl (the README's "After the sale", against config.yaml).

    swift build && python3 scripts/back-office-golden.py
    PAYSERVICE_RECORD_GOLDEN=1 swift test --filter GoldenTranscriptTests    then review `git diff`

Orders need charge tokens and order ids, which the service derives from the store state and the
clock: this script runs the built binary on the requests written so far (a fresh store, the golden
clock) to learn them, exactly as the golden test will replay them.
"""
import json
import os
import subprocess
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GOLDEN = os.path.join(ROOT, "Tests", "EndToEndTests", "Golden")
BINARY = os.path.join(ROOT, ".build", "debug", "payservice")
NOW = "2026-11-21T12:00:00Z"

ALBANY = {"givenName": "Ada", "familyName": "Lovelace", "emailAddress": "ada@example.com",
          "addressLines": ["1 State St"], "locality": "Albany", "administrativeArea": "NY",
          "postalCode": "12207", "countryCode": "US"}
VISA = {"displayName": "Visa 0492", "network": "visa", "type": "credit"}
STORE_CARD = {"displayName": "Acme Card 0042", "network": "privateLabel", "type": "store"}


class Transcript:
    def __init__(self, case, args, config=None, output=None):
        self.case = case
        self.args = args
        self.config = config or os.path.join(GOLDEN, case, "config.yaml")
        self.output = output
        self.requests = []
        self.next_id = 1

    def add(self, method, params=None, id=True):
        request = {"jsonrpc": "2.0"}
        if id:
            request["id"] = self.next_id
            self.next_id += 1
        request["method"] = method
        if params is not None:
            request["params"] = params
        self.requests.append(request)
        return request.get("id")

    def text(self):
        return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in self.requests)

    def run(self):
        """The responses by id to the requests so far."""
        config = self.config
        with tempfile.TemporaryDirectory() as scratch:
            result = subprocess.run(
                [BINARY, "--config", config, "--database", os.path.join(scratch, "store.sqlite"), "--now", NOW,
                 "--quiet"] + self.args,
                input=self.text().encode(), capture_output=True, check=True)
        responses = {}
        for line in result.stdout.decode().splitlines():
            response = json.loads(line)
            responses[response.get("id")] = response
        return responses

    def order(self, items, shipping_method, card, payment_data="tok_visa", coupon=None, contact=ALBANY,
              billing=None, status="succeeded"):
        """Authorizes and processes an order; returns its orderId (None when it failed as `status` says).
        The processOrder params are kept in `last_process`, to send again."""
        authorize = {"items": items, "shippingMethod": shipping_method}
        if coupon:
            authorize["couponCode"] = coupon
        authorize["payment"] = {
            "token": {"paymentData": payment_data, "paymentMethod": card, "transactionIdentifier": "5394A8A3B4C9"},
            "shippingContact": contact, "billingContact": billing or contact}
        authorization_id = self.add("authorizePayment", authorize)
        result = self.run()[authorization_id]["result"]
        assert result["status"] == "success", result
        process = {"chargeToken": result["chargeToken"], "items": items, "shippingMethod": shipping_method,
                   "shippingContact": contact}
        if coupon:
            process["couponCode"] = coupon
        process["amount"] = result["amount"]
        process["currencyCode"] = result["currencyCode"]
        process_id = self.add("processOrder", process)
        self.last_process = process
        result = self.run()[process_id]["result"]
        assert result["status"] == status, result
        return result.get("orderId")

    def write(self):
        if self.output:
            with open(self.output, "w", encoding="utf-8") as out:
                out.write(self.text())
            return
        with open(os.path.join(GOLDEN, self.case, "requests.jsonl"), "w", encoding="utf-8") as out:
            out.write(self.text())
        with open(os.path.join(GOLDEN, self.case, "args"), "w", encoding="utf-8") as out:
            out.write("".join(arg + "\n" for arg in self.args))


def automatic():
    t = Transcript("back-office", ["--back-office"])
    a = t.order([{"sku": "clock", "quantity": 2}, {"sku": "notebook"}], "standard", VISA, coupon="SAVE10")
    b = t.order([{"sku": "mug", "quantity": 3}], "express", STORE_CARD, payment_data="tok_privateLabel")
    c = t.order([{"sku": "lamp"}], "standard", VISA, payment_data="tok_refundFail")
    d = t.order([{"sku": "pen", "quantity": 7}], "standard", VISA)
    t.add("getOrder", {"orderId": a})
    # A: one clock back, then the same call again (replayed), then the key with other params.
    first = {"orderId": a, "refundId": "rf-a-1", "lines": [{"sku": "clock", "quantity": 1, "restock": "return"}],
             "reason": "Arrived broken"}
    t.add("refundOrder", first)
    t.add("refundOrder", first)
    t.add("refundOrder", dict(first, lines=[{"sku": "clock", "quantity": 2, "restock": "return"}]))
    t.add("refundOrder", {"orderId": a, "refundId": "rf-a-2", "lines": [{"sku": "clock", "quantity": 2, "restock": "return"}]})
    t.add("refundOrder", {"orderId": a, "refundId": "rf-a-2", "lines": [{"sku": "lamp", "quantity": 1, "restock": "none"}]})
    # The rest of A, with shipping: every unit and the shipping sum to the order's amount.
    t.add("refundOrder", {"orderId": a, "refundId": "rf-a-3", "lines": [{"sku": "notebook", "quantity": 1, "restock": "cancel"}],
                          "shipping": True})
    t.add("refundOrder", {"orderId": a, "refundId": "rf-a-4", "lines": [{"sku": "clock", "quantity": 1, "restock": "none"}]})
    t.add("refundOrder", {"orderId": a, "refundId": "rf-a-5", "amount": "1.00"})
    # B: a restocking fee kept, shipping once, then what cannot be.
    t.add("refundOrder", {"orderId": b, "refundId": "rf-b-1", "lines": [{"sku": "mug", "quantity": 2, "restock": "return"}],
                          "amount": "15.00", "reason": "Returned; restocking fee kept"})
    t.add("refundOrder", {"orderId": b, "refundId": "rf-b-2", "shipping": True})
    t.add("refundOrder", {"orderId": b, "refundId": "rf-b-3", "shipping": True})
    t.add("refundOrder", {"orderId": b, "refundId": "rf-b-3", "amount": "500.00"})
    t.add("refundOrder", {"orderId": b, "refundId": "rf-b-3", "lines": [{"sku": "mug", "quantity": 1, "restock": "none"}],
                          "amount": "9.00"})
    # C: the sandbox gateway declines every refund of a tok_refundFail payment; the answer is kept.
    t.add("refundOrder", {"orderId": c, "refundId": "rf-c-1", "lines": [{"sku": "lamp", "quantity": 1, "restock": "return"}]})
    t.add("refundOrder", {"orderId": c, "refundId": "rf-c-1", "lines": [{"sku": "lamp", "quantity": 1, "restock": "return"}]})
    # D: goodwill, and what a paid order is not.
    t.add("refundOrder", {"orderId": d, "refundId": "rf-d-1", "amount": "1.00", "reason": "Late delivery"})
    t.add("captureOrder", {"orderId": d, "captureId": "cap-d-1"})
    t.add("cancelOrder", {"orderId": d, "cancelId": "cancel-d-1"})
    t.add("getOrder", {"orderId": a})
    t.add("getOrder", {"orderId": b})
    t.add("listProducts", {})
    page = t.add("listOrders", {"limit": 2})
    cursor = t.run()[page]["result"]["nextCursor"]
    t.add("listOrders", {"limit": 2, "cursor": cursor})
    t.add("listOrders", {"status": "refunded"})
    t.add("listOrders", {"status": "partially_refunded", "createdFrom": "2026-11-21T11:59:59.5Z", "createdTo": "2026-11-21T12:00:01Z"})
    t.add("listOrders", {"createdFrom": "2026-11-22T00:00:00Z"})
    # Params that are not valid, and an unknown order.
    t.add("refundOrder", {"orderId": b, "refundId": "rf-b-9"})
    t.add("refundOrder", {"orderId": b, "refundId": "réf", "lines": []})
    t.add("refundOrder", {"orderId": b, "refundId": "", "amount": "0.00"})
    t.add("refundOrder", {"orderId": b, "refundId": "rf-b-9", "lines": [{"sku": "mug", "quantity": 1, "restock": "return"}, {"sku": "mug", "quantity": 1, "restock": "none"}]})
    t.add("captureOrder", {"orderId": b, "captureId": "cap-b-1", "amount": "-1.00"})
    t.add("refundOrder", {"orderId": "ord_unknown", "refundId": "rf-x-1", "amount": "1.00"})
    t.add("listOrders", {"limit": 101, "cursor": "oc1_zz", "status": "shipped"})
    t.add("listOrders", {"createdFrom": "2026-11-22T00:00:00Z", "createdTo": "2026-11-21T00:00:00Z"})
    t.write()


def manual():
    t = Transcript("back-office-manual", ["--back-office"])
    e = t.order([{"sku": "clock"}, {"sku": "lamp"}], "express", VISA)
    f = t.order([{"sku": "mug", "quantity": 2}], "standard", VISA)
    g = t.order([{"sku": "notebook", "quantity": 2}], "standard", VISA)
    t.add("getOrder", {"orderId": e})
    t.add("refundOrder", {"orderId": e, "refundId": "rf-e-1", "amount": "5.00"})
    t.add("captureOrder", {"orderId": e, "captureId": "cap-e-1", "amount": "500.00"})
    t.add("captureOrder", {"orderId": e, "captureId": "cap-e-1", "amount": "50.00"})
    t.add("captureOrder", {"orderId": e, "captureId": "cap-e-1", "amount": "50.00"})
    t.add("captureOrder", {"orderId": e, "captureId": "cap-e-1", "amount": "60.00"})
    t.add("captureOrder", {"orderId": e, "captureId": "cap-e-2"})
    t.add("refundOrder", {"orderId": e, "refundId": "rf-e-2", "lines": [{"sku": "clock", "quantity": 1, "restock": "return"}]})
    t.add("refundOrder", {"orderId": e, "refundId": "rf-e-2", "lines": [{"sku": "clock", "quantity": 1, "restock": "return"}],
                          "amount": "50.00"})
    t.add("cancelOrder", {"orderId": f, "cancelId": "cancel-f-1", "reason": "Out of stock at the warehouse"})
    t.add("cancelOrder", {"orderId": f, "cancelId": "cancel-f-1", "reason": "Out of stock at the warehouse"})
    t.add("captureOrder", {"orderId": f, "captureId": "cap-f-1"})
    t.add("cancelOrder", {"orderId": e, "cancelId": "cancel-e-1"})
    t.add("captureOrder", {"orderId": g, "captureId": "cap-g-1"})
    t.add("getOrder", {"orderId": e})
    t.add("getOrder", {"orderId": f})
    t.add("listOrders", {})
    t.add("listOrders", {"status": "authorized"})
    t.add("listProducts", {})
    t.write()


def gate():
    t = Transcript("back-office-gate", [])
    t.add("refundOrder", {"orderId": "ord_1", "refundId": "rf-1", "amount": "1.00"})
    t.add("captureOrder", {"orderId": "ord_1", "captureId": "cap-1"})
    t.add("cancelOrder", {"orderId": "ord_1", "cancelId": "cancel-1"})
    t.add("listOrders", {})
    t.add("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "golden", "version": "1.0"}})
    t.add("notifications/initialized", id=False)
    t.add("tools/call", {"name": "refundOrder", "arguments": {"orderId": "ord_1", "refundId": "rf-1", "amount": "1.00"}})
    t.write()


def discovery():
    t = Transcript("back-office-discovery", ["--back-office"])
    t.add("rpc.discover")
    t.add("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "golden", "version": "1.0"}})
    t.add("notifications/initialized", id=False)
    t.add("tools/list")
    t.write()


def example():
    """The README's session: an order, a partial refund with restock, the list and the order."""
    t = Transcript("example", ["--back-office"], config=os.path.join(ROOT, "config.yaml"),
                   output=os.path.join(ROOT, "examples", "back-office.jsonl"))
    order = t.order([{"sku": "mug", "quantity": 2}, {"sku": "clock"}], "express", VISA, coupon="SAVE10")
    t.add("refundOrder", {"orderId": order, "refundId": "return-0001",
                          "lines": [{"sku": "mug", "quantity": 1, "restock": "return"}], "reason": "Chipped"})
    t.add("listProducts", {})
    t.add("listOrders", {"limit": 10})
    t.add("getOrder", {"orderId": order})
    t.write()


GRACE = {"givenName": "Grace", "familyName": "Hopper", "emailAddress": "grace@example.com",
         "phoneNumber": "+1 212 555 0100", "addressLines": ["350 Fifth Avenue", "Floor 34"], "locality": "New York",
         "administrativeArea": "NY", "postalCode": "10118", "countryCode": "US"}
ADA_BILLING = {"givenName": "Ada", "familyName": "King", "emailAddress": "Ada@Example.com", "phoneNumber": "+44 20 7946 0000",
               "addressLines": ["12 St James's Square"], "locality": "London", "postalCode": "SW1Y 4JH", "countryCode": "GB"}


def stock():
    """Stock by hand: goods received, a count, what cannot be, and an order's sale beside them."""
    t = Transcript("stock", ["--back-office"], config=os.path.join(GOLDEN, "config.yaml"))
    t.add("listStock", {})
    received = {"adjustmentId": "po-1042", "sku": "notebook", "delta": 24, "reason": "Received PO-1042"}
    t.add("adjustStock", received)
    t.add("adjustStock", received)
    t.add("adjustStock", dict(received, delta=25))
    t.add("adjustStock", {"adjustmentId": "damaged-1", "sku": "notebook", "delta": -30, "reason": "Water damage"})
    t.add("adjustStock", {"adjustmentId": "damaged-1", "sku": "notebook", "delta": -2, "reason": "Water damage"})
    t.add("adjustStock", {"adjustmentId": "count-2026-11", "sku": "mug", "set": 97, "reason": "Stocktake"})
    t.add("adjustStock", {"adjustmentId": "count-2026-11-b", "sku": "mug", "set": 97, "reason": "Stocktake, second count"})
    t.add("adjustStock", {"adjustmentId": "po-1043", "sku": "teapot", "delta": 5, "reason": "Received PO-1043"})
    t.order([{"sku": "notebook", "quantity": 2}], "free", VISA)
    t.add("listStock", {"sku": "notebook"})
    t.add("listStock", {"sku": "teapot"})
    t.add("listProducts", {})
    # Params that are not valid.
    t.add("adjustStock", {"adjustmentId": "bad-1", "sku": "mug", "delta": 1, "set": 2, "reason": "Both"})
    t.add("adjustStock", {"adjustmentId": "bad-2", "sku": "mug", "delta": 0, "reason": "Nothing"})
    t.add("adjustStock", {"adjustmentId": "bad-3", "sku": "mug", "set": -1})
    t.add("adjustStock", {"adjustmentId": "bad-4", "sku": "mug", "delta": 1.5, "reason": ""})
    # The health check, and a reload of the unchanged file (Golden/reload changes it between requests).
    t.add("health")
    t.add("reloadConfig")
    t.write()


def erasure():
    """A buyer's personal data erased on request, then the back office on the erased order."""
    t = Transcript("erasure", ["--back-office"], config=os.path.join(GOLDEN, "config.yaml"))
    a = t.order([{"sku": "clock"}, {"sku": "notebook"}], "free", VISA, billing=ADA_BILLING)
    replay_a = t.last_process
    b = t.order([{"sku": "mug", "quantity": 2}], "free", VISA, contact=GRACE)
    c = t.order([{"sku": "lamp"}], "express", VISA)
    t.order([{"sku": "mug"}], "free", VISA, payment_data="tok_visa_chargeDeclined", status="failed")
    t.add("getOrder", {"orderId": a})
    request = {"erasureId": "gdpr-2026-0001", "emailAddress": "ADA@example.com"}
    t.add("erasePersonalData", request)
    t.add("erasePersonalData", request)
    t.add("erasePersonalData", dict(request, emailAddress="grace@example.com"))
    t.add("getOrder", {"orderId": a})
    t.add("refundOrder", {"orderId": a, "refundId": "rf-a-1", "lines": [{"sku": "clock", "quantity": 1, "restock": "return"}],
                          "reason": "Returned"})
    t.add("getOrder", {"orderId": a})
    t.add("processOrder", replay_a)
    t.add("getOrder", {"orderId": c})
    t.add("getOrder", {"orderId": b})
    t.add("erasePersonalData", {"erasureId": "gdpr-2026-0002", "orderId": a})
    t.add("erasePersonalData", {"erasureId": "gdpr-2026-0003", "orderId": "ord_unknown"})
    t.add("erasePersonalData", {"erasureId": "gdpr-2026-0004", "emailAddress": "ada@example.com", "orderId": a})
    t.add("erasePersonalData", {"erasureId": "gdpr-2026-0005"})
    t.add("erasePersonalData", {"erasureId": "retention-2026-11-22-1", "before": "2026-11-22T00:00:00Z", "limit": 1})
    t.add("erasePersonalData", {"erasureId": "retention-2026-11-22-2", "before": "2026-11-22T00:00:00Z"})
    t.add("getOrder", {"orderId": b})
    t.add("listOrders", {})
    t.write()


if __name__ == "__main__":
    stock()
    erasure()
    example()
    automatic()
    manual()
    gate()
    discovery()
