"""gpuslice.compare(runs): the DataFrame of `gpuslice compare`'s compare.csv, one row per run."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import gpuslice

SNAPSHOT = "examples/snapshot/cluster.yaml"


@pytest.fixture(scope="module")
def two_runs(run_cli, tmp_path_factory):
    """The bundled snapshot under hami-binpack and fgd, as `simulate --policy a,b` writes them."""
    out = tmp_path_factory.mktemp("compare")
    run_cli("simulate", "--snapshot", SNAPSHOT, "--assume-duration", "3h", "--policy", "hami-binpack,fgd",
            "--out", out, check=True)
    return out


def test_compare_folders_is_the_cli_compare_csv(two_runs):
    df = gpuslice.compare([two_runs / "hami-binpack", two_runs / "fgd"])
    cli = pd.read_csv(two_runs / "compare.csv", dtype=str, keep_default_na=False)
    assert list(df.columns) == list(cli.columns)
    assert list(df["run"]) == ["hami-binpack", "fgd"]
    # The same numbers as the CLI's file, cell by cell.
    for column in df.columns:
        for ours, theirs in zip(df[column], cli[column]):
            if isinstance(ours, str):
                assert ours == theirs, column
            elif theirs == "":
                assert math.isnan(ours), column
            else:
                assert ours == pytest.approx(float(theirs)), column


def test_compare_known_answer(two_runs):
    # The bundled snapshot: 7 queued, 2 can never fit (refused), the 70000 MiB fine-tune waits 3 h.
    df = gpuslice.compare([two_runs / "hami-binpack", two_runs / "fgd"]).set_index("run")
    for policy in ("hami-binpack", "fgd"):
        row = df.loc[policy]
        assert row["policy"] == policy and row["run_kind"] == "snapshot"
        assert (row["pods"], row["placed"], row["refused"], row["pending_at_end"]) == (7, 5, 2, 0)
        assert row["refused_pct"] == pytest.approx(200 / 7)
        assert row["p95_pending_s"] == 10800 and row["p50_pending_s"] == 0
        assert math.isnan(row["alloc_ratio_at_130_pct"])  # no study figure for a snapshot


def test_compare_results_and_labels(root, two_runs):
    r = gpuslice.simulate(snapshot=root / SNAPSHOT, policy="hami-spread", assume_duration="3h")
    df = gpuslice.compare({"spread": r, "fgd-run": two_runs / "fgd"})
    assert list(df["run"]) == ["spread", "fgd-run"]
    assert list(df["dir"]) == ["", str(two_runs / "fgd")]
    assert list(df["policy"]) == ["hami-spread", "fgd"]
    # A result without a label is named by its policy.
    assert list(gpuslice.compare([r, two_runs / "fgd"])["run"]) == ["hami-spread", "fgd"]


def test_compare_bad_input_is_typed(root, two_runs, tmp_path):
    with pytest.raises(gpuslice.InputError, match="at least two"):
        gpuslice.compare([two_runs / "fgd"])
    with pytest.raises(gpuslice.InputError, match="not a folder"):
        gpuslice.compare([two_runs / "fgd", tmp_path / "nope"])
    with pytest.raises(gpuslice.InputError, match="the same run folder"):
        gpuslice.compare([two_runs / "fgd", str(two_runs / "fgd") + "/"])
    fgd = gpuslice.simulate(snapshot=root / SNAPSHOT, policy="fgd")
    with pytest.raises(gpuslice.InputError, match="share a name"):
        gpuslice.compare([two_runs / "fgd", fgd])
    with pytest.raises(gpuslice.InputError, match="expected a run folder or a SimResult"):
        gpuslice.compare({"a": two_runs / "fgd", "b": 42})
