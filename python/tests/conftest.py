"""Shared fixtures: the repository, its test inputs, and the `floe` binary the package
is checked against (FLOE_BIN, else the release build under CARGO_TARGET_DIR or target/)."""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TESTDATA = REPO / "crates" / "sim" / "testdata"


@pytest.fixture(scope="session")
def floe_bin():
    path = os.environ.get("FLOE_BIN")
    if path is None:
        target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
        path = target / "release" / "floe"
    path = Path(path)
    if not path.is_file():
        pytest.fail(f"no floe binary at {path}: build it with `cargo build --release -p floe` or set FLOE_BIN")
    return str(path)


@pytest.fixture
def cli(floe_bin):
    """Runs `floe ARGS`, failing the test with its stderr if it fails. It keeps no
    experiment runs on disk (FLOE_CACHE_DIR empty)."""

    def run(*args, cwd=None):
        env = {**os.environ, "FLOE_CACHE_DIR": ""}
        p = subprocess.run([floe_bin, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env)
        assert p.returncode == 0, f"floe {' '.join(map(str, args))}: {p.stderr}"
        return p

    return run


def tiny_sweep(path, policies, seeds, bg_apps=(1, 2)):
    """Writes a sweep file over the tiny test device, workload and catalog (runs of a few
    milliseconds) and returns its path."""
    lines = [
        f'devices = ["{TESTDATA / "tiny-device.toml"}"]',
        f'workloads = ["{TESTDATA / "tiny-workload.toml"}"]',
        "policies = [" + ", ".join(f'"{p}"' for p in policies) + "]",
        f"seeds = {{ first = 1, count = {seeds} }}",
        "",
        "[flags]",
        f'apps = "{TESTDATA / "tiny-apps.toml"}"',
        "bg_apps = [" + ", ".join(map(str, bg_apps)) + "]",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path
