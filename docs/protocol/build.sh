#!/usr/bin/env bash
# Regenerates protocol.md from protocol.tmpl.md: every @@ex/@@pretty/@@cmd placeholder is replaced by
# what the release binary actually answers (examples.py), so the examples cannot drift from the code.
#   docs/protocol/build.sh            then review `git diff protocol.md`
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build -c release --product payservice >&2
swift build -c release --product stripe-test-server >&2
swift build -c release --product apple-session-test-server >&2
examples=$(mktemp)
trap 'rm -f "$examples"' EXIT
python3 docs/protocol/examples.py .build/release/payservice "$examples"
python3 docs/protocol/fill.py .build/release/payservice "$examples"
