#include "gpuslice/realgpu/isolation_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <thread>

#include "gpuslice/realgpu/child_process.hpp"
#include "gpuslice/realgpu/clock.hpp"
#include "gpuslice/realgpu/nvml_reader.hpp"
#include "gpuslice/realgpu/region_file.hpp"
#include "gpuslice/realgpu/slice_region.hpp"

namespace gpuslice::realgpu {

using nlohmann::json;

namespace {

constexpr uint64_t MiB = 1ULL << 20;

json parse_line(const std::optional<std::string>& line) {
  if (!line) return json{{"error", "the probe printed nothing"}};
  try {
    return json::parse(*line);
  } catch (const json::exception&) {
    return json{{"error", "unreadable probe output: " + *line}};
  }
}

json parse_result(const ChildResult& r) {
  const auto nl = r.out.find('\n');
  json j =
      parse_line(nl == std::string::npos ? std::nullopt : std::optional<std::string>(r.out.substr(0, nl)));
  if (r.exit_code != 0 && !j.contains("error")) j["error"] = fmt::format("probe exited with {}", r.exit_code);
  return j;
}

std::string mib(uint64_t bytes) { return fmt::format("{} MiB", bytes / MiB); }

// One slice's accounting file as a node monitor reads it (HAMi's sums).
json monitor_reading(const std::string& slice, const std::string& path) {
  try {
    const RegionFile f(path, false);
    json devices = json::array();
    for (int d = 0; d < f.device_count(); ++d) {
      const auto m = f.memory(d);
      devices.push_back({{"uuid", f.uuid(d)},
                         {"memory_used_bytes", m.total},
                         {"memory_limit_bytes", f.memory_limit(d)},
                         {"context_bytes", m.context},
                         {"module_bytes", m.module},
                         {"buffer_bytes", m.buffer},
                         {"sm_util", f.sm_util(d)}});
    }
    return {{"slice", slice},
            {"devices", devices},
            {"processes", f.processes().size()},
            {"last_kernel_time", f.last_kernel_time()},
            {"utilization_switch", f.utilization_switch()},
            {"recent_kernel", f.recent_kernel()}};
  } catch (const RegionError& e) {
    return {{"slice", slice}, {"error", e.what()}};
  }
}

// "co-a: 4096 MiB of 8000 MiB, SM 0%, 1 process".
std::string monitor_text(const json& readings) {
  std::string out;
  for (const auto& r : readings) {
    if (!out.empty()) out += "; ";
    if (r.contains("error") || r["devices"].empty()) {
      out += fmt::format("{}: {}", r["slice"].get<std::string>(), r.value("error", "no device recorded"));
      continue;
    }
    const auto& d = r["devices"][0];
    const uint64_t limit = d["memory_limit_bytes"].get<uint64_t>();
    out += fmt::format("{}: {} of {}, SM {}%, {} process(es)", r["slice"].get<std::string>(),
                       mib(d["memory_used_bytes"].get<uint64_t>()), limit ? mib(limit) : "no limit",
                       d["sm_util"].get<uint64_t>(), r["processes"].get<size_t>());
  }
  return out;
}

class Checker {
 public:
  Checker(const CheckOptions& o) : o_(o), t_(locate_toolkit(o.driver)) {}
  ~Checker() {
    std::error_code ec;
    std::filesystem::remove_all(t_.scratch, ec);
  }

