#!/usr/bin/env bash
# gpuslice defrag: the printed plan, moves.csv, summary.json, report.html and
# exit codes (0 a plan / 1 no plan within --max-moves / 2 bad input), on the
# hand-built snapshots of tests/defrag/data (minimums worked out in each file).
set -u
BIN="$1"; SRC="$2"; OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source "$(dirname "$0")/expect.sh"
D="$SRC/tests/defrag/data"
X="$SRC/examples/snapshot"
expect one-move 0 'ml/small-1: a100-a card 0 -> a100-b card 1, 20000 MiB' -- "$BIN" defrag --snapshot "$D/one-move.yaml"
expect one-move-proven 0 'plan: 1 move, 20000 MiB moved, 1 pod restarted, 2 nodes touched; proven minimal' -- \
  "$BIN" defrag --snapshot "$D/one-move.yaml" --for ml/finetune
expect one-move-target 0 'ml/finetune: a100-a card 0' -- "$BIN" defrag --snapshot "$D/one-move.yaml"
expect two-moves 0 'plan: 2 moves, 40000 MiB moved.*proven minimal' -- "$BIN" defrag --snapshot "$D/two-moves.yaml"
expect three-moves 0 'plan: 3 moves, 45000 MiB moved.*proven minimal' -- "$BIN" defrag --snapshot "$D/three-moves.yaml"
expect three-moves-heuristic 0 'plan: 3 moves.*proven minimal \(heuristic search\)' -- \
  "$BIN" defrag --snapshot "$D/three-moves.yaml" --search heuristic
expect six-moves-within-5 1 'no plan within 5 moves: every plan needs at least 6 moves \(proven' -- \
  "$BIN" defrag --snapshot "$D/six-moves.yaml"
expect six-moves-within-6 0 'plan: 6 moves, 72000 MiB moved.*proven minimal' -- \
  "$BIN" defrag --snapshot "$D/six-moves.yaml" --max-moves 6
expect budget-forbids 0 'PodDisruptionBudget serving/llm: 1 healthy of 1 matched, 1 desired: allows 0 evictions' -- \
  "$BIN" defrag --snapshot "$D/budget-forbids.yaml"
expect budget-forbids-plan 0 '2\. ml/small-2: a100-a card 1 -> a100-b card 0, 15000 MiB' -- \
  "$BIN" defrag --snapshot "$D/budget-forbids.yaml"
checks=$((checks + 1))
"$BIN" defrag --snapshot "$D/budget-forbids.yaml" | grep -q 'serving/llm-0:' && { echo "FAIL budget-forbids moved llm-0"; fail=$((fail + 1)); }
# HAMi v2.10's namespace quota (strict): at 200000 MiB ml/finetune is refused whatever moves are
# made; at exactly 210000 the one-move plan stands, so a move must not count its pod twice.
expect quota-refuses 1 'ml/finetune: namespace ml.s ResourceQuota limits.nvidia.com/gpumem: the pod counts at least 70000 MiB, 60000 of 200000 are left \(10000 over\)' -- \
  "$BIN" defrag --snapshot "$D/one-move.yaml" --quotas "$D/quota-ml-200000.yaml"
expect quota-exact 0 'ml/small-1: a100-a card 0 -> a100-b card 1, 20000 MiB' -- \
  "$BIN" defrag --snapshot "$D/one-move.yaml" --quotas "$D/quota-ml-210000.yaml"
expect quota-missing 2 'quota-none.yaml' -- "$BIN" defrag --snapshot "$D/one-move.yaml" --quotas "$D/quota-none.yaml"
expect device-config-missing 2 'device-config-none.yaml' -- \
  "$BIN" defrag --snapshot "$D/one-move.yaml" --device-config "$D/device-config-none.yaml"
expect protect 1 'no plan: no sequence of moves places the targets' -- \
  "$BIN" defrag --snapshot "$D/one-move.yaml" --protect ml
expect movable-selector 0 'ml/small-2: a100-a card 1 -> a100-b card 1, 20000 MiB' -- \
  "$BIN" defrag --snapshot "$D/one-move.yaml" --movable 'app!=small-1'
expect free-cards 0 'free-cards/card-2: a100-a card 0' -- "$BIN" defrag --snapshot "$D/one-move.yaml" --free-cards 2:A100
# The bundled example: the 70000 MiB fine-tune that waits 3 h for an A100 card.
expect example 1 'no plan: no sequence of moves places the targets \(proven, exact search\)' -- \
  "$BIN" defrag --snapshot "$X/cluster.yaml" --for ml/finetune-7b-0
