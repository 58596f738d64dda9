// Any text as an openb node list and as an openb pod list: read or refused
// with an InputError naming file, line and column, never a crash; a small
// fleet's pods are resampled as the study does.
#include <cstdint>
#include <string>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/openb.hpp"

using namespace gpuslice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  core::Cluster fleet;
  try {
    fleet = sim::load_openb_nodes(text, "nodes.csv");
  } catch (const core::InputError&) {
  }
  try {
    sim::OpenbOptions replay;
    replay.resample = false;
    sim::load_openb_pods(text, "pods.csv", fleet, replay);
    if (fleet.device_count() <= 16) sim::load_openb_pods(text, "pods.csv", fleet, sim::OpenbOptions{});
  } catch (const core::InputError&) {
  }
  return 0;
}
