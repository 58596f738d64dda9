# The seeds' allocation labs under PyTorch (`gpuslice realgpu labs --framework torch`):
# 000 allocates N MiB of float32 at once, 001 512 MiB uint8 chunks until refused;
# the footprint is read first (torch.cuda.mem_get_info makes the context). Ends with one
# JSON line. Compiled into gpuslice (realgpu/CMakeLists.txt) and written beside the run.
# usage: labs_alloc.py once|chunks MIB STOP_MIB
import json, sys
import torch
mode, mib, stop_mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
free, total = torch.cuda.mem_get_info()
out = {"framework": "PyTorch " + torch.__version__, "total_bytes": total, "free_before_bytes": free,
       "granted_mib": 0, "refused": False}
held = []
try:
    if mode == "once":
        held.append(torch.empty(mib * 1024 * 1024 // 4, dtype=torch.float32, device="cuda"))
        out["granted_mib"] = mib
    else:
        while (len(held) + 1) * mib <= stop_mib:
            held.append(torch.empty(mib, 1024, 1024, dtype=torch.uint8, device="cuda"))
            out["granted_mib"] = len(held) * mib
            print(f"Allocated {len(held) * mib} MiB", flush=True)
except RuntimeError as e:  # torch.OutOfMemoryError is one
    out["refused"] = True
    out["error"] = str(e).split(".")[0]
    out["message"] = str(e)[:400]
print(json.dumps(out), flush=True)
