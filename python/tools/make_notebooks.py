#!/usr/bin/env python3
"""Writes the three notebooks under notebooks/ (without outputs) from the cells below.

    .venv/bin/python python/tools/make_notebooks.py

python/tests/test_notebooks.py executes them top to bottom. Edit the cells
here, not the .ipynb files, and rerun this script.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[2]

SETUP = """\
%matplotlib inline
import os
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

import gpuslice
from gpuslice import plots

# The repository root (the notebooks live in notebooks/).
ROOT = Path.cwd()
while not (ROOT / "scenarios").is_dir() and ROOT != ROOT.parent:
    ROOT = ROOT.parent
# CI sets GPUSLICE_NOTEBOOK_QUICK=1: fewer seeds, same lessons.
QUICK = os.environ.get("GPUSLICE_NOTEBOOK_QUICK") == "1"
pd.set_option("display.width", 140)
print("gpuslice", gpuslice.__version__, "| policies:", ", ".join(gpuslice.policies()))"""


def capacity_planning() -> list:
    return [
        new_markdown_cell(
            """# 1. Capacity planning: how many GPU nodes does an inference workload need?

**What this notebook teaches.** How to size a fleet for an inference workload with the simulator
instead of a spreadsheet: describe the workload (model servers sharing GPUs by HAMi slices, arriving and
leaving), pick a node type, state a service target ("95% of pods wait less than 60 s for a GPU"), and let
`gpuslice.plan_capacity` find the smallest number of nodes that meets it, with the curve behind the answer.
Then we compare two GPU models and see how the answer moves with the arrival rate.