  CheckReport run() {
    CheckReport report;
    report.driver = t_.driver;
    const json card = parse_result(run_child({t_.probe, "info"}, driver_environment(t_)));
    if (card.contains("error"))
      throw std::runtime_error(
          fmt::format("the {} driver does not work here: {}", t_.driver, card["error"].get<std::string>()));
    report.device = card["view"];
    card_total_ = card["view"]["device_total_bytes"].get<uint64_t>();
    card_uuid_ = card["view"].value("uuid", "");
    const std::vector<std::pair<const char*, std::function<void()>>> exercises = {
        {"co-residency", [&] { co_residency(report); }},
        {"view", [&] { view(report); }},
        {"memory cap", [&] { cap_and_neighbour(report); }},
        {"/proc", [&] { proc_address(report); }},
        {"compute 30%", [&] { compute(report, 30, "force"); }},
        {"compute 60%", [&] { compute(report, 60, "force"); }},
        {"bursting", [&] { bursting(report); }},
        {"shared default", [&] { shared_default(report); }}};
    for (size_t i = 0; i < exercises.size(); ++i) {
      if (o_.progress) o_.progress(i, exercises.size(), exercises[i].first);
      exercises[i].second();
    }
    if (o_.progress) o_.progress(exercises.size(), exercises.size(), "");
    return report;
  }

 private:
  std::vector<std::string> probe(std::vector<std::string> args) {
    args.insert(args.begin(), t_.probe);
    return args;
  }
  SliceSpec slice(const std::string& name, int cores = 0, const std::string& policy = "force") {
    return SliceSpec{name, o_.slice_mib, cores, policy, ""};
  }
  std::string chunk() const { return std::to_string(o_.chunk_mib); }
  // Reads the named slices' files now, as a node monitor would.
  void watch(Exercise& e, std::initializer_list<std::string> slices) {
    for (const auto& s : slices) e.monitor.push_back(monitor_reading(s, slice_cache_path(t_, s)));
    e.monitor_view = monitor_text(e.monitor);
  }

  void co_residency(CheckReport& report) {
    Exercise e{"Co-residency", "two slices hold memory on one physical GPU at the same time"};
    const uint64_t half = o_.slice_mib / 2 / o_.chunk_mib * o_.chunk_mib;
    auto args =
        probe({"alloc", "--chunk-mib", chunk(), "--max-mib", std::to_string(half), "--hold-ms", "3000"});
    Child a(args, slice_environment(t_, slice("co-a")));
    Child b(args, slice_environment(t_, slice("co-b")));
    const json ja = parse_line(a.first_line(60)), jb = parse_line(b.first_line(60));
    const json card = parse_result(run_child({t_.probe, "info"}, driver_environment(t_)));  // while both hold
    watch(e, {"co-a", "co-b"});
    a.wait();
    b.wait();
    const bool both =
        ja.value("allocated_bytes", 0ULL) == half * MiB && jb.value("allocated_bytes", 0ULL) == half * MiB;
    const bool same_card = ja.contains("view") && jb.contains("view") &&
                           ja["view"].value("uuid", "a") == jb["view"].value("uuid", "b");
    e.passed = both && same_card;
    e.result = e.passed ? fmt::format("slice A and slice B each hold {} MiB on {} ({})", half,
                                      ja["view"].value("name", "?"), ja["view"].value("uuid", "?"))
                        : fmt::format("A: {}  B: {}", ja.dump(), jb.dump());
    e.evidence = {{"slice_a", ja}, {"slice_b", jb}, {"card_while_both_hold", card}};
    report.exercises.push_back(std::move(e));
  }

