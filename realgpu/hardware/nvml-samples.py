#!/usr/bin/env python3
"""NVML's per-process samples while gpuslice-probe spins, recorded from outside the slices.

    python3 realgpu/hardware/nvml-samples.py BUILD_DIR     (needs nvidia-ml-py: `import pynvml`)

Four phases: one probe alone, two at once without the shim, two `default` 30 % slices and two
`force` 30 % slices under the shim. Prints, per phase, each process's samples and the device's
utilisation; writes every sample to $OUT (default /tmp/out)/nvdiag.jsonl. It showed on an H100
that the probe's own count (kernels x 2 ms) includes a time-sliced neighbour's turns
(docs/realgpu.md, "Measurements on a GPU: the seed labs").
"""
import json, os, subprocess, sys, time

import pynvml as N

B = sys.argv[1]; O = os.environ.get("OUT", "/tmp/out")
try: N.nvmlInit()
except N.NVMLError: N._LoadNvmlLibrary(); N.nvmlLib.nvmlInit_v2()  # the fake driver has no nvmlInitWithFlags
h = N.nvmlDeviceGetHandleByIndex(0)
def watch(tag, procs, seconds, log):
    last = 0; t0 = time.time(); rows = []
    while time.time() - t0 < seconds:
        time.sleep(0.1)
        try: s = N.nvmlDeviceGetProcessUtilization(h, last)
        except N.NVMLError as e: s = []
        for x in s:
            if x.timeStamp > last: rows.append({"pid": x.pid, "ts": x.timeStamp, "sm": x.smUtil})
        if s: last = max(last, max(x.timeStamp for x in s))
        u = N.nvmlDeviceGetUtilizationRates(h).gpu
        rows.append({"t": round(time.time() - t0, 2), "dev": u, "pids": [p.pid for p in procs]})
    outs = [p.communicate()[0] for p in procs]
    log.write(json.dumps({"phase": tag, "rows": rows, "outs": outs}) + "\n")
    per = {}
    for r in rows:
        if "pid" in r: per.setdefault(r["pid"], []).append(r["sm"])
    stamps = sorted({r["ts"] for r in rows if "ts" in r})
    print(tag, {p.pid: o.strip()[-160:] for p, o in zip(procs, outs)})
    print("  samples per pid:", {k: (len(v), round(sum(v) / max(1, len(v)), 1), sum(v)) for k, v in per.items()},
          "distinct stamps", len(stamps), "period", (stamps[-1] - stamps[0]) / max(1, len(stamps) - 1) if stamps else 0)
    print("  dev util:", [r["dev"] for r in rows if "dev" in r][::5])
def spin(sec, env=None):
    e = dict(os.environ); e.update(env or {})
    return subprocess.Popen([B + "/bin/gpuslice-probe", "spin", "--seconds", str(sec), "--kernel-us", "2000"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=e)
with open(O + "/nvdiag.jsonl", "w") as log:
    watch("alone", [spin(3)], 3.5, log)
    watch("two", [spin(4), spin(4)], 4.5, log)
    sh = {"LD_PRELOAD": B + "/lib/libgpuslice_shim.so", "GPU_CORE_UTILIZATION_POLICY": "default",
          "CUDA_DEVICE_SM_LIMIT": "30", "CUDA_DEVICE_MEMORY_LIMIT_0": "8000m", "LIBCUDA_LOG_LEVEL": "4"}
    a = spin(8, dict(sh, CUDA_DEVICE_MEMORY_SHARED_CACHE="/tmp/diag-a.cache"))
    b = spin(8, dict(sh, CUDA_DEVICE_MEMORY_SHARED_CACHE="/tmp/diag-b.cache"))
    watch("shim-default-30x2", [a, b], 8.5, log)
    f = dict(sh, GPU_CORE_UTILIZATION_POLICY="force")
    a = spin(8, dict(f, CUDA_DEVICE_MEMORY_SHARED_CACHE="/tmp/diag-c.cache"))
    b = spin(8, dict(f, CUDA_DEVICE_MEMORY_SHARED_CACHE="/tmp/diag-d.cache"))
    watch("shim-force-30x2", [a, b], 8.5, log)
