"""Runs side by side, as `gpuslice compare`: one row per run, compare.csv's columns."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping
from typing import Any

import pandas as pd

from . import _gpuslice
from ._config import input_error

__all__ = ["compare"]

# Text columns stay text ("42" as a run's name is a name).
_TEXT = {"run": str, "dir": str, "scenario": str, "policy": str, "run_kind": str}


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def compare(runs: Any) -> pd.DataFrame:
    """The headline figures of two or more runs, one row per run, as compare.csv.

    runs: run folders (the --out folders of `gpuslice simulate`), SimResults, or a mapping
    {label: folder or SimResult}. Without labels a folder is named by its folder name and a
    SimResult by its policy. Columns: run, dir, scenario, policy, seed, run_kind, nodes, gpus,
    then the headline metrics (placed, refused, refused_pct, p95_pending_s, ...; NaN where a run
    has no such figure). Bad input raises gpuslice.InputError.
    """
    if isinstance(runs, Mapping):
        items = [(str(label), value) for label, value in runs.items()]
    elif isinstance(runs, (list, tuple)):
        items = [(None, value) for value in runs]
    else:
        raise input_error("arguments", 0, "runs", f"expected a list or a mapping of runs, got {type(runs).__name__}")
    if len(items) < 2:
        raise input_error("arguments", 0, "runs", "give at least two runs")
    if all(label is None and _is_path(value) for label, value in items):
        text = _gpuslice.compare_folders([os.fspath(value) for _, value in items])
    else:
        labels, dirs, summaries = [], [], []
        for label, value in items:
            if _is_path(value):
                path = os.fspath(value)
                labels.append(label or os.path.basename(os.path.normpath(path)))
                dirs.append(path)
                summaries.append(_gpuslice.run_folder_summary(path))
            elif hasattr(value, "summary") and isinstance(value.summary, dict):
                labels.append(label or str(value.summary.get("policy", f"run {len(labels) + 1}")))
                dirs.append("")
                summaries.append(json.dumps(value.summary))
            else:
                raise input_error(
                    "arguments", 0, "runs", f"expected a run folder or a SimResult, got {type(value).__name__}"
                )
        if len(set(labels)) != len(labels):
            raise input_error("arguments", 0, "runs", f"two runs share a name: {labels}; give a {{label: run}} mapping")
        text = _gpuslice.compare_summaries(labels, dirs, summaries)
    # Empty cells of the figures are NaN; text columns keep "" (a run held in memory has no dir).
    df = pd.read_csv(io.StringIO(text), dtype=_TEXT, keep_default_na=False, na_values=[""])
    for column in _TEXT:
        df[column] = df[column].fillna("")
    return df
