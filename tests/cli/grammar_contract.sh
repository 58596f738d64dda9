#!/usr/bin/env bash
# The command-line grammar of docs/cli.md, for every subcommand at once: the
# subcommands and their flags are read from --help, so a flag added later is
# held to the same rules without editing this file.
#   - --help exits 0 at every level;
#   - a mistyped subcommand (any level) or flag exits 2 with "did you mean";
#   - every number flag refuses a word with the project's message (exit 2),
#     never a converter's text or a 300-digit range;
#   - the same idea has the same flag: --policy/--policies, --seed/--seeds
#     (lists and ranges), --quiet wherever there is progress;
#   - exit codes 0, 1, 2 as documented, and 3 documented.
# Then each defect issue 36 listed, by name.
set -u
BIN="$1"
SRC="$2"
source "$(dirname "$0")/expect.sh"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# The subcommands of a level, from its help's "Subcommands:" section.
subcommands() {
  "$BIN" "$@" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && /^  [a-z]/ {print $1}'
}
# "FLAG TYPE" per option of a subcommand (TYPE: TEXT, INT, UINT, FLOAT or -).
flags() {
  "$BIN" "$@" --help | sed -n '/^Options:/,/^[A-Z]/p' | grep -E '^ +--' | while read -r names rest; do
    type=$(awk '{print $1}' <<<"$rest" | sed 's/=.*//')
    case "$type" in TEXT | INT | UINT | FLOAT) ;; *) type=- ;; esac
    tr ',' '\n' <<<"$names" | grep -E '^--' | grep -v '^--help$' | sed "s/\$/ $type/"
  done
}
# A one-letter slip of a flag that is not itself a flag: two letters swapped.
slip() {
  local f="$1" body="${1#--}"
  [ ${#body} -ge 4 ] || return 1
  echo "--${body:0:1}${body:2:1}${body:1:1}${body:3}"
}

LEAVES=()
for top in $(subcommands); do
  inner=$(subcommands "$top")
  if [ -n "$inner" ]; then
    for sub in $inner; do LEAVES+=("$top $sub"); done
    # A mistyped subcommand at the second level.
    first=$(head -1 <<<"$inner")
    expect "$top-typo" 2 "'${first:0:1}${first:2:1}${first:1:1}${first:3}' is not a gpuslice $top subcommand; did you mean '$first'\?" -- \
      "$BIN" "$top" "${first:0:1}${first:2:1}${first:1:1}${first:3}"
  else
    LEAVES+=("$top")
  fi
done
[ "${#LEAVES[@]}" -ge 12 ] || { echo "FAIL: found only ${#LEAVES[@]} subcommands: ${LEAVES[*]}"; exit 1; }

expect top-typo 2 "'simulat' is not a gpuslice subcommand; did you mean 'simulate'\?" -- "$BIN" simulat
expect top-help 0 'Subcommands:' -- "$BIN" --help

for leaf in "${LEAVES[@]}"; do
  read -r -a cmd <<<"$leaf"
  expect "$leaf: --help" 0 "Usage: .*${cmd[-1]}" -- "$BIN" "${cmd[@]}" --help
  expect "$leaf: unknown flag" 2 "command line: --no-such-flag: not a flag of \`gpuslice $leaf\`" -- \
    "$BIN" "${cmd[@]}" --no-such-flag
  all=$(flags "${cmd[@]}" | awk '{print $1}')
  while read -r flag type; do
    [ -n "$flag" ] || continue
    if wrong=$(slip "$flag") && ! grep -qx -- "$wrong" <<<"$all"; then
      expect "$leaf: $wrong" 2 "command line: $wrong: not a flag of \`gpuslice $leaf\`; did you mean $flag\?" -- \
        "$BIN" "${cmd[@]}" "$wrong" 1
    fi
    case "$type" in
      INT | UINT)
        expect "$leaf: $flag abc" 2 "^command line: $flag: 'abc' is not a whole number" -- "$BIN" "${cmd[@]}" "$flag" abc
        expect "$leaf: $flag 1.5" 2 "^command line: $flag: '1.5' is not a whole number" -- "$BIN" "${cmd[@]}" "$flag" 1.5 ;;
      FLOAT)
        expect "$leaf: $flag abc" 2 "^command line: $flag: 'abc' is not a number" -- "$BIN" "${cmd[@]}" "$flag" abc ;;
    esac
    if [ "$type" = UINT ]; then
      expect "$leaf: $flag -1" 2 "^command line: $flag: '-1' is not a whole number" -- "$BIN" "${cmd[@]}" "$flag" -1
    fi
  done < <(flags "${cmd[@]}")
  # One flag per idea: --policy wherever a policy is chosen (--policies
  # only as its alias), --seed beside --seeds, --quiet where progress shows.
  if grep -qx -- --policies <<<"$all" && ! grep -qx -- --policy <<<"$all"; then
    echo "FAIL $leaf: --policies without --policy"; fail=$((fail + 1))
  fi
  if grep -qx -- --seeds <<<"$all" && ! grep -qx -- --seed <<<"$all"; then
    echo "FAIL $leaf: --seeds without --seed"; fail=$((fail + 1))
  fi
  checks=$((checks + 2))
