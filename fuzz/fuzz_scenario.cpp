// Any text as a scenario file: parsed or refused with an InputError naming
// where, never a crash, hang or runaway allocation; what parses becomes a
// pod stream when it is small enough to build here.
#include <cstdint>
#include <string>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/scenario.hpp"

using namespace gpuslice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    // A folder with nothing in it: a scenario naming a relative file gets "cannot open".
    const sim::Scenario s = sim::parse_scenario(text, "fuzz.yaml", "/nonexistent-gpuslice-fuzz");
    size_t pods = 0;
    for (const auto& p : s.pods) pods += static_cast<size_t>(p.repeat);
    if (s.generator) pods += s.generator->pods;
    if (pods <= 10'000 && !s.openb_pods_csv) sim::materialize(s, 1);
  } catch (const core::InputError&) {
  }
  return 0;
}
