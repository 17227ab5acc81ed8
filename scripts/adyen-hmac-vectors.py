#!/usr/bin/env python3
"""Writes Tests/PayServiceAdyenTests/Fixtures/adyen-hmac-vectors.json: notification items signed, and
verdicts given, by Adyen's own Python library (`pip install Adyen==16.0.0`, MIT licence, in
Fixtures/adyen-python-api-library.LICENSE.md), for the test that checks payservice's verdicts
against an implementation other than its own.

Each vector is one NotificationRequestItem as Adyen sends it (the signature in
additionalData.hmacSignature) and, per key, what `Adyen.util.is_valid_hmac_notification` says of it.
Items whose signature was made before a signed member changed are there to be refused; a change of
a member the signature does not cover (reason) to be accepted.

usage: scripts/adyen-hmac-vectors.py [--check]   (--check: exit 1 when the file differs)
"""
import copy
import json
import os
import sys

from Adyen.util import generate_notification_sig, is_valid_hmac_notification

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "Tests", "PayServiceAdyenTests", "Fixtures", "adyen-hmac-vectors.json")

KEY_A = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"
KEY_B = "74f490dd33f7327baecc88b2947c011fc02d014a473aaa33a8ec93e4dc069174"
KEYS = {"A": KEY_A, "B": KEY_B}


def item(**members):
    base = {
        "pspReference": "NC6HT9CRT65ZGN82",
        "merchantAccountCode": "PayserviceECOM",
        "merchantReference": "ord_6a1f3b20c0ffee00112233445566778899aabbcc",
        "amount": {"currency": "EUR", "value": 1130},
        "eventCode": "AUTHORISATION",
        "success": "true",
        "eventDate": "2026-12-03T10:40:54+01:00",
        "paymentMethod": "applepay",
        "reason": "039404:1111:03/2030",
    }
    base.update(members)
    return base


def signed(members, key):
    signature = generate_notification_sig(members, key).decode()
    out = copy.deepcopy(members)
    out["additionalData"] = {"hmacSignature": signature}
    return out


def changed(members, **changes):
    out = copy.deepcopy(members)
    for name, value in changes.items():
        if name == "value":
            out["amount"]["value"] = value
        elif name == "currency":
            out["amount"]["currency"] = value
        elif value is None:
            out.pop(name, None)
        else:
            out[name] = value
    return out


def vectors():
    cases = []

    def add(name, notification):
        verdicts = {label: bool(is_valid_hmac_notification(notification, key)) for label, key in KEYS.items()}
        cases.append({"name": name, "item": notification, "valid": verdicts})

    authorisation = item()
    add("authorisation under A", signed(authorisation, KEY_A))
    add("authorisation under B", signed(authorisation, KEY_B))
    refund = item(
        pspReference="QFQTPCQ8HXSKGK82", originalReference="NC6HT9CRT65ZGN82", eventCode="REFUND",
        merchantReference="re_6a1f3b20c0ffee00112233445566778899aabbcc", amount={"currency": "EUR", "value": 500})
    add("refund with its payment's reference", signed(refund, KEY_A))
    add("refund failed", signed(changed(refund, eventCode="REFUND_FAILED", success="false"), KEY_A))
    add("capture of nothing", signed(item(eventCode="CAPTURE", amount={"currency": "JPY", "value": 0},
                                          originalReference="NC6HT9CRT65ZGN82"), KEY_A))
    add("largest amount", signed(item(amount={"currency": "USD", "value": 999999999999999}), KEY_A))
    add("unicode reference", signed(item(merchantReference="Bestellung ä€ 😀 : \\ /"), KEY_A))
    add("chargeback", signed(item(eventCode="CHARGEBACK", originalReference="NC6HT9CRT65ZGN82",
                                  pspReference="ZF5MHK8HBXSKGK82", success="true",
                                  reason="Fraudulent Processing of Transactions"), KEY_B))
    add("refused", signed(item(success="false", reason="Not enough balance"), KEY_A))
    good = signed(authorisation, KEY_A)
    add("value changed after signing", changed(good, value=1131))
    add("currency changed after signing", changed(good, currency="USD"))
    add("event code changed after signing", changed(good, eventCode="CAPTURE"))
    add("success changed after signing", changed(good, success="false"))
    add("reference changed after signing", changed(good, merchantReference="ord_someone_else"))
    add("psp reference changed after signing", changed(good, pspReference="NC6HT9CRT65ZGN83"))
    add("merchant account changed after signing", changed(good, merchantAccountCode="OtherECOM"))
    add("original reference added after signing", changed(good, originalReference="NC6HT9CRT65ZGN82"))
    add("original reference removed after signing", changed(signed(refund, KEY_A), originalReference=None))
    add("reason changed after signing (not signed)", changed(good, reason="anything"))
    add("signature of another item", changed(signed(refund, KEY_A), pspReference="NC6HT9CRT65ZGN82",
                                             originalReference=None, eventCode="AUTHORISATION",
                                             merchantReference=authorisation["merchantReference"],
                                             amount={"currency": "EUR", "value": 1130}))
    return {"keys": KEYS, "library": "Adyen (Python) 16.0.0, Adyen.util", "vectors": cases}


def main():
    text = json.dumps(vectors(), indent=1, ensure_ascii=False) + "\n"
    if "--check" in sys.argv:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                sys.exit("adyen-hmac-vectors.json differs from what the library gives")
        return
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