done
for leaf in study plan simulate "realgpu check" "realgpu labs" defrag; do
  read -r -a cmd <<<"$leaf"
  checks=$((checks + 1))
  flags "${cmd[@]}" | grep -q -- '^--quiet ' || { echo "FAIL $leaf: no --quiet"; fail=$((fail + 1)); }
done

# Exit codes: 0 an answer, 1 a negative one, 2 bad input; 3 is documented.
P="$SRC/examples/place"
expect exit-0 0 'fits node' -- "$BIN" place --nodes "$P/t4-node.yaml" --pod "$P/gpumem-pod-a.yaml"
expect exit-1 1 'no node' -- "$BIN" place --nodes "$P/t4-node.yaml" --pod "$P/oversized-pod.yaml"
expect exit-2 2 'cannot open' -- "$BIN" place --nodes "$OUT/none.yaml" --pod "$P/gpumem-pod-a.yaml"
checks=$((checks + 1))
grep -Eq '^\| *3 *\|' "$SRC/docs/cli.md" || { echo "FAIL docs/cli.md does not say what exit 3 means"; fail=$((fail + 1)); }

# --- Issue 36's defects, each by name -------------------------------------
S="$SRC/scenarios"
# `--seed abc` printed a range ending in 300 digits.
expect seed-abc 2 "^command line: --seed: 'abc' is not a whole number 0 or more$" -- \
  "$BIN" simulate "$S/openb-default.yaml" --out "$OUT/s" --seed abc
checks=$((checks + 1))
[ "$("$BIN" simulate "$S/openb-default.yaml" --out "$OUT/s" --seed abc 2>&1 | wc -c)" -lt 200 ] || {
  echo "FAIL seed-abc: the message is long"; fail=$((fail + 1)); }
# simulate --policy a,b but study --policies: both spellings on both.
expect study-policy 2 "unknown policy 'nosuch'" -- \
  "$BIN" study --openb-nodes "$S/data/openb/openb_node_list_gpu_node.csv" \
  --openb-pods "$S/data/openb/openb_pod_list_default.csv" --policy nosuch --seeds 1 --out "$OUT/st"
expect simulate-policies 0 'outputs .*compare.html' -- \
  "$BIN" simulate "$S/openb-default.yaml" --policies hami-binpack,fgd --out "$OUT/sp"
# --seeds with lists and ranges wherever seeds are taken.
expect simulate-seeds 0 'outputs .*compare.html' -- \
  "$BIN" simulate "$S/openb-default.yaml" --seeds 1-2 --out "$OUT/ss"
[ -f "$OUT/ss/seed1/summary.json" ] && [ -f "$OUT/ss/seed2/summary.json" ] || {
  echo "FAIL simulate-seeds: no OUT/seed1, OUT/seed2"; fail=$((fail + 1)); }
