// /metrics in Prometheus text: HAMi's scheduler names where they exist
// (cmd/scheduler/metrics.go: hami_gpu_* per card with zone="vGPU";
// pkg/scheduler/metrics.go: hami_scheduler_filter_*, hami_scheduler_bind_*),
// plus what HAMi has no name for (decisions by outcome, reservations).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "gpuslice/serve/decision_state.hpp"

namespace gpuslice::serve {

class Metrics {
 public:
  // Upper bounds in seconds; finer than HAMi's (which starts at 1 ms)
  // because a filter here takes well under one.
  static constexpr std::array<double, 14> kBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                      0.025,  0.05,    0.1,    0.25,  0.5,    1,     5};
  void observe_filter(FilterOutcome outcome, double seconds);
  void observe_bind(bool ok, double seconds);
  // The preempt verb (HAMi has none): answered, or refused as malformed.
  void observe_preempt(bool ok, double seconds);
  std::string render(DecisionState& state) const;

 private:
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> counts{};
    uint64_t count = 0;
    double sum = 0;
    void observe(double seconds);
  };
  mutable std::mutex mutex_;
  Histogram filter_ok_, filter_error_, bind_ok_, bind_error_, preempt_ok_, preempt_error_;
  std::array<uint64_t, 5> decisions_{};  // by FilterOutcome
};

}  // namespace gpuslice::serve
