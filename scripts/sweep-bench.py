#!/usr/bin/env python3
"""A 200-run sweep's wall time three ways (docs/PERFORMANCE.md, "Sweeps"): `floe sweep` in
one process on every core; `floe.sweep` on a local Dask cluster of one worker process a
core; and `floe sweep --shard I/N --jobs 1`, one process a core, started by GNU parallel
(or xargs -P where parallel is missing). Then the Python path's overhead per run against
the CLI's: the same short runs one at a time, `floe.sim` against `floe sim --json`.

    python3 scripts/sweep-bench.py --floe target/release/floe    # needs the floe package, dask, distributed
"""

import argparse
import os
import shutil
import subprocess
import tempfile
import time

SPEC = """devices = ["pixel3", "pixel4"]
workloads = ["seal-30apps"]
policies = ["zswap", "seal", "seal:k=1:mu=0.5", "llr", "llr-hpl"]
seeds = { first = 1, count = 20 }
[flags]
rounds = 1
use_s = 5
"""


def timed(f):
    t = time.monotonic()
    f()
    return time.monotonic() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--floe", required=True, help="the floe binary")
    ap.add_argument("--overhead-runs", type=int, default=50)
    a = ap.parse_args()
    import distributed

    import floe

    cores = os.cpu_count()
    d = tempfile.mkdtemp(prefix="floe-sweep-bench-")
    spec = os.path.join(d, "bench.toml")
    with open(spec, "w") as f:
        f.write(SPEC)
    assert len(floe.runs(spec)) == 200

    one = timed(lambda: subprocess.run([a.floe, "sweep", spec, "-o", os.path.join(d, "one.jsonl"), "--quiet"], check=True))
    print(f"floe sweep, one process on {cores} cores: {one:.1f} s")

    with distributed.LocalCluster(n_workers=cores, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            dask = timed(lambda: floe.sweep(spec, executor=client.get_executor(), out=os.path.join(d, "dask.jsonl")))
    print(f"floe.sweep on Dask, {cores} worker processes: {dask:.1f} s")

    shards = [f"{i}/{cores}" for i in range(1, cores + 1)]
    out = os.path.join(d, "shard-{#}.jsonl")
    if shutil.which("parallel"):
        cmd = ["parallel", a.floe, "sweep", spec, "--shard", "{}", "--jobs", "1", "--quiet", "-o", out, ":::", *shards]
        runner = "GNU parallel"
    else:
        cmd = ["sh", "-c", f'printf "%s\\n" {" ".join(shards)} | xargs -P {cores} -I@ sh -c \'{a.floe} sweep {spec} --shard @ --jobs 1 --quiet -o {d}/shard-$(echo @ | cut -d/ -f1).jsonl\'']
        runner = "xargs -P (GNU parallel missing)"
    par = timed(lambda: subprocess.run(cmd, check=True))
    print(f"{cores} shards by {runner}: {par:.1f} s")
    merged = os.path.join(d, "merged.jsonl")
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith("shard-"))
    subprocess.run([a.floe, "sweep", "merge", "--spec", spec, *files, "-o", merged], check=True)
    same = open(merged, "rb").read() == open(os.path.join(d, "dask.jsonl"), "rb").read()
    print(f"shards merged = Dask's lines: {same}")

    # The same run through the package and through the binary (a process a run: the
    # CLI's way), one at a time.
    n = a.overhead_runs
    kw = dict(device="nexus5", workload="selective-c", policy="android-lmk")
    py = timed(lambda: [floe.sim(seed=s, **kw) for s in range(n)]) / n
    args = ["sim", "--device", "nexus5", "--workload", "selective-c", "--policy", "android-lmk", "--json", "--seed"]
    cli = timed(lambda: [subprocess.run([a.floe, *args, str(s)], check=True, capture_output=True) for s in range(n)]) / n
    print(f"per run (selective-c on nexus5, one at a time): floe.sim {py * 1e3:.1f} ms, floe sim --json {cli * 1e3:.1f} ms")
    shutil.rmtree(d)


if __name__ == "__main__":
    main()
