# Sourced by the CLI contract scripts: expect <name> <want-rc> <regex> -- command...
# runs the command, checks its exit code and that its output matches; counts
# checks and failures. Callers end with `report`.
fail=0; checks=0
expect() {
  local name="$1" want="$2" pattern="$3"; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  checks=$((checks + 1))
  if [ "$rc" != "$want" ] || ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL $name: rc=$rc (want $want), output:"; echo "$out" | head -20; fail=$((fail + 1))
  fi
}
report() {
  echo "$((checks - fail)) passed, $fail failed"
  [ "$fail" -eq 0 ]
}
