#!/usr/bin/env bash
# Runs the same synthetic phone on this kernel and in floe's simulator and prints their
# counts side by side: scripts/frame-stall-probe.sh in global mode (eight cached
# "background apps" of 200 MiB touching 10 MiB of a 60 MiB set every 5 s on average,
# and a 60 Hz loop with a 100 MiB working set, with all of the machine's memory but
# LIMIT pinned, zram swap), and `floe sim` on the same processes (scripts/probe/floe/)
# on a device built from this machine's /proc/zoneinfo: its watermarks, and LIMIT plus
# the zones' high watermarks as the memory apps can fill (MemAvailable after the pin is
# free memory less the zones' reserves, the high watermarks and the lowmem protections,
# and user pages cannot take the protections). zram's ratio and kswapd's CPU time per
# reclaimed page are the ones the probe's run measured (floe charges that time as
# compression, which it charges per swapped page); with FILES=1 so are the disk's 4 KiB
# read latency and sequential bandwidth. Refaults, reclaim, direct reclaim and slow
# frames are what the two are compared on; the kernel's row also gives the loop's own
# major faults (faults, each reading up to a cluster; floe counts pages, not faults).
#
# FILES=1 gives every process its own 100 MiB file mapped like code, read the way floe's
# apps read theirs: a background wakeup reads a quarter as many file pages as it touches
# heap pages, from the file's first 56.7 MiB; the disk's read_ahead_kb is 32 for the run
# (floe reads file faults in clusters of 8 pages). Needs what the probe needs (root, gcc,
# an unused /dev/zram0); each LIMIT takes one to two minutes, most of it pinning memory.
#
# SWAP=file swaps to a 3 GiB swap file on this machine's disk instead of zram (the probe
# turns swap readahead off for the run, as floe reads a swapped page alone), and floe
# runs `swap-all` (flash swap for every app) on a device with that disk's measured read
# and write speeds and no zram.
#   usage: sudo scripts/sim-vs-kernel.sh [LIMITS_MIB="384 512 768"] [SECONDS=30] [FILES=0] [SWAP=zram]
set -euo pipefail
cd "$(dirname "$0")/.."
LIMITS=${1:-"384 512 768"}
SECS=${2:-30}
FILES=${3:-0}
case $FILES in 0 | 1) ;; *) echo "FILES must be 0 or 1, not $FILES" >&2; exit 2 ;; esac
SWAP=${4:-zram}
case $SWAP in zram | file) ;; *) echo "SWAP must be zram or file, not $SWAP" >&2; exit 2 ;; esac
policy=lru-cfs
[ "$SWAP" = file ] && policy=swap-all
[ "$(id -u)" = 0 ] || { echo "needs root (the probe pins memory and sets up zram swap)" >&2; exit 2; }
cargo build --release -q -p floe
floe=target/release/floe
work=$(mktemp -d /tmp/floe-xval.XXXXXX)
trap 'rm -rf "$work"' EXIT
apps=scripts/probe/floe/apps.toml
[ "$FILES" = 1 ] && apps=scripts/probe/floe/apps-files.toml
sed "s/^use_s = 30.0 /use_s = $SECS.0 /" scripts/probe/floe/workload.toml > "$work/workload.toml"
# Sums of the zones' watermarks, in MiB.
read -r wmin wlow whigh < <(awk '$1 == "min" {m += $2} $1 == "low" {l += $2} $1 == "high" && NF == 2 {h += $2}
  END {printf "%.1f %.1f %.1f\n", m / 256, l / 256, h / 256}' /proc/zoneinfo)
ram=$(awk '/^MemTotal:/ {printf "%.0f", $2 / 1024}' /proc/meminfo)
cores=$(nproc)
hz=$(getconf CLK_TCK)
kv() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k {print $2}'; }
row() { printf '%-6s %-7s %12s %12s %11s %10s %9s %13s %12s\n' "$@"; }
row limit side "anon refaults" "file refaults" "loop's major" reclaimed "direct %" "kswapd us/pg" "frames >16.6"
for limit in $LIMITS; do
  out=$(SWAP=$SWAP BG_FILE_SHARE=0.25 BG_FILE_SET_MIB=56.7 READ_AHEAD_KB=32 scripts/frame-stall-probe.sh "$limit" "$SECS" 8 "$FILES" global)
  b=$(grep 'counters before' <<<"$out" | cut -d: -f2-)
  a=$(grep 'counters after' <<<"$out" | cut -d: -f2-)
  d() { echo $(($(kv "$a" "$1") - $(kv "$b" "$1"))); }
  ksteal=$(d pgsteal_kswapd)
  dsteal=$(d pgsteal_direct)
  kus=$(awk -v t="$(d kswapd_cpu_ticks)" -v hz="$hz" -v k="$ksteal" 'BEGIN {printf "%.1f", (k ? t / hz * 1e6 / k : 1)}')
  z=$(grep 'zram:' <<<"$out" || echo "zram: orig_bytes=1 compr_bytes=1")
  ratio=$(awk -v o="$(kv "${z#*: }" orig_bytes)" -v c="$(kv "${z#*: }" compr_bytes)" 'BEGIN {r = (c > 0 ? o / c : 1); if (r > 128) r = 128; printf "%.1f", r}')
  disk=$(grep '^disk:' <<<"$out" | head -1 || true)
  read4k=$(kv "${disk#*: }" read_4k_us)
  seqread=$(kv "${disk#*: }" seq_read_mib_s)
  wdisk=$(grep '^disk:.*write_4k_us' <<<"$out" || true)
  write4k=$(kv "${wdisk#*: }" write_4k_us)
  seqwrite=$(kv "${wdisk#*: }" seq_write_mib_s)
  zram_mib=4096.0
  [ "$SWAP" = file ] && zram_mib=0.0
  cat > "$work/device.toml" <<DEV
name = "this-machine"
description = "this machine as scripts/frame-stall-probe.sh leaves it in global mode with LIMIT = $limit MiB"
source = "/proc/zoneinfo, /proc/meminfo and the probe's run"

[memory]
ram_mib = $ram.0  # src: /proc/meminfo MemTotal
app_mem_mib = $(awk -v l="$limit" -v h="$whigh" 'BEGIN {printf "%.1f", l + h}')  # derived: LIMIT + the zones' high watermarks (see scripts/sim-vs-kernel.sh)
watermark_min_mib = $wmin  # src: /proc/zoneinfo, sum of the zones' min
watermark_low_mib = $wlow  # src: /proc/zoneinfo, sum of the zones' low
watermark_high_mib = $whigh  # src: /proc/zoneinfo, sum of the zones' high
minfree = [[0, 0.0]]  # src: no low-memory killer in the probe

[zram]
size_mib = $zram_mib  # src: the probe's zram disksize (none with SWAP=file)
algorithm = "lz4"  # src: the probe
ratio = $ratio  # src: the probe's run, zram mm_stat orig / compr (capped at floe's 128)
compress_us_per_page = $kus  # src: the probe's run, kswapd's CPU time per page it reclaimed (all of it, not only lz4: floe charges a swapped page's whole reclaim cost here beyond its 0.7 us of scan and unmap)
decompress_us_per_page = 0.5  # assumption: lz4 on a page holding one non-zero byte, x86 core

[flash]
kind = "disk"  # src: label only
read_4k_us = ${read4k:-100.0}  # src: the probe's disk measurement (O_DIRECT 4 KiB random reads), or unused without files and swap file
write_4k_us = ${write4k:-100.0}  # src: the probe's disk measurement (O_DIRECT 4 KiB random writes), or unused without a swap file
seq_read_mib_s = ${seqread:-1000}.0  # src: the probe's disk measurement (O_DIRECT 1 MiB reads), or unused
seq_write_mib_s = ${seqwrite:-1000}.0  # src: the probe's disk measurement (O_DIRECT 1 MiB writes), or unused
swap_mib = 3072.0  # src: the probe's swap file with SWAP=file (unused with zram)

[cpu]
cores = $cores  # src: nproc
DEV
  sim=(sim --device "$work/device.toml" --apps "$apps" --workload "$work/workload.toml" --policy "$policy")
  # One run: its metrics, and its timeline for the pages taken by direct reclaim.
  m=$("$floe" "${sim[@]}" --json --timeline "$work/timeline.csv")
  direct=$(awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i; next} $c["measured"] == "true" {s += $c["direct_reclaimed_pages"]} END {print s + 0}' "$work/timeline.csv")
  read -r fa ff rec ksw slow < <(jq -r '.metrics | [.refaults_bg_anon + .refaults_fg_anon, .refaults_bg_file + .refaults_fg_file,
    .reclaimed_pages, .cpu_ms_kswapd, .interaction_alerts] | @tsv' <<<"$m")
  row "$limit" floe "$fa" "$ff" - "$rec" "$(awk -v d="$direct" -v r="$rec" 'BEGIN {printf "%.1f", (r ? 100 * d / r : 0)}')" \
    "$(awk -v k="$ksw" -v d="$direct" -v r="$rec" 'BEGIN {printf "%.1f", (r > d ? 1000 * k / (r - d) : 0)}')" "$slow"
  row "$limit" kernel "$(d workingset_refault_anon)" "$(d workingset_refault_file)" "$(grep -o 'own_major_faults [0-9]*' <<<"$out" | awk '{print $2}')" \
    "$((ksteal + dsteal))" "$(awk -v d="$dsteal" -v k="$ksteal" 'BEGIN {printf "%.1f", (k + d ? 100 * d / (k + d) : 0)}')" "$kus" \
    "$(grep -o 'over_16.6ms [0-9]*' <<<"$out" | awk '{print $2}')"
  [ "$wdisk" = "$disk" ] && wdisk=""
  echo "       (this run: zram ratio $ratio${disk:+, ${disk#*: }}${wdisk:+, ${wdisk#*: }})"
  sleep 20  # the machine swaps its other processes back in after a global run
done
