#!/usr/bin/env python3
"""Writes Sources/PayServiceCore/Discovery/MethodExamples.swift: the example pairings rpc.discover
shows for each method, copied from the golden transcripts (Tests/EndToEndTests/Golden).

    python3 scripts/openrpc-examples.py     then review `git diff`

The test "every example is a golden request and its recorded response" fails when a golden
transcript and its copy here drift apart; run this again after re-recording the golden files.
"""
import json
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GOLDEN = os.path.join(ROOT, "Tests", "EndToEndTests", "Golden")
OUTPUT = os.path.join(ROOT, "Sources", "PayServiceCore", "Discovery", "MethodExamples.swift")

# (golden case, request id, example name, summary)
CHOICES = [
    ("payment-request", 1, "one-off-with-coupon", "A one-off cart with a coupon: shipping methods, line items and the total"),
    ("payment-request", 2, "subscription-with-trial", "A subscription with a trial: a recurring payment request"),
    ("payment-request", 4, "pre-order", "A pre-order with a one-off item: a deferred payment request"),
    ("payment-request", 7, "not-configured", "No merchant identity in the config: a failure to abort the sheet with"),
    ("pricing", 3, "clock-to-cupertino", "One clock to a redacted Cupertino address"),
    ("shipping-contact", 1, "redacted-california-address", "A valid redacted US address"),
    ("events", 4, "switch-to-express", "The buyer picks express shipping"),
    ("events", 10, "store-card-discount", "A store card gets its discount"),
    ("events", 15, "coupon-applied", "A valid coupon code"),
    ("authorize", 1, "authorized", "Everything checks out: a charge token"),
    ("orders", 22, "charged", "The authorized order is charged and recorded"),
    ("orders", 20, "amount-mismatch", "The amount sent is not the total: the token stays unused"),
    ("orders", 26, "card-declined", "The sandbox gateway declines the card: the token is used"),
    ("read-only", 1, "catalog", "The catalog with stock"),
    ("read-only", 3, "shipping-methods", "The configured shipping methods"),
    ("orders", 43, "recorded-order", "An order processOrder recorded"),
    ("back-office-manual", 10, "partial-capture", "Part of an authorized order is captured; the rest is released"),
    ("back-office-manual", 16, "canceled", "An authorized order is canceled and restocked"),
    ("back-office", 10, "one-unit-returned", "One unit refunded at its share of the coupon, surcharge and tax"),
    ("back-office", 18, "restocking-fee", "Units returned with a restocking fee withheld"),
    ("back-office", 13, "quantity-exceeds-remaining", "More units than remain: nothing is refunded"),
    ("back-office", 31, "first-page", "The newest orders, two per page"),
    ("stock", 2, "goods-received", "Goods received: units added to a sku's stock on hand"),
    ("stock", 12, "one-sku-with-history", "One sku's stock with its changes by hand"),
    ("erasure", 10, "buyer-erased", "A buyer's personal data erased from their orders and payments"),
    ("stock", 19, "healthy", "The process and its store answer; the config's digest"),
    ("stock", 20, "reloaded", "The config file read again and in effect"),
    ("stripe-events", 1, "recorded", "A Stripe webhook delivery verified, its event recorded once"),
    ("stripe-events", 6, "another-secret", "Signed with another secret: refused, nothing recorded"),
    ("adyen-notifications", 1, "recorded", "An Adyen notification's item verified and recorded once"),
    ("adyen-notifications", 3, "one-forged", "One item verified, one changed after Adyen signed it: refused"),
    ("stripe-books", 24, "dispute-lost", "Stripe's charge.dispute.closed: a dispute lost, its funds gone"),
    ("stripe-books", 48, "nothing-new", "Every object Stripe lists is known already: nothing changed"),
    ("back-office", 44, "nothing-pending", "No work waits at the gateway past the threshold: nothing to look up"),
    ("stripe-books", 49, "one-day", "One day's books: charged, refunded, disputed and net"),
    ("billing-year", 27, "two-months-caught-up", "A run a month late charges each period due, once each"),
    ("billing-year", 10, "renewal-declined", "A renewal declined: the agreement is past due, retried a day later"),
    ("billing-year", 11, "reloaded", "A balance below the threshold: the reload is charged, once per reloadId"),
    ("billing-year", 13, "not-needed", "A balance at or above the threshold: nothing charged"),
    ("billing-year", 33, "a-year-of-a-subscription", "A subscription's year: 12 payments, one declined and recovered"),
    ("billing-year", 39, "active", "The active agreements, soonest next payment first"),
    ("billing-year", 16, "at-period-end", "A subscription cancelled at its period's end: active until then"),
    ("billing-year", 21, "late-pre-order", "A pre-order past its free cancellation date: not cancelled"),
    ("appstore", 1, "coins-credited", "A consumable bought: its units credited once"),
    ("appstore", 3, "other-app", "Signed for another app: refused, nothing granted"),
    ("appstore", 16, "billing-recovered", "Apple's DID_RENEW after a billing retry: the subscription extended"),
    ("appstore", 17, "older-notification", "An older notification after a newer one: recorded, overwrites nothing"),
    ("appstore", 15, "grace-period", "A subscription in its billing grace period: still in force"),
    ("appstore", 4, "units-spent", "Units spent once by their consumptionId"),
    ("appstore", 6, "insufficient-units", "More units than the balance: nothing spent"),
    ("appstore-api", 1, "history-synced", "A customer's history fetched page by page and applied"),
    ("appstore-api", 3, "failures-recovered", "The notifications Apple could not deliver, recovered once"),
    ("appstore-api", 5, "receipt-looked-up", "An original StoreKit app receipt: its transaction looked up and recorded"),
    ("appstore-api", 11, "newest-first", "The notifications heard, newest first, two per page"),
    ("wallet-orders", "package-shipped", "package", "The order's package for Wallet, changed since the time given"),
    ("wallet-orders", "package-not-modified", "not-modified", "Not changed since the time given: 304"),
    ("wallet-orders", "register-phone", "created", "A device registered for the order's updates"),
    ("wallet-orders", "register-wrong-token", "unauthorized", "Another token: unauthorized, as for an unknown order"),
    ("wallet-orders", "unregister-phone", "unregistered", "A device no longer follows the order"),
    ("wallet-orders", "changed-for-phone", "changed", "The orders a device follows that changed"),
    ("wallet-orders", "changed-for-watch", "none", "None changed (the device was unregistered when APNs said it was gone)"),
    ("wallet-orders", "device-log", "logged", "Messages a device reports, logged without what may be personal"),
    ("wallet-orders", "ship-grinder", "shipped", "A shipment recorded with its carrier and tracking"),
    ("wallet-orders", "grinder-back-on-the-way", "status-backwards", "A delivered shipment cannot go back on its way"),
    ("merchant-tokens", "unlink-a-again", "unlinked", "Apple's unlink of a token, read from Apple and applied once: its agreement canceled"),
    ("merchant-tokens", "forged", "unknown-event", "An event id Apple does not know: nothing changed, nothing kept"),
    ("merchant-tokens", "update-c-apple-down", "apple-unavailable", "Apple's API answered 500: not acknowledged, so that Apple sends it again"),
]


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def lines(path):
    with open(path, "rb") as handle:
        for raw in handle.read().split(b"\n"):
            try:
                yield json.loads(raw)
            except ValueError:
                continue


