#!/usr/bin/env bash
# A real check against Stripe's test mode, outside CI: one order charged through Stripe, the same
# processOrder sent again (answered from the store, nothing charged twice), a partial refund and
# its replay. Needs a test key in STRIPE_SECRET_KEY (sk_test_… or rk_test_…) and network access to
# api.stripe.com; says it skipped (exit 0) otherwise, before building anything. The key is never
# printed.
#
# usage: STRIPE_SECRET_KEY=sk_test_… scripts/stripe-smoke.sh
#
# STRIPE_SMOKE_API_BASE and STRIPE_SMOKE_TRUST_ROOTS point it elsewhere (gateway.apiBase and
# gateway.trustRoots): at the Stripe test server (`swift run stripe-test-server`), to try the
# script itself without a Stripe account.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${STRIPE_SECRET_KEY:-}" in
  sk_test_* | rk_test_*) ;;
  *)
    echo "stripe-smoke: skipped (STRIPE_SECRET_KEY does not hold a Stripe test key)"
    exit 0
    ;;
esac

# Stripe (or STRIPE_SMOKE_API_BASE) must accept a TCP connection within 5 s (15 s with the name
# lookup): without a network there is nothing to check.
api_base=${STRIPE_SMOKE_API_BASE:-https://api.stripe.com}
if ! unreachable=$(timeout 15 python3 - "$api_base" <<'PY'
import socket, sys, urllib.parse
url = urllib.parse.urlsplit(sys.argv[1])
host, port = url.hostname, url.port or (80 if url.scheme == "http" else 443)
try:
    socket.create_connection((host, port), timeout=5).close()
except OSError as error:
    print("%s:%d is unreachable: %s" % (host, port, error.strerror or error))
    sys.exit(1)
PY
); then
  echo "stripe-smoke: skipped (${unreachable:-$api_base did not answer within 15 s})"
  exit 0
fi

# PAYSERVICE_BINARY names a payservice already built; otherwise the release build is made here.
binary=${PAYSERVICE_BINARY:-}
if [ -z "$binary" ]; then
  swift build -c release --product payservice >/dev/null
  binary=.build/release/payservice
fi
work=$(mktemp -d /tmp/payservice-stripe-smoke.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The repository's config with the sandbox replaced by Stripe in test mode.
python3 - "$work/config.yaml" <<'PY'
import os, sys
text = open("config.yaml").read()
sandbox = "gateway:\n  kind: sandbox\n"
assert sandbox in text, "config.yaml's gateway section changed"
stripe = "gateway:\n  kind: stripe\n  mode: test\n"
if os.environ.get("STRIPE_SMOKE_API_BASE"):
    stripe += "  apiBase: %s\n" % os.environ["STRIPE_SMOKE_API_BASE"]
if os.environ.get("STRIPE_SMOKE_TRUST_ROOTS"):
    stripe += "  trustRoots: %s\n" % os.environ["STRIPE_SMOKE_TRUST_ROOTS"]
open(sys.argv[1], "w").write(text.replace(sandbox, stripe))
PY
"$binary" check-config --config "$work/config.yaml" | grep -E "^(gateway|  stripe)"

serve() { "$binary" --config "$work/config.yaml" --database "$work/store.sqlite" --quiet --back-office; }
field() { python3 -c 'import json,sys; v=json.loads(sys.stdin.readline()); [v:=v[k] for k in sys.argv[1:]]; print(v)' "$@"; }

contact='{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}'
items='[{"sku":"mug","quantity":2}]'
# pm_card_visa: Stripe's test PaymentMethod, what Stripe's SDK hands a checkout for an Apple Pay payment.
authorized=$(echo '{"jsonrpc":"2.0","id":1,"method":"authorizePayment","params":{"items":'"$items"',"shippingMethod":"free","payment":{"token":{"paymentData":"pm_card_visa","paymentMethod":{"displayName":"Visa 4242","network":"visa","type":"credit"},"transactionIdentifier":"smoke"},"shippingContact":'"$contact"',"billingContact":'"$contact"'}}}' | serve)
token=$(echo "$authorized" | field result chargeToken)
amount=$(echo "$authorized" | field result amount)
order='{"jsonrpc":"2.0","id":2,"method":"processOrder","params":{"chargeToken":"'"$token"'","items":'"$items"',"shippingMethod":"free","shippingContact":'"$contact"',"amount":"'"$amount"'","currencyCode":"USD"}}'

first=$(echo "$order" | serve)
status=$(echo "$first" | field result status)
[ "$status" = succeeded ] || { echo "stripe-smoke: processOrder $status: $(echo "$first" | field result message)"; exit 1; }
orderId=$(echo "$first" | field result orderId)
paymentId=$(echo "$first" | field result order gatewayPaymentId)
echo "order     $orderId charged $amount USD: PaymentIntent $paymentId, charge $(echo "$first" | field result chargeId)"

replay=$(echo "$order" | serve)
[ "$replay" = "$first" ] || { echo "stripe-smoke: the replay answered differently"; exit 1; }
echo "replay    the same answer, byte for byte (from the store; nothing charged again)"

refund='{"jsonrpc":"2.0","id":3,"method":"refundOrder","params":{"orderId":"'"$orderId"'","refundId":"smoke-refund-1","amount":"1.00","reason":"smoke test"}}'
refunded=$(echo "$refund" | serve)
status=$(echo "$refunded" | field result status)
[ "$status" = succeeded ] || { echo "stripe-smoke: refundOrder $status: $(echo "$refunded" | field result message)"; exit 1; }
echo "refund    1.00 USD: $(echo "$refunded" | field result refund gatewayRefundId), order $(echo "$refunded" | field result orderStatus)"
again=$(echo "$refund" | serve)
[ "$again" = "$refunded" ] || { echo "stripe-smoke: the refund's replay answered differently"; exit 1; }
echo "replay    the same refund answer; Stripe refunded once"
echo "stripe-smoke: ok"
