#!/usr/bin/env bash
# Measures on this kernel how a 60 Hz foreground loop's frame times change when cached
# "background apps" that keep touching a working set share a memory cgroup (v1) with it
# under a limit, with zram swap: the mechanism Ice's Fig. 1 is about (background
# refaults and reclaim delaying the foreground), as a real kernel does it. Needs root,
# gcc, cgroup v1 memory and an unused /dev/zram0; creates and removes its own cgroup,
# processes and zram swap, and leaves /dev/zram0 reset.
#   usage: sudo scripts/frame-stall-probe.sh [LIMIT_MIB=512] [SECONDS=30] [BG_APPS="0 8"] [FILES=0|1] [MODE=cgroup|global]
# MODE=cgroup puts the loop and the apps in one memory cgroup limited to LIMIT_MIB
# (memory cgroup reclaim, in the allocating task). MODE=global leaves them in the root
# and instead pins (mlocks) all of the machine's available memory but LIMIT_MIB before
# each run, so the whole machine is short of memory as a phone is: kswapd reclaims at
# the zone watermarks and an allocating task enters direct reclaim below the min one.
# The pin ends with the run (and by itself after the run's time plus five minutes).
# After a global run the machine swaps its other processes back in for a while; a run
# started straight after one can lose frames to that (seen once), so leave a pause.
# Each app: 200 MiB heap, a 60 MiB working set spread over it, 10 MiB touched per
# wakeup, a wakeup every 5 s on average; the foreground: a 100 MiB working set (1/60 of
# it touched per frame), a fresh 256 KiB buffer per frame and 4 ms of CPU. With
# FILES=1 each app also maps its own 100 MiB file (code; the foreground reads 1/60 of
# its file per frame, a background wakeup as many file pages as heap pages), so
# reclaim drops file pages that come back from the disk. Files live in a temporary
# directory under /var/tmp (on disk) and are removed. With FILES=1 these variables, if
# set, change the files' part: BG_FILE_SHARE (file pages a background wakeup reads per
# heap page it touches, 1), BG_FILE_SET_MIB (the file's part it reads them from, 60),
# READ_AHEAD_KB (the disk's read_ahead_kb for the run, which sets the read-around of a
# fault on a mapped file; restored afterwards); the run also prints the disk's 4 KiB
# random-read latency and sequential bandwidth (O_DIRECT, on one of the files).
# SWAP=file swaps to a 3 GiB swap file under /var/tmp instead of zram, with
# vm.page-cluster 0 (no swap readahead) for the run, and prints the disk's read and
# write speeds (O_DIRECT, on the swap file before mkswap); both restored or removed after.
# MIN_FREE_KB, if set, is vm.min_free_kbytes for the run (restored afterwards): the
# kernel derives the zone watermarks from it (low = 5/4, high = 3/2 of min), so
# MIN_FREE_KB=699051 gives min / low / high of 683 / 853 / 1,024 MiB, floe's reading of
# the P20's watermarks (Ice Table 4's H_wm as MiB). Use it with MODE=global.
set -euo pipefail
LIMIT=${1:-512}
SECS=${2:-30}
NS=${3:-"0 8"}
FILES=${4:-0}
MODE=${5:-cgroup}
case $MODE in cgroup | global) ;; *) echo "MODE must be cgroup or global, not $MODE" >&2; exit 2 ;; esac
TAG=floe-probe-$$
CG=/sys/fs/cgroup/memory/$TAG
BIN=$(mktemp -d /tmp/$TAG.XXXX)
DATA=$(mktemp -d /var/tmp/$TAG.XXXX)
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }
[ -d /sys/fs/cgroup/memory ] || { echo "needs the cgroup v1 memory hierarchy" >&2; exit 2; }
SWAP=${SWAP:-zram}
case $SWAP in zram | file) ;; *) echo "SWAP must be zram or file, not $SWAP" >&2; exit 2 ;; esac
if [ "$SWAP" = zram ]; then
  grep -q zram0 /proc/swaps && { echo "/dev/zram0 is already a swap device; not touching it" >&2; exit 2; }
  [ "$(cat /sys/block/zram0/disksize)" = 0 ] || { echo "/dev/zram0 is in use (disksize set)" >&2; exit 2; }
else
  [ "$(wc -l < /proc/swaps)" -le 1 ] || { echo "another swap device is active; the run would use it too" >&2; exit 2; }
fi
gcc -O2 -o "$BIN/fg" "$here/probe/fg.c"
gcc -O2 -o "$BIN/bg" "$here/probe/bg.c" -lm
gcc -O2 -o "$BIN/pin" "$here/probe/pin.c"
gcc -O2 -o "$BIN/disk" "$here/probe/disk.c"
ra_file=""
ra_old=""
cluster_old=$(cat /proc/sys/vm/page-cluster)
min_free_old=$(cat /proc/sys/vm/min_free_kbytes)

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -d "$CG" ] && rmdir "$CG" 2>/dev/null || true
  [ -n "$ra_file" ] && echo "$ra_old" > "$ra_file"
  if [ "$SWAP" = zram ]; then
    swapoff /dev/zram0 2>/dev/null || true
    echo 1 > /sys/block/zram0/reset 2>/dev/null || true
  else
    swapoff "$DATA/swap" 2>/dev/null || true
    echo "$cluster_old" > /proc/sys/vm/page-cluster
  fi
  echo "$min_free_old" > /proc/sys/vm/min_free_kbytes
  rm -rf "$BIN" "$DATA"
}
trap cleanup EXIT

