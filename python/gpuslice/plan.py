"""Capacity planning: the smallest fleet that meets targets, by search over simulations.

The search runs in C++ (the same code as `gpuslice plan`); this module shapes
arguments and results.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pandas as pd

from . import _gpuslice
from ._config import add_node_groups, check_progress, dumps, input_error, run_config

__all__ = ["plan_capacity", "PlanResult", "metric_names"]


def metric_names() -> list[str]:
    """Metrics a target can name (besides any numeric summary field, by dotted path)."""
    return list(_gpuslice.metric_names())


def _targets(targets: Any) -> list[str]:
    if isinstance(targets, str):
        return [targets]
    if isinstance(targets, Mapping):
        out = []
        for metric, bound in targets.items():
            if not isinstance(metric, str):
                raise input_error("arguments", 0, "targets", f"a metric name must be text, got {metric!r}")
            if isinstance(bound, str):
                if not bound.lstrip().startswith(("<", ">")):
                    raise input_error(
                        "arguments", 0, "targets",
                        f"{metric}: {bound!r} is neither a number nor a bound like '<=60' or '>=50'",
                    )
                out.append(f"{metric}{bound}")  # {"final_alloc_gpu_pct": ">=50"}
            elif isinstance(bound, bool) or not isinstance(bound, (int, float)) and not hasattr(bound, "__float__"):
                raise input_error(
                    "arguments", 0, "targets", f"{metric}: the bound must be a number, got {type(bound).__name__}"
                )
            else:
                out.append(f"{metric}<={float(bound)!r}")
        return out
    if isinstance(targets, Iterable):
        out = list(targets)
        if all(isinstance(t, str) for t in out):
            return out
    raise input_error("arguments", 0, "targets", "give 'metric<=value' strings or {metric: max}")


class PlanResult:
    """The answer (.count nodes, .counts per template, .met) and the curve behind it (.curve)."""

    def __init__(self, data: dict):
        self.data = data
        self.count: int | None = data["count"]
        self.counts: dict[str, int] = dict(data["counts"])
        self.met: bool = bool(data["met"])
        self.targets: list[str] = list(data["targets"])
        self.interrupted: bool = bool(data["interrupted"])
        # Priced plans (prices=...): the answer's cost per hour, the price of a node of each
        # template, the cheaper fleets tried that miss ({counts, cost, misses}).
        self.cost: float | None = data.get("cost")
        self.prices: dict[str, float] = dict(data.get("prices", {}))
        self.cheaper_misses: list[dict] = list(data.get("cheaper_misses", []))
        # plan --autoscale: counts are each node group's max; the answer's cost per day.
        self.autoscale: bool = bool(data.get("autoscale", False))
        self.cost_per_day: float | None = data.get("cost_per_day")

    @property
    def curve(self) -> pd.DataFrame:
        rows = []
        for point in self.data["curve"]:
            row = {k: v for k, v in point.items() if k != "counts"}
            for name, n in point["counts"].items():
                row[f"count.{name}"] = n
            rows.append(row)
        return pd.DataFrame(rows)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def to_dict(self) -> dict:
        return json.loads(json.dumps(self.data))

    def plot(self, metric: str | None = None, ax: Any = None) -> Any:
        from .plots import plot_plan

        return plot_plan(self, metric=metric, ax=ax)

    def __repr__(self) -> str:
        answer = f"{self.count} nodes {self.counts}" if self.met else "none in range"
        return f"<gpuslice.PlanResult {', '.join(self.targets)}: {answer}; {len(self.data['curve'])} points>"


def plan_capacity(
    scenario: Any = None,
    targets: Any = None,
    *,
    snapshot: Any = None,
    add: Any = None,
    cordon: Any = None,
    assume_duration: Any = None,
    node_groups: Any = None,
    autoscale: bool = False,
    vary: str | Iterable[str] | None = None,
    min_count: int | None = None,
    max_count: int | None = None,
    seeds: Iterable[int] | int | None = None,
    policy: str | None = None,
    gpu_policy: str | None = None,
    queue: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    search: str = "bisect",
    curve_points: int = 8,
    prices: Mapping[str, float] | None = None,
    progress: Callable[[float], Any] | None = None,
    quotas: Any = None,
) -> PlanResult:
    """The smallest fleet that meets every target, as `gpuslice plan`.

    scenario: a scenario (path, YAML text or dict) whose fleet is node templates x counts.
    targets: "p95_pending_s<=60", ["refused_pct<=1", ...] or {"p95_pending_s": 60}; metrics:
    gpuslice.metric_names() or a numeric summary field by dotted path.
    vary: template name(s) whose count is searched (default all; several form a mix in the
    proportions of their counts in the scenario). min_count..max_count: the nodes tried
    (default max: 4x the scenario's, at least 16). seeds: a count meets a target when every
    seed does. search: "bisect" (assumes metrics improve with more nodes) or "scan".
    snapshot: start from a cluster (kubectl get nodes,pods -A -o yaml|json), as `gpuslice plan
    --snapshot`: add is the Node file(s) whose count is searched, from 0 (count = nodes added);
    cordon and assume_duration as in simulate(); node_groups as in simulate() (--node-groups FILE).
    autoscale: as `gpuslice plan --autoscale`: the cheapest max of each of the scenario's node groups
    (vary names groups) that meets the targets; .cost per hour and .cost_per_day from the runs.
    prices: {template name or card model: cost per hour} (a node of the template, or a card of
    the model), as `gpuslice plan --price`: the answer is then the cheapest fleet that meets the
    targets, each varied template's count (0..max_count) searched on its own; .cost is its cost.
    quotas: a path to ResourceQuota objects, as `gpuslice plan --quotas FILE`.
    """
    check_progress(progress)
    if targets is None:
        raise input_error("arguments", 0, "targets", "give at least one target, e.g. 'refused_pct<=0'")
    if snapshot is not None:
        adds = [add] if isinstance(add, (str, os.PathLike)) else list(add or [])
        cfg = run_config(scenario, policy=policy, gpu_policy=gpu_policy, queue=queue, snapshot=snapshot,
                         add_nodes=[f"{os.fspath(a)}:0" for a in adds], cordon=cordon,
                         assume_duration=assume_duration, quotas=quotas)
        if min_count is None:
            min_count = 0  # adding none may be the answer
    else:
        if add is not None or cordon is not None or assume_duration is not None:
            raise input_error("arguments", 0, "snapshot", "add, cordon and assume_duration go with snapshot=PATH")
        cfg = run_config(scenario, policy=policy, gpu_policy=gpu_policy, queue=queue, overrides=overrides,
                         quotas=quotas)
    if min_count is None:
        min_count = 1
    add_node_groups(cfg, node_groups)
    if isinstance(vary, str):
        vary = [vary]
    if seeds is None:
        seeds_l: list[int] = []
    elif isinstance(seeds, int):
        seeds_l = [seeds]
    else:
        seeds_l = [int(s) for s in seeds]
    if any(s < 0 for s in seeds_l):
        raise input_error("arguments", 0, "seeds", "must be non-negative integers")
    if prices is not None and not isinstance(prices, Mapping):
        raise input_error("arguments", 0, "prices", "give {template or card model: cost per hour}")
    price_texts = [f"{key}={float(cost)!r}" for key, cost in (prices or {}).items()]
    out = _gpuslice.plan_capacity(
        dumps(cfg),
        _targets(targets),
        list(vary or []),
        int(min_count),
        int(max_count or 0),
        seeds_l,
        search,
        int(curve_points),
        progress,
        price_texts,
        bool(autoscale),
    )
    return PlanResult(json.loads(out))
