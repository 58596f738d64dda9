#!/usr/bin/env bash
# report.html in a real browser: a small simulate, the page opened in headless
# Chromium, every chart must have drawn a non-empty canvas and no script may
# have failed. The screenshot is kept as a CI artifact: ci-artifacts/report.png.
# Without chromium the test is skipped (exit 77), except under CI=true, where
# it fails: CI must check the page.
set -u
BIN="$1"; SRC="$2"; OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source "$(dirname "$0")/expect.sh"
source "$(dirname "$0")/browser.sh"
# A run with departures, a queue that waits and pods refused: every chart has data.
expect simulate 0 'report +.*/report.html' -- "$BIN" simulate "$SRC/tests/cli/data/report-run.yaml" --out "$OUT/run"
check_page simulate "$OUT/run/report.html" 6 '<code>pending_seconds</code>'
# gpuslice report writes the same charts again from the files.
rm "$OUT/run/report.html"
expect report 0 'report.html' -- "$BIN" report "$OUT/run"
check_page report "$OUT/run/report.html" 6 '<code>pending_seconds</code>'
mkdir -p "$SRC/ci-artifacts"
browser --screenshot="$SRC/ci-artifacts/report.png" --window-size=1280,4000 "file://$OUT/run/report.html" >/dev/null
checks=$((checks + 1))
[ -s "$SRC/ci-artifacts/report.png" ] || { echo "FAIL: no screenshot"; fail=$((fail + 1)); }
report
