"""Placement, fleets and single simulations over the C++ core and simulator."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from . import _gpuslice
from ._config import _is_text, add_node_groups, check_progress, dumps, input_error, read_text, run_config

__all__ = ["place", "simulate", "SimResult", "Fleet", "pod_requests", "policies"]


def policies() -> list[str]:
    """Names of the placement policies the simulator knows (HAMi's and the research ones)."""
    return list(_gpuslice.policy_names())


def _text_and_source(value: Any, field: str) -> tuple[str, str]:
    if _is_text(value):
        return value, f"<{field}>"
    if not isinstance(value, (str, os.PathLike)):
        raise input_error("arguments", 0, field, f"expected a path or YAML text, got {type(value).__name__}")
    return read_text(value, field), os.fspath(value)


def place(
    nodes: Any,
    pod: Any,
    existing: Any = None,
    node_policy: str | None = None,
    gpu_policy: str | None = None,
    policy: str | None = None,
    quotas: Any = None,
) -> dict:
    """One placement, as `gpuslice place --json`: {node, score, allocation, policy, annotations, labels,
    reservation_pods, enforcement, failed_nodes, events, warnings} (and shortfall, in numbers, when
    no node fits).

    nodes, pod, existing: paths to Kubernetes manifests (or their YAML text); Koordinator Device
    CRs and KAI's GPU labels give nodes their cards too (docs/dialects.md).
    policy: a registered policy ("koordinator", "kai-binpack", ...); None: HAMi's, steered by
    node_policy and gpu_policy.
    quotas: ResourceQuota objects (path or YAML text, `kubectl get resourcequotas -A -o yaml`), as
    `gpuslice place --quotas FILE`: HAMi v2.10's namespace quotas, beside any in existing.
    Bad input raises gpuslice.InputError (file, line, field).
    """
    nodes_text, nodes_source = _text_and_source(nodes, "nodes")
    pod_text, pod_source = _text_and_source(pod, "pod")
    existing_text, existing_source = (None, "")
    if existing is not None:
        existing_text, existing_source = _text_and_source(existing, "existing")
    quotas_text, quotas_source = (None, "")
    if quotas is not None:
        quotas_text, quotas_source = _text_and_source(quotas, "quotas")
    for name, value in (("node_policy", node_policy), ("gpu_policy", gpu_policy), ("policy", policy)):
        if value is not None and not isinstance(value, str):
            raise input_error("arguments", 0, name, f"expected a name, got {type(value).__name__}")
    out = _gpuslice.place(
        nodes_text, nodes_source, pod_text, pod_source, existing_text, existing_source, node_policy, gpu_policy, policy,
        quotas_text, quotas_source,
    )
    return json.loads(out)


def pod_requests(pods: Any) -> list[dict]:
    """The requests of Pod manifests (path or YAML text), with HAMi's webhook defaults applied."""
    text, source = _text_and_source(pods, "pods")
    return list(_gpuslice.parse_pods(text, source))


class Fleet:
    """A fleet of HAMi nodes: from a scenario, Node manifests, the openb node list or Python dicts.

    .nodes and .cards are DataFrames; .node_count and .gpu_count numbers.
    """

    def __init__(self, cluster: Any, source: str = ""):
        self._cluster = cluster
        self.source = source

    @classmethod
    def from_scenario(cls, scenario: Any) -> "Fleet":
        """The fleet of a scenario (path, YAML text or dict)."""
        cfg = run_config(scenario)
        return cls(_gpuslice.fleet_from_run(dumps(cfg)), str(cfg.get("scenario_path", cfg.get("source", ""))))

    @classmethod
    def from_manifests(cls, path: Any) -> "Fleet":
        """Nodes from Kubernetes Node manifests with HAMi's registration annotations."""
        text, source = _text_and_source(path, "nodes")
        return cls(_gpuslice.fleet_from_manifests(text, source), source)

    @classmethod
    def from_openb(cls, path: Any, slots: int = 1000) -> "Fleet":
        """Nodes from openb_node_list_*.csv (Alibaba cluster-trace-gpu-v2023)."""
        text, source = _text_and_source(path, "openb_nodes")
        return cls(_gpuslice.fleet_from_openb(text, source, int(slots)), source)

    @classmethod
    def from_templates(cls, groups: Any) -> "Fleet":
        """Node templates x counts, as a scenario's `fleet:` list:
        [{"template": {"name", "model", "cards", "card_memory_mib", "slots", "cores",
        "cpu_milli", "memory_mib"}, "count": N}, ...]; a single dict is one group."""
        if isinstance(groups, Mapping):
            groups = [groups]
        return cls(_gpuslice.fleet_from_groups(dumps(list(groups))), "<dict>")

    from_dict = from_templates

    @property
    def node_count(self) -> int:
        return int(self._cluster.node_count)

    @property
    def gpu_count(self) -> int:
        return int(self._cluster.gpu_count)

    def __len__(self) -> int:
        return self.node_count

    @cached_property
    def nodes(self) -> pd.DataFrame:
        return pd.DataFrame(self._cluster.nodes())

    @cached_property
    def cards(self) -> pd.DataFrame:
        df = pd.DataFrame(self._cluster.cards())
        df["healthy"] = df["healthy"].astype(bool)
        return df

    def __repr__(self) -> str:
        return f"<gpuslice.Fleet {self.node_count} nodes, {self.gpu_count} GPUs{' from ' + self.source if self.source else ''}>"


class SimResult:
    """One simulation: .summary (dict, as summary.json) and DataFrames .timeline, .pods, .events,
    .card_use (card_use.csv: a card's use each time it changed).

    .cards: the fleet's cards; .curve: the allocation ratio (%) by arrived demand (%);
    card_usage(at): what each card holds at a time; write(dir): the CLI's output files.
    """

    def __init__(self, native: Any):
        self._native = native
        self.summary: dict = json.loads(native.summary_json)
        self.interrupted: bool = bool(native.interrupted)

    # Pickling (results returned from worker processes) materializes the tables.
    def __getstate__(self) -> dict:
        return {
            "summary": self.summary,
            "interrupted": self.interrupted,
            "timeline": self.timeline,
            "pods": self.pods,
            "events": self.events,
            "card_use": self.card_use,
            "cards": self.cards,
        }

    def __setstate__(self, state: dict) -> None:
        self._native = None
        self.summary = state["summary"]
        self.interrupted = state["interrupted"]
        for key in ("timeline", "pods", "events", "card_use", "cards"):
            self.__dict__[key] = state[key]

    @cached_property
    def timeline(self) -> pd.DataFrame:
        return pd.DataFrame(self._native.timeline())

    @cached_property
    def pods(self) -> pd.DataFrame:
        return pd.DataFrame(self._native.pods())

    @cached_property
    def events(self) -> pd.DataFrame:
        return pd.DataFrame(self._native.events())

    @cached_property
    def card_use(self) -> pd.DataFrame:
        return pd.DataFrame(self._native.card_use())

    @cached_property
    def cards(self) -> pd.DataFrame:
        return Fleet(self._native.fleet).cards

    @property
    def curve(self) -> pd.Series:
        values = [np.nan if v is None else v for v in self.summary.get("alloc_ratio_by_arrived_pct", [])]
        return pd.Series(values, index=pd.RangeIndex(len(values), name="arrived_gpu_pct"), name="alloc_gpu_pct",
                         dtype=float)

    def card_usage(self, at: float | None = None) -> pd.DataFrame:
        """Per card: slices, memory and cores held by the pods running at time `at`
        (default: the end of the run), with memory_pct and cores_pct of the card."""
        pods = self.pods
        t = float(self.summary.get("simulated_seconds", 0.0)) if at is None else float(at)
        running = pods[(pods["allocation"] != "") & (pods["start"] <= t) & ~(pods["end"] <= t)]
        use: dict[str, list[int]] = {}
        for text in running["allocation"]:
            for container in _gpuslice.decode_allocation(text):
                for uuid, _vendor, mem, cores in container:
                    u = use.setdefault(uuid, [0, 0, 0])
                    u[0] += 1
                    u[1] += mem
                    u[2] += cores
        cards = self.cards.copy()
        cards["used_slices"] = [use.get(u, (0, 0, 0))[0] for u in cards["uuid"]]
        cards["used_memory_mib"] = [use.get(u, (0, 0, 0))[1] for u in cards["uuid"]]
        cards["used_cores"] = [use.get(u, (0, 0, 0))[2] for u in cards["uuid"]]
        cards["memory_pct"] = 100.0 * cards["used_memory_mib"] / cards["memory_mib"].where(cards["memory_mib"] > 0)
        cards["cores_pct"] = 100.0 * cards["used_cores"] / cards["cores"].where(cards["cores"] > 0)
        return cards

    def write(self, out_dir: Any) -> None:
        """summary.json, timeline.csv, pods.csv, events.jsonl, card_use.csv, report.html, as `gpuslice simulate --out`."""
        if self._native is None:
            raise RuntimeError("write() needs the result in the process that ran it")
        self._native.write_outputs(os.fspath(out_dir))

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<gpuslice.SimResult {s.get('scenario')} policy={s.get('policy')} seed={s.get('seed')}: "
            f"{s.get('placements')}/{s.get('pods')} placed, peak alloc {s.get('peak_alloc_gpu_pct', 0):.2f}%>"
        )


