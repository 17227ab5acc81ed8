#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer) of everything behind stdin: framing, JSON, JSON-RPC, methods.
#   Fuzz/run.sh [SECONDS]          default 60; CI runs the default
# The oracle (Tests/PayServiceTestSupport/FuzzOracle.swift): at most one answer line per input line,
# every answer valid JSON-RPC 2.0, no crash, RSS under 2 GB. New interesting inputs go to a scratch
# directory; a failing input is written to Fuzz/crashers/ — commit it: `swift test` replays every
# file in Fuzz/corpus and Fuzz/crashers (HostileInputTests). Links with lld (gold fails on libFuzzer).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
swift build -c release --scratch-path .build-fuzz --product payservice-fuzz \
  -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING -Xswiftc -use-ld=lld >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
SWIFT_BACKTRACE=enable=no .build-fuzz/release/payservice-fuzz "$work" Fuzz/corpus \
  -dict=Fuzz/payservice.dict -max_len=4096 -rss_limit_mb=2048 -timeout=10 \
  -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix=Fuzz/crashers/
