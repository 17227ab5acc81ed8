#!/usr/bin/env python3
"""Writes Tests/EndToEndTests/Golden/stripe-events/requests.jsonl: processStripeEvent requests whose
Stripe-Signature headers are made here with Python's hmac (Stripe's scheme: the hex HMAC-SHA256 of
"t.payload" under the endpoint secret), independently of payservice's Swift signer.

    python3 scripts/stripe-webhook-golden.py            write the requests
    python3 scripts/stripe-webhook-golden.py --check    check every header with Stripe's official
                                                        library (pip package `stripe`): the ones
                                                        meant to verify do, the others are refused;
                                                        and every delivery of Golden/stripe-books

The golden transcript then shows what payservice answers to each.
"""
import hashlib
import hmac
import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "Tests", "EndToEndTests", "Golden", "stripe-events", "requests.jsonl")
NOW = 1795262400  # 2026-11-21T12:00:00Z, the golden clock
OLD, NEW = "whsec_golden_old", "whsec_golden_new"  # the env file's secrets, during a roll


def sign(payload, secret, t):
    return hmac.new(secret.encode(), ("%d.%s" % (t, payload)).encode(), hashlib.sha256).hexdigest()


def event(n, type_, obj):
    return json.dumps({
        "id": "evt_1Golden%08d" % n, "object": "event", "api_version": "2024-06-20", "created": NOW - 60 + n,
        "data": {"object": obj}, "livemode": False, "pending_webhooks": 1,
        "request": {"id": None, "idempotency_key": None}, "type": type_,
    }, separators=(",", ":"))


PI = {"id": "pi_1Golden", "object": "payment_intent", "amount": 6613, "currency": "usd", "status": "succeeded",
      "metadata": {"order_id": "ord_69fc6c2999db1d654bc6610dd04bb0db"}}
DISPUTE = {"id": "dp_1Golden", "object": "dispute", "amount": 6613, "currency": "usd", "charge": "ch_1Golden",
           "reason": "fraudulent", "status": "needs_response"}

# (payload, header, whether Stripe's library verifies it, what the case shows)
CASES = []
e1 = event(1, "payment_intent.succeeded", PI)
CASES.append((e1, "t=%d,v1=%s" % (NOW, sign(e1, NEW, NOW)), True, "a delivery signed with the new secret"))
CASES.append((e1, "t=%d,v1=%s" % (NOW, sign(e1, NEW, NOW)), True, "the same delivery again"))
e2 = event(2, "charge.dispute.created", DISPUTE)
CASES.append((e2, "t=%d,v1=%s" % (NOW, sign(e2, OLD, NOW)), True, "signed with the old secret while it is rolled"))
e3 = event(3, "charge.refunded", {"id": "ch_1Golden", "object": "charge", "amount_refunded": 1000})
CASES.append((e3, "t=%d,v1=%s,v1=%s,v0=%s" % (NOW, "0" * 64, sign(e3, NEW, NOW), "1" * 64), True,
              "two v1 signatures (one of them good) and a v0"))
e4 = event(4, "customer.created", {"id": "cus_1Golden", "object": "customer"})
CASES.append((e4, "t=%d,v1=%s" % (NOW - 300, sign(e4, NEW, NOW - 300)), True, "signed 300 s ago: within the tolerance"))
CASES.append((e4, "t=%d,v1=%s" % (NOW, sign(e4, "whsec_someone_else", NOW)), False, "another secret"))
CASES.append((e4.replace("customer.created", "customer.deleted"), "t=%d,v1=%s" % (NOW, sign(e4, NEW, NOW)), False,
              "the body changed after signing"))
e5 = event(5, "refund.failed", {"id": "re_1Golden", "object": "refund", "status": "failed"})
CASES.append((e5, "t=%d,v1=%s" % (NOW - 301, sign(e5, NEW, NOW - 301)), False, "signed 301 s ago"))
CASES.append((e5, "t=%d,v1=%s" % (NOW + 301, sign(e5, NEW, NOW + 301)), None, "signed 301 s ahead"))
CASES.append((e5, "", False, "no header"))
CASES.append((e5, "t=%d" % NOW, False, "no v1 signature"))
CASES.append((e5, "v1=%s" % sign(e5, NEW, NOW), False, "no timestamp"))
not_event = json.dumps(PI, separators=(",", ":"))
CASES.append((not_event, "t=%d,v1=%s" % (NOW, sign(not_event, NEW, NOW)), True, "signed, but a PaymentIntent, not an event"))
CASES.append(("hello", "t=%d,v1=%s" % (NOW, sign("hello", NEW, NOW)), True, "signed, but not JSON"))
e1_other = e1.replace("payment_intent.succeeded", "payment_intent.payment_failed")
CASES.append((e1_other, "t=%d,v1=%s" % (NOW, sign(e1_other, NEW, NOW)), True, "an event id seen before with another type"))


def main():
    if "--check" in sys.argv:
        import stripe  # the official library

        for payload, header, verifies, what in CASES:
            if verifies is None:
                continue  # Stripe's library refuses only past timestamps; payservice also future ones
            for secret in (NEW, OLD):
                try:
                    stripe.WebhookSignature.verify_header(payload, header, secret, tolerance=None)
                    ok = True
                except stripe.error.SignatureVerificationError:
                    ok = False
                if ok:
                    break
            if "301 s ago" in what:  # tolerance=None above skips the time: check it with Stripe's
                try:
                    stripe.WebhookSignature.verify_header(payload, header, NEW, tolerance=300)
                    ok = True
                except stripe.error.SignatureVerificationError:
                    ok = False
            if ok != verifies:
                sys.exit("stripe-webhook-golden: Stripe's library says %s for %r" % ("valid" if ok else "invalid", what))
        print("stripe-webhook-golden: %d headers agree with Stripe's library" % sum(c[2] is not None for c in CASES))
        # Golden/stripe-books: the events the Stripe test server signed (the fixture's secret), each
        # delivery verified with Stripe's library and parsed by it as an event.
        books = os.path.join(ROOT, "Tests", "EndToEndTests", "Golden", "stripe-books", "requests.jsonl")
        count = 0
        for line in open(books, encoding="utf-8"):
            request = json.loads(line)
            if request["method"] != "processStripeEvent":
                continue
            params = request["params"]
            event = stripe.Webhook.construct_event(params["payload"], params["signature"], "whsec_fixture", tolerance=None)
            assert event["object"] == "event" and event["id"].startswith("evt_"), event
            count += 1
        print("stripe-webhook-golden: Stripe's library verifies the %d deliveries of stripe-books" % count)
        return
    with open(OUT, "w") as f:
        for n, (payload, header, _, _) in enumerate(CASES, 1):
            f.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": "processStripeEvent",
                                "params": {"payload": payload, "signature": header}}, separators=(",", ":")) + "\n")
        f.write(json.dumps({"jsonrpc": "2.0", "id": len(CASES) + 1, "method": "processStripeEvent",
                            "params": {"signature": "t=1"}}, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
