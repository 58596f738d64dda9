#include "gpuslice/realgpu/call_overhead.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "gpuslice/realgpu/child_process.hpp"

namespace gpuslice::realgpu {

double mean_ns_per_call(const CallTiming& setup, Preload preload, int processes,
                        const std::vector<std::string>& probe_args, int cores) {
  const Toolkit& t = setup.toolkit;
  auto env = driver_environment(t);
  if (preload != Preload::None) {
    // Each library its own accounting file: neither reads the other's layout.
    env = slice_environment(
        t, SliceSpec{preload == Preload::Shim ? "bench" : "bench-other", 1 << 20, cores, "default", ""});
    if (preload == Preload::Other) env["LD_PRELOAD"] = setup.other_library;
  }
  std::vector<std::string> argv{t.probe};
  argv.insert(argv.end(), probe_args.begin(), probe_args.end());
  std::vector<std::unique_ptr<Child>> children;
  for (int i = 0; i < processes; ++i) children.push_back(std::make_unique<Child>(argv, env));
  double sum = 0;
  for (auto& c : children) {
    const ChildResult r = c->wait_for(setup.timeout_seconds);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
    } catch (const nlohmann::json::exception&) {
    }
    if (r.timed_out || !j.contains("ns_per_op"))
      throw std::runtime_error((r.timed_out ? "probe timed out: " : "probe failed: ") + r.out + r.err);
    sum += j["ns_per_op"].get<double>();
  }
  return sum / processes;
}

}  // namespace gpuslice::realgpu
