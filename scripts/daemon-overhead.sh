#!/usr/bin/env bash
# Measures the CPU time and memory of the floe daemon (policy ice) managing 20 synthetic
# apps, and of earlyoom (Debian package, default options) on the same load, each for
# DURATION seconds. Needs root, python3 and earlyoom. Cleans up its apps and cgroups.
#   usage: sudo scripts/daemon-overhead.sh [DURATION=60] [FLOE=target/release/floed]
# FLOE is `floed` (the daemon alone) or `floe` (run as `floe daemon`); either way the
# figures are the daemon's and its supervisor's together. Memory is the peak over the
# run, sampled each second: RSS (VmRSS, every page mapped, shared ones counted in full:
# libc's pages count whole in each process), PSS (shared pages split among the
# processes that map them) and USS (Private_Clean + Private_Dirty of smaps_rollup: the
# pages no other process maps, what ending it would free).
# IDLE_SAMPLE_MS=100 makes floe sample at its busy rate all the time (its cost under
# continuous memory pressure); by default it samples at 1 Hz while nothing happens.
set -euo pipefail
DURATION=${1:-60}
FLOE=${2:-target/release/floed}
TAG=floe-overhead-$$
CFG=/tmp/$TAG.toml
HZ=$(getconf CLK_TCK)
command -v earlyoom >/dev/null || { echo "needs earlyoom (apt-get install earlyoom)" >&2; exit 2; }
[ -x "$FLOE" ] || { echo "needs $FLOE (cargo build --release)" >&2; exit 2; }

apps=()
cleanup() {
  for p in "${apps[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for base in /sys/fs/cgroup/unified /sys/fs/cgroup/memory /sys/fs/cgroup/freezer /sys/fs/cgroup; do
    [ -d "$base/$TAG" ] || continue
    for d in "$base/$TAG"/*/; do
      [ -d "$d" ] || continue
      [ -f "$d/cgroup.freeze" ] && { echo 0 > "$d/cgroup.freeze"; } 2>/dev/null
      rmdir "$d" 2>/dev/null || true
    done
    rmdir "$base/$TAG" 2>/dev/null || true
  done
  rm -f "$CFG" "/tmp/$TAG.sock" "/tmp/$TAG.db" "/tmp/$TAG.db-wal" "/tmp/$TAG.db-shm"
}
trap cleanup EXIT

{
  echo "policy = \"ice\""
  echo "cgroup_root = \"$TAG\""
  echo "socket = \"/tmp/$TAG.sock\""
  echo "state_db = \"/tmp/$TAG.db\""
  [ -n "${IDLE_SAMPLE_MS:-}" ] && echo "idle_sample_ms = $IDLE_SAMPLE_MS"
  for i in $(seq 1 20); do printf '[[app]]\nname = "app%02d"\ncmdline = "%s-app%02d"\n' "$i" "$TAG" "$i"; done
} > "$CFG"

# 20 apps: each keeps 16 MiB of heap and touches a quarter of it twice a second.
for i in $(seq 1 20); do
  python3 -c 'import mmap,time
m=mmap.mmap(-1,16<<20,flags=mmap.MAP_PRIVATE|mmap.MAP_ANONYMOUS)
for i in range(0,16<<20,4096): m[i]=1
while True:
    for i in range(0,4<<20,4096): m[i]=2
    time.sleep(0.5)' "$(printf '%s-app%02d' "$TAG" "$i")" &
  apps+=($!)
done
sleep 1

measure() { # name pid...
  local name=$1; shift
  local t0=0 t1=0 rss pss uss p_pss p_uss peak=0 peak_pss=0 peak_uss=0
  for p in "$@"; do t0=$((t0 + $(awk '{print $14+$15}' "/proc/$p/stat"))); done
  local end=$((SECONDS + DURATION))
  while [ $SECONDS -lt $end ]; do
    rss=0; pss=0; uss=0
    for p in "$@"; do
      rss=$((rss + $(awk '/^VmRSS:/{print $2}' "/proc/$p/status")))
      read -r p_pss p_uss < <(awk '/^Pss:/{s=$2} /^Private_(Clean|Dirty):/{u+=$2} END{print s, u}' "/proc/$p/smaps_rollup")
      pss=$((pss + p_pss)); uss=$((uss + p_uss))
    done
    [ $rss -gt $peak ] && peak=$rss
    [ $pss -gt $peak_pss ] && peak_pss=$pss
    [ $uss -gt $peak_uss ] && peak_uss=$uss
    sleep 1
  done
  for p in "$@"; do t1=$((t1 + $(awk '{print $14+$15}' "/proc/$p/stat"))); done
  awk -v n="$name" -v t=$((t1 - t0)) -v hz="$HZ" -v d="$DURATION" -v r="$peak" -v s="$peak_pss" -v u="$peak_uss" \
    'BEGIN { printf "%-34s cpu %.2f s in %d s (%.2f %%)  peak RSS %d KiB, PSS %d KiB, USS %d KiB\n", n, t/hz, d, 100*t/hz/d, r, s, u }'
}

case "$(basename "$FLOE")" in
  floed) "$FLOE" --config "$CFG" > /tmp/$TAG.log 2>&1 & ;;
  *) "$FLOE" daemon --config "$CFG" > /tmp/$TAG.log 2>&1 & ;;
esac
DAEMON=$!
sleep 2
SUP=$(pgrep -f -- "--supervise $DAEMON " || true)
[ -n "$SUP" ] || { echo "no supervisor for $FLOE (pid $DAEMON):" >&2; cat /tmp/$TAG.log >&2; exit 1; }
measure "$(basename "$FLOE"): daemon + supervisor" "$DAEMON" $SUP
kill -TERM "$DAEMON"; wait "$DAEMON" 2>/dev/null || true
rm -f /tmp/$TAG.log

earlyoom > /dev/null 2>&1 &
EO=$!
sleep 2
measure "earlyoom (defaults)" "$EO"
kill "$EO"; wait "$EO" 2>/dev/null || true
