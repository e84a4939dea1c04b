#!/usr/bin/env bash
# Runs every `floe experiment` with the floe built from git revision REV and with the
# working tree's, and prints the lines of their reports that differ, experiment by
# experiment: what a model change moved, beside the papers' figures. The build of REV
# happens in a temporary git worktree (removed afterwards) with its own target dir.
#   usage: scripts/compare-experiments.sh REV [EXPERIMENT...] [-- FLAGS]
#   e.g.   scripts/compare-experiments.sh HEAD~1 ice seal -- --quick
# With no EXPERIMENT every one runs (full runs take about 7 minutes each side on
# 2 cores; --quick about 1 minute). Outputs stay in $OUT (default a temporary dir).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
rev=$1
shift
exps=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  exps+=("$1")
  shift
done
[ "${1:-}" = "--" ] && shift
flags=("$@")
[ ${#exps[@]} -gt 0 ] || exps=(ice seal smartlmk selective asap)
git rev-parse --verify --quiet "$rev^{commit}" >/dev/null || { echo "not a revision: $rev" >&2; exit 2; }

out=${OUT:-$(mktemp -d /tmp/floe-compare.XXXXXX)}
mkdir -p "$out"
tree=$(mktemp -d /tmp/floe-rev.XXXXXX)
cleanup() { git worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"; }
trap cleanup EXIT
git worktree add --detach "$tree" "$rev" >/dev/null

echo "building $rev in $tree and the working tree ..." >&2
(cd "$tree" && cargo build --release -q -p floe)
cargo build --release -q -p floe
cp "$tree/target/release/floe" "$out/floe-before"
cp target/release/floe "$out/floe-after"

status=0
for e in "${exps[@]}"; do
  for side in before after; do
    "$out/floe-$side" experiment "$e" "${flags[@]}" >"$out/$e.$side.txt"
  done
  echo "=== $e ($rev -> working tree)"
  if diff "$out/$e.before.txt" "$out/$e.after.txt"; then
    echo "(identical)"
  else
    status=1
  fi
done
echo "reports in $out" >&2
exit $status
