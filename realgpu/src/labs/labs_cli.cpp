// `gpuslice realgpu labs [--lab all|000|001|002|overhead] [--out DIR] [--json] ...`
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "gpuslice/cli/grammar.hpp"
#include "gpuslice/cli/progress.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/realgpu/labs.hpp"

namespace gpuslice::realgpu {

namespace {
template <class E>
E choice(const std::string& text, const std::string& flag,
         const std::vector<std::pair<std::string, E>>& names) {
  std::string known;
  for (const auto& [name, value] : names) {
    if (text == name) return value;
    known += (known.empty() ? "" : ", ") + name;
  }
  throw core::InputError("command line", 0, flag, "use " + known);
}
}  // namespace

void register_labs_command(CLI::App& realgpu) {
  struct Args {
    LabsOptions o;
    std::string out, driver = "auto", framework = "auto", overhead = "auto";
    bool json = false, quiet = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = realgpu.add_subcommand(
      "labs",
      "Run the seed documents' isolation labs step by step; each row gives the seed's figure beside ours");
  cmd->add_option("--lab", a->o.lab, "all (default), 000, 001, 002 or overhead (the last one given counts)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--out", a->out, "also write DIR/labs.json and DIR/labs.md");
  cmd->add_flag("--json", a->json, "print the JSON report (one record per row) instead of the tables");
  cmd->add_flag("--quiet", a->quiet, "no progress line (it is shown only when stderr is a terminal)");
  cmd->add_option("--driver", a->driver,
                  "auto (real when libcuda.so.1 answers, else the fake), fake or real");
  cmd->add_option("--seconds", a->o.seconds,
                  "each compute exercise, sampled once a second, the first 2 s left out (default 10 on the "
                  "fake driver, 12 on a GPU)")
      ->check(cli::number(4.0, 600.0));
  cmd->add_option("--framework", a->framework,
                  "auto (PyTorch when `python -c \"import torch\"` works on a GPU), torch or probe");
  cmd->add_option("--python", a->o.python, "the Python that has PyTorch (default python3)");
  cmd->add_option("--overhead", a->overhead, "auto (on a GPU only), on or off: the overhead rows");
  cmd->add_option("--compare-libvgpu", a->o.compare_libvgpu,
                  "HAMi-core's libvgpu.so: time it beside ours in the overhead rows");
  cmd->add_option("--launches", a->o.launches, "launches per timing run (default 1000000)")
      ->check(cli::whole_number(1, 100000000));
  cmd->add_option("--allocs", a->o.allocs, "256 MiB allocations per process and timing run (default 200)")
      ->check(cli::whole_number(1, 1000000));
  cmd->callback([a] {
    a->o.driver = choice<DriverChoice>(
        a->driver, "--driver",
        {{"auto", DriverChoice::Auto}, {"fake", DriverChoice::Fake}, {"real", DriverChoice::Real}});
    a->o.framework = choice<LabFramework>(
        a->framework, "--framework",
        {{"auto", LabFramework::Auto}, {"torch", LabFramework::Torch}, {"probe", LabFramework::Probe}});
    a->o.overhead = choice<OverheadRows>(
        a->overhead, "--overhead",
        {{"auto", OverheadRows::Auto}, {"on", OverheadRows::On}, {"off", OverheadRows::Off}});
    cli::Progress progress("labs", a->quiet);
    if (progress.shown())
      a->o.progress = [&progress](size_t done, size_t total, const std::string& next) {
        progress.step(done, total, next);
      };
    const LabsReport report = run_labs(a->o);
    a->o.progress = {};
    progress.finish();
    if (a->json)
      std::cout << report.to_json().dump(2) << "\n";
    else
      report.print(std::cout);
    if (!a->out.empty()) {
      std::filesystem::create_directories(a->out);
      std::ofstream(a->out + "/labs.json") << report.to_json().dump(2) << "\n";
      std::ofstream md(a->out + "/labs.md");
      report.print(md);
      std::cerr << "labs: report written to " << a->out << "/labs.json and " << a->out << "/labs.md\n";
    }
    if (!report.passed()) throw CLI::RuntimeError(1);
  });
}

}  // namespace gpuslice::realgpu
