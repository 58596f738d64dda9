#!/usr/bin/env bash
# defrag's report.html in a real browser: a plan and a no-plan answer, each
# page opened in headless Chromium; both charts must draw a non-empty canvas
# and no script may fail. The screenshot is kept as a CI artifact:
# ci-artifacts/defrag-report.png. Without chromium the test is skipped (exit
# 77), except under CI=true, where it fails: CI must check the page.
set -u
BIN="$1"; SRC="$2"; OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source "$(dirname "$0")/expect.sh"
source "$(dirname "$0")/browser.sh"
D="$SRC/tests/defrag/data"
expect plan 0 'wrote' -- "$BIN" defrag --snapshot "$D/three-moves.yaml" --out "$OUT/plan"
expect no-plan 1 'wrote' -- "$BIN" defrag --snapshot "$D/six-moves.yaml" --out "$OUT/none"
check_page plan "$OUT/plan/report.html" 2 'Moves, in order'
check_page no-plan "$OUT/none/report.html" 2 'No plan within 5 moves'
mkdir -p "$SRC/ci-artifacts"
browser --screenshot="$SRC/ci-artifacts/defrag-report.png" --window-size=1280,2200 "file://$OUT/plan/report.html" >/dev/null
checks=$((checks + 1))
[ -s "$SRC/ci-artifacts/defrag-report.png" ] || { echo "FAIL: no screenshot"; fail=$((fail + 1)); }
report
