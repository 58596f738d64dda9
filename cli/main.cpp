// gpuslice: one binary, one subcommand per front end of the placement core.
#include <CLI/CLI.hpp>
#include <cstring>
#include <iostream>
#include <string>

#include "gpuslice/core/errors.hpp"
#include "place_command.hpp"
#include "validate_command.hpp"
#ifdef GPUSLICE_WITH_SIM
#include "gpuslice/sim/cli.hpp"
#endif
#ifdef GPUSLICE_WITH_PLAN
#include "gpuslice/plan/cli.hpp"
#endif
#ifdef GPUSLICE_WITH_DEFRAG
#include "gpuslice/defrag/cli.hpp"
#endif
#ifdef GPUSLICE_WITH_REALGPU
#include "gpuslice/realgpu/cli.hpp"
#endif
#ifdef GPUSLICE_WITH_SERVE
#include "gpuslice/serve/cli.hpp"
#endif
#ifdef GPUSLICE_WITH_MONITOR
#include "gpuslice/monitor/cli.hpp"
#endif

namespace {
// CLI11 reads a word that is no subcommand as a stray argument and says only
// "A subcommand is required": the first word is checked here, so a typo
// (or a subcommand of a newer gpuslice) is named with the list of the ones
// this binary has. `--help` anywhere still prints help and exits 0.
bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  return false;
}

// The message for a first word that is no subcommand, or "" when it is one.
std::string unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-' || asks_for_help(argc, argv)) return {};
  const std::string word = argv[1];
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == word) return {};
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  return "A subcommand is required: '" + word + "' is not a gpuslice subcommand (subcommands: " + names +
         ").\nRun with --help for more information.";
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpuslice: share GPUs by slices (placement, simulation, enforcement)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gpuslice ") + GPUSLICE_VERSION);
  gpuslice::cli::register_place_command(app);
  gpuslice::cli::register_validate_command(app);
#ifdef GPUSLICE_WITH_SIM
  gpuslice::sim::register_cli(app);
#endif
#ifdef GPUSLICE_WITH_PLAN
  gpuslice::plan::register_cli(app);
#endif
#ifdef GPUSLICE_WITH_DEFRAG
  gpuslice::defrag::register_cli(app);
#endif
#ifdef GPUSLICE_WITH_REALGPU
  gpuslice::realgpu::register_cli(app);
#endif
#ifdef GPUSLICE_WITH_SERVE
  gpuslice::serve::register_cli(app);
#endif
#ifdef GPUSLICE_WITH_MONITOR
  gpuslice::monitor::register_cli(app);
#endif
  if (const std::string problem = unknown_subcommand(app, argc, argv); !problem.empty()) {
    std::cerr << problem << "\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors are bad input too: exit 2 (CLI11 prints the message).
    const int code = app.exit(e);
    return e.get_exit_code() == 0 ? 0 : (dynamic_cast<const CLI::RuntimeError*>(&e) ? code : 2);
  } catch (const gpuslice::core::InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gpuslice: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
