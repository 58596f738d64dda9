# A training-like step for the compute labs under PyTorch (the seeds ran resnet18 and
# "an infinite matrix multiplication"): 8 x (n x n matmul, relu, sum, backward),
# synchronised. Prints {"event": "started"} when the timed loop begins, then one JSON line.
# Compiled into gpuslice (realgpu/CMakeLists.txt) and written beside the run.
# usage: labs_train.py SECONDS N
import json, statistics, sys, time
import torch
seconds, n = float(sys.argv[1]), int(sys.argv[2])
torch.manual_seed(0)
x = torch.randn(n, n, device="cuda", requires_grad=True)
w = torch.randn(n, n, device="cuda", requires_grad=True)
def step():
    for _ in range(8):
        torch.relu(x @ w).sum().backward()
    torch.cuda.synchronize()
for _ in range(2):
    step()
print(json.dumps({"event": "started"}), flush=True)
times = []
end = time.monotonic() + seconds
while time.monotonic() < end:
    t0 = time.monotonic()
    step()
    times.append(time.monotonic() - t0)
print(json.dumps({"framework": "PyTorch " + torch.__version__, "steps": len(times),
                  "median_step_s": statistics.median(times), "mean_step_s": sum(times) / len(times)}), flush=True)
