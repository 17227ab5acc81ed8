#!/usr/bin/env bash
# Runs the commands of the README's "Running it" section against a payservice build, and checks
# what the section says they answer:
#   PAYSERVICE_BINARY=.build/release/payservice scripts/running-it.sh
# Everything happens in a temporary directory: the paths under / (/usr/local/bin, /etc/payservice,
# /var/lib/payservice, /var/backups/payservice) are made under a temporary root, owned by the user
# running this. What needs systemd running, root or Apple is replaced by a stand-in and reported
# ("running-it: stand-in …"): useradd, systemctl and journalctl (the units are checked by
# scripts/check-units.py instead, and socket activation is run by systemd-socket-activate),
# runuser -u payservice (commands run as this user), and Apple's certificate downloads (a test CA
# signs the CSRs). The PostgreSQL commands run when PAYSERVICE_TEST_POSTGRES_URL names a server
# (scripts/postgres-cluster.sh), on databases of their own that are dropped at the end.
# Prints "running-it: ok" when everything held.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
bin=$(realpath "${PAYSERVICE_BINARY:-.build/release/payservice}")
[ -x "$bin" ] || { echo "running-it: no payservice binary at $bin (build it, or set PAYSERVICE_BINARY)" >&2; exit 1; }
# Stores this script creates get their own random identifier key, or with --now the transcript's.
unset PAYSERVICE_ID_KEY
work=$(mktemp -d)
root=$work/root
owner=$(id -un)
group=$(id -gn)
now=2026-11-21T12:00:00Z
background=()
pg_databases=()
pg_base=