  void view(CheckReport& report) {
    Exercise e{"Virtualized device view",
               "inside the slice the card is as large as the slice (driver and NVML)"};
    const uint64_t hold = std::min<uint64_t>(1024, o_.slice_mib / 4);
    Child viewer(probe({"alloc", "--chunk-mib", std::to_string(hold), "--max-mib", std::to_string(hold),
                        "--hold-ms", "1000"}),
                 slice_environment(t_, slice("view")));
    json j = parse_line(viewer.first_line(60));
    watch(e, {"view"});
    if (const ChildResult r = viewer.wait(); r.exit_code != 0 && !j.contains("error"))
      j["error"] = fmt::format("probe exited with {}", r.exit_code);
    const uint64_t limit = o_.slice_mib * MiB;
    bool ok = !j.contains("error") && j.contains("view");
    std::string nvml_text = "no NVML";
    if (ok) {
      const auto& v = j["view"];
      ok = v["cuda_total_bytes"] == limit && v["device_total_bytes"] == limit &&
           v["cuda_free_bytes"].get<uint64_t>() <= limit - hold * MiB;
      if (v.contains("nvml")) {
        const auto& n = v["nvml"];
        const uint64_t used = n["used_bytes"].get<uint64_t>();
        ok = ok && n["total_bytes"] == limit && used >= hold * MiB && used <= limit &&
             n["free_bytes"].get<uint64_t>() == limit - used;
        nvml_text = fmt::format("NVML {} / {}", mib(used), mib(n["total_bytes"].get<uint64_t>()));
      }
      e.result =
          fmt::format("holding {} MiB: cuMemGetInfo {} free of {}, cuDeviceTotalMem {}, {} (card: {})", hold,
                      mib(v["cuda_free_bytes"].get<uint64_t>()), mib(v["cuda_total_bytes"].get<uint64_t>()),
                      mib(v["device_total_bytes"].get<uint64_t>()), nvml_text, mib(card_total_));
    } else {
      e.result = j.dump();
    }
    e.passed = ok;
    e.evidence = j;
    report.exercises.push_back(std::move(e));
  }

  void cap_and_neighbour(CheckReport& report) {
    Exercise cap{
        "Memory-cap enforcement",
        "allocation refused at the slice by the shim (CUDA_ERROR_OUT_OF_MEMORY), while the card has room"};
    Exercise neighbour{"Neighbour unaffected",
                       "another slice on the card allocates normally while one is at its cap"};
    Child capped(probe({"alloc", "--chunk-mib", chunk(), "--hold-ms", "3000"}),
                 slice_environment(t_, slice("cap")));
    const json jc = parse_line(capped.first_line(120));
    const uint64_t want = o_.slice_mib / 2 / o_.chunk_mib * o_.chunk_mib;
    Child neighbouring(
        probe({"alloc", "--chunk-mib", chunk(), "--max-mib", std::to_string(want), "--hold-ms", "1000"}),
        slice_environment(t_, slice("neighbour")));
    json jn = parse_line(neighbouring.first_line(120));
    watch(cap, {"cap"});
    watch(neighbour, {"neighbour"});
    if (const ChildResult r = neighbouring.wait(); r.exit_code != 0 && !jn.contains("error"))
      jn["error"] = fmt::format("probe exited with {}", r.exit_code);
    const ChildResult rc = capped.wait();
    const uint64_t limit = o_.slice_mib * MiB;
    const uint64_t got = jc.value("allocated_bytes", 0ULL);
    std::string oom = lines_containing(rc.err, " OOM ");
    oom = oom.substr(0, oom.find('\n'));  // the first refusal
    const std::string stopped = jc.value("stopped_by", "?");
    // The card had room: what the slice was refused fits in what the card
    // has beyond this slice's cap.
    cap.passed = stopped == "CUDA_ERROR_OUT_OF_MEMORY" && got <= limit &&
                 got + o_.chunk_mib * MiB > limit - 1024 * MiB && !oom.empty() &&
                 card_total_ > limit + o_.chunk_mib * MiB;
    cap.result =
        fmt::format("refused after {} ({}); shim: \"{}\"; card {}", mib(got), stopped, oom, mib(card_total_));
    cap.evidence = {{"probe", jc}, {"stderr", rc.err}};
    neighbour.passed = jn.value("allocated_bytes", 0ULL) == want * MiB;
    neighbour.result = neighbour.passed
                           ? fmt::format("the neighbour slice allocated {} MiB beside the capped one", want)
                           : jn.dump();
    neighbour.evidence = jn;
    report.exercises.push_back(std::move(cap));
    report.exercises.push_back(std::move(neighbour));
  }

