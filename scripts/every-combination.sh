#!/usr/bin/env bash
# `floe sim` on every workload under every policy (each workload on its own device), and
# on every device under every policy (Ice's video call): each run must exit 0 within the
# time limit. Prints one line per run that does not, then the counts; exits 1 if any.
#
#   scripts/every-combination.sh [FLOE] [SECONDS]
#
# FLOE: the binary (default: target/release/floe, built if missing); SECONDS: the limit
# of one run (default 300). One run at a time: 437 runs in 30 minutes on one core.
set -uo pipefail
cd "$(dirname "$0")/.."
floe=${1:-target/release/floe}
limit=${2:-300}
if [ ! -x "$floe" ]; then
  cargo build --release -q -p floe || exit 1
fi
mapfile -t workloads < <("$floe" list workloads | awk 'NF {print $1}')
mapfile -t policies < <("$floe" list policies | awk 'NF {print $1}')
mapfile -t devices < <("$floe" list devices | awk 'NF {print $1}')
runs=0
failed=0
start=$SECONDS

one() {
  local err rc
  err=$(timeout "$limit" "$floe" sim "$@" 2>&1 >/dev/null)
  rc=$?
  runs=$((runs + 1))
  if [ "$rc" -ne 0 ]; then
    failed=$((failed + 1))
    if [ "$rc" -eq 124 ]; then
      err="over ${limit} s"
    fi
    printf 'exit %s: floe sim %s: %s\n' "$rc" "$*" "$(printf '%s' "$err" | head -n 1)"
  fi
}

for w in "${workloads[@]}"; do
  for p in "${policies[@]}"; do
    one --workload "$w" --policy "$p"
  done
done
for d in "${devices[@]}"; do
  for p in "${policies[@]}"; do
    one --device "$d" --workload ice-video-call --policy "$p"
  done
done
echo "${runs} runs (${#workloads[@]} workloads and ${#devices[@]} devices, ${#policies[@]} policies each), ${failed} failed, $((SECONDS - start)) s"
[ "$failed" -eq 0 ]
