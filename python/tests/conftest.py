"""Shared fixtures: the repository, the gpuslice CLI (for results-equal-to-the-CLI checks)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[2]


def _cli() -> Path | None:
    env = os.environ.get("GPUSLICE_CLI")
    if env:
        return Path(env)
    for candidate in (ROOT / "build" / "bin" / "gpuslice", shutil.which("gpuslice")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def cli() -> Path:
    path = _cli()
    if path is None:
        pytest.skip("the gpuslice CLI is not built (build/bin/gpuslice); set GPUSLICE_CLI")
    return path


@pytest.fixture(scope="session")
def run_cli(cli):
    def run(*args: str, check: bool = False) -> subprocess.CompletedProcess:
        proc = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=600)
        if check and proc.returncode != 0:
            raise AssertionError(f"gpuslice {' '.join(map(str, args))} exited {proc.returncode}: {proc.stderr}")
        return proc

    return run


@pytest.fixture(scope="session")
def openb(root):
    d = root / "scenarios" / "data" / "openb"
    return d / "openb_node_list_gpu_node.csv", d / "openb_pod_list_default.csv"
