// `gpuslice realgpu labs`: the isolation labs of the seed documents, step by
// step, on whatever driver is here (the fake in CI, the real one on a GPU
// machine), each row with the seed's own figure beside ours.
//   000  HAMi v2.3 on an A40: a 20000 MiB slice (20000 MiB refused, 19500
//        granted), gpucores 30 and 60 under the force policy
//   001  HAMi v2.9 lab 3 on a T4: pods sharing one card, the 4000 MiB view,
//        512 MiB chunks until refused, neighbours unaffected, gpucores 30
//        with the force and default policies
//   002  the A6000 validation table: co-residency, view, memory cap, the
//        scheduler's per-card budget, the injected mechanism
//   overhead  what the shim adds per call and per training step (hardware)
// Memory rows are judged by what the seed's claim means, not by its bytes:
// the slice ends exactly at limit - the context footprint measured in the
// view, which differs per card and driver (see lab_rules.hpp).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gpuslice/realgpu/toolkit.hpp"

namespace gpuslice::realgpu {

enum class LabFramework { Auto, Torch, Probe };
enum class OverheadRows { Auto, On, Off };

struct LabsOptions {
  std::string lab = "all";  // all | 000 | 001 | 002 | overhead
  DriverChoice driver = DriverChoice::Auto;
  double seconds = 0;                           // each compute exercise; 0: 6 on the fake driver, 12 on a GPU
  LabFramework framework = LabFramework::Auto;  // Auto: PyTorch when `python -c "import torch"` works
  std::string python = "python3";
  OverheadRows overhead = OverheadRows::Auto;  // Auto: on a GPU only
  std::string compare_libvgpu;                 // HAMi-core's libvgpu.so, timed beside ours
  uint64_t launches = 1000000;                 // per launch-timing run
  uint64_t allocs = 200;                       // 256 MiB allocations per process and run
  // Before each lab: labs done, in all, and the next one's name (the CLI's
  // progress line). Empty: none.
  std::function<void(size_t done, size_t total, const std::string& next)> progress;
};

enum class RowStatus { Pass, Fail, Skip, Info };
const char* status_name(RowStatus s);

struct LabRow {
  std::string lab, step, title;
  std::string criteria;  // the pass rule, in words
  std::string seed;      // the seed document's figure
  std::string ours;      // what this run measured
  std::string context;   // the context footprint measured, where it matters
  RowStatus status = RowStatus::Fail;
  std::string why;       // for a failure or a skip
  std::string workload;  // what ran: gpuslice-probe, PyTorch x.y, ...
  std::string gpu, driver, driver_version, date;
  nlohmann::json figures = nlohmann::json::object();  // the numbers behind `ours`
};

struct LabHeading {
  std::string lab, title, seed_setting, our_setting;
};

struct LabsReport {
  std::string driver, date;
  std::vector<LabHeading> labs;
  std::vector<LabRow> rows;
  bool passed() const;  // no row failed
  nlohmann::json to_json() const;
  void print(std::ostream& out) const;  // one markdown table per lab
};

// Throws core::InputError for a bad option, std::runtime_error when the
// pieces (probe, shim, driver) cannot be found. A step that fails records
// FAIL with its error and the others go on; every child has a time limit.
LabsReport run_labs(const LabsOptions& options);

}  // namespace gpuslice::realgpu

namespace CLI {
class App;
}
namespace gpuslice::realgpu {
// Adds `labs` under `gpuslice realgpu`.
void register_labs_command(CLI::App& realgpu);
}  // namespace gpuslice::realgpu
