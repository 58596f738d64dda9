#!/usr/bin/env bash
# Fails when a tracked C or C++ file is not as clang-format (the repo's
# .clang-format) would write it, naming each file; `--fix` rewrites them.
# CI runs it (.ci/run); run it before a commit, or `clang-format -i FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format-check: clang-format is not installed (apt-get install clang-format)"; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc' '*.c')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
off=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || off+=("$f")
done
if [ ${#off[@]} -gt 0 ]; then
  echo "format-check: ${#off[@]} file(s) differ from clang-format (scripts/format-check.sh --fix rewrites them):"
  printf '  %s\n' "${off[@]}"
  exit 1
fi
echo "format-check: ${#files[@]} files as clang-format writes them"
