// `gpuslice report DIR`: report.html again from a run's output files.
#include <iostream>
#include <memory>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/cli.hpp"
#include "gpuslice/sim/html_report.hpp"
#include "gpuslice/sim/report.hpp"
#include "gpuslice/sim/run_folder.hpp"

namespace gpuslice::sim {

void register_report_cli(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("report", "Write DIR/report.html again from a simulate run's output files");
  cmd->add_option("dir", *dir, "the --out folder of gpuslice simulate")->required();
  cmd->callback([dir] {
    const RunResult run = read_run_folder(*dir);
    try {
      write_report(run, *dir);
    } catch (const OutputError& e) {
      throw core::InputError("command line", 0, "dir", e.what());
    }
    std::cout << *dir << "/report.html\n";
  });
}

}  // namespace gpuslice::sim
