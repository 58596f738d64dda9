"""quotas= on simulate, place and plan_capacity: HAMi v2.10's namespace ResourceQuota, as the CLI's --quotas FILE."""

from __future__ import annotations

import json

import pytest

import gpuslice

from test_simulate import same_summary

EX = "examples/place"
QUOTA = "examples/quota/default-quota.yaml"  # namespace default: limits.nvidia.com/gpumem 10000, gpucores 200


def test_simulate_quotas_worked_by_hand(root):
    # The T4 lab's pods are all in namespace default: 4000 + 4000 fit 10000, a third 4000 would
    # make 12000; six 300 MiB slices reach 9800, the seventh would make 10100. HAMi's check is
    # strict (used + ask > limit refuses), so 8 placed and 3 refused with ResourceQuotaNotFit.
    r = gpuslice.simulate(root / "scenarios/lab-t4-slices.yaml", quotas=root / QUOTA)
    assert r.summary["placements"] == 8
    assert r.summary["refused"] == 3
    assert r.summary["refusals_by_reason"] == {"ResourceQuotaNotFit": 3}
    refused = r.pods[r.pods["status"] == "refused"]
    assert list(refused["name"]) == ["slice-4000-2", "slice-300-9", "slice-300-10"]
    # Without quotas: the lab's own answer (the 11th slice finds no slot).
    assert gpuslice.simulate(root / "scenarios/lab-t4-slices.yaml").summary["placements"] == 10


def test_simulate_quotas_equals_cli(root, run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(root)
    run_cli("simulate", "scenarios/lab-t4-slices.yaml", "--quotas", QUOTA, "--out", tmp_path, check=True)
    r = gpuslice.simulate("scenarios/lab-t4-slices.yaml", quotas=QUOTA)
    same_summary(r.summary, json.loads((tmp_path / "summary.json").read_text()))


def test_place_quotas_equals_cli(root, run_cli, monkeypatch):
    monkeypatch.chdir(root)
    case = dict(nodes=f"{EX}/t4-node.yaml", pod=f"{EX}/gpumem-pod-a.yaml", existing=f"{EX}/two-placed.yaml")
    proc = run_cli("place", "--json", "--nodes", case["nodes"], "--pod", case["pod"], "--existing",
                   case["existing"], "--quotas", QUOTA)
    assert proc.returncode == 1, proc.stderr
    got = gpuslice.place(**case, quotas=QUOTA)
    assert got == json.loads(proc.stdout)
    # Two 4000 MiB pods count 8000 of 10000: a third does not fit.
    assert got["node"] is None
    assert got["failed_nodes"] == {"hami-workshop": "1/1 ResourceQuotaNotFit"}
    # The quota as YAML text, as nodes and pods may be given.
    text = (root / QUOTA).read_text()
    assert gpuslice.place(**case, quotas=text) == got
    # Nothing placed yet: it fits.
    assert gpuslice.place(nodes=case["nodes"], pod=case["pod"], quotas=QUOTA)["node"] == "hami-workshop"


def test_quotas_bad_input_is_a_typed_error(root):
    with pytest.raises(gpuslice.InputError) as e:
        gpuslice.simulate(root / "scenarios/lab-t4-slices.yaml", quotas=root / "examples/quota/negative-quota.yaml")
    assert e.value.line == 8 and e.value.field == "spec.hard.limits.nvidia.com/gpumem"
    assert "negative-quota.yaml" in e.value.file
    with pytest.raises(gpuslice.InputError) as e:
        gpuslice.place(nodes=root / f"{EX}/t4-node.yaml", pod=root / f"{EX}/gpumem-pod-a.yaml",
                       quotas=root / "examples/quota/negative-quota.yaml")
    assert e.value.field == "spec.hard.limits.nvidia.com/gpumem"
    with pytest.raises(gpuslice.InputError):
        gpuslice.simulate(root / "scenarios/lab-t4-slices.yaml", quotas=root / "examples/quota/none.yaml")
    with pytest.raises(gpuslice.InputError) as e:
        gpuslice.simulate(root / "scenarios/lab-t4-slices.yaml", quotas=7)
    assert e.value.field == "quotas"


def test_plan_capacity_takes_quotas(root):
    # One T4 has 10 slots for the lab's 11 pods, two place them all. With namespace default's
    # 10000 MiB quota the pods ask 3 x 4000 + 8 x 300 = 14400 MiB in all: no fleet places them.
    plain = gpuslice.plan_capacity(root / "scenarios/lab-t4-slices.yaml", "refused_pct<=0", max_count=4)
    assert plain.met and plain.count == 2
    capped = gpuslice.plan_capacity(root / "scenarios/lab-t4-slices.yaml", "refused_pct<=0", max_count=4,
                                    quotas=root / QUOTA)
    assert not capped.met
