// A scenario file read once, with what its top level names: a snapshot run
// (--pods MORE.yaml) needs to know whether the file gave a fleet (replaced
// by the snapshot's nodes, with a warning) or a queue discipline (kept).
#pragma once

#include <string>

#include "gpuslice/sim/scenario.hpp"

namespace gpuslice::sim {

struct ScenarioFile {
  Scenario scenario;
  bool names_fleet = false;  // a top-level `fleet:` key
  bool names_queue = false;  // a top-level `queue:` key
};

// parse_scenario's reading, keeping what the file named.
ScenarioFile parse_scenario_file(const std::string& text, const std::string& source,
                                 const std::string& base_dir, bool fleet_given);

}  // namespace gpuslice::sim
