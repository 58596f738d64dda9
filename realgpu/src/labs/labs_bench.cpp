#include "labs_bench.hpp"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/realgpu/child_process.hpp"
#include "gpuslice/realgpu/clock.hpp"
#include "gpuslice/realgpu/labs_scripts.hpp"

namespace gpuslice::realgpu::labs {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The probe's stand-in for a training step: a batch of 4 kernels of 2 ms.
constexpr int kProbeBatch = 4;
constexpr int kProbeKernelUs = 2000;

// The last line of `text` that is a JSON object (scripts print progress first).
json last_json(const std::string& text) {
  std::istringstream in(text);
  json found;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '{') continue;
    try {
      found = json::parse(line);
    } catch (const json::exception&) {
    }
  }
  return found;
}

std::string tail(const std::string& text, size_t max_chars = 600) {
  return text.size() <= max_chars ? text : "..." + text.substr(text.size() - max_chars);
}

std::string first_line_with(const std::string& text, std::string_view needle) {
  const std::string lines = lines_containing(text, needle);
  return lines.substr(0, lines.find('\n'));
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::optional<std::string> on_path(const std::string& program) {
  const char* path = getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return std::nullopt;
}

}  // namespace

std::string ComputeRun::summary() const {
  if (samples.empty()) return fmt::format("no utilisation samples; step {:.3f} s", step_seconds);
  const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  return fmt::format("{:.1f}% mean of {} samples ({}-{}%), step {:.3f} s", mean_util, samples.size(), *lo,
                     *hi, step_seconds);
}

Bench::Bench(const LabsOptions& options) : options_(options), toolkit_(locate_toolkit(options.driver)) {
  try {
    start();
  } catch (...) {  // no destructor runs for a half-made bench: clean up here
    std::error_code ec;
    fs::remove_all(toolkit_.scratch, ec);
    throw;
  }
}

void Bench::start() {
  const LabsOptions& options = options_;
  report_.driver = toolkit_.driver;
  report_.date = utc_now();
  python_ = options.python;
  if (options.framework == LabFramework::Torch && fake())
    throw core::InputError("command line", 0, "--framework",
                           "torch needs a real GPU: the fake driver runs no framework");
  if (options.framework != LabFramework::Probe && !fake()) {
    const ChildResult r = run_child(
        {"/usr/bin/env", python_, "-c",
         "import sys, torch; print(torch.__version__); sys.exit(0 if torch.cuda.is_available() else 4)"},
        no_slice(), 180);
    if (r.exit_code == 0) {
      torch_version_ = r.out.substr(0, r.out.find('\n'));
    } else if (options.framework == LabFramework::Torch) {
      throw std::runtime_error(fmt::format("--framework torch: `{} -c \"import torch\"` failed (exit {}): {}",
                                           python_, r.exit_code, tail(r.err, 300)));
    }
  }
  if (torch()) {
    alloc_script_ = write_script("labs_alloc.py", labs_scripts::alloc());
    train_script_ = write_script("labs_train.py", labs_scripts::train());
  }
  try {
    nvml_ = std::make_unique<NvmlReader>(host_nvml_library(toolkit_));
  } catch (const std::exception& e) {
    nvml_error_ = e.what();
  }
}

Bench::~Bench() {
  std::error_code ec;
  fs::remove_all(toolkit_.scratch, ec);
}

