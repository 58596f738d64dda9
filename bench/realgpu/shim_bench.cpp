// What the shim adds to the calls it intercepts: cuLaunchKernel and
// cuMemAlloc (256 MiB, with its free), without and with the shim, one
// process alone and eight processes allocating at once (HAMi-core's PR #155
// measured 12.7 ms with the shim vs 0.59 ms without for that last case).
// Runs gpuslice-probe's `time` command on the driver here (fake unless a
// real one loads; --driver to choose).
//   shim_bench [--driver auto|fake|real] [--launches N] [--allocs N]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "gpuslice/realgpu/child_process.hpp"
#include "gpuslice/realgpu/toolkit.hpp"

using namespace gpuslice::realgpu;
using nlohmann::json;

namespace {

// Runs `processes` probes at once; returns the mean of their ns_per_op.
double timed(const Toolkit& t, bool shim, int processes, const std::vector<std::string>& args, int cores) {
  std::vector<std::unique_ptr<Child>> children;
  for (int i = 0; i < processes; ++i) {
    std::vector<std::string> argv{t.probe};
    argv.insert(argv.end(), args.begin(), args.end());
    // With the shim: a slice with a memory limit (so every allocation goes
    // through the shared accounting) on the whole card; `cores` > 0 adds a
    // compute limit.
    auto env = shim ? slice_environment(t, SliceSpec{"bench", 1 << 20, cores, "default", ""})
                    : driver_environment(t);
    children.push_back(std::make_unique<Child>(argv, env));
  }
  double sum = 0;
  for (auto& c : children) {
    const ChildResult r = c->wait();
    const json j = json::parse(r.out.substr(0, r.out.find('\n')));
    if (!j.contains("ns_per_op")) throw std::runtime_error("probe failed: " + r.out + r.err);
    sum += j["ns_per_op"].get<double>();
  }
  return sum / processes;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"shim_bench: added cost of the shim per intercepted call"};
  std::string driver = "auto";
  uint64_t launches = 500000, allocs = 20000;
  app.add_option("--driver", driver, "auto, fake or real");
  app.add_option("--launches", launches, "launches per process");
  app.add_option("--allocs", allocs, "256 MiB allocations per process");
  CLI11_PARSE(app, argc, argv);
  const Toolkit t = locate_toolkit(driver == "real"   ? DriverChoice::Real
                                   : driver == "fake" ? DriverChoice::Fake
                                                      : DriverChoice::Auto);
  const auto launch = std::vector<std::string>{"time", "--op", "launch", "--count", std::to_string(launches)};
  const auto alloc = std::vector<std::string>{
      "time", "--op", "alloc", "--count", std::to_string(allocs), "--chunk-mib", "256"};
  std::cout << fmt::format("shim_bench on the {} driver (best of 3 runs each)\n", t.driver);
  std::cout << fmt::format("{:<40} {:>14} {:>14} {:>10}\n", "call", "without shim", "with shim", "added");
  auto row = [&](const std::string& name, int processes, const std::vector<std::string>& args,
                 const char* unit, double scale, int cores = 0) {
    double plain = 1e300, shim = 1e300;
    for (int i = 0; i < 3; ++i) {
      plain = std::min(plain, timed(t, false, processes, args, cores));
      shim = std::min(shim, timed(t, true, processes, args, cores));
    }
    std::cout << fmt::format("{:<40} {:>11.2f} {} {:>11.2f} {} {:>+8.2f} {}\n", name, plain / scale, unit,
                             shim / scale, unit, (shim - plain) / scale, unit);
  };
  row("cuLaunchKernel, no compute limit", 1, launch, "ns", 1);
  // A 50% cap under the default policy, alone on the card: not throttled,
  // but every launch passes the gate (device lookup, token bucket).
  row("cuLaunchKernel, through the compute gate", 1, launch, "ns", 1, 50);
  row("cuMemAlloc 256 MiB, 1 process", 1, alloc, "us", 1e3);
  row("cuMemAlloc 256 MiB, 8 processes at once", 8, alloc, "us", 1e3);
  std::error_code ec;
  std::filesystem::remove_all(t.scratch, ec);
  return 0;
}
