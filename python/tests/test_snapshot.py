"""gpuslice.simulate(snapshot=...) and gpuslice.plan_capacity(snapshot=...): a HAMi cluster's
kubectl dump as the start, as `gpuslice simulate --snapshot` and `gpuslice plan --snapshot`."""

from __future__ import annotations

import pytest

import gpuslice


def test_simulate_snapshot_yaml_and_json_alike(root):
    runs = [gpuslice.simulate(snapshot=root / f"examples/snapshot/cluster.{ext}", assume_duration="3h")
            for ext in ("yaml", "json")]
    for r in runs:
        s = r.summary
        assert s["run_kind"] == "snapshot"
        assert s["snapshot"]["queue"] == 7 and s["snapshot"]["running_gpu_pods"] == 9
        assert s["snapshot"]["skipped"] == {"Succeeded": 1, "asks no HAMi GPU": 1}
        assert s["snapshot"]["queue_refused"] == 2
        pods = r.pods
        assert list(pods["name"])[:2] == ["ml/finetune-7b-0", "lab/notebook-carol"]
        big = pods[pods["name"] == "ml/train-llm-70b-0"].iloc[0]
        assert big["status"] == "refused" and "90000 MiB" in big["shortfall"]
    assert list(runs[0].pods["node"].fillna("")) == list(runs[1].pods["node"].fillna(""))


def test_simulate_snapshot_bad_input_is_typed(root, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: List\nitems: []\n")
    with pytest.raises(gpuslice.InputError):
        gpuslice.simulate(snapshot=bad)
    with pytest.raises(gpuslice.InputError):
        gpuslice.simulate(snapshot=root / "examples/snapshot/cluster.yaml", assume_duration="soon")
    with pytest.raises(gpuslice.InputError):
        gpuslice.simulate(root / "scenarios/lab-t4-slices.yaml", cordon=["gpu-t4-1"])


def test_plan_capacity_snapshot_known_answer(root):
    # tests/cli/data/snapshot-three-waiting.yaml works the answer out by hand: 3 nodes.
    p = gpuslice.plan_capacity(snapshot=root / "tests/cli/data/snapshot-three-waiting.yaml",
                               add=root / "examples/place/t4-node.yaml", targets="refused_pct<=0")
    assert p.count == 3


def test_simulate_dra_snapshot_under_policy_dra(root):
    # examples/dra/hami-dra-cluster.yaml works the outcome out by hand (docs/dialects.md).
    r = gpuslice.simulate(snapshot=root / "examples/dra/hami-dra-cluster.yaml", policy="dra")
    pods = r.pods.set_index("name")
    assert list(pods.index) == ["default/wide-0", "default/half-0", "default/small-0"]
    assert list(pods["node"]) == ["node-a", "node-a", "node-b"]
    driver = "hami-core-gpu.project-hami.io"
    assert pods.loc["default/wide-0", "claim_allocation"].startswith(
        '{"devices":{"results":[{"request":"gpu","driver":"' + driver
        + '","pool":"node-a","device":"hami-gpu-1","consumedCapacity":{"cores":"60","memory":"71680Mi"}}]}')
    assert r.summary["snapshot"]["running_gpu_pods"] == 1
    other = gpuslice.simulate(snapshot=root / "examples/dra/hami-dra-cluster.yaml", policy="hami-binpack")
    assert set(other.pods["claim_allocation"]) == {""}
