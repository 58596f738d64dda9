#include "gpuslice/sim/memory_estimate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "gpuslice/cli/memory_guard.hpp"

namespace gpuslice::sim {

namespace {
// Measured with bench/memory_per_pod.sh (peak RSS, `/usr/bin/time -v`, of
// `gpuslice simulate` on generated scenarios, RelWithDebInfo + mimalloc):
// the slope between 200,000 and 400,000 pods on 100 nodes, and between
// 1,000 and 5,000 nodes at 20,000 pods. On 2026-11-28: 1,365 bytes a pod
// with --no-card-use, 1,458 with the card-use log, 1,521 with most pods
// waiting then refused (a saturated fleet); 4,259 bytes a node; 35 MiB at
// the origin. Rounded up: the guard must not let through a run that then
// runs out.
constexpr uint64_t kBytesPerPod = 1400;        // stream, records, events, timeline
constexpr uint64_t kBytesPerPodCardUse = 150;  // card_use.csv's rows (a row per change)
constexpr uint64_t kBytesPerNode = 5 * 1024;   // a node, its cards and the core's caches
constexpr uint64_t kBaseBytes = 64ull << 20;   // the binary, the allocator's arenas, buffers
// Reading a dump: peak RSS of `simulate --snapshot` over the file's size,
// `kube_dump --nodes 2500` dumps (docs/simulator.md#reading-large-clusters):
// 1.58x for JSON (117.2 MB), 2.77x for YAML (64.9 MB) with the run's own
// 35 MiB base in it.
constexpr double kReadBytesPerFileByte = 2.5;
}  // namespace

RunSize run_size(const Scenario& s) {
  RunSize size;
  size.nodes = s.fleet.size();
  for (const auto& g : s.node_groups) size.nodes += static_cast<size_t>(std::max(0, g.max));
  if (s.snapshot) size.pods += s.snapshot->starting.size() + s.snapshot->queue.size();
  if (s.generator) {
    size.pods += s.generator->pods;
  } else if (s.openb_pods_csv) {
    const size_t rows =
        static_cast<size_t>(std::count(s.openb_pods_csv->begin(), s.openb_pods_csv->end(), '\n'));
    if (s.openb.diurnal)
      size.pods += static_cast<size_t>(s.openb.diurnal->rate.rate_per_s * s.openb.diurnal->days * 86400);
    else
      size.pods += static_cast<size_t>(static_cast<double>(rows) * std::max(1.0, s.openb.tune));
  } else {
    for (const auto& p : s.pods) size.pods += static_cast<size_t>(std::max(0, p.repeat));
  }
  return size;
}

uint64_t run_memory_bytes(const RunSize& size, bool card_use) {
  const uint64_t per_pod = kBytesPerPod + (card_use ? kBytesPerPodCardUse : 0);
  return kBaseBytes + per_pod * size.pods + kBytesPerNode * size.nodes;
}

void guard_run_memory(const RunSize& size, bool card_use, size_t runs_at_once) {
  const uint64_t one = run_memory_bytes(size, card_use);
  const uint64_t estimate = one + (one - kBaseBytes) * (std::max<size_t>(runs_at_once, 1) - 1);
  std::string what = fmt::format("a run of {} pods on {} nodes", size.pods, size.nodes);
  if (runs_at_once > 1) what += fmt::format(", {} runs at once", runs_at_once);
  cli::guard_memory(what, estimate,
                    "fewer pods (generator.pods, pods' repeat, tune), fewer nodes" +
                        std::string(card_use ? ", --no-card-use" : "") +
                        (runs_at_once > 1 ? ", fewer parallel runs" : ""));
}

void guard_read_memory(const std::string& path) {
  std::error_code error;
  const uintmax_t file = std::filesystem::file_size(path, error);
  if (error) return;  // the reader names a missing or unreadable file
  const auto estimate = kBaseBytes + static_cast<uint64_t>(static_cast<double>(file) * kReadBytesPerFileByte);
  cli::guard_memory(fmt::format("reading '{}' ({})", path, cli::size_text(file)), estimate,
                    "a smaller dump, e.g. fewer namespaces or only nodes and pods");
}

}  // namespace gpuslice::sim