expect simulate-seed-and-seeds 2 '--seeds: give --seed or --seeds, not both' -- \
  "$BIN" simulate "$S/openb-default.yaml" --seed 1 --seeds 1-2 --out "$OUT/ss2"
expect simulate-seeds-backwards 2 "--seeds: '3-1' is not a range" -- \
  "$BIN" simulate "$S/openb-default.yaml" --seeds 3-1 --out "$OUT/ss3"
PLAN=("$BIN" plan "$S/capacity-planning.yaml" --target 'refused_pct<=100' --max 4 --curve-points 0)
# The same as one word for `script` and `bash -c`.
printf '#!/usr/bin/env bash\nexec %q plan %q --target %q --max 4 --curve-points 0 "$@"\n' \
  "$BIN" "$S/capacity-planning.yaml" 'refused_pct<=100' > "$OUT/plan.sh"
chmod +x "$OUT/plan.sh"
expect plan-seed-range 0 'seeds 1,2,3' -- "${PLAN[@]}" --seeds 1-3
expect plan-seed-word 2 "--seeds: 'x' is not a non-negative integer" -- "${PLAN[@]}" --seeds x
expect plan-policy-list 2 "--policy: 'fgd,random': plan takes one policy" -- "${PLAN[@]}" --policy fgd,random
# plan --out: a folder like every other --out, the file form kept.
mkdir -p "$OUT/pdir"
expect plan-out-folder 0 'answer' -- "${PLAN[@]}" --out "$OUT/pdir"
expect plan-out-new-folder 0 'answer' -- "${PLAN[@]}" --out "$OUT/pnew/"
expect plan-out-file 0 'answer' -- "${PLAN[@]}" --out "$OUT/plan-file.json"
for f in "$OUT/pdir/plan.json" "$OUT/pnew/plan.json" "$OUT/plan-file.json"; do
  checks=$((checks + 1))
  grep -q '"count"' "$f" 2>/dev/null || { echo "FAIL plan --out: no $f"; fail=$((fail + 1)); }
done
# A negative --max or --curve-points was silently the default.
expect plan-max-negative 2 "^command line: --max: '-3' is not a whole number from 0" -- "${PLAN[@]}" --max -3
expect plan-curve-negative 2 "^command line: --curve-points: '-1' is not a whole number from 0" -- \
  "${PLAN[@]}" --curve-points -1
# --polcy said only "not expected".
expect polcy 2 "^command line: --polcy: not a flag of \`gpuslice simulate\`; did you mean --policy\?" -- \
  "$BIN" simulate "$S/openb-default.yaml" --polcy fgd --out "$OUT/p"
# A mistyped realgpu subcommand said only "A subcommand is required".
expect realgpu-chek 2 "'chek' is not a gpuslice realgpu subcommand; did you mean 'check'\?.*check, run, labs" -- \
  "$BIN" realgpu chek
# --tune on a scenario without a trace was ignored without a word.
expect tune-no-trace 0 'warning: --tune does nothing in this run' -- \
  "$BIN" simulate "$S/capacity-planning.yaml" --tune 2 --out "$OUT/t"
# plan tried 0 to 16 nodes without saying two queued pods never fit.
expect plan-never-placeable 0 'set aside: 2 pods no count of hami-workshop can place.*ml/train-llm-70b-0 \(NeverFits.*research/sweep-4card-0 \(NeverFits.*answer: 0 nodes' -- \
  bash -c "'$BIN' plan --snapshot '$SRC/examples/snapshot/cluster.yaml' --add '$SRC/examples/place/t4-node.yaml' --target 'refused_pct<=0' | tr '\n' ' '"
expect plan-never-placeable-json 0 '"never_placeable":\["ml/train-llm-70b-0 ' -- \
  "$BIN" plan --snapshot "$SRC/examples/snapshot/cluster.yaml" --add "$SRC/examples/place/t4-node.yaml" \
  --target 'refused_pct<=0' --json