cleanup() {
  for pid in "${background[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ -n "$pg_base" ]; then
    for database in "${pg_databases[@]}"; do
      psql "$pg_base/postgres" -Xq -c "DROP DATABASE IF EXISTS $database" >/dev/null 2>&1 || true
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "running-it: FAILED: $*" >&2; exit 1; }
standin() { echo "running-it: stand-in $*"; }
# The README's `payservice`.
payservice() { "$bin" "$@"; }
# `runuser -u payservice -- payservice …`: here, this user.
as_payservice() { "$bin" "$@"; }
# expect DESCRIPTION ACTUAL WANTED: exact equality.
expect() { [ "$2" == "$3" ] || fail "$1:
  got:  $2
  want: $3"; }
# expect_match DESCRIPTION ACTUAL REGEX
expect_match() { [[ $2 =~ $3 ]] || fail "$1:
  got:  $2
  want: /$3/"; }
# The README's socket client: writes stdin to the socket, then prints everything answered.
socket_call() {
  python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.stdin.buffer.read()); s.shutdown(socket.SHUT_WR); sys.stdout.buffer.write(s.makefile("rb").read())' "$1"
}
wait_for_socket() {
  for _ in $(seq 200); do [ -S "$1" ] && return 0; sleep 0.05; done
  fail "no socket at $1"
}
# Waits until FILE holds a line matching REGEX (log lines are written just after their answers).
wait_for_line() {
  for _ in $(seq 100); do grep -qE "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "no line /$2/ in $1: $(cat "$1")"
}

etc=$root/etc/payservice
store=$root/var/lib/payservice/store.sqlite
config=$etc/config.yaml

# --- Processes and supervision: installing ------------------------------------------------------
standin "useradd --system … payservice: files are installed under $root, owned by $owner"
mkdir -p "$root/usr/local/bin" "$root/etc/systemd/system"
install -m 0755 "$bin" "$root/usr/local/bin/payservice"
install -d -m 0755 "$etc"
install -m 0644 config.yaml "$etc/config.yaml"
install -m 0600 /dev/null "$etc/env"
install -d -o "$owner" -g "$group" -m 0700 "$root/var/backups/payservice"
install -m 0644 deploy/*.socket deploy/*.service deploy/*.timer "$root/etc/systemd/system/"
expect "the env file's mode" "$(stat -c %a "$etc/env")" 600
python3 scripts/check-units.py --binary "$bin" --units "$root/etc/systemd/system"
standin "systemctl daemon-reload and enable --now: the units above were checked by scripts/check-units.py"
# What StateDirectory=payservice makes when a unit first starts.
install -d -m 0700 "$root/var/lib/payservice"

# --- Processes and supervision: one process per connection, with systemd-socket-activate ----------
golden=Tests/EndToEndTests/Golden/example-session.responses.jsonl
if command -v systemd-socket-activate >/dev/null; then
  try=$(mktemp -d -p "$work")
  systemd-socket-activate --listen="$try/checkout.sock" --accept --inetd \
    "$bin" serve --config config.yaml --database "$try/store.sqlite" --now 2026-11-21T12:00:00Z 2>"$work/activate.log" &
  background+=($!)
  wait_for_socket "$try/checkout.sock"
  python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.stdin.buffer.read()); s.shutdown(socket.SHUT_WR); sys.stdout.buffer.write(s.makefile("rb").read())' \
    "$try/checkout.sock" < examples/checkout.jsonl > "$work/socket.out"
  cmp "$work/socket.out" "$golden" || fail "the checkout session through the socket differs from $golden"
  expect "the store made through the socket" "$(stat -c %a "$try/store.sqlite")" 600
  answer=$(echo '{"jsonrpc":"2.0","id":1,"method":"health"}' | socket_call "$try/checkout.sock")
  expect "health through the socket" "$answer" \
    '{"jsonrpc":"2.0","id":1,"result":{"status":"ok","config":"sha256:'"$(sha256sum config.yaml | cut -c1-64)"'"}}'
else
  standin "systemd-socket-activate is not installed: the socket session was not run"
fi

# A store with the README's back-office session in it, for what follows.
payservice --config "$config" --database "$store" --now "$now" --back-office --quiet < examples/back-office.jsonl > /dev/null
expect "the store's mode" "$(stat -c %a "$store")" 600

# --- Reloading the config ------------------------------------------------------------------------
# A running process (as systemd keeps one per connection), its config changed, then SIGHUP
# (ExecReload=/bin/kill -HUP $MAINPID): the log says which config took effect; then a config with an
# error, refused with its place, and the old one stays.
reload_config=$(mktemp -d -p "$work")/config.yaml
cp config.yaml "$reload_config"
coproc RELOAD { exec "$bin" serve --config "$reload_config" --database "$store" --quiet 2>>"$work/reload.log"; }
reload_pid=$RELOAD_PID
background+=("$reload_pid")
echo '{"jsonrpc":"2.0","id":0,"method":"health"}' >&"${RELOAD[1]}"
read -r -t 10 _ <&"${RELOAD[0]}" || fail "no answer before the reload"
sed -i 's/price: "8.49"/price: "8.99"/' "$reload_config"
kill -HUP "$reload_pid"
wait_for_line "$work/reload.log" 'took effect'
expect "the reload's log line" "$(cat "$work/reload.log")" \
  "payservice: config $reload_config (sha256:$(sha256sum "$reload_config" | cut -c1-64)) took effect"
echo '{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{"items":[{"sku":"mug"}]}}' >&"${RELOAD[1]}"
read -r -t 10 answer <&"${RELOAD[0]}" || fail "no answer after SIGHUP"
expect_match "the mug's price after the reload" "$answer" '"label":"Mug","amount":"8.99"'
good=$(sha256sum "$reload_config" | cut -c1-64)
sed -i 's/price: "8.99"/price: "8,99"/' "$reload_config"
kill -HUP "$reload_pid"
wait_for_line "$work/reload.log" 'not reloaded'
wait_for_line "$work/reload.log" 'catalog\[2\]\.price'
expect "the refused reload's log lines" "$(tail -2 "$work/reload.log")" \
  "payservice: warning: config $reload_config not reloaded (1 problem); sha256:$good stays in effect
payservice: warning: $reload_config:$(grep -n '8,99' "$reload_config" | cut -d: -f1):12: catalog[2].price: must be a decimal amount like \"50.00\", got \"8,99\""
echo '{"jsonrpc":"2.0","id":2,"method":"computeSummaryItems","params":{"items":[{"sku":"mug"}]}}' >&"${RELOAD[1]}"
read -r -t 10 answer <&"${RELOAD[0]}" || fail "no answer after the refused reload"
expect_match "the mug's price after the refused reload" "$answer" '"label":"Mug","amount":"8.99"'
exec {RELOAD[1]}>&-
wait "$reload_pid" || fail "the process reloaded by SIGHUP did not exit 0"
# check-config says the same of a config before it is installed.
set +e
check=$("$bin" check-config --config "$reload_config" 2>&1 >/dev/null)
status=$?
set -e
expect "check-config of the config with an error: exit" "$status" 2
expect_match "check-config of the config with an error" "$check" 'catalog\[2\]\.price: must be a decimal amount'

# --- Health check --------------------------------------------------------------------------------
standin "runuser -u payservice --: the commands below run as $owner"
answer=$(as_payservice call health --config "$config" --database "$store")
expect "payservice call health" "$answer" '{"status":"ok","config":"sha256:'"$(sha256sum "$config" | cut -c1-64)"'"}'
set +e
"$bin" call health --config "$work/missing.yaml" --database "$store" >/dev/null 2>&1
status=$?
set -e
expect "health with a config that cannot be read: exit" "$status" 2

# --- Logs ----------------------------------------------------------------------------------------
logs=$(mktemp -d -p "$work")
cp config.yaml "$logs/config.yaml"
(cd "$logs" && "$bin" < "$repo/examples/checkout.jsonl" > /dev/null 2> stderr)
expect "log lines" "$(grep -c . "$logs/stderr")" 10
expect "the log's first line" "$(head -1 "$logs/stderr")" "payservice: config config.yaml (sha256:$(sha256sum config.yaml | cut -c1-64)) took effect"
expect_match "the log line of authorizePayment" "$(grep '"pay"' "$logs/stderr")" '^payservice: id="pay" method="authorizePayment" us=[0-9]+ outcome=ok$'
expect_match "the log line of the typo" "$(grep '"typo"' "$logs/stderr")" '^payservice: id="typo" method="computeSummaryItems" us=[0-9]+ outcome=error\(-32602\)$'
quiet=$("$bin" --config config.yaml --database :memory: --quiet < examples/checkout.jsonl 2>&1 >/dev/null)
expect "--quiet's stderr" "$quiet" ""
"$bin" --config config.yaml --database :memory: --log-timestamps < examples/checkout.jsonl 2> "$logs/stamped" > /dev/null
expect "--log-timestamps lines" "$(grep -c . "$logs/stamped")" 10
while IFS= read -r line; do
  expect_match "a --log-timestamps line" "$line" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z payservice: '
done < "$logs/stamped"
standin "journalctl -t payservice -t payservice-back-office --since today: no journal here"
# Redirected with 2>> and rotated by copying and truncating (what copytruncate does): the next
# line starts the emptied file, with no hole before it.
cat > "$logs/logrotate.conf" <<EOF
$logs/payservice.log {
    daily
    rotate 14
    compress
    missingok
    notifempty
    copytruncate
}
EOF
coproc LOGGED { exec "$bin" --config config.yaml --database :memory: 2>>"$logs/payservice.log"; }
logged_pid=$LOGGED_PID
background+=("$logged_pid")
echo '{"jsonrpc":"2.0","id":1,"method":"listShippingMethods"}' >&"${LOGGED[1]}"
read -r -t 10 _ <&"${LOGGED[0]}" || fail "no answer to the first logged request"
wait_for_line "$logs/payservice.log" '^payservice: id=1 '
if command -v logrotate >/dev/null; then
  logrotate --force --state "$logs/logrotate.state" "$logs/logrotate.conf"
else
  standin "logrotate is not installed: the file is copied and truncated as copytruncate does"
  cp "$logs/payservice.log" "$logs/payservice.log.1"
  : > "$logs/payservice.log"
fi
echo '{"jsonrpc":"2.0","id":2,"method":"listShippingMethods"}' >&"${LOGGED[1]}"
read -r -t 10 _ <&"${LOGGED[0]}" || fail "no answer to the second logged request"
wait_for_line "$logs/payservice.log" '^payservice: id=2 '
expect "the rotated log's bytes" "$(stat -c %s "$logs/payservice.log")" "$(head -1 "$logs/payservice.log" | wc -c)"
exec {LOGGED[1]}>&-
wait "$logged_pid"

# --- Backups and restore: SQLite -----------------------------------------------------------------
# A checkout process holds the store open, its last write still in the WAL.
coproc HOLDER { exec "$bin" --config "$config" --database "$store" --now "$now" --quiet; }
holder_pid=$HOLDER_PID
background+=("$holder_pid")
grep '"authorizePayment"' examples/checkout.jsonl >&"${HOLDER[1]}"
read -r -t 10 answer <&"${HOLDER[0]}" || fail "the holder did not answer"
expect_match "the holder's authorizePayment" "$answer" '"result":\{"status":"success"'
[ -s "$store-wal" ] || fail "the holder's write is not in $store-wal"
backups=$root/var/backups/payservice
# The newest of StoreSchema.migrations, the name a store this build writes records last.
latest_schema=$(awk '/static let migrations = \[/ { on = 1; next } on && /^ *\]/ { exit }
  on { sub(/^ *"/, ""); sub(/",$/, ""); last = $0 } END { print last }' "$repo/Sources/PayServiceCore/Store/Store.swift")
as_payservice backup --database "$store" \
  --to "$backups/store-$(date -u +%Y%m%dT%H%M%SZ).sqlite" 2> "$work/backup.stderr"
backup=$(ls "$backups"/store-*.sqlite)
expect "payservice backup's summary" "$(cat "$work/backup.stderr")" \
  "payservice: backed up $store to $backup ($(stat -c %s "$backup") bytes, schema \"$latest_schema\")"
expect "the backup's mode" "$(stat -c %a "$backup")" 600
for suffix in -wal -shm -journal; do [ ! -e "$backup$suffix" ] || fail "$backup$suffix exists"; done
# The pruning command: a copy 40 days old goes, today's stays.
touch -d '40 days ago' "$backups/store-20201010T000000Z.sqlite"
find "$backups" -name 'store-*.sqlite' -mtime +30 -delete
expect "the backups after pruning" "$(ls "$backups")" "$(basename "$backup")"
# Restore: every process stopped (the holder ends), the store moved aside with its -wal and -shm,
# the copy installed in its place.
exec {HOLDER[1]}>&-
wait "$holder_pid"
standin "systemctl stop and start: the holder process ended instead"
mkdir "$root/var/lib/payservice/replaced"
mv "$root/var/lib/payservice/store.sqlite"* "$root/var/lib/payservice/replaced/"
install -o "$owner" -g "$group" -m 0600 "$backup" "$store"
# The restored store answers as the original: the same orders and stock, and the next token.
replaced=$root/var/lib/payservice/replaced/store.sqlite
for call in "listOrders --back-office" "listProducts"; do
  # shellcheck disable=SC2086
  expect "$call on the restored store" "$("$bin" call $call --config "$config" --database "$store")" \
    "$("$bin" call $call --config "$config" --database "$replaced")"
done
pay=$(grep '"authorizePayment"' examples/checkout.jsonl | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["params"]))')
expect "the next authorizePayment on the restored store" \
  "$("$bin" call authorizePayment "$pay" --config "$config" --database "$store" --now "$now")" \
  "$("$bin" call authorizePayment "$pay" --config "$config" --database "$replaced" --now "$now")"

# --- Backups and restore: PostgreSQL -------------------------------------------------------------
if [ -n "${PAYSERVICE_TEST_POSTGRES_URL:-}" ]; then
  pg_base=${PAYSERVICE_TEST_POSTGRES_URL%/*}
  shop=running_it_$$
  pg_databases=("$shop" "${shop}_restored" "${shop}_replaced")
  psql "$pg_base/postgres" -Xq -c "CREATE DATABASE $shop"
  payservice --config "$config" --database "$pg_base/$shop" --now "$now" --back-office --quiet < examples/back-office.jsonl > /dev/null
  (cd "$work" && pg_dump --format=custom --file="$shop-$(date -u +%Y%m%dT%H%M%SZ).dump" "$pg_base/$shop")
  dump=$(ls "$work/$shop"-*.dump)
  psql "$pg_base/postgres" -X -c "CREATE DATABASE ${shop}_restored" > /dev/null
  pg_restore --no-owner --dbname="$pg_base/${shop}_restored" "$dump"
  psql "$pg_base/postgres" -X -c "ALTER DATABASE $shop RENAME TO ${shop}_replaced" -c "ALTER DATABASE ${shop}_restored RENAME TO $shop" > /dev/null
  for call in "listOrders --back-office" "listProducts"; do
    # shellcheck disable=SC2086
    expect "$call on the restored PostgreSQL store" "$("$bin" call $call --config "$config" --database "$pg_base/$shop")" \
      "$("$bin" call $call --config "$config" --database "$pg_base/${shop}_replaced")"
  done
  expect "orders on the restored PostgreSQL store" "$("$bin" call listOrders --back-office --config "$config" --database "$pg_base/$shop" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["orders"]))')" 1
else
  echo "running-it: skipped the PostgreSQL commands (PAYSERVICE_TEST_POSTGRES_URL is not set)"
fi

# --- Upgrades ------------------------------------------------------------------------------------
as_payservice backup --database "$store" --to "$backups/before-upgrade.sqlite" 2>/dev/null
standin "systemctl stop and start around the install"
install -m 0755 "$bin" "$root/usr/local/bin/payservice"
expect "payservice --version" "$("$root/usr/local/bin/payservice" --version)" "$("$bin" --version)"
# An older payservice on a store a newer one migrated: a migration from the future stands for it.
cp "$store" "$work/newer.sqlite"
chmod 0600 "$work/newer.sqlite"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("INSERT INTO grdb_migrations (identifier) VALUES (?)", ("v99: from the future",)); c.commit()' "$work/newer.sqlite"
set +e
refused=$("$bin" call listProducts --config "$config" --database "$work/newer.sqlite" 2>&1)
status=$?
set -e
expect "a newer store: exit" "$status" 2
expect "a newer store" "$refused" \
  "payservice: the store $work/newer.sqlite was written by a newer payservice (unknown schema migrations); upgrade payservice"

# --- Certificates --------------------------------------------------------------------------------
install -d -m 0755 "$etc/certs"
(
  cd "$etc/certs"
  # A test CA stands in for Apple: it signs the CSRs with the merchant identifier extension
  # (the hex SHA-256 of merchant.identifier), as Apple's certificates carry it.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/ca.key" \
    -subj "/CN=Test stand-in for Apple" -days 2 -out "$work/ca.pem" 2>/dev/null
  hash=$(printf %s merchant.com.example.acme | openssl dgst -sha256 -r | cut -d' ' -f1)
  printf '1.2.840.113635.100.6.32=ASN1:UTF8String:%s\n' "$hash" > "$work/apple.ext"
  apple() {  # CSR, DER certificate, days
    openssl x509 -req -in "$1" -CA "$work/ca.pem" -CAkey "$work/ca.key" -days "$3" -extfile "$work/apple.ext" \
      -outform DER -out "$2" 2>/dev/null
  }

  openssl ecparam -name prime256v1 -genkey -noout -out payment_processing.key
  openssl req -new -sha256 -key payment_processing.key -subj "/CN=merchant.com.example.acme" -out payment_processing.csr
  apple payment_processing.csr payment_processing.cer 365
  openssl x509 -inform DER -in payment_processing.cer -out payment_processing.pem

  openssl req -new -newkey rsa:2048 -nodes -keyout merchant_identity.key -subj "/CN=merchant.com.example.acme" -out merchant_identity.csr 2>/dev/null
  apple merchant_identity.csr merchant_identity.cer 20
  openssl x509 -inform DER -in merchant_identity.cer -out merchant_identity.pem
  openssl x509 -in merchant_identity.pem -noout -enddate | grep -q '^notAfter='

  chown "$owner" payment_processing.key merchant_identity.key   # the README's: chown payservice …
  chmod 0400 payment_processing.key merchant_identity.key
)
standin "Apple's downloads: a test CA signed payment_processing.cer and merchant_identity.cer"
cp "$config" "$etc/applepay.yaml"
cat >> "$etc/applepay.yaml" <<'EOF'
applePay:
  merchantCertificate: certs/payment_processing.pem             # Payment Processing Certificate
  merchantPrivateKey: certs/payment_processing.key
  merchantIdentityCertificate: certs/merchant_identity.pem   # Merchant Identity Certificate
  merchantIdentityKey: certs/merchant_identity.key
  domains: [shop.example.com]                         # registered and verified with Apple
EOF
payservice check-config --config "$etc/applepay.yaml" > "$work/check.out" 2> "$work/check.err"
expect_match "check-config: the processing certificate" "$(cat "$work/check.out")" \
  $'\napplePay   EC_v1 tokens, certificate valid [0-9-]+ to [0-9-]+, signed up to 300 s from the clock\n'
expect_match "check-config: the merchant identity" "$(cat "$work/check.out")" \
  $'\nsessions   merchant identity valid [0-9-]+ to [0-9-]+, domains shop.example.com, '
expect_match "check-config's warning" "$(cat "$work/check.err")" \
  '^payservice: warning: applePay\.merchantIdentityCertificate expires in (19|20) days \([0-9T:-]+Z\): renew it in the Apple developer account$'
sed 's/^  kind: sandbox$/  kind: stripe\n  mode: test/' "$config" > "$work/stripe.yaml"
# With Stripe, the Apple Pay token goes to Stripe even though the config has the processing key:
# here a Stripe that cannot be reached (nothing listens on port 9), so the answer says so.
sed 's|^  kind: sandbox$|  kind: stripe\n  mode: test\n  apiBase: https://127.0.0.1:9|' "$etc/applepay.yaml" > "$etc/stripe.yaml"
token_object=$(echo "$pay" | python3 -c 'import json,sys; p=json.load(sys.stdin); p["payment"]["token"]["paymentData"]={"version":"EC_v1","data":"ZGF0YQ==","signature":"c2ln","header":{"ephemeralPublicKey":"a2V5","publicKeyHash":"aGFzaA==","transactionId":"0a1b"}}; print(json.dumps(p))')
set +e
sent=$(STRIPE_SECRET_KEY=sk_test_running_it "$bin" call authorizePayment "$token_object" --config "$etc/stripe.yaml" --database :memory: 2>/dev/null)
set -e
expect "a token object with Stripe goes to Stripe" "$(echo "$sent" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["status"], r["errors"])')" \
  "failure [{'code': 'unknown', 'message': 'Stripe did not answer (the connection failed, after 3 attempts); authorize again'}]"

# --- Troubleshooting: the messages of the table --------------------------------------------------
trouble=$(mktemp -d -p "$work")
# run EXPECTED_STATUS COMMAND…: its stdout and stderr together, the status checked.
run() {
  local wanted=$1
  shift
  set +e
  output=$("$@" 2>&1 </dev/null)
  local status=$?
  set -e
  expect "exit status of $*" "$status" "$wanted"
}
sed 's/price: "50.00"/price: "fifty"/' config.yaml > "$trouble/config.yaml"
(cd "$trouble" && run 2 "$bin" check-config --config config.yaml && expect "an invalid config" "$output" \
  $'payservice: invalid config:\nconfig.yaml:18:12: catalog[0].price: must be a decimal amount like "50.00", got "fifty"')
run 2 env -u STRIPE_SECRET_KEY "$bin" --config "$work/stripe.yaml" --database :memory:
expect "no Stripe key" "$output" \
  "payservice: gateway.kind is stripe but the environment variable STRIPE_SECRET_KEY (gateway.secretKeyVariable) is not set"
run 2 env STRIPE_SECRET_KEY=sk_live_running_it "$bin" --config "$work/stripe.yaml" --database :memory:
expect "a live key in test mode" "$output" \
  "payservice: STRIPE_SECRET_KEY holds a live key, which moves real money: set gateway.mode: live to use it"
sed 's/^  mode: test$/  mode: live/' "$work/stripe.yaml" > "$work/live.yaml"
run 2 env STRIPE_SECRET_KEY=sk_test_running_it "$bin" --config "$work/live.yaml" --database :memory:
expect "a test key in live mode" "$output" "payservice: gateway.mode is live but STRIPE_SECRET_KEY holds a test key"
run 2 env STRIPE_SECRET_KEY=pk_test_running_it "$bin" --config "$work/stripe.yaml" --database :memory:
expect "a publishable key" "$output" \
  "payservice: STRIPE_SECRET_KEY does not hold a Stripe secret key (sk_… or rk_…; a publishable pk_… key cannot charge)"
rule="each of a store's files (the database, its -wal and -shm) must be a regular file owned by the user running payservice and writable by it alone"
cp "$store" "$trouble/shared.sqlite"
chmod 0664 "$trouble/shared.sqlite"
run 2 "$bin" call listProducts --config "$config" --database "$trouble/shared.sqlite"
expect "a store its group may write" "$output" \
  "payservice: cannot open the store $trouble/shared.sqlite: $trouble/shared.sqlite is writable by its group or others (mode 0664); $rule"
ln -s "$store" "$trouble/link.sqlite"
run 2 "$bin" call listProducts --config "$config" --database "$trouble/link.sqlite"
expect "a store behind a symbolic link" "$output" \
  "payservice: cannot open the store $trouble/link.sqlite: $trouble/link.sqlite is a symbolic link; $rule"
if [ "$(id -u)" = 0 ]; then
  install -o 65534 -m 0600 "$store" "$trouble/theirs.sqlite"
  run 2 "$bin" call listProducts --config "$config" --database "$trouble/theirs.sqlite"
  expect "a store of another user" "$output" \
    "payservice: cannot open the store $trouble/theirs.sqlite: $trouble/theirs.sqlite is owned by uid 65534, not by uid 0 running payservice; $rule"
else
  echo "running-it: skipped the store of another user (needs root)"
fi
run 2 "$bin" call listProducts --config "$config" --database postgres://payservice@127.0.0.1:1/shop
expect "an unreachable server" "$output" \
  "payservice: cannot open the store postgres://payservice@127.0.0.1:1/shop: cannot connect: 127.0.0.1: Connection refused"
if [ -n "$pg_base" ]; then
  wrong=$(echo "$pg_base" | sed -E 's#^postgres://([^:@]+):[^@]*@#postgres://\1:wrong-password@#')
  run 2 "$bin" call listProducts --config "$config" --database "$wrong/postgres"
  expect_match "a refused login" "$output" \
    '^payservice: cannot open the store postgres://[^:@]+@[^/]+/postgres: password authentication failed for user "[^"]+" \(SQLSTATE 28P01\)$'
fi
run 1 "$bin" call refundOrder '{}' --config "$config" --database "$store"
expect "a back-office method on a checkout process" "$output" \
  $'{"code":-32601,"message":"Method not found: refundOrder"}\npayservice: Method not found: refundOrder (-32601)'
# -32001: another connection holds the write lock for longer than the 5 s busy timeout.
cp "$store" "$trouble/locked.sqlite"
coproc LOCKED { exec "$bin" --config "$config" --database "$trouble/locked.sqlite" --now "$now" 2>"$trouble/locked.log"; }
locked_pid=$LOCKED_PID
background+=("$locked_pid")
echo '{"jsonrpc":"2.0","id":0,"method":"listShippingMethods"}' >&"${LOCKED[1]}"
read -r -t 10 _ <&"${LOCKED[0]}" || fail "the store to lock did not answer"
python3 -c 'import sqlite3,sys,time; c=sqlite3.connect(sys.argv[1], isolation_level=None); c.execute("BEGIN IMMEDIATE"); print("locked", flush=True); time.sleep(8)' \
  "$trouble/locked.sqlite" > "$trouble/lock.ready" &
background+=($!)
for _ in $(seq 100); do grep -q locked "$trouble/lock.ready" && break; sleep 0.05; done
sed -n 1p examples/back-office.jsonl >&"${LOCKED[1]}"
read -r -t 15 answer <&"${LOCKED[0]}" || fail "no answer while the store was locked"
expect "the answer while the store is locked" "$answer" \
  '{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Store unavailable: the order store could not be read or written; nothing was changed"}}'
exec {LOCKED[1]}>&-
wait "$locked_pid"
expect "the warning while the store is locked" "$(grep warning "$trouble/locked.log")" \
  "payservice: warning: authorizePayment failed: store unavailable: database is locked"
# -32002 and -32004 on the store of the README's back-office session.
conflict=$(sed -n 2p examples/back-office.jsonl | python3 -c 'import json,sys; p=json.load(sys.stdin)["params"]; p["items"][0]["quantity"]=1; print(json.dumps(p))')
run 1 "$bin" call processOrder "$conflict" --config "$config" --database "$store" --now "$now"
expect "a used charge token with other params" "$output" \
  $'{"code":-32002,"message":"Charge token conflict: the charge token was already used for a different order"}\npayservice: Charge token conflict: the charge token was already used for a different order (-32002)'
run 1 "$bin" call refundOrder '{"orderId":"ord_6b0187c0fd080cf8d33b6749199690aef2f85b75","refundId":"return-0001","lines":[{"sku":"mug","quantity":1,"restock":"none"}]}' \
  --back-office --config "$config" --database "$store" --now "$now"
expect "a refundId with other params" "$output" \
  $'{"code":-32004,"message":"Idempotency key conflict: this refundId was already used with different params; use a new refundId"}\npayservice: Idempotency key conflict: this refundId was already used with different params; use a new refundId (-32004)'
expect "an expired coupon" \
  "$("$bin" call changeCouponCode '{"items":[{"sku":"clock"}],"couponCode":"HOLIDAY26"}' --config "$config" --database :memory: --now 2027-01-02T00:00:00Z | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["errors"], separators=(",", ":"), ensure_ascii=False))')" \
  '[{"code":"couponCodeExpired","message":"The code HOLIDAY26 expired on 2026-12-31T23:59:59Z."}]'

# --- Restocking and catalog changes ---------------------------------------------------------------
# The README's commands, on the store of the back-office session and the checkouts above (two
# payments of Ada's that made no order among them), as payservice.sqlite in a directory of its own
# with config.yaml, as a shop would run them.
shop=$(mktemp -d -p "$work")
cp config.yaml "$shop/config.yaml"
cp "$store" "$shop/payservice.sqlite"
cd "$shop"
# As the README shows them (each is one line there), with the clock pinned here for exact answers.
expect "stock adjust" "$(payservice stock adjust mug 24 --id po-1042 --reason "Received PO-1042" --now "$now")" \
  '{"status":"succeeded","adjustmentId":"po-1042","sku":"mug","delta":24,"quantityBefore":99,"quantityOnHand":123,"at":"2026-11-21T12:00:00Z"}'
expect "stock adjust, again" "$(payservice stock adjust mug 24 --id po-1042 --reason "Received PO-1042" --now "$now")" \
  '{"status":"succeeded","adjustmentId":"po-1042","sku":"mug","delta":24,"quantityBefore":99,"quantityOnHand":123,"at":"2026-11-21T12:00:00Z"}'
expect "stock adjust, negative" "$(payservice stock adjust mug --id breakage-7 --reason "Dropped a box" --now "$now" -- -3)" \
  '{"status":"succeeded","adjustmentId":"breakage-7","sku":"mug","delta":-3,"quantityBefore":123,"quantityOnHand":120,"at":"2026-11-21T12:00:00Z"}'
expect "stock set" "$(payservice stock set notebook 40 --id count-2026-11 --reason "Stocktake" --now "$now")" \
  '{"status":"succeeded","adjustmentId":"count-2026-11","sku":"notebook","delta":37,"quantityBefore":3,"quantityOnHand":40,"at":"2026-11-21T12:00:00Z"}'
expect "stock list" "$(payservice stock list)" \
  '{"stock":[{"sku":"clock","name":"Clock","inCatalog":true,"configuredQuantity":10,"quantityOnHand":9,"sold":1},{"sku":"lamp","name":"Desk Lamp","inCatalog":true,"configuredQuantity":25,"quantityOnHand":25,"sold":0},{"sku":"mug","name":"Mug","inCatalog":true,"configuredQuantity":100,"quantityOnHand":120,"sold":1},{"sku":"notebook","name":"Notebook","inCatalog":true,"configuredQuantity":3,"quantityOnHand":40,"sold":0}]}'
expect_match "stock list mug" "$(payservice stock list mug)" '"adjustments":\[\{"adjustmentId":"breakage-7","type":"adjusted","at":"2026-11-21T12:00:00Z","delta":-3,"quantityOnHand":120,"reason":"Dropped a box"\},\{"adjustmentId":"po-1042"'
expect "check-config --database" "$(payservice check-config --database payservice.sqlite | tail -5)" \
"store      payservice.sqlite: stock of 4 skus
  clock  on hand 9  sold 1  seed 10
  lamp  on hand 25  sold 0  seed 25
  mug  on hand 120  sold 1  seed 100
  notebook  on hand 40  sold 0  seed 3"

# --- Personal data ----------------------------------------------------------------------------------
expect "erase by email address" "$(payservice erase --email-address ada@example.com --erasure-id gdpr-2026-0001 --now "$now")" \
  '{"status":"succeeded","erasureId":"gdpr-2026-0001","erasedAt":"2026-11-21T12:00:00Z","orders":["ord_6b0187c0fd080cf8d33b6749199690aef2f85b75"],"otherPayments":2,"more":false}'
expect "erase by order, already erased" "$(payservice erase --order-id ord_6b0187c0fd080cf8d33b6749199690aef2f85b75 --erasure-id gdpr-2026-0002 --now "$now")" \
  '{"status":"succeeded","erasureId":"gdpr-2026-0002","erasedAt":"2026-11-21T12:00:00Z","orders":[],"otherPayments":0,"more":false}'
expect_match "the erased order" "$(payservice call getOrder '{"orderId":"ord_6b0187c0fd080cf8d33b6749199690aef2f85b75"}' --back-office)" \
  '"shippingContact":\{"administrativeArea":"NY","postalCode":"122","countryCode":"US"\},"billingContact":\{"administrativeArea":"NY","postalCode":"122","countryCode":"US"\},"personalDataErasedAt":"2026-11-21T12:00:00Z","amount":"75.69"'
# The retention, as the README's config and the timer's command run it, two years and a day later.
printf 'privacy:\n  retainPersonalDataDays: 730     # two years after the payment was authorized\n' >> config.yaml
cp "$store" retained.sqlite
expect "retention" "$(payservice retention --config config.yaml --database retained.sqlite --now 2028-11-21T12:00:01Z)" \
  '{"status":"succeeded","erasureId":"retention-2026-11-22T12:00:01Z-1","erasedAt":"2028-11-21T12:00:01Z","orders":["ord_6b0187c0fd080cf8d33b6749199690aef2f85b75"],"otherPayments":2,"more":false}'
cd "$repo"

echo "running-it: ok"
