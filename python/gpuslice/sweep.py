"""Sweeps: scenarios x policies x seeds x parameters, one DataFrame row per run.

Runs go to local processes by default, or to a Dask distributed cluster when a
`dask.distributed.Client` is given. Tasks are plain JSON-able dicts; each task
builds its C++ objects itself (nothing C++ is pickled), and Dask futures are
submitted with pure=False so identical configurations are still separate runs.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import pandas as pd

from . import _gpuslice
from ._config import dumps, input_error, run_config

__all__ = ["sweep", "run_task", "sweep_configs", "flatten_summary", "curves_frame"]

# Parameters that are run options rather than scenario overrides.
_RUN_OPTIONS = ("queue", "gpu_policy", "tune")


def run_task(config: Mapping[str, Any]) -> dict:
    """One run of a sweep (what a worker process or Dask worker executes): the summary dict."""
    cfg = dict(config)
    labels = cfg.pop("labels", {})
    summary = json.loads(_gpuslice.summarize(dumps(cfg)))
    return {"labels": labels, "summary": summary}


def flatten_summary(summary: Mapping[str, Any], prefix: str = "") -> dict:
    """Nested summary fields as dotted columns (pending_seconds.p95, refusals_by_reason.X); lists stay."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten_summary(value, name + "."))
        else:
            out[name] = value
    return out


def _as_list(value: Any, default: list) -> list:
    if value is None:
        return list(default)
    if isinstance(value, (str, bytes, os.PathLike, Mapping)) or not isinstance(value, Iterable):
        return [value]
    return list(value)


def sweep_configs(
    policies: Any = None,
    seeds: Any = (42,),
    tune: Any = None,
    scenario: Any = None,
    openb_nodes: Any = None,
    openb_pods: Any = None,
    *,
    scenarios: Any = None,
    params: Mapping[str, Any] | None = None,
    gpu_policy: str | None = None,
    queue: str | None = None,
) -> list[dict]:
    """The run configurations of a sweep (plain dicts; see sweep())."""
    sources: list[Any] = []
    if scenario is not None:
        sources.append(scenario)
    sources.extend(_as_list(scenarios, []))
    openb = openb_nodes is not None or openb_pods is not None
    if openb and sources:
        raise input_error("arguments", 0, "openb_nodes", "give scenarios or an openb replay, not both")
    if not openb and not sources:
        raise input_error("arguments", 0, "scenario", "give scenario=PATH, or openb_nodes=PATH and openb_pods=PATH")
    if openb:
        sources = [None]
    policies_l = _as_list(policies, [None])
    seeds_l = _as_list(seeds, [None])
    tunes = _as_list(tune, [None])
    params = dict(params or {})
    if "tune" in params:
        if tune is not None:
            raise input_error("arguments", 0, "tune", "give tune or params['tune'], not both")
        tunes = _as_list(params.pop("tune"), [None])
    names = list(params)
    grids = [_as_list(params[n], [None]) for n in names]
    if not policies_l or not seeds_l or not tunes or any(not g for g in grids):
        raise input_error("arguments", 0, "policies", "every swept dimension needs at least one value")
    for p in policies_l:
        if p is not None and not isinstance(p, str):
            raise input_error("arguments", 0, "policies", f"expected policy names, got {type(p).__name__}")
    known = set(_gpuslice.policy_names())
    unknown = [p for p in policies_l if p is not None and p not in known]
    if unknown:
        raise input_error(
            "arguments", 0, "policies", f"unknown policy '{unknown[0]}' (known: {', '.join(sorted(known))})"
        )

    configs = []
    for src_index, src in enumerate(sources):
        for policy, t, seed, *values in itertools.product(policies_l, tunes, seeds_l, *grids):
            chosen = dict(zip(names, values))
            options = {k: chosen.pop(k) for k in list(chosen) if k in _RUN_OPTIONS}
            overrides = {k: v for k, v in chosen.items()}
            cfg = run_config(
                src,
                openb_nodes if openb else None,
                openb_pods if openb else None,
                policy=policy,
                gpu_policy=options.get("gpu_policy", gpu_policy),
                queue=options.get("queue", queue),
                seed=seed,
                tune=t,
                overrides=overrides or None,
                embed=True,
            )
            labels: dict[str, Any] = {"scenario_index": src_index}
            if isinstance(src, (str, os.PathLike)) and "\n" not in str(src):
                labels["scenario_file"] = os.fspath(src)
            if t is not None:
                labels["tune"] = t
            for k, v in zip(names, values):
                labels[k] = v
            cfg["labels"] = labels
            configs.append(cfg)
    return configs


def _frame(results: list[dict]) -> pd.DataFrame:
    rows = []
    for i, r in enumerate(results):
        row = {"run": i}
        row.update(r["labels"])
        row.update(flatten_summary(r["summary"]))
        rows.append(row)
    df = pd.DataFrame(rows)
    refusal_cols = [c for c in df.columns if c.startswith("refusals_by_reason.")]
    if refusal_cols:
        df[refusal_cols] = df[refusal_cols].fillna(0).astype(int)
    return df


