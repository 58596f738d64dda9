#include "gpuslice/realgpu/cli.hpp"

#include <iostream>
#include <memory>

#include "gpuslice/cli/grammar.hpp"
#include "gpuslice/cli/progress.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/realgpu/isolation_check.hpp"
#include "gpuslice/realgpu/labs.hpp"
#include "gpuslice/realgpu/local_run.hpp"

namespace gpuslice::realgpu {

namespace {

DriverChoice driver_choice(const std::string& name) {
  if (name == "auto") return DriverChoice::Auto;
  if (name == "fake") return DriverChoice::Fake;
  if (name == "real") return DriverChoice::Real;
  throw core::InputError("command line", 0, "--driver", "use auto, fake or real");
}

void register_check(CLI::App& realgpu) {
  struct Args {
    bool json = false, quiet = false;
    std::string driver = "auto";
    double seconds = 10;
    uint64_t slice_mib = 8000;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = realgpu.add_subcommand(
      "check",
      "Run the isolation exercises (co-residency, view, memory cap, compute cap) on this machine's driver");
  cmd->add_flag("--json", a->json, "print one JSON object");
  cmd->add_option("--driver", a->driver, "auto (real when libcuda.so.1 loads, else the fake), fake or real");
  cmd->add_option(
         "--seconds", a->seconds,
         "window of each compute exercise (default 10; the first ~0.3 s of a slice run before NVML's "
         "first samples price a launch, so windows under ~5 s read a few points high)")
      ->check(cli::number(1.0, 600.0));
  cmd->add_flag("--quiet", a->quiet, "no progress line (it is shown only when stderr is a terminal)");
  cmd->add_option("--slice-mib", a->slice_mib, "memory of each test slice (default 8000, as in the seed lab)")
      ->check(cli::whole_number(1024, 1 << 20));
  cmd->callback([a] {
    CheckOptions o;
    o.driver = driver_choice(a->driver);
    o.compute_seconds = a->seconds;
    o.slice_mib = a->slice_mib;
    cli::Progress progress("check", a->quiet);
    if (progress.shown())
      o.progress = [&progress](size_t done, size_t total, const std::string& next) {
        progress.step(done, total, next);
      };
    const CheckReport report = run_isolation_check(o);
    progress.finish();
    if (a->json)
      std::cout << report.to_json().dump(2) << "\n";
    else
      report.print(std::cout);
    if (!report.passed()) throw CLI::RuntimeError(1);
  });
}

void register_run(CLI::App& realgpu) {
  struct Args {
    std::string scenario, driver = "auto";
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = realgpu.add_subcommand(
      "run", "Place a scenario's pods on this machine's GPUs and run each command under the shim");
  cmd->add_option("scenario", a->scenario, "scenario YAML (see docs/realgpu.md)")->required();
  cmd->add_option("--driver", a->driver, "auto, fake or real");
  cmd->add_flag("--json", a->json, "print one JSON object");
  cmd->callback([a] {
    const RunReport report = run_locally(load_local_scenario(a->scenario), driver_choice(a->driver));
    if (a->json)
      std::cout << report.to_json().dump(2) << "\n";
    else
      report.print(std::cout);
    if (!report.all_as_expected()) throw CLI::RuntimeError(1);
  });
}

}  // namespace

void register_cli(CLI::App& app) {
  auto* realgpu =
      app.add_subcommand("realgpu", "Enforcement on this machine: the shim, the fake driver, the checks");
  realgpu->require_subcommand(1);
  register_check(*realgpu);
  register_run(*realgpu);
  register_labs_command(*realgpu);
}

}  // namespace gpuslice::realgpu