def requests(folder):
    """A case's requests: requests.jsonl, or a case run as several processes, its numbered files in order."""
    numbered = sorted(name for name in os.listdir(folder) if name[0].isdigit() and name.endswith(".jsonl"))
    for name in numbered or ["requests.jsonl"]:
        yield from lines(os.path.join(folder, name))


def pair(case, request_id):
    folder = os.path.join(GOLDEN, case)
    request = next(r for r in requests(folder) if isinstance(r, dict) and r.get("id") == request_id)
    response = next(r for r in lines(os.path.join(folder, "responses.jsonl"))
                    if isinstance(r, dict) and r.get("id") == request_id)
    return request["method"], request.get("params", {}), response["result"]


def swift_string(text):
    assert '"#' not in text
    return '#"' + text + '"#'


def main():
    entries = []
    for case, request_id, name, summary in CHOICES:
        method, params, result = pair(case, request_id)
        entries.append(
            "    MethodExample(\n"
            f"      method: \"{method}\", name: \"{name}\", summary: \"{summary}\",\n"
            f"      golden: \"{case}\", requestId: {swift_string(compact(request_id))},\n"
            f"      params: {swift_string(compact(params))},\n"
            f"      result: {swift_string(compact(result))}),\n")
    with open(OUTPUT, "w", encoding="utf-8") as out:
        out.write(
            "// Generated by scripts/openrpc-examples.py from the golden transcripts; do not edit.\n\n"
            "/// The example pairings `rpc.discover` shows: requests and the responses recorded for them in\n"
            "/// Tests/EndToEndTests/Golden (with that case's config and clock).\n"
            "public struct MethodExample: Sendable {\n"
            "  public let method: String\n"
            "  public let name: String\n"
            "  public let summary: String\n"
            "  /// The golden case and the request's id there, as JSON text (a number, or a quoted string).\n"
            "  public let golden: String\n"
            "  public let requestId: String\n"
            "  /// The params and the result as JSON text.\n"
            "  public let params: String\n"
            "  public let result: String\n\n"
            "  public static let all: [MethodExample] = [\n" + "".join(entries) + "  ]\n}\n")


if __name__ == "__main__":
    main()
