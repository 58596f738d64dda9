"""gpuslice: GPU slicing placement (HAMi's rules), simulation and capacity planning.

    import gpuslice
    gpuslice.place(nodes="examples/place/t4-node.yaml", pod="examples/place/gpumem-pod-a.yaml")
    r = gpuslice.simulate("scenarios/inference-fleet.yaml", policy="hami-spread", seed=1)
    r.summary, r.timeline, r.pods, r.events
    df = gpuslice.sweep(policies=["hami-binpack", "hami-spread"], seeds=[1, 2, 3], scenario="...")
    plan = gpuslice.plan_capacity("scenarios/capacity-planning.yaml", "p95_pending_s<=60")
    gpuslice.compare(["out/example/hami-binpack", "out/example/fgd"])   # a DataFrame, as compare.csv
    moves = gpuslice.defrag(snapshot="cluster.yaml", for_queue=True)   # the fewest pod moves

Everything runs in the C++ core and simulator (module gpuslice._gpuslice); bad input raises
gpuslice.InputError (a ValueError with .file, .line, .field and .detail); a run too big for the
memory left raises gpuslice.MemoryLimitError (an InputError with .estimate_bytes and .limit_bytes).
"""

from __future__ import annotations

from . import _gpuslice
from ._gpuslice import InputError, MemoryLimitError
from .api import Fleet, SimResult, place, pod_requests, policies, simulate
from .comparison import compare
from .defrag import defrag
from .plan import PlanResult, metric_names, plan_capacity
from .sweep import sweep

InputError.__module__ = "gpuslice"
MemoryLimitError.__module__ = "gpuslice"

__version__ = "0.1.0"

__all__ = [
    "InputError",
    "MemoryLimitError",
    "Fleet",
    "SimResult",
    "PlanResult",
    "place",
    "pod_requests",
    "policies",
    "simulate",
    "sweep",
    "plan_capacity",
    "defrag",
    "metric_names",
    "compare",
    "plots",
]


def __getattr__(name: str):
    # matplotlib is imported only when plots are used.
    if name == "plots":
        import importlib

        return importlib.import_module(".plots", __name__)
    raise AttributeError(f"module 'gpuslice' has no attribute {name!r}")