Everything runs in the C++ placement core (HAMi's rules) and simulator; Python only shapes inputs and plots.
The same search is on the command line: `gpuslice plan SCENARIO --target "p95_pending_s<=60"`."""
        ),
        new_code_cell(SETUP),
        new_markdown_cell(
            """## The workload and the node type
A scenario is a dict with the same structure as a scenario YAML file (`docs/simulator.md`): a fleet of
node templates x counts, pod templates in HAMi's resource names (`gpumem` in MiB, `gpucores` in % of a card),
and a generator (Poisson arrivals, log-normal run times)."""
        ),
        new_code_cell(
            """L4_NODE = {"name": "l4", "model": "NVIDIA L4", "cards": 4, "card_memory_mib": 23034, "slots": 10,
           "cpu_milli": 48000, "memory_mib": 196608}

def inference_scenario(node, count, rate_per_s=0.03, pods=2000):
    return {
        "name": f"inference-on-{node['name']}",
        "policy": "hami-binpack",
        "queue": "skip-ahead",
        "fleet": [{"template": node, "count": count}],
        "templates": {
            "embed-small": {"gpu": 1, "gpumem": 3000, "gpucores": 15, "cpu": "2", "memory": "8Gi"},
            "llm-7b": {"gpu": 1, "gpumem": 16000, "gpucores": 50, "cpu": "4", "memory": "32Gi"},
            "llm-13b-tp2": {"gpu": 2, "gpumem": 20000, "gpucores": 60, "cpu": "8", "memory": "64Gi"},
        },
        "generator": {
            "pods": pods, "arrival": "poisson", "rate_per_s": rate_per_s,
            "duration": "lognormal", "mean_s": 1800, "sigma": 0.8,
            "mix": [{"template": "embed-small", "weight": 6}, {"template": "llm-7b", "weight": 3},
                    {"template": "llm-13b-tp2", "weight": 1}],
        },
    }

workload = inference_scenario(L4_NODE, count=4)
fleet = gpuslice.Fleet.from_scenario(workload)
print(fleet)
fleet.cards.head()"""
        ),
        new_markdown_cell(
            """## A first guess: 4 nodes
One simulation gives a summary (the CLI's `summary.json`) and DataFrames: `timeline`, `pods`, `events`."""
        ),
        new_code_cell(
            """first = gpuslice.simulate(workload, seed=1)
s = first.summary
print(f"{s['pods']} pods, {s['nodes']} nodes / {s['gpus']} GPUs, p95 pending {s['pending_seconds']['p95']:.0f} s, "
      f"peak GPU allocation {s['peak_alloc_gpu_pct']:.1f}%")
fig, ax = plt.subplots(figsize=(9, 3.5))
t = first.timeline
ax.plot(t["time"] / 3600, t["pending"], label="pending pods")
ax.plot(t["time"] / 3600, t["running"], label="running pods")
ax.set_xlabel("hours"); ax.set_ylabel("pods"); ax.legend(); ax.set_title("4 x L4 nodes: the queue grows")
plt.show()"""
        ),
        new_markdown_cell(
            """## The smallest fleet that meets the target
`plan_capacity` searches the node count (bisection, assuming more nodes never hurt; `search="scan"` tries every
count) and simulates every count with each seed: a count meets the target only if every seed does. The result
carries the answer and the curve of every count it simulated."""
        ),
        new_code_cell(
            """SEEDS = [1, 2] if QUICK else [1, 2, 3]
plan = gpuslice.plan_capacity(workload, ["p95_pending_s<=60"], seeds=SEEDS, min_count=1, max_count=24)
print(plan)
plan.curve[["count", "gpus", "meets", "p50_pending_s", "p95_pending_s", "max_pending_s"]]"""
        ),
        new_code_cell(
            """fig, axes = plt.subplots(1, 2, figsize=(12, 4))
plan.plot(ax=axes[0])
plan.plot(metric="max_pending_s", ax=axes[1])
for ax in axes:
    ax.set_yscale("symlog", linthresh=1); ax.set_ylim(bottom=0)
plt.show()"""
        ),
        new_markdown_cell(
            """At the answer, what does the fleet look like? The per-card heatmap shows the memory each card holds at
one moment (here: six hours in). Binpack fills cards before opening new ones."""
        ),
        new_code_cell(
            """sized = gpuslice.simulate(inference_scenario(L4_NODE, plan.count), seed=1)
plots.plot_card_heatmap(sized, at=6 * 3600)
plt.show()
plots.plot_pending({f"{4} nodes": first, f"{plan.count} nodes": sized})
plt.show()"""
        ),
        new_markdown_cell(
            """## Another GPU model
The same workload on nodes of 8 x A100-40GB: fewer nodes, but how many GPUs? A tighter target
(p99 under 60 s as well) costs more hardware."""
        ),
        new_code_cell(
            """A100_NODE = {"name": "a100", "model": "NVIDIA A100-SXM4-40GB", "cards": 8, "card_memory_mib": 40960,
             "slots": 10, "cpu_milli": 96000, "memory_mib": 1048576}
rows = []
for node in (L4_NODE, A100_NODE):
    for targets in (["p95_pending_s<=60"], ["p95_pending_s<=60", "p99_pending_s<=60"]):
        p = gpuslice.plan_capacity(inference_scenario(node, 2), targets, seeds=SEEDS, max_count=24, curve_points=4)
        rows.append({"node": node["model"], "targets": " and ".join(targets), "nodes": p.count,
                     "gpus": p.count * node["cards"] if p.met else None})
pd.DataFrame(rows)"""
        ),
        new_markdown_cell(
            """## How the answer moves with load
A sweep runs scenarios x policies x seeds x parameters and returns one row per run (local processes here;
pass `client=` a `dask.distributed.Client` to run on a cluster). Parameters are dotted paths into the scenario:
here the arrival rate and the node count."""
        ),
        new_code_cell(
            """rates = [0.015, 0.03, 0.045]
counts = [3, 5, 7, 9]
df = gpuslice.sweep(scenario=inference_scenario(L4_NODE, 4), seeds=[1],
                    params={"generator.rate_per_s": rates, "fleet.0.count": counts}, processes=2)
table = df.pivot_table(index="fleet.0.count", columns="generator.rate_per_s", values="pending_seconds.p95")
print("p95 pending (s) by node count (rows) and arrival rate per second (columns)")
table.round(1)"""
        ),
        new_code_cell(
            """fig, ax = plt.subplots(figsize=(7, 4))
for rate in rates:
    sub = df[df["generator.rate_per_s"] == rate].sort_values("fleet.0.count")
    ax.plot(sub["fleet.0.count"], sub["pending_seconds.p95"], marker="o", label=f"{rate} pods/s")
ax.axhline(60, color="tab:red", ls="--", lw=1, label="target 60 s")
ax.set_yscale("symlog", linthresh=1); ax.set_ylim(bottom=0); ax.set_xlabel("L4 nodes"); ax.set_ylabel("p95 pending (s)")
ax.legend(); ax.grid(alpha=0.3); ax.set_title("More load needs more nodes")
plt.show()"""
        ),
        new_markdown_cell(
            """**Takeaways.** The answer is a number of nodes *and* a curve: near the knee a single node changes the
wait from minutes to nothing, so plan with a margin and with several seeds. The same search is
`gpuslice plan scenarios/capacity-planning.yaml --target "p95_pending_s<=60" --seeds 1,2,3` on the command line."""
        ),
        new_markdown_cell(
            """## From your own cluster: a snapshot
Planning usually starts from a running cluster with pods already Pending. `kubectl get nodes,pods -A -o yaml`
(or `-o json`) of a HAMi cluster is enough: running HAMi pods keep their grants, Pending pods asking HAMi
resources are the queue (in creation order), everything else is skipped and counted. The bundled
`examples/snapshot/cluster.yaml` has a control plane, one 2 x A100 node and two 4 x T4 nodes, 9 GPU pods
running and 7 Pending. Pods without a `gpuslice.io/expected-duration` annotation are assumed to run 3 hours."""
        ),
        new_code_cell(
            """SNAPSHOT = "../examples/snapshot/cluster.yaml"
runs = {p: gpuslice.simulate(snapshot=SNAPSHOT, policy=p, assume_duration="3h") for p in ["hami-binpack", "fgd"]}
print(runs["hami-binpack"].summary["snapshot"])
queue = pd.concat({p: r.pods.set_index("name")[["status", "node", "pending_seconds", "reason"]]
                   for p, r in runs.items()}, axis=1)
queue"""
        ),
        new_markdown_cell(
            """The 70000 MiB fine-tune waits for an A100 card to empty; the 2 x 90000 MiB job and the 4-card job fit no
node at all (`shortfall` says by how much). How many more 2 x A100 nodes until nothing that can be placed waits?"""
        ),
        new_code_cell(
            """print(runs["hami-binpack"].pods.set_index("name").loc["ml/train-llm-70b-0", "shortfall"])
snap_plan = gpuslice.plan_capacity(snapshot=SNAPSHOT, add="../examples/snapshot/a100-node.yaml",
                                   assume_duration="3h", targets="p95_pending_s<=0", max_count=4)
print(snap_plan)"""
        ),
    ]