std::string Bench::write_script(const char* name, std::string_view text) const {
  const std::string path = toolkit_.scratch + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string Bench::workload() const { return torch() ? "PyTorch " + torch_version_ : "gpuslice-probe"; }

double Bench::seconds() const {
  if (options_.seconds > 0) return options_.seconds;
  // Seven samples kept on the fake: a second the 2-core CI machine steals
  // from the controller moves a mean of three by several points.
  return fake() ? 10 : 12;
}

void Bench::begin_lab(const LabHeading& heading, const SeedCard& seed) {
  if (fake()) bare_.reset();  // each lab models its own card; a real one stays the same
  if (fake())
    toolkit_.fake_settings = {{"GPUSLICE_FAKE_GPUS", fmt::format("{}:{}:{}", seed.name, seed.mib, seed.sms)},
                              {"GPUSLICE_FAKE_CONTEXT_MIB", std::to_string(seed.context_mib)}};
  const ChildResult r = run_child({toolkit_.probe, "info"}, no_slice(), 120);
  const json info = last_json(r.out);
  if (!info.contains("view"))
    throw std::runtime_error(fmt::format("the {} driver does not work here: {}{}", toolkit_.driver,
                                         r.timed_out ? "timed out " : "", tail(r.out + r.err, 400)));
  card_ = Card{info["view"].value("name", "?"), info["view"].value("uuid", ""),
               info["view"].value("device_total_bytes", uint64_t{0})};
  driver_version_ = "?";
  if (nvml_) {
    try {
      // One sample a second should cover that second (the real NVML's own
      // period is 1/6 s to 1 s, depending on the product).
      nvml_->initialise(host_nvml_settings(toolkit_, 1000));
      driver_version_ = nvml_->driver_version();
    } catch (const std::exception& e) {
      nvml_error_ = e.what();
      nvml_.reset();
    }
  }
  LabHeading h = heading;
  const std::string context =
      seed.context_mib == 0
          ? std::string("no context footprint")
          : fmt::format("the {} MiB context footprint the seed's figures show", seed.context_mib);
  h.our_setting = fake() ? fmt::format(
                               "fake driver modelling {} ({} MiB, {} SMs) with {}; figures come from the "
                               "fake's model; workload: {}",
                               seed.name, seed.mib, seed.sms, context, workload())
                         : fmt::format("{} ({} MiB), driver {}; workload: {}", card_.name, card_.mib(),
                                       driver_version_, workload());
  report_.labs.push_back(std::move(h));
}

LabRow Bench::row(std::string step, std::string title, std::string criteria, std::string seed) const {
  return make_row(report_.labs.empty() ? "?" : report_.labs.back().lab, std::move(step), std::move(title),
                  std::move(criteria), std::move(seed));
}

LabPods::LabPods(const Bench& bench, const LocalScenario& pods, uint64_t card_needs_mib,
                 double timeout_seconds)
    : bench_(bench), needs_mib_(card_needs_mib) {
  if (bench.card().mib() <= card_needs_mib) return;
  try {
    run_ = run_locally(pods, bench.toolkit(), timeout_seconds);
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

const RunReport* LabPods::for_step(LabRow& row) const {
  if (run_) return &*run_;
  if (!error_.empty()) throw std::runtime_error(error_);
  skip_unless_card_holds(row, bench_.card(), needs_mib_);
  return nullptr;
}

const PodOutcome& LabPods::placed(size_t index) const {
  const PodOutcome& p = run_.value().pods.at(index);
  if (!p.placed) throw std::runtime_error(p.name + " was not placed: " + p.reason);
  return p;
}

void Bench::lab_failed(const std::string& lab, const std::string& error) {
  if (report_.labs.empty() || report_.labs.back().lab != lab)
    report_.labs.push_back({lab, "could not start", "-", "-"});
  LabRow row = make_row(lab, "0", "Lab setup", "the driver answers and the card can be read", "-");
  row.why = error;
  row.status = RowStatus::Fail;
  row.driver = toolkit_.driver;
  row.date = report_.date;
  std::cerr << fmt::format("labs: {}: could not start: {}\n", lab, error);
  report_.rows.push_back(std::move(row));
}

void Bench::step(LabRow row, const std::function<void(LabRow&)>& body) {
  row.gpu = card_.name;
  row.driver = toolkit_.driver;
  row.driver_version = driver_version_;
  row.date = report_.date;
  if (row.workload.empty()) row.workload = workload();
  const double started = monotonic_seconds();
  try {
    body(row);
  } catch (const std::exception& e) {
    row.status = RowStatus::Fail;
    row.why = e.what();
  }
  std::cerr << fmt::format("labs: {}.{} {}: {} ({:.1f} s){}\n", row.lab, row.step, row.title,
                           status_name(row.status), monotonic_seconds() - started,
                           row.why.empty() ? "" : " - " + row.why);
  report_.rows.push_back(std::move(row));
}

std::map<std::string, std::string> Bench::slice(const std::string& name, uint64_t memory_mib, int cores,
                                                const std::string& policy) const {
  static int serial = 0;  // a fresh accounting file for every slice
  return slice_environment(toolkit_,
                           SliceSpec{fmt::format("{}-{}", name, ++serial), memory_mib, cores, policy, ""});
}

std::vector<std::string> Bench::allocation_command(uint64_t slice_mib, uint64_t request_mib,
                                                   bool chunked) const {
  const std::string stop = std::to_string(chunked ? 2 * slice_mib : request_mib);
  if (torch())
    return {"/usr/bin/env",
            python_,
            alloc_script_,
            chunked ? "chunks" : "once",
            std::to_string(request_mib),
            stop};
  return {toolkit_.probe, "alloc", "--chunk-mib", std::to_string(request_mib), "--max-mib", stop};
}

AllocationRun Bench::read_allocation(uint64_t slice_mib, uint64_t request_mib, bool chunked,
                                     const std::string& out, const std::string& err) const {
  const json j = last_json(out);
  if (!j.contains("allocated_bytes") && !j.contains("granted_mib"))
    throw std::runtime_error("the workload printed no result: " + tail(out + err));
  AllocationRun run;
  AllocationTrial& t = run.trial;
  t.limit = slice_mib * kMiB;
  t.request = request_mib * kMiB;
  t.chunked = chunked;
  if (j.contains("granted_mib")) {  // PyTorch
    t.granted = j["granted_mib"].get<uint64_t>() * kMiB;
    const uint64_t total = j["total_bytes"].get<uint64_t>(), free = j["free_before_bytes"].get<uint64_t>();
    t.context = total > free ? total - free : 0;
    run.app_error = j.value("error", "");
    std::string lower = run.app_error;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    t.refused = lower.find("out of memory") != std::string::npos;
  } else {  // the probe: its view after allocating
    t.granted = j["allocated_bytes"].get<uint64_t>();
    const json& v = j["view"];
    const uint64_t total = v.value("cuda_total_bytes", uint64_t{0}),
                   free = v.value("cuda_free_bytes", uint64_t{0});
    t.context = total > free + t.granted ? total - free - t.granted : 0;
    run.app_error = j.value("stopped_by", "");
    t.refused = run.app_error == "CUDA_ERROR_OUT_OF_MEMORY";
  }
  t.oom = find_oom_line(err);
  run.shim_line = first_line_with(err, " OOM ");
  run.evidence = {{"result", j}, {"shim", lines_containing(err, "[gpuslice ")}};
  return run;
}

AllocationRun Bench::allocate(uint64_t slice_mib, uint64_t request_mib, bool chunked) {
  const ChildResult r =
      run_child(allocation_command(slice_mib, request_mib, chunked), slice("alloc", slice_mib), limit_for(0));
  if (r.timed_out) throw std::runtime_error("the allocation did not finish in time: killed");
  return read_allocation(slice_mib, request_mib, chunked, r.out, r.err);
}

ComputeRun Bench::train(const std::map<std::string, std::string>& env) {
  const double seconds = this->seconds();
  std::vector<std::string> argv =
      torch() ? std::vector<std::string>{"/usr/bin/env", python_, train_script_, fmt::format("{}", seconds),
                                         "4096"}
              : std::vector<std::string>{toolkit_.probe, "spin",
                                         "--seconds",    fmt::format("{}", seconds),
                                         "--kernel-us",  std::to_string(kProbeKernelUs),
                                         "--batch",      std::to_string(kProbeBatch)};
  Child child(argv, env);
  double start = child.started_at();
  if (torch()) {  // the timed loop starts after the import and the warm-up steps
    const auto line = child.first_line(limit_for(seconds) - seconds);
    if (!line || line->find("started") == std::string::npos) {
      const ChildResult r = child.wait_for(1);
      throw std::runtime_error("the training loop did not start: " + tail(r.out + r.err));
    }
    start = monotonic_seconds();
  }
  // One sample a second, like nvidia-smi or DCGM on the host; the first
  // seconds, while the controller settles, are left out (the seeds averaged
  // over minutes, where they weigh nothing; the evidence keeps them).
  ComputeRun run;
  std::vector<unsigned> all;
  for (int k = 1; k <= seconds - 0.2; ++k) {
    while (monotonic_seconds() < start + k && !child.exited())
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (child.exited()) break;
    const auto u = nvml_ ? nvml_->utilization(card_.uuid) : std::nullopt;
    if (!u) continue;
    all.push_back(*u);
    if (k > kSettleSeconds) run.samples.push_back(*u);
  }
  const ChildResult r = child.wait_for(limit_for(seconds));
  if (r.timed_out)
    throw std::runtime_error(fmt::format("the workload ran past {:.0f} s: killed", limit_for(seconds)));
  const json j = last_json(r.out);
  if (torch()) {
    if (!j.contains("median_step_s"))
      throw std::runtime_error("the training loop failed: " + tail(r.out + r.err));
    run.step_seconds = j["median_step_s"].get<double>();
    run.steps = j["steps"].get<int>();
  } else {
    if (!j.contains("kernels") || j["kernels"].get<double>() <= 0)
      throw std::runtime_error("the probe's spin failed: " + tail(r.out + r.err));
    run.steps = static_cast<int>(j["kernels"].get<double>() / kProbeBatch);
    run.step_seconds = j["wall_seconds"].get<double>() * kProbeBatch / j["kernels"].get<double>();
  }
  run.mean_util = run.samples.empty() ? std::nan("")
                                      : std::accumulate(run.samples.begin(), run.samples.end(), 0.0) /
                                            static_cast<double>(run.samples.size());
  run.evidence = {{"samples_percent", all},
                  {"warm_up_samples_dropped", all.size() - run.samples.size()},
                  {"result", j},
                  {"shim", lines_containing(r.err, "[gpuslice ")}};
  if (!nvml_) run.evidence["nvml"] = nvml_error_;
  return run;
}

const ComputeRun& Bench::bare() {
  if (!bare_) bare_ = train(no_slice());
  return *bare_;
}

ViewRun read_view(const json& j) {
  if (!j.contains("view")) throw std::runtime_error("the probe's info failed: " + j.dump());
  ViewRun v;
  const json& view = j["view"];
  v.cuda_total = view.value("cuda_total_bytes", uint64_t{0});
  v.cuda_free = view.value("cuda_free_bytes", uint64_t{0});
  v.device_total = view.value("device_total_bytes", uint64_t{0});
  if (view.contains("nvml")) {
    v.nvml_total = view["nvml"].value("total_bytes", uint64_t{0});
    v.nvml_used = view["nvml"].value("used_bytes", uint64_t{0});
  }
  v.evidence = {{"probe", j}};
  return v;
}

ViewRun Bench::view(uint64_t slice_mib) {
  const ChildResult r = run_child({toolkit_.probe, "info"}, slice("view", slice_mib), 120);
  const json j = last_json(r.out);
  if (!j.contains("view")) throw std::runtime_error("the probe's info failed: " + tail(r.out + r.err));
  ViewRun v = read_view(j);
  if (fake()) {
    v.smi_note = "nvidia-smi not run: the fake driver has none";
    return v;
  }
  const auto smi = on_path("nvidia-smi");
  if (!smi) {
    v.smi_note = "nvidia-smi is not on PATH";
    return v;
  }
  std::vector<std::string> argv{*smi};
  if (!card_.uuid.empty()) argv.insert(argv.end(), {"-i", card_.uuid});
  const ChildResult s = run_child(argv, slice("view-smi", slice_mib), 60);
  static const std::regex kMemory(R"((\d+)MiB\s*/\s*(\d+)MiB)");
  std::smatch m;
  if (std::regex_search(s.out, m, kMemory))
    v.smi = std::make_pair(std::stoull(m[1].str()), std::stoull(m[2].str()));
  else
    v.smi_note = fmt::format("nvidia-smi printed no memory line (exit {})", s.exit_code);
  v.evidence["nvidia_smi"] = tail(s.out, 4000);
  return v;
}

LabsReport Bench::take_report() { return std::move(report_); }

}  // namespace gpuslice::realgpu::labs
