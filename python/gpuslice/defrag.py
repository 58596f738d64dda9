"""What would it take? The fewest pod moves that let pending pods place (`gpuslice defrag`).

The search runs in C++ (the same code as `gpuslice defrag`); this module shapes
arguments and results.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable
from typing import Any

import pandas as pd

from . import _gpuslice
from ._config import dumps, input_error

__all__ = ["defrag"]


def _names(value: Any, field: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, (bytes, dict)):
        out = list(value)
        if all(isinstance(v, str) for v in out):
            return out
    raise input_error("arguments", 0, field, f"expected a name or a list of names, got {value!r}")


def _free_cards(value: Any) -> str:
    if isinstance(value, bool):
        raise input_error("arguments", 0, "free_cards", f"expected N, 'N:MODEL' or (N, MODEL), got {value!r}")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], int) and isinstance(value[1], str):
        return f"{value[0]}:{value[1]}"
    raise input_error("arguments", 0, "free_cards", f"expected N, 'N:MODEL' or (N, MODEL), got {value!r}")


def defrag(
    snapshot: str | os.PathLike[str],
    *,
    for_pods: str | Iterable[str] | None = None,
    for_queue: bool = False,
    free_cards: int | str | tuple[int, str] | None = None,
    policy: str = "hami",
    gpu_policy: str = "spread",
    max_moves: int = 5,
    movable: str = "",
    protect: str | Iterable[str] = (),
    add: str | os.PathLike[str] | None = None,
    search: str = "auto",
    out: str | os.PathLike[str] | None = None,
    quotas: str | os.PathLike[str] | None = None,
    device_config: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """The plan with the fewest moves, as `gpuslice defrag`: one row per move, in order.

    snapshot: `kubectl get nodes,pods,pdb -A -o yaml|json` of a HAMi cluster.
    Goal (one of): for_pods (pending pods, "namespace/name", placed in this order),
    for_queue (the whole queue; the default), free_cards (N, "N:MODEL" or (N, MODEL): whole
    cards to empty). A move evicts a pod and lets the scheduler, under `policy`, place it
    again; movable pods are running HAMi pods with a controller, outside `protect`
    namespaces, matching the `movable` label selector and within their
    PodDisruptionBudgets. `add`: the node `plan --add` counts when no plan exists.
    `out`: also write moves.csv, summary.json and report.html there.
    `quotas`: ResourceQuotas (`kubectl get resourcequotas -A`) beside the snapshot's own;
    `device_config`: HAMi's device-config.yaml the snapshot is read with.

    Columns: step, pod, from_node, from_cards, to_node, to_cards, gpu_mib (cards as
    "0;1"), as moves.csv. `.attrs["summary"]` holds summary.json: found, moves,
    proven_minimal, lower_bound, search, the targets' places, the `add` answer.
    Bad input raises gpuslice.InputError (file, line, field).
    """
    if not isinstance(for_queue, bool):
        raise input_error("arguments", 0, "for_queue", f"expected True or False, got {for_queue!r}")
    if isinstance(max_moves, bool) or not isinstance(max_moves, int):
        raise input_error("arguments", 0, "max_moves", f"expected a whole number, got {max_moves!r}")
    for name, value in (("policy", policy), ("gpu_policy", gpu_policy), ("movable", movable), ("search", search)):
        if not isinstance(value, str):
            raise input_error("arguments", 0, name, f"expected text, got {type(value).__name__}")
    if not isinstance(snapshot, (str, os.PathLike)):
        raise input_error("arguments", 0, "snapshot", f"expected a path, got {type(snapshot).__name__}")
    config: dict[str, Any] = {
        "snapshot": os.fspath(snapshot),
        "for_queue": for_queue,
        "policy": policy,
        "gpu_policy": gpu_policy,
        "max_moves": max_moves,
        "movable": movable,
        "protect": _names(protect, "protect"),
        "search": search,
    }
    if for_pods is not None:
        config["for_pods"] = _names(for_pods, "for_pods")
    if free_cards is not None:
        config["free_cards"] = _free_cards(free_cards)
    if add is not None:
        config["add"] = os.fspath(add)
    if out is not None:
        config["out"] = os.fspath(out)
    for name, value in (("quotas", quotas), ("device_config", device_config)):
        if value is not None:
            if not isinstance(value, (str, os.PathLike)):
                raise input_error("arguments", 0, name, f"expected a path, got {type(value).__name__}")
            config[name] = os.fspath(value)
    summary_text, moves_text = _gpuslice.defrag(dumps(config))
    columns = list(_gpuslice.defrag_move_columns())
    moves = pd.read_csv(io.StringIO(moves_text), dtype={"pod": str, "from_node": str, "from_cards": str,
                                                        "to_node": str, "to_cards": str})
    moves = moves[columns]
    moves.attrs["summary"] = json.loads(summary_text)
    return moves
