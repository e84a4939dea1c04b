#!/usr/bin/env python3
"""Plots a sweep with matplotlib: one panel per device, a metric by policy, the mean over
the seeds with its standard deviation, one bar per value of a flag.

    python3 examples/plot_sweep.py sweep.csv                    # a merged sweep (floe sweep merge ... -o sweep.csv)
    python3 examples/plot_sweep.py examples/sweep.toml          # run the sweep first (the floe package)
    python3 examples/plot_sweep.py sweep.csv --metric fps --by use_s --out fps.png

Needs pandas and matplotlib (and the floe package, `pip install ./python`, for a sweep
file).
"""

import argparse
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

KEY = ["device", "workload", "policy", "seed"]
FLAGS = ["apps", "balloon_mib", "bg_apps", "bg_window_s", "cputester_pct", "draw_bg", "launches", "lmkd", "rounds", "shuffle_rounds", "use_s"]


def load(path):
    if path.endswith(".csv"):
        return pd.read_csv(path)
    import floe

    return floe.sweep(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep", help="a merged sweep's CSV, or a sweep file to run")
    ap.add_argument("--metric", default="launch_ms_mean", help="the metric to plot (floe list metrics)")
    ap.add_argument("--by", help="a flag column whose values get a bar each (default: the first flag that varies)")
    ap.add_argument("--out", default="sweep.png", help="the image to write")
    a = ap.parse_args()

    df = load(a.sweep)
    if a.metric not in df.columns:
        sys.exit(f"no metric `{a.metric}` in the sweep; its columns: {', '.join(df.columns)}")
    flags = [c for c in df.columns if c in FLAGS]
    by = a.by or next((f for f in flags if df[f].nunique() > 1), None)
    groups = ["device", "workload", "policy"] + ([by] if by else [])
    stats = df.groupby(groups, sort=False)[a.metric].agg(["mean", "std"]).reset_index()

    devices = list(dict.fromkeys(stats["device"]))
    fig, axes = plt.subplots(1, len(devices), figsize=(5.5 * len(devices), 4.5), squeeze=False, sharey=True)
    for ax, device in zip(axes[0], devices):
        d = stats[stats["device"] == device]
        # One group of bars per policy (per workload and policy with several workloads).
        name = (lambda r: r["workload"] + "\n" + r["policy"]) if stats["workload"].nunique() > 1 else (lambda r: r["policy"])
        labels = list(dict.fromkeys(name(d)))
        values = list(dict.fromkeys(d[by])) if by else [None]
        width = 0.8 / len(values)
        for j, v in enumerate(values):
            rows = d if v is None else d[d[by] == v]
            xs = [labels.index(n) + (j - (len(values) - 1) / 2) * width for n in name(rows)]
            ax.bar(xs, rows["mean"], width, yerr=rows["std"].fillna(0), capsize=3, label=None if v is None else f"{by} = {v}")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=30, ha="right")
        ax.set_title(device)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel(f"{a.metric} (mean ± sd over {df['seed'].nunique()} seeds)")
    if by:
        axes[0][-1].legend()
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
