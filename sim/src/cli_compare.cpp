// `gpuslice compare DIR DIR... [--out DIR]`: runs side by side.
#include <iostream>
#include <memory>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/cli.hpp"
#include "gpuslice/sim/compare.hpp"
#include "gpuslice/sim/report.hpp"

namespace gpuslice::sim {

void write_and_print_comparison(const std::vector<ComparedRun>& runs, const std::string& out_dir,
                                std::ostream& out) {
  try {
    write_comparison(runs, out_dir);
  } catch (const OutputError& e) {
    throw core::InputError("command line", 0, "--out", e.what());
  }
  print_comparison(runs, out);
  out << "  outputs  " << out_dir << "/{compare.html,compare.csv} (open compare.html in a browser)\n";
}

void register_compare_cli(CLI::App& app) {
  struct Args {
    std::vector<std::string> dirs;
    std::string out;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Put runs side by side: figures (best marked), curves, a snapshot's queue (compare.html, compare.csv)");
  cmd->add_option("dirs", a->dirs, "the --out folders of gpuslice simulate runs (two or more)")->required();
  cmd->add_option("--out", a->out,
                  "where compare.html and compare.csv go (default: the folder holding the runs)");
  cmd->callback([a] {
    const auto runs = load_compared_runs(a->dirs);
    write_and_print_comparison(runs, a->out.empty() ? default_compare_folder(a->dirs) : a->out, std::cout);
  });
}

}  // namespace gpuslice::sim
