"""Bad input from Python: typed exceptions that name the field (issue 10)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import gpuslice


def test_simulate_empty_dict_names_the_missing_fleet():
    with pytest.raises(gpuslice.InputError) as info:
        gpuslice.simulate({})
    assert info.value.field == "fleet"
    assert "is required" in str(info.value)


@pytest.mark.parametrize("bad", ["bogus", "spread,foo", ","])
def test_invalid_gpu_policy_is_refused(root, monkeypatch, bad):
    monkeypatch.chdir(root)
    with pytest.raises(gpuslice.InputError) as info:
        gpuslice.simulate("scenarios/lab-t4-slices.yaml", gpu_policy=bad)
    assert info.value.field == "gpu_policy"


def test_sweep_params_gpu_policy_is_refused_before_running(root, monkeypatch):
    monkeypatch.chdir(root)
    with pytest.raises(gpuslice.InputError) as info:
        gpuslice.sweep(scenario="scenarios/lab-t4-slices.yaml", params={"gpu_policy": ["spread", "bogus"]},
                       processes=1)
    assert info.value.field == "gpu_policy"


def test_fleet_from_templates_says_which_field():
    with pytest.raises(gpuslice.InputError) as info:
        gpuslice.Fleet.from_templates([{"template": {"model": "Tesla T4", "card_memory_mib": 15360}}])
    assert info.value.field == "fleet[0].template.name"
    assert "json.exception" not in str(info.value)
    with pytest.raises(gpuslice.InputError) as info:
        gpuslice.Fleet.from_templates([{"template": {"name": "a", "model": "T4", "card_memory_mib": "lots"}}])
    assert info.value.field == "fleet[0].template.card_memory_mib"


def test_fleet_has_no_card_use():
    fleet = gpuslice.Fleet.from_templates([{"template": {"name": "a", "model": "T4", "card_memory_mib": 15360}}])
    assert not hasattr(fleet, "card_use")  # a fleet has cards; a run result has card_use


def test_plan_target_must_be_a_number(root, monkeypatch):
    monkeypatch.chdir(root)
    with pytest.raises(gpuslice.InputError) as info:
        gpuslice.plan_capacity("scenarios/capacity-planning.yaml", {"p95_pending_s": "abc"})
    assert info.value.field == "targets"
    assert "p95_pending_s" in str(info.value) and "sabc" not in str(info.value)
    with pytest.raises(gpuslice.InputError):
        gpuslice.plan_capacity("scenarios/capacity-planning.yaml", {"p95_pending_s": [60]})


def test_progress_is_checked_at_the_call(root, monkeypatch):
    monkeypatch.chdir(root)
    with pytest.raises(TypeError, match="progress"):
        gpuslice.simulate("scenarios/lab-t4-slices.yaml", progress=5)
    with pytest.raises(TypeError, match="progress"):
        gpuslice.plan_capacity("scenarios/capacity-planning.yaml", "p95_pending_s<=60", progress=5)


def test_write_to_an_unwritable_place_is_oserror(root, monkeypatch):
    monkeypatch.chdir(root)
    result = gpuslice.simulate("scenarios/lab-t4-slices.yaml")
    with pytest.raises(OSError):
        result.write("/proc/gpuslice-cannot-write-here")


def test_sweep_without_main_guard_from_python_c(root):
    # `python -c` has no script to re-run in the spawned workers: it must just work.
    code = (
        "import gpuslice; df = gpuslice.sweep(scenario='scenarios/lab-t4-slices.yaml', seeds=[1, 2], processes=2);"
        "print(len(df))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"


def test_place_kubectl_dump(root):
    dump = root / "tests/cli/data/kubectl-cluster.json"
    out = gpuslice.place(dump, root / "tests/cli/data/kubectl-pod-9000.yaml", existing=dump)
    assert out["node"] == "gpu-t4-1"
    assert any("retired-card" in w for w in out["warnings"])


def test_sweep_script_without_main_guard_says_why(root, tmp_path):
    script = tmp_path / "noguard.py"
    script.write_text(
        "import gpuslice\n"
        "gpuslice.sweep(scenario='scenarios/lab-t4-slices.yaml', seeds=[1, 2], processes=2)\n"
    )
    done = subprocess.run([sys.executable, str(script)], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "__main__" in done.stderr and "BrokenProcessPool" in done.stderr  # ours, chained to the pool's
