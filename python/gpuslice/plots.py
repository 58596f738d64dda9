"""Plots with matplotlib: allocation-ratio curves by policy, fragmentation over time,
pending-time distribution, per-card heatmap, unallocated GPUs and capacity-plan curves.

Every function takes an optional `ax` and returns it. Inputs are the objects
the package returns: SimResult, a {label: SimResult} mapping, or a sweep DataFrame.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "plot_alloc_curves",
    "plot_fragmentation",
    "plot_pending",
    "plot_card_heatmap",
    "plot_unallocated",
    "plot_plan",
]


def _ax(ax: Any, figsize: tuple[float, float] = (7, 4)) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


def _results(results: Any) -> dict[str, Any]:
    """{label: SimResult} from a SimResult, a mapping or a list of them."""
    if hasattr(results, "summary") and hasattr(results, "timeline"):
        return {str(results.summary.get("policy")): results}
    if isinstance(results, Mapping):
        return {str(k): v for k, v in results.items()}
    return {f"{r.summary.get('policy')} #{i}": r for i, r in enumerate(results)}


def plot_alloc_curves(data: Any, ax: Any = None, by: str = "policy", title: str | None = None) -> Any:
    """GPU allocation ratio (%) against arrived GPU demand (% of capacity), one line per policy.

    data: a sweep DataFrame (column alloc_ratio_by_arrived_pct; seeds averaged per `by`),
    or SimResult(s).
    """
    ax = _ax(ax)
    if isinstance(data, pd.DataFrame):
        for label, group in data.groupby(by, sort=False):
            curves = np.array(
                [[np.nan if v is None else v for v in c] for c in group["alloc_ratio_by_arrived_pct"]], dtype=float
            )
            mean = np.nanmean(curves, axis=0) if np.isfinite(curves).any() else curves[0]
            ax.plot(np.arange(len(mean)), mean, label=str(label))
    else:
        for label, r in _results(data).items():
            c = r.curve
            ax.plot(c.index, c.values, label=label)
    ax.plot([0, 100], [0, 100], color="grey", lw=0.8, ls=":", label="ideal")
    ax.set_xlabel("arrived GPU demand (% of capacity)")
    ax.set_ylabel("GPU allocation ratio (%)")
    ax.set_title(title or "Allocation ratio by arrived demand")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return ax


def plot_fragmentation(results: Any, ax: Any = None, x: str = "arrived_gpu_pct") -> Any:
    """Fragmentation over time, the FGD study's measure (timeline column frag_gpu_pct): GPU
    capacity, in %, that the run's typical pods could not use; x: "arrived_gpu_pct" or "time"."""
    ax = _ax(ax)
    for label, r in _results(results).items():
        t = r.timeline
        ax.plot(t[x], t["frag_gpu_pct"], label=label)
    ax.set_xlabel("arrived GPU demand (% of capacity)" if x == "arrived_gpu_pct" else "time (s)")
    ax.set_ylabel("fragmented GPU (% of capacity)")
    ax.set_title("Fragmentation (typical pods cannot use)")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return ax


def plot_pending(results: Any, ax: Any = None, log: bool = True) -> Any:
    """Distribution (CDF) of the pending time of placed pods."""
    ax = _ax(ax)
    for label, r in _results(results).items():
        p = np.sort(r.pods["pending_seconds"].dropna().to_numpy())
        if len(p) == 0:
            continue
        y = np.arange(1, len(p) + 1) / len(p) * 100
        ax.step(np.maximum(p, 1e-3) if log else p, y, where="post", label=label)
    if log:
        ax.set_xscale("log")
    ax.set_xlabel("pending time (s)" + (", log scale (0 shown at 1 ms)" if log else ""))
    ax.set_ylabel("placed pods (%)")
    ax.set_title("Pending time distribution")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return ax


def plot_card_heatmap(
    result: Any, at: float | None = None, value: str = "memory_pct", ax: Any = None, max_nodes: int = 64
) -> Any:
    """Per-card use at time `at` (default: the end): nodes x card index, colour = `value`
    (memory_pct, cores_pct, used_slices ...). Large fleets show their first max_nodes nodes."""
    usage = result.card_usage(at)
    nodes = list(dict.fromkeys(usage["node"]))[:max_nodes]
    usage = usage[usage["node"].isin(nodes)]
    grid = usage.pivot_table(index="node", columns="index", values=value, aggfunc="first").reindex(nodes)
    ax = _ax(ax, figsize=(max(4, 0.6 * grid.shape[1] + 3), max(2.5, 0.25 * len(nodes) + 1.5)))
    vmax = 100 if value.endswith("_pct") else None
    im = ax.imshow(grid.to_numpy(dtype=float), aspect="auto", cmap="viridis", vmin=0, vmax=vmax,
                   interpolation="nearest")
    ax.set_yticks(range(len(nodes)))
    ax.set_yticklabels(nodes, fontsize="x-small" if len(nodes) > 16 else "small")
    ax.set_xticks(range(grid.shape[1]))
    ax.set_xticklabels([str(c) for c in grid.columns])
    ax.set_xlabel("card index")
    when = "end of run" if at is None else f"t = {at:g} s"
    ax.set_title(f"Per-card {value} ({when})")
    ax.figure.colorbar(im, ax=ax, label=value)
    return ax


def plot_unallocated(df: pd.DataFrame, ax: Any = None, by: str = "policy",
                     column: str = "unallocated_gpus_at_130_pct") -> Any:
    """Unallocated GPUs when arrived demand reaches 130% of capacity, per policy (mean over seeds,
    error bar = min..max), as in the FGD study's figure."""
    ax = _ax(ax)
    g = df.groupby(by, sort=False)[column]
    mean, lo, hi = g.mean(), g.min(), g.max()
    x = np.arange(len(mean))
    ax.bar(x, mean.to_numpy(), yerr=[(mean - lo).to_numpy(), (hi - mean).to_numpy()], capsize=3, color="tab:blue")
    ax.set_xticks(x)
    ax.set_xticklabels([str(i) for i in mean.index], rotation=30, ha="right")
    ax.set_ylabel("unallocated GPUs")
    ax.set_title("Unallocated GPUs at 130% arrived demand")
    ax.grid(axis="y", alpha=0.3)
    return ax


def plot_plan(plan: Any, metric: str | None = None, ax: Any = None) -> Any:
    """A capacity plan's curve: the (first) target's metric against the node count, the bound
    as a dashed line and the answer marked."""
    ax = _ax(ax)
    curve = plan.curve
    target = plan.targets[0]
    op = next(o for o in ("<=", ">=", "<", ">") if o in target)
    name, bound = target.split(op, 1)
    metric = metric or name
    ax.plot(curve["count"], curve[metric], marker="o", label=metric)
    if metric == name:
        ax.axhline(float(bound), color="tab:red", ls="--", lw=1, label=f"target {target}")
    if plan.count is not None:
        ax.axvline(plan.count, color="tab:green", ls=":", lw=1.5, label=f"answer: {plan.count} nodes")
    ax.set_xlabel("nodes")
    ax.set_ylabel(metric)
    ax.set_title("Capacity plan")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return ax
