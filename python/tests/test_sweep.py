"""gpuslice.sweep in local processes and on a Dask LocalCluster: one row per run."""

from __future__ import annotations

import pandas as pd
import pytest

import gpuslice

POLICIES = ["hami-binpack", "hami-spread"]
SEEDS = [1, 2]


@pytest.fixture(scope="module")
def reference(root):
    # The same runs one by one, in this process.
    return {
        (p, s): gpuslice.simulate(root / "scenarios/inference-fleet.yaml", policy=p, seed=s).summary
        for p in POLICIES
        for s in SEEDS
    }


def check(df, reference):
    assert len(df) == len(POLICIES) * len(SEEDS)
    # The inference fleet's pods come and go: allocation is read over time
    # (its final state is empty and its arrived-demand curve means nothing).
    assert {"run", "policy", "seed", "placements", "alloc_gpu_pct_time_weighted", "pending_seconds.p95",
            "run_kind", "scenario"} <= set(df.columns)
    for _, row in df.iterrows():
        ref = reference[(row["policy"], row["seed"])]
        assert row["placements"] == ref["placements"]
        assert row["pending_seconds.p95"] == pytest.approx(ref["pending_seconds"]["p95"])
        assert row["alloc_gpu_pct_time_weighted"] == pytest.approx(ref["alloc_gpu_pct_time_weighted"])


def test_sweep_local_processes(root, reference):
    df = gpuslice.sweep(policies=POLICIES, seeds=SEEDS, scenario=root / "scenarios/inference-fleet.yaml",
                        processes=2)
    check(df, reference)


def test_sweep_in_process(root, reference):
    df = gpuslice.sweep(policies=POLICIES, seeds=SEEDS, scenario=root / "scenarios/inference-fleet.yaml",
                        processes=1)
    check(df, reference)


def test_sweep_dask_local_cluster(root, reference):
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc:
        with distributed.Client(lc) as client:
            df = gpuslice.sweep(policies=POLICIES, seeds=SEEDS, scenario=root / "scenarios/inference-fleet.yaml",
                                client=client)
            # pure=False: the same configuration twice is two runs, not one cached result.
            twice = gpuslice.sweep(policies=["hami-binpack"], seeds=[1, 1],
                                   scenario=root / "scenarios/lab-t4-slices.yaml", client=client)
    check(df, reference)
    assert len(twice) == 2


def test_sweep_openb_tunes_and_params(openb, root):
    df = gpuslice.sweep(policies=["hami-binpack"], seeds=[5], tune=[0.3, 0.5], openb_nodes=openb[0],
                        openb_pods=openb[1], processes=1)
    assert list(df["tune"]) == [0.3, 0.5]
    assert df["arrived_gpu_pct"].iloc[0] < df["arrived_gpu_pct"].iloc[1]
    grid = gpuslice.sweep(
        seeds=[1], scenario=root / "scenarios/inference-fleet.yaml", processes=2,
        params={"generator.rate_per_s": [0.01, 0.04], "queue": ["fifo", "skip-ahead"]},
    )
    assert len(grid) == 4
    assert set(grid["generator.rate_per_s"]) == {0.01, 0.04}
    assert set(grid["queue"]) == {"fifo", "skip-ahead"}
    assert (grid["policy"] == "hami-binpack").all()


def test_sweep_dict_scenarios(root):
    tiny = {
        "name": "tiny",
        "fleet": [{"template": {"name": "t4", "model": "Tesla T4", "cards": 1, "card_memory_mib": 15360}, "count": 1}],
        "templates": {"s": {"gpu": 1, "gpumem": 2000}},
        "pods": [{"at": 0, "template": "s", "repeat": 12}],
    }
    df = gpuslice.sweep(scenarios=[tiny, root / "scenarios/lab-t4-slices.yaml"], seeds=[1], processes=1)
    assert list(df["scenario"]) == ["tiny", "lab-t4-slices"]
    assert list(df["refused"]) == [5, 1]
    assert "refusals_by_reason.CardTimeSlicingExhausted" in df.columns


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(policies=["no-such-policy"], scenario="scenarios/lab-t4-slices.yaml"),
        dict(policies=["hami-binpack"]),
        dict(policies=["hami-binpack"], scenario="scenarios/lab-t4-slices.yaml", openb_nodes="x", openb_pods="y"),
        dict(scenario="scenarios/lab-t4-slices.yaml", seeds=[]),
        dict(scenario="scenarios/missing.yaml"),
    ],
    ids=["policy", "no-scenario", "both", "no-seeds", "missing-file"],
)
def test_sweep_bad_input(kwargs, root, monkeypatch):
    monkeypatch.chdir(root)
    with pytest.raises(gpuslice.InputError):
        gpuslice.sweep(processes=1, **kwargs)


def test_sweep_error_in_worker_is_raised(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nfleet: {openb: nowhere.csv}\nopenb_pods: {file: nowhere.csv}\n")
    with pytest.raises(ValueError):
        gpuslice.sweep(scenario=bad, seeds=[1, 2], processes=2)


def test_sweep_curves_are_the_studys(openb):
    # The study's replay of the default trace with FGD, seed 42: the artifact publishes 95.29.
    runs, curves = gpuslice.sweep(policies=["fgd"], seeds=[42], openb_nodes=openb[0], openb_pods=openb[1],
                                  processes=1, curves=True)
    assert len(runs) == 1
    assert list(curves.columns[-3:]) == ["arrived_pct", "alloc_pct", "frag_pct"]
    assert list(curves["arrived_pct"]) == list(range(131))
    assert set(curves["policy"]) == {"fgd"}
    at130 = curves.loc[curves["arrived_pct"] == 130, "alloc_pct"].iloc[0]
    assert at130 == pytest.approx(runs["alloc_ratio_at_130_pct"].iloc[0])
    assert at130 == pytest.approx(95.27, abs=0.01)


def test_sweep_curves_on_dask_are_the_local_ones(openb):
    # The study's grid past one machine: the same runs on a Dask cluster give
    # the same curves, row for row, as in this process.
    distributed = pytest.importorskip("dask.distributed")
    grid = dict(policies=["bestfit", "fgd"], seeds=[42, 43], openb_nodes=openb[0], openb_pods=openb[1], curves=True)
    local_runs, local_curves = gpuslice.sweep(processes=1, **grid)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc:
        with distributed.Client(lc) as client:
            runs, curves = gpuslice.sweep(client=client, **grid)
    assert len(curves) == 4 * 131
    key = ["policy", "seed", "arrived_pct"]
    a = local_curves.sort_values(key).reset_index(drop=True)
    b = curves.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a[key + ["alloc_pct", "frag_pct"]], b[key + ["alloc_pct", "frag_pct"]])
    assert sorted(runs["alloc_ratio_at_130_pct"]) == sorted(local_runs["alloc_ratio_at_130_pct"])
