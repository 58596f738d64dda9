// Seed 002 (HAMi isolation validation on a real RTX A6000, 49140 MiB, driver
// 535.183.06, HAMi 2.9.0): its five-row table, reproduced with our shim and
// our placement core. The seed measured memory with a cudaMalloc probe, so
// this lab runs gpuslice-probe whatever else is installed.
#include <fmt/format.h>

#include <sstream>

#include "gpuslice/realgpu/local_run.hpp"
#include "labs_bench.hpp"

namespace gpuslice::realgpu::labs {

namespace {
constexpr uint64_t kSlice = 8000, kChunk = 512;
// The seed's oversubscribing pod asked 45000 MiB of a 49140 MiB card: it fits
// the empty card, not the card beside two 8000 MiB slices. On any card, the
// same headroom below the card's size.
constexpr uint64_t kHeadroom = 49140 - 45000;

// Each sharing pod: its view, what was injected, then 512 MiB chunks until
// refused, held a moment so both pods hold their slices at once.
std::vector<std::string> sharing_pod_command(const std::string& probe) {
  const std::string p = "'" + probe + "'";
  return {"/bin/sh", "-c",
          p +
              " info && env | grep -E '^(CUDA_DEVICE_MEMORY_LIMIT_0|CUDA_DEVICE_SM_LIMIT|LD_PRELOAD)=' | "
              "sort; exec " +
              p + fmt::format(" alloc --chunk-mib {} --max-mib {} --hold-ms 1500", kChunk, 2 * kSlice)};
}

nlohmann::json first_json(const std::string& text) {
  try {
    return nlohmann::json::parse(text.substr(0, text.find('\n')));
  } catch (const nlohmann::json::exception&) {
    return {};
  }
}
}  // namespace

void lab_002(Bench& b) {
  b.begin_lab({"002", "HAMi isolation validation (5 exercises)",
               "1 x NVIDIA RTX A6000 (49140 MiB), driver 535.183.06, HAMi 2.9.0, a cudaMalloc probe", ""},
              SeedCard{"NVIDIA RTX A6000", 49140, 84, 4});
  auto row = [&b](std::string step, std::string title, std::string criteria, std::string seed) {
    LabRow r = b.row(std::move(step), std::move(title), std::move(criteria), std::move(seed));
    r.workload = "gpuslice-probe";
    return r;
  };
  const uint64_t oversubscribe = b.card().mib() > kHeadroom ? b.card().mib() - kHeadroom : 1;
  LocalScenario lab;
  lab.name = "seed 002 validation";
  lab.source = "gpuslice realgpu labs (lab 002)";
  for (const char* name : {"hami-share-a", "hami-share-b"}) {
    LocalPod p;
    p.name = name;
    p.gpumem_mib = kSlice;
    p.command = sharing_pod_command(b.toolkit().probe);
    lab.pods.push_back(p);
  }
  LocalPod big;
  big.name = "hami-oversubscribe";
  big.gpumem_mib = static_cast<int64_t>(oversubscribe);
  big.expect = "unschedulable";
  lab.pods.push_back(big);
  const LabPods pods(b, lab, 2 * kSlice + kChunk, 180);
  auto sharing = [&](size_t i) -> const PodOutcome& { return pods.placed(i); };

  b.step(
      row("1", "Co-residency", "two 8000 MiB pods placed on one physical card, both run to the end (exit 0)",
          "hami-share-a + hami-share-b both Running on the one A6000"),
      [&](LabRow& r) {
        if (!pods.for_step(r)) return;
        const PodOutcome &a = sharing(0), &c = sharing(1);
        const bool ok = a.cards == c.cards && a.cards.size() == 1 && a.exit_code == 0 && c.exit_code == 0;
        r.ours = fmt::format("{} {} exit {}  {} {} exit {}", a.name, a.allocation, a.exit_code, c.name,
                             c.allocation, c.exit_code);
        r.figures = {{"allocations", {a.allocation, c.allocation}},
                     {"exit_codes", {a.exit_code, c.exit_code}}};
        r.status = ok ? RowStatus::Pass : RowStatus::Fail;
        if (!ok) r.why = "not both on one card, or one did not finish";
      });
  b.step(row("2", "Virtualized device view",
             "in each pod the card is 8000 MiB (driver, NVML; nvidia-smi where present)",
             "both pods report 0MiB / 8000MiB, not the real 49140 MiB"),
         [&](LabRow& r) {
           if (!pods.for_step(r)) return;
           std::vector<ViewRun> views{read_view(first_json(sharing(0).output)),
                                      read_view(first_json(sharing(1).output))};
           views[0].label = "A";
           views[1].label = "B";
           if (!b.fake()) {  // nvidia-smi in a slice of its own
             views.push_back(b.view(kSlice));
             views.back().label = "a third 8000 MiB slice";
           }
           fill_view(r, views, kSlice);
         });
  b.step(row("3", "Memory-cap enforcement",
             "each pod granted up to limit - context (measured), then refused by the shim (needed = context "
             "+ held "
             "+ 512 MiB, 2 MiB slack) while the card has room",
             "cudaMalloc refused after 7680 MiB; \"Device 0 OOM 8594128896 / 8388608000\" (context 4 MiB), "
             "~40 GB "
             "of the card free"),
         [&](LabRow& r) {
           if (!pods.for_step(r)) return;
           const AllocationRun a =
               b.read_allocation(kSlice, kChunk, true, sharing(0).output, sharing(0).shim_lines);
           const AllocationRun c =
               b.read_allocation(kSlice, kChunk, true, sharing(1).output, sharing(1).shim_lines);
           LabRow second = r;
           fill_allocation(r, a);
           fill_allocation(second, c);
           const uint64_t room = b.card().total_bytes - 2 * kSlice * kMiB;
           r.ours = fmt::format("A {}; B {}; the card had {} beyond both slices", r.ours, second.ours,
                                mib_text(room));
           r.figures = {{"pod_a", r.figures}, {"pod_b", second.figures}, {"card_room_bytes", room}};
           if (r.status != RowStatus::Pass) r.why = "pod A: " + r.why;
           if (r.status == RowStatus::Pass && second.status != RowStatus::Pass) {
             r.status = RowStatus::Fail;
             r.why = "pod B: " + second.why;
           }
         });
  b.step(row("4", "Per-device budget (scheduler)",
             "a pod that fits the empty card (card - 4140 MiB) is unschedulable beside the two slices: "
             "CardInsufficientMemory",
             "hami-oversubscribe (45000 MiB) Pending: FilteringFailed ... CardInsufficientMemory"),
         [&](LabRow& r) {
           r.workload = "gpuslice realgpu run (placement by the core)";
           const RunReport* run = pods.for_step(r);
           if (!run) return;
           const PodOutcome& p = run->pods.at(2);
           r.ours =
               fmt::format("hami-oversubscribe ({} MiB of a {} MiB card) {}", oversubscribe, b.card().mib(),
                           p.placed ? "placed: " + p.allocation : "unschedulable: " + p.reason);
           r.figures = {{"request_mib", oversubscribe}, {"placed", p.placed}, {"reason", p.reason}};
           const bool ok = !p.placed && p.reason.find("CardInsufficientMemory") != std::string::npos;
           r.status = ok ? RowStatus::Pass : RowStatus::Fail;
           if (!ok) r.why = "not refused for CardInsufficientMemory";
         });
  b.step(
      row("5", "The mechanism",
          "the pod gets CUDA_DEVICE_MEMORY_LIMIT_0=8000m and our shim in LD_PRELOAD, and the refusal is the "
          "shim's",
          "env CUDA_DEVICE_MEMORY_LIMIT_0=8000m, CUDA_DEVICE_SM_LIMIT=0; /usr/local/vgpu/libvgpu.so"),
      [&](LabRow& r) {
        if (!pods.for_step(r)) return;
        const PodOutcome& a = sharing(0);
        std::istringstream lines(a.output);
        std::string env, shim_preload;
        bool limit = false;
        for (std::string line; std::getline(lines, line);) {
          if (line.rfind("CUDA_DEVICE_", 0) != 0 && line.rfind("LD_PRELOAD=", 0) != 0) continue;
          env += (env.empty() ? "" : ", ") + line;
          limit = limit || line == "CUDA_DEVICE_MEMORY_LIMIT_0=8000m";
          if (line.rfind("LD_PRELOAD=", 0) == 0) shim_preload = line.substr(11);
        }
        const std::string refusal = a.shim_lines.substr(0, a.shim_lines.find('\n'));
        r.ours = fmt::format("{}{}; refusal: {}", env,
                             env.find("CUDA_DEVICE_SM_LIMIT") == std::string::npos
                                 ? " (no CUDA_DEVICE_SM_LIMIT: 0 cores asked, none injected)"
                                 : "",
                             refusal.empty() ? "none" : refusal);
        r.figures = {{"environment", env}, {"shim_lines", a.shim_lines}};
        const bool ok = limit && shim_preload == b.toolkit().shim && refusal.find("[gpuslice ") == 0 &&
                        refusal.find(" OOM ") != std::string::npos;
        r.status = ok ? RowStatus::Pass : RowStatus::Fail;
        if (!ok) r.why = "the limit, the preload or the shim's refusal is missing";
      });
}

}  // namespace gpuslice::realgpu::labs
