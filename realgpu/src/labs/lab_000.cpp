// Seed 000 (Dynamia AI, "HAMi vGPU: core & memory isolation test"): two A40s,
// HAMi v2.3.13, a PyTorch pod with nvidia.com/gpumem 20000 and gpucores 30
// or 60 under GPU_CORE_UTILIZATION_POLICY=force.
#include <fmt/format.h>

#include <cmath>

#include "labs_bench.hpp"

namespace gpuslice::realgpu::labs {

namespace {
constexpr uint64_t kSlice = 20000;
constexpr double kRatio = 2.0, kRatioTolerance = 0.4;
}  // namespace

void lab_000(Bench& b) {
  b.begin_lab({"000", "HAMi v2.3: core and memory isolation",
               "2 x NVIDIA A40 (46068 MiB), HAMi v2.3.13, PyTorch 2.4.1 (resnet18 --dummy; torch.empty)", ""},
              SeedCard{"NVIDIA A40", 46068, 84, 260});
  const std::string exact =
      "granted iff it fits in limit - context (measured in the view before allocating); a refusal is an "
      "out-of-memory error with the shim's line needed = context + asked (2 MiB slack)";

  b.step(b.row("1", "View inside a 20000 MiB slice",
               "cuMemGetInfo, cuDeviceTotalMem, NVML (and nvidia-smi where present) total 20000 MiB",
               "nvidia-smi in the pod: 0MiB / 20000MiB (card 46068 MiB)"),
         [&](LabRow& r) {
           r.workload = "gpuslice-probe info, nvidia-smi";
           if (skip_unless_card_holds(r, b.card(), kSlice)) return;
           fill_view(r, {b.view(kSlice)}, kSlice);
         });
  b.step(b.row("2", "20000 MiB at once in the 20000 MiB slice", exact,
               "refused: \"Device 0 OOM 21244149760 / 20971520000\" (context 260 MiB); PyTorch: OOM"),
         [&](LabRow& r) {
           if (skip_unless_card_holds(r, b.card(), kSlice + 1024)) return;
           fill_allocation(r, b.allocate(kSlice, 20000, false));
         });
  b.step(b.row("3", "19500 MiB at once in the 20000 MiB slice", exact,
               "granted (19500 + 260 MiB context fits in 20000)"),
         [&](LabRow& r) {
           if (skip_unless_card_holds(r, b.card(), kSlice + 1024)) return;
           fill_allocation(r, b.allocate(kSlice, 19500, false));
         });

  std::optional<ComputeRun> at30, at60;
  const std::string share = fmt::format(
      "device utilisation sampled each second by NVML outside the slice averages the cap +- {:g} points",
      kShareTolerance);
  b.step(b.row("4", "gpucores 30, force: utilisation and step time", share,
               "fluctuates around 30%, averages ~30% (Grafana); step ~0.6 s"),
         [&](LabRow& r) {
           at30 = b.train(b.slice("000-cores30", kSlice, 30, "force"));
           fill_share(r, *at30, 30);
         });
  b.step(b.row("5", "gpucores 60, force: utilisation and step time", share,
               "fluctuates around 60%, averages ~60%; step ~0.3 s"),
         [&](LabRow& r) {
           at60 = b.train(b.slice("000-cores60", kSlice, 60, "force"));
           fill_share(r, *at60, 60);
         });
  b.step(b.row("6", "Step time at 30% over step time at 60%",
               fmt::format("{:g} +- {:g} (a step bound by the device takes 1/cap)", kRatio, kRatioTolerance),
               "0.6 s / 0.3 s = 2.0"),
         [&](LabRow& r) {
           if (!at30 || !at60 || at60->step_seconds <= 0)
             throw std::runtime_error("needs steps 000.4 and 000.5");
           const double ratio = at30->step_seconds / at60->step_seconds;
           r.ours =
               fmt::format("{:.3f} s / {:.3f} s = {:.2f}", at30->step_seconds, at60->step_seconds, ratio);
           r.figures = {{"step_30_seconds", at30->step_seconds},
                        {"step_60_seconds", at60->step_seconds},
                        {"ratio", ratio}};
           const bool ok = std::abs(ratio - kRatio) <= kRatioTolerance;
           r.status = ok ? RowStatus::Pass : RowStatus::Fail;
           if (!ok) r.why = fmt::format("ratio {:.2f}, not {:g} +- {:g}", ratio, kRatio, kRatioTolerance);
         });
}

}  // namespace gpuslice::realgpu::labs
