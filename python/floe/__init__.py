"""floe from Python: the phone-memory simulator's runs, experiments and sweeps.

The package calls floe's Rust library directly (a native module built by maturin and
PyO3); it does not need the ``floe`` binary.

    import floe
    run = floe.sim(device="nexus5", workload="selective-c", policy="android-lmk", seed=3, bg_apps=4)
    report = floe.experiment("seal", quick=True)
    df = floe.sweep("examples/sweep.toml")                     # this machine's cores
    df = floe.sweep(spec, executor=client.get_executor())      # a Dask cluster

A sweep is a sweep file's path or a dict of the same lists (``devices``, ``workloads``,
``policies``, ``seeds``, ``flags``); its runs, their order and their lines are those of
``floe sweep`` (examples/sweep.toml documents them).
"""

import io
import json
import os

from . import _floe

__all__ = ["sim", "experiment", "sweep", "runs", "run", "experiments", "policies", "FLAGS"]

#: The run flags ``sim`` takes as keywords and a sweep's ``flags`` table crosses.
FLAGS = (
    "apps",
    "balloon_mib",
    "bg_apps",
    "bg_window_s",
    "cputester_pct",
    "draw_bg",
    "launches",
    "lmkd",
    "rounds",
    "shuffle_rounds",
    "use_s",
)


def sim(device=None, workload="ice-video-call", policy="lru-cfs", seed=1, **flags):
    """One run: the dict ``floe sim --json`` prints for the same device, workload, policy,
    seed and flags (``bg_apps=6``, ``balloon_mib=128``, ``draw_bg=True``, ``lmkd="psi"``,
    ... as in ``FLAGS``). ``device=None`` is the device the workload names. Device,
    workload and ``apps`` may be embedded names or TOML files (relative to the current
    directory)."""
    spec = {
        "workloads": [workload],
        "policies": [policy],
        "seeds": [seed],
        "flags": flags,
    }
    if device is not None:
        spec["devices"] = [device]
    base = os.getcwd()
    key = _floe.check_run(json.dumps(spec), base)
    return json.loads(_floe.run_record(key, base))


def experiment(name, quick=False, seeds=None):
    """A seed paper's evaluation re-run: the dict ``floe experiment NAME --json`` prints
    (``{"experiment", "findings", "runs"}``). ``seeds`` replicates it (default: 5 for a
    full run, 1 with ``quick``)."""
    if seeds is None:
        seeds = 1 if quick else 5
    return json.loads(_floe.experiment(name, bool(quick), int(seeds)))


def experiments():
    """The experiments ``experiment`` takes: a dict of name to what it re-runs."""
    return dict(_floe.experiments())


def policies():
    """The policies floe knows: a dict of name to what it is."""
    return dict(_floe.policies())


def _expand(spec):
    if isinstance(spec, dict):
        return _floe.expand_json(json.dumps(spec), os.getcwd())
    return _floe.expand_file(os.fspath(spec))


def runs(spec):
    """The runs of a sweep in its order: each run's key as a dict (device, workload,
    policy, seed, flags)."""
    keys, _ = _expand(spec)
    return [json.loads(k) for k in keys]


def run(task):
    """Runs one task of a sweep, ``(key, base)`` (a key as JSON text and the directory its
    relative file names are taken from), into its line of JSON. What ``sweep`` hands an
    executor: a plain function of the package, so worker processes import it by name."""
    key, base = task
    return _floe.run_line(key, base)


def sweep(spec, executor=None, out=None):
    """Runs a sweep and returns its runs as a pandas DataFrame, one row per run in the
    sweep's order: the columns of ``floe sweep merge --csv`` (device, workload, policy,
    seed, the flags set, the metrics).

    ``spec``: a sweep file's path, or a dict of its lists. ``executor``: any
    ``concurrent.futures.Executor`` (a Dask ``Client.get_executor()``, Ray's
    ``RayExecutor``, a ``ProcessPoolExecutor``); its ``map`` runs the runs, one task a
    run. Without one, the runs go on this machine's cores. ``out``: also write the runs'
    lines there, as JSON Lines in the sweep's order (what ``floe sweep merge`` writes).
    """
    import pandas as pd

    keys, base = _expand(spec)
    if executor is None:
        lines = _floe.run_lines(keys, base)
    else:
        lines = list(executor.map(run, [(k, base) for k in keys]))
    if out is not None:
        with open(out, "w", encoding="utf-8") as f:
            f.writelines(line + "\n" for line in lines)
    return pd.read_csv(io.StringIO(_floe.lines_csv(lines)))
