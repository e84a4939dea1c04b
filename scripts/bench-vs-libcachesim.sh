#!/usr/bin/env bash
# floe replay beside libCacheSim on one seeded Zipf trace in libCacheSim's oracleGeneral
# format: requests per second (reading the trace included on both sides) and miss
# ratios, side by side, and a correctness check that floe's plain LRU misses as often
# as libCacheSim's (within 0.1 %).
#
# usage: scripts/bench-vs-libcachesim.sh [REQUESTS [OBJECTS [CACHE_PAGES [ROUNDS]]]]
#   defaults: 20000000 requests over 1000000 objects, a 250000-page cache, 3 rounds.
# environment:
#   ALPHA (0.9), SEED (42)     the Zipf skew and the generator's seed
#   FLOE                       the floe binary (default: target/release/floe under
#                              $CARGO_TARGET_DIR or the repository; build it with
#                              `cargo build --release -p floe`)
#   PYTHON                     a Python with libcachesim and numpy (`pip install
#                              libcachesim`); default python3
#   WORK                       where the trace is kept, and reused when there (default:
#                              a temporary directory, removed at the end)
#
# Each round runs every contender once, in this order: floe lru, libCacheSim LRU, floe
# linux, libCacheSim Clock, TwoQ, ARC; the figures are the medians over the rounds.
# libCacheSim is timed inside its Python process from opening the trace to the end of
# process_trace (the import of the module is not counted), floe inside `floe replay`
# from opening the trace to the end of the replay (the process start is not counted).
# Every request is one 4096-byte object, and libCacheSim's cache holds CACHE_PAGES of
# them. Exit status 1 if the LRU miss ratios differ by more than 0.1 %.
set -euo pipefail

requests=${1:-20000000}
objects=${2:-1000000}
cache_pages=${3:-250000}
rounds=${4:-3}
alpha=${ALPHA:-0.9}
seed=${SEED:-42}
python=${PYTHON:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
floe=${FLOE:-${CARGO_TARGET_DIR:-$root/target}/release/floe}

if [[ ! -x $floe ]]; then
    echo "bench-vs-libcachesim: no floe binary at $floe (cargo build --release -p floe, or set FLOE)" >&2
    exit 2
fi
if ! "$python" -c 'import libcachesim, numpy' 2>/dev/null; then
    echo "bench-vs-libcachesim: $python lacks libcachesim or numpy (pip install libcachesim), or set PYTHON" >&2
    exit 2
fi

if [[ -n ${WORK:-} ]]; then
    work=$WORK
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
trace=$work/zipf-$alpha-$requests-$objects-$seed.oracleGeneral.bin
results=$work/results.jsonl
: >"$results"

# The trace: ranks drawn from Zipf(alpha) over OBJECTS by inverse transform, each rank
# given a random object id (a seeded permutation, scattered over 64 bits), and each
# record's next access time filled in as libCacheSim's oracleGeneral traces carry it
# (-1: never again).
if [[ ! -s $trace ]]; then
    "$python" - "$requests" "$objects" "$alpha" "$seed" "$trace" <<'EOF'
import sys
import numpy as np

n_req, n_obj, alpha, seed, out = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rng = np.random.default_rng(seed)
cdf = np.cumsum(1.0 / np.arange(1, n_obj + 1, dtype=np.float64) ** alpha)
cdf /= cdf[-1]
rank = np.minimum(np.searchsorted(cdf, rng.random(n_req), side="right"), n_obj - 1)
perm = rng.permutation(n_obj).astype(np.uint64)
ids = (perm[rank] + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)  # wraps: a bijection
order = np.argsort(ids, kind="stable")
same = ids[order[1:]] == ids[order[:-1]]
nxt = np.full(n_req, -1, dtype=np.int64)
nxt[order[:-1][same]] = order[1:][same]
rec = np.zeros(n_req, dtype=np.dtype([("t", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")]))
assert rec.dtype.itemsize == 24
rec["t"] = np.arange(n_req, dtype=np.uint64) // 1000
rec["id"] = ids
rec["size"] = 4096
rec["next"] = nxt
rec.tofile(out)
print(f"trace: {out}: {n_req} requests, {len(np.unique(ids))} objects, Zipf({alpha}), seed {seed}", file=sys.stderr)
EOF
fi

run_floe() {
    local policy=$1 batch=$2
    "$floe" replay "$trace" --cache-pages "$cache_pages" --policy "$policy" --batch "$batch" --json |
        "$python" -c 'import json, sys; r = json.load(sys.stdin); print(json.dumps({"who": sys.argv[1], "requests": r["requests"], "miss_ratio": r["miss_ratio"], "requests_per_s": r["requests_per_s"]}))' "floe $policy" >>"$results"
}

run_lcs() {
    "$python" - "$trace" "$cache_pages" "$1" >>"$results" <<'EOF'
import json, sys, time
import libcachesim as lcs

path, cache_pages, algo = sys.argv[1], int(sys.argv[2]), sys.argv[3]
t0 = time.perf_counter()
reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
cache = getattr(lcs, algo)(cache_size=cache_pages * 4096)
miss_ratio, _byte_miss_ratio = cache.process_trace(reader)
dt = time.perf_counter() - t0
n = reader.get_num_of_req()
print(json.dumps({"who": f"libCacheSim {algo}", "requests": n, "miss_ratio": miss_ratio, "requests_per_s": n / dt}))
EOF
}

for r in $(seq 1 "$rounds"); do
    echo "round $r of $rounds" >&2
    run_floe lru 1
    run_lcs LRU
    run_floe linux 32
    run_lcs Clock
    run_lcs TwoQ
    run_lcs ARC
done

"$python" - "$results" "$requests" "$objects" "$cache_pages" "$alpha" "$rounds" <<'EOF'
import json, statistics, sys

path, requests, objects, cache, alpha, rounds = sys.argv[1:]
rows = {}
for line in open(path):
    r = json.loads(line)
    rows.setdefault(r["who"], []).append(r)
print(f"Zipf({alpha}) trace, {requests} requests over {objects} objects, cache {cache} pages; medians of {rounds} rounds")
print(f"{'':20} {'requests/s':>12} {'miss ratio':>11} {'vs libCacheSim LRU':>19}")
base = statistics.median(r["requests_per_s"] for r in rows["libCacheSim LRU"])
for who, rs in rows.items():
    speed = statistics.median(r["requests_per_s"] for r in rs)
    ratios = {round(r["miss_ratio"], 9) for r in rs}
    assert len(ratios) == 1, f"{who}: miss ratio differs between rounds: {ratios}"
    print(f"{who:20} {speed:12.4g} {rs[0]['miss_ratio']:11.7f} {speed / base:18.2f}x")
ours, theirs = rows["floe lru"][0]["miss_ratio"], rows["libCacheSim LRU"][0]["miss_ratio"]
diff = abs(ours - theirs) / theirs
ok = diff <= 0.001
print(f"LRU miss ratios: floe {ours:.7f}, libCacheSim {theirs:.7f}: {diff * 100:.4f} % apart: {'PASS' if ok else 'FAIL'} (within 0.1 %)")
sys.exit(0 if ok else 1)
EOF
