// gpuslice: one binary, one subcommand per front end of the placement core.
#include <CLI/CLI.hpp>
#include <iostream>

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
