#!/usr/bin/env bash
# Runs the same synthetic phone on this kernel and in floe's simulator and prints their
# counts side by side: scripts/frame-stall-probe.sh in global mode (eight cached
# "background apps" of 200 MiB touching 10 MiB of a 60 MiB set every 5 s on average,
# and a 60 Hz loop with a 100 MiB working set, with all of the machine's memory but
# LIMIT pinned, zram swap, no files), and `floe sim` on the same apps
# (scripts/probe/floe/) on a device built from this machine's /proc/zoneinfo: its
# watermarks, and LIMIT plus the zones' high watermarks as the memory apps can fill
# (MemAvailable after the pin is free memory less the zones' reserves, the high
# watermarks and the lowmem protections, and user pages cannot take the protections).
# zram's ratio and kswapd's CPU time per reclaimed page are the ones the probe's run
# measured (floe charges that time as compression, which it charges per swapped page);
# refaults, reclaim, direct reclaim and frames are what the two are compared on. Needs what the probe needs (root,
# gcc, an unused /dev/zram0); each LIMIT takes about a minute and a half, most of it
# pinning memory.
#   usage: sudo scripts/sim-vs-kernel.sh [LIMITS_MIB="384 512 768"] [SECONDS=30]
set -euo pipefail
cd "$(dirname "$0")/.."
LIMITS=${1:-"384 512 768"}
SECS=${2:-30}
[ "$(id -u)" = 0 ] || { echo "needs root (the probe pins memory and sets up zram swap)" >&2; exit 2; }
cargo build --release -q -p floe
floe=target/release/floe
work=$(mktemp -d /tmp/floe-xval.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp scripts/probe/floe/apps.toml "$work/apps.toml"
sed "s/^use_s = 30.0 /use_s = $SECS.0 /" scripts/probe/floe/workload.toml > "$work/workload.toml"
# Sums of the zones' watermarks, in MiB.
read -r wmin wlow whigh < <(awk '$1 == "min" {m += $2} $1 == "low" {l += $2} $1 == "high" && NF == 2 {h += $2}
  END {printf "%.1f %.1f %.1f\n", m / 256, l / 256, h / 256}' /proc/zoneinfo)
ram=$(awk '/^MemTotal:/ {printf "%.0f", $2 / 1024}' /proc/meminfo)
cores=$(nproc)
kv() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k {print $2}'; }
printf '%-6s %-7s %9s %9s %9s %9s %12s %13s %10s\n' limit side "bg refaults" reclaimed direct "direct %" "kswapd us/pg" "frames >16.6ms" "zram ratio"
for limit in $LIMITS; do
  out=$(scripts/frame-stall-probe.sh "$limit" "$SECS" 8 0 global)
  b=$(grep 'counters before' <<<"$out" | cut -d: -f2-)
  a=$(grep 'counters after' <<<"$out" | cut -d: -f2-)
  d() { echo $(($(kv "$a" "$1") - $(kv "$b" "$1"))); }
  refaults=$(d workingset_refault_anon)
  ksteal=$(d pgsteal_kswapd)
  dsteal=$(d pgsteal_direct)
  ticks=$(d kswapd_cpu_ticks)
  slow=$(grep -o 'over_16.6ms [0-9]*' <<<"$out" | awk '{print $2}')
  z=$(grep 'zram:' <<<"$out")
  kus=$(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" -v k="$ksteal" 'BEGIN {printf "%.1f", k ? t / hz * 1e6 / k : 1}')
  ratio=$(awk -v o="$(kv "${z#*: }" orig_bytes)" -v c="$(kv "${z#*: }" compr_bytes)" 'BEGIN {r = c > 0 ? o / c : 1; if (r > 128) r = 128; printf "%.1f", r}')
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
size_mib = 4096.0  # src: the probe's zram disksize
algorithm = "lz4"  # src: the probe
ratio = $ratio  # src: the probe's run, zram mm_stat orig / compr (capped at floe's 128)
compress_us_per_page = $kus  # src: the probe's run, kswapd's CPU time per page it reclaimed (all of it, not only lz4: floe charges a swapped page's whole reclaim cost here beyond its 0.7 us of scan and unmap)
decompress_us_per_page = 0.5  # assumption: as above

[flash]
kind = "disk"  # src: label only; no file pages in this run
read_4k_us = 100.0  # assumption: not used (no file pages, no flash swap)
write_4k_us = 100.0  # assumption: not used
seq_read_mib_s = 1000.0  # assumption: not used
seq_write_mib_s = 1000.0  # assumption: not used

[cpu]
cores = $cores  # src: nproc
DEV
  m=$("$floe" sim --device "$work/device.toml" --apps "$work/apps.toml" --workload "$work/workload.toml" --policy lru-cfs --json)
  sim_direct=$("$floe" sim --device "$work/device.toml" --apps "$work/apps.toml" --workload "$work/workload.toml" --policy lru-cfs --timeline - |
    awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i; next} $c["measured"] == "true" {s += $c["direct_reclaimed_pages"]} END {print s + 0}')
  jq -r --arg l "$limit" --argjson d "$sim_direct" '.metrics | [$l, "floe", .refaults_bg_anon, .reclaimed_pages, $d,
      (if .reclaimed_pages > 0 then 100 * $d / .reclaimed_pages else 0 end),
      (if .reclaimed_pages > 0 then 1000 * .cpu_ms_kswapd / (.reclaimed_pages - $d) else 0 end), .interaction_alerts] |
      @tsv' <<<"$m" | awk -F'\t' -v r="$ratio" '{printf "%-6s %-7s %9d %9d %9d %9.1f %12.1f %13d %10s\n", $1, $2, $3, $4, $5, $6, $7, $8, r}'
  awk -v l="$limit" -v rf="$refaults" -v k="$ksteal" -v dd="$dsteal" -v t="$ticks" -v hz="$(getconf CLK_TCK)" -v s="$slow" -v r="$ratio" 'BEGIN {
    n = k + dd; printf "%-6s %-7s %9d %9d %9d %9.1f %12.1f %13d %10s\n", l, "kernel", rf, n, dd, n ? 100 * dd / n : 0, k ? t / hz * 1e6 / k : 0, s, r}'
  sleep 20  # the machine swaps its other processes back in after a global run
done
