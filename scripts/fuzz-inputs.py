#!/usr/bin/env python3
"""Runs `floe sim` on data files with one number changed at random, and reports any run
that panics, dies on a signal or hangs, instead of refusing the input (exit 2) or
running (exit 0).

Each of five workloads (one per paper, cut to 2 rounds of 3 s of use) is run under
its paper's policies with N edits of its device file, N of the app catalog and N of the
workload file; an edit puts one of -1, 0, 1e-9, 0.5, 3, 65536, 2^32, 1e12, 1e300, -0.0,
nan or inf in place of one number. The unit test
`any_number_of_the_data_files_made_absurd_is_refused_at_a_line` checks that refusals
are located; this checks what is accepted runs.

    usage: scripts/fuzz-inputs.py [SEED] [N]     (defaults 1 and 20; N = 40 takes
           about 3 minutes on 2 cores)
Builds nothing: run `cargo build --release -p floe` first.
"""
import os
import random
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLOE = os.path.join(ROOT, "target", "release", "floe")
DATA = os.path.join(ROOT, "data")
VALUES = ["-1", "0", "1e-9", "0.5", "3", "65536", "4294967296", "1e12", "1e300", "-0.0", "nan", "inf"]
NUMBER = re.compile(r'(?<![\w."])(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\w"])')
WORKLOADS = [
    ("ice-video-call", "lru-cfs,ice-plus"),
    ("seal-30apps", "seal,zswap"),
    ("smartlmk-256", "smartlmk"),
    ("selective-b1", "selective-kill-first,swap-all"),
    ("asap-seq1", "asap"),
]


def edits(text, n, rng):
    """n copies of text, each with one number (outside comments) replaced."""
    lines = text.split("\n")
    spots = [(i, m) for i, l in enumerate(lines) for m in NUMBER.finditer(l.split("#")[0])]
    for _ in range(n):
        i, m = rng.choice(spots)
        v = rng.choice(VALUES)
        edited = lines[i][: m.start()] + v + lines[i][m.end() :]
        yield f"line {i + 1}: {m.group(0)} -> {v}", "\n".join(lines[:i] + [edited] + lines[i + 1 :])


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    if not os.access(FLOE, os.X_OK):
        sys.exit(f"{FLOE} not found: run `cargo build --release -p floe` first")
    rng = random.Random(seed)
    bad, codes = [], {}
    with tempfile.TemporaryDirectory(prefix="floe-fuzz-") as tmp:

        def run(args, what):
            try:
                p = subprocess.run([FLOE, "sim", *args], capture_output=True, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                bad.append(f"{what}: no result in 120 s")
                return
            codes[p.returncode] = codes.get(p.returncode, 0) + 1
            if p.returncode not in (0, 2) or "panicked" in p.stderr:
                bad.append(f"{what}: exit {p.returncode}: {p.stderr.strip()[-300:]}")

        def write(name, text):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text)
            return path

        for name, policies in WORKLOADS:
            with open(os.path.join(DATA, "workloads", f"{name}.toml")) as f:
                wl = f.read()
            wl = re.sub(r"^rounds = .*$", "rounds = 2", wl, flags=re.M)
            wl = re.sub(r"^use_s = [\d.]+", "use_s = 3.0", wl, flags=re.M)
            device = re.search(r'^device = "([\w-]+)"', wl, re.M).group(1)
            wl_path = write(f"{name}.toml", wl)
            with open(os.path.join(DATA, "devices", f"{device}.toml")) as f:
                for what, text in edits(f.read(), n, rng):
                    run(["--device", write("device.toml", text), "--workload", wl_path, "--policy", policies], f"{device}.toml {what}")
            with open(os.path.join(DATA, "apps.toml")) as f:
                for what, text in edits(f.read(), n, rng):
                    run(["--apps", write("apps.toml", text), "--workload", wl_path, "--policy", policies], f"apps.toml {what} ({name})")
            for what, text in edits(wl, n, rng):
                run(["--workload", write("edited.toml", text), "--device", device, "--policy", policies], f"{name}.toml {what}")
    for b in bad:
        print(b)
    print(f"{sum(codes.values())} runs: {codes.get(0, 0)} ran, {codes.get(2, 0)} refused, {len(bad)} failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
