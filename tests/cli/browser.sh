# Sourced by the browser checks of gpuslice's pages (after expect.sh; OUT
# set): finds headless Chromium (skips with 77 without it, fails under
# CI=true), `browser <args...>` runs it, and `check_page <name> <page>
# [least-charts, 6] [regex]` opens a page and checks that every chart drew a
# non-empty canvas, that no script failed and that the page holds <regex>.
CHROMIUM="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
if [ -z "$CHROMIUM" ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: chromium is not installed, and CI=true: the page must be checked in a browser (.ci/run installs chromium)"
    exit 1
  fi
  echo "SKIP: chromium is not installed (apt-get install chromium): the page was not checked in a browser"
  exit 77
fi
browser() {  # browser <args...>: headless, its own profile, bounded in time
  timeout 120 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --user-data-dir="$OUT/profile" --virtual-time-budget=10000 "$@" 2>>"$OUT/chromium.log"
}
check_page() {
  local name="$1" page="$2" least="${3:-6}" marker="${4:-}" dom body charts rendered
  dom=$(browser --dump-dom "file://$page")
  body=$(grep -o '<body[^>]*>' <<<"$dom")  # the markers are the body's attributes
  charts=$(grep -o 'data-charts="[0-9]*"' <<<"$body" | grep -o '[0-9]*')
  rendered=$(grep -o 'data-rendered="[0-9]*"' <<<"$body" | grep -o '[0-9]*')
  checks=$((checks + 1))
  if [ -z "$charts" ] || [ "$charts" -lt "$least" ] || [ "$rendered" != "$charts" ]; then
    echo "FAIL $name: ${rendered:-no} of ${charts:-no} charts rendered: $body"
    tail -5 "$OUT/chromium.log"; fail=$((fail + 1))
  fi
  checks=$((checks + 1))
  if grep -q 'data-script-error=' <<<"$body"; then
    echo "FAIL $name: script error: $(grep -o 'data-script-error="[^"]*"' <<<"$body")"; fail=$((fail + 1))
  fi
  [ -n "$marker" ] || return 0
  checks=$((checks + 1))
  grep -Eq "$marker" <<<"$dom" || { echo "FAIL $name: the page lacks $marker"; fail=$((fail + 1)); }
}
