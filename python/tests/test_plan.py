"""gpuslice.plan_capacity on cases with known answers, the CLI's `gpuslice plan`, errors."""

from __future__ import annotations

import json

import pytest

import gpuslice


def whole_card_burst(pods: int = 10, groups=None) -> dict:
    """`pods` pods of one whole card each, all at t=0, never leaving: a node of 4 cards
    holds 4, so ceil(pods / 4) nodes are needed for none to be refused."""
    groups = groups or [{"template": {"name": "n4", "model": "NVIDIA L4", "cards": 4, "card_memory_mib": 23034},
                         "count": 1}]
    return {
        "name": "whole-card-burst",
        "fleet": groups,
        "templates": {"whole": {"gpu": 1, "gpumem-percentage": 100}},
        "pods": [{"at": 0, "template": "whole", "repeat": pods}],
    }


@pytest.mark.parametrize("bound,answer", [(0, 3), (10, 3), (20, 2), (60, 1)])
def test_known_answer(bound, answer):
    plan = gpuslice.plan_capacity(whole_card_burst(), f"refused_pct<={bound}", max_count=8)
    assert plan.met and plan.count == answer
    assert plan.counts == {"n4": answer}
    curve = plan.curve
    assert curve["count"].is_monotonic_increasing
    assert {"count", "meets", "gpus", "refused_pct", "p95_pending_s"} <= set(curve.columns)
    # The curve behind the answer: the answer meets, the count below it does not.
    row = curve.set_index("count")
    assert row.loc[answer, "meets"]
    if answer > 1:
        assert not row.loc[answer - 1, "meets"]
        assert row.loc[answer - 1, "refused_pct"] > bound


def test_scan_agrees_with_bisect():
    a = gpuslice.plan_capacity(whole_card_burst(23), {"refused_pct": 0}, max_count=10, search="scan")
    b = gpuslice.plan_capacity(whole_card_burst(23), {"refused_pct": 0}, max_count=10)
    assert a.count == b.count == 6
    assert list(a.curve["count"]) == list(range(1, 11))
    assert list(a.curve["refused_pct"]) == [pytest.approx(max(0, 23 - 4 * n) / 23 * 100) for n in range(1, 11)]


def test_mix_in_proportion():
    groups = [
        {"template": {"name": "big", "model": "NVIDIA L4", "cards": 4, "card_memory_mib": 23034}, "count": 1},
        {"template": {"name": "small", "model": "NVIDIA L4", "cards": 2, "card_memory_mib": 23034}, "count": 1},
    ]
    plan = gpuslice.plan_capacity(whole_card_burst(10, groups), ["refused_pct<=0"], max_count=6)
    assert plan.count == 3 and plan.counts == {"big": 2, "small": 1}
    only_small = gpuslice.plan_capacity(whole_card_burst(10, groups), "refused_pct<=0", vary="small", max_count=6)
    # big stays at 1 node (4 cards): 3 small nodes add the 6 cards still needed.
    assert only_small.count == 3 and only_small.counts == {"small": 3}


def test_no_answer_in_range():
    plan = gpuslice.plan_capacity(whole_card_burst(40), "refused_pct<=0", max_count=4)
    assert not plan.met and plan.count is None
    assert plan.curve["refused_pct"].min() > 0


def test_pending_target_with_seeds(root):
    plan = gpuslice.plan_capacity(
        root / "scenarios/capacity-planning.yaml", "p95_pending_s<=60", seeds=[1, 2], min_count=1, max_count=12,
        curve_points=4,
    )
    assert plan.met
    curve = plan.curve.set_index("count")
    assert curve.loc[plan.count, "p95_pending_s"] <= 60
    if plan.count > 1:
        assert curve.loc[plan.count - 1, "p95_pending_s"] > 60
    assert plan["seeds"] == [1, 2]


@pytest.mark.parametrize(
    "targets,field",
    [("p95 pending under 60", "target"), ("refused_pct<=abc", "target"), ([], "target"),
     ("nosuchmetric<=1", "target")],
)
def test_bad_targets(targets, field):
    with pytest.raises(gpuslice.InputError) as info:
        gpuslice.plan_capacity(whole_card_burst(), targets)
    assert info.value.field == field


def test_bad_plan_arguments(root, openb):
    with pytest.raises(gpuslice.InputError):
        gpuslice.plan_capacity(whole_card_burst(), "refused_pct<=0", vary="nope")
    with pytest.raises(gpuslice.InputError):
        gpuslice.plan_capacity(whole_card_burst(), "refused_pct<=0", min_count=5, max_count=2)
    with pytest.raises(gpuslice.InputError):
        gpuslice.plan_capacity(root / "scenarios/openb-default.yaml", "refused_pct<=0")
    with pytest.raises(gpuslice.InputError):
        gpuslice.plan_capacity(whole_card_burst(), "refused_pct<=0", search="guess")


def test_cli_plan_matches(root, run_cli, tmp_path):
    if "plan" not in run_cli("--help").stdout:
        pytest.skip("this gpuslice binary has no `plan` subcommand yet (cli/main.cpp)")
    scenario = tmp_path / "burst.json"
    scenario.write_text(json.dumps(whole_card_burst()))
    proc = run_cli("plan", scenario, "--target", "refused_pct<=0", "--max", "8", "--json")
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["count"] == 3
    py = gpuslice.plan_capacity(scenario, "refused_pct<=0", max_count=8)
    assert got["curve"] == py["curve"]
    none = run_cli("plan", scenario, "--target", "refused_pct<=0", "--max", "2")
    assert none.returncode == 1 and "none" in none.stdout
    bad = run_cli("plan", scenario, "--target", "oops")
    assert bad.returncode == 2


def test_plan_prices_known_answer(root, run_cli):
    # tests/cli/data/plan-prices.yaml works it out by hand: 5 whole-card pods; big (2 A100) 3/h,
    # small (1 T4) 2/h; the cheapest fleet with 5 cards is 2 big + 1 small at 8/h.
    scenario = root / "tests/cli/data/plan-prices.yaml"
    by_template = gpuslice.plan_capacity(scenario, "refused_pct<=0", prices={"big": 3, "small": 2}, max_count=6)
    by_card = gpuslice.plan_capacity(scenario, "refused_pct<=0", prices={"A100": 1.5, "Tesla T4": 2}, max_count=6)
    for p in (by_template, by_card):
        assert p.met and p.counts == {"big": 2, "small": 1} and p.cost == 8
        assert p.prices == {"big": 3, "small": 2}
        assert p.cheaper_misses[0]["counts"] == {"big": 1, "small": 2} and p.cheaper_misses[0]["cost"] == 7
        assert "cost" in p.curve.columns
    cli = run_cli("plan", scenario, "--target", "refused_pct<=0", "--price", "big=3", "--price", "small=2",
                  "--max", "6", "--json", check=True)
    assert json.loads(cli.stdout)["curve"] == by_template["curve"]
    with pytest.raises(gpuslice.InputError, match="no price for the fleet template 'small'"):
        gpuslice.plan_capacity(scenario, "refused_pct<=0", prices={"big": 3})