  void proc_address(CheckReport& report) {
    Exercise e{
        "cuGetProcAddress path",
        "an application resolving the driver through cuGetProcAddress (CUDA runtime, PyTorch) is capped too"};
    Child prober(probe({"--proc-address", "alloc", "--chunk-mib", chunk(), "--hold-ms", "1000"}),
                 slice_environment(t_, slice("proc")));
    json j = parse_line(prober.first_line(120));
    watch(e, {"proc"});
    if (const ChildResult r = prober.wait(); r.exit_code != 0 && !j.contains("error"))
      j["error"] = fmt::format("probe exited with {}", r.exit_code);
    const uint64_t got = j.value("allocated_bytes", 0ULL);
    e.passed = j.value("resolved_by", "") == "cuGetProcAddress" &&
               j.value("stopped_by", "") == "CUDA_ERROR_OUT_OF_MEMORY" && got <= o_.slice_mib * MiB;
    e.result = fmt::format("resolved through cuGetProcAddress: refused after {} ({})", mib(got),
                           j.value("stopped_by", "?"));
    e.evidence = j;
    report.exercises.push_back(std::move(e));
  }

  // Spins in the slice, reading its file half-way through (the shim
  // writes the SM utilization it measures there every period).
  json spin(const SliceSpec& s, Exercise& e) {
    Child c(probe({"spin", "--seconds", fmt::format("{}", o_.compute_seconds), "--kernel-us", "2000"}),
            slice_environment(t_, s));
    std::this_thread::sleep_for(std::chrono::duration<double>(o_.compute_seconds * 0.6));
    watch(e, {s.name});
    return parse_result(c.wait());
  }

  void compute(CheckReport& report, int cores, const std::string& policy) {
    Exercise e{fmt::format("Compute cap {}% ({})", cores, policy),
               fmt::format("device share over {:g} s within 3 points of {}%", o_.compute_seconds, cores)};
    const json j = spin(slice(fmt::format("compute{}", cores), cores, policy), e);
    const double share = j.value("share", -1.0);
    e.passed = share >= 0 && std::abs(share * 100 - cores) <= 3.0;
    e.result = share >= 0 ? fmt::format("{:.1f}% of the device ({} kernels of 2 ms in {:.1f} s)", share * 100,
                                        j.value("kernels", 0), j.value("wall_seconds", 0.0))
                          : j.dump();
    e.evidence = j;
    report.exercises.push_back(std::move(e));
  }

  void bursting(CheckReport& report) {
    Exercise e{"Default policy: bursting when alone",
               "with GPU_CORE_UTILIZATION_POLICY=default and 30% cores, a slice alone on the card uses it "
               "fully (>= 90%)"};
    const json j = spin(slice("burst", 30, "default"), e);
    const double share = j.value("share", -1.0);
    e.passed = share >= 0.9;
    e.result = share >= 0 ? fmt::format("{:.1f}% of the device while alone", share * 100) : j.dump();
    e.evidence = j;
    report.exercises.push_back(std::move(e));
  }

