// gpuslice: one binary, one subcommand per front end of the placement core.
#include <CLI/CLI.hpp>
#include <iostream>
#include <new>
#include <string>

#include "gpuslice/cli/grammar.hpp"
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
  // Every number is checked for its form, with the flag's name, before any
  // converter sees it (docs/cli.md).
  gpuslice::cli::check_number_forms(app);
  // CLI11 reads a word that is no subcommand as a stray argument and says
  // only "A subcommand is required": the words are checked here, at every
  // level, so a typo is named with a "did you mean" and the list.
  if (const std::string problem = gpuslice::cli::unknown_subcommand(app, argc, argv); !problem.empty()) {
    std::cerr << problem << "\n";
    return 2;
  }
  // Exit codes (docs/cli.md): 0 the answer, 1 a negative answer (no node
  // fits, no count meets the targets, a check failed), 2 bad input or a run
  // refused before it starts, 3 a failure that is not the input's (the
  // environment: a port in use, a driver or child process that failed, a
  // full disk; or a bug).
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's negative answer: 1
  } catch (const CLI::ParseError& e) {
    std::cerr << gpuslice::cli::usage_error_text(app, e) << "\n";
    return 2;
  } catch (const gpuslice::core::InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    // The memory guards refuse a run whose estimate does not fit before it
    // starts; an allocation that fails anyway is still no crash (with
    // mimalloc, cli/throwing_new.cpp makes it throw rather than abort).
    std::cerr << "gpuslice: out of memory (the run needs more than this process may use; see docs/cli.md)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gpuslice: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