def simulate(
    scenario: Any = None,
    *,
    openb_nodes: Any = None,
    openb_pods: Any = None,
    policy: str | None = None,
    gpu_policy: str | None = None,
    tune: float | None = None,
    seed: int | None = None,
    queue: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    progress: Callable[[float], Any] | None = None,
    snapshot: Any = None,
    node_groups: Any = None,
    add_nodes: Any = None,
    cordon: Any = None,
    assume_duration: Any = None,
    quotas: Any = None,
) -> SimResult:
    """One simulation, as `gpuslice simulate`.

    snapshot: a cluster's `kubectl get nodes,pods -A -o yaml` (or -o json) as the start, as
    `gpuslice simulate --snapshot`; then scenario, if given, is a pods file for later arrivals,
    add_nodes "NODE.yaml:COUNT" strings (or {path: count}), cordon node names, assume_duration
    "3h" or seconds (default: running pods never leave). node_groups: a path, as `--node-groups
    FILE`: Cluster Autoscaler's groups, the snapshot's nodes joining them by node_labels.

    scenario: a scenario YAML path, its text or a dict; or openb_nodes + openb_pods (CSV paths).
    policy: a name from gpuslice.policies() (default: the scenario's). tune: openb resampling
    target (x capacity). seed: default the scenario's (openb: 42). overrides: dotted paths into
    the scenario set to values, e.g. {"generator.rate_per_s": 0.05, "fleet.0.count": 8}.
    progress(fraction) is called now and then; returning False stops the run early
    (result.interrupted). The GIL is released while it runs; Ctrl-C raises KeyboardInterrupt.
    quotas: a path to ResourceQuota objects (`kubectl get resourcequotas -A -o yaml`), as
    `gpuslice simulate --quotas FILE`: HAMi v2.10's namespace quotas, added to the scenario's
    `quotas:` or the snapshot's own. A bad file raises gpuslice.InputError.
    """
    cfg = run_config(
        scenario, openb_nodes, openb_pods, policy=policy, gpu_policy=gpu_policy, queue=queue, seed=seed,
        tune=tune, overrides=overrides, snapshot=snapshot, add_nodes=add_nodes, cordon=cordon,
        assume_duration=assume_duration, quotas=quotas,
    )
    check_progress(progress)
    add_node_groups(cfg, node_groups)
    return SimResult(_gpuslice.simulate(dumps(cfg), progress))
