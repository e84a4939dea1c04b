"""The package against the `floe` binary: a run, a sweep on a Dask cluster, a killed shard."""

import json
import signal
import subprocess
import time

import pandas as pd
import pandas.testing
import pytest

import floe
from conftest import TESTDATA, tiny_sweep


def test_a_run_is_the_clis_run_of_the_same_key(cli):
    cases = [
        (dict(device="nexus5", workload="selective-c", policy="selective-kill-first", seed=3), []),
        (
            dict(
                device=str(TESTDATA / "tiny-device.toml"),
                workload=str(TESTDATA / "tiny-workload.toml"),
                policy="seal:k=1:mu=0.5",
                seed=7,
                apps=str(TESTDATA / "tiny-apps.toml"),
                bg_apps=2,
                draw_bg=True,
                shuffle_rounds=True,
                lmkd="psi",
                cputester_pct=20.0,
            ),
            ["--apps", str(TESTDATA / "tiny-apps.toml"), "--bg-apps", "2", "--draw-bg", "--shuffle-rounds", "--lmkd", "psi", "--cputester-pct", "20"],
        ),
        (dict(workload="ice-video-call", policy="ice", seed=2, bg_apps=4, balloon_mib=256), ["--bg-apps", "4", "--balloon-mib", "256"]),
    ]
    for kw, flags in cases:
        run = floe.sim(**kw)
        args = ["sim", "--workload", kw["workload"], "--policy", kw["policy"], "--seed", kw["seed"], "--json", *flags]
        if "device" in kw:
            args += ["--device", kw["device"]]
        assert run == json.loads(cli(*args).stdout), kw
    # Different seeds are different runs (the comparison above is not vacuous).
    a = floe.sim(workload="ice-video-call", policy="ice", seed=1, bg_apps=6)
    b = floe.sim(workload="ice-video-call", policy="ice", seed=2, bg_apps=6, draw_bg=True)
    assert a["seed"] == 1 and a["metrics"] != b["metrics"]


def test_bad_input_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="bg_app"):
        floe.sim(workload="selective-c", bg_app=3)
    with pytest.raises(ValueError, match="unknown policy `nope`"):
        floe.sim(workload="selective-c", policy="nope")
    with pytest.raises(ValueError, match="unknown experiment"):
        floe.experiment("nope")


def test_a_sweep_on_dask_is_the_clis_sweep_in_shards(cli, tmp_path):
    distributed = pytest.importorskip("distributed")
    dask = pytest.importorskip("dask")
    spec = tiny_sweep(tmp_path / "grid.toml", ["lru-cfs", "android-lmk", "ice", "seal:k=1:mu=0.5", "zswap"], seeds=4)
    keys = floe.runs(spec)
    assert len(keys) == 40
    # Three shards, each run by the binary, merged as JSON Lines and as CSV.
    shards = []
    for i in (1, 2, 3):
        out = tmp_path / f"shard-{i}.jsonl"
        cli("sweep", spec, "--shard", f"{i}/3", "--out", out, "--jobs", "1", "--quiet")
        shards.append(out)
    assert sorted(len(s.read_text().splitlines()) for s in shards) == [13, 13, 14]
    cli("sweep", "merge", "--spec", spec, *shards, "-o", tmp_path / "merged.jsonl")
    cli("sweep", "merge", "--spec", spec, *shards, "-o", tmp_path / "merged.csv")

    # Dask's scratch space (its lock files and the workers' folders) in the test's own
    # folder, not in the system's temporary directory, where it would stay.
    scratch = str(tmp_path / "dask")
    with dask.config.set({"temporary-directory": scratch}):
        with distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, local_directory=scratch
        ) as cluster:
            with distributed.Client(cluster) as client:
                df = floe.sweep(spec, executor=client.get_executor(), out=tmp_path / "dask.jsonl")
                # The runs went to both worker processes.
                assert len(client.scheduler_info()["workers"]) == 2

    assert (tmp_path / "dask.jsonl").read_bytes() == (tmp_path / "merged.jsonl").read_bytes()
    pandas.testing.assert_frame_equal(df, pd.read_csv(tmp_path / "merged.csv"))
    assert len(df) == 40
    assert list(df.columns[:6]) == ["device", "workload", "policy", "seed", "apps", "bg_apps"]
    assert [json.loads(line)["key"] for line in (tmp_path / "dask.jsonl").read_text().splitlines()] == keys
    # The policies differ in what they do.
    assert df.groupby("policy")["reclaimed_pages"].mean().nunique() > 1
    # Locally, without an executor: the same frame.
    pandas.testing.assert_frame_equal(floe.sweep(spec), df)


def test_a_killed_shard_resumes_without_repeating_runs(floe_bin, cli, tmp_path):
    spec = tmp_path / "slow.toml"
    spec.write_text(
        'devices = ["pixel3"]\nworkloads = ["seal-30apps"]\npolicies = ["zswap", "seal"]\n'
        "seeds = { first = 1, count = 8 }\n[flags]\nrounds = 1\nuse_s = 4\n"
    )
    out = tmp_path / "shard.jsonl"
    p = subprocess.Popen([floe_bin, "sweep", spec, "--shard", "1/1", "--out", out, "--jobs", "1"], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not (out.exists() and len(out.read_text().splitlines()) >= 3):
        assert p.poll() is None, "the shard finished before it could be killed: make its runs longer"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    p.send_signal(signal.SIGKILL)
    p.wait()
    before = out.read_text()
    done = before.count("\n")
    assert 3 <= done < 16
    # A line cut short, as a kill in the middle of a write leaves it.
    out.write_text(before[: before.rfind("\n") + 1] + before.splitlines()[0][:40])

    r = cli("sweep", spec, "--shard", "1/1", "--out", out, "--jobs", "1")
    after = out.read_text()
    assert after.startswith(before[: before.rfind("\n") + 1]), "the runs done before the kill are kept as they were"
    assert f"({done} of them there already)" in r.stderr
    keys = [json.dumps(json.loads(line)["key"], sort_keys=True) for line in after.splitlines()]
    assert len(keys) == 16 and len(set(keys)) == 16, "every run once"
    # The resumed shard merges into what one uninterrupted run writes.
    cli("sweep", spec, "--out", tmp_path / "whole.jsonl", "--quiet")
    cli("sweep", "merge", "--spec", spec, out, "-o", tmp_path / "a.jsonl")
    cli("sweep", "merge", "--spec", spec, tmp_path / "whole.jsonl", "-o", tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_experiment_is_the_clis_record(cli):
    rec = floe.experiment("selective", quick=True)
    assert rec == json.loads(cli("experiment", "selective", "--quick", "--json").stdout)
    assert rec["experiment"] == "selective" and rec["runs"] and rec["findings"]