expect example-add 1 'instead: plan --add \(.*a100-node.yaml\): 1 node named gpu-a100-new-<i> places ml/finetune-7b-0' -- \
  "$BIN" defrag --snapshot "$X/cluster.yaml" --for ml/finetune-7b-0 --add "$X/a100-node.yaml"
expect example-json 1 '"found":false.*"impossible":true' -- \
  "$BIN" defrag --snapshot "$X/cluster.json" --for ml/finetune-7b-0 --json
# Files.
expect out 0 'wrote .*moves.csv' -- "$BIN" defrag --snapshot "$D/two-moves.yaml" --out "$OUT/two"
checks=$((checks + 1))
[ "$(head -1 "$OUT/two/moves.csv")" = "step,pod,from_node,from_cards,to_node,to_cards,gpu_mib" ] &&
  [ "$(sed -n 2p "$OUT/two/moves.csv")" = "1,ml/small-1,a100-a,0,a100-b,1,20000" ] &&
  [ "$(wc -l < "$OUT/two/moves.csv")" = "3" ] || { echo "FAIL moves.csv:"; cat "$OUT/two/moves.csv"; fail=$((fail + 1)); }
checks=$((checks + 1))
python3 - "$OUT/two/summary.json" <<'PY' || { echo "FAIL summary.json"; fail=$((fail + 1)); }
import json, sys
s = json.load(open(sys.argv[1]))
assert s["found"] is True and s["moves"] == 2 and s["gpu_mib_moved"] == 40000 and s["pods_restarted"] == 2
assert s["nodes_touched"] == 2 and s["proven_minimal"] is True and s["lower_bound"] == 2 and s["search"] == "exact"
assert [m["pod"] for m in s["plan"]] == ["ml/small-1", "ml/small-2"]
assert s["targets"][0] == {"node": "a100-a", "cards": [0], "uuids": ["GPU-a100-a-0"], "pod": "ml/finetune"}
assert s["add"] is None
PY
checks=$((checks + 1))
grep -q '<canvas id="chart-memory">' "$OUT/two/report.html" && ! grep -Eq '<script[^>]+src=|<link[^>]+href=' "$OUT/two/report.html" ||
  { echo "FAIL report.html is not self-contained"; fail=$((fail + 1)); }
expect out-no-plan 1 'no plan' -- "$BIN" defrag --snapshot "$D/six-moves.yaml" --out "$OUT/six"
checks=$((checks + 1))
[ "$(wc -l < "$OUT/six/moves.csv")" = "1" ] && grep -q '"lower_bound": 6' "$OUT/six/summary.json" ||
  { echo "FAIL no-plan outputs"; fail=$((fail + 1)); }
# Bad input: exit 2 with a reason.
expect for-unknown 2 "--for: the snapshot has no pod 'ml/nope'" -- "$BIN" defrag --snapshot "$X/cluster.yaml" --for ml/nope
expect for-running 2 "'ml/train-llm-7b-0' is already running on node 'gpu-a100-1'" -- \
  "$BIN" defrag --snapshot "$X/cluster.yaml" --for ml/train-llm-7b-0
expect free-cards-too-many 2 '--free-cards: 11 free cards asked, but the fleet has 10 usable cards' -- \
  "$BIN" defrag --snapshot "$X/cluster.yaml" --free-cards 11
expect free-cards-model 2 "has 2 usable cards of model 'A100'" -- "$BIN" defrag --snapshot "$X/cluster.yaml" --free-cards 3:A100
expect free-cards-bad 2 "--free-cards: 'x': write N or N:MODEL" -- "$BIN" defrag --snapshot "$X/cluster.yaml" --free-cards x
expect two-goals 2 'give one of --for, --for-queue and --free-cards' -- \
  "$BIN" defrag --snapshot "$X/cluster.yaml" --for ml/finetune-7b-0 --free-cards 1
expect bad-selector 2 "--movable: 'app in web': 'in' and 'notin' need a list of values in parentheses" -- \
  "$BIN" defrag --snapshot "$X/cluster.yaml" --movable 'app in web'
expect random-policy 2 '--policy: random draws nodes by chance' -- "$BIN" defrag --snapshot "$X/cluster.yaml" --policy random
expect bad-max-moves 2 '--max-moves: must be a whole number from 0 to 1000' -- \
  "$BIN" defrag --snapshot "$X/cluster.yaml" --max-moves -1
expect bad-search 2 "--search: 'fast': use auto, exact or heuristic" -- "$BIN" defrag --snapshot "$X/cluster.yaml" --search fast
expect missing-file 2 'nope.yaml' -- "$BIN" defrag --snapshot "$OUT/nope.yaml"
expect bad-add 2 'needs exactly one Node' -- "$BIN" defrag --snapshot "$X/cluster.yaml" --add "$X/cluster.yaml"
report