def policy_what_if() -> list:
    return [
        new_markdown_cell(
            """# 2. Policy what-if on the openb trace

**What this notebook teaches.** How much the placement policy matters when GPUs are shared, replayed on
Alibaba's openb trace (1,213 GPU nodes, 6,212 GPUs) the way the FGD study (USENIX ATC'23) does: every trace
pod once in a random order, then draws until requested GPU demand reaches 130% of capacity; pods never leave, so every policy eventually
runs out of room; the question is how much it wastes on the way. We compare the six research policies
(Random, DotProd, GpuPacking, GpuClustering, BestFit, FGD) with HAMi's binpack and spread: the
allocation-ratio curves and the GPUs left unallocated at 130% arrived demand, like the study's figure;
then fragmentation and per-card use for two policies."""
        ),
        new_code_cell(SETUP),
        new_code_cell(
            """DATA = ROOT / "scenarios" / "data" / "openb"
NODES, PODS = DATA / "openb_node_list_gpu_node.csv", DATA / "openb_pod_list_default.csv"
fleet = gpuslice.Fleet.from_openb(NODES)
print(fleet)
fleet.nodes.groupby("model")["gpus"].agg(["count", "sum"]).rename(columns={"count": "nodes", "sum": "gpus"})"""
        ),
        new_markdown_cell(
            """## The policies
Policies are chosen by name (`gpuslice.policies()` lists them). Each is one file of the C++ core, the same
code the CLI and a scheduler extender use; the cell below checks this build has all eight."""
        ),
        new_code_cell(
            """WANTED = ["random", "dotprod", "gpupacking", "gpuclustering", "bestfit", "fgd", "hami-binpack", "hami-spread"]
missing = [p for p in WANTED if p not in gpuslice.policies()]
assert not missing, f"this build lacks {missing}"
available = WANTED
print("comparing:", ", ".join(available))"""
        ),
        new_markdown_cell(
            """## The sweep
`gpuslice.sweep` runs policies x seeds (x tunes x parameters) in local processes and returns one row per run
with the summary's fields as columns. On a Dask cluster it is the same call with `client=Client(...)`
(see the end of this notebook)."""
        ),
        new_code_cell(
            """SEEDS = [42] if QUICK else [42, 43, 44]
df = gpuslice.sweep(policies=available, seeds=SEEDS, tune=1.3, openb_nodes=NODES, openb_pods=PODS)
cols = ["policy", "seed", "pods", "placements", "refused", "alloc_ratio_at_130_pct",
        "unallocated_gpus_at_130_pct", "final_frag_gpu_pct", "wall_seconds"]
df[cols].round(2)"""
        ),
        new_code_cell(
            """fig, axes = plt.subplots(1, 2, figsize=(14, 4.5))
plots.plot_alloc_curves(df, ax=axes[0])
axes[0].set_xlim(40, 131); axes[0].set_ylim(40, 101)
plots.plot_unallocated(df, ax=axes[1])
plt.tight_layout(); plt.show()"""
        ),
        new_markdown_cell(
            """## Ours beside the study's published curves
The study's artifact publishes its 10-seed results (`scenarios/data/openb/published/`, copied with
attribution). Dashed: the artifact's mean curve; solid: ours (the seeds above). `gpuslice study` runs the
whole grid from the command line and prints the same comparison cell by cell."""
        ),
        new_code_cell(
            """import numpy as np
pub = pd.read_csv(DATA / "published" / "analysis_allo_discrete.csv")
pub = pub[pub["workload"] == "openb_pod_list_default"].copy()
pub["policy"] = pub["sc_policy"].str.split("-").str[1].str.lower()
xs = [str(x) for x in range(131)]
fig, ax = plt.subplots(figsize=(9, 5))
for i, policy in enumerate(["random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd"]):
    ours = np.array([c for c in df.loc[df["policy"] == policy, "alloc_ratio_by_arrived_pct"]], dtype=float).mean(axis=0)
    theirs = pub.loc[pub["policy"] == policy, xs].mean().to_numpy()
    ax.plot(range(131), ours, color=f"C{i}", label=f"{policy} (ours {ours[130]:.2f})")
    ax.plot(range(131), theirs, color=f"C{i}", ls="--", label=f"{policy} (published {theirs[130]:.2f})")
ax.set_xlim(80, 131); ax.set_ylim(80, 97)
ax.set_xlabel("arrived GPU demand (% of capacity)"); ax.set_ylabel("GPU allocation ratio (%)")
ax.legend(fontsize="x-small", ncol=2); ax.grid(alpha=0.3)
plt.show()"""
        ),
        new_code_cell(
            """summary = (df.groupby("policy")[["alloc_ratio_at_130_pct", "unallocated_gpus_at_130_pct"]].mean()
           .sort_values("unallocated_gpus_at_130_pct"))
summary.round(1)"""
        ),
        new_markdown_cell(
            """## Why pods are refused
`refusals_by_reason.*` columns count refused pods by HAMi's reason (the reason most nodes gave): in the
openb trace many refusals are host CPU, not GPU."""
        ),
        new_code_cell(
            """reasons = [c for c in df.columns if c.startswith("refusals_by_reason.")]
df.groupby("policy")[reasons].mean().rename(columns=lambda c: c.split(".", 1)[1]).round(0)"""
        ),
        new_markdown_cell(
            """## Fragmentation and per-card use: FGD against spread
A single run returns the timeline and every pod. Fragmentation is the study's measure: the share of GPU
capacity that the trace's typical pods could not use where it sits (free compute on cards too full for
them, or on nodes they cannot use at all). FGD places each pod where this grows least; HAMi's spread opens
many cards early and leaves slivers everywhere."""
        ),
        new_code_cell(
            """runs = {p: gpuslice.simulate(openb_nodes=NODES, openb_pods=PODS, policy=p, tune=1.3, seed=SEEDS[0])
        for p in ("fgd", "hami-spread")}
fig, axes = plt.subplots(1, 2, figsize=(14, 4))
plots.plot_fragmentation(runs, ax=axes[0])
for name, r in runs.items():
    axes[1].plot(r.timeline["arrived_gpu_pct"], r.timeline["busy_cards_pct"], label=name)
axes[1].set_xlabel("arrived GPU demand (% of capacity)"); axes[1].set_ylabel("cards holding a slice (%)")
axes[1].legend(); axes[1].grid(alpha=0.3)
plt.tight_layout(); plt.show()"""
        ),
        new_code_cell(
            """# Per-card memory use when arrived demand first reaches 60% of capacity, first 40 nodes
for name, r in runs.items():
    t60 = r.timeline.loc[r.timeline["arrived_gpu_pct"] >= 60, "time"].iloc[0]
    plots.plot_card_heatmap(r, at=t60, max_nodes=40)
    plt.gca().set_title(f"{name}: per-card memory % at 60% arrived demand")
    plt.show()"""
        ),
        new_markdown_cell(
            """## The same sweep on a Dask cluster
When one machine is not enough, hand `sweep` a `dask.distributed.Client`. Tasks are plain dicts (the scenario
text and file paths); each worker builds the C++ objects itself, and tasks are submitted with `pure=False` so
two identical configurations are two runs. Here a small local cluster stands in for a real one (workers need
the package installed and the data files at the same paths)."""
        ),
        new_code_cell(
            """from dask.distributed import Client, LocalCluster

with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster) as client:
    on_dask = gpuslice.sweep(policies=["hami-binpack", "hami-spread"], seeds=[7], tune=0.6,
                             openb_nodes=NODES, openb_pods=PODS, client=client)
on_dask[["policy", "seed", "tune", "placements", "final_alloc_gpu_pct"]]"""
        ),
    ]


