// What the labs' steps share (internal to `gpuslice realgpu labs`): the
// toolkit and the card, the workloads a step runs in a slice (PyTorch when it
// is installed and the driver is real, else the probe with the same pattern),
// NVML sampled from outside the slice, and the rows of the report.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/realgpu/lab_rules.hpp"
#include "gpuslice/realgpu/labs.hpp"
#include "gpuslice/realgpu/local_run.hpp"
#include "gpuslice/realgpu/nvml_reader.hpp"
#include "gpuslice/realgpu/toolkit.hpp"

namespace gpuslice::realgpu::labs {

// The seed's card as the fake driver models it (ignored on a real GPU): its
// name, memory, SMs and the context footprint the seed's own figures show.
struct SeedCard {
  std::string name;
  uint64_t mib = 0;
  int sms = 0;
  uint64_t context_mib = 0;
};

struct Card {
  std::string name, uuid;
  uint64_t total_bytes = 0;
  uint64_t mib() const { return total_bytes / kMiB; }
};

struct AllocationRun {
  AllocationTrial trial;
  std::string app_error;  // what the application was told
  std::string shim_line;  // the shim's refusal line, as printed
  nlohmann::json evidence;
};

// Seconds of a compute exercise left out of its mean: the controller's
// first measurements and its settling (a second or two on the fake driver).
inline constexpr int kSettleSeconds = 2;

struct ComputeRun {
  double step_seconds = 0;  // median training step (PyTorch) or one batch of kernels (probe)
  int steps = 0;
  std::vector<unsigned> samples;  // NVML device utilisation, one a second, after kSettleSeconds
  double mean_util = 0;           // NaN without samples
  nlohmann::json evidence;
  std::string summary() const;  // "30.2% (11 samples, 12-48), step 0.146 s"
};

struct ViewRun {
  std::string label;  // whose view, when a row shows several
  uint64_t cuda_total = 0, cuda_free = 0, device_total = 0;
  std::optional<uint64_t> nvml_total, nvml_used;
  std::optional<std::pair<uint64_t, uint64_t>> smi;  // nvidia-smi's "<used>MiB / <total>MiB"
  std::string smi_note;                              // why nvidia-smi did not run
  nlohmann::json evidence;
};

// The probe's `info` object read as a view.
ViewRun read_view(const nlohmann::json& probe_info);

class Bench {
 public:
  explicit Bench(const LabsOptions& options);
  ~Bench();
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  // Starts a lab: on the fake driver, models `card`; reads the card here.
  void begin_lab(const LabHeading& heading, const SeedCard& card);
  // A row of the lab begun last.
  LabRow row(std::string step, std::string title, std::string criteria, std::string seed) const;
  // A lab that could not start (no driver, no card): one FAIL row says why.
  void lab_failed(const std::string& lab, const std::string& error);
  // Runs one step: `body` fills the row (figures, status); an exception
  // becomes FAIL with its message, and the next step goes on.
  void step(LabRow row, const std::function<void(LabRow&)>& body);

  bool fake() const { return toolkit_.driver == "fake"; }
  bool torch() const { return !torch_version_.empty(); }
  const Card& card() const { return card_; }
  const LabsOptions& options() const { return options_; }
  const Toolkit& toolkit() const { return toolkit_; }
  std::string workload() const;  // "PyTorch 2.x" or "gpuslice-probe"
  double seconds() const;        // each compute exercise

  // A slice as HAMi's device plugin injects it, on this lab's card.
  std::map<std::string, std::string> slice(const std::string& name, uint64_t memory_mib, int cores = 0,
                                           const std::string& policy = "force") const;
  std::map<std::string, std::string> no_slice() const { return driver_environment(toolkit_); }

  // One allocation of `request_mib`, or chunks of it until refused (at most
  // twice the slice), in a fresh slice of `slice_mib`.
  AllocationRun allocate(uint64_t slice_mib, uint64_t request_mib, bool chunked);
  // The same, as one of run_locally's pods: the pod's command, and its run read back.
  std::vector<std::string> allocation_command(uint64_t slice_mib, uint64_t request_mib, bool chunked) const;
  AllocationRun read_allocation(uint64_t slice_mib, uint64_t request_mib, bool chunked,
                                const std::string& stdout_text, const std::string& stderr_text) const;
  // The training-like loop for `seconds()` in `env`, utilisation sampled
  // each second from NVML outside the slice.
  ComputeRun train(const std::map<std::string, std::string>& env);
  // The same loop with no shim, measured once (per lab on the fake) and reused.
  const ComputeRun& bare();
  // The view inside a fresh slice: the probe's, and nvidia-smi's when it is here.
  ViewRun view(uint64_t slice_mib);

  LabsReport take_report();

 private:
  void start();  // the framework, the scripts, NVML
  std::string write_script(const char* name, std::string_view text) const;
  double limit_for(double seconds) const { return seconds + (torch() ? 180 : 60); }

  LabsOptions options_;
  Toolkit toolkit_;
  std::unique_ptr<NvmlReader> nvml_;
  std::string nvml_error_;
  std::string torch_version_, python_;
  std::string alloc_script_, train_script_;
  Card card_;
  std::string driver_version_;
  std::optional<ComputeRun> bare_;
  LabsReport report_;
};

// A lab's pods placed and run once on this machine (gpuslice realgpu run's
// runner), read by several steps. A card too small for them makes those
// steps SKIP; a run that failed makes them FAIL with its error.
class LabPods {
 public:
  LabPods(const Bench& bench, const LocalScenario& pods, uint64_t card_needs_mib, double timeout_seconds);
  // The run, or nullptr after marking `row` SKIP; throws the run's error.
  const RunReport* for_step(LabRow& row) const;
  // A pod that was placed (throws naming it otherwise).
  const PodOutcome& placed(size_t index) const;

 private:
  const Bench& bench_;
  uint64_t needs_mib_;
  std::optional<RunReport> run_;
  std::string error_;
};

// Filling rows (labs_rows.cpp): each sets ours, context, figures and the status.
LabRow make_row(std::string lab, std::string step, std::string title, std::string criteria, std::string seed);
// SKIP (and true) when the card cannot hold `mib` with room to spare.
bool skip_unless_card_holds(LabRow& row, const Card& card, uint64_t mib);
void fill_view(LabRow& row, const std::vector<ViewRun>& views, uint64_t slice_mib);
void fill_allocation(LabRow& row, const AllocationRun& run);
// Within kShareTolerance points of the cap.
inline constexpr double kShareTolerance = 5;
void fill_share(LabRow& row, const ComputeRun& run, int cap_percent);

void lab_000(Bench& bench);
void lab_001(Bench& bench);
void lab_002(Bench& bench);
void lab_overhead(Bench& bench);

}  // namespace gpuslice::realgpu::labs