  // Two slices time-slice the card, so a spin kernel that the driver
  // suspends for the neighbour still ends 2 ms after it started (it waits on
  // the global timer): each probe's kernels x 2 ms counts the neighbour's
  // turns too, and on an H100 read 37 % and 33 % while the card was 60 %
  // busy. So this one is judged from outside the slices, as nvidia-smi or
  // DCGM on the host sees the card: NVML's device utilisation, four samples
  // a second after the controller's first seconds. Both slices held to 30 %
  // keep it 60 % busy; one that bursts takes it towards 100 %.
  void shared_default(CheckReport& report) {
    Exercise e{
        "Default policy: throttled when shared",
        fmt::format("two 30% slices sharing the card under the default policy keep it 60% busy (within 5 "
                    "points), as NVML sees the device from outside the slices over {:g} s",
                    o_.compute_seconds)};
    auto args = probe({"spin", "--seconds", fmt::format("{}", o_.compute_seconds), "--kernel-us", "2000"});
    std::optional<NvmlReader> nvml;
    std::string nvml_error;
    try {
      nvml.emplace(host_nvml_library(t_));
      nvml->initialise(host_nvml_settings(t_, 250));
    } catch (const std::exception& ex) {
      nvml_error = ex.what();
      nvml.reset();
    }
    auto env_a = slice_environment(t_, slice("shared-a", 30, "default"));
    auto env_b = slice_environment(t_, slice("shared-b", 30, "default"));
    Child a(args, env_a);
    Child b(args, env_b);
    const double start = monotonic_seconds(), settle = std::min(2.0, o_.compute_seconds * 0.3);
    std::vector<unsigned> samples;
    bool watched = false;
    for (double at = start + settle; at < start + o_.compute_seconds - 0.2; at += 0.25) {
      while (monotonic_seconds() < at) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (!watched && at >= start + o_.compute_seconds * 0.6) {
        watch(e, {"shared-a", "shared-b"});
        watched = true;
      }
      if (a.exited() || b.exited()) break;
      if (const auto u = nvml ? nvml->utilization(card_uuid_) : std::nullopt) samples.push_back(*u);
    }
    if (!watched) watch(e, {"shared-a", "shared-b"});
    const json ja = parse_result(a.wait()), jb = parse_result(b.wait());
    const double sa = ja.value("share", -1.0), sb = jb.value("share", -1.0);
    const double mean = samples.empty() ? -1
                                        : std::accumulate(samples.begin(), samples.end(), 0.0) /
                                              static_cast<double>(samples.size());
    e.passed = sa >= 0 && sb >= 0 && mean >= 0 && std::abs(mean - 60) <= 5;
    e.result = samples.empty()
                   ? fmt::format("no NVML device utilisation to judge by ({})",
                                 nvml_error.empty() ? "no samples" : nvml_error)
                   : fmt::format(
                         "the card {:.1f}% busy (mean of {} samples, {}-{}%); the probes' own counts, "
                         "which include the neighbour's turns: slice A {:.1f}%, slice B {:.1f}%",
                         mean, samples.size(), *std::min_element(samples.begin(), samples.end()),
                         *std::max_element(samples.begin(), samples.end()), sa * 100, sb * 100);
    e.evidence = {{"slice_a", ja}, {"slice_b", jb}, {"device_utilization_percent", samples}};
    report.exercises.push_back(std::move(e));
  }

  CheckOptions o_;
  Toolkit t_;
  uint64_t card_total_ = 0;
  std::string card_uuid_;
};

}  // namespace

bool CheckReport::passed() const {
  for (const auto& e : exercises)
    if (!e.passed) return false;
  return !exercises.empty();
}

json CheckReport::to_json() const {
  json out = {{"driver", driver}, {"device", device}, {"passed", passed()}};
  out["exercises"] = json::array();
  for (size_t i = 0; i < exercises.size(); ++i) {
    const Exercise& e = exercises[i];
    out["exercises"].push_back({{"number", i + 1},
                                {"name", e.name},
                                {"criteria", e.criteria},
                                {"passed", e.passed},
                                {"result", e.result},
                                {"evidence", e.evidence},
                                {"monitor", e.monitor}});
  }
  return out;
}

void CheckReport::print(std::ostream& out) const {
  out << fmt::format("gpuslice realgpu check: {} driver, {} ({})\n", driver, device.value("name", "?"),
                     mib(device.value("device_total_bytes", 0ULL)));
  out << "| # | Exercise | Pass criteria | Result | Monitor's view |\n|---|---|---|---|---|\n";
  size_t ok = 0;
  for (size_t i = 0; i < exercises.size(); ++i) {
    const Exercise& e = exercises[i];
    out << fmt::format("| {} | {} | {} | {} {} | {} |\n", i + 1, e.name, e.criteria,
                       e.passed ? "PASS" : "FAIL", e.result, e.monitor_view);
    ok += e.passed;
  }
  out << fmt::format("{} of {} exercises passed\n", ok, exercises.size());
}

CheckReport run_isolation_check(const CheckOptions& options) {
  Checker checker(options);
  return checker.run();
}

}  // namespace gpuslice::realgpu