def teaching_lab() -> list:
    return [
        new_markdown_cell(
            """# 3. Teaching lab: slicing one GPU, decision and enforcement

**What this notebook teaches.** The seed labs of the HAMi workshop, on a fake fleet and the fake GPU driver
instead of real hardware: two pods sharing one card; the scheduler refusing the 11th slice of a 10-slot card
and a 45000 MiB pod; and, inside a container, the out-of-memory error at the slice's limit and the compute cap.
Along the way: **where the line between decision and enforcement runs**. The scheduler (gpuslice's core,
HAMi's rules) *decides* which card and how much of it a pod gets, from requests and annotations only. The
in-container shim (HAMi-core, `libgpuslice_shim.so` here) *enforces* it: it intercepts CUDA calls and returns
out-of-memory past the slice, and throttles kernels to the core share. Nothing in the decision knows what the
program really does; nothing in the enforcement chooses a card."""
        ),
        new_code_cell(SETUP),
        new_markdown_cell(
            """## The fake fleet: one Tesla T4 registered as 10 vGPU slots
A Node manifest with HAMi's registration annotation is all the scheduler knows about a machine."""
        ),
        new_code_cell(
            """EX = ROOT / "examples" / "place"
fleet = gpuslice.Fleet.from_manifests(EX / "t4-node.yaml")
fleet.cards"""
        ),
        new_markdown_cell(
            """## Lab 1: two pods on one card
Each pod asks for one vGPU with a 4000 MiB slice. `place` gives the same answer as `gpuslice place --json`:
the node, the score and the allocation annotation HAMi writes (`UUID,NVIDIA,<MiB>,<cores>`). With two such pods
already placed (their annotations in `two-placed.yaml`) the third still lands on the same card."""
        ),
        new_code_cell(
            """first = gpuslice.place(nodes=EX / "t4-node.yaml", pod=EX / "gpumem-pod-a.yaml")
print("node:", first["node"], "| allocation:", first["allocation"])
third = gpuslice.place(nodes=EX / "t4-node.yaml", pod=EX / "gpumem-pod-a.yaml", existing=EX / "two-placed.yaml")
print("with two placed -> node:", third["node"], "| allocation:", third["allocation"])
pd.DataFrame(third["events"]) if third["events"] else None"""
        ),
        new_markdown_cell(
            """## Lab 2: the 11th slice is refused
`lab-t4-slices`: three 4000 MiB pods, then eight 300 MiB pods. Memory is not the limit (12000 + 2100 of
15360 MiB); the card's 10 slots are, so the 11th pod is refused with `CardTimeSlicingExhausted`."""
        ),
        new_code_cell(
            """lab = gpuslice.simulate(ROOT / "scenarios" / "lab-t4-slices.yaml")
lab.pods[["name", "kind", "status", "node", "allocation", "reason"]]"""
        ),
        new_code_cell(
            """lab.events[["time", "pod", "type", "reason", "message"]].tail(3)"""
        ),
        new_code_cell(
            """usage = lab.card_usage()
print(usage[["node", "index", "slots", "used_slices", "memory_mib", "used_memory_mib", "memory_pct"]].to_string(index=False))
plots.plot_card_heatmap(lab, value="used_slices")
plt.show()"""
        ),
        new_markdown_cell(
            """## Lab 3: the 45000 MiB pod
A slice larger than the whole card can never fit: every node answers `CardInsufficientMemory`, and the
scheduler says so in an event instead of letting the pod start and fail."""
        ),
        new_code_cell(
            """big = gpuslice.place(nodes=EX / "t4-node.yaml", pod=EX / "oversized-pod.yaml")
print("node:", big["node"])
big["failed_nodes"]"""
        ),
        new_code_cell(
            """a6000 = gpuslice.simulate(ROOT / "scenarios" / "lab-a6000-oversubscribe.yaml")
print(a6000.summary["refusals_by_reason"])
a6000.pods[["name", "status", "allocation", "reason"]]"""
        ),
        new_markdown_cell(
            """## Lab 4: cores are a scheduling dimension too
On two A40s with binpack, a 30% pod and a 60% pod share one card; a 20% pod no longer fits there
(30 + 60 + 20 > 100) and goes to the other card. The *decision* counts core shares; the *cap* on what a
kernel actually uses is enforced in the container."""
        ),
        new_code_cell(
            """a40 = gpuslice.simulate(ROOT / "scenarios" / "lab-a40-cores.yaml")
print(a40.card_usage()[["node", "index", "used_slices", "used_cores", "cores_pct", "used_memory_mib"]].to_string(index=False))
plots.plot_card_heatmap(a40, value="cores_pct")
plt.show()"""
        ),
        new_markdown_cell(
            """## Labs 5 and 6: enforcement, on the fake GPU driver
The out-of-memory error at the slice and the compute cap happen *inside* the container: HAMi-core (here the
`gpuslice` shim, `build/lib/libgpuslice_shim.so`) is preloaded into the program and wraps the CUDA driver.
`gpuslice realgpu run` treats this machine as one node: it lists its GPUs, places the scenario's pods with
the same core as above, and starts each pod's program with the shim and the environment HAMi's device
plugin injects (`CUDA_DEVICE_MEMORY_LIMIT_0=4000m`, `CUDA_DEVICE_SM_LIMIT_0=30`, ...). Without a GPU it uses
the fake CUDA driver (`build/lib/fakecuda/libcuda.so.1`), here a Tesla T4 of 15360 MiB. The programs are
gpuslice's probe: one allocates 512 MiB chunks until refused, one runs 2 ms kernels for 3 s under a 30%
cap (`force`), one prints what its slice looks like; a 45000 MiB pod never starts."""
        ),
        new_code_cell(
            """import json, subprocess

cli = ROOT / "build" / "bin" / "gpuslice"
lab = None
if cli.exists():
    proc = subprocess.run([str(cli), "realgpu", "run", "examples/realgpu/teaching-lab.yaml", "--driver", "fake", "--json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    try:
        lab = json.loads(proc.stdout)
    except ValueError:
        print("realgpu run exited", proc.returncode, proc.stderr[-2000:])
if lab is None:
    print("build/bin/gpuslice with realgpu is not built here (cmake --build build); expected: an allocation past\\n"
          "the slice fails with CUDA_ERROR_OUT_OF_MEMORY; a kernel under a 30% cap gets about 30% of the card.")
else:
    rows = []
    for pod in lab["pods"]:
        out = json.loads(pod["output_tail"].splitlines()[-1]) if pod["output_tail"] else {}
        view = out.get("view", {})
        rows.append({
            "pod": pod["name"],
            "decision": pod["allocation"] if pod["placed"] else "refused: " + pod["reason"],
            "allocated_MiB": out.get("allocated_bytes", 0) // 2**20 if "allocated_bytes" in out else None,
            "stopped_by": out.get("stopped_by"),
            "card_seen_MiB": view.get("cuda_total_bytes", 0) // 2**20 if view else None,
            "compute_share_pct": round(out["share"] * 100, 1) if "share" in out else None,
            "shim_says": pod["shim"].strip(),
        })
    display(pd.DataFrame(rows))"""
        ),
        new_markdown_cell(
            """Read the table: `tenant-a-oom` got 3584 MiB (7 chunks) and the 8th chunk was refused with
`CUDA_ERROR_OUT_OF_MEMORY`; the shim logged `Device 0 OOM 4294967296 / 4194304000` (needed / limit, bytes)
while the card still had room. `tenant-c-view` sees a 4000 MiB card, not the T4's 15360 MiB.
`tenant-b-compute` got about 30% of the card's time. `too-big` was refused by the scheduler
(`CardInsufficientMemory`) and never ran. The full checklist (co-residency, view, cap, neighbour, compute
caps at 30% and 60%, the default policy) is `build/bin/gpuslice realgpu check`."""
        ),
        new_markdown_cell(
            """## Where the line runs

| | decision (scheduler, gpuslice core) | enforcement (in the container) |
|---|---|---|
| input | requests and annotations, node registrations | the program's CUDA calls |
| 2 pods on 1 card | picks the card, writes `vgpu-devices-allocated` | each process sees only its slice |
| 11th slice | refuses: `CardTimeSlicingExhausted` | never started |
| 45000 MiB pod | refuses: `CardInsufficientMemory` | never started |
| OOM at the slice | trusts the request | `cuMemAlloc` past the limit -> out of memory |
| compute cap | counts core shares (30 + 60 <= 100) | throttles kernels to the share |

A pod that lies about its needs passes the decision and is stopped by enforcement; a pod that is honest but
too big is stopped by the decision and never costs a GPU."""
        ),
    ]


NOTEBOOKS = {
    "01-capacity-planning.ipynb": capacity_planning,
    "02-policy-what-if-openb.ipynb": policy_what_if,
    "03-teaching-lab.ipynb": teaching_lab,
}


def main() -> int:
    out = ROOT / "notebooks"
    out.mkdir(exist_ok=True)
    for name, cells in NOTEBOOKS.items():
        nb = new_notebook(cells=cells())
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nb.metadata["language_info"] = {"name": "python"}
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"{Path(name).stem[:2]}-{i:02d}"
        nbformat.validate(nb)
        nbformat.write(nb, out / name)
        print("wrote", out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
