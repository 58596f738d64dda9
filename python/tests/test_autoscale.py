"""Cluster Autoscaler's node groups from Python: simulate(snapshot=..., node_groups=...) as
`gpuslice simulate --snapshot --node-groups`, plan_capacity(autoscale=True) as `gpuslice plan
--autoscale`. The figures are worked by hand in docs/simulator.md."""

from __future__ import annotations

import pytest

import gpuslice


def test_snapshot_nodes_join_a_group_by_label(root):
    r = gpuslice.simulate(snapshot=root / "examples/autoscale/cluster.yaml",
                          node_groups=root / "examples/autoscale/node-groups.yaml")
    g = r.summary["node_groups"][0]
    assert g["members"] == 3 and g["scale_ups"] == 1 and g["scale_downs"] == 3
    assert g["node_hours"] == pytest.approx(24180 / 3600)
    assert g["cost"] == 2.35
    pods = r.pods.set_index("name")
    assert pods.loc["ml/train-b-0", "node"] == "t4-pool-0" and pods.loc["ml/train-b-0", "start"] == 180


def test_node_groups_need_a_snapshot(root):
    with pytest.raises(gpuslice.InputError):
        gpuslice.simulate(root / "scenarios/autoscale-burst.yaml",
                          node_groups=root / "examples/autoscale/node-groups.yaml")


def test_plan_autoscale_cheapest_max(root):
    # max 1: 0.219/h (5.26/day) but two pods wait 3600 s; max 2: 0.72/h (17.28/day), waits 180 s.
    p = gpuslice.plan_capacity(root / "scenarios/autoscale-burst.yaml", "max_pending_s<=600", autoscale=True)
    assert p.autoscale and p.counts == {"t4-pool": 2}
    assert p.cost == 0.72 and p.cost_per_day == 17.28
    cheap = gpuslice.plan_capacity(root / "scenarios/autoscale-burst.yaml", "refused_pct<=0", autoscale=True)
    assert cheap.counts == {"t4-pool": 1} and cheap.cost_per_day == 5.26
