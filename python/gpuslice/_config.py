"""Run configurations: plain, JSON-able dicts that describe one simulation.

They are what crosses process and machine boundaries in a sweep (pickled by
multiprocessing or Dask); the C++ objects are built inside the task from them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from . import _gpuslice

PathLike = "str | os.PathLike[str]"


def input_error(file: str, line: int, field: str, detail: str) -> Exception:
    """A gpuslice.InputError with its attributes set, as the C++ side raises it."""
    where = file if not line else f"{file}:{line}"
    text = f"{where}: {field}: {detail}" if field else f"{where}: {detail}"
    err = _gpuslice.InputError(text)
    err.file, err.line, err.field, err.detail = file, line, field, detail
    return err


def check_progress(progress: Any) -> None:
    """progress must be callable (or None); said at the call, not deep inside a run."""
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable taking the fraction done, got {type(progress).__name__}")


def read_text(path: Any, field: str) -> str:
    try:
        with open(os.fspath(path), encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except TypeError:
        raise input_error("arguments", 0, field, f"expected a path, got {type(path).__name__}") from None
    except OSError as e:
        raise input_error(os.fspath(path), 0, field, f"cannot open file ({e.strerror})") from None


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and "\n" in value


def scenario_config(
    scenario: Any = None,
    openb_nodes: Any = None,
    openb_pods: Any = None,
    *,
    tune: float | None = None,
    embed: bool = False,
) -> dict:
    """The scenario part of a run configuration.

    scenario: a path to a scenario YAML, its text (a string with newlines), or
    a dict (the same structure as the YAML). embed=True ships a file's text
    instead of its path (sweeps), with relative references resolved against
    the file's folder.
    """
    cfg: dict[str, Any] = {}
    if scenario is not None and (openb_nodes is not None or openb_pods is not None):
        raise input_error("arguments", 0, "openb_nodes", "give a scenario or an openb replay, not both")
    if scenario is None:
        if openb_nodes is None and openb_pods is None:
            raise input_error(
                "arguments", 0, "scenario", "give scenario=PATH, or openb_nodes=PATH and openb_pods=PATH"
            )
        if openb_nodes is None or openb_pods is None:
            missing = "openb_nodes" if openb_nodes is None else "openb_pods"
            raise input_error("arguments", 0, missing, "an openb replay needs both openb_nodes and openb_pods")
        cfg["openb_nodes"] = os.path.abspath(os.fspath(openb_nodes))
        cfg["openb_pods"] = os.path.abspath(os.fspath(openb_pods))
        if tune is not None:
            cfg["tune"] = float(tune)
        return cfg
    if isinstance(scenario, Mapping):
        cfg["scenario_text"] = json.dumps(scenario, indent=1, default=str)
        cfg["source"] = str(scenario.get("name", "<dict>"))
        cfg["base_dir"] = os.getcwd()
    elif _is_text(scenario):
        cfg["scenario_text"] = scenario
        cfg["source"] = "<scenario>"
        cfg["base_dir"] = os.getcwd()
    elif isinstance(scenario, (str, os.PathLike)):
        path = os.fspath(scenario)
        if embed:
            cfg["scenario_text"] = read_text(path, "scenario")
            cfg["source"] = path
            cfg["base_dir"] = os.path.dirname(os.path.abspath(path))
        else:
            cfg["scenario_path"] = path
    else:
        raise input_error(
            "arguments", 0, "scenario", f"expected a path, YAML text or a dict, got {type(scenario).__name__}"
        )
    if tune is not None:
        cfg["scenario_tune"] = float(tune)
    return cfg


def run_config(
    scenario: Any = None,
    openb_nodes: Any = None,
    openb_pods: Any = None,
    *,
    policy: str | None = None,
    gpu_policy: str | None = None,
    queue: str | None = None,
    seed: int | None = None,
    tune: float | None = None,
    overrides: Mapping[str, Any] | None = None,
    embed: bool = False,
    snapshot: Any = None,
    add_nodes: Any = None,
    cordon: Any = None,
    assume_duration: Any = None,
    quotas: Any = None,
) -> dict:
    if snapshot is not None:
        cfg = snapshot_config(scenario, openb_nodes, openb_pods, snapshot, add_nodes, cordon, assume_duration)
    elif add_nodes or cordon or assume_duration is not None:
        raise input_error("arguments", 0, "snapshot", "add_nodes, cordon and assume_duration go with snapshot=PATH")
    else:
        cfg = scenario_config(scenario, openb_nodes, openb_pods, tune=tune, embed=embed)
    for key, value in (("policy", policy), ("gpu_policy", gpu_policy), ("queue", queue)):
        if value is not None:
            if not isinstance(value, str):
                raise input_error("arguments", 0, key, f"expected a name, got {type(value).__name__}")
            # Names are checked here, before any run starts, by the C++ registry itself.
            problem = {"policy": _gpuslice.policy_name_problem, "gpu_policy": _gpuslice.gpu_policy_problem}.get(
                key, lambda _v: ""
            )(value)
            if problem:
                raise input_error("arguments", 0, key, problem)
            cfg[key] = value
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) and not hasattr(seed, "__index__"):
            raise input_error("arguments", 0, "seed", f"expected an integer, got {type(seed).__name__}")
        seed = int(seed)
        if seed < 0:
            raise input_error("arguments", 0, "seed", "must be a non-negative integer")
        cfg["seed"] = seed
    if overrides:
        cfg["overrides"] = dict(overrides)
    if quotas is not None:
        # As the CLI's --quotas FILE: ResourceQuota objects added to the scenario's or snapshot's own.
        if not isinstance(quotas, (str, os.PathLike)) or _is_text(quotas):
            raise input_error("arguments", 0, "quotas", f"expected a path, got {type(quotas).__name__}")
        cfg["quotas"] = os.fspath(quotas)
    return cfg


def snapshot_config(
    scenario: Any, openb_nodes: Any, openb_pods: Any, snapshot: Any, add_nodes: Any, cordon: Any,
    assume_duration: Any,
) -> dict:
    """A run from a cluster snapshot (kubectl get nodes,pods -A -o yaml|json): scenario, if given,
    is a path to a scenario file whose pods arrive later (its fleet is replaced by the snapshot).
    add_nodes: "NODE.yaml:COUNT" strings or {path: count}; assume_duration: "3h" or seconds."""
    if openb_nodes is not None or openb_pods is not None:
        raise input_error("arguments", 0, "openb_nodes", "give a snapshot or an openb replay, not both")
    if not isinstance(snapshot, (str, os.PathLike)):
        raise input_error("arguments", 0, "snapshot", f"expected a path, got {type(snapshot).__name__}")
    cfg: dict[str, Any] = {}
    if scenario is not None:
        if not isinstance(scenario, (str, os.PathLike)) or _is_text(scenario):
            raise input_error("arguments", 0, "scenario", "with a snapshot, scenario is the path of a pods file")
        cfg["scenario_path"] = os.fspath(scenario)
    if isinstance(add_nodes, Mapping):
        add = [f"{os.fspath(k)}:{int(v)}" for k, v in add_nodes.items()]
    elif isinstance(add_nodes, (str, os.PathLike)):
        add = [os.fspath(add_nodes)]
    else:
        add = [os.fspath(a) for a in (add_nodes or [])]
    if isinstance(cordon, str):
        cordon = [cordon]
    snap: dict[str, Any] = {"path": os.fspath(snapshot), "add_nodes": add, "cordon": list(cordon or [])}
    if assume_duration is not None:
        if isinstance(assume_duration, bool) or not isinstance(assume_duration, (str, int, float)):
            raise input_error("arguments", 0, "assume_duration", "expected a duration like '3h' or seconds")
        snap["assume_duration"] = assume_duration
    cfg["snapshot"] = snap
    return cfg


def add_node_groups(cfg: dict, node_groups: Any) -> None:
    """As --node-groups FILE: Cluster Autoscaler's node groups for a snapshot run, whose nodes join
    them by label (docs/simulator.md#node-groups-for-a-snapshot---node-groups-file)."""
    if node_groups is None:
        return
    if "snapshot" not in cfg:
        raise input_error("arguments", 0, "node_groups", "node_groups goes with snapshot=PATH")
    if not isinstance(node_groups, (str, os.PathLike)) or _is_text(node_groups):
        raise input_error("arguments", 0, "node_groups", f"expected a path, got {type(node_groups).__name__}")
    cfg["snapshot"]["node_groups"] = os.fspath(node_groups)


def dumps(cfg: Mapping[str, Any]) -> str:
    return json.dumps(cfg, default=_json_default)


def _json_default(o: Any) -> Any:
    # numpy scalars and the like
    for attr in ("item", "tolist"):
        if hasattr(o, attr):
            return getattr(o, attr)()
    if isinstance(o, os.PathLike):
        return os.fspath(o)
    raise TypeError(f"cannot turn {type(o).__name__} into JSON")
