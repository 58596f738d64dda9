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

#include "gpuslice/realgpu/call_overhead.hpp"
#include "gpuslice/realgpu/toolkit.hpp"

using namespace gpuslice::realgpu;

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
    const CallTiming setup{t, "", 600};
    for (int i = 0; i < 3; ++i) {
      plain = std::min(plain, mean_ns_per_call(setup, Preload::None, processes, args, cores));
      shim = std::min(shim, mean_ns_per_call(setup, Preload::Shim, processes, args, cores));
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
