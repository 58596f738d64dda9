#!/usr/bin/env bash
# gpuslice realgpu labs on the fake driver (issue 23): every row the fake can
# show passes; the seeds' own refusal lines come back byte for byte (the fake
# models each seed's card with the context footprint its figures show); the
# JSON report has one record per row; bad options exit 2.
set -u
BIN="$1"; OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source "$(dirname "$0")/expect.sh"

expect labs-all 0 '17 PASS, 0 FAIL, 5 SKIP, 0 INFO' -- \
  "$BIN" realgpu labs --lab all --driver fake --out "$OUT/all"
for line in 'Device 0 OOM 21244149760 / 20971520000' 'Device 0 OOM 4399824896 / 4194304000' \
            'Device 0 OOM 8594128896 / 8388608000'; do
  checks=$((checks + 1))
  grep -q "$line" "$OUT/all/labs.md" || { echo "FAIL seed line '$line' not in labs.md"; fail=$((fail + 1)); }
done
checks=$((checks + 1))
python3 - "$OUT/all/labs.json" <<'PY' || fail=$((fail + 1))
import json, sys
report = json.load(open(sys.argv[1]))
rows = {f"{r['lab']}.{r['step']}": r for r in report["rows"]}
fields = {"lab", "step", "seed", "ours", "status", "passed", "driver", "gpu", "driver_version", "date"}
problems = [f"{k}: missing {sorted(fields - r.keys())}" for k, r in rows.items() if not fields <= r.keys()]
# A failed row carries its evidence (every utilisation sample, the probe's
# own busy share), so a red run says whether the cap slipped or a sample did.
problems += [f"{k}: {r['status']} {r['why']}; figures {json.dumps(r.get('figures'))}"
             for k, r in rows.items() if r["status"] == "FAIL"]
MiB = 1 << 20
want = {
    "000.2": ("granted_bytes", 0), "000.3": ("granted_bytes", 19500 * MiB),
    "001.3": ("granted_bytes", 3584 * MiB), "000.1": ("slice_bytes", 20000 * MiB),
}
for k, (field, value) in want.items():
    got = rows.get(k, {}).get("figures", {}).get(field)
    if got != value: problems.append(f"{k}: {field} {got}, want {value}")
if rows.get("000.1", {}).get("gpu") != "NVIDIA A40": problems.append("000.1 did not run on the modelled A40")
if any(r["driver"] != "fake" for r in rows.values()): problems.append("a row not on the fake driver")
if len(rows) != 22: problems.append(f"{len(rows)} rows, want 22")
print("\n".join("FAIL labs.json " + p for p in problems))
sys.exit(1 if problems else 0)
PY

expect labs-one 0 '## Lab 002' -- "$BIN" realgpu labs --lab 002 --driver fake
checks=$((checks + 1))
"$BIN" realgpu labs --lab 002 --driver fake 2>/dev/null | grep -q '## Lab 000' && { echo "FAIL --lab 002 ran 000"; fail=$((fail + 1)); }
expect labs-json 0 '"status": "PASS"' -- "$BIN" realgpu labs --lab 002 --driver fake --json
expect labs-overhead-on 0 '0 PASS, 0 FAIL, 0 SKIP, 5 INFO' -- \
  "$BIN" realgpu labs --lab overhead --overhead on --driver fake --launches 2000 --allocs 3 --seconds 4
# A row that fails makes the command fail: a compute limiter too slow to act
# inside the window (its period, 4 s, in a 6 s run) leaves the caps unheld.
expect labs-row-fails 1 '3 PASS, 3 FAIL, 0 SKIP' -- \
  env GPUSLICE_LIMITER_PERIOD_MS=4000 "$BIN" realgpu labs --lab 000 --driver fake --seconds 6
expect labs-bad-lab 2 '--lab' -- "$BIN" realgpu labs --lab 003 --driver fake
expect labs-torch-on-fake 2 '--framework' -- "$BIN" realgpu labs --framework torch --driver fake
expect labs-bad-libvgpu 2 'compare-libvgpu' -- "$BIN" realgpu labs --compare-libvgpu "$OUT/none.so" --driver fake
expect labs-bad-overhead 2 '--overhead' -- "$BIN" realgpu labs --overhead sometimes --driver fake
report
