#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer) of everything behind stdin, one target at a time:
#   Fuzz/run.sh [SECONDS] [TARGET] [LIBFUZZER FLAGS...]      SECONDS default 60, TARGET default all
#   requests  each line answered in process (RequestHandler.handle(line:)) on stores opened once, the
#             borrowed path checked against the general one: the scanner, params readers, pricing
#             and every method at thousands of inputs a second
#   stdin     the whole input as stdin of a Server on a fresh store: framing, line limits, pipelining
#             and group commits too, at a few hundred inputs a second at most
#   signed    claims signed by the harness (App Store JWS under a test chain, Stripe events under a test
#             secret, Adyen items under a test HMAC key, Apple Pay EC_v1 payment data encrypted and signed
#             by a test authority), so that hostile dates, amounts, ids, environments and merchant tokens
#             get past the signature; starts from Fuzz/corpus-signed
#   all       half of SECONDS on requests, a quarter on stdin, a quarter on signed (CI: `Fuzz/run.sh 60`)
# A longer run on demand: `Fuzz/run.sh 3600 requests` (libFuzzer flags such as -seed=N pass through).
# Stdout gets one summary line per target, or a failure report; libFuzzer's output goes to stderr.
# Both start from Fuzz/corpus, insert Fuzz/payservice.dict's tokens (long digit runs, extreme exponents,
# boundary values among them), and mutate JSON-RPC lines as trees (Fuzz/Sources/RequestMutator.swift).
# The oracles (Tests/PayServiceFuzzSupport/FuzzOracle.swift): at most one answer line per input line,
# every answer valid JSON-RPC 2.0, the borrowed path answering as the general one, no crash, RSS under
# 2 GB. New interesting inputs go to a scratch directory; a failing input is written to Fuzz/crashers/
# — commit it: `swift test` replays every file in Fuzz/corpus and Fuzz/crashers through both targets
# (HostileInputTests), as does `payservice-fuzz FILE...` built normally. Links with lld (gold fails on
# libFuzzer).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
target=${2:-all}
shift $(($# < 2 ? $# : 2))
case "$target" in
  all)
    half=$((seconds / 2 > 0 ? seconds / 2 : 1))
    quarter=$((seconds / 4 > 0 ? seconds / 4 : 1))
    runs=("requests $half" "stdin $quarter" "signed $((seconds - half - quarter > 0 ? seconds - half - quarter : 1))")
    ;;
  requests | stdin | signed) runs=("$target $seconds") ;;
  *) echo "Fuzz/run.sh: no target $target (requests, stdin, signed or all)" >&2; exit 2 ;;
esac
# Its own build directory by default, so that a developer's release build stays as it is; CI, at its
# end, passes PAYSERVICE_FUZZ_SCRATCH=.build so that the C code of the dependencies, which the
# sanitizer flags do not touch, is not compiled a third time.
scratch=${PAYSERVICE_FUZZ_SCRATCH:-.build-fuzz}
swift build -c release --scratch-path "$scratch" --product payservice-fuzz \
  -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING -Xswiftc -use-ld=lld >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# On a failure: what libFuzzer and the oracle said, where in our code (innermost first), and the input.
report() {
  echo "Fuzz/run.sh: $1 failed (exit $2); libFuzzer's whole output went to stderr"
  grep -E "^==[0-9]+== ERROR|^payservice-fuzz: " "$3" | sed 's/^/  /'
  grep -E "^ +#[0-9]+ " "$3" | grep -oE "(Sources|Tests|Fuzz)/[^ ]+\.swift:[0-9]+(:[0-9]+)?" | uniq | head -12 | sed 's/^/  at /'
  sed -n "s|.*Test unit written to \(.*\)|  input: \1 (replay: swift run payservice-fuzz --target $1 \1)|p" "$3"
}
summary=()
for run in "${runs[@]}"; do
  read -r name time <<<"$run"
  mkdir "$work/$name"
  corpus=Fuzz/corpus
  if [ "$name" = signed ]; then corpus=Fuzz/corpus-signed; fi
  echo "Fuzz/run.sh: $name for $time s" >&2
  status=0
  PAYSERVICE_FUZZ_TARGET=$name SWIFT_BACKTRACE=enable=no "$scratch/release/payservice-fuzz" "$work/$name" "$corpus" \
    -dict=Fuzz/payservice.dict -max_len=4096 -rss_limit_mb=2048 -timeout=10 \
    -max_total_time="$time" -print_final_stats=1 -artifact_prefix=Fuzz/crashers/ "$@" 2>&1 | tee "$work/$name.log" >&2 || status=$?
  if [ "$status" -ne 0 ]; then
    report "$name" "$status" "$work/$name.log"
    exit 1
  fi
  inputs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$name.log")
  summary+=("Fuzz/run.sh: $name: ${inputs:-?} inputs in $time s (${rate:-?}/s), no failure")
done
printf '%s\n' "${summary[@]}"
