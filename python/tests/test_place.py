"""gpuslice.place: the same result as `gpuslice place --json`, and clear errors."""

from __future__ import annotations

import json

import pytest

import gpuslice

EX = "examples/place"

CASES = [
    dict(nodes=f"{EX}/t4-node.yaml", pod=f"{EX}/gpumem-pod-a.yaml"),
    dict(nodes=f"{EX}/t4-node.yaml", pod=f"{EX}/oversized-pod.yaml"),
    dict(nodes=f"{EX}/t4-node.yaml", pod=f"{EX}/gpumem-pod-a.yaml", existing=f"{EX}/two-placed.yaml"),
    dict(nodes=f"{EX}/t4-node.yaml", pod=f"{EX}/gpumem-pod-a.yaml", node_policy="spread", gpu_policy="binpack"),
]


@pytest.mark.parametrize("case", CASES, ids=["fits", "oversized", "existing", "policies"])
def test_place_equals_cli(case, root, run_cli, monkeypatch):
    monkeypatch.chdir(root)
    args = ["place", "--json", "--nodes", case["nodes"], "--pod", case["pod"]]
    if "existing" in case:
        args += ["--existing", case["existing"]]
    if "node_policy" in case:
        args += ["--node-policy", case["node_policy"], "--gpu-policy", case["gpu_policy"]]
    proc = run_cli(*args)
    assert proc.returncode in (0, 1), proc.stderr
    expected = json.loads(proc.stdout)
    got = gpuslice.place(**case)
    assert got == expected
    # The keys of `place --json`, in order; issue 10 added warnings, and shortfall when no node fits;
    # issue 24 added what the deciding scheduler writes, after them.
    keys = ["node", "score", "allocation", "failed_nodes", "events", "warnings"]
    dialect_keys = ["policy", "annotations", "labels", "reservation_pods", "enforcement"]
    assert list(got) == keys + ([] if got["node"] else ["shortfall"]) + dialect_keys


def test_place_result_shape(root):
    r = gpuslice.place(nodes=root / EX / "t4-node.yaml", pod=root / EX / "gpumem-pod-a.yaml")
    assert r["node"] and r["allocation"]
    refused = gpuslice.place(nodes=root / EX / "t4-node.yaml", pod=root / EX / "oversized-pod.yaml")
    assert refused["node"] is None
    assert refused["failed_nodes"]


def test_place_accepts_yaml_text(root):
    nodes = (root / EX / "t4-node.yaml").read_text()
    pod = (root / EX / "gpumem-pod-a.yaml").read_text()
    by_text = gpuslice.place(nodes=nodes, pod=pod)
    by_path = gpuslice.place(nodes=root / EX / "t4-node.yaml", pod=root / EX / "gpumem-pod-a.yaml")
    assert by_text["node"] == by_path["node"]
    assert by_text["allocation"] == by_path["allocation"]


def test_bad_node_raises_input_error(root, run_cli):
    with pytest.raises(gpuslice.InputError) as info:
        gpuslice.place(nodes=root / EX / "bad-node.yaml", pod=root / EX / "gpumem-pod-a.yaml")
    err = info.value
    assert isinstance(err, ValueError)
    assert err.file.endswith("bad-node.yaml")
    assert err.line > 0
    assert isinstance(err.field, str)
    assert str(err)


def test_missing_file_raises_input_error(root):
    with pytest.raises(gpuslice.InputError) as info:
        gpuslice.place(nodes=root / "no-such-nodes.yaml", pod=root / EX / "gpumem-pod-a.yaml")
    assert info.value.file.endswith("no-such-nodes.yaml")


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(nodes=42, pod=f"{EX}/gpumem-pod-a.yaml"),
        dict(nodes=f"{EX}/t4-node.yaml", pod=f"{EX}/gpumem-pod-a.yaml", node_policy=3),
        dict(nodes=f"{EX}/t4-node.yaml", pod="apiVersion: v1\nkind: Pod\nmetadata: {name: x\n"),
        dict(nodes="kind: Node\nmetadata: [1, 2\n", pod=f"{EX}/gpumem-pod-a.yaml"),
    ],
    ids=["nodes-not-a-path", "policy-not-a-name", "pod-yaml-syntax", "nodes-yaml-syntax"],
)
def test_bad_arguments_raise_input_error(kwargs, root, monkeypatch):
    monkeypatch.chdir(root)
    with pytest.raises(gpuslice.InputError):
        gpuslice.place(**kwargs)


def test_pod_requests(root):
    reqs = gpuslice.pod_requests(root / EX / "gpumem-pod-a.yaml")
    assert len(reqs) == 1
    c = reqs[0]["containers"][0]
    assert c["gpus"] == 1 and c["memory_mib"] == 4000


def test_fleet_from_manifests(root):
    fleet = gpuslice.Fleet.from_manifests(root / EX / "t4-node.yaml")
    assert fleet.node_count >= 1
    assert fleet.gpu_count == len(fleet.cards)
    assert {"node", "uuid", "memory_mib", "slots", "cores"} <= set(fleet.cards.columns)


def test_place_dialects(root):
    """The seed document's Koordinator pod, and a KAI share, through gpuslice.place(policy=...)."""
    koord = gpuslice.place(
        nodes=root / "examples/dialects/koordinator-nodes.yaml",
        pod=root / "examples/dialects/seed-koordinator-pod.yaml",
        existing=root / "examples/dialects/koordinator-running.yaml",
        policy="koordinator",
    )
    assert koord["node"] == "gpu-node-a"
    assert koord["annotations"]["scheduling.koordinator.sh/device-allocated"] == (
        '{"gpu":[{"minor":1,"resources":{"koordinator.sh/gpu-core":"50",'
        '"koordinator.sh/gpu-memory":"11520Mi","koordinator.sh/gpu-memory-ratio":"50"}}]}'
    )
    kai = gpuslice.place(
        nodes=root / "examples/dialects/kai-nodes.yaml", pod=root / "examples/dialects/kai-half-pod.yaml", policy="kai-binpack"
    )
    assert kai["annotations"] == {"received-resource-type": "Fraction"}
    assert list(kai["labels"]) == ["runai-gpu-group"]
    assert len(kai["reservation_pods"]) == 1
    assert "enforces nothing" in kai["enforcement"]
    with pytest.raises(gpuslice.InputError) as e:
        gpuslice.place(nodes=root / "examples/dialects/kai-nodes.yaml", pod=root / "examples/dialects/kai-half-pod.yaml", policy="nope")
    assert "unknown policy 'nope'" in str(e.value)