if [ "$SWAP" = zram ]; then
  grep -qw lz4 /sys/block/zram0/comp_algorithm && echo lz4 > /sys/block/zram0/comp_algorithm
  echo 4G > /sys/block/zram0/disksize
  mkswap /dev/zram0 >/dev/null
  swapon /dev/zram0
else
  dd if=/dev/zero of="$DATA/swap" bs=1M count=3072 status=none
  chmod 600 "$DATA/swap"
  echo "disk: $("$BIN/disk" "$DATA/swap" 2000 w)"
  mkswap "$DATA/swap" >/dev/null
  echo 0 > /proc/sys/vm/page-cluster
  swapon "$DATA/swap"
fi
if [ -n "${MIN_FREE_KB:-}" ]; then
  echo "$MIN_FREE_KB" > /proc/sys/vm/min_free_kbytes
  echo "watermarks (MiB, summed over zones): $(awk '$1 == "min" {m += $2} $1 == "low" {l += $2} $1 == "high" {h += $2} END {printf "min %d low %d high %d", m / 256, l / 256, h / 256}' /proc/zoneinfo)"
fi
if [ "$MODE" = cgroup ]; then
  mkdir "$CG"
  echo $((LIMIT * 1024 * 1024)) > "$CG/memory.limit_in_bytes"
  echo 100 > "$CG/memory.swappiness"
  join="echo \$\$ > $CG/cgroup.procs &&"
  counters() { awk '/^pgmajfault|^pgpgout/ {printf "%s=%s ", $1, $2}' "$CG/memory.stat"; }
else
  join=""
  counters() {
    awk '/^(allocstall_(dma32|normal|movable)|pgscan_(kswapd|direct)|pgsteal_(kswapd|direct)|workingset_refault_(anon|file)|pswpin|pswpout|pgmajfault) / {printf "%s=%s ", $1, $2}' /proc/vmstat
    # kswapd's CPU time (utime + stime of every kswapd thread), in clock ticks.
    local t=0 pid
    for pid in $(pgrep -x 'kswapd[0-9]*'); do
      t=$((t + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
    done
    printf "kswapd_cpu_ticks=%s " "$t"
  }
fi

fgfile=()
if [ "$FILES" = 1 ]; then
  max=0
  for n in $NS; do [ "$n" -gt "$max" ] && max=$n; done
  for i in fg $(seq 0 $((max - 1))); do head -c $((100 * 1024 * 1024)) /dev/urandom > "$DATA/$i"; done
  sync
  fgfile=(100 "$DATA/fg")
  echo "disk: $("$BIN/disk" "$DATA/fg" 2000)"
  if [ -n "${READ_AHEAD_KB:-}" ]; then
    dev=$(basename "$(findmnt -no SOURCE --target "$DATA")")
    [ -e "/sys/block/$dev" ] || dev=$(lsblk -no PKNAME "/dev/$dev")
    ra_file=/sys/block/$dev/queue/read_ahead_kb
    ra_old=$(cat "$ra_file")
    echo "$READ_AHEAD_KB" > "$ra_file"
  fi
fi
for n in $NS; do
  if [ "$MODE" = global ]; then
    avail=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
    pin=$((avail - LIMIT))
    [ "$pin" -gt 0 ] || { echo "only $avail MiB available, less than LIMIT" >&2; exit 2; }
    "$BIN/pin" "$pin" $((SECS + 300 + 20)) > "$BIN/pinned" &
    pids+=($!)
    until grep -q pinned "$BIN/pinned"; do
      kill -0 "${pids[-1]}" 2>/dev/null || { echo "could not pin $pin MiB" >&2; exit 1; }
      sleep 1
    done
  fi
  # Nothing of the files in the page cache before a run (they are this script's own).
  [ "$FILES" = 1 ] && for f in "$DATA"/*; do dd if="$f" iflag=nocache count=0 status=none; done
  for ((i = 0; i < n; i++)); do
    bgfile=""
    [ "$FILES" = 1 ] && bgfile="$DATA/$i ${BG_FILE_SHARE:-1} ${BG_FILE_SET_MIB:-60}"
    sh -c "$join exec $BIN/bg 200 60 10 5 $i $bgfile" &
    pids+=($!)
  done
  sleep $((n > 0 ? 20 : 1))
  before=$(counters)
  res=$(sh -c "$join exec $BIN/fg 100 $SECS 4 256 ${fgfile[*]}")
  after=$(counters)
  echo "bg_apps $n limit ${LIMIT}MiB files $FILES mode $MODE${pin:+ pinned ${pin}MiB}: $res"
  echo "  counters before: $before"
  echo "  counters after:  $after"
  # What zram holds at the end: mm_stat's orig_data_size and compr_data_size, bytes.
  [ "$SWAP" = zram ] && echo "  zram: $(awk '{printf "orig_bytes=%s compr_bytes=%s", $1, $2}' /sys/block/zram0/mm_stat)"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
done