# --price A100=... silently priced the template named a100.
cat > "$OUT/a100-named.yaml" <<'EOF'
name: a100-named
fleet:
- template: {name: a100, model: NVIDIA A100-SXM4-40GB, cards: 2, card_memory_mib: 40960, slots: 10}
  count: 1
templates:
  small: {gpu: 1, gpumem: 1000}
pods:
- {at: 0, template: small, repeat: 2}
EOF
expect price-ambiguous 0 "warning: --price A100=3.2: 'A100' names the fleet template 'a100' and the card model 'NVIDIA A100-SXM4-40GB': took the template" -- \
  "$BIN" plan "$OUT/a100-named.yaml" --target 'refused_pct<=0' --price A100=3.2 --max 2
# An unknown metric did not list the known ones.
expect metric-unknown 2 "unknown metric 'p9' \(known: p50_pending_s, .*refused_pct" -- \
  "$BIN" plan "$S/capacity-planning.yaml" --target 'p9<=1'
expect metric-unknown-field 2 "the summary has no metric 'no_such_field' \(known: .*placements" -- \
  "${PLAN[@]}" --target 'no_such_field<=1'
# monitor --hook-path on a missing path exited 0 and printed nothing.
expect hook-path-missing 2 "^command line: --hook-path: '$OUT/no-such-dir' is not a folder" -- \
  "$BIN" monitor --hook-path "$OUT/no-such-dir" --no-pods --once
# One malformed pending pod stopped a whole cluster's what-if: it is left out
# with its field and reason (pods.csv, a warning), the rest runs; --strict
# keeps exit 2. lab/notebook-dave asks gpumem 'lots' (line 1346).
sed "1346s/nvidia.com\/gpumem: '8000'/nvidia.com\/gpumem: 'lots'/" "$SRC/examples/snapshot/cluster.yaml" > "$OUT/bad-pod.yaml"
WHY="bad-pod.yaml:1346: spec.containers\[0\].resources.nvidia.com/gpumem: quantity 'lots' has no digits"
expect malformed-simulate 0 "^warning: .*$WHY.*pod 'lab/notebook-dave' left Pending, the rest runs" -- \
  "$BIN" simulate --snapshot "$OUT/bad-pod.yaml" --out "$OUT/bad"
expect malformed-row 0 "^lab/notebook-dave,queue,0,0.000,,,,refused,,,InvalidRequest,queue,,\".*$WHY" -- cat "$OUT/bad/pods.csv"
expect malformed-rest-runs 0 '"placements": *[1-9]' -- cat "$OUT/bad/summary.json"
expect malformed-strict 2 "^.*$WHY" -- "$BIN" simulate --snapshot "$OUT/bad-pod.yaml" --out "$OUT/bad2" --strict
expect malformed-defrag 1 "warning: .*$WHY" -- "$BIN" defrag --snapshot "$OUT/bad-pod.yaml"
expect malformed-defrag-strict 2 "$WHY" -- "$BIN" defrag --snapshot "$OUT/bad-pod.yaml" --strict
expect malformed-plan-strict 2 "$WHY" -- \
  "$BIN" plan --snapshot "$OUT/bad-pod.yaml" --add "$SRC/examples/place/t4-node.yaml" --target 'refused_pct<=0' --strict
# Progress: never when stderr is not a terminal; on a terminal unless --quiet.
expect plan-quiet-off-tty 0 '^$' -- bash -c "'$OUT/plan.sh' --seeds 1-3 2>&1 >/dev/null"
if command -v script >/dev/null; then
  expect plan-progress-tty 0 'plan \[#+ *\] 100%' -- script -qec "'$OUT/plan.sh' --seeds 1-3 >/dev/null" /dev/null
  expect plan-progress-quiet 0 '^$' -- \
    bash -c "script -qec \"'$OUT/plan.sh' --seeds 1-3 --quiet >/dev/null\" /dev/null | tr -d '\r\n'"
fi
report
