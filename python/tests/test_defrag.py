"""gpuslice.defrag on the hand-built snapshots of tests/defrag/data (minimums worked out in
each file), the same answer as `gpuslice defrag`, and bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import gpuslice

COLUMNS = ["step", "pod", "from_node", "from_cards", "to_node", "to_cards", "gpu_mib"]


@pytest.fixture(scope="module")
def data(root):
    return root / "tests" / "defrag" / "data"


@pytest.mark.parametrize("name,moves,mib", [("one-move", 1, 20000), ("two-moves", 2, 40000), ("three-moves", 3, 45000)])
def test_known_minimum(data, name, moves, mib):
    df = gpuslice.defrag(snapshot=data / f"{name}.yaml", for_queue=True)
    assert list(df.columns) == COLUMNS
    assert len(df) == moves
    assert list(df["step"]) == list(range(1, moves + 1))
    assert df["gpu_mib"].sum() == mib
    assert set(df["from_node"]) == {"a100-a"} and set(df["to_node"]) == {"a100-b"}
    s = df.attrs["summary"]
    assert s["found"] and s["proven_minimal"] and s["moves"] == moves and s["lower_bound"] == moves
    assert s["targets"][0]["pod"] == "ml/finetune" and s["targets"][0]["node"] == "a100-a"


def test_budget_forbids_the_obvious_move(data):
    df = gpuslice.defrag(data / "budget-forbids.yaml")
    assert list(df["pod"]) == ["ml/small-1", "ml/small-2"]
    budget = df.attrs["summary"]["budgets"][0]
    assert budget["budget"] == "serving/llm" and budget["allowed"] == 0 and budget["used"] == 0


def test_no_plan_within_five_then_six(data):
    none = gpuslice.defrag(data / "six-moves.yaml", max_moves=5)
    assert none.empty and list(none.columns) == COLUMNS
    s = none.attrs["summary"]
    assert not s["found"] and s["proven_minimal"] and s["lower_bound"] == 6
    assert s["add"]["count"] == 1
    six = gpuslice.defrag(data / "six-moves.yaml", max_moves=6)
    assert len(six) == 6 and six.attrs["summary"]["proven_minimal"]


def test_the_example_fine_tune_needs_a_node(root):
    x = root / "examples" / "snapshot"
    df = gpuslice.defrag(snapshot=x / "cluster.yaml", for_pods="ml/finetune-7b-0", add=x / "a100-node.yaml")
    s = df.attrs["summary"]
    assert df.empty and not s["found"] and s["impossible"] and s["lower_bound"] is None
    assert s["add"]["count"] == 1 and s["add"]["template"] == "gpu-a100-new"


def test_free_cards_and_selectors(data):
    assert len(gpuslice.defrag(data / "one-move.yaml", free_cards=(2, "A100"))) == 2
    assert len(gpuslice.defrag(data / "one-move.yaml", free_cards="1:A100")) == 1
    moved = gpuslice.defrag(data / "one-move.yaml", movable="app!=small-1")
    assert list(moved["pod"]) == ["ml/small-2"]
    assert gpuslice.defrag(data / "one-move.yaml", protect="ml").empty


def test_namespace_quota_strict_at_the_limit(data):
    # ml's pods hold 140000 MiB and ml/finetune asks 70000: a 200000 MiB quota refuses it whatever
    # moves are made; at exactly 210000 the one-move plan stands (a move keeps the namespace's total).
    refused = gpuslice.defrag(data / "one-move.yaml", quotas=data / "quota-ml-200000.yaml")
    assert refused.empty and refused.attrs["summary"]["found"] is False
    exact = gpuslice.defrag(data / "one-move.yaml", quotas=data / "quota-ml-210000.yaml")
    assert list(exact["pod"]) == ["ml/small-1"]
    with pytest.raises(gpuslice.InputError):
        gpuslice.defrag(data / "one-move.yaml", quotas=data / "none.yaml")
    with pytest.raises(gpuslice.InputError):
        gpuslice.defrag(data / "one-move.yaml", device_config=7)


def test_same_answer_as_the_cli_and_files(data, run_cli, tmp_path):
    df = gpuslice.defrag(data / "three-moves.yaml", out=tmp_path / "py")
    proc = run_cli("defrag", "--snapshot", data / "three-moves.yaml", "--out", tmp_path / "cli", "--json")
    assert proc.returncode == 0, proc.stderr
    cli = json.loads(proc.stdout)
    assert cli["plan"] == df.attrs["summary"]["plan"]
    on_disk = pd.read_csv(tmp_path / "cli" / "moves.csv", dtype={"from_cards": str, "to_cards": str})
    pd.testing.assert_frame_equal(on_disk, df, check_dtype=False)
    assert (tmp_path / "py" / "moves.csv").read_text() == (tmp_path / "cli" / "moves.csv").read_text()
    assert (tmp_path / "py" / "report.html").stat().st_size > 100_000  # Chart.js inlined


def test_bad_input(root, data):
    x = root / "examples" / "snapshot" / "cluster.yaml"
    with pytest.raises(gpuslice.InputError) as e:
        gpuslice.defrag(x, for_pods=["ml/nope"])
    assert e.value.field == "--for" and "no pod 'ml/nope'" in e.value.detail
    with pytest.raises(gpuslice.InputError, match="already running"):
        gpuslice.defrag(x, for_pods="ml/train-llm-7b-0")
    with pytest.raises(gpuslice.InputError, match="the fleet has 10 usable cards"):
        gpuslice.defrag(x, free_cards=11)
    with pytest.raises(gpuslice.InputError, match="one of --for, --for-queue and --free-cards"):
        gpuslice.defrag(x, for_queue=True, free_cards=1)
    with pytest.raises(gpuslice.InputError):
        gpuslice.defrag(x, free_cards=True)
    with pytest.raises(gpuslice.InputError):
        gpuslice.defrag(x, max_moves="3")
    with pytest.raises(gpuslice.InputError, match="parentheses"):
        gpuslice.defrag(x, movable="app in web")
    with pytest.raises(gpuslice.InputError, match="cannot open"):
        gpuslice.defrag(data / "nope.yaml")


def test_dra_one_move(data):
    # tests/defrag/data/dra-one-move.yaml: under DRA's default-profile score the evicted x lands on
    # node-b (195 against 122), freeing node-a's card for z.
    df = gpuslice.defrag(data / "dra-one-move.yaml", policy="dra")
    assert list(df["pod"]) == ["default/x"]
    assert list(df["from_node"]) == ["node-a"] and list(df["to_node"]) == ["node-b"]
    assert df.attrs["summary"]["targets"][0]["node"] == "node-a"
