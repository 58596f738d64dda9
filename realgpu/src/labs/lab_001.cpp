// Seed 001 (HAMi workshop, lab 3: GPU partitioning): one Tesla T4 of
// 15360 MiB, HAMi v2.9.0; pods of 4000 MiB share it, the view shows 4000 MiB,
// 512 MiB chunks are refused at the slice while the neighbours keep running,
// and gpucores 30 holds under force and bursts under default.
#include <fmt/format.h>

#include <cmath>

#include "gpuslice/realgpu/local_run.hpp"
#include "labs_bench.hpp"

namespace gpuslice::realgpu::labs {

namespace {
constexpr uint64_t kSlice = 4000, kChunk = 512, kNeighbourHold = 512;
constexpr double kBurstTolerance = 10;

LocalPod pod(std::string name, std::vector<std::string> command) {
  LocalPod p;
  p.name = std::move(name);
  p.gpumem_mib = kSlice;
  p.command = std::move(command);
  return p;
}
}  // namespace

void lab_001(Bench& b) {
  b.begin_lab({"001", "HAMi v2.9 lab 3: GPU partitioning on one card",
               "1 x Tesla T4 (15360 MiB), HAMi v2.9.0, PyTorch 2.4.0 (512 MiB chunks; a matmul loop)", ""},
              SeedCard{"Tesla T4", 15360, 40, 100});
  // Steps 2 and 4 of the lab as one node's pods: two 4000 MiB pods hold
  // memory while a third allocates 512 MiB chunks until refused. The
  // neighbours hold long enough to outlive the OOM test (PyTorch starts slowly).
  const int hold_ms = b.torch() ? 20000 : 3000;
  const auto neighbour = std::vector<std::string>{b.toolkit().probe, "alloc",
                                                  "--chunk-mib",     std::to_string(kNeighbourHold),
                                                  "--max-mib",       std::to_string(kNeighbourHold),
                                                  "--hold-ms",       std::to_string(hold_ms)};
  LocalScenario lab;
  lab.name = "seed 001, lab 3";
  lab.source = "gpuslice realgpu labs (lab 001)";
  lab.pods = {pod("gpumem-pod-a", neighbour), pod("gpumem-pod-b", neighbour),
              pod("oom-test-pod", b.allocation_command(kSlice, kChunk, true))};
  const LabPods pods(b, lab, 3 * kSlice, hold_ms / 1000.0 + 180);

  b.step(
      b.row(
          "1", "Several pods on one card",
          "the three 4000 MiB pods are placed on one card, each with the annotation <uuid>,NVIDIA,4000,0:;",
          "gpumem-pod-a, -b: GPU-859b872c-...,NVIDIA,4000,0:; both Running; oom-test-pod still fits (8000 of "
          "15360 MiB reserved)"),
      [&](LabRow& r) {
        r.workload = "gpuslice realgpu run (placement by the core)";
        const RunReport* run = pods.for_step(r);
        if (!run) return;
        bool ok = run->pods.size() == 3;
        nlohmann::json placed = nlohmann::json::array();
        for (const auto& p : run->pods) {
          ok = ok && p.placed && p.cards.size() == 1 && p.cards[0] == run->pods[0].cards.at(0) &&
               p.allocation == p.cards[0] + ",NVIDIA,4000,0:;";
          r.ours += fmt::format("{}{} {}", r.ours.empty() ? "" : "  ", p.name,
                                p.placed ? p.allocation : "unschedulable: " + p.reason);
          placed.push_back({{"name", p.name}, {"allocation", p.allocation}, {"placed", p.placed}});
        }
        r.figures = {{"pods", placed}, {"registration", run->registration}};
        r.status = ok ? RowStatus::Pass : RowStatus::Fail;
        if (!ok) r.why = "not all three pods on one card with a 4000 MiB grant";
      });
  b.step(b.row("2", "View inside a 4000 MiB slice",
               "cuMemGetInfo, cuDeviceTotalMem, NVML (and nvidia-smi where present) total 4000 MiB",
               "nvidia-smi in gpumem-pod-a: 0MiB / 4000MiB (card 15360 MiB)"),
         [&](LabRow& r) {
           r.workload = "gpuslice-probe info, nvidia-smi";
           fill_view(r, {b.view(kSlice)}, kSlice);
         });
  b.step(b.row("3", "512 MiB chunks until refused (oom-test-pod)",
               "granted up to limit - context (measured), then an out-of-memory error and the shim's line "
               "needed = "
               "context + held + 512 MiB (2 MiB slack)",
               "granted to 3584 MiB; \"Device 0 OOM 4399824896 / 4194304000\" (context 100 MiB); CUDA out of "
               "memory"),
         [&](LabRow& r) {
           if (!pods.for_step(r)) return;
           const PodOutcome& p = pods.placed(2);
           fill_allocation(r, b.read_allocation(kSlice, kChunk, true, p.output, p.shim_lines));
         });
  b.step(b.row("4", "Neighbours keep running",
               "gpumem-pod-a and -b hold their memory through the OOM test and exit 0",
               "gpumem-pod-a, -b: Running, 0 restarts, after the OOM"),
         [&](LabRow& r) {
           r.workload = "gpuslice-probe alloc --hold-ms";
           if (!pods.for_step(r)) return;
           const PodOutcome& oom = pods.placed(2);
           bool ok = true;
           std::vector<double> seconds;
           for (size_t i = 0; i < 2; ++i) {
             const PodOutcome& p = pods.placed(i);
             seconds.push_back(p.seconds);
             uint64_t held = 0;
             try {
               held = nlohmann::json::parse(p.output.substr(0, p.output.find('\n')))
                          .value("allocated_bytes", uint64_t{0});
             } catch (const nlohmann::json::exception&) {
             }
             const bool fine = p.exit_code == 0 && held == kNeighbourHold * kMiB && p.seconds > oom.seconds;
             ok = ok && fine;
             r.ours += fmt::format("{}{}: held {} for {:.1f} s, exit {}", r.ours.empty() ? "" : "; ", p.name,
                                   mib_text(held), p.seconds, p.exit_code);
           }
           r.ours += fmt::format(" (the OOM pod ran {:.2f} s)", oom.seconds);
           r.figures = {{"oom_pod_seconds", oom.seconds}, {"neighbour_seconds", seconds}};
           r.status = ok ? RowStatus::Pass : RowStatus::Fail;
           if (!ok) r.why = "a neighbour failed, held less, or stopped before the OOM test ended";
         });
  b.step(b.row("5", "gpucores 30, force: utilisation sampled each second",
               fmt::format("NVML device utilisation outside the slice averages 30 +- {:g} points",
                           kShareTolerance),
               "12 samples 5 s apart average exactly 30%; DCGM 3-minute average 27.6%"),
         [&](LabRow& r) { fill_share(r, b.train(b.slice("001-cores30", kSlice, 30, "force")), 30); });
  b.step(
      b.row("6", "gpucores 30, default policy, alone on the card",
            fmt::format("not throttled: utilisation at most {:g} points below the same loop without a slice",
                        kBurstTolerance),
            "~100% utilisation on an idle card (bursting above gpucores)"),
      [&](LabRow& r) {
        const ComputeRun alone = b.train(b.slice("001-default30", kSlice, 30, "default"));
        const ComputeRun& bare = b.bare();
        r.ours = fmt::format("{}; without a slice {:.1f}%, step {:.3f} s", alone.summary(), bare.mean_util,
                             bare.step_seconds);
        r.figures = {{"mean_utilisation_percent", alone.mean_util},
                     {"bare_mean_utilisation_percent", bare.mean_util},
                     {"step_seconds", alone.step_seconds},
                     {"bare_step_seconds", bare.step_seconds},
                     {"samples_percent", alone.samples},
                     {"evidence", alone.evidence}};
        const bool ok = !std::isnan(alone.mean_util) && !std::isnan(bare.mean_util) &&
                        alone.mean_util >= bare.mean_util - kBurstTolerance;
        r.status = ok ? RowStatus::Pass : RowStatus::Fail;
        if (!ok) r.why = "held below what the card gives the loop without a slice";
      });
}

}  // namespace gpuslice::realgpu::labs