def curves_frame(results: list[dict]) -> pd.DataFrame:
    """The runs' allocation and fragmentation curves, long form: one row per (run, arrived %).

    Columns: run, the swept labels, policy, seed, arrived_pct (0..130), alloc_pct, frag_pct (NaN
    where the study's reading has no record), as `gpuslice study` writes curves.csv.
    """
    rows = []
    for i, r in enumerate(results):
        s = r["summary"]
        alloc = s.get("alloc_ratio_by_arrived_pct") or []
        frag = s.get("frag_ratio_by_arrived_pct") or []
        for x in range(len(alloc)):
            row = {"run": i}
            row.update(r["labels"])
            row["policy"] = s.get("policy")
            row["seed"] = s.get("seed")
            row["arrived_pct"] = x
            row["alloc_pct"] = alloc[x] if alloc[x] is not None else float("nan")
            row["frag_pct"] = frag[x] if x < len(frag) and frag[x] is not None else float("nan")
            rows.append(row)
    return pd.DataFrame(rows)


def _run_local(configs: list[dict], processes: int | None, progress: Callable[[int, int], Any] | None) -> list:
    n = len(configs)
    workers = processes if processes is not None else (os.cpu_count() or 1)
    workers = max(1, min(int(workers), n))
    results: list[Any] = [None] * n
    if workers == 1:
        for i, cfg in enumerate(configs):
            results[i] = run_task(cfg)
            if progress:
                progress(i + 1, n)
        return results
    # spawn: safe next to threads (Jupyter, a Dask client) and the same on every platform.
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        futures = {pool.submit(run_task, cfg): i for i, cfg in enumerate(configs)}
        done = 0
        for fut in as_completed(futures):
            results[futures[fut]] = fut.result()
            done += 1
            if progress:
                progress(done, n)
    except BrokenProcessPool as e:
        pool.shutdown(wait=False, cancel_futures=True)
        raise RuntimeError(
            "sweep's worker processes died. They start with 'spawn', which runs the calling script's "
            "top-level code again in each worker: put the sweep call under `if __name__ == \"__main__\":` "
            "(or pass processes=1, or a Dask client)"
        ) from e
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results


def _run_dask(configs: list[dict], client: Any, progress: Callable[[int, int], Any] | None) -> list:
    from dask.distributed import as_completed as dask_as_completed

    tag = uuid.uuid4().hex[:8]
    keys = [f"gpuslice-run-{tag}-{i}" for i in range(len(configs))]
    futures = client.map(run_task, configs, key=keys, pure=False)
    index = {f.key: i for i, f in enumerate(futures)}
    results: list[Any] = [None] * len(configs)
    try:
        done = 0
        for fut in dask_as_completed(futures):
            results[index[fut.key]] = fut.result()
            done += 1
            if progress:
                progress(done, len(configs))
    except BaseException:
        client.cancel(futures)
        raise
    return results


def sweep(
    policies: Any = None,
    seeds: Any = (42,),
    tune: Any = None,
    scenario: Any = None,
    openb_nodes: Any = None,
    openb_pods: Any = None,
    client: Any = None,
    *,
    scenarios: Any = None,
    params: Mapping[str, Any] | None = None,
    gpu_policy: str | None = None,
    queue: str | None = None,
    processes: int | None = None,
    progress: Callable[[int, int], Any] | None = None,
    curves: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
    """Runs scenarios x policies x tunes x seeds x params; one row per run.

    policies: names (None: each scenario's own). seeds: ints. tune: a number or list (openb).
    scenario / scenarios: paths, YAML texts or dicts; or openb_nodes + openb_pods.
    params: {name: [values]}: dotted scenario paths ("generator.rate_per_s", "fleet.0.count")
    or run options ("queue", "gpu_policy", "tune").
    client: a dask.distributed.Client to run on its cluster; else local processes
    (processes=N, default one per CPU; 1 runs in this process).
    progress(done, total) is called as runs finish.

    Columns: run, the swept labels (scenario_file, tune, params), then the summary's fields
    (nested ones dotted: pending_seconds.p95, refusals_by_reason.<reason>).
    curves=True: returns (runs, curves) instead, curves being curves_frame(): the study's
    allocation and fragmentation curves by arrived %, one row per (run, arrived %).
    """
    configs = sweep_configs(
        policies, seeds, tune, scenario, openb_nodes, openb_pods, scenarios=scenarios, params=params,
        gpu_policy=gpu_policy, queue=queue,
    )
    if client is not None:
        results = _run_dask(configs, client, progress)
    else:
        results = _run_local(configs, processes, progress)
    if curves:
        return _frame(results), curves_frame(results)
    return _frame(results)
